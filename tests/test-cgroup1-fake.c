/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cgroup1 backend against a fake group: a temporary directory of
 * regular files named like the cgroup files, and a file-access table that
 * plays the kernel's part. Writing memory.limit_in_bytes below usage
 * reclaims page cache down to the new limit, or reclaims all of it and
 * fails with EBUSY leaving the limit unchanged (mm/memcontrol-v1.c,
 * mem_cgroup_resize_max()); values are stored in whole pages; "-1" is
 * PAGE_COUNTER_MAX pages. Errors are injected per file, and the group can
 * vanish (ENODEV on kept fds, as kernfs does) after a number of reads.
 * The fake kernel can free a multiple of what a lowering asks, counts
 * lowerings above half the clean cache, and can kill the process after
 * a given limit write.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "cgroup1.h"
#include "fileops.h"
#include "journal.h"
#include "hybrid.h"
#include "log.h"
#include "lowerstep.h"
#include "swap.h"

#define MiB ((uint64_t)1024 * 1024)
#define UNLIMITED_4K ((uint64_t)9223372036854771712ULL)
#define MAX_FDS 1024

static char tmp[64], grp[128], state[128];

static struct fake {
	uint64_t usage, limit, anon, inactive_file, active_file, failcnt;
	uint64_t max_usage, oom_kill;
	uint64_t dirty, mapped; /* of the file pages */
	uint64_t hier; /* hierarchical_memory_limit as the file shows it */
	/* The group vanishes after this many more reads (0: never). */
	int vanish_after_reads;
	/* Reads of memory.stat so far. */
	int memstat_reads;
	bool vanished;
	/* Error for the n-th limit write (index from 0), 0 for none. */
	int limit_write_err[8];
	uint64_t ebusy_reclaim; /* reclaimed by an injected EBUSY */
	uint64_t admin_limit;   /* set by "someone else" after a lowering */
	char pread_err_file[64];
	int pread_err;
	char limit_writes[16][32];
	int nlimit_writes;
	char ec_writes[8][64];
	int nec_writes;
	char fdname[MAX_FDS][32];
	/* The host has swap with room: a lowered limit reclaims anonymous
	 * memory after the page cache (unless memory.swappiness is 0). */
	bool swap;
	/* memsw accounting (0: no memsw files written): the limit, and the
	 * anonymous memory swapped out, charged to memsw with usage. */
	uint64_t memsw_limit, swapped;
	uint64_t hier_memsw; /* hierarchical_memsw_limit; 0: memsw_limit */
	/* A lowering write reclaims this much beyond what it lowers below
	 * usage (the kernel's last SWAP_CLUSTER_MAX round and large folio),
	 * bounded by the cache. */
	uint64_t free_extra;
	/* Lowerings that asked more than half of the clean cache. */
	int over_half_steps;
	/* The process kills itself after this limit write (from 1; 0:
	 * never), as a manager dying with the limit lowered. */
	int die_after_write;
	/* The journal as each of the first lowerings found it. */
	char journal_at_lowering[4][512];
	int nlowerings;
} fk;

static struct mri_logger lg;
static char logbuf[8192];
static void *priv;
static const struct mri_backend *be = &mri_backend_cgroup1;

static void write_file(const char *name, const char *content)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", grp, name);
	f = fopen(p, "we");
	ck_assert_msg(f, "cannot write %s", p);
	fputs(content, f);
	fclose(f);
}

/* Writes a file of the group's parent (the top of the fake hierarchy). */
static void put_top(const char *name, const char *content)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tmp, name);
	f = fopen(p, "we");
	ck_assert_msg(f, "cannot write %s", p);
	fputs(content, f);
	fclose(f);
}

static void fake_sync(void)
{
	char buf[2048];

	snprintf(buf, sizeof(buf), "%" PRIu64 "\n", fk.usage);
	write_file("memory.usage_in_bytes", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64 "\n", fk.limit);
	write_file("memory.limit_in_bytes", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64 "\n", fk.failcnt);
	write_file("memory.failcnt", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64 "\n", fk.max_usage);
	write_file("memory.max_usage_in_bytes", buf);
	snprintf(buf, sizeof(buf),
		 "oom_kill_disable 0\nunder_oom 0\noom_kill %" PRIu64 "\n",
		 fk.oom_kill);
	write_file("memory.oom_control", buf);
	if (fk.memsw_limit) {
		snprintf(buf, sizeof(buf), "%" PRIu64 "\n", fk.memsw_limit);
		write_file("memory.memsw.limit_in_bytes", buf);
		snprintf(buf, sizeof(buf), "%" PRIu64 "\n",
			 fk.usage + fk.swapped);
		write_file("memory.memsw.usage_in_bytes", buf);
	}
	snprintf(buf, sizeof(buf),
		 "cache 0\nrss 0\ninactive_file 0\nactive_file 0\n"
		 "hierarchical_memory_limit %" PRIu64 "\n"
		 "hierarchical_memsw_limit %" PRIu64 "\n"
		 "total_cache %" PRIu64 "\ntotal_rss %" PRIu64 "\n"
		 "total_pgpgin 10\ntotal_pgpgout 4\n"
		 "total_inactive_file %" PRIu64 "\n"
		 "total_active_file %" PRIu64 "\n"
		 "total_dirty %" PRIu64 "\ntotal_mapped_file %" PRIu64 "\n",
		 fk.hier, fk.hier_memsw ? fk.hier_memsw :
		 fk.memsw_limit ? fk.memsw_limit : UNLIMITED_4K,
		 fk.inactive_file + fk.active_file, fk.anon,
		 fk.inactive_file, fk.active_file, fk.dirty, fk.mapped);
	write_file("memory.stat", buf);
}

/* What a lowered limit can reclaim: the cache, and with swap the
 * anonymous memory. */
static uint64_t reclaimable(void)
{
	return fk.inactive_file + fk.active_file + (fk.swap ? fk.anon : 0);
}

static void reclaim_file(uint64_t bytes)
{
	uint64_t from_inactive = bytes < fk.inactive_file ? bytes :
							    fk.inactive_file;

	fk.inactive_file -= from_inactive;
	fk.active_file -= bytes - from_inactive;
	fk.usage -= bytes;
}

/* Reclaims the cache first, then (with swap) anonymous memory. */
static void reclaim_cache(uint64_t bytes)
{
	uint64_t cache = fk.inactive_file + fk.active_file;

	if (bytes > cache) {
		fk.anon -= bytes - cache;
		fk.usage -= bytes - cache;
		fk.swapped += bytes - cache;
		bytes = cache;
	}
	reclaim_file(bytes);
}

/* The group's journal file, as it is now, into out (512 bytes; "" when
 * there is none). */
static void journal_text(char *out)
{
	char name[48], p[PATH_MAX + 64];
	size_t n = 0;
	FILE *f;

	ck_assert_int_eq(mri_journal_name(grp, name, sizeof(name)), 0);
	snprintf(p, sizeof(p), "%s/%s", state, name);
	f = fopen(p, "re");
	if (f) {
		n = fread(out, 1, 511, f);
		fclose(f);
	}
	out[n] = '\0';
}

/* The kernel's side of a write to memory.limit_in_bytes. */
static ssize_t fake_limit_write(const char *buf, size_t len)
{
	int idx = fk.nlimit_writes;
	uint64_t v, cache = reclaimable();
	char s[32];

	ck_assert_uint_lt(len, sizeof(s));
	memcpy(s, buf, len);
	s[len] = '\0';
	ck_assert_int_lt(fk.nlimit_writes, 16);
	strcpy(fk.limit_writes[fk.nlimit_writes++], s);
	if (idx < 8 && fk.limit_write_err[idx]) {
		if (fk.limit_write_err[idx] == EBUSY)
			reclaim_cache(fk.ebusy_reclaim < cache ?
				      fk.ebusy_reclaim : cache);
		fake_sync();
		return -fk.limit_write_err[idx];
	}
	if (strcmp(s, "-1") == 0)
		v = UNLIMITED_4K;
	else
		ck_assert_int_eq(mri_parse_u64(s, &v), 0);
	v = v / 4096 * 4096;
	if (v < fk.usage) {
		if (fk.usage - v > cache) {
			reclaim_cache(cache);
			fake_sync();
			return -EBUSY;
		}
		if (fk.usage - v > (fk.inactive_file + fk.active_file -
				    fk.dirty - fk.mapped) / 2)
			fk.over_half_steps++;
		if (fk.nlowerings < 4)
			journal_text(fk.journal_at_lowering[fk.nlowerings++]);
		reclaim_cache(fk.usage - v + fk.free_extra < cache ?
			      fk.usage - v + fk.free_extra : fk.usage - v);
	}
	fk.limit = v;
	if (idx == 0 && fk.admin_limit)
		fk.limit = fk.admin_limit;
	fake_sync();
	if (fk.nlimit_writes == fk.die_after_write)
		raise(SIGKILL);
	return (ssize_t)len;
}

static bool cgroup_file(int fd)
{
	return fd >= 0 && fd < MAX_FDS && fk.fdname[fd][0];
}

static int h_open(const char *path, int flags, mode_t mode)
{
	return mri_file_ops_real.open(path, flags, mode);
}

static int h_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	int fd = mri_file_ops_real.openat(dirfd, path, flags, mode);

	if (fd >= 0 && fd < MAX_FDS)
		snprintf(fk.fdname[fd], sizeof(fk.fdname[fd]), "%s", path);
	return fd;
}

static ssize_t h_pread(int fd, void *buf, size_t len, off_t off)
{
	if (cgroup_file(fd)) {
		if (fk.vanish_after_reads && --fk.vanish_after_reads == 0)
			fk.vanished = true;
		if (fk.vanished)
			return -ENODEV;
		if (fk.pread_err && strcmp(fk.fdname[fd],
					   fk.pread_err_file) == 0)
			return -fk.pread_err;
		if (strcmp(fk.fdname[fd], "memory.stat") == 0 && off == 0)
			fk.memstat_reads++;
	}
	return mri_file_ops_real.pread(fd, buf, len, off);
}

static ssize_t h_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	if (cgroup_file(fd) && fk.vanished)
		return -ENODEV;
	if (cgroup_file(fd) &&
	    strcmp(fk.fdname[fd], "memory.limit_in_bytes") == 0)
		return fake_limit_write(buf, len);
	if (cgroup_file(fd) &&
	    strcmp(fk.fdname[fd], "cgroup.event_control") == 0) {
		ck_assert_uint_lt(len, sizeof(fk.ec_writes[0]));
		ck_assert_int_lt(fk.nec_writes, 8);
		memcpy(fk.ec_writes[fk.nec_writes], buf, len);
		fk.ec_writes[fk.nec_writes++][len] = '\0';
		return (ssize_t)len;
	}
	return mri_file_ops_real.pwrite(fd, buf, len, off);
}

static int h_close(int fd)
{
	if (fd >= 0 && fd < MAX_FDS)
		fk.fdname[fd][0] = '\0';
	return mri_file_ops_real.close(fd);
}

static int h_statfs(const char *path, struct statfs *st)
{
	int r = mri_file_ops_real.statfs(path, st);

	if (r == 0 && strncmp(path, tmp, strlen(tmp)) == 0)
		st->f_type = CGROUP_SUPER_MAGIC;
	return r;
}

static const struct mri_file_ops fake_ops = {
	.open = h_open,
	.openat = h_openat,
	.pread = h_pread,
	.pwrite = h_pwrite,
	.close = h_close,
	.statfs = h_statfs,
};

static void log_fn(int level, const char *msg, void *userdata)
{
	size_t n = strlen(logbuf);

	snprintf(logbuf + n, sizeof(logbuf) - n, "%d %s\n", level, msg);
}

static void setup(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/mr-fake-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	snprintf(grp, sizeof(grp), "%s/grp", tmp);
	snprintf(state, sizeof(state), "%s/state", tmp);
	ck_assert_int_eq(mkdir(grp, 0755), 0);
	memset(&fk, 0, sizeof(fk));
	fk.anon = 60 * MiB;
	fk.inactive_file = 20 * MiB;
	fk.active_file = 20 * MiB;
	fk.usage = 100 * MiB;
	fk.limit = 200 * MiB;
	fk.hier = 200 * MiB;
	fk.failcnt = 7;
	fake_sync();
	write_file("cgroup.event_control", "");
	mri_file_ops_set(&fake_ops);
	mri_logger_init(&lg);
	lg.fn = log_fn;
	lg.max_level = MR_LOG_DEBUG;
	logbuf[0] = '\0';
	mri_lowerstep_test_pause_ms = 0;
	priv = calloc(1, be->priv_size);
	ck_assert_ptr_nonnull(priv);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	mri_file_ops_set(NULL);
	mri_swap_meminfo = "/proc/meminfo";
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	ck_assert_int_eq(system(cmd), 0);
	free(priv);
}

