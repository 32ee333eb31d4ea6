/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Creating, attaching to and removing memory cgroups: through libcgroup on
 * cgroup v1, through lib/cgroupfs/cgtree2.c (no libcgroup) on cgroup2.
 *
 * libcgroup is initialised once per process, on the first call that needs
 * it, after its logger has been pointed at ours (its default logger prints
 * to stdout). Its logger is process-wide, so messages are forwarded to the
 * ctx whose call is running in the logging thread (a thread-local pointer
 * set for the duration of each call); messages outside our calls are
 * dropped.
 *
 * What libcgroup 2.0.2 does that the public contract does not allow, and
 * how this file keeps the contract (measured on Linux 6.18, cgroup v1):
 *  - cgroup_create_cgroup() creates missing parents and takes an existing
 *    directory as success: the parent must exist and the group must not,
 *    checked before the call (another process can still create the same
 *    name between the check and libcgroup's mkdir).
 *  - A limit write that fails leaves the new directory behind: it is
 *    removed again.
 *  - cgroup_delete_cgroup() moves the group's tasks to the root;
 *    cgroup_delete_cgroup_ext(CGFLAG_DELETE_EMPTY_ONLY) does not, but
 *    returns 0 when rmdir() fails: the group is checked empty before and
 *    gone after.
 *  - cgroup_attach_task_pid() moves one thread; cgroup_change_cgroup_path()
 *    moves every thread of the process.
 *
 * With hybrid PSI on (lib/cgroupfs/hybrid.c), each call also handles the group's
 * cgroup2 twin, all or nothing: create checks the twin's place first and
 * removes the new v1 group if the twin cannot be made; attach moves the
 * process into v1, then into the twin, and back to its former v1 group
 * if the twin refuses it; remove removes the twin first and makes it
 * again if the v1 group then cannot go.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libcgroup.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgcreate.h"
#include "cgtree2.h"
#include "context.h"
#include "fds.h"
#include "group.h"
#include "hybrid.h"
#include "log.h"
#include "memreclaim.h"
#include "mountinfo.h"
#include "path.h"

#define MRI_CG_MIN_LIMIT_BYTES 4096ULL

/* The logger of the ctx whose call runs in this thread, or NULL. */
static __thread struct mri_logger *cg_call_logger;

static pthread_once_t cg_once = PTHREAD_ONCE_INIT;
static int cg_init_err;                 /* set once, under cg_once */
static char cg_memory_mount[PATH_MAX];  /* libcgroup's memory mount point */

/* libcgroup's codes and the errno each stands for. */
static const struct {
	int ecg;
	int err;
} cg_errno_table[] = {
	{ ECGROUPNOTCOMPILED, ENOSYS },
	{ ECGROUPNOTMOUNTED, ENODEV },
	{ ECGROUPNOTEXIST, ENOENT },
	{ ECGROUPNOTCREATED, EIO },
	{ ECGROUPSUBSYSNOTMOUNTED, ENODEV },
	{ ECGROUPNOTOWNER, EPERM },
	{ ECGROUPMULTIMOUNTED, EINVAL },
	{ ECGROUPNOTALLOWED, EPERM },
	{ ECGMAXVALUESEXCEEDED, E2BIG },
	{ ECGCONTROLLEREXISTS, EEXIST },
	{ ECGVALUEEXISTS, EEXIST },
	{ ECGINVAL, EINVAL },
	{ ECGCONTROLLERCREATEFAILED, ENOMEM },
	{ ECGFAIL, EIO },
	{ ECGROUPNOTINITIALIZED, ENODEV },
	{ ECGROUPVALUENOTEXIST, ENOENT },
	{ ECGROUPNOTEQUAL, EIO },
	{ ECGCONTROLLERNOTEQUAL, EIO },
	{ ECGROUPPARSEFAIL, EIO },
	{ ECGROUPNORULES, ENOENT },
	{ ECGMOUNTFAIL, EIO },
	{ ECGEOF, ENODATA },
	{ ECGCONFIGPARSEFAIL, EIO },
	{ ECGNAMESPACEPATHS, EINVAL },
	{ ECGNAMESPACECONTROLLER, EINVAL },
	{ ECGMOUNTNAMESPACE, EINVAL },
	{ ECGROUPUNSUPP, EOPNOTSUPP },
	{ ECGCANTSETVALUE, EIO },
	{ ECGNONEMPTY, EBUSY },
};

int mri_cgroup_errno(int ecg)
{
	int err;
	size_t i;

	if (ecg == 0)
		return 0;
	if (ecg == ECGOTHER) {
		err = cgroup_get_last_errno();
		return err > 0 ? -err : -EIO;
	}
	if (ecg > 0 && ecg < ECGROUPNOTCOMPILED)
		return -ecg;
	for (i = 0; i < sizeof(cg_errno_table) / sizeof(cg_errno_table[0]); i++)
		if (cg_errno_table[i].ecg == ecg)
			return -cg_errno_table[i].err;
	return -EIO;
}

__attribute__((format(printf, 3, 0)))
static void cg_log_forward(void *userdata, int level, const char *fmt,
			   va_list ap)
{
	struct mri_logger *lg = cg_call_logger;
	char msg[480];
	size_t n;
	int mr_level;

	if (!lg)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
		msg[--n] = '\0';
	if (n == 0)
		return;
	switch (level) {
	case CGROUP_LOG_ERROR:
		mr_level = MR_LOG_ERR;
		break;
	case CGROUP_LOG_WARNING:
		mr_level = MR_LOG_WARNING;
		break;
	case CGROUP_LOG_INFO:
		mr_level = MR_LOG_INFO;
		break;
	default:
		mr_level = MR_LOG_DEBUG;
		break;
	}
	mri_log(lg, mr_level, "libcgroup: %s", msg);
}

static void cg_init_once(void)
{
	char *mount_point = NULL;
	int r;

	cgroup_set_logger(cg_log_forward, CGROUP_LOG_DEBUG, NULL);
	r = cgroup_init();
	if (r) {
		cg_init_err = mri_cgroup_errno(r);
		mri_log(cg_call_logger, MR_LOG_ERR, "cgroup_init: %s",
			cgroup_strerror(r));
		return;
	}
	r = cgroup_get_subsys_mount_point("memory", &mount_point);
	if (r) {
		cg_init_err = mri_cgroup_errno(r);
		mri_log(cg_call_logger, MR_LOG_ERR,
			"libcgroup finds no memory controller: %s",
			cgroup_strerror(r));
		return;
	}
	if (strlen(mount_point) >= sizeof(cg_memory_mount))
		cg_init_err = -ENAMETOOLONG;
	else
		strcpy(cg_memory_mount, mount_point);
	free(mount_point);
}

/* One call's target: the normalized path and its libcgroup name, and
 * its cgroup2 twin when the ctx has hybrid PSI on (lib/cgroupfs/hybrid.h). */
struct cg_target {
	char path[PATH_MAX];
	const char *name;     /* into path: "/" for the mount's root */
	bool is_root;
	char mount_root[PATH_MAX]; /* the v1 mount's root in its hierarchy */
	bool hybrid;          /* the ctx's option, read once per call */
	char twin[PATH_MAX];
};

/*
 * Starts a call: routes libcgroup's messages to ctx (not in a child after
 * fork(), where the ctx's logger may be held by a thread that no longer
 * exists), checks and resolves path beneath the v1 memory mount, and
 * initialises libcgroup. Every cg_begin() is paired with cg_end().
 */
static int cg_begin(mr_ctx_t *ctx, const char *path, struct cg_target *t)
{
	const struct mri_hybrid_psi *hy;
	struct mri_cgroup_mount mnt;
	size_t mlen;
	int r;

	cg_call_logger = mri_ctx_check_fork(ctx) == 0 ? mri_ctx_logger(ctx)
						      : NULL;
	r = mri_path_normalize(path, t->path, sizeof(t->path));
	if (r < 0)
		return r;
	r = mri_mount_find_memory_v1(MRI_MOUNTINFO, &mnt);
	if (r < 0) {
		mri_log(cg_call_logger, MR_LOG_ERR,
			"no cgroup v1 memory controller mounted: %s",
			mr_strerror(r));
		return r;
	}
	mlen = strcmp(mnt.mount_point, "/") == 0 ? 0 : strlen(mnt.mount_point);
	if (strncmp(t->path, mnt.mount_point, mlen) != 0 ||
	    (t->path[mlen] != '/' && t->path[mlen] != '\0')) {
		mri_log(cg_call_logger, MR_LOG_ERR,
			"%s is not beneath the memory controller at %s",
			t->path, mnt.mount_point);
		return -ENODEV;
	}
	t->is_root = t->path[mlen] == '\0' || strcmp(t->path, "/") == 0;
	t->name = t->is_root ? "/" : t->path + mlen;
	strcpy(t->mount_root, mnt.root);
	/* The hybrid PSI option is cgroup v1's context state. */
	hy = mri_ctx_backend_state(ctx, mri_backend_find("cgroup1"));
	t->hybrid = mri_hybrid_enabled(hy);
	if (t->hybrid) {
		r = mri_hybrid_twin_path(hy, t->path, t->twin,
					 sizeof(t->twin));
		if (r < 0) {
			mri_log(cg_call_logger, MR_LOG_ERR,
				"hybrid PSI: no twin for %s: %s", t->path,
				mr_strerror(r));
			return r;
		}
	}

	pthread_once(&cg_once, cg_init_once);
	if (cg_init_err < 0)
		return cg_init_err;
	if (strcmp(cg_memory_mount, mnt.mount_point) != 0) {
		mri_log(cg_call_logger, MR_LOG_ERR,
			"libcgroup uses the memory mount %s, not %s",
			cg_memory_mount, mnt.mount_point);
		return -ENODEV;
	}
	return 0;
}

static void cg_end(void)
{
	cg_call_logger = NULL;
}

/* A struct cgroup for the memory controller of `name`. */
static struct cgroup *cg_new_memory(const char *name,
				    struct cgroup_controller **ctrl)
{
	struct cgroup *cg;
	struct cgroup_controller *c;

	cg = cgroup_new_cgroup(name);
	if (!cg)
		return NULL;
	c = cgroup_add_controller(cg, "memory");
	if (!c) {
		cgroup_free(&cg);
		return NULL;
	}
	if (ctrl)
		*ctrl = c;
	return cg;
}

/* Removes a directory libcgroup just created; it holds no task. */
static void cg_undo_create(struct cgroup *cg, const char *path)
{
	struct stat st;
	int r;

	if (lstat(path, &st) < 0)
		return;
	r = cgroup_delete_cgroup_ext(cg, CGFLAG_DELETE_EMPTY_ONLY);
	if (r || lstat(path, &st) == 0)
		mri_log(cg_call_logger, MR_LOG_WARNING,
			"could not remove %s after a failed create", path);
}

/* 0 if the parent of t->path is a directory, else -ENOENT or -ENOTDIR. */
static int cg_check_parent(const struct cg_target *t)
{
	char parent[PATH_MAX];
	const char *slash = strrchr(t->path, '/');
	size_t len = slash == t->path ? 1 : (size_t)(slash - t->path);
	struct stat st;

	memcpy(parent, t->path, len);
	parent[len] = '\0';
	if (stat(parent, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* Creating, attaching to and removing groups on a cgroup2 mount that has
 * the memory controller go through lib/cgroupfs/cgtree2.c, without libcgroup.
 * Returns 1 with the normalised path in norm when `path` lies on a cgroup2
 * mount, 0 when it does not (the v1 path then answers), or -errno. */
static int cg2_target(const char *path, char *norm)
{
	struct mri_cgroup_mount m;
	int r;

	r = mri_path_normalize(path, norm, PATH_MAX);
	if (r < 0)
		return r;
	r = mri_mount_find(MRI_MOUNTINFO, norm, &m);
	return r == 0 && m.version == 2;
}

/* The ctx's logger, but not in a child after fork(). */
static struct mri_logger *cg2_logger(mr_ctx_t *ctx)
{
	return mri_ctx_check_fork(ctx) == 0 ? mri_ctx_logger(ctx) : NULL;
}

MR_EXPORT int mr_ctx_set_process_leaf(mr_ctx_t *ctx, const char *name)
{
	int r;

	if (!ctx || (name && (!name[0] || strchr(name, '/') ||
			      strcmp(name, ".") == 0 ||
			      strcmp(name, "..") == 0 ||
			      strlen(name) >= sizeof(ctx->process_leaf))))
		return -EINVAL;
	r = mri_ctx_check_fork(ctx);
	if (r < 0)
		return r;
	pthread_mutex_lock(&ctx->lock);
	strcpy(ctx->process_leaf, name ? name : "");
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

MR_EXPORT int mr_cgroup_create(mr_ctx_t *ctx, const char *path,
			       uint64_t limit_bytes)
{
	struct cgroup_controller *ctrl;
	struct cg_target t;
	struct cgroup *cg;
	struct stat st;
	int r;

	if (!ctx || !path || limit_bytes < MRI_CG_MIN_LIMIT_BYTES)
		return -EINVAL;
	r = cg2_target(path, t.path);
	if (r) {
		char leaf[sizeof(ctx->process_leaf)];

		if (r < 0)
			return r;
		pthread_mutex_lock(&ctx->lock);
		strcpy(leaf, ctx->process_leaf);
		pthread_mutex_unlock(&ctx->lock);
		return mri_cg2_create(cg2_logger(ctx), t.path, limit_bytes,
				      leaf[0] ? leaf : NULL);
	}
	r = cg_begin(ctx, path, &t);
	if (r < 0)
		goto out;
	if (t.is_root || lstat(t.path, &st) == 0) {
		r = -EEXIST;
		goto out;
	}
	if (errno != ENOENT) {
		r = -errno;
		goto out;
	}
	r = cg_check_parent(&t);
	if (r < 0)
		goto out;
	/* The twin's place is checked before anything is made, so the
	 * usual refusals create nothing at all. */
	if (t.hybrid) {
		r = mri_hybrid_twin_check_new(t.twin, cg_call_logger);
		if (r < 0)
			goto out;
	}

	cg = cg_new_memory(t.name, &ctrl);
	if (!cg) {
		r = -ENOMEM;
		goto out;
	}
	if (limit_bytes != MR_UNLIMITED) {
		r = mri_cgroup_errno(cgroup_add_value_uint64(ctrl,
					"memory.limit_in_bytes", limit_bytes));
		if (r < 0)
			goto free;
	}
	/* No owner is set, so the chown walk has nothing to do; its
	 * errors ("fts_read failed" on cgroupfs) are ignored. */
	r = mri_cgroup_errno(cgroup_create_cgroup(cg, 1));
	if (r < 0) {
		mri_log(cg_call_logger, MR_LOG_ERR, "creating %s: %s", t.path,
			mr_strerror(r));
		cg_undo_create(cg, t.path);
	} else if (t.hybrid) {
		/* Both or neither: a v1 group without the twin it was
		 * asked for is removed again. */
		r = mri_hybrid_twin_create(t.twin, cg_call_logger);
		if (r < 0)
			cg_undo_create(cg, t.path);
	}
free:
	cgroup_free(&cg);
out:
	cg_end();
	return r;
}

static const char *const cg_memory_only[] = { "memory", NULL };

/* The libcgroup name of the v1 memory group process pid is in, from
 * /proc/PID/cgroup ("ID:CONTROLLERS:PATH" lines, the path relative to the
 * cgroup namespace's root as the mount's root field is). Returns 0,
 * -ESRCH (no such process), -ENOENT (no memory line, or a group outside
 * the mount's view), or -EIO. */
static int cg_current_memory_name(pid_t pid, const struct cg_target *t,
				  char *name, size_t len)
{
	char file[64], line[PATH_MAX + 64], *ctl, *p, *save;
	size_t rlen = strcmp(t->mount_root, "/") == 0 ? 0 :
						       strlen(t->mount_root);
	int r = -ENOENT;
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	f = mri_fopen(file);
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		ctl = strchr(line, ':');
		p = ctl ? strchr(ctl + 1, ':') : NULL;
		if (!p)
			continue;
		*p++ = '\0';
		p[strcspn(p, "\n")] = '\0';
		for (ctl = strtok_r(ctl + 1, ",", &save); ctl;
		     ctl = strtok_r(NULL, ",", &save))
			if (strcmp(ctl, "memory") == 0)
				break;
		if (!ctl)
			continue;
		if (strncmp(p, t->mount_root, rlen) != 0 ||
		    (p[rlen] != '/' && p[rlen] != '\0'))
			break;
		r = snprintf(name, len, "%s", p[rlen] ? p + rlen : "/") <
				    (int)len ? 0 : -EIO;
		break;
	}
	mri_fclose(f);
	return r;
}

/* The twin of an attach: the process is in the v1 group already. If the
 * twin refuses it, the process goes back to the v1 group it came from,
 * so that a failed call has moved nothing; only if that fails too does
 * it stay in the v1 group without the twin, which is logged. */
static int cg_attach_twin(const struct cg_target *t, pid_t pid,
			  const char *prev)
{
	int r, u;

	r = mri_hybrid_twin_attach(t->twin, pid);
	if (r == 0)
		return 0;
	mri_log(cg_call_logger, MR_LOG_ERR,
		"hybrid PSI: moving pid %d into the twin %s: %s; moving it "
		"back to the memory group %s", (int)pid, t->twin,
		mr_strerror(r), prev);
	u = mri_cgroup_errno(cgroup_change_cgroup_path(prev, pid,
						       cg_memory_only));
	if (u < 0)
		mri_log(cg_call_logger, MR_LOG_ERR,
			"hybrid PSI: pid %d could not be moved back to %s "
			"(%s): it is in %s without its twin", (int)pid, prev,
			mr_strerror(u), t->path);
	return r;
}

MR_EXPORT int mr_cgroup_attach(mr_ctx_t *ctx, const char *path, pid_t pid)
{
	char prev[PATH_MAX];
	struct cg_target t;
	int r;

	if (!ctx || !path || pid <= 0)
		return -EINVAL;
	r = cg2_target(path, t.path);
	if (r)
		return r < 0 ? r : mri_cg2_attach(cg2_logger(ctx), t.path, pid);
	r = cg_begin(ctx, path, &t);
	if (r < 0)
		goto out;
	if (t.hybrid) {
		/* Nothing is moved unless both groups can take it: the
		 * twin must exist, and where the process is must be
		 * known to put it back. */
		r = mri_hybrid_twin_exists(t.twin);
		if (r == 0) {
			mri_log(cg_call_logger, MR_LOG_ERR,
				"hybrid PSI: %s has no twin %s (groups "
				"created with the option off have none)",
				t.path, t.twin);
			r = -ENOENT;
		}
		if (r < 0)
			goto out;
		r = cg_current_memory_name(pid, &t, prev, sizeof(prev));
		if (r < 0) {
			mri_log(cg_call_logger, MR_LOG_ERR,
				"hybrid PSI: the memory group of pid %d: %s",
				(int)pid, mr_strerror(r));
			goto out;
		}
	}
	r = mri_cgroup_errno(cgroup_change_cgroup_path(t.name, pid,
						       cg_memory_only));
	if (r == 0 && t.hybrid)
		r = cg_attach_twin(&t, pid, prev);
out:
	cg_end();
	return r;
}

/* 0 if the group directory holds no task and no child group, -EBUSY if it
 * does, -ENOENT if it is gone, -ENODEV if it is not a cgroup directory. */
static int cg_check_empty(const char *path)
{
	struct dirent *de;
	char buf[16];
	ssize_t n;
	DIR *dir;
	int dfd, fd, r = 0;

	mri_fd_begin();
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dfd = mri_fd_end(dfd < 0 ? -errno : dfd);
	if (dfd < 0)
		return dfd;
	mri_fd_begin();
	fd = openat(dfd, "tasks", O_RDONLY | O_CLOEXEC);
	fd = mri_fd_end(fd < 0 ? -errno : fd);
	if (fd < 0) {
		mri_fd_close(dfd);
		return fd == -ENOENT ? -ENODEV : fd;
	}
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		r = -errno;
	else if (n > 0)
		r = -EBUSY;
	mri_fd_close(fd);
	if (r < 0) {
		mri_fd_close(dfd);
		return r;
	}
	dir = fdopendir(dfd);
	if (!dir) {
		r = -errno;
		mri_fd_close(dfd);
		return r;
	}
	while ((de = readdir(dir))) {
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (de->d_type == DT_DIR ||
		    (de->d_type == DT_UNKNOWN &&
		     fstatat(dirfd(dir), de->d_name, &st,
			     AT_SYMLINK_NOFOLLOW) == 0 &&
		     S_ISDIR(st.st_mode))) {
			r = -EBUSY;
			break;
		}
	}
	mri_closedir(dir);
	return r;
}

MR_EXPORT int mr_cgroup_remove(mr_ctx_t *ctx, const char *path)
{
	bool twin_removed = false;
	struct cg_target t;
	struct cgroup *cg;
	struct stat st;
	int r;

	if (!ctx || !path)
		return -EINVAL;
	r = cg2_target(path, t.path);
	if (r)
		return r < 0 ? r : mri_cg2_remove(cg2_logger(ctx), t.path);
	r = cg_begin(ctx, path, &t);
	if (r < 0)
		goto out;
	if (t.is_root) {
		r = -EBUSY;
		goto out;
	}
	r = cg_check_empty(t.path);
	if (r < 0)
		goto out;
	/* The twin first: cgroup2's rmdir refuses a populated group
	 * atomically, and a twin removed before a v1 removal that then
	 * fails is made again (empty, as it was). */
	if (t.hybrid) {
		r = mri_hybrid_twin_remove(t.twin, cg_call_logger);
		if (r < 0)
			goto out;
		twin_removed = r == 1;
	}
	cg = cg_new_memory(t.name, NULL);
	if (!cg) {
		r = -ENOMEM;
		goto restore_twin;
	}
	r = mri_cgroup_errno(cgroup_delete_cgroup_ext(cg,
						      CGFLAG_DELETE_EMPTY_ONLY));
	cgroup_free(&cg);
	if (r == 0 && lstat(t.path, &st) == 0) {
		/* A task or a child group arrived after the check. */
		mri_log(cg_call_logger, MR_LOG_WARNING,
			"%s is still there after removal", t.path);
		r = -EBUSY;
	}
restore_twin:
	if (r < 0 && twin_removed &&
	    mri_hybrid_twin_create(t.twin, cg_call_logger) < 0)
		mri_log(cg_call_logger, MR_LOG_ERR,
			"hybrid PSI: %s stays without its twin %s", t.path,
			t.twin);
out:
	cg_end();
	return r;
}
