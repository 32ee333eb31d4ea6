/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The memory cgroup of the calling process, or of another by its pid
 * (see selfgroup.h). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "context.h"
#include "fds.h"
#include "group.h"
#include "log.h"
#include "memreclaim.h"
#include "mountinfo.h"
#include "selfgroup.h"

/* The lines of /proc/PID/cgroup that can hold the memory controller. */
struct cgroup_lines {
	bool has_v1;
	bool has_v2;
	char v1_path[PATH_MAX];  /* the line with the "memory" token */
	char v2_path[PATH_MAX];  /* the "0::" line */
};

static bool has_token(const char *list, size_t list_len, const char *token)
{
	size_t len = strlen(token);
	const char *p = list, *end = list + list_len, *comma;

	while (p <= end) {
		comma = memchr(p, ',', (size_t)(end - p));
		if (!comma)
			comma = end;
		if ((size_t)(comma - p) == len && memcmp(p, token, len) == 0)
			return true;
		p = comma + 1;
	}
	return false;
}

/* One line, without its newline: "ID:CONTROLLERS:PATH", split at the
 * first two colons. Returns 0 or -EIO. */
static int parse_cgroup_line(const char *line, struct cgroup_lines *out)
{
	const char *c1, *c2, *ctl, *path;
	unsigned long id;
	char *end;

	c1 = strchr(line, ':');
	if (!c1 || c1 == line)
		return -EIO;
	c2 = strchr(c1 + 1, ':');
	if (!c2)
		return -EIO;
	errno = 0;
	id = strtoul(line, &end, 10);
	if (end != c1 || errno || line[0] < '0' || line[0] > '9')
		return -EIO;
	ctl = c1 + 1;
	path = c2 + 1;
	if (path[0] != '/')
		return -EIO;
	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	if (id == 0 && c2 == ctl) {
		/* cgroup2: hierarchy 0, no controllers listed. */
		strcpy(out->v2_path, path);
		out->has_v2 = true;
	} else if (has_token(ctl, (size_t)(c2 - ctl), "memory")) {
		strcpy(out->v1_path, path);
		out->has_v1 = true;
	}
	return 0;
}

static int read_cgroup_file(const char *file, struct cgroup_lines *out,
			    unsigned *bad_line)
{
	size_t cap = 0;
	char *line = NULL;
	unsigned n = 0;
	ssize_t len;
	FILE *f;
	int r = 0;

	f = mri_fopen(file);
	if (!f)
		return -errno;
	while ((len = getline(&line, &cap, f)) > 0) {
		n++;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		r = parse_cgroup_line(line, out);
		if (r < 0) {
			*bad_line = n;
			break;
		}
	}
	if (r == 0 && ferror(f))
		r = -EIO;
	mri_fclose(f);
	free(line);
	return r;
}

/* Looks for the mount of one hierarchy whose root reaches `path`. */
struct reach {
	int version;
	const char *path;
	size_t best;                 /* length of the best root, + 1 */
	struct mri_cgroup_mount m;   /* the best mount */
	bool any_mount;              /* a mount of the hierarchy exists */
};

/* The length of `root` if it reaches `path`, else -1. */
static long root_reaches(const char *root, const char *path)
{
	size_t len = strlen(root);

	if (strcmp(root, "/") == 0)
		return 0;
	if (strncmp(root, path, len) == 0 &&
	    (path[len] == '\0' || path[len] == '/'))
		return (long)len;
	return -1;
}

static int reach_one(const struct mri_cgroup_mount *m, void *arg)
{
	struct reach *r = arg;
	long len;

	if (m->version != r->version || (m->version == 1 && !m->has_memory))
		return 0;
	r->any_mount = true;
	len = root_reaches(m->root, r->path);
	/* A tie goes to the later line: the mount on top. */
	if (len >= 0 && (size_t)len + 1 >= r->best) {
		r->best = (size_t)len + 1;
		r->m = *m;
	}
	return 0;
}

/* Joins the mount point and what of `path` lies below the mount's root. */
static int join(const struct reach *r, char *dir)
{
	const char *rest = r->path + (r->best - 1);
	const char *mp = r->m.mount_point;
	int n;

	if (strcmp(rest, "/") == 0)
		rest = "";
	if (strcmp(mp, "/") == 0 && rest[0] == '/')
		mp = "";
	n = snprintf(dir, PATH_MAX, "%s%s", mp, rest);
	if (n < 0 || n >= PATH_MAX)
		return -ENAMETOOLONG;
	if (dir[0] == '\0')
		strcpy(dir, "/");
	return 0;
}

int mri_self_group_find(const char *cgroup_file, const char *mountinfo,
			struct mri_self_group *out, unsigned *bad_line)
{
	struct cgroup_lines *lines;
	struct reach *r;
	int ret, version;