/* The event fd the backend last reported (struct mri_event_sink), and
 * how many times it reported one. */
static int sink_fd = -1, sink_calls;

static int record_event_fd(void *arg, int fd, uint32_t events)
{
	(void)arg;
	ck_assert_uint_eq(events, EPOLLIN);
	sink_fd = fd;
	sink_calls++;
	return 0;
}

static int be_open(void)
{
	struct mri_open_env env = { .log = &lg, .state_dir = state,
				    .events = { record_event_fd, NULL, NULL } };

	sink_fd = -1;
	sink_calls = 0;
	return be->open(priv, grp, &env);
}

/* The group's journal in the state directory. */
static const char *journal_file(void)
{
	static char p[PATH_MAX + 64];
	char name[48];

	ck_assert_int_eq(mri_journal_name(grp, name, sizeof(name)), 0);
	snprintf(p, sizeof(p), "%s/%s", state, name);
	return p;
}

/* "dev:ino" of a directory, as journal records name a cgroup. */
static const char *cgroup_id(const char *dir)
{
	static char id[40];
	struct stat st;

	ck_assert_int_eq(stat(dir, &st), 0);
	snprintf(id, sizeof(id), "%" PRIx64 ":%" PRIx64, (uint64_t)st.st_dev,
		 (uint64_t)st.st_ino);
	return id;
}

/* Files in the state directory (-1 if it does not exist). */
static int state_files(void)
{
	struct dirent *e;
	DIR *d = opendir(state);
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Size of the journal file, -1 if it does not exist. */
static long long journal_size(void)
{
	struct stat st;

	return lstat(journal_file(), &st) < 0 ? -1 : st.st_size;
}

static char *read_text(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "re");
	size_t n;

	ck_assert_msg(f, "cannot read %s", path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* The limit the fake holds now. The fake rewrites its files in place
 * (truncate, then write) while a step runs in another thread, so a read
 * can see the file empty for a moment: read again. */
static uint64_t file_limit(void)
{
	struct timespec ts = { 0, 100 * 1000 };
	char p[PATH_MAX + 32];
	uint64_t v;
	int i;

	snprintf(p, sizeof(p), "%s/memory.limit_in_bytes", grp);
	for (i = 0; i < 1000; i++) {
		if (mri_parse_u64(read_text(p), &v) == 0)
			return v;
		nanosleep(&ts, NULL);
	}
	ck_abort_msg("%s stays unparsable", p);
	return 0;
}

/* Writes a journal record as a manager that died mid-step would leave. */
static void leave_record(const char *path, uint64_t original,
			 uint64_t lowered)
{
	struct mri_journal_record rec = {
		.file = "memory.limit_in_bytes",
		.original = original,
		.lowest = lowered,
		.highest = lowered,
		.pid = 4242,
	};
	struct mri_journal j;

	ck_assert_int_eq(mri_journal_open(&j, state, path, path, &lg), 0);
	ck_assert_int_eq(mri_journal_lock(&j), 0);
	ck_assert_int_eq(mri_journal_write(&j, &rec), 0);
	mri_journal_unlock(&j);
	mri_journal_close(&j);
}

/* The group opened through the public API, for the batch sizing that is
 * the core's: at most half of what reclaim can take per step, since the
 * backend's step can OOM-kill (MRI_CAP_STEP_CAN_OOM). */
static mr_ctx_t *core_ctx;
static mr_group_t *core_g;

static void core_open(void)
{
	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&core_ctx), 0);
	ck_assert_int_eq(mr_ctx_set_log(core_ctx, log_fn, NULL, MR_LOG_DEBUG),
			 0);
	ck_assert_int_eq(mr_group_open(core_ctx, grp, "cgroup1", &core_g), 0);
}

static void core_close(void)
{
	ck_assert_int_eq(mr_group_close(core_g), 0);
	mr_ctx_free(core_ctx);
}

/* One reclaim batch of `bytes` (a multiple of 4 KiB) through the core:
 * a fixed batch of that size, and a timeout no second batch meets.
 * *asked receives what the batch asked of the kernel (0 when no call was
 * made), *freed what it freed. */
static int core_batch(uint64_t bytes, uint64_t *asked, uint64_t *freed)
{
	struct mr_reclaim_stats a = { .size = sizeof(a) };
	struct mr_reclaim_stats b = { .size = sizeof(b) };
	int r;

	ck_assert_int_eq(mr_group_set_batch_fixed(core_g, bytes), 0);
	ck_assert_int_eq(mr_group_read_reclaim_stats(core_g,
		MR_REASON_REQUESTED, &a), 0);
	r = mr_group_reclaim(core_g, bytes, 1, freed);
	ck_assert_int_eq(mr_group_read_reclaim_stats(core_g,
		MR_REASON_REQUESTED, &b), 0);
	ck_assert_uint_le(b.calls - a.calls, 1);
	*asked = b.asked_bytes - a.asked_bytes;
	return r;
}

START_TEST(probe)
{
	char p[PATH_MAX + 16];

	ck_assert_int_eq(be->probe(grp), 1);
	snprintf(p, sizeof(p), "%s/nope", tmp);
	ck_assert_int_eq(be->probe(p), -ENOENT);
	/* A cgroup directory without the memory files (another
	 * controller), and a directory of another filesystem: not ours. A
	 * control file instead of the group's directory: -ENOTDIR. */
	ck_assert_int_eq(be->probe(tmp), 0);
	ck_assert_int_eq(be->probe("/"), 0);
	snprintf(p, sizeof(p), "%s/memory.stat", grp);
	ck_assert_int_eq(be->probe(p), -ENOTDIR);
}
END_TEST

START_TEST(read_limits_and_memstat)
{
	struct mr_limits l;
	struct mr_memstat ms;
	uint64_t u;

	fk.hier = 150 * MiB;
	fake_sync();
	/* The hierarchy's top, the group's parent: no limit. */
	put_top("memory.limit_in_bytes", "9223372036854771712\n");
	put_top("memory.usage_in_bytes", "1073741824\n");
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->read_usage(priv, &u), 0);
	ck_assert_uint_eq(u, 100 * MiB);
	memset(&l, 0xa5, sizeof(l));
	l.size = sizeof(l);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.size, sizeof(l));
	ck_assert_uint_eq(l.usage_bytes, 100 * MiB);
	ck_assert_uint_eq(l.limit_bytes, 150 * MiB);
	ck_assert_uint_eq(l.own_limit_bytes, 200 * MiB);
	ck_assert_uint_eq(l.limit_hits, 7);
	/* 150 MiB is no visible group's limit: one above binds, unseen. */
	ck_assert_uint_eq(l.flags, MR_LIMITS_ANCESTOR_BINDS |
			  MR_LIMITS_BINDING_HIDDEN);
	ck_assert(!(l.present & MR_LIMITS_HAS_BINDING));

	ck_assert_int_eq(be->read_memstat(priv, &ms), 0);
	ck_assert_uint_eq(ms.file_bytes, 40 * MiB);
	ck_assert_uint_eq(ms.anon_bytes, 60 * MiB);
	ck_assert_uint_eq(ms.inactive_file_bytes, 20 * MiB);
	ck_assert_uint_eq(ms.pgpgin_bytes, 10 * 4096);
	ck_assert_uint_eq(ms.present,
			  (1ULL << MR_MEMSTAT_FILE) |
			  (1ULL << MR_MEMSTAT_ANON) |
			  (1ULL << MR_MEMSTAT_PGPGIN) |
			  (1ULL << MR_MEMSTAT_PGPGOUT) |
			  (1ULL << MR_MEMSTAT_INACTIVE_FILE) |
			  (1ULL << MR_MEMSTAT_ACTIVE_FILE) |
			  (1ULL << MR_MEMSTAT_FILE_DIRTY) |
			  (1ULL << MR_MEMSTAT_FILE_MAPPED));
	ck_assert_int_eq(be->close(priv), 0);
	ck_assert_int_eq(fk.nlimit_writes, 0);
}
END_TEST

/* The group whose limit binds, and the headroom under it: a pod at 11.5
 * of its 12 GiB over a child with no limit and 9 GiB used leaves the
 * child 0.5 GiB, not 3 GiB; with its own limit binding, what is left
 * under it. */
START_TEST(read_limits_binding_group)
{
	const uint64_t GiB = 1024 * MiB;
	struct mr_limits l = { .size = sizeof(l) };

	fk.limit = UNLIMITED_4K;
	fk.usage = 9 * GiB;
	fk.hier = 12 * GiB;
	fake_sync();
	put_top("memory.limit_in_bytes", "12884901888\n");
	put_top("memory.usage_in_bytes", "12348030976\n");
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert(l.present & MR_LIMITS_HAS_BINDING);
	ck_assert_uint_eq(l.limit_bytes, 12 * GiB);
	ck_assert_uint_eq(l.binding_level, 1);
	ck_assert_uint_eq(l.binding_usage_bytes, 11 * GiB + GiB / 2);
	ck_assert_uint_eq(l.headroom_bytes, GiB / 2);
	ck_assert_uint_eq(l.flags, MR_LIMITS_ANCESTOR_BINDS);

	fk.limit = 10 * GiB;
	fk.hier = 10 * GiB;
	fake_sync();
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.binding_level, 0);
	ck_assert_uint_eq(l.binding_usage_bytes, 9 * GiB);
	ck_assert_uint_eq(l.headroom_bytes, GiB);

	fk.usage = 11 * GiB; /* over: no headroom, never a wrapped one */
	fake_sync();
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.headroom_bytes, 0);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(read_limits_unlimited)
{
	struct mr_limits l = { .size = sizeof(l) };

	fk.limit = UNLIMITED_4K;
	fk.hier = UNLIMITED_4K;
	fake_sync();
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.limit_bytes, MR_UNLIMITED);
	ck_assert_uint_eq(l.own_limit_bytes, MR_UNLIMITED);
	ck_assert_uint_eq(l.flags, 0);
	ck_assert(l.present & MR_LIMITS_HAS_BINDING);
	ck_assert_uint_eq(l.headroom_bytes, MR_UNLIMITED);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(reclaim_lowers_then_restores)
{
	uint64_t asked, freed;

	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->reclaim(priv, 8 * MiB, &asked, &freed), 0);
	ck_assert_uint_eq(asked, 8 * MiB);
	ck_assert_uint_eq(freed, 8 * MiB);
	ck_assert_int_eq(fk.nlimit_writes, 2);
	ck_assert_str_eq(fk.limit_writes[0], "96468992"); /* 92 MiB */
	ck_assert_str_eq(fk.limit_writes[1], "209715200");
	ck_assert_uint_eq(file_limit(), 200 * MiB);
	ck_assert_uint_eq(fk.usage, 92 * MiB);
	/* Empty between steps; gone at close, and nothing else is left in
	 * the state directory (the locks are on the cgroup itself). */
	ck_assert_int_eq(journal_size(), -1); /* no record, no file */
	ck_assert_int_eq(be->close(priv), 0);
	ck_assert_int_eq(journal_size(), -1);
	ck_assert_int_eq(state_files(), 0);
	ck_assert_int_eq(fk.nlimit_writes, 2);
}
END_TEST

