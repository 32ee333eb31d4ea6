/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A backup, tar piping into gzip (S3). tar reads each file of a tree in
 * readahead-sized reads and copies the pages into a pipe; gzip copies
 * them out, compresses them and writes the archive. The pipe is a
 * bounded count of pages between the two tasks; its buffers are not
 * charged (64 KiB of kernel memory beside the page cache). With a
 * library handle tar asks the library for what it reads (workload.h).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "workload.h"

struct sim_backup {
	struct sim_machine *m;
	struct sim_backup_params p;
	struct sim_backup_result res;
	sim_obj *files;
	uint64_t *sizes;
	sim_obj archive;
	/* The pipe. */
	uint64_t in_pipe;
	bool eof;
	struct sim_waitq readers, writers;
};

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static void fail(struct sim_backup *b, int err)
{
	if (!b->res.error)
		b->res.error = err;
}

/* Copies n pages into the pipe, waiting while it is full; stops when the
 * pipe is broken (an error). */
static void pipe_write(struct sim_backup *b, uint64_t n)
{
	struct sim_machine *m = b->m;
	uint64_t k;

	while (n && !b->res.error) {
		while (b->in_pipe == b->p.pipe_pages && !b->res.error)
			sim_wait(m, &b->writers, SIM_UNLIMITED);
		if (b->res.error)
			break;
		k = min_u64(n, b->p.pipe_pages - b->in_pipe);
		sim_cpu(m, k * sim_machine_costs(m)->copy_page_ns);
		b->in_pipe += k;
		n -= k;
		sim_wake_all(m, &b->readers);
	}
}

/* Copies up to n pages out of the pipe, waiting while it is empty;
 * 0 at the end of the stream. */
static uint64_t pipe_read(struct sim_backup *b, uint64_t n)
{
	struct sim_machine *m = b->m;
	uint64_t k;

	while (!b->in_pipe && !b->eof)
		sim_wait(m, &b->readers, SIM_UNLIMITED);
	k = min_u64(n, b->in_pipe);
	if (!k)
		return 0;
	sim_cpu(m, k * sim_machine_costs(m)->copy_page_ns);
	b->in_pipe -= k;
	sim_wake_all(m, &b->writers);
	return k;
}

/* tar asks the library for the n pages a read brings into group g, and
 * sleeps the delay it is given. Returns the pages charged: n, or 0 when
 * the verdict charged nothing. */
static uint64_t tar_charge(struct sim_backup *b, struct sim_memcg *g,
			   uint64_t n)
{
	struct sim_backup_delays *d = &b->res.lib;
	struct mr_charge_answer a;
	uint64_t bytes = sim_bytes(n), drawn;
	int r = mr_group_charge(b->p.lib, bytes, &a);

	if (r < 0) {
		fail(b, r);
		return 0;
	}
	if (r == MR_CHARGE_RECLAIM || r == MR_CHARGE_REFUSE)
		return 0;
	if (r == MR_CHARGE_DELAY) {
		drawn = bytes > MR_CHARGE_BATCH_BYTES ? bytes :
			MR_CHARGE_BATCH_BYTES;
		d->count++;
		d->ns += a.delay_ns;
		if (a.delay_ns > d->max_ns)
			d->max_ns = a.delay_ns;
		d->at_or_below_high += sim_memcg_usage(g) + sim_pages(drawn) <=
				       sim_memcg_binding_high(g);
		sim_sleep(b->m, a.delay_ns);
	}
	return n;
}

static void tar(struct sim_task *t, void *arg)
{
	struct sim_backup *b = arg;
	struct sim_memcg *g = sim_task_memcg(t);
	uint64_t i, off, n, charged;
	int r;

	for (i = 0; i < b->p.files && !b->res.error; i++) {
		charged = 0;
		for (off = 0; off < b->sizes[i] && !b->res.error; off += n) {
			n = min_u64(b->p.read_pages, b->sizes[i] - off);
			if (b->p.lib)
				charged += tar_charge(b, g, n);
			r = sim_file_read(b->m, b->files[i], off, n);
			if (r < 0)
				fail(b, r);
			else
				b->res.read_pages += n;
			pipe_write(b, n);
		}
		if (charged) {
			r = mr_group_uncharge(b->p.lib, sim_bytes(charged));
			if (r < 0)
				fail(b, r);
		}
	}
	b->eof = true;
	sim_wake_all(b->m, &b->readers);
	b->res.tar = *sim_task_stats(t);
}

static void gzip(struct sim_task *t, void *arg)
{
	struct sim_backup *b = arg;
	struct sim_machine *m = b->m;
	uint64_t in = 0, out, k, n, done = 0;
	int r;

	do {
		k = pipe_read(b, b->p.pipe_pages);
		sim_cpu(m, k * b->p.compress_ns);
		in += k;
		/* Whole writes while the stream runs; at its end the rest,
		 * rounded up to a page. */
		out = k ? in / b->p.ratio : (in + b->p.ratio - 1) / b->p.ratio;
		while (out - done >= (k ? b->p.write_pages : 1)) {
			n = min_u64(out - done, b->p.write_pages);
			r = sim_file_write(m, b->archive, done, n);
			if (r < 0) {
				/* tar's next write meets a broken pipe. */
				fail(b, r);
				sim_wake_all(m, &b->writers);
				k = 0;
				break;
			}
			done += n;
		}
	} while (k);
	b->res.archive_pages = done;
	b->res.end_ns = sim_now(m);
	b->res.gzip = *sim_task_stats(t);
}

struct sim_backup *sim_backup_start(struct sim_machine *m,
				    struct sim_memcg *g,
				    const struct sim_backup_params *p)
{
	struct sim_backup *b;
	double mean;
	uint64_t i, total = 0;

	if (!p->files || !p->tree_pages || !p->read_pages ||
	    !p->pipe_pages || !p->ratio || !p->write_pages)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->m = m;
	b->p = *p;
	b->files = calloc(p->files, sizeof(*b->files));
	b->sizes = calloc(p->files, sizeof(*b->sizes));
	if (!b->files || !b->sizes)
		goto fail;
	mean = (double)p->tree_pages / (double)p->files;
	for (i = 0; i < p->files; i++) {
		b->sizes[i] = (uint64_t)sim_rand_exp(m, mean) + 1;
		b->files[i] = sim_file_new(m, b->sizes[i]);
		if (b->files[i] == SIM_NOPAGE)
			goto fail;
		total += b->sizes[i];
	}
	b->archive = sim_file_new(m, total / p->ratio + 1);
	if (b->archive == SIM_NOPAGE)
		goto fail;
	b->res.start_ns = sim_now(m);
	if (!sim_task_spawn(m, "gzip", g, sim_now(m), gzip, b))
		goto fail;
	if (!sim_task_spawn(m, "tar", g, sim_now(m), tar, b)) {
		/* gzip meets the end of an empty stream and ends. */
		fail(b, -ENOMEM);
		b->eof = true;
	}
	return b;
fail:
	sim_backup_free(b);
	return NULL;
}

const struct sim_backup_result *sim_backup_result(const struct sim_backup *b)
{
	return &b->res;
}

void sim_backup_free(struct sim_backup *b)
{
	if (!b)
		return;
	free(b->files);
	free(b->sizes);
	free(b);
}
