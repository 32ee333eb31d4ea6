/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * selfmanage — a small database-like program that manages the memory
 * cgroup it runs in: how a server embeds libmemreclaim.
 *
 *   selfmanage --file PATH [--file-size SIZE] [--pool SIZE] [--margin SIZE]
 *              [--duration SECONDS] [--seed N]
 *
 * It keeps a buffer pool (anonymous memory, one mapping of --pool bytes
 * used in 4 KiB frames with CLOCK replacement) over a data file (created
 * with --file-size bytes if it does not exist) and answers lookups of
 * random pages of the file, as a database answers reads from its buffer
 * pool. At start it opens its own group (mr_group_open_self()) and prints
 * what it found: the backend, the group's path, the limit that binds it,
 * which group sets it and the headroom under it, its usage, and which
 * controls the library may write (learnt on their first real write: a
 * one-page reclaim and the PSI trigger are made before; the list is
 * printed again at the end). Then:
 *
 *  - the library's margin worker keeps usage --margin below the binding
 *    limit, by reclaiming the page cache the file reads leave behind, so
 *    lookups rarely meet the limit;
 *  - when the library reports memory pressure, the pool gives back a
 *    quarter of the frames it holds (MADV_DONTNEED), and grows back by
 *    an eighth after 5 s without pressure. Pressure, checked every 100 ms, is a PSI
 *    trigger on the group that fired (some 100 ms in a 2 s window), where
 *    the backend has one (cgroup2; v1 with per-group PSI on a hybrid
 *    host), or what page-cache reclaim cannot remove (usage minus the
 *    file LRUs of memory.stat: mostly the pool) leaving less than two
 *    margins below the limit: the worker can then no longer keep the
 *    margin with cache alone, and the next step would be the kernel's OOM
 *    killer, which stalls need not precede.
 *
 * It prints one line a second (lookups, hit ratio, pool size, usage,
 * pressure events) and a summary at the end (--duration, or SIGINT or
 * SIGTERM). Exit status: 0, 1 when the library or a system call fails, 2
 * on a bad option.
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "memreclaim.h"
#include "policyopt.h"

#define PROG "selfmanage"
#define PAGE 4096u
#define NO_FRAME UINT32_MAX
#define CHECK_NS 100000000ULL      /* pressure check and report tick */
#define REGROW_NS 5000000000ULL    /* quiet time before the pool grows */
#define PSI_STALL_NS 100000000ULL  /* some 100 ms ... */
#define PSI_WINDOW_NS 2000000000ULL /* ... in 2 s (unprivileged: 2 s steps) */

struct options {
	const char *file;
	uint64_t file_size;
	uint64_t pool_bytes;
	uint64_t margin_bytes;
	uint64_t duration_s;
	uint64_t seed;
};

/* The buffer pool: frames of one mapping, CLOCK over the first `cap`. */
struct pool {
	char *mem;
	uint32_t frames;        /* mapped */
	uint32_t cap;           /* usable now */
	uint32_t used;          /* frames [0, used) have been read into */
	uint32_t hand;
	uint32_t *frame_page;   /* page in a frame, or NO_FRAME */
	uint8_t *ref;           /* CLOCK reference bits */
	uint32_t *page_frame;   /* frame of a page, or NO_FRAME */
	uint64_t pages;         /* of the file */
	int fd;
	uint64_t hits, misses;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: the lookups' keys. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " --file PATH [OPTION]...\n"
		"A buffer pool over a file that manages the memory cgroup it runs in.\n"
		"\n"
		"  --file PATH         the data file (created if missing)\n"
		"  --file-size SIZE    its size when created (default 256M)\n"
		"  --pool SIZE         the buffer pool's largest size (default 128M)\n"
		"  --margin SIZE       the margin the library keeps below the limit (default 16M; 0: none)\n"
		"  --duration SECONDS  run this long (default 10; 0: until SIGINT or SIGTERM)\n"
		"  --seed N            the lookups' random seed (default 1)\n"
		"  --help              print this help and exit\n"
		"SIZE: bytes with an optional K, M or G suffix (powers of 1024).\n");
}