START_TEST(reclaim_restores_unlimited)
{
	uint64_t asked, freed;

	fk.limit = UNLIMITED_4K;
	fake_sync();
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->reclaim(priv, 1 * MiB, &asked, &freed), 0);
	ck_assert_int_eq(fk.nlimit_writes, 2);
	ck_assert_str_eq(fk.limit_writes[0], "103809024"); /* 99 MiB */
	ck_assert_str_eq(fk.limit_writes[1], "-1");
	ck_assert_uint_eq(file_limit(), UNLIMITED_4K);
	ck_assert_uint_eq(freed, 1 * MiB);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* Dirty and mapped file pages are not quickly reclaimable (a mapped page
 * may be the workload's program text): the step is half of the rest. */
START_TEST(reclaim_step_counts_only_clean_unmapped_cache)
{
	uint64_t asked, freed;

	fk.dirty = 20 * MiB;
	fk.mapped = 12 * MiB;
	fake_sync();
	core_open();
	/* 40 MiB of file pages, 32 MiB of them dirty or mapped. */
	ck_assert_int_eq(core_batch(16 * MiB, &asked, &freed), 0);
	ck_assert_uint_eq(asked, 4 * MiB);
	fk.mapped = 20 * MiB;
	fake_sync();
	ck_assert_int_eq(core_batch(16 * MiB, &asked, &freed), -EAGAIN);
	core_close();
}
END_TEST

/* A pending signal makes the kernel answer EINTR even to the write that
 * raises the limit back: it is retried, and the limit restored. */
START_TEST(reclaim_restore_retried_on_eintr)
{
	uint64_t asked, freed;

	fk.limit_write_err[1] = EINTR;
	fk.limit_write_err[2] = EINTR;
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->reclaim(priv, 8 * MiB, &asked, &freed), 0);
	ck_assert_int_eq(fk.nlimit_writes, 4);
	ck_assert_str_eq(fk.limit_writes[3], "209715200");
	ck_assert_uint_eq(file_limit(), 200 * MiB);
	ck_assert_int_eq(journal_size(), -1); /* no record, no file */
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(reclaim_step_is_half_the_cache)
{
	uint64_t asked, freed;

	fk.inactive_file = 6 * MiB;
	fk.active_file = 4 * MiB;
	fk.anon = 90 * MiB;
	fake_sync();
	core_open();
	ck_assert_int_eq(core_batch(64 * MiB, &asked, &freed), 0);
	ck_assert_uint_eq(asked, 5 * MiB);
	ck_assert_uint_eq(freed, 5 * MiB);
	ck_assert_str_eq(fk.limit_writes[0], "99614720"); /* 95 MiB */
	/* Three pages of cache: a step of one page (half, rounded down). */
	fk.inactive_file = 3 * 4096;
	fk.active_file = 0;
	fk.usage = fk.anon + 3 * 4096;
	fake_sync();
	ck_assert_int_eq(core_batch(64 * MiB, &asked, &freed), 0);
	ck_assert_uint_eq(asked, 4096);
	ck_assert_uint_eq(freed, 4096);
	ck_assert_int_eq(fk.nlimit_writes, 4);
	core_close();
}
END_TEST

/* A run of steps reads memory.stat for its cap once: each step lowers
 * the clean cache the cap knows by what it freed instead of rereading the
 * file. 3 MiB in 10 MiB of cache with a batch of 1 MiB: a step of the
 * batch, then one of the 2 MiB left; two reads in all, the limits
 * snapshot's (v1's hierarchical_memory_limit is in memory.stat) and the
 * cap's; each step read it again before. */
START_TEST(reclaim_run_reads_memstat_once)
{
	uint64_t freed;
	int before;

	fk.inactive_file = 6 * MiB;
	fk.active_file = 4 * MiB;
	fk.anon = 90 * MiB;
	fake_sync();
	core_open();
	ck_assert_int_eq(mr_group_set_batch_fixed(core_g, MiB), 0);
	before = fk.memstat_reads;
	ck_assert_int_eq(mr_group_reclaim(core_g, 3 * MiB, 0, &freed), 0);
	ck_assert_uint_eq(freed, 3 * MiB);
	ck_assert_int_eq(fk.nlimit_writes, 4); /* two steps */
	ck_assert_int_eq(fk.memstat_reads - before, 2);
	core_close();
}
END_TEST

/* Journal files created in the state directory since watch_journal():
 * one per lock taken, since every unlock removes the empty file. */
static int journal_watch = -1;

static void watch_journal(void)
{
	journal_watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ck_assert_int_ge(journal_watch, 0);
	ck_assert_int_ge(inotify_add_watch(journal_watch, state, IN_CREATE),
			 0);
}

static int journal_locks(void)
{
	char buf[4096] __attribute__((aligned(8)));
	const struct inotify_event *ev;
	ssize_t n, off;
	int creates = 0;

	while ((n = read(journal_watch, buf, sizeof(buf))) > 0) {
		for (off = 0; off < n;
		     off += (ssize_t)sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)(buf + off);
			creates += !!(ev->mask & IN_CREATE);
		}
	}
	close(journal_watch);
	journal_watch = -1;
	return creates;
}

/* Reclaim statistics of mr_group_reclaim() calls so far. */
static struct mr_reclaim_stats requested(void)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };

	ck_assert_int_eq(mr_group_read_reclaim_stats(core_g,
		MR_REASON_REQUESTED, &st), 0);
	return st;
}

/* The steps of one mr_group_reclaim() call are one run: one lock and one
 * journal record for them all (every lowering finds the same record,
 * whose range covers both steps' values), and a few steps for an ask of
 * many batches (the first asks the batch, the next what is left). 32 MiB
 * in 128 KiB batches was 256 steps, each with its lock and record. */
START_TEST(reclaim_call_is_one_run)
{
	struct mr_reclaim_stats st;
	uint64_t freed;
	int locks;

	fk.inactive_file = 100 * MiB;
	fk.active_file = 40 * MiB;
	fk.usage = fk.anon + 140 * MiB;
	fake_sync();
	core_open();
	watch_journal();
	ck_assert_int_eq(mr_group_reclaim(core_g, 32 * MiB, 0, &freed), 0);
	locks = journal_locks();
	ck_assert_uint_eq(freed, 32 * MiB);
	ck_assert_int_eq(fk.nlimit_writes, 4); /* two steps */
	ck_assert_str_eq(fk.limit_writes[0], "209584128"); /* 200 MiB - 128 KiB */
	ck_assert_str_eq(fk.limit_writes[2], "176160768"); /* 168 MiB */
	ck_assert_str_eq(fk.limit_writes[1], "209715200");
	ck_assert_str_eq(fk.limit_writes[3], "209715200");
	ck_assert_int_eq(locks, 1);
	ck_assert_int_eq(fk.nlowerings, 2);
	ck_assert_str_eq(fk.journal_at_lowering[0],
			 fk.journal_at_lowering[1]);
	/* 200 MiB of usage at the first step, less the call's 32 MiB. */
	ck_assert_ptr_nonnull(strstr(fk.journal_at_lowering[0],
				     "original 209715200\nlowest 176160768\n"
				     "highest 209715199\n"));
	st = requested();
	ck_assert_uint_eq(st.calls, 2);
	ck_assert_uint_eq(st.asked_bytes, 32 * MiB);
	ck_assert_uint_eq(st.freed_bytes, 32 * MiB);
	ck_assert_int_eq(journal_size(), -1);
	/* A second call is a run of its own. */
	watch_journal();
	ck_assert_int_eq(mr_group_reclaim(core_g, 1 * MiB, 0, &freed), 0);
	ck_assert_int_eq(journal_locks(), 1);
	ck_assert_int_eq(fk.over_half_steps, 0);
	core_close();
}
END_TEST

/* A kernel that frees 1 MiB beyond what each step asks (a large folio):
 * the second step of the call asks what is missing less that 1 MiB, and
 * the call frees what was asked, in two steps. Scaling what is missing by
 * the first step's freed over asked (2 MiB for 1) asked 15 of the 30 MiB
 * missing and took three steps; with the whole excess asked again the
 * call would free 33 MiB. */
START_TEST(reclaim_carries_overreclaim)
{
	struct mr_reclaim_stats st;
	uint64_t freed;

	fk.free_extra = MiB;
	fk.inactive_file = 100 * MiB;
	fk.active_file = 40 * MiB;
	fk.usage = fk.anon + 140 * MiB;
	fake_sync();
	core_open();
	ck_assert_int_eq(mr_group_set_batch_fixed(core_g, MiB), 0);
	ck_assert_int_eq(mr_group_reclaim(core_g, 32 * MiB, 0, &freed), 0);
	ck_assert_int_eq(fk.nlimit_writes, 4); /* two steps */
	ck_assert_str_eq(fk.limit_writes[0], "208666624"); /* 199 MiB */
	/* 198 MiB left after 2 MiB freed; 30 MiB missing, 29 asked. */
	ck_assert_str_eq(fk.limit_writes[2], "177209344"); /* 169 MiB */
	st = requested();
	ck_assert_uint_eq(st.calls, 2);
	ck_assert_uint_eq(st.asked_bytes, 30 * MiB);
	ck_assert_uint_eq(freed, 32 * MiB);
	core_close();
}
END_TEST

/* The steps of a call that asks more than the cache can give each stay
 * at half of the clean cache left: 30 MiB from 40 MiB of cache in three
 * steps of 1 MiB (the batch), 19.5 MiB (half of 39) and the 9.5 MiB left
 * (below half of 19.5). */
START_TEST(reclaim_run_steps_capped_by_half_cache)
{
	uint64_t freed;

	fake_sync();
	core_open();
	ck_assert_int_eq(mr_group_set_batch_fixed(core_g, MiB), 0);
	ck_assert_int_eq(mr_group_reclaim(core_g, 30 * MiB, 0, &freed), 0);
	ck_assert_uint_eq(freed, 30 * MiB);
	ck_assert_int_eq(fk.nlimit_writes, 6);
	ck_assert_str_eq(fk.limit_writes[0], "103809024"); /* 99 MiB */
	ck_assert_str_eq(fk.limit_writes[2], "83361792"); /* 79.5 MiB */
	ck_assert_str_eq(fk.limit_writes[4], "73400320"); /* 70 MiB */
	ck_assert_int_eq(fk.over_half_steps, 0);
	core_close();
}
END_TEST

/* A manager killed in the second step of a run (right after its lowering
 * write) leaves the run's record, which covers that step's value too:
 * the next open restores the limit. */
START_TEST(reclaim_killed_mid_run_restored)
{
	uint64_t freed;
	const char *j;
	int status;
	pid_t pid;

	fk.inactive_file = 100 * MiB;
	fk.active_file = 40 * MiB;
	fk.usage = fk.anon + 140 * MiB;
	fake_sync();
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		fk.die_after_write = 3; /* the second step's lowering */
		core_open();
		mr_group_reclaim(core_g, 32 * MiB, 0, &freed);
		_exit(1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status));
	ck_assert_uint_eq(file_limit(), 168 * MiB);
	j = read_text(journal_file());
	ck_assert_ptr_nonnull(strstr(j, "original 209715200\n"));
	/* From usage at the first step less the call's 32 MiB. */
	ck_assert_ptr_nonnull(strstr(j, "lowest 176160768\n"));
	ck_assert_ptr_nonnull(strstr(j, "highest 209715199\n"));

	ck_assert_int_eq(be_open(), 0);
	ck_assert_uint_eq(file_limit(), 200 * MiB);
	ck_assert_int_eq(journal_size(), -1);
	ck_assert_ptr_nonnull(strstr(logbuf, "recovered"));
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(reclaim_nothing_reclaimable)
{
	uint64_t asked = 1, freed = 1;

	fk.inactive_file = 0;
	fk.active_file = 4096; /* half a page is no step */
	fk.anon = 100 * MiB - 4096;
	fake_sync();
	core_open();
	ck_assert_int_eq(core_batch(8 * MiB, &asked, &freed), -EAGAIN);
	ck_assert_uint_eq(asked, 0);
	ck_assert_uint_eq(freed, 0);
	ck_assert_int_eq(fk.nlimit_writes, 0);
	ck_assert_int_eq(journal_size(), -1); /* no record, no file */
	core_close();
}
END_TEST

START_TEST(reclaim_ebusy_is_partial_progress)
{
	uint64_t asked, freed;

	fk.limit_write_err[0] = EBUSY;
	fk.ebusy_reclaim = 1 * MiB;
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->reclaim(priv, 8 * MiB, &asked, &freed), 0);
	ck_assert_uint_eq(asked, 8 * MiB);
	ck_assert_uint_eq(freed, 1 * MiB);
	/* The kernel kept the old limit: it is not written again (a write
	 * of the same value with usage above it would reclaim and fail). */
	ck_assert_int_eq(fk.nlimit_writes, 1);
	ck_assert_str_eq(fk.limit_writes[0], "96468992");
	ck_assert_uint_eq(file_limit(), 200 * MiB);
	ck_assert_int_eq(journal_size(), -1); /* no record, no file */
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(reclaim_failed_restore_keeps_journal)
{
	uint64_t asked, freed;
	const char *j;

	fk.limit_write_err[1] = EPERM;
	fk.limit_write_err[2] = EPERM; /* the retry at close fails too */
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->reclaim(priv, 8 * MiB, &asked, &freed), -EPERM);
	ck_assert_uint_eq(file_limit(), 92 * MiB);
	j = read_text(journal_file());
	ck_assert_ptr_nonnull(strstr(j, "original 209715200\n"));
	ck_assert_ptr_nonnull(strstr(j, "lowest 96468992\nhighest 96468992\n"));
	ck_assert_ptr_nonnull(strstr(logbuf, "3 cgroup1:"));
	ck_assert_int_eq(be->close(priv), -EPERM);
	ck_assert_int_gt(journal_size(), 0);
	ck_assert_int_eq(fk.nlimit_writes, 3);

	/* The next open finds the limit as it was lowered and restores. */
	memset(priv, 0, be->priv_size);
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(fk.nlimit_writes, 4);
	ck_assert_str_eq(fk.limit_writes[3], "209715200");
	ck_assert_uint_eq(file_limit(), 200 * MiB);
	ck_assert_int_eq(journal_size(), -1); /* no record, no file */
	ck_assert_int_eq(be->close(priv), 0);
	ck_assert_int_eq(journal_size(), -1);
}
END_TEST

