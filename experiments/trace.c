/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Trace replay (docs/trace-format.md): a workload written as text — a
 * machine, its memory cgroups, files, anonymous regions, and tasks with
 * their operations in order — parsed and checked whole into an in-memory
 * program, then run on a fresh simulated machine, each task a sim task
 * interpreting its op list, with or without a library policy applied to
 * the trace's groups.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "path.h"
#include "scenario.h"
#include "sim.h"

#define MAX_WORDS 16          /* per line */
#define MAX_DEPTH 16          /* nested repeat and req blocks */
#define MAX_NAME 255          /* files, regions */
#define MAX_TASK_NAME 31      /* as a sim task keeps it */
#define MAX_REQ_NAME 63       /* part of figure names */
#define MAX_REPEAT 1000000000ULL
/* Sizes and times stay below 2^60 so that offset + length never
 * overflows. */
#define MAX_VALUE (1ULL << 60)
#define FOREVER UINT64_MAX
/* The most a task that is not background may expand to, its repeats
 * unrolled: its declared time (start, cpu, sleep, exponential ones by
 * their mean, at) and its operations. */
#define MAX_TASK_NS 10000000000000000ULL  /* 10^16 ns, about 116 days */
#define MAX_TASK_OPS 10000000000ULL       /* 10^10 */
#define ROOT (-1)             /* the root group "/", as a group index */

enum op_kind {
	OP_READ,
	OP_WRITE,
	OP_FSYNC,
	OP_UNLINK,
	OP_DROP,
	OP_ANON,
	OP_FREE,
	OP_CPU,
	OP_SLEEP,
	OP_AT,
	OP_BEGIN,     /* begin NAME, and the start of a req block */
	OP_FINISH,    /* end NAME, and the end of a req block */
	OP_REPEAT,    /* the start of a repeat block */
	OP_LOOP,      /* its end */
};

/* Where a read, write or touch falls in its object. */
enum off_kind {
	OFF_AT,       /* at a given byte offset */
	OFF_NEXT,     /* where the task's last access to the object ended */
	OFF_UNIFORM,  /* a LEN-aligned slot drawn uniformly */
	OFF_NORMAL,   /* a LEN-aligned slot drawn around the middle */
};

struct op {
	uint8_t kind;
	uint8_t off_kind;
	bool thp;             /* OP_ANON */
	bool exp;             /* OP_CPU, OP_SLEEP: exponential, mean `len` */
	uint32_t arg;         /* object or request index; OP_REPEAT: the
				 index of its OP_LOOP; OP_LOOP: of its
				 OP_REPEAT */
	uint64_t off;         /* OFF_AT: bytes; OFF_NORMAL: the standard
				 deviation in bytes */
	uint64_t len;         /* bytes; ns for OP_CPU, OP_SLEEP, OP_AT;
				 the count for OP_REPEAT (FOREVER) */
};

struct tgroup {
	char *path;
	int parent;           /* group index, or ROOT */
	uint64_t knob[SIM_NR_KNOBS]; /* pages */
};

struct tobj {
	char *name;
	bool anon;
	uint64_t bytes;
};

struct ttask {
	char *name;
	int group;            /* group index, or ROOT */
	uint64_t start_ns;
	bool background;
	struct op *ops;
	size_t nops, cap;
};

struct mr_sim_trace {
	uint64_t ram_bytes;
	unsigned cpus;
	uint64_t swap_bytes;
	int swap_kind;
	struct tgroup *groups;
	size_t ngroups, groups_cap;
	struct tobj *objs;
	size_t nobjs, objs_cap;
	char **reqs;          /* request names, in order of appearance */
	size_t nreqs, reqs_cap;
	struct ttask *tasks;
	size_t ntasks, tasks_cap;
};

/* Grows *v (of *cap elements of size sz) to hold n + 1. */
static int grow(void *v, size_t *cap, size_t n, size_t sz)
{
	size_t c = *cap ? 2 * *cap : 8;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*(void **)v, c * sz);
	if (!p)
		return -ENOMEM;
	*(void **)v = p;
	*cap = c;
	return 0;
}

void mr_sim_trace_free(mr_sim_trace_t *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->ngroups; i++)
		free(t->groups[i].path);
	for (i = 0; i < t->nobjs; i++)
		free(t->objs[i].name);
	for (i = 0; i < t->nreqs; i++)
		free(t->reqs[i]);
	for (i = 0; i < t->ntasks; i++) {
		free(t->tasks[i].name);
		free(t->tasks[i].ops);
	}
	free(t->groups);
	free(t->objs);
	free(t->reqs);
	free(t->tasks);
	free(t);
}

/* ================================================================ parser */

struct tok {
	const char *s;
	size_t n;
};

enum stage {
	STAGE_START,
	STAGE_GROUPS,         /* after machine */
	STAGE_OBJECTS,        /* after the first file or region */
	STAGE_TASKS,          /* after the first task */
};

enum block_kind {
	BLK_TASK,
	BLK_REPEAT,
	BLK_REQ,
};

struct block {
	int kind;
	unsigned line;
	size_t op;            /* its opening op (not for BLK_TASK) */
	uint32_t req;         /* BLK_REQ */
	bool forever;
	bool takes_time;      /* holds an op that advances the clock */
	unsigned open_reqs;   /* requests begun in it and not ended */
	/* One pass of the block, nested repeats unrolled (saturating):
	 * its operations and declared time. */
	uint64_t ops, ns;
};

/* The names declared so far of one kind (groups, objects, requests), by
 * hash: each entry's name is the trace's copy. Open addressing, at most
 * half full, so a lookup is O(1) and a trace of N names parses in O(N). */
struct name_index {
	struct name_entry {
		const char *name;     /* NULL: empty */
		size_t len;
		size_t index;
	} *e;
	size_t nslots, n;
};

struct parser {
	struct mr_sim_trace *t;
	struct name_index groups, objs, reqs, tasks;
	unsigned line;
	struct tok w[MAX_WORDS];
	size_t nw;
	char *err;
	size_t errlen;
	int stage;
	/* The task being read: blk[0] is the task, blk[1..depth] the
	 * blocks open in it. */
	struct ttask *task;
	struct block blk[MAX_DEPTH + 1];
	int depth;
	/* Per request name: the line of its open begin (0: not open) and
	 * the depth it was begun at. */
	unsigned *open_line;
	int *open_depth;
	size_t open_cap;
};

static int fail(struct parser *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct parser *ps, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ps->err && ps->errlen) {
		n = snprintf(ps->err, ps->errlen, "line %u: ", ps->line);
		if (n >= 0 && (size_t)n < ps->errlen) {
			va_start(ap, fmt);
			vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return -EINVAL;
}

/* For messages: at most 64 characters of a word. */
#define W(t) (int)((t).n < 64 ? (t).n : 64), (t).s

static bool is(struct tok t, const char *s)
{
	return strlen(s) == t.n && memcmp(t.s, s, t.n) == 0;
}

static char *dup_tok(struct tok t)
{
	return strndup(t.s, t.n);
}

/* FNV-1a. */
static size_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ULL;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return (size_t)h;
}

/* The entry of name, or the empty one where it would go. */
static struct name_entry *index_slot(const struct name_index *x,
				     const char *s, size_t n)
{
	size_t mask = x->nslots - 1, i = hash_bytes(s, n) & mask;

	while (x->e[i].name && (x->e[i].len != n ||
				memcmp(x->e[i].name, s, n) != 0))
		i = (i + 1) & mask;
	return &x->e[i];
}

/* The index of the name t, or -1. */
static long index_find(const struct name_index *x, struct tok t)
{
	const struct name_entry *e;

	if (!x->nslots)
		return -1;
	e = index_slot(x, t.s, t.n);
	return e->name ? (long)e->index : -1;
}

/* Adds name (not in x yet, kept by the trace) with its index. Returns 0
 * or -ENOMEM. */