/* --file-size, --pool or --margin: SIZE as memreclaimd spells it. */
static int parse_size(int c, const char *arg, struct options *o)
{
	struct size_opt v;
	int r;

	r = policyopt_parse_size(PROG, c == 's' ? "--file-size" :
				 c == 'p' ? "--pool" : "--margin", arg, false,
				 &v);
	if (r == 0)
		*(c == 's' ? &o->file_size : c == 'p' ? &o->pool_bytes :
		  &o->margin_bytes) = v.bytes;
	return r;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "file-size", required_argument, NULL, 's' },
		{ "pool", required_argument, NULL, 'p' },
		{ "margin", required_argument, NULL, 'm' },
		{ "duration", required_argument, NULL, 'd' },
		{ "seed", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c, r = 0;

	*o = (struct options){ .file_size = 256ULL << 20,
			       .pool_bytes = 128ULL << 20,
			       .margin_bytes = 16ULL << 20,
			       .duration_s = 10, .seed = 1 };
	while (r == 0 &&
	       (c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			o->file = optarg;
			break;
		case 's': case 'p': case 'm':
			r = parse_size(c, optarg, o);
			break;
		case 'd': case 'r':
			errno = 0;
			*(c == 'd' ? &o->duration_s : &o->seed) =
				strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-') {
				fprintf(stderr, PROG ": --%s '%s': expected a "
					"number\n", c == 'd' ? "duration" :
					"seed", optarg);
				r = -EINVAL;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (r == 0 && optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n",
			argv[optind]);
		r = -EINVAL;
	}
	if (r == 0 && !o->file) {
		fprintf(stderr, PROG ": --file is required\n");
		r = -EINVAL;
	}
	if (r == 0 && (o->file_size < PAGE || o->pool_bytes < PAGE ||
		       o->pool_bytes / PAGE >= NO_FRAME ||
		       o->file_size / PAGE >= NO_FRAME)) {
		fprintf(stderr, PROG ": --file-size and --pool: at least 4K, "
			"fewer than 2^32 pages\n");
		r = -EINVAL;
	}
	return r;
}

/* Opens the data file, writing it first if it does not exist. */
static int open_file(const struct options *o, uint64_t *size)
{
	static char buf[1 << 16];
	struct stat st;
	uint64_t done;
	ssize_t n;
	int fd;

	fd = open(o->file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		fd = open(o->file, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		for (done = 0; done < o->file_size; done += (uint64_t)n) {
			memset(buf, (int)(done >> 16), sizeof(buf));
			n = write(fd, buf, sizeof(buf));
			if (n <= 0) {
				close(fd);
				return n < 0 ? -errno : -EIO;
			}
		}
		if (fsync(fd) < 0) {
			close(fd);
			return -errno;
		}
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)PAGE) {
		close(fd);
		return -EINVAL;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

static int pool_init(struct pool *p, int fd, uint64_t file_size,
		     uint64_t pool_bytes)
{
	uint64_t i;

	p->fd = fd;
	p->pages = file_size / PAGE;
	p->frames = (uint32_t)(pool_bytes / PAGE);
	p->cap = p->frames;
	p->mem = mmap(NULL, (size_t)p->frames * PAGE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->mem == MAP_FAILED) {
		p->mem = NULL;
		return -errno;
	}
	p->frame_page = malloc(p->frames * sizeof(*p->frame_page));
	p->ref = calloc(p->frames, 1);
	p->page_frame = malloc(p->pages * sizeof(*p->page_frame));
	if (!p->frame_page || !p->ref || !p->page_frame)
		return -ENOMEM;
	for (i = 0; i < p->frames; i++)
		p->frame_page[i] = NO_FRAME;
	for (i = 0; i < p->pages; i++)
		p->page_frame[i] = NO_FRAME;
	return 0;
}

/* Undoes pool_init(), also after it failed part way; the pool must have
 * been zeroed before pool_init(). */
static void pool_fini(struct pool *p)
{
	if (p->mem)
		munmap(p->mem, (size_t)p->frames * PAGE);
	free(p->frame_page);
	free(p->ref);
	free(p->page_frame);
}

/* Frees frames [from, to) and gives their memory back. */
static void pool_drop(struct pool *p, uint32_t from, uint32_t to)
{
	uint32_t f;

	for (f = from; f < to; f++) {
		if (p->frame_page[f] != NO_FRAME)
			p->page_frame[p->frame_page[f]] = NO_FRAME;
		p->frame_page[f] = NO_FRAME;
		p->ref[f] = 0;
	}
	madvise(p->mem + (size_t)from * PAGE, (size_t)(to - from) * PAGE,
		MADV_DONTNEED);
}

static void pool_resize(struct pool *p, uint32_t cap)
{
	if (cap < 1)
		cap = 1;
	if (cap > p->frames)
		cap = p->frames;
	if (cap < p->cap)
		pool_drop(p, cap, p->cap);
	p->cap = cap;
	if (p->used > cap)
		p->used = cap;
	if (p->hand >= cap)
		p->hand = 0;
}

/* Answers a lookup of `page`: from the pool, or read into a frame that
 * CLOCK frees. Returns the first byte of the page, or -errno. */
static int pool_lookup(struct pool *p, uint64_t page)
{
	uint32_t f = p->page_frame[page];
	ssize_t n;

	if (f != NO_FRAME) {
		p->ref[f] = 1;
		p->hits++;
		return (unsigned char)p->mem[(size_t)f * PAGE];
	}
	p->misses++;
	for (;;) {
		f = p->hand;
		p->hand = (p->hand + 1) % p->cap;
		if (!p->ref[f])
			break;
		p->ref[f] = 0;
	}
	if (p->frame_page[f] != NO_FRAME)
		p->page_frame[p->frame_page[f]] = NO_FRAME;
	n = pread(p->fd, p->mem + (size_t)f * PAGE, PAGE, (off_t)(page * PAGE));
	if (f >= p->used)
		p->used = f + 1;  /* read into: it holds memory now */
	if (n != (ssize_t)PAGE) {
		p->frame_page[f] = NO_FRAME;
		return n < 0 ? -errno : -EIO;
	}
	p->frame_page[f] = (uint32_t)page;
	p->page_frame[page] = f;
	p->ref[f] = 1;
	return (unsigned char)p->mem[(size_t)f * PAGE];
}

/* Prints what the program found about its group. */
static int print_group(mr_group_t *g, struct mr_limits *l)
{
	char binder[4096];
	const char *path = mr_group_path(g);
	uint32_t up;
	char *slash;
	int r = mr_group_read_limits(g, l);

	if (r < 0) {
		fprintf(stderr, PROG ": reading limits: %s\n", mr_strerror(r));
		return r;
	}
	printf(PROG ": backend %s, group %s\n", mr_group_backend(g), path);
	if (l->limit_bytes == MR_UNLIMITED) {
		printf(PROG ": no limit binds the group%s\n",
		       l->flags & MR_LIMITS_PARTIAL_VIEW ?
		       " as far as this process can see" : "");
	} else if (!(l->present & MR_LIMITS_HAS_BINDING)) {
		printf(PROG ": binding limit %" PRIu64 " bytes, set by a group "
		       "above what this process can see\n", l->limit_bytes);
	} else {
		snprintf(binder, sizeof(binder), "%s", path);
		for (up = 0; up < l->binding_level; up++) {
			slash = strrchr(binder, '/');
			if (slash && slash != binder)
				*slash = '\0';
		}
		printf(PROG ": binding limit %" PRIu64 " bytes, set by %s%s; "
		       "headroom %" PRIu64 " bytes\n", l->limit_bytes, binder,
		       l->binding_level ? "" : " (the group itself)",
		       l->headroom_bytes);
	}
	printf(PROG ": usage %" PRIu64 " bytes\n", l->usage_bytes);
	return 0;
}

struct pressure {
	int psi_fd;          /* a PSI trigger, or -1 */
	uint64_t events;
	uint64_t last_ns;    /* of the last event, or of the last growth */
};

/* Whether the group is under pressure now; see the header comment. */
static bool pressure_check(mr_group_t *g, struct pressure *ps,
			   uint64_t margin)
{
	struct mr_limits l = { .size = sizeof(l) };
	struct mr_memstat m = { .size = sizeof(m) };
	uint64_t file, rest;
	struct pollfd pfd;

	if (ps->psi_fd >= 0) {
		pfd = (struct pollfd){ .fd = ps->psi_fd, .events = POLLPRI };
		/* A wake-up whose stall did not grow by the trigger's (the
		 * first of an unprivileged trigger can be one) is dropped;
		 * a trigger the library cannot judge is taken at its word. */
		if (poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLPRI) &&
		    mr_group_psi_trigger_confirm(g, ps->psi_fd) != 0)
			return true;
	}
	if (mr_group_read_limits(g, &l) < 0 || l.limit_bytes == MR_UNLIMITED ||
	    mr_group_read_memstat(g, &m) < 0)
		return false;
	file = m.inactive_file_bytes + m.active_file_bytes;
	rest = l.usage_bytes > file ? l.usage_bytes - file : 0;
	return rest + 2 * margin > l.limit_bytes;
}

/* What the library learnt about writing each control: on its first real
 * write (mr_group_control_state()). */
static void print_controls(mr_group_t *g, const char *when)
{
	static const char *const names[MR_NCONTROLS] = {
		[MR_CONTROL_LIMIT] = "limit", [MR_CONTROL_HIGH] = "high",
		[MR_CONTROL_RECLAIM] = "reclaim",
		[MR_CONTROL_PSI_TRIGGER] = "psi-trigger",
	};
	int c, st;

	printf(PROG ": controls %s:", when);
	for (c = 0; c < MR_NCONTROLS; c++) {
		st = mr_group_control_state(g, c);
		printf(" %s %s%s", names[c],
		       st == 1 ? "writable" : st == 0 ? "not-written-yet" :
		       st == -EOPNOTSUPP ? "none" : "refused:",
		       st < 0 && st != -EOPNOTSUPP ? mr_strerror(st) : "");
		if (c + 1 < MR_NCONTROLS)
			putchar(',');
	}
	putchar('\n');
}

static int run(const struct options *o, mr_ctx_t *ctx, mr_group_t *g,
	       struct pool *p, int sfd)
{
	struct pressure ps = { .psi_fd = -1 };
	uint64_t start = now_ns(), next_check, next_report, t;
	uint64_t seed = o->seed ? o->seed : 1, lookups = 0, sum = 0;
	struct signalfd_siginfo si;
	struct pollfd pfd;
	int r;

	/* A one-page reclaim: the reclaim control's first real write (it
	 * may find nothing reclaimable and write nothing). */
	mr_group_reclaim(g, PAGE, 0, NULL);
	r = mr_group_psi_trigger_open(g, MR_PSI_SOME, PSI_STALL_NS,
				      PSI_WINDOW_NS);
	if (r >= 0) {
		ps.psi_fd = r;
		printf(PROG ": pressure: PSI trigger some 100 ms / 2 s, and "
		       "what cache reclaim cannot free\n");
	} else {
		printf(PROG ": pressure: no PSI trigger (%s); watching what "
		       "cache reclaim cannot free\n", mr_strerror(r));
	}
	print_controls(g, "at start");
	ps.last_ns = start;
	next_check = start + CHECK_NS;
	next_report = start + 1000000000ULL;
	for (;;) {
		r = pool_lookup(p, next_rand(&seed) % p->pages);
		if (r < 0) {
			fprintf(stderr, PROG ": reading %s: %s\n", o->file,
				strerror(-r));
			break;
		}
		sum += (uint64_t)r;
		if (++lookups % 256)
			continue;
		t = now_ns();
		if (t < next_check)
			continue;
		next_check = t + CHECK_NS;
		pfd = (struct pollfd){ .fd = sfd, .events = POLLIN };
		if (poll(&pfd, 1, 0) > 0 &&
		    read(sfd, &si, sizeof(si)) == sizeof(si))
			break;
		if (o->duration_s && t - start >= o->duration_s * 1000000000ULL)
			break;
		if (pressure_check(g, &ps, o->margin_bytes)) {
			ps.events++;
			ps.last_ns = t;
			/* A quarter of what the pool holds, not of its
			 * cap: a pool still filling holds less than its cap,
			 * and cutting only the cap would free nothing. */
			pool_resize(p, p->used - p->used / 4);
		} else if (t - ps.last_ns >= REGROW_NS && p->cap < p->frames) {
			ps.last_ns = t;
			pool_resize(p, p->cap + p->frames / 8);
		}
		if (t >= next_report) {
			uint64_t usage = 0;

			next_report = t + 1000000000ULL;
			mr_group_read_usage(g, &usage);
			printf(PROG ": %.0f s: %" PRIu64 " lookups, hit ratio "
			       "%.3f, pool %" PRIu64 " bytes, usage %" PRIu64
			       " bytes, pressure events %" PRIu64 "\n",
			       (double)(t - start) / 1e9, lookups,
			       (double)p->hits / (double)(p->hits + p->misses),
			       (uint64_t)p->cap * PAGE, usage, ps.events);
			fflush(stdout);
		}
	}
	if (ps.psi_fd >= 0)
		close(ps.psi_fd);
	print_controls(g, "at the end");
	printf(PROG ": done: %" PRIu64 " lookups (checksum %" PRIu64 "), %"
	       PRIu64 " hits, %" PRIu64 " misses, pool %" PRIu64 " of %"
	       PRIu64 " bytes, %" PRIu64 " pressure events\n", lookups, sum,
	       p->hits, p->misses, (uint64_t)p->cap * PAGE,
	       (uint64_t)p->frames * PAGE, ps.events);
	(void)ctx;
	return r < 0 ? 1 : 0;
}

/* The library's messages (why a group or a state directory was refused,
 * a margin not kept), on stderr. */
static void log_to_stderr(int level, const char *msg, void *userdata)
{
	(void)level;
	(void)userdata;
	fprintf(stderr, PROG ": %s\n", msg);
}

int main(int argc, char **argv)
{
	struct mr_limits l = { .size = sizeof(l) };
	struct pool pool = { 0 };
	struct options o;
	mr_ctx_t *ctx = NULL;
	mr_group_t *g = NULL;
	uint64_t file_size = 0;
	int r, status = 1, fd = -1, sfd;
	sigset_t sigs;

	if (parse_options(argc, argv, &o) < 0)
		return 2;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		perror(PROG ": signalfd");
		return 1;
	}
	r = mr_ctx_new(&ctx);
	if (r == 0)
		r = mr_ctx_set_log(ctx, log_to_stderr, NULL, MR_LOG_NOTICE);
	if (r == 0)
		r = mr_group_open_self(ctx, &g);
	if (r < 0) {
		fprintf(stderr, PROG ": opening own memory cgroup: %s\n",
			mr_strerror(r));
		goto out;
	}
	if (print_group(g, &l) < 0)
		goto out;
	if (o.margin_bytes) {
		r = mr_group_set_margin(g, o.margin_bytes, 0, o.margin_bytes);
		if (r == 0)
			r = mr_ctx_worker_start(ctx);
		if (r < 0) {
			fprintf(stderr, PROG ": margin %" PRIu64 " bytes: %s\n",
				o.margin_bytes, mr_strerror(r));
			goto out;
		}
		printf(PROG ": margin %" PRIu64 " bytes kept by the worker\n",
		       o.margin_bytes);
	}
	fd = open_file(&o, &file_size);
	if (fd < 0) {
		fprintf(stderr, PROG ": %s: %s\n", o.file, strerror(-fd));
		goto out;
	}
	r = pool_init(&pool, fd, file_size, o.pool_bytes);
	if (r < 0) {
		fprintf(stderr, PROG ": buffer pool: %s\n", strerror(-r));
		goto out;
	}
	fflush(stdout);
	status = run(&o, ctx, g, &pool, sfd);
out:
	pool_fini(&pool);
	if (fd >= 0)
		close(fd);
	mr_group_close(g);
	mr_ctx_free(ctx);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, PROG ": writing the output failed\n");
		status = 1;
	}
	return status;
}