START_TEST(reclaim_failed_restore_retried_next_step)
{
	uint64_t asked, freed;

	fk.limit_write_err[1] = EIO;
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->reclaim(priv, 8 * MiB, &asked, &freed), -EIO);
	ck_assert_uint_eq(file_limit(), 92 * MiB);
	/* The next step settles the record first, then steps from the
	 * original limit, never from the lowered one. */
	ck_assert_int_eq(be->reclaim(priv, 4 * MiB, &asked, &freed), 0);
	ck_assert_int_eq(fk.nlimit_writes, 5);
	ck_assert_str_eq(fk.limit_writes[2], "209715200");
	ck_assert_str_eq(fk.limit_writes[3], "92274688"); /* 88 MiB */
	ck_assert_str_eq(fk.limit_writes[4], "209715200");
	ck_assert_uint_eq(file_limit(), 200 * MiB);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* A restore that failed is retried at the next reclaim call even when the
 * core sizes that step to nothing (the group's cache ran out: the cap of
 * MRI_CAP_STEP_CAN_OOM gives no page): the backend's settle op restores
 * the limit, which is never left lowered. Regression: the core's cap
 * answered -EAGAIN before the backend was called, and the lowered limit
 * stayed until the group's close. */
START_TEST(reclaim_failed_restore_retried_without_cache)
{
	uint64_t asked, freed;

	fk.limit_write_err[1] = EIO;
	fake_sync();
	core_open();
	ck_assert_int_eq(core_batch(8 * MiB, &asked, &freed), -EIO);
	ck_assert_uint_eq(file_limit(), 92 * MiB);
	fk.inactive_file = 0;
	fk.active_file = 4096;
	fk.usage = fk.anon + 4096;
	fake_sync();
	ck_assert_int_eq(core_batch(8 * MiB, &asked, &freed), -EAGAIN);
	ck_assert_uint_eq(file_limit(), 200 * MiB);
	core_close();
}
END_TEST