static int index_add(struct name_index *x, const char *name, size_t index)
{
	struct name_index bigger;
	struct name_entry *e;
	size_t i;

	if (2 * (x->n + 1) > x->nslots) {
		bigger.nslots = x->nslots ? 2 * x->nslots : 64;
		bigger.n = x->n;
		bigger.e = calloc(bigger.nslots, sizeof(*bigger.e));
		if (!bigger.e)
			return -ENOMEM;
		for (i = 0; i < x->nslots; i++) {
			if (x->e[i].name)
				*index_slot(&bigger, x->e[i].name,
					    x->e[i].len) = x->e[i];
		}
		free(x->e);
		*x = bigger;
	}
	e = index_slot(x, name, strlen(name));
	*e = (struct name_entry){ name, strlen(name), index };
	x->n++;
	return 0;
}

/* Decimal with an optional fraction, times a unit: "1.5" * mult. The
 * fraction is rounded down to a whole unit of the result. */
static int decimal(const char *s, size_t n, uint64_t mult, uint64_t *out)
{
	uint64_t whole = 0, frac = 0, scale = 1;
	size_t i = 0;

	if (!n || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		if (whole > (MAX_VALUE - 9) / 10)
			return -ERANGE;
		whole = whole * 10 + (uint64_t)(s[i] - '0');
	}
	if (i < n && s[i] == '.') {
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
			if (scale >= 1000000000ULL)
				return -EINVAL;
			frac = frac * 10 + (uint64_t)(s[i] - '0');
			scale *= 10;
		}
		if (scale == 1)
			return -EINVAL;
	}
	if (i != n)
		return -EINVAL;
	if (whole > MAX_VALUE / mult)
		return -ERANGE;
	*out = whole * mult + (uint64_t)((unsigned __int128)frac * mult /
					 scale);
	return *out >= MAX_VALUE ? -ERANGE : 0;
}

/* A whole number, 1 .. max. */
static bool count(struct tok t, uint64_t max, uint64_t *out)
{
	return !memchr(t.s, '.', t.n) && decimal(t.s, t.n, 1, out) == 0 &&
	       *out >= 1 && *out <= max;
}

/* A size: bytes, or a number with K, M, G or T (powers of 1024). */
static int parse_size(struct parser *ps, struct tok t, const char *what,
		      uint64_t *out)
{
	uint64_t mult = 1;
	size_t n = t.n;
	int r;

	switch (n ? t.s[n - 1] | 0x20 : 0) {
	case 'k':
		mult = 1ULL << 10;
		break;
	case 'm':
		mult = 1ULL << 20;
		break;
	case 'g':
		mult = 1ULL << 30;
		break;
	case 't':
		mult = 1ULL << 40;
		break;
	default:
		break;
	}
	r = decimal(t.s, mult > 1 ? n - 1 : n, mult, out);
	if (r == -ERANGE)
		return fail(ps, "%s '%.*s' is too large", what, W(t));
	if (r < 0)
		return fail(ps, "expected %s (bytes, or a number with K, M, G "
			    "or T), got '%.*s'", what, W(t));
	return 0;
}

/* A time: a number with ns, us, ms or s. */
static int parse_time(struct parser *ps, struct tok t, const char *what,
		      uint64_t *out)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000 },
	};
	size_t i, ul;
	int r;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		ul = strlen(units[i].unit);
		if (t.n <= ul || memcmp(t.s + t.n - ul, units[i].unit, ul) ||
		    t.s[t.n - ul - 1] < '0' || t.s[t.n - ul - 1] > '9')
			continue;
		r = decimal(t.s, t.n - ul, units[i].ns, out);
		if (r == -ERANGE)
			return fail(ps, "%s '%.*s' is too large", what, W(t));
		if (r == 0)
			return 0;
		break;
	}
	return fail(ps, "expected %s (a number with ns, us, ms or s), got "
		    "'%.*s'", what, W(t));
}

/* A name of a task, file or region: printable, no space. */
static int check_name(struct parser *ps, struct tok t, const char *what,
		      size_t max)
{
	size_t i;

	if (t.n > max)
		return fail(ps, "%s name '%.*s' is longer than %zu characters",
			    what, W(t), max);
	for (i = 0; i < t.n; i++) {
		if (t.s[i] <= ' ' || t.s[i] > '~')
			return fail(ps, "%s name '%.*s': only printable "
				    "characters", what, W(t));
	}
	return 0;
}

/* A declared group's index, ROOT for "/", or -2. */
static int find_group(const struct parser *ps, struct tok p)
{
	long i;

	if (is(p, "/"))
		return ROOT;
	i = index_find(&ps->groups, p);
	return i < 0 ? -2 : (int)i;
}

/* A declared object's index, or -1. */
static int find_obj(const struct parser *ps, struct tok n)
{
	return (int)index_find(&ps->objs, n);
}

/* ---------------------------------------------------------------- header */

static int parse_machine(struct parser *ps)
{
	struct mr_sim_trace *t = ps->t;
	bool ram = false, cpus = false, swap = false;
	uint64_t v;
	size_t i;
	int r;

	if (ps->stage != STAGE_START)
		return fail(ps, "a second 'machine' line: one, at the start");
	ps->stage = STAGE_GROUPS;
	t->cpus = 2;
	for (i = 1; i < ps->nw; i++) {
		if (i + 1 >= ps->nw)
			return fail(ps, "'%.*s' without its value",
				    W(ps->w[i]));
		if (is(ps->w[i], "ram") && !ram) {
			ram = true;
			r = parse_size(ps, ps->w[++i], "a RAM size", &v);
			if (r < 0)
				return r;
			if (v < SIM_MIN_RAM_BYTES || v > SIM_MAX_RAM_BYTES)
				return fail(ps, "ram must be 16M .. 8T");
			t->ram_bytes = v;
		} else if (is(ps->w[i], "cpus") && !cpus) {
			cpus = true;
			if (!count(ps->w[++i], SIM_MAX_CPUS, &v))
				return fail(ps, "expected cpus 1 .. %u, got "
					    "'%.*s'", SIM_MAX_CPUS,
					    W(ps->w[i]));
			t->cpus = (unsigned)v;
		} else if (is(ps->w[i], "swap") && !swap) {
			swap = true;
			if (is(ps->w[++i], "none"))
				continue;
			r = parse_size(ps, ps->w[i], "a swap size", &v);
			if (r < 0)
				return r;
			if (i + 1 >= ps->nw || !(is(ps->w[i + 1], "disk") ||
						 is(ps->w[i + 1], "zswap")))
				return fail(ps, "expected 'swap none' or 'swap "
					    "SIZE disk|zswap'");
			t->swap_kind = is(ps->w[++i], "disk") ?
				       SIM_SWAP_DISK : SIM_SWAP_ZSWAP;
			t->swap_bytes = v;
			if (v < SIM_PAGE_SIZE)
				return fail(ps, "swap of less than a page: "
					    "say 'swap none'");
		} else {
			return fail(ps, "expected 'machine ram SIZE [cpus N] "
				    "[swap none|SIZE disk|zswap]', each once; "
				    "got '%.*s'", W(ps->w[i]));
		}
	}
	if (!ram)
		return fail(ps, "expected 'machine ram SIZE [cpus N] "
			    "[swap none|SIZE disk|zswap]': ram is required");
	return 0;
}