	*bad_line = 0;
	lines = calloc(1, sizeof(*lines));
	r = calloc(1, sizeof(*r));
	if (!lines || !r) {
		ret = -ENOMEM;
		goto out;
	}
	ret = read_cgroup_file(cgroup_file, lines, bad_line);
	if (ret < 0)
		goto out;
	ret = -ENODEV;
	for (version = 1; version <= 2; version++) {
		if (version == 1 ? !lines->has_v1 : !lines->has_v2)
			continue;
		memset(r, 0, sizeof(*r));
		r->version = version;
		r->path = version == 1 ? lines->v1_path : lines->v2_path;
		ret = mri_mount_each(mountinfo, reach_one, r);
		if (ret < 0)
			goto out;
		if (!r->any_mount) {
			/* Memory is not on this hierarchy here: try v2. */
			ret = -ENODEV;
			continue;
		}
		/* "/.." begins a path outside the reader's cgroup namespace
		 * (kernel/cgroup/cgroup.c, cgroup_path_ns()). */
		if (strncmp(r->path, "/..", 3) == 0 &&
		    (r->path[3] == '/' || r->path[3] == '\0')) {
			ret = -EREMOTE;
			goto out;
		}
		if (!r->best) {
			ret = -EREMOTE;
			goto out;
		}
		ret = join(r, out->dir);
		if (ret == 0)
			out->version = version;
		goto out;
	}
out:
	free(lines);
	free(r);
	return ret;
}

/* Finds the group from cgroup_file (/proc/self/cgroup or
 * /proc/PID/cgroup) with the caller's own mountinfo, logs what is wrong,
 * and opens it. who: "this process" or "process PID", for the log;
 * other: cgroup_file is another process's; pidfd: that process's pidfd,
 * or -1. */
static int open_found(mr_ctx_t *ctx, const char *cgroup_file,
		      const char *who, bool other, int pidfd,
		      mr_group_t **ret)
{
	struct mri_self_group *self;
	struct pollfd p;
	unsigned bad_line;
	int r;

	self = malloc(sizeof(*self));
	if (!self)
		return -ENOMEM;
	r = mri_self_group_find(cgroup_file, "/proc/self/mountinfo", self,
				&bad_line);
	if (r == -EIO && bad_line)
		mri_log(&ctx->log, MR_LOG_ERR,
			"%s line %u: not ID:CONTROLLERS:PATH", cgroup_file,
			bad_line);
	else if (r == -EREMOTE)
		mri_log(&ctx->log, MR_LOG_ERR,
			"the memory cgroup of %s is outside this process's "
			"cgroup namespace or below no mount's root", who);
	else if (r == -ENOENT && other)
		r = -ESRCH; /* /proc/PID went away: the process exited */
	/* The process the pidfd names still runs after the read: the file
	 * read was its own, not that of a later process given its pid
	 * (a pidfd polls readable once its process has exited,
	 * kernel/pid.c pidfd_poll()). */
	if (r == 0 && pidfd >= 0) {
		p = (struct pollfd){ .fd = pidfd, .events = POLLIN };
		if (poll(&p, 1, 0) != 0)
			r = -ESRCH;
	}
	if (r == 0)
		r = mr_group_open(ctx, self->dir,
				  self->version == 1 ? "cgroup1" : "cgroup2",
				  ret);
	free(self);
	return r;
}

MR_EXPORT int mr_group_open_self(mr_ctx_t *ctx, mr_group_t **ret)
{
	int r;

	if (!ctx || !ret)
		return -EINVAL;
	r = mri_ctx_check_fork(ctx);
	if (r < 0)
		return r;
	return open_found(ctx, "/proc/self/cgroup", "this process", false, -1,
			  ret);
}

MR_EXPORT int mr_group_open_pid(mr_ctx_t *ctx, pid_t pid, mr_group_t **ret)
{
	char file[64], who[64];
	int r, pidfd;

	if (!ctx || !ret || pid <= 0)
		return -EINVAL;
	r = mri_ctx_check_fork(ctx);
	if (r < 0)
		return r;
	/* A pidfd first, so that the process whose file is read is the one
	 * the pid named now (see open_found()). */
	mri_fd_begin();
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	pidfd = mri_fd_end(pidfd < 0 ? -errno : pidfd);
	/* A thread's id other than its process's names no process:
	 * pidfd_open(2) answers it -EINVAL (-ENOENT on recent kernels),
	 * neither of which is this call's meaning. */
	if (pidfd == -ESRCH || pidfd == -EINVAL || pidfd == -ENOENT)
		return -ESRCH;
	if (pidfd < 0 && pidfd != -ENOSYS)
		return pidfd;
	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	snprintf(who, sizeof(who), "process %d", (int)pid);
	r = open_found(ctx, file, who, true, pidfd, ret);
	if (pidfd >= 0)
		mri_fd_close(pidfd);
	return r;
}