START_TEST(reclaim_leaves_admin_change)
{
	uint64_t asked, freed;

	fk.admin_limit = 150 * MiB;
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->reclaim(priv, 8 * MiB, &asked, &freed), 0);
	ck_assert_int_eq(fk.nlimit_writes, 1);
	ck_assert_uint_eq(file_limit(), 150 * MiB);
	ck_assert_int_eq(journal_size(), -1); /* no record, no file */
	ck_assert_ptr_nonnull(strstr(logbuf, "changed by someone else"));
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(recovery_restores_lowered_limit)
{
	fk.limit = 92 * MiB;
	fake_sync();
	leave_record(grp, 200 * MiB, 92 * MiB);
	ck_assert_int_gt(journal_size(), 0);
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(fk.nlimit_writes, 1);
	ck_assert_str_eq(fk.limit_writes[0], "209715200");
	ck_assert_uint_eq(file_limit(), 200 * MiB);
	ck_assert_int_eq(journal_size(), -1); /* no record, no file */
	ck_assert_ptr_nonnull(strstr(logbuf, "journal of pid 4242"));
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(recovery_restores_unlimited)
{
	fk.limit = 92 * MiB;
	fake_sync();
	leave_record(grp, MR_UNLIMITED, 92 * MiB);
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(fk.nlimit_writes, 1);
	ck_assert_str_eq(fk.limit_writes[0], "-1");
	ck_assert_uint_eq(file_limit(), UNLIMITED_4K);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(recovery_leaves_admin_value)
{
	fk.limit = 150 * MiB;
	fake_sync();
	leave_record(grp, 200 * MiB, 92 * MiB);
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(fk.nlimit_writes, 0);
	ck_assert_uint_eq(file_limit(), 150 * MiB);
	ck_assert_int_eq(journal_size(), -1); /* no record, no file */
	ck_assert_ptr_nonnull(strstr(logbuf, "changed by someone else"));
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

static void check_refused(const char *content)
{
	int fd;

	ck_assert_int_eq(mkdir(state, 0700), 0);
	fd = open(journal_file(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, content, strlen(content)),
			 (ssize_t)strlen(content));
	close(fd);
	fk.limit = 92 * MiB;
	fake_sync();
	ck_assert_int_eq(be_open(), -EIO);
	ck_assert_int_eq(fk.nlimit_writes, 0);
	ck_assert_uint_eq(file_limit(), 92 * MiB);
	ck_assert_str_eq(read_text(journal_file()), content);
	ck_assert_ptr_nonnull(strstr(logbuf, "refused"));
}

/* A journal record of this group with `rest` after its header lines. */
static const char *record(const char *rest)
{
	static char rec[PATH_MAX + 512];

	snprintf(rec, sizeof(rec), "memreclaim-journal 1\ncgroup %s\npath %s\n%s",
		 cgroup_id(grp), grp, rest);
	return rec;
}

START_TEST(journal_corrupt_refused)
{
	check_refused(record("file memory.limit_in_b"));
}
END_TEST

START_TEST(journal_bad_number_refused)
{
	check_refused(record("file memory.limit_in_bytes\n"
			     "original 2097152x\nlowered 96468992\npid 12\n"));
}
END_TEST

START_TEST(journal_trailing_garbage_refused)
{
	check_refused(record("file memory.limit_in_bytes\n"
			     "original 209715200\nlowered 96468992\npid 12\n"
			     "extra\n"));
}
END_TEST

START_TEST(journal_other_file_refused)
{
	check_refused(record("file ../../etc/passwd\n"
			     "original 209715200\nlowered 96468992\npid 12\n"));
}
END_TEST

/* A record naming another cgroup (device and inode) under this name. */
START_TEST(journal_other_cgroup_refused)
{
	char rec[PATH_MAX + 256];

	snprintf(rec, sizeof(rec), "memreclaim-journal 1\ncgroup %s\npath %s\n"
		 "file memory.limit_in_bytes\noriginal 209715200\n"
		 "lowered 96468992\npid 12\n", cgroup_id(tmp), grp);
	check_refused(rec);
	ck_assert_ptr_nonnull(strstr(logbuf, "another cgroup"));
}
END_TEST

START_TEST(journal_version_refused)
{
	char rec[PATH_MAX + 256];

	snprintf(rec, sizeof(rec),
		 "memreclaim-journal 3\ncgroup %s\npath %s\n"
		 "file memory.limit_in_bytes\n"
		 "original 209715200\nlowered 96468992\npid 12\n",
		 cgroup_id(grp), grp);
	check_refused(rec);
}
END_TEST

START_TEST(journal_symlink_refused)
{
	char target[PATH_MAX + 16];

	snprintf(target, sizeof(target), "%s/target", tmp);
	ck_assert_int_eq(mkdir(state, 0700), 0);
	ck_assert_int_eq(symlink(target, journal_file()), 0);
	ck_assert_int_eq(be_open(), -ELOOP);
	ck_assert_int_eq(access(target, F_OK), -1);
	ck_assert_int_eq(errno, ENOENT);
}
END_TEST

/* The step lock belongs to the cgroup, not to a name for it: a handle
 * opened through a symlink (or another mount, or a container's view)
 * meets the lock of a handle opened by the real path. */
START_TEST(two_spellings_share_the_lock)
{
	char link[PATH_MAX + 16];
	uint64_t asked = 1, freed = 1;
	int fd;

	snprintf(link, sizeof(link), "%s/alias", tmp);
	ck_assert_int_eq(symlink(grp, link), 0);
	ck_assert_int_eq(be_open(), 0);
	fd = open(link, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX), 0);
	ck_assert_int_eq(be->reclaim(priv, 8 * MiB, &asked, &freed), -EBUSY);
	ck_assert_int_eq(fk.nlimit_writes, 0);
	ck_assert_int_eq(flock(fd, LOCK_UN), 0);
	close(fd);
	/* Both spellings name one journal. */
	{
		char a[48], b[48];

		ck_assert_int_eq(mri_journal_name(grp, a, sizeof(a)), 0);
		ck_assert_int_eq(mri_journal_name(link, b, sizeof(b)), 0);
		ck_assert_str_eq(a, b);
	}
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(state_dir_created_private)
{
	struct stat st;

	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(lstat(state, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_uint_eq(st.st_mode & 07777, 0700);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(state_dir_symlink_refused)
{
	char real[PATH_MAX + 16];

	snprintf(real, sizeof(real), "%s/real", tmp);
	ck_assert_int_eq(mkdir(real, 0700), 0);
	ck_assert_int_eq(symlink(real, state), 0);
	ck_assert_int_eq(be_open(), -ELOOP);
}
END_TEST

START_TEST(state_dir_foreign_refused)
{
	ck_assert_int_eq(mkdir(state, 0700), 0);
	ck_assert_int_eq(chown(state, 65534, 65534), 0);
	ck_assert_int_eq(be_open(), -EPERM);
	ck_assert_int_eq(chown(state, geteuid(), getegid()), 0);
	ck_assert_int_eq(chmod(state, 0777), 0);
	ck_assert_int_eq(be_open(), -EPERM);
	ck_assert_int_eq(chmod(state, 0755), 0);
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(state_dir_not_a_directory)
{
	int fd = open(state, O_WRONLY | O_CREAT, 0600);

	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(be_open(), -ENOTDIR);
}
END_TEST

START_TEST(lock_held_elsewhere_is_ebusy)
{
	uint64_t asked = 1, freed = 1;
	int fd;

	ck_assert_int_eq(be_open(), 0);
	fd = open(grp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX), 0);
	ck_assert_int_eq(be->reclaim(priv, 8 * MiB, &asked, &freed), -EBUSY);
	ck_assert_uint_eq(asked, 0);
	ck_assert_uint_eq(freed, 0);
	ck_assert_int_eq(fk.nlimit_writes, 0);
	ck_assert_int_eq(flock(fd, LOCK_UN), 0);
	ck_assert_int_eq(be->reclaim(priv, 8 * MiB, &asked, &freed), 0);
	ck_assert_int_eq(fk.nlimit_writes, 2);
	close(fd);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(vanish_between_reads)
{
	uint64_t asked, freed, u;
	struct mr_limits l = { .size = sizeof(l) };

	ck_assert_int_eq(be_open(), 0);
	/* The limit reads; the group is gone at the usage read. */
	fk.vanish_after_reads = 2;
	ck_assert_int_eq(be->reclaim(priv, 8 * MiB, &asked, &freed), -ENOENT);
	ck_assert_int_eq(fk.nlimit_writes, 0);
	ck_assert_int_eq(journal_size(), -1); /* no record, no file */
	ck_assert_int_eq(be->read_usage(priv, &u), -ENOENT);
	ck_assert_int_eq(be->read_limits(priv, &l), -ENOENT);
	ck_assert_int_eq(be->close(priv), 0);
	ck_assert_int_eq(journal_size(), -1);
}
END_TEST

START_TEST(vanish_while_lowered)
{
	uint64_t asked, freed;

	ck_assert_int_eq(be_open(), 0);
	/* limit and usage read; the lowering write; gone at the restore's
	 * read. */
	fk.vanish_after_reads = 3;
	ck_assert_int_eq(be->reclaim(priv, 8 * MiB, &asked, &freed), -ENOENT);
	ck_assert_int_eq(fk.nlimit_writes, 1);
	/* Nothing is left to restore: the record is dropped. */
	ck_assert_int_eq(journal_size(), -1); /* no record, no file */
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(read_error_injected)
{
	struct mr_memstat ms;
	uint64_t asked, freed;

	ck_assert_int_eq(be_open(), 0);
	core_open();
	strcpy(fk.pread_err_file, "memory.stat");
	fk.pread_err = EOPNOTSUPP;
	ck_assert_int_eq(be->read_memstat(priv, &ms), -EOPNOTSUPP);
	/* A reclaim reads memory.stat (the limits, the core's cap): its
	 * error, and no limit written. */
	ck_assert_int_eq(core_batch(8 * MiB, &asked, &freed), -EOPNOTSUPP);
	ck_assert_int_eq(fk.nlimit_writes, 0);
	fk.pread_err = 0;
	core_close();
	write_file("memory.usage_in_bytes", "12 apples\n");
	ck_assert_int_eq(be->read_usage(priv, &asked), -EIO);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(open_missing_group)
{
	struct mri_open_env env = { .log = &lg, .state_dir = state };
	char p[PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/gone", tmp);
	ck_assert_int_eq(be->open(priv, p, &env), -ENOENT);
	/* Files missing: a directory that is no memory cgroup. */
	ck_assert_int_eq(be->open(priv, tmp, &env), -ENOENT);
}
END_TEST

static bool is_eventfd(int fd)
{
	char p[64], link[64];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	n = readlink(p, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	return strcmp(link, "anon_inode:[eventfd]") == 0;
}

static int poll_in(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0);
}

START_TEST(thresholds)
{
	int efd, efd2, cfd, ecfd_count = 0;
	uint64_t one = 1;
	int usage_fd = -1, i;

	ck_assert_int_eq(be_open(), 0);
	for (i = 0; i < MAX_FDS; i++) {
		if (strcmp(fk.fdname[i], "memory.usage_in_bytes") == 0 &&
		    fcntl(i, F_GETFD) >= 0)
			usage_fd = i;
	}
	ck_assert_int_ge(usage_fd, 0);
	/* Nothing armed: no event fd, none reported. */
	ck_assert_int_eq(sink_calls, 0);
	ck_assert_int_eq(be->event_ack(priv), 0);

	ck_assert_int_eq(be->set_usage_threshold(priv, 150 * MiB), 0);
	ck_assert_int_eq(fk.nec_writes, 1);
	ck_assert_int_eq(sscanf(fk.ec_writes[0], "%d %d", &efd, &cfd), 2);
	ck_assert_int_eq(cfd, usage_fd);
	ck_assert(is_eventfd(efd));
	ck_assert(fcntl(efd, F_GETFD) & FD_CLOEXEC);
	ck_assert(fcntl(efd, F_GETFL) & O_NONBLOCK);
	ck_assert_ptr_nonnull(strstr(fk.ec_writes[0], " 157286400"));
	/* The eventfd is the event fd; cgroup.event_control was opened for
	 * the write alone. */
	ck_assert_int_eq(sink_calls, 1);
	ck_assert_int_eq(sink_fd, efd);
	for (i = 0; i < MAX_FDS; i++)
		ecfd_count += strcmp(fk.fdname[i], "cgroup.event_control") ==
			      0 && fcntl(i, F_GETFD) >= 0;
	ck_assert_int_eq(ecfd_count, 0);

	/* The kernel signals a crossing: the event fd polls readable until
	 * acknowledged. */
	ck_assert_int_eq(write(efd, &one, sizeof(one)), sizeof(one));
	ck_assert_int_eq(poll_in(efd), 1);
	ck_assert_int_eq(be->event_ack(priv), 1);
	ck_assert_int_eq(poll_in(efd), 0);
	ck_assert_int_eq(be->event_ack(priv), 0);

	/* Re-arming: a new eventfd is registered and reported while the old
	 * one is still open, then the old one is closed. */
	ck_assert_int_eq(be->set_usage_threshold(priv, 180 * MiB), 0);
	ck_assert_int_eq(fk.nec_writes, 2);
	ck_assert_int_eq(sscanf(fk.ec_writes[1], "%d %d", &efd2, &cfd), 2);
	ck_assert_int_ne(efd2, efd);
	ck_assert_int_eq(fcntl(efd, F_GETFD), -1);
	ck_assert_ptr_nonnull(strstr(fk.ec_writes[1], " 188743680"));
	ck_assert_int_eq(sink_calls, 2);
	ck_assert_int_eq(sink_fd, efd2);
	ck_assert_int_eq(write(efd2, &one, sizeof(one)), sizeof(one));
	ck_assert_int_eq(poll_in(efd2), 1);

	/* Disarming reports no fd and closes it; nothing is written. */
	ck_assert_int_eq(be->set_usage_threshold(priv, MR_UNLIMITED), 0);
	ck_assert_int_eq(fk.nec_writes, 2);
	ck_assert_int_eq(fcntl(efd2, F_GETFD), -1);
	ck_assert_int_eq(sink_calls, 3);
	ck_assert_int_eq(sink_fd, -1);
	ck_assert_int_eq(be->event_ack(priv), 0);
	ck_assert_int_eq(be->close(priv), 0);
	ck_assert_int_eq(fcntl(usage_fd, F_GETFD), -1);
}
END_TEST

/* The kernel signals a threshold's eventfd once more when the group is
 * removed: a count of 1 with cgroup.event_control gone is the removal
 * alone, 2 or more a crossing and the removal; both answer -ENOENT, and
 * with the group there a count is a crossing. */
START_TEST(threshold_signal_of_removal)
{
	static const uint64_t counts[] = { 1, 2 };
	char ec[PATH_MAX + 32];
	int efd, cfd;
	size_t i;

	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->set_usage_threshold(priv, 150 * MiB), 0);
	ck_assert_int_eq(sscanf(fk.ec_writes[0], "%d %d", &efd, &cfd), 2);
	snprintf(ec, sizeof(ec), "%s/cgroup.event_control", grp);
	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		write_file("cgroup.event_control", "");
		ck_assert_int_eq(write(efd, &counts[i], sizeof(counts[i])),
				 sizeof(counts[i]));
		ck_assert_int_eq(be->event_ack(priv), 1);
		ck_assert_int_eq(write(efd, &counts[i], sizeof(counts[i])),
				 sizeof(counts[i]));
		ck_assert_int_eq(unlink(ec), 0);
		ck_assert_int_eq(be->event_ack(priv), -ENOENT);
		ck_assert_int_eq(poll_in(efd), 0);
	}
	write_file("cgroup.event_control", "");
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(threshold_write_error)
{
	ck_assert_int_eq(be_open(), 0);
	fk.vanished = true;
	ck_assert_int_eq(be->set_usage_threshold(priv, 150 * MiB), -ENOENT);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* A manager killed while the limit is lowered (the test pause) leaves
 * a journal; the next open restores the limit. */
START_TEST(killed_while_lowered)
{
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	uint64_t asked, freed;
	const char *j;
	char pidline[32];
	int status, i;
	pid_t pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		mri_lowerstep_test_pause_ms = 60000;
		if (be_open() == 0)
			be->reclaim(priv, 8 * MiB, &asked, &freed);
		_exit(1);
	}
	for (i = 0; i < 1000 && file_limit() != 92 * MiB; i++)
		nanosleep(&ts, NULL);
	ck_assert_uint_eq(file_limit(), 92 * MiB);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status));
	j = read_text(journal_file());
	snprintf(pidline, sizeof(pidline), "\npid %d\n", (int)pid);
	ck_assert_ptr_nonnull(strstr(j, pidline));
	ck_assert_ptr_nonnull(strstr(j, "lowest 96468992\nhighest 96468992\n"));

	ck_assert_int_eq(be_open(), 0);
	ck_assert_uint_eq(file_limit(), 200 * MiB);
	ck_assert_int_eq(journal_size(), -1); /* no record, no file */
	ck_assert_int_eq(be->close(priv), 0);
	ck_assert_int_eq(journal_size(), -1);
}
END_TEST

START_TEST(pause_setting)
{
	struct timespec a, b;
	uint64_t asked, freed, ms;

	mri_lowerstep_test_pause_ms = 120;
	ck_assert_int_eq(be_open(), 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	ck_assert_int_eq(be->reclaim(priv, 8 * MiB, &asked, &freed), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (uint64_t)(b.tv_sec - a.tv_sec) * 1000 +
	     (uint64_t)(b.tv_nsec / 1000000) - (uint64_t)(a.tv_nsec / 1000000);
	ck_assert_uint_ge(ms, 119);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

static void *reclaim_thread(void *arg)
{
	uint64_t asked, freed;

	*(int *)arg = be->reclaim(priv, 8 * MiB, &asked, &freed);
	return NULL;
}

/* A reader never sees a step's transient limit: it waits for the
 * restore (the step holds the lock file's flock exclusively, the reader
 * takes it shared through another open file description, so this holds
 * across processes too). */
START_TEST(read_limits_during_step)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	struct mr_limits l = { .size = sizeof(l) };
	pthread_t t;
	int r = 1, i;

	mri_lowerstep_test_pause_ms = MRI_JOURNAL_LOCK_WAIT_MS / 2;
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, reclaim_thread, &r), 0);
	for (i = 0; i < 1000 && file_limit() != 92 * MiB; i++)
		nanosleep(&ts, NULL);
	ck_assert_uint_eq(file_limit(), 92 * MiB);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.own_limit_bytes, 200 * MiB);
	ck_assert_uint_eq(l.limit_bytes, 200 * MiB);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* A step that holds the group longer than the wait: the reader gives up
 * with -EBUSY rather than report the lowered limit. */
START_TEST(read_limits_busy_during_long_step)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	struct mr_limits l = { .size = sizeof(l) };
	pthread_t t;
	int r = 1, i;

	mri_lowerstep_test_pause_ms = MRI_JOURNAL_READ_WAIT_MS * 2;
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, reclaim_thread, &r), 0);
	for (i = 0; i < 1000 && file_limit() != 92 * MiB; i++)
		nanosleep(&ts, NULL);
	ck_assert_uint_eq(file_limit(), 92 * MiB);
	l.own_limit_bytes = 42;
	ck_assert_int_eq(be->read_limits(priv, &l), -EBUSY);
	ck_assert_uint_eq(l.own_limit_bytes, 42);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.own_limit_bytes, 200 * MiB);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* One keeper per group, across handles. */
START_TEST(one_keeper_per_group)
{
	void *other = calloc(1, be->priv_size);
	struct mri_open_env env = { .log = &lg, .state_dir = state };

	ck_assert_ptr_nonnull(other);
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->open(other, grp, &env), 0);
	ck_assert_int_eq(be->claim_keeper(priv, true), 0);
	ck_assert_int_eq(be->claim_keeper(priv, true), 0); /* idempotent */
	ck_assert_int_eq(be->claim_keeper(other, true), -EBUSY);
	ck_assert_int_eq(be->claim_keeper(priv, false), 0);
	ck_assert_int_eq(be->claim_keeper(other, true), 0);
	ck_assert_int_eq(be->claim_keeper(priv, true), -EBUSY);
	/* Closing the keeper's handle releases it. */
	ck_assert_int_eq(be->close(other), 0);
	ck_assert_int_eq(be->claim_keeper(priv, true), 0);
	ck_assert_int_eq(be->close(priv), 0);
	free(other);
}
END_TEST

/* ------------------------------------------------------------ fork */

/* A fork() from inside the backend, at a read or write of fork_file:
 * fork_how 1 through fork() (the library's fork handler runs in the
 * child), 2 through the raw syscall (no handler runs, as in the child of
 * posix_spawn() or clone() before it execs or exits). The child says it
 * is there, then waits to be killed. */
static char fork_file[32];
static int fork_how;
static pid_t forked;

static void fork_here(int fd)
{
	int up[2];
	char c;

	if (!fork_how || !cgroup_file(fd) ||
	    strcmp(fk.fdname[fd], fork_file) != 0)
		return;
	ck_assert_int_eq(pipe2(up, O_CLOEXEC), 0);
	forked = fork_how == 1 ? fork() : (pid_t)syscall(SYS_fork);
	fork_how = 0;
	if (forked == 0) {
		/* The fork handler, if any, has run by now. */
		if (write(up[1], "u", 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	ck_assert_int_gt(forked, 0);
	close(up[1]);
	ck_assert_int_eq(read(up[0], &c, 1), 1);
	close(up[0]);
}

static ssize_t forking_pread(int fd, void *buf, size_t len, off_t off)
{
	fork_here(fd);
	return h_pread(fd, buf, len, off);
}

static ssize_t forking_pwrite(int fd, const void *buf, size_t len,
			      off_t off)
{
	fork_here(fd);
	return h_pwrite(fd, buf, len, off);
}

static const struct mri_file_ops forking_ops = {
	.open = h_open,
	.openat = h_openat,
	.pread = forking_pread,
	.pwrite = forking_pwrite,
	.close = h_close,
	.statfs = h_statfs,
};

/* fds of pid that point into the fake tree (the group, its parent, the
 * state directory and the journal are all in it). */
static int tree_fds(pid_t pid)
{
	char dir[64], p[PATH_MAX], target[PATH_MAX];
	struct dirent *e;
	ssize_t n;
	int found = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		n = readlink(p, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		found += strncmp(target, tmp, strlen(tmp)) == 0;
	}
	closedir(d);
	return found;
}

/* Whether flock(LOCK_EX) of the directory is had at once, as a step of
 * another manager would take it. */
static bool dir_lock_free(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool ok;

	ck_assert_int_ge(fd, 0);
	ok = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return ok;
}

static void kill_forked(void)
{
	int status;

	ck_assert_int_eq(kill(forked, SIGKILL), 0);
	ck_assert_int_eq(waitpid(forked, &status, 0), forked);
}

/* A child forked while a reader holds its shared locks on the group's
 * and its parent's directories (memory.failcnt is read under them), and
 * while a step holds the group's lock (at the lowering write): once the
 * call is over, a step's lock is had at once, and the child holds no fd
 * of the library (its fork handler closed the transient ones too). */
static void fork_inside(const char *file, int how)
{
	struct mr_limits l = { .size = sizeof(l) };
	uint64_t asked, freed;
	mr_ctx_t *ctx;

	/* A context installs the library's fork handler. */
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(be_open(), 0);
	mri_file_ops_set(&forking_ops);
	snprintf(fork_file, sizeof(fork_file), "%s", file);
	fork_how = how;
	if (strcmp(file, "memory.limit_in_bytes") == 0)
		ck_assert_int_eq(be->reclaim(priv, 8 * MiB, &asked, &freed),
				 0);
	else
		ck_assert_int_eq(be->read_limits(priv, &l), 0);
	mri_file_ops_set(&fake_ops);
	ck_assert_int_eq(fork_how, 0); /* it forked */
	ck_assert_msg(dir_lock_free(grp), "the child holds the group's lock");
	ck_assert_msg(dir_lock_free(tmp), "the child holds the parent's lock");
	if (how == 1)
		ck_assert_int_eq(tree_fds(forked), 0);
	/* The parent's next step is had and its keeper lock is its own. */
	ck_assert_int_eq(be->reclaim(priv, 8 * MiB, &asked, &freed), 0);
	ck_assert_int_eq(be->claim_keeper(priv, true), 0);
	kill_forked();
	ck_assert_ptr_null(strstr(logbuf, "lock not had"));
	ck_assert_int_eq(be->close(priv), 0);
	mr_ctx_free(ctx);
}

START_TEST(fork_during_read_leaves_no_lock)
{
	fork_inside("memory.failcnt", 1);
}
END_TEST

START_TEST(fork_during_step_leaves_no_lock)
{
	fork_inside("memory.limit_in_bytes", 1);
}
END_TEST

/* No fork handler in the child: the fds it copied are unlocked before
 * the parent closes them, so its copies hold nothing either. */
START_TEST(spawn_during_read_leaves_no_lock)
{
	fork_inside("memory.failcnt", 2);
}
END_TEST

START_TEST(spawn_during_step_leaves_no_lock)
{
	fork_inside("memory.limit_in_bytes", 2);
}
END_TEST

/* A step that cannot have the lock says who holds it: a reader of this
 * process, or another process by pid. */
START_TEST(busy_names_the_holder)
{
	struct mri_cgroup1 *cg = priv;
	struct mri_journal_reads rd;
	uint64_t asked, freed;
	char want[96];
	int up[2];
	pid_t pid;
	char c;

	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(mri_journal_reads_begin(&cg->journal, &rd), 0);
	ck_assert_int_eq(be->reclaim(priv, 8 * MiB, &asked, &freed), -EBUSY);
	snprintf(want, sizeof(want), "held shared by a reader of this "
		 "process (pid %d)", (int)getpid());
	ck_assert_msg(strstr(logbuf, want), "log: %s", logbuf);
	mri_journal_reads_end(&rd);

	logbuf[0] = '\0';
	ck_assert_int_eq(pipe2(up, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(grp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0 || flock(fd, LOCK_EX) < 0 ||
		    write(up[1], "l", 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	close(up[1]);
	ck_assert_int_eq(read(up[0], &c, 1), 1);
	close(up[0]);
	ck_assert_int_eq(be->reclaim(priv, 8 * MiB, &asked, &freed), -EBUSY);
	snprintf(want, sizeof(want), "held exclusive by another process, "
		 "pid %d (", (int)pid);
	ck_assert_msg(strstr(logbuf, want), "log: %s", logbuf);
	ck_assert_ptr_null(strstr(logbuf, "manager"));
	forked = pid;
	kill_forked();
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* ------------------------------------------- events, limits, writes */

START_TEST(read_events_failcnt_and_oom_kill)
{
	struct mr_events ev;

	fk.failcnt = 12;
	fk.oom_kill = 3;
	fake_sync();
	ck_assert_int_eq(be_open(), 0);
	memset(&ev, 0xa5, sizeof(ev));
	ck_assert_int_eq(be->read_events(priv, false, &ev), 0);
	ck_assert_uint_eq(ev.size, sizeof(ev));
	ck_assert_uint_eq(ev.present, (1ULL << MR_EVENT_MAX) |
				      (1ULL << MR_EVENT_OOM_KILL));
	ck_assert_uint_eq(ev.max, 12);
	ck_assert_uint_eq(ev.oom_kill, 3);
	/* absent, and zeroed rather than left as they were */
	ck_assert_uint_eq(ev.low, 0);
	ck_assert_uint_eq(ev.high, 0);
	ck_assert_uint_eq(ev.oom, 0);
	ck_assert_uint_eq(ev.oom_group_kill, 0);
	/* the group's own counters either way */
	memset(&ev, 0xa5, sizeof(ev));
	ck_assert_int_eq(be->read_events(priv, true, &ev), 0);
	ck_assert_uint_eq(ev.max, 12);
	ck_assert_uint_eq(ev.oom_kill, 3);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(read_events_without_oom_kill_line)
{
	struct mr_events ev;

	ck_assert_int_eq(be_open(), 0);
	/* A kernel before 4.13 */
	write_file("memory.oom_control", "oom_kill_disable 0\nunder_oom 0\n");
	ck_assert_int_eq(be->read_events(priv, false, &ev), 0);
	ck_assert_uint_eq(ev.present, 1ULL << MR_EVENT_MAX);
	ck_assert_uint_eq(ev.max, 7);
	ck_assert_uint_eq(ev.oom_kill, 0);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(read_events_errors)
{
	struct mr_events ev = { .size = sizeof(ev), .max = 99 };

	ck_assert_int_eq(be_open(), 0);
	write_file("memory.oom_control",
		   "oom_kill_disable 0\nunder_oom 0\noom_kill x1\n");
	ck_assert_int_eq(be->read_events(priv, false, &ev), -EIO);
	ck_assert_uint_eq(ev.max, 99); /* nothing written on error */
	ck_assert_ptr_nonnull(strstr(logbuf, "oom_kill is not a number"));
	write_file("memory.oom_control", "oom_kill 1\n");
	strcpy(fk.pread_err_file, "memory.oom_control");
	fk.pread_err = EIO;
	ck_assert_int_eq(be->read_events(priv, false, &ev), -EIO);
	strcpy(fk.pread_err_file, "memory.failcnt");
	ck_assert_int_eq(be->read_events(priv, false, &ev), -EIO);
	ck_assert_uint_eq(ev.max, 99);
	fk.pread_err = 0;
	ck_assert_int_eq(be->read_events(priv, false, &ev), 0);
	ck_assert_uint_eq(ev.oom_kill, 1);
	fk.vanished = true;
	ck_assert_int_eq(be->read_events(priv, false, &ev), -ENOENT);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(parse_oom_kill)
{
	uint64_t v = 5;

	ck_assert_int_eq(mri_cgroup1_parse_oom_kill(
		"oom_kill_disable 1\nunder_oom 1\noom_kill 42\n", &v), 1);
	ck_assert_uint_eq(v, 42);
	ck_assert_int_eq(mri_cgroup1_parse_oom_kill("oom_kill 7", &v), 1);
	ck_assert_uint_eq(v, 7);
	v = 5;
	ck_assert_int_eq(mri_cgroup1_parse_oom_kill(
		"oom_kill_disable 0\nunder_oom 0\n", &v), 0);
	ck_assert_int_eq(mri_cgroup1_parse_oom_kill("", &v), 0);
	ck_assert_uint_eq(v, 5);
	ck_assert_int_eq(mri_cgroup1_parse_oom_kill("oom_kill \n", &v), -EIO);
	ck_assert_int_eq(mri_cgroup1_parse_oom_kill("oom_kill -1\n", &v),
			 -EIO);
	ck_assert_int_eq(mri_cgroup1_parse_oom_kill(
		"oom_kill 99999999999999999999999\n", &v), -EIO);
}
END_TEST

START_TEST(read_limits_peak_and_swap)
{
	struct mr_limits l;

	fk.max_usage = 150 * MiB;
	fake_sync();
	/* 4 MiB swapped; memory+swap limited to 260 MiB */
	write_file("memory.memsw.usage_in_bytes", "109051904\n");
	write_file("memory.memsw.limit_in_bytes", "272629760\n");
	ck_assert_int_eq(be_open(), 0);
	memset(&l, 0xa5, sizeof(l));
	l.size = sizeof(l);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.present, MR_LIMITS_HAS_PEAK | MR_LIMITS_HAS_SWAP |
			  MR_LIMITS_HAS_BINDING);
	ck_assert_uint_eq(l.peak_bytes, 150 * MiB);
	ck_assert_uint_eq(l.swap_usage_bytes, 4 * MiB);
	ck_assert_uint_eq(l.swap_limit_bytes, 60 * MiB);
	ck_assert_uint_eq(l.high_bytes, MR_UNLIMITED);
	ck_assert_uint_eq(l.own_high_bytes, MR_UNLIMITED);
	ck_assert_uint_eq(l.low_bytes, 0);
	ck_assert_uint_eq(l.min_bytes, 0);
	ck_assert_uint_eq(l.effective_low_bytes, 0);
	ck_assert_uint_eq(l.effective_min_bytes, 0);

	/* memsw unlimited: swap unlimited; memsw usage read before a
	 * fall in usage: clamped at 0 */
	write_file("memory.memsw.limit_in_bytes", "9223372036854771712\n");
	write_file("memory.memsw.usage_in_bytes", "1048576\n");
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.swap_limit_bytes, MR_UNLIMITED);
	ck_assert_uint_eq(l.swap_usage_bytes, 0);
	/* memsw limit equal to the limit: no swap allowed */
	write_file("memory.memsw.limit_in_bytes", "209715200\n");
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.swap_limit_bytes, 0);

	strcpy(fk.pread_err_file, "memory.memsw.usage_in_bytes");
	fk.pread_err = EIO;
	l.peak_bytes = 1;
	ck_assert_int_eq(be->read_limits(priv, &l), -EIO);
	ck_assert_uint_eq(l.peak_bytes, 1);
	strcpy(fk.pread_err_file, "memory.max_usage_in_bytes");
	ck_assert_int_eq(be->read_limits(priv, &l), -EIO);
	ck_assert_uint_eq(l.peak_bytes, 1);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(read_limits_without_swap_accounting)
{
	struct mr_limits l;

	fk.max_usage = 120 * MiB;
	fake_sync();
	ck_assert_int_eq(be_open(), 0);
	memset(&l, 0xa5, sizeof(l));
	l.size = sizeof(l);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.present, MR_LIMITS_HAS_PEAK |
			  MR_LIMITS_HAS_BINDING);
	ck_assert_uint_eq(l.peak_bytes, 120 * MiB);
	ck_assert_uint_eq(l.swap_usage_bytes, 0);
	ck_assert_uint_eq(l.swap_limit_bytes, 0);
	ck_assert_uint_eq(l.high_bytes, MR_UNLIMITED);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* The host's free swap (a meminfo of the fake tree) and the group's
 * memory.swappiness. */
static void host_swap(uint64_t free_bytes, unsigned swappiness)
{
	static char meminfo[PATH_MAX];
	char buf[128];

	snprintf(meminfo, sizeof(meminfo), "%s/meminfo", tmp);
	snprintf(buf, sizeof(buf), "SwapTotal:       1048576 kB\n"
		 "SwapFree:        %" PRIu64 " kB\n", free_bytes / 1024);
	put_top("meminfo", buf);
	mri_swap_meminfo = meminfo;
	snprintf(buf, sizeof(buf), "%u\n", swappiness);
	write_file("memory.swappiness", buf);
}

/* memsw limit = limit = 200 MiB: however much swap the host has free, a
 * swap-out makes no room (the memsw usage stays); with 60 MiB more and
 * 4 MiB swapped, 56 MiB; an ancestor's memsw limit binds too. The host's
 * free swap still bounds it. */
START_TEST(read_limits_swap_free_memsw)
{
	struct mr_limits l = { .size = sizeof(l) };
	char buf[64];

	host_swap(512 * MiB, 60);
	fk.memsw_limit = 200 * MiB;
	fake_sync();
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert(l.present & MR_LIMITS_HAS_SWAP_FREE);
	ck_assert_uint_eq(l.swap_free_bytes, 0);
	ck_assert_int_eq(be->close(priv), 0);

	fk.memsw_limit = 260 * MiB;
	fk.swapped = 4 * MiB;
	fake_sync();
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.swap_free_bytes, 56 * MiB);
	/* The parent's memsw limit of 230 MiB, with 10 MiB more charged
	 * there than in the group: memsw room 230 - 114 = 116 MiB against
	 * the group's 156 MiB, over 100 MiB of memory room: 16 MiB. */
	snprintf(buf, sizeof(buf), "%" PRIu64 "\n", 230 * MiB);
	put_top("memory.memsw.limit_in_bytes", buf);
	snprintf(buf, sizeof(buf), "%" PRIu64 "\n",
		 fk.usage + fk.swapped + 10 * MiB);
	put_top("memory.memsw.usage_in_bytes", buf);
	fk.hier_memsw = 230 * MiB;
	fake_sync();
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.swap_free_bytes, 16 * MiB);
	host_swap(8 * MiB, 60);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert_uint_eq(l.swap_free_bytes, 8 * MiB);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(read_limits_swap_free)
{
	struct mr_limits l = { .size = sizeof(l) };

	host_swap(300 * MiB, 30);
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert(l.present & MR_LIMITS_HAS_SWAP_FREE);
	ck_assert_uint_eq(l.swap_free_bytes, 300 * MiB);
	ck_assert_uint_eq(l.swappiness, 30);
	/* No memory.swappiness: the rest of the snapshot holds. */
	write_file("memory.swappiness", "");
	ck_assert_int_eq(be->read_limits(priv, &l), 0);
	ck_assert(!(l.present & MR_LIMITS_HAS_SWAP_FREE));
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* 95 MiB of anonymous memory and no page cache, limit 100 MiB, margin
 * 10 MiB, through the public API and the margin worker: the margin
 * reclaim calls of its rounds; the log in logbuf. */
static uint64_t anon_margin_calls(void)
{
	struct mr_reclaim_stats st = { .size = sizeof(st) };
	struct mr_protection p = { .size = sizeof(p) };
	mr_ctx_t *ctx;
	mr_group_t *g;
	int i, r;

	fk.usage = fk.anon = 95 * MiB;
	fk.inactive_file = fk.active_file = 0;
	fk.limit = fk.hier = 100 * MiB;
	fake_sync();
	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", state, 1), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_ctx_set_log(ctx, log_fn, NULL, MR_LOG_DEBUG), 0);
	ck_assert_int_eq(mr_group_open(ctx, grp, "cgroup1", &g), 0);
	/* v1 has no memory.low: no protection to compute. */
	ck_assert_int_eq(mr_group_read_protection(g, MR_RECLAIM_ROOT_TOP, &p),
			 -EOPNOTSUPP);
	ck_assert_int_eq(mr_group_set_batch_fixed(g, 4 * MiB), 0);
	ck_assert_int_eq(mr_group_set_margin(g, 10 * MiB, 0, 0), 0);
	for (i = 0; i < 1000; i++) {
		r = mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL);
		ck_assert_int_ge(r, 0);
		if (r == 0)
			break;
	}
	ck_assert_int_eq(mr_group_read_reclaim_stats(g, MR_REASON_MARGIN,
						     &st), 0);
	mr_ctx_free(ctx);
	return st.calls;
}

/* The kernel reclaims a v1 group's anonymous memory when the host has
 * swap and memory.swappiness is not 0 (get_scan_count()): the worker
 * keeps the margin by swapping; with no swap free or swappiness 0 it
 * leaves the group alone and says what it counted. */
START_TEST(worker_margin_swaps_anon)
{
	fk.swap = true;
	host_swap(512 * MiB, 60);
	ck_assert_uint_gt(anon_margin_calls(), 0);
	ck_assert_msg(fk.usage <= 90 * MiB, "%s", logbuf);
	ck_assert_ptr_null(strstr(logbuf, "unreachable"));
	/* The limit was restored after every step. */
	ck_assert_uint_eq(fk.limit, 100 * MiB);
}
END_TEST

/* On v1 with memsw accounting a swap-out leaves memsw usage as it was,
 * and a charge that fails on the memsw counter reclaims without swapping
 * (try_charge_memcg()): swap makes room only up to the memsw headroom
 * beyond the memory headroom. memsw limit = limit: nothing to gain by
 * swapping, the margin is unreachable; 50 MiB more: the worker swaps. */
START_TEST(worker_margin_memsw_bounds_swap)
{
	fk.swap = true;
	host_swap(512 * MiB, 60);
	fk.memsw_limit = 100 * MiB;
	ck_assert_uint_eq(anon_margin_calls(), 0);
	ck_assert_uint_eq(fk.usage, 95 * MiB);
	ck_assert_msg(strstr(logbuf, "margin unreachable") &&
		      strstr(logbuf, "0.0 MiB anon (swap 0.0 MiB free)"),
		      "%s", logbuf);
}
END_TEST

START_TEST(worker_margin_memsw_room_swaps)
{
	fk.swap = true;
	host_swap(512 * MiB, 60);
	fk.memsw_limit = 150 * MiB;
	ck_assert_uint_gt(anon_margin_calls(), 0);
	ck_assert_msg(fk.usage <= 90 * MiB, "%s", logbuf);
	ck_assert_ptr_null(strstr(logbuf, "unreachable"));
	ck_assert_uint_eq(fk.usage + fk.swapped, 95 * MiB);
}
END_TEST

START_TEST(worker_margin_anon_without_swap)
{
	host_swap(0, 60);
	ck_assert_uint_eq(anon_margin_calls(), 0);
	ck_assert_uint_eq(fk.usage, 95 * MiB);
	ck_assert_msg(strstr(logbuf, "margin unreachable") &&
		      strstr(logbuf, "reclaimable: 0.0 MiB page cache + "
			     "0.0 MiB anon (swap 0.0 MiB free)"), "%s", logbuf);
}
END_TEST

START_TEST(worker_margin_anon_swappiness_0)
{
	fk.swap = true;
	host_swap(512 * MiB, 0);
	ck_assert_uint_eq(anon_margin_calls(), 0);
	ck_assert_uint_eq(fk.usage, 95 * MiB);
	ck_assert_msg(strstr(logbuf, "0.0 MiB anon (swap 512.0 MiB free, "
			     "swappiness 0)"), "%s", logbuf);
}
END_TEST

START_TEST(open_needs_peak_and_oom_control)
{
	char p[PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/memory.oom_control", grp);
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(be_open(), -ENOENT);
	fake_sync();
	snprintf(p, sizeof(p), "%s/memory.max_usage_in_bytes", grp);
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(be_open(), -ENOENT);
}
END_TEST

START_TEST(write_limit_max)
{
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->write_limit(priv, MRI_LIMIT_MAX, 150 * MiB), 0);
	ck_assert_int_eq(fk.nlimit_writes, 1);
	ck_assert_str_eq(fk.limit_writes[0], "157286400");
	ck_assert_uint_eq(file_limit(), 150 * MiB);
	ck_assert_int_eq(be->write_limit(priv, MRI_LIMIT_MAX, MR_UNLIMITED),
			 0);
	ck_assert_str_eq(fk.limit_writes[1], "-1");
	ck_assert_uint_eq(file_limit(), UNLIMITED_4K);
	/* below usage with not enough cache: the kernel's EBUSY, the old
	 * limit kept */
	ck_assert_int_eq(be->write_limit(priv, MRI_LIMIT_MAX, 40 * MiB),
			 -EBUSY);
	ck_assert_uint_eq(file_limit(), UNLIMITED_4K);
	ck_assert_int_eq(journal_size(), -1); /* no record, no file */
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(write_limit_other_kinds)
{
	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->write_limit(priv, MRI_LIMIT_HIGH, 150 * MiB),
			 -EOPNOTSUPP);
	ck_assert_int_eq(be->write_limit(priv, 2, 150 * MiB), -EINVAL);
	ck_assert_int_eq(be->write_limit(priv, -1, 150 * MiB), -EINVAL);
	ck_assert_int_eq(fk.nlimit_writes, 0);
	ck_assert_uint_eq(file_limit(), 200 * MiB);
	ck_assert_int_eq(be->set_swappiness(priv, 0), -EOPNOTSUPP);
	ck_assert_int_eq(be->set_swappiness(priv, -1), -EOPNOTSUPP);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* A record a dead manager left after the open is settled (its limit put
 * back) before the new limit is written, so the new limit is not the
 * record's "original" a later restore would write over. */
START_TEST(write_limit_settles_dead_managers_record)
{
	ck_assert_int_eq(be_open(), 0);
	fk.limit = 92 * MiB;
	fake_sync();
	leave_record(grp, 200 * MiB, 92 * MiB);
	ck_assert_int_eq(be->write_limit(priv, MRI_LIMIT_MAX, 180 * MiB), 0);
	ck_assert_int_eq(fk.nlimit_writes, 2);
	ck_assert_str_eq(fk.limit_writes[0], "209715200");
	ck_assert_str_eq(fk.limit_writes[1], "188743680");
	ck_assert_uint_eq(file_limit(), 180 * MiB);
	ck_assert_int_eq(journal_size(), -1); /* no record, no file */
	ck_assert_int_eq(be->close(priv), 0);
	ck_assert_uint_eq(file_limit(), 180 * MiB);
}
END_TEST

START_TEST(write_limit_waits_for_steps)
{
	int fd;

	ck_assert_int_eq(be_open(), 0);
	fd = open(grp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX), 0);
	ck_assert_int_eq(be->write_limit(priv, MRI_LIMIT_MAX, 150 * MiB),
			 -EBUSY);
	ck_assert_int_eq(fk.nlimit_writes, 0);
	ck_assert_int_eq(flock(fd, LOCK_UN), 0);
	ck_assert_int_eq(be->write_limit(priv, MRI_LIMIT_MAX, 150 * MiB), 0);
	close(fd);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(write_limit_errors)
{
	ck_assert_int_eq(be_open(), 0);
	fk.limit_write_err[0] = EINVAL; /* memsw limit below it */
	ck_assert_int_eq(be->write_limit(priv, MRI_LIMIT_MAX, 250 * MiB),
			 -EINVAL);
	ck_assert_uint_eq(file_limit(), 200 * MiB);
	ck_assert_ptr_nonnull(strstr(logbuf, "writing the limit"));
	/* EINTR is retried */
	fk.limit_write_err[1] = EINTR;
	fk.limit_write_err[2] = EINTR;
	ck_assert_int_eq(be->write_limit(priv, MRI_LIMIT_MAX, 250 * MiB), 0);
	ck_assert_uint_eq(file_limit(), 250 * MiB);
	fk.vanished = true;
	ck_assert_int_eq(be->write_limit(priv, MRI_LIMIT_MAX, 150 * MiB),
			 -ENOENT);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* ------------------------------------------------- PSI from the twin */

/* The fake hybrid layout: tmp stands for the v1 memory mount (grp is
 * tmp/grp), tmp/v2 for the cgroup2 mount; the twin is tmp/v2/grp. */
static struct mri_hybrid_psi hy;
static char twin[PATH_MAX];

static void write_twin_pressure(const char *text)
{
	char p[PATH_MAX + 32];
	FILE *f;

	snprintf(p, sizeof(p), "%s/memory.pressure", twin);
	f = fopen(p, "we");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static int be_open_hybrid(const char *pressure)
{
	struct mri_open_env env = { .log = &lg, .state_dir = state,
				    .ctx_state = &hy };

	mri_hybrid_init(&hy);
	ck_assert_ptr_nonnull(realpath(tmp, hy.v1_mount));
	ck_assert_uint_lt(strlen(hy.v1_mount), 200);
	snprintf(hy.v2_mount, sizeof(hy.v2_mount), "%.200s/v2", hy.v1_mount);
	hy.found = true;
	atomic_store(&hy.enabled, true);
	ck_assert_int_eq(mkdir(hy.v2_mount, 0755), 0);
	snprintf(twin, sizeof(twin), "%.200s/v2/grp", hy.v1_mount);
	if (pressure) {
		ck_assert_int_eq(mkdir(twin, 0755), 0);
		write_twin_pressure(pressure);
	}
	return be->open(priv, grp, &env);
}

#define PRESSURE_618 \
	"some avg10=12.76 avg60=2.48 avg300=0.52 total=1833797\n" \
	"full avg10=12.76 avg60=2.48 avg300=0.52 total=1833797\n"

START_TEST(pressure_needs_hybrid)
{
	struct mr_pressure p;

	ck_assert_int_eq(be_open(), 0);
	ck_assert_int_eq(be->read_pressure(priv, &p), -EOPNOTSUPP);
	ck_assert_int_eq(be->psi_trigger_open(priv, MR_PSI_SOME, 100000,
					      2000000), -EOPNOTSUPP);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(pressure_from_twin)
{
	struct mr_pressure p;

	ck_assert_int_eq(be_open_hybrid(PRESSURE_618), 0);
	memset(&p, 0, sizeof(p));
	ck_assert_int_eq(be->read_pressure(priv, &p), 0);
	ck_assert_uint_eq(p.size, sizeof(p));
	ck_assert_uint_eq(p.present, MR_PRESSURE_SOME | MR_PRESSURE_FULL);
	ck_assert_uint_eq(p.some.avg10_ppm, 127600);
	ck_assert_uint_eq(p.full.total_us, 1833797);
	/* The option turned off while the group is open: no PSI. */
	atomic_store(&hy.enabled, false);
	ck_assert_int_eq(be->read_pressure(priv, &p), -EOPNOTSUPP);
	atomic_store(&hy.enabled, true);
	ck_assert_int_eq(be->read_pressure(priv, &p), 0);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(pressure_without_twin)
{
	struct mr_pressure p;

	ck_assert_int_eq(be_open_hybrid(NULL), 0);
	ck_assert_int_eq(be->read_pressure(priv, &p), -EOPNOTSUPP);
	ck_assert_int_eq(be->psi_trigger_open(priv, MR_PSI_SOME, 100000,
					      2000000), -EOPNOTSUPP);
	/* A twin without memory.pressure (no CONFIG_PSI): no PSI */
	ck_assert_int_eq(mkdir(twin, 0755), 0);
	ck_assert_int_eq(be->read_pressure(priv, &p), -EOPNOTSUPP);
	ck_assert_int_eq(be->psi_trigger_open(priv, MR_PSI_SOME, 100000,
					      2000000), -EOPNOTSUPP);
	/* The twin made later is found. */
	write_twin_pressure(PRESSURE_618);
	ck_assert_int_eq(be->read_pressure(priv, &p), 0);
	ck_assert_uint_eq(p.some.total_us, 1833797);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(pressure_v1_group_gone)
{
	struct mr_pressure p;

	ck_assert_int_eq(be_open_hybrid(NULL), 0);
	fk.vanished = true;
	ck_assert_int_eq(be->read_pressure(priv, &p), -ENOENT);
	ck_assert_int_eq(be->psi_trigger_open(priv, MR_PSI_SOME, 100000,
					      2000000), -ENOENT);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

/* A twin file removed between its open and its read answers ENODEV, as
 * kernfs does for a removed node: here the file of inode stale_ino. */
static ino_t stale_ino;

static ssize_t twin_pread(int fd, void *buf, size_t len, off_t off)
{
	struct stat st;

	if (stale_ino && fstat(fd, &st) == 0 && st.st_ino == stale_ino)
		return -ENODEV;
	return h_pread(fd, buf, len, off);
}

static ino_t twin_pressure_ino(void)
{
	char p[PATH_MAX + 32];
	struct stat st;

	snprintf(p, sizeof(p), "%s/memory.pressure", twin);
	ck_assert_int_eq(stat(p, &st), 0);
	return st.st_ino;
}

/* The twin's memory.pressure is opened for each read (no fd is kept for
 * it): one made again is read anew, one removed under the read is no
 * PSI, and so is one removed for good. */
START_TEST(pressure_twin_removed)
{
	struct mri_file_ops ops = fake_ops;
	struct mr_pressure p;
	char path[PATH_MAX + 32];

	ops.pread = twin_pread;
	mri_file_ops_set(&ops);
	ck_assert_int_eq(be_open_hybrid(PRESSURE_618), 0);
	ck_assert_int_eq(be->read_pressure(priv, &p), 0);
	ck_assert_uint_eq(p.some.total_us, 1833797);

	/* Made again: the new twin is read. */
	snprintf(path, sizeof(path), "%s/memory.pressure", twin);
	ck_assert_int_eq(unlink(path), 0);
	write_twin_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 "
			    "total=5\n");
	ck_assert_int_eq(be->read_pressure(priv, &p), 0);
	ck_assert_uint_eq(p.some.total_us, 5);
	ck_assert_uint_eq(p.present, MR_PRESSURE_SOME);

	/* Removed between the open and the read. */
	stale_ino = twin_pressure_ino();
	ck_assert_int_eq(be->read_pressure(priv, &p), -EOPNOTSUPP);
	stale_ino = 0;

	/* Removed for good while the v1 group lives: no PSI. */
	stale_ino = twin_pressure_ino();
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(rmdir(twin), 0);
	ck_assert_int_eq(be->read_pressure(priv, &p), -EOPNOTSUPP);
	ck_assert_int_eq(be->psi_trigger_open(priv, MR_PSI_SOME, 100000,
					      2000000), -EOPNOTSUPP);
	/* and both gone: -ENOENT */
	fk.vanished = true;
	ck_assert_int_eq(be->read_pressure(priv, &p), -ENOENT);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(pressure_disabled_in_kernel)
{
	struct mr_pressure p;

	/* psi=0 leaves an empty file on some kernels */
	ck_assert_int_eq(be_open_hybrid(""), 0);
	ck_assert_int_eq(be->read_pressure(priv, &p), -EOPNOTSUPP);
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

START_TEST(psi_trigger_on_twin)
{
	char path[PATH_MAX + 32];
	int fd;

	ck_assert_int_eq(be_open_hybrid(""), 0);
	fd = be->psi_trigger_open(priv, MR_PSI_FULL, 150000, 2000000);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_ne(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/memory.pressure", twin);
	ck_assert_str_eq(read_text(path), "full 150000 2000000\n");
	ck_assert_int_eq(be->close(priv), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cgroup1-fake");
	TCase *tc;
	SRunner *sr;
	int failed;

	tc = tcase_create("read");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, probe);
	tcase_add_test(tc, read_limits_and_memstat);
	tcase_add_test(tc, read_limits_unlimited);
	tcase_add_test(tc, read_limits_binding_group);
	tcase_add_test(tc, read_error_injected);
	tcase_add_test(tc, open_missing_group);
	tcase_add_test(tc, vanish_between_reads);
	suite_add_tcase(s, tc);

	tc = tcase_create("reclaim");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, reclaim_lowers_then_restores);
	tcase_add_test(tc, reclaim_restores_unlimited);
	tcase_add_test(tc, reclaim_step_is_half_the_cache);
	tcase_add_test(tc, reclaim_step_counts_only_clean_unmapped_cache);
	tcase_add_test(tc, reclaim_restore_retried_on_eintr);
	tcase_add_test(tc, reclaim_nothing_reclaimable);
	tcase_add_test(tc, reclaim_run_reads_memstat_once);
	tcase_add_test(tc, reclaim_call_is_one_run);
	tcase_add_test(tc, reclaim_carries_overreclaim);
	tcase_add_test(tc, reclaim_run_steps_capped_by_half_cache);
	tcase_add_test(tc, reclaim_killed_mid_run_restored);
	tcase_add_test(tc, reclaim_ebusy_is_partial_progress);
	tcase_add_test(tc, reclaim_failed_restore_keeps_journal);
	tcase_add_test(tc, reclaim_failed_restore_retried_next_step);
	tcase_add_test(tc, reclaim_failed_restore_retried_without_cache);
	tcase_add_test(tc, reclaim_leaves_admin_change);
	tcase_add_test(tc, vanish_while_lowered);
	tcase_add_test(tc, lock_held_elsewhere_is_ebusy);
	tcase_add_test(tc, pause_setting);
	tcase_add_test(tc, killed_while_lowered);
	tcase_add_test(tc, read_limits_during_step);
	tcase_add_test(tc, read_limits_busy_during_long_step);
	tcase_add_test(tc, one_keeper_per_group);
	tcase_add_test(tc, fork_during_read_leaves_no_lock);
	tcase_add_test(tc, fork_during_step_leaves_no_lock);
	tcase_add_test(tc, spawn_during_read_leaves_no_lock);
	tcase_add_test(tc, spawn_during_step_leaves_no_lock);
	tcase_add_test(tc, busy_names_the_holder);
	suite_add_tcase(s, tc);

	tc = tcase_create("journal");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, recovery_restores_lowered_limit);
	tcase_add_test(tc, recovery_restores_unlimited);
	tcase_add_test(tc, recovery_leaves_admin_value);
	tcase_add_test(tc, journal_corrupt_refused);
	tcase_add_test(tc, journal_bad_number_refused);
	tcase_add_test(tc, journal_trailing_garbage_refused);
	tcase_add_test(tc, journal_other_file_refused);
	tcase_add_test(tc, journal_other_cgroup_refused);
	tcase_add_test(tc, journal_version_refused);
	tcase_add_test(tc, journal_symlink_refused);
	tcase_add_test(tc, two_spellings_share_the_lock);
	tcase_add_test(tc, state_dir_created_private);
	tcase_add_test(tc, state_dir_symlink_refused);
	tcase_add_test(tc, state_dir_foreign_refused);
	tcase_add_test(tc, state_dir_not_a_directory);
	suite_add_tcase(s, tc);

	tc = tcase_create("threshold");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, thresholds);
	tcase_add_test(tc, threshold_signal_of_removal);
	tcase_add_test(tc, threshold_write_error);
	suite_add_tcase(s, tc);

	tc = tcase_create("events-limits");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, read_events_failcnt_and_oom_kill);
	tcase_add_test(tc, read_events_without_oom_kill_line);
	tcase_add_test(tc, read_events_errors);
	tcase_add_test(tc, parse_oom_kill);
	tcase_add_test(tc, read_limits_peak_and_swap);
	tcase_add_test(tc, read_limits_without_swap_accounting);
	tcase_add_test(tc, read_limits_swap_free);
	tcase_add_test(tc, read_limits_swap_free_memsw);
	tcase_add_test(tc, worker_margin_swaps_anon);
	tcase_add_test(tc, worker_margin_memsw_bounds_swap);
	tcase_add_test(tc, worker_margin_memsw_room_swaps);
	tcase_add_test(tc, worker_margin_anon_without_swap);
	tcase_add_test(tc, worker_margin_anon_swappiness_0);
	tcase_add_test(tc, open_needs_peak_and_oom_control);
	tcase_add_test(tc, write_limit_max);
	tcase_add_test(tc, write_limit_other_kinds);
	tcase_add_test(tc, write_limit_settles_dead_managers_record);
	tcase_add_test(tc, write_limit_waits_for_steps);
	tcase_add_test(tc, write_limit_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("pressure");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, pressure_needs_hybrid);
	tcase_add_test(tc, pressure_from_twin);
	tcase_add_test(tc, pressure_without_twin);
	tcase_add_test(tc, pressure_v1_group_gone);
	tcase_add_test(tc, pressure_twin_removed);
	tcase_add_test(tc, pressure_disabled_in_kernel);
	tcase_add_test(tc, psi_trigger_on_twin);
	suite_add_tcase(s, tc);

	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