static int parse_group(struct parser *ps)
{
	static const char *const knobs[SIM_NR_KNOBS] = {
		[SIM_KNOB_MAX] = "max", [SIM_KNOB_HIGH] = "high",
		[SIM_KNOB_LOW] = "low", [SIM_KNOB_MIN] = "min",
		[SIM_KNOB_SOFT] = "soft",
	};
	struct mr_sim_trace *t = ps->t;
	struct tgroup *g;
	bool seen[SIM_NR_KNOBS] = { false };
	struct tok path, parent;
	uint64_t v;
	size_t i;
	int k, r;

	if (ps->stage != STAGE_GROUPS)
		return fail(ps, "'group' after files, regions or tasks: "
			    "groups come right after 'machine'");
	if (ps->nw < 2)
		return fail(ps, "expected 'group PATH [max SIZE|none] "
			    "[high SIZE|none] [low SIZE] [min SIZE] "
			    "[soft SIZE|none]'");
	path = ps->w[1];
	if (path.n < 2 || !mri_path_is_normal(path.s, path.n))
		return fail(ps, "group '%.*s': expected an absolute path "
			    "like /a/b, without '.', '..', '//' or a "
			    "trailing '/'", W(path));
	if (find_group(ps, path) != -2)
		return fail(ps, "group '%.*s' declared twice", W(path));
	if (t->ngroups + 1 >= SIM_MAX_GROUPS)
		return fail(ps, "more than %d groups", SIM_MAX_GROUPS - 1);
	parent = path;
	while (parent.s[parent.n - 1] != '/')
		parent.n--;
	if (parent.n > 1)
		parent.n--;
	if (find_group(ps, parent) == -2)
		return fail(ps, "group '%.*s': its parent '%.*s' is not "
			    "declared before it", W(path), W(parent));
	r = grow(&t->groups, &t->groups_cap, t->ngroups,
		 sizeof(*t->groups));
	if (r < 0)
		return r;
	g = &t->groups[t->ngroups];
	memset(g, 0, sizeof(*g));
	g->parent = find_group(ps, parent);
	g->knob[SIM_KNOB_MAX] = SIM_UNLIMITED;
	g->knob[SIM_KNOB_HIGH] = SIM_UNLIMITED;
	g->knob[SIM_KNOB_SOFT] = SIM_UNLIMITED;
	for (i = 2; i < ps->nw; i += 2) {
		for (k = 0; k < SIM_NR_KNOBS; k++) {
			if (is(ps->w[i], knobs[k]))
				break;
		}
		if (k == SIM_NR_KNOBS || seen[k])
			return fail(ps, "expected a knob max, high, low, min "
				    "or soft, each once; got '%.*s'",
				    W(ps->w[i]));
		seen[k] = true;
		if (i + 1 >= ps->nw)
			return fail(ps, "knob '%s' without its value",
				    knobs[k]);
		if (is(ps->w[i + 1], "none") &&
		    (k == SIM_KNOB_MAX || k == SIM_KNOB_HIGH ||
		     k == SIM_KNOB_SOFT)) {
			g->knob[k] = SIM_UNLIMITED;
			continue;
		}
		r = parse_size(ps, ps->w[i + 1], "a size", &v);
		if (r < 0)
			return r;
		g->knob[k] = sim_pages(v);
	}
	g->path = dup_tok(path);
	if (!g->path)
		return -ENOMEM;
	if (index_add(&ps->groups, g->path, t->ngroups) < 0) {
		free(g->path);
		return -ENOMEM;
	}
	t->ngroups++;
	return 0;
}

static int parse_object(struct parser *ps, bool anon)
{
	struct mr_sim_trace *t = ps->t;
	const char *what = anon ? "region" : "file";
	struct tobj *o;
	uint64_t v;
	int r;

	if (ps->stage == STAGE_START || ps->stage == STAGE_TASKS)
		return fail(ps, "'%s' %s: files and regions come after the "
			    "groups, before the tasks", what,
			    ps->stage == STAGE_START ? "before 'machine'" :
						       "after a task");
	ps->stage = STAGE_OBJECTS;
	if (ps->nw != 3)
		return fail(ps, "expected '%s NAME SIZE'", what);
	r = check_name(ps, ps->w[1], what, MAX_NAME);
	if (r < 0)
		return r;
	if (find_obj(ps, ps->w[1]) >= 0)
		return fail(ps, "'%.*s' declared twice (files and regions "
			    "share their names)", W(ps->w[1]));
	r = parse_size(ps, ps->w[2], "a size", &v);
	if (r < 0)
		return r;
	if (!v)
		return fail(ps, "%s '%.*s' of size 0", what, W(ps->w[1]));
	/* A page's index in its object is 32 bits in the model. */
	if (v > (1ULL << 32) * SIM_PAGE_SIZE)
		return fail(ps, "%s '%.*s' is larger than 16T", what,
			    W(ps->w[1]));
	if (t->nobjs >= UINT32_MAX)
		return fail(ps, "too many files and regions");
	r = grow(&t->objs, &t->objs_cap, t->nobjs,
		 sizeof(*t->objs));
	if (r < 0)
		return r;
	o = &t->objs[t->nobjs];
	o->anon = anon;
	o->bytes = v;
	o->name = dup_tok(ps->w[1]);
	if (!o->name)
		return -ENOMEM;
	if (index_add(&ps->objs, o->name, t->nobjs) < 0) {
		free(o->name);
		return -ENOMEM;
	}
	t->nobjs++;
	return 0;
}

/* ---------------------------------------------------------------- tasks */

static int parse_task(struct parser *ps)
{
	struct mr_sim_trace *t = ps->t;
	struct ttask *task;
	int g, r;

	if (ps->stage == STAGE_START)
		return fail(ps, "'task' before 'machine'");
	ps->stage = STAGE_TASKS;
	if (ps->nw != 4 && !(ps->nw == 5 && is(ps->w[4], "background")))
		return fail(ps, "expected 'task NAME GROUP START "
			    "[background]'");
	r = check_name(ps, ps->w[1], "task", MAX_TASK_NAME);
	if (r < 0)
		return r;
	if (index_find(&ps->tasks, ps->w[1]) >= 0)
		return fail(ps, "task '%.*s' declared twice", W(ps->w[1]));
	g = find_group(ps, ps->w[2]);
	if (g == -2)
		return fail(ps, "task '%.*s': no group '%.*s' (declare it "
			    "with 'group', or use /)", W(ps->w[1]),
			    W(ps->w[2]));
	r = grow(&t->tasks, &t->tasks_cap, t->ntasks,
		 sizeof(*t->tasks));
	if (r < 0)
		return r;
	task = &t->tasks[t->ntasks];
	memset(task, 0, sizeof(*task));
	r = parse_time(ps, ps->w[3], "a start time", &task->start_ns);
	if (r < 0)
		return r;
	task->group = g;
	task->background = ps->nw == 5;
	if (!task->background && task->start_ns > MAX_TASK_NS)
		return fail(ps, "task '%.*s' starts after 10^16 ns (about 116 "
			    "days), the most a task that is not background "
			    "may run", W(ps->w[1]));
	task->name = dup_tok(ps->w[1]);
	if (!task->name)
		return -ENOMEM;
	if (index_add(&ps->tasks, task->name, t->ntasks) < 0) {
		free(task->name);
		return -ENOMEM;
	}
	t->ntasks++;
	ps->task = task;
	ps->depth = 0;
	ps->blk[0] = (struct block){ .kind = BLK_TASK, .line = ps->line,
				     .ns = task->start_ns };
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* Whether block `to` of a task that is not background has grown past
 * MAX_TASK_OPS or MAX_TASK_NS (a background task is stopped when the
 * others end): the error, naming the block that made it so (blk, NULL:
 * the operation of this line). Every count reaches the task's block
 * through the blocks around it, so checking each as it grows is
 * enough. */
static int check_expanded(struct parser *ps, const struct block *to,
			  const struct block *blk)
{
	char what[64] = "this operation";

	if (ps->task->background ||
	    (to->ops <= MAX_TASK_OPS && to->ns <= MAX_TASK_NS))
		return 0;
	if (blk)
		snprintf(what, sizeof(what), "the %s block of line %u",
			 blk->kind == BLK_REPEAT ? "repeat" : "req",
			 blk->line);
	return fail(ps, "task '%s' would run more than %s, its repeats "
		    "unrolled: %s passes it", ps->task->name,
		    to->ops > MAX_TASK_OPS ? "10^10 operations" :
		    "10^16 ns (about 116 days) of start, cpu, sleep and at "
		    "times", what);
}

static int add_op(struct parser *ps, const struct op *op)
{
	struct ttask *task = ps->task;
	struct block *b;
	int r;

	if (task->nops >= UINT32_MAX)
		return fail(ps, "too many operations in task '%s'",
			    task->name);
	r = grow(&task->ops, &task->cap, task->nops, sizeof(*task->ops));
	if (r < 0)
		return r;
	task->ops[task->nops++] = *op;
	/* An at waits at most its time from wherever the task is. */
	b = &ps->blk[ps->depth];
	b->ops = sat_add(b->ops, 1);
	if (op->kind == OP_CPU || op->kind == OP_SLEEP || op->kind == OP_AT)
		b->ns = sat_add(b->ns, op->len);
	return check_expanded(ps, b, NULL);
}

/* The index of request name n, added if new. */
static int req_index(struct parser *ps, struct tok n, uint32_t *out)
{
	struct mr_sim_trace *t = ps->t;
	size_t i, cap = ps->open_cap;
	long k;
	int r;

	if (n.n > MAX_REQ_NAME)
		return fail(ps, "request name '%.*s' is longer than %d "
			    "characters", W(n), MAX_REQ_NAME);
	for (i = 0; i < n.n; i++) {
		char c = n.s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '.' ||
		      c == '-'))
			return fail(ps, "request name '%.*s': only letters, "
				    "digits, '_', '.' and '-'", W(n));
	}
	k = index_find(&ps->reqs, n);
	if (k >= 0) {
		*out = (uint32_t)k;
		return 0;
	}
	r = grow(&t->reqs, &t->reqs_cap, t->nreqs,
		 sizeof(*t->reqs));
	if (r == 0)
		r = grow(&ps->open_line, &cap, t->nreqs,
			 sizeof(*ps->open_line));
	if (r == 0 && cap != ps->open_cap) {
		int *d = realloc(ps->open_depth, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		ps->open_depth = d;
		ps->open_cap = cap;
	}
	if (r < 0)
		return r;
	t->reqs[t->nreqs] = dup_tok(n);
	if (!t->reqs[t->nreqs])
		return -ENOMEM;
	if (index_add(&ps->reqs, t->reqs[t->nreqs], t->nreqs) < 0) {
		free(t->reqs[t->nreqs]);
		return -ENOMEM;
	}
	ps->open_line[t->nreqs] = 0;
	*out = (uint32_t)t->nreqs++;
	return 0;
}

/* Marks the blocks open as holding an op that takes time. */
static void takes_time(struct parser *ps)
{
	ps->blk[ps->depth].takes_time = true;
}

static int open_block(struct parser *ps, int kind, size_t op, uint32_t req,
		      bool forever)
{
	if (ps->depth == MAX_DEPTH)
		return fail(ps, "blocks nested more than %d deep", MAX_DEPTH);
	ps->blk[++ps->depth] = (struct block){
		.kind = kind, .line = ps->line, .op = op, .req = req,
		.forever = forever,
	};
	return 0;
}

/* begin NAME (or the req block's start). The request belongs to the
 * block it is begun in: a req block's own request is begun just before
 * the block opens, so only the block's end can end it. */
static int begin_req(struct parser *ps, struct tok name, uint32_t *req)
{
	struct op op = { .kind = OP_BEGIN };
	int r = req_index(ps, name, req);

	if (r < 0)
		return r;
	if (ps->open_line[*req])
		return fail(ps, "request '%.*s' is already open (line %u)",
			    W(name), ps->open_line[*req]);
	ps->open_line[*req] = ps->line;
	ps->open_depth[*req] = ps->depth;
	ps->blk[ps->depth].open_reqs++;
	op.arg = *req;
	return add_op(ps, &op);
}

static int finish_req(struct parser *ps, uint32_t req)
{
	struct op op = { .kind = OP_FINISH, .arg = req };

	ps->open_line[req] = 0;
	ps->blk[ps->open_depth[req]].open_reqs--;
	return add_op(ps, &op);
}

/* end NAME: the marker. */
static int end_marker(struct parser *ps, struct tok name)
{
	long i = index_find(&ps->reqs, name);

	if (i < 0 || !ps->open_line[i])
		return fail(ps, "'end %.*s' without 'begin %.*s'", W(name),
			    W(name));
	if (ps->open_depth[i] != ps->depth)
		return fail(ps, "'end %.*s' is not in the block of its "
			    "'begin' (line %u)", W(name), ps->open_line[i]);
	return finish_req(ps, (uint32_t)i);
}

static const char *block_name(const struct parser *ps, int d)
{
	switch (ps->blk[d].kind) {
	case BLK_TASK:
		return "task";
	case BLK_REPEAT:
		return "repeat";
	default:
		return "req";
	}
}

/* end: closes the innermost block. */
static int end_block(struct parser *ps)
{
	struct mr_sim_trace *t = ps->t;
	struct block *b = &ps->blk[ps->depth], *to;
	uint64_t n;
	struct op op = { 0 };
	size_t i;
	int r;

	for (i = 0; b->open_reqs && i < t->nreqs; i++) {
		if (ps->open_line[i] && ps->open_depth[i] == ps->depth)
			return fail(ps, "request '%s' begun at line %u is not "
				    "ended in this %s (line %u)", t->reqs[i],
				    ps->open_line[i], block_name(ps, ps->depth),
				    b->line);
	}
	if (b->kind == BLK_TASK) {
		if (!ps->task->nops)
			return fail(ps, "task '%s' (line %u) has no operation",
				    ps->task->name, b->line);
		ps->task = NULL;
		return 0;
	}
	if (ps->task->nops == b->op + 1)
		return fail(ps, "empty '%s' block (line %u)",
			    block_name(ps, ps->depth), b->line);
	if (b->kind == BLK_REQ) {
		r = finish_req(ps, b->req);
	} else {
		if (b->forever && !b->takes_time)
			return fail(ps, "'repeat forever' (line %u) holds no "
				    "operation that takes time (a read, "
				    "write or anon of a length, a cpu or "
				    "sleep of a time)", b->line);
		op.kind = OP_LOOP;
		op.arg = (uint32_t)b->op;
		r = add_op(ps, &op);
		if (r == 0)
			ps->task->ops[b->op].arg =
				(uint32_t)(ps->task->nops - 1);
	}
	if (r < 0)
		return r;
	ps->depth--;
	if (b->takes_time)
		takes_time(ps);
	/* A forever block is a background task's: not bounded. */
	if (b->forever)
		return 0;
	n = b->kind == BLK_REPEAT ? ps->task->ops[b->op].len : 1;
	to = &ps->blk[ps->depth];
	to->ops = sat_add(to->ops, sat_mul(b->ops, n));
	to->ns = sat_add(to->ns, sat_mul(b->ns, n));
	return check_expanded(ps, to, b);
}

/* OFF LEN of read, write and anon, from word i on; the object is o. */
static int parse_range(struct parser *ps, size_t i, const struct tobj *o,
		       struct op *op, size_t *next)
{
	struct tok w = ps->w[i];
	int r;

	op->off_kind = OFF_AT;
	if (is(w, "next")) {
		op->off_kind = OFF_NEXT;
	} else if (is(w, "uniform")) {
		op->off_kind = OFF_UNIFORM;
	} else if (is(w, "normal")) {
		op->off_kind = OFF_NORMAL;
		if (++i >= ps->nw)
			return fail(ps, "expected 'normal SD' (SD: a size)");
		r = parse_size(ps, ps->w[i], "a standard deviation",
			       &op->off);
		if (r < 0)
			return r;
		if (!op->off || op->off > o->bytes)
			return fail(ps, "normal: the standard deviation must "
				    "be above 0 and at most the size of "
				    "'%s'", o->name);
	} else {
		r = parse_size(ps, w, "an offset (a size, next, uniform or "
			       "normal SD)", &op->off);
		if (r < 0)
			return r;
	}
	if (++i >= ps->nw)
		return fail(ps, "expected a length after the offset");
	r = parse_size(ps, ps->w[i], "a length", &op->len);
	if (r < 0)
		return r;
	if (!op->len)
		return fail(ps, "a length of 0");
	if (op->off_kind == OFF_AT && op->off + op->len > o->bytes)
		return fail(ps, "%.*s past the end of %s '%s' (%llu bytes)",
			    W(ps->w[0]), o->anon ? "region" : "file", o->name,
			    (unsigned long long)o->bytes);
	if (op->len > o->bytes)
		return fail(ps, "a length larger than %s '%s' (%llu bytes)",
			    o->anon ? "region" : "file", o->name,
			    (unsigned long long)o->bytes);
	*next = i + 1;
	return 0;
}

static const char *const ops_usage =
	"read, write, fsync, unlink, drop, anon, free, cpu, sleep, at, "
	"begin, end, req or repeat";

static const struct opdef {
	const char *name;
	int kind;
	const char *usage;
	bool anon;            /* its object is a region */
} opdefs[] = {
	{ "read", OP_READ, "read FILE OFF LEN", false },
	{ "write", OP_WRITE, "write FILE OFF LEN", false },
	{ "fsync", OP_FSYNC, "fsync FILE", false },
	{ "unlink", OP_UNLINK, "unlink FILE", false },
	{ "drop", OP_DROP, "drop FILE", false },
	{ "anon", OP_ANON, "anon REGION OFF LEN [thp]", true },
	{ "free", OP_FREE, "free REGION", true },
	{ "cpu", OP_CPU, "cpu [exp] TIME", false },
	{ "sleep", OP_SLEEP, "sleep [exp] TIME", false },
	{ "at", OP_AT, "at TIME", false },
};

/* One of the operations of opdefs. */
static int parse_plain_op(struct parser *ps, const struct opdef *d)
{
	struct op op = { .kind = (uint8_t)d->kind };
	const struct tobj *o;
	size_t i = 1;
	int k, r;

	if (d->kind == OP_CPU || d->kind == OP_SLEEP || d->kind == OP_AT) {
		if (d->kind != OP_AT && ps->nw == 3 && is(ps->w[1], "exp")) {
			op.exp = true;
			i = 2;
		}
		if (ps->nw != i + 1)
			return fail(ps, "expected '%s'", d->usage);
		r = parse_time(ps, ps->w[i], "a time", &op.len);
		if (r < 0)
			return r;
		if (op.exp && !op.len)
			return fail(ps, "an exponential time of mean 0");
		if (op.len && d->kind != OP_AT)
			takes_time(ps);
		return add_op(ps, &op);
	}
	if (ps->nw < 2)
		return fail(ps, "expected '%s'", d->usage);
	k = find_obj(ps, ps->w[1]);
	if (k < 0)
		return fail(ps, "%s: no %s '%.*s'", d->name,
			    d->anon ? "region" : "file", W(ps->w[1]));
	o = &ps->t->objs[k];
	if (o->anon != d->anon)
		return fail(ps, "%s: '%.*s' is a %s, not a %s", d->name,
			    W(ps->w[1]), o->anon ? "region" : "file",
			    d->anon ? "region" : "file");
	op.arg = (uint32_t)k;
	if (d->kind == OP_READ || d->kind == OP_WRITE || d->kind == OP_ANON) {
		if (ps->nw < 4)
			return fail(ps, "expected '%s' (OFF: a size, next, "
				    "uniform or normal SD)", d->usage);
		r = parse_range(ps, 2, o, &op, &i);
		if (r < 0)
			return r;
		if (d->kind == OP_ANON && i < ps->nw && is(ps->w[i], "thp")) {
			op.thp = true;
			i++;
		}
		takes_time(ps);
	} else {
		i = 2;
	}
	if (i != ps->nw)
		return fail(ps, "expected '%s', got '%.*s' after it", d->usage,
			    W(ps->w[i]));
	return add_op(ps, &op);
}

static int parse_op(struct parser *ps)
{
	struct tok w = ps->w[0];
	struct op op = { 0 };
	uint32_t req = 0;
	uint64_t n;
	size_t i;
	int r;

	for (i = 0; i < sizeof(opdefs) / sizeof(opdefs[0]); i++) {
		if (is(w, opdefs[i].name))
			return parse_plain_op(ps, &opdefs[i]);
	}
	if (is(w, "end")) {
		if (ps->nw == 1)
			return end_block(ps);
		if (ps->nw != 2)
			return fail(ps, "expected 'end' (closes a block) or "
				    "'end NAME' (ends a request)");
		return end_marker(ps, ps->w[1]);
	}
	if (is(w, "begin") || is(w, "req")) {
		if (ps->nw != 2)
			return fail(ps, "expected '%.*s NAME'", W(w));
		r = begin_req(ps, ps->w[1], &req);
		if (r == 0 && is(w, "req"))
			r = open_block(ps, BLK_REQ, ps->task->nops - 1, req,
				       false);
		return r;
	}
	if (is(w, "repeat")) {
		if (ps->nw != 2)
			return fail(ps, "expected 'repeat N' or 'repeat "
				    "forever'");
		if (is(ps->w[1], "forever")) {
			if (!ps->task->background)
				return fail(ps, "'repeat forever' in task '%s', "
					    "which is not background: it "
					    "would never end",
					    ps->task->name);
			n = FOREVER;
		} else if (!count(ps->w[1], MAX_REPEAT, &n)) {
			return fail(ps, "expected 'repeat N' (N: 1 .. %llu) or "
				    "'repeat forever', got '%.*s'",
				    MAX_REPEAT, W(ps->w[1]));
		}
		op.kind = OP_REPEAT;
		op.len = n;
		r = add_op(ps, &op);
		if (r == 0)
			r = open_block(ps, BLK_REPEAT, ps->task->nops - 1, 0,
				       n == FOREVER);
		return r;
	}
	if (is(w, "machine") || is(w, "group") || is(w, "file") ||
	    is(w, "region") || is(w, "task"))
		return fail(ps, "'%.*s' inside task '%s' (line %u): close it "
			    "with 'end' first", W(w), ps->task->name,
			    ps->blk[0].line);
	return fail(ps, "unknown operation '%.*s'; expected %s", W(w),
		    ops_usage);
}

static int parse_statement(struct parser *ps)
{
	struct tok w = ps->w[0];
	size_t i;

	if (ps->task)
		return parse_op(ps);
	if (ps->stage == STAGE_START && !is(w, "machine"))
		return fail(ps, "expected 'machine' first, got '%.*s'", W(w));
	if (is(w, "machine"))
		return parse_machine(ps);
	if (is(w, "group"))
		return parse_group(ps);
	if (is(w, "file") || is(w, "region"))
		return parse_object(ps, is(w, "region"));
	if (is(w, "task"))
		return parse_task(ps);
	if (is(w, "end"))
		return fail(ps, "'end' outside any task");
	for (i = 0; i < sizeof(opdefs) / sizeof(opdefs[0]); i++) {
		if (is(w, opdefs[i].name))
			break;
	}
	if (i < sizeof(opdefs) / sizeof(opdefs[0]) || is(w, "begin") ||
	    is(w, "req") || is(w, "repeat"))
		return fail(ps, "'%.*s' outside a task: operations go between "
			    "'task' and its 'end'", W(w));
	return fail(ps, "unknown statement '%.*s'; expected machine, group, "
		    "file, region or task", W(w));
}

/* Splits line [s, e) into words, a '#' starting a comment. */
static int split(struct parser *ps, const char *s, const char *e)
{
	const char *p;

	ps->nw = 0;
	for (p = s; p < e; p++) {
		if (*p == '#')
			break;
		if (*p == '\0')
			return fail(ps, "a NUL byte");
		if (*p == ' ' || *p == '\t' || *p == '\r')
			continue;
		if (ps->nw == MAX_WORDS)
			return fail(ps, "more than %d words", MAX_WORDS);
		ps->w[ps->nw].s = p;
		while (p < e && *p != ' ' && *p != '\t' && *p != '\r' &&
		       *p != '#' && *p != '\0')
			p++;
		ps->w[ps->nw].n = (size_t)(p - ps->w[ps->nw].s);
		ps->nw++;
		p--;
	}
	return 0;
}

static int parse_end(struct parser *ps)
{
	const struct mr_sim_trace *t = ps->t;
	size_t i;

	if (ps->stage == STAGE_START)
		return fail(ps, "end of trace, but no 'machine' line");
	if (ps->task && ps->depth)
		return fail(ps, "end of trace inside '%s' (line %u) of task "
			    "'%s': expected 'end'", block_name(ps, ps->depth),
			    ps->blk[ps->depth].line, ps->task->name);
	if (ps->task)
		return fail(ps, "end of trace inside task '%s' (line %u): "
			    "expected 'end'", ps->task->name, ps->blk[0].line);
	for (i = 0; i < t->ntasks; i++) {
		if (!t->tasks[i].background)
			return 0;
	}
	return fail(ps, "end of trace, but no task%s",
		    t->ntasks ? " that is not background" : "");
}

int mr_sim_trace_parse(const char *text, size_t len, mr_sim_trace_t **ret,
		       char *errbuf, size_t errlen)
{
	struct parser ps = { .err = errbuf, .errlen = errlen };
	const char *p, *e, *end;
	int r = 0;

	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (!text || !ret) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "no text or no result");
		return -EINVAL;
	}
	end = text + len; /* not before the check: NULL + 0 is undefined */
	ps.t = calloc(1, sizeof(*ps.t));
	if (!ps.t)
		return -ENOMEM;
	for (p = text; r == 0 && p < end; p = e + 1) {
		ps.line++;
		e = memchr(p, '\n', (size_t)(end - p));
		if (!e)
			e = end;
		r = split(&ps, p, e);
		if (r == 0 && ps.nw)
			r = parse_statement(&ps);
	}
	if (r == 0) {
		/* A last line ending with '\n' is done; one without is the
		 * line the end is on. */
		if (!ps.line || end[-1] == '\n')
			ps.line++;
		r = parse_end(&ps);
	}
	free(ps.open_line);
	free(ps.open_depth);
	free(ps.groups.e);
	free(ps.objs.e);
	free(ps.reqs.e);
	free(ps.tasks.e);
	if (r == -ENOMEM && errbuf && errlen)
		snprintf(errbuf, errlen, "line %u: out of memory", ps.line);
	if (r < 0) {
		mr_sim_trace_free(ps.t);
		return r;
	}
	*ret = ps.t;
	return 0;
}

/* ================================================================ runner */

struct latency {
	uint64_t ns;
	int group;            /* the task's */
};

struct samples {
	struct latency *v;
	size_t n, cap;
};

struct trace_run;

struct run_task {
	struct trace_run *run;
	const struct ttask *tt;
	uint64_t *pos;        /* per object: where OFF_NEXT goes, bytes */
	uint64_t *begun;      /* per request: begin time, or UINT64_MAX */
	uint64_t loop[MAX_DEPTH]; /* iterations left of the open repeats */
	uint64_t end_ns;
	uint64_t reclaim_ns;
	bool killed;          /* by the OOM killer */
};

struct trace_run {
	const struct mr_sim_trace *t;
	struct mr_sim *sim;
	struct sim_machine *m;
	struct sim_memcg **g;   /* per group */
	mr_group_t **handle;    /* per group */
	sim_obj *obj;           /* per object */
	struct run_task *tasks;
	struct samples *lat;    /* per request name */
	size_t fg_left, left;   /* foreground tasks, all tasks running */
	bool stopping;          /* background tasks: end at the next op */
	struct sim_waitq stop_wq;
	struct sim_libworker *worker;
	struct sim_report rep;
	int err;
};

/* The groups numbered in preorder, so that every subtree is one range of
 * numbers: group g has pre[g] + 1 (0 is the root), its subtree
 * [pre[g] + 1, pre[g] + 1 + size[g]). Found in two passes over the
 * groups, which are declared parents first. */
struct preorder {
	size_t *pre, *size;
};

static int preorder_make(const struct mr_sim_trace *t, struct preorder *o)
{
	size_t n = t->ngroups, i, root_next = 0, *next;
	int p;

	o->pre = calloc(n + 1, sizeof(*o->pre));
	o->size = calloc(n + 1, sizeof(*o->size));
	next = calloc(n + 1, sizeof(*next));
	if (!o->pre || !o->size || !next) {
		free(next);
		return -ENOMEM;
	}
	for (i = n; i-- > 0;) {
		o->size[i] += 1;
		if (t->groups[i].parent != ROOT)
			o->size[t->groups[i].parent] += o->size[i];
	}
	for (i = 0; i < n; i++) {
		p = t->groups[i].parent;
		if (p == ROOT) {
			o->pre[i] = root_next;
			root_next += o->size[i];
		} else {
			o->pre[i] = next[p];
			next[p] += o->size[i];
		}
		next[i] = o->pre[i] + 1;
	}
	free(next);
	return 0;
}

static void preorder_free(struct preorder *o)
{
	free(o->pre);
	free(o->size);
}

/* A sample's place in preorder: 0 for the root's own tasks. */
static size_t pre_key(const struct preorder *o, int g)
{
	return g == ROOT ? 0 : o->pre[g] + 1;
}

/* The samples of v (n, sorted by pre_key()) whose key is at least key. */
static size_t first_at(const struct preorder *o, const struct latency *v,
		       size_t n, size_t key)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (pre_key(o, v[mid].group) < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Sorts the n samples of v by pre_key(), keeping their order otherwise
 * (a counting sort: O(n + groups)). Returns 0 or -ENOMEM. */
static int sort_preorder(const struct mr_sim_trace *t,
			 const struct preorder *o, struct latency *v,
			 size_t n)
{
	size_t *at = calloc(t->ngroups + 2, sizeof(*at)), i, k, sum = 0;
	struct latency *out = malloc((n ? n : 1) * sizeof(*out));

	if (!at || !out) {
		free(at);
		free(out);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		at[pre_key(o, v[i].group)]++;
	for (k = 0; k <= t->ngroups; k++) {
		i = at[k];
		at[k] = sum;
		sum += i;
	}
	for (i = 0; i < n; i++)
		out[at[pre_key(o, v[i].group)]++] = v[i];
	memcpy(v, out, n * sizeof(*v));
	free(at);
	free(out);
	return 0;
}

static int cmp_latency(const void *a, const void *b)
{
	uint64_t x = ((const struct latency *)a)->ns;
	uint64_t y = ((const struct latency *)b)->ns;

	return x < y ? -1 : x > y;
}

/* Nearest rank of sorted values. */
static double pct_ms(const struct latency *v, size_t n, unsigned pct)
{
	size_t rank = (n * pct + 99) / 100;

	return (double)v[rank ? rank - 1 : 0].ns / 1e6;
}

/* Adds the figure "req_<req>_<what>". */
static int add_req(struct trace_run *run, const char *policy,
		   const char *req, const char *what, double value)
{
	char name[MAX_REQ_NAME + 16];

	snprintf(name, sizeof(name), "req_%s_%s", req, what);
	return sim_report_add(&run->rep, policy, name, value);
}

/* The request figures of group a's subtree (ROOT: the machine), from the
 * samples sorted in preorder (report()); tmp holds any request's
 * samples. */
static int report_requests(struct trace_run *run, const char *policy,
			   int a, const struct preorder *o,
			   struct latency *tmp)
{
	static const struct {
		unsigned pct;
		const char *name;
	} pcts[] = {
		{ 50, "p50_ms" }, { 90, "p90_ms" }, { 95, "p95_ms" },
		{ 98, "p98_ms" }, { 99, "p99_ms" },
	};
	const struct mr_sim_trace *t = run->t;
	const struct samples *s;
	const char *req;
	uint64_t sum;
	size_t i, j, n, from;
	int r = 0;

	for (i = 0; r == 0 && i < t->nreqs; i++) {
		s = &run->lat[i];
		req = t->reqs[i];
		from = a == ROOT ? 0 : first_at(o, s->v, s->n, o->pre[a] + 1);
		n = (a == ROOT ? s->n :
		     first_at(o, s->v, s->n, o->pre[a] + 1 + o->size[a])) -
		    from;
		if (!n)
			continue;
		memcpy(tmp, s->v + from, n * sizeof(*tmp));
		for (j = sum = 0; j < n; j++)
			sum += tmp[j].ns;
		qsort(tmp, n, sizeof(*tmp), cmp_latency);
		r = add_req(run, policy, req, "count", (double)n);
		if (r == 0)
			r = add_req(run, policy, req, "mean_ms",
				    (double)sum / (double)n / 1e6);
		for (j = 0; r == 0 && j < sizeof(pcts) / sizeof(pcts[0]); j++)
			r = add_req(run, policy, req, pcts[j].name,
				    pct_ms(tmp, n, pcts[j].pct));
		if (r == 0)
			r = add_req(run, policy, req, "max_ms",
				    (double)tmp[n - 1].ns / 1e6);
	}
	return r;
}

/* What the figures of one group's subtree (or the machine's) add up: the
 * tasks' of the subtree, the margin keeper's of the group alone (of all
 * groups for the machine) and the group's PSI. */
struct tally {
	uint64_t elapsed_ns, reclaim_ns, oom;
	uint64_t calls, freed_bytes, margin_ns;
	uint64_t some_ns, full_ns;
};

static void tally_tasks(struct tally *to, const struct tally *from)
{
	if (from->elapsed_ns > to->elapsed_ns)
		to->elapsed_ns = from->elapsed_ns;
	to->reclaim_ns += from->reclaim_ns;
	to->oom += from->oom;
}

/* Every group's tally (tl[0 .. ngroups - 1]) and the machine's
 * (tl[ngroups]), in one pass over the tasks and two over the groups. */
static int tally_all(struct trace_run *run, struct tally *tl)
{
	const struct mr_sim_trace *t = run->t;
	struct tally *machine = &tl[t->ngroups];
	struct mr_reclaim_stats st;
	const struct run_task *rt;
	struct tally own;
	size_t i;
	int r;

	for (i = 0; i < t->ntasks; i++) {
		rt = &run->tasks[i];
		own = (struct tally){ .elapsed_ns = rt->end_ns,
				      .reclaim_ns = rt->reclaim_ns,
				      .oom = rt->killed };
		tally_tasks(rt->tt->group == ROOT ? machine :
			    &tl[rt->tt->group], &own);
	}
	for (i = t->ngroups; i-- > 0;)
		tally_tasks(t->groups[i].parent == ROOT ? machine :
			    &tl[t->groups[i].parent], &tl[i]);
	for (i = 0; i < t->ngroups; i++) {
		st = (struct mr_reclaim_stats){ .size = sizeof(st) };
		r = mr_group_read_reclaim_stats(run->handle[i],
						MR_REASON_MARGIN, &st);
		if (r < 0)
			return r;
		tl[i].calls = st.calls;
		tl[i].freed_bytes = st.freed_bytes;
		tl[i].margin_ns = st.elapsed_ns;
		machine->calls += st.calls;
		machine->freed_bytes += st.freed_bytes;
		machine->margin_ns += st.elapsed_ns;
		sim_memcg_psi(run->g[i], &tl[i].some_ns, &tl[i].full_ns);
	}
	sim_memcg_psi(sim_root(run->m), &machine->some_ns, &machine->full_ns);
	return 0;
}

/* The figures of group a's subtree (ROOT: the machine), whose model
 * group is g. */
static int report_policy(struct trace_run *run, const char *policy, int a,
			 struct sim_memcg *g, const struct tally *tl,
			 const struct preorder *o, struct latency *tmp)
{
	const struct {
		const char *name;
		double value;
	} f[] = {
		{ "elapsed_s", (double)tl->elapsed_ns / 1e9 },
		{ "failcnt_count",
		  (double)sim_memcg_counter(g, SIM_FAILCNT) },
		{ "limit_reclaim_s", (double)tl->reclaim_ns / 1e9 },
		{ "margin_calls_count", (double)tl->calls },
		{ "margin_freed_bytes", (double)tl->freed_bytes },
		{ "margin_reclaim_s", (double)tl->margin_ns / 1e9 },
		{ "pgscan_pages", (double)sim_memcg_counter(g, SIM_PGSCAN) },
		{ "pgsteal_pages",
		  (double)sim_memcg_counter(g, SIM_PGSTEAL) },
		{ "pgmajfault_count",
		  (double)sim_memcg_counter(g, SIM_PGMAJFAULT) },
		{ "refault_file_pages",
		  (double)sim_memcg_counter(g, SIM_REFAULT_FILE) },
		{ "psi_some_s", (double)tl->some_ns / 1e9 },
		{ "psi_full_s", (double)tl->full_ns / 1e9 },
		{ "oom_count", (double)tl->oom },
	};
	size_t i;
	int r = 0;

	for (i = 0; r == 0 && i < sizeof(f) / sizeof(f[0]); i++)
		r = sim_report_add(&run->rep, policy, f[i].name, f[i].value);
	if (r == 0)
		r = report_requests(run, policy, a, o, tmp);
	return r;
}

/* Every figure, the machine's then each group's, as they are now. The
 * samples of each request are sorted in preorder of their groups, so a
 * subtree's are one range, found by bisection: the time is O(S) for S
 * samples plus the sorts by latency of each subtree's (each sample once
 * per level above it), never groups times samples. */
static void report(struct trace_run *run)
{
	const struct mr_sim_trace *t = run->t;
	struct preorder o = { NULL, NULL };
	struct latency *tmp;
	struct tally *tl;
	size_t i, most = 1;
	int r;

	for (i = 0; i < t->nreqs; i++) {
		if (run->lat[i].n > most)
			most = run->lat[i].n;
	}
	tmp = malloc(most * sizeof(*tmp));
	tl = calloc(t->ngroups + 1, sizeof(*tl));
	r = tmp && tl ? preorder_make(t, &o) : -ENOMEM;
	for (i = 0; r == 0 && i < t->nreqs; i++)
		r = sort_preorder(t, &o, run->lat[i].v, run->lat[i].n);
	if (r == 0)
		r = tally_all(run, tl);
	if (r == 0)
		r = report_policy(run, "machine", ROOT, sim_root(run->m),
				  &tl[t->ngroups], &o, tmp);
	for (i = 0; r == 0 && i < t->ngroups; i++)
		r = report_policy(run, t->groups[i].path, (int)i, run->g[i],
				  &tl[i], &o, tmp);
	preorder_free(&o);
	free(tl);
	free(tmp);
	if (r < 0)
		run->err = r;
}

/* Where an access falls: pages [*first, *first + *n) of its object. The
 * task's position in the object moves to the access's end. */
static void op_range(struct run_task *rt, const struct op *op,
		     uint64_t *first, uint64_t *n)
{
	const struct tobj *o = &rt->run->t->objs[op->arg];
	struct sim_machine *m = rt->run->m;
	uint64_t off = op->off, slots = o->bytes / op->len;
	double x;

	switch (op->off_kind) {
	case OFF_NEXT:
		off = rt->pos[op->arg];
		if (off + op->len > o->bytes)
			off = 0;
		break;
	case OFF_UNIFORM:
		off = sim_rand_below(m, slots) * op->len;
		break;
	case OFF_NORMAL:
		/* Redrawn until inside: the parser keeps the standard
		 * deviation at most the object's size, so a draw lands
		 * inside at least a third of the time. */
		do {
			x = sim_rand_normal(m, (double)slots / 2,
					    (double)op->off / (double)op->len);
		} while (x < 0 || x >= (double)slots);
		off = (uint64_t)x * op->len;
		break;
	default:
		break;
	}
	rt->pos[op->arg] = off + op->len;
	*first = off / SIM_PAGE_SIZE;
	*n = (off + op->len - 1) / SIM_PAGE_SIZE - *first + 1;
}

static uint64_t duration(struct sim_machine *m, const struct op *op)
{
	return op->exp ? (uint64_t)llround(sim_rand_exp(m, (double)op->len)) :
			 op->len;
}

/* Sleeps ns; a background task wakes early when told to stop. */
static void pause_for(struct run_task *rt, uint64_t ns)
{
	struct trace_run *run = rt->run;

	if (!rt->tt->background)
		sim_sleep(run->m, ns);
	else if (!run->stopping)
		sim_wait(run->m, &run->stop_wq, ns);
}

static void record(struct run_task *rt, uint32_t req)
{
	struct trace_run *run = rt->run;
	struct samples *s = &run->lat[req];

	if (grow(&s->v, &s->cap, s->n, sizeof(*s->v)) < 0) {
		run->err = -ENOMEM;
		return;
	}
	s->v[s->n++] = (struct latency){
		.ns = sim_now(run->m) - rt->begun[req],
		.group = rt->tt->group,
	};
}

/* Interprets the task's ops. Returns 0, or -ENOMEM when the model found
 * the task's group (or the machine) out of memory: the task is killed. */
static int run_ops(struct run_task *rt)
{
	struct trace_run *run = rt->run;
	struct sim_machine *m = run->m;
	const struct ttask *tt = rt->tt;
	uint64_t copy_ns = sim_machine_costs(m)->copy_page_ns, first, n;
	const struct op *op;
	size_t pc = 0;
	int depth = 0, r = 0;

	while (pc < tt->nops && r == 0 && !run->err &&
	       !(tt->background && run->stopping)) {
		op = &tt->ops[pc++];
		switch (op->kind) {
		case OP_READ:
		case OP_WRITE:
		case OP_ANON:
			op_range(rt, op, &first, &n);
			if (op->kind == OP_READ)
				r = sim_file_read(m, run->obj[op->arg], first,
						  n);
			else if (op->kind == OP_WRITE)
				r = sim_file_write(m, run->obj[op->arg], first,
						   n);
			else
				r = sim_anon_touch(m, run->obj[op->arg], first,
						   n, op->thp);
			/* The copy to or from the user's buffer, or the
			 * touch itself. */
			if (r == 0)
				sim_cpu(m, n * copy_ns);
			break;
		case OP_FSYNC:
			sim_file_sync(m, run->obj[op->arg]);
			break;
		case OP_UNLINK:
		case OP_FREE:
			sim_obj_truncate(m, run->obj[op->arg]);
			break;
		case OP_DROP:
			sim_file_drop(m, run->obj[op->arg]);
			break;
		case OP_CPU:
			sim_cpu(m, duration(m, op));
			break;
		case OP_SLEEP:
			pause_for(rt, duration(m, op));
			break;
		case OP_AT:
			if (op->len > sim_now(m))
				pause_for(rt, op->len - sim_now(m));
			break;
		case OP_BEGIN:
			rt->begun[op->arg] = sim_now(m);
			break;
		case OP_FINISH:
			record(rt, op->arg);
			break;
		case OP_REPEAT:
			rt->loop[depth++] = op->len;
			break;
		case OP_LOOP:
			if (rt->loop[depth - 1] != FOREVER &&
			    !--rt->loop[depth - 1])
				depth--;
			else
				pc = op->arg + 1;
			break;
		}
	}
	return r;
}

static void task_main(struct sim_task *st, void *arg)
{
	struct run_task *rt = arg;
	struct trace_run *run = rt->run;

	rt->killed = run_ops(rt) < 0;
	rt->end_ns = sim_now(run->m);
	rt->reclaim_ns = sim_task_stats(st)->direct_reclaim_ns;
	if (!rt->tt->background && !--run->fg_left) {
		run->stopping = true;
		sim_wake_all(run->m, &run->stop_wq);
	}
	if (--run->left)
		return;
	/* The last task: the figures as they are at its end, then the
	 * worker stops so that the machine comes to rest. */
	if (!run->err)
		report(run);
	if (run->worker)
		sim_libworker_stop(run->worker);
}

/* The machine's groups and objects, and the run's own state. */
static int build(struct trace_run *run)
{
	const struct mr_sim_trace *t = run->t;
	struct sim_machine *m = run->m;
	struct run_task *rt;
	size_t i;
	int k, r;

	/* Today's kernel: a huge page charge that does not fit asks reclaim
	 * for the whole 512 pages, whatever the shortfall, and tries once
	 * more after draining the stocks (since the 2014 fix), and cgroup v1 soft limits are served
	 * by the separate soft-limit pass that mm/memcontrol-v1.c still
	 * has. */
	sim_memcg_set_thp_mode(m, SIM_THP_FULL);
	sim_memcg_set_soft_mode(m, SIM_SOFT_OLD);
	run->g = calloc(t->ngroups + 1, sizeof(*run->g));
	run->handle = calloc(t->ngroups + 1, sizeof(*run->handle));
	run->obj = calloc(t->nobjs, sizeof(*run->obj));
	run->tasks = calloc(t->ntasks, sizeof(*run->tasks));
	run->lat = calloc(t->nreqs + 1, sizeof(*run->lat));
	if (!run->g || !run->handle || !run->obj || !run->tasks || !run->lat)
		return -ENOMEM;
	for (i = 0; i < t->ngroups; i++) {
		r = sim_memcg_create(m, t->groups[i].path, &run->g[i]);
		for (k = 0; r == 0 && k < SIM_NR_KNOBS; k++)
			r = sim_memcg_set(run->g[i], k, t->groups[i].knob[k]);
		if (r < 0)
			return r;
	}
	for (i = 0; i < t->nobjs; i++) {
		uint64_t pages = (t->objs[i].bytes + SIM_PAGE_SIZE - 1) /
				 SIM_PAGE_SIZE;

		run->obj[i] = t->objs[i].anon ? sim_anon_new(m, pages) :
						sim_file_new(m, pages);
		if (run->obj[i] == SIM_NOPAGE)
			return -ENOMEM;
	}
	for (i = 0; i < t->ntasks; i++) {
		rt = &run->tasks[i];
		rt->run = run;
		rt->tt = &t->tasks[i];
		rt->pos = calloc(t->nobjs + 1, sizeof(*rt->pos));
		rt->begun = calloc(t->nreqs + 1, sizeof(*rt->begun));
		if (!rt->pos || !rt->begun)
			return -ENOMEM;
		run->fg_left += !rt->tt->background;
	}
	return 0;
}

static int spawn(struct trace_run *run)
{
	const struct mr_sim_trace *t = run->t;
	const struct ttask *tt;
	size_t i;

	for (i = 0; i < t->ntasks; i++) {
		tt = &t->tasks[i];
		if (!sim_task_spawn(run->m, tt->name,
				    tt->group == ROOT ? sim_root(run->m) :
							run->g[tt->group],
				    tt->start_ns, task_main, &run->tasks[i]))
			return -ENOMEM;
		run->left++;
	}
	return 0;
}

static void run_free(struct trace_run *run)
{
	size_t i;

	for (i = 0; run->tasks && i < run->t->ntasks; i++) {
		free(run->tasks[i].pos);
		free(run->tasks[i].begun);
	}
	for (i = 0; run->lat && i < run->t->nreqs; i++)
		free(run->lat[i].v);
	free(run->g);
	free(run->handle);
	free(run->obj);
	free(run->tasks);
	free(run->lat);
	sim_report_free(&run->rep);
}

int mr_sim_trace_run(const mr_sim_trace_t *trace, uint64_t seed,
		     const char *costs, mr_sim_setup_fn setup, void *setup_data,
		     mr_sim_figure_fn fn, void *fn_data)
{
	struct trace_run run = { .t = trace };
	struct mr_sim_config cfg;
	mr_ctx_t *ctx = NULL;
	char why[256];
	size_t i;
	int r;

	if (!trace || !sim_costs_find(costs ? costs : "today"))
		return -EINVAL;
	cfg = (struct mr_sim_config){
		.size = sizeof(cfg),
		.seed = seed,
		.ram_bytes = trace->ram_bytes,
		.cpus = trace->cpus,
		.swap_bytes = trace->swap_bytes,
		.swap_kind = trace->swap_kind,
		.costs = costs,
	};
	r = mr_sim_new(&cfg, &run.sim);
	if (r < 0)
		return r;
	run.m = run.sim->m;
	r = build(&run);
	if (r == 0)
		r = mr_ctx_new(&ctx);
	if (r == 0)
		r = mr_sim_attach(run.sim, ctx);
	for (i = 0; r == 0 && i < trace->ngroups; i++)
		r = mr_group_open(ctx, trace->groups[i].path, "sim",
				  &run.handle[i]);
	if (r == 0 && setup) {
		r = setup(ctx, run.handle, trace->ngroups, setup_data);
		if (r > 0)
			r = 0;
		/* The worker first, so it is in place when the tasks
		 * begin. */
		if (r == 0 && !(run.worker = sim_libworker_start(run.sim, ctx)))
			r = -ENOMEM;
	}
	if (r == 0)
		r = spawn(&run);
	if (r < 0 && run.worker) {
		/* Let the worker task end (it frees itself); the tasks
		 * spawned so far end at their first op. */
		run.err = r;
		sim_libworker_stop(run.worker);
	}
	if (r == 0 || run.worker) {
		sim_run(run.m, SIM_UNLIMITED);
		r = run.err;
	}
	if (r == 0)
		r = sim_check_invariants(run.m, why, sizeof(why));
	for (i = 0; r == 0 && fn && i < run.rep.nfigs; i++)
		fn(run.rep.figs[i].policy, run.rep.figs[i].name,
		   run.rep.figs[i].value, fn_data);
	mr_ctx_free(ctx);
	run_free(&run);
	mr_sim_free(run.sim);
	return r;
}
