/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The runtime directory's drop-ins (memreclaimd-dropin.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memreclaimd-config.h"
#include "memreclaimd-dropin.h"

#define SUFFIX ".conf"

bool mrd_container_id_ok(const char *id)
{
	size_t i;

	if (id[0] == '.' || id[0] == '\0')
		return false;
	for (i = 0; id[i]; i++)
		if (i >= MRD_CONTAINER_ID_MAX ||
		    !((id[i] >= 'a' && id[i] <= 'z') ||
		      (id[i] >= 'A' && id[i] <= 'Z') ||
		      (id[i] >= '0' && id[i] <= '9') ||
		      strchr("_+-.", id[i])))
			return false;
	return true;
}

bool mrd_dropin_id(const char *name, char *id, size_t len)
{
	size_t n = strlen(name), s = sizeof(SUFFIX) - 1;

	if (n <= s || strcmp(name + n - s, SUFFIX) != 0 || n - s >= len)
		return false;
	memcpy(id, name, n - s);
	id[n - s] = '\0';
	return mrd_container_id_ok(id);
}

/* The directory fd names, checked (memreclaimd-dropin.h): 0 or -errno. */
static int check_dir(const char *prog, const char *dir, int fd)
{
	struct stat st;
	int r;

	if (fstat(fd, &st) < 0) {
		r = -errno;
		fprintf(stderr, "%s: %s: %s\n", prog, dir, strerror(-r));
		return r;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s: %s: not a directory\n", prog, dir);
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		fprintf(stderr, "%s: %s: must be owned by uid %u and writable "
			"by no one else (whoever writes it picks the groups "
			"memreclaimd manages)\n", prog, dir,
			(unsigned)geteuid());
		return -EPERM;
	}
	return 0;
}

/* open() of the directory itself, never through a symbolic link: the
 * fd, or -errno. */
static int open_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd >= 0)
		return fd;
	/* O_NOFOLLOW on a symbolic link: ELOOP, or ENOTDIR with
	 * O_DIRECTORY (open(2)); told apart for the message. */
	if (errno == ENOTDIR && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
		errno = ELOOP;
	return -errno;
}

int mrd_runtime_dir_open(const char *prog, const char *dir, bool create)
{
	char parent[PATH_MAX], *slash;
	int fd = open_dir(dir), r;

	if (fd == -ENOENT && create) {
		/* Its parent (/run/memreclaim, which the library's journal
		 * shares) first, one level only. */
		snprintf(parent, sizeof(parent), "%s", dir);
		slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = '\0';
			if (mkdir(parent, 0755) < 0 && errno != EEXIST) {
				r = -errno;
				fprintf(stderr, "%s: %s: %s\n", prog, parent,
					strerror(-r));
				return r;
			}
		}
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			r = -errno;
			fprintf(stderr, "%s: %s: %s\n", prog, dir,
				strerror(-r));
			return r;
		}
		fd = open_dir(dir);
	}
	if (fd == -ELOOP) {
		fprintf(stderr, "%s: %s: a symbolic link, not the runtime "
			"directory\n", prog, dir);
		return fd;
	}
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, dir, strerror(-fd));
		return fd;
	}
	r = check_dir(prog, dir, fd);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

/* How many temporary names a write tries (another hook for the same id
 * may hold one). */
#define TMP_TRIES 100

int mrd_dropin_write(int dirfd, const char *id, const struct mrd_dropin *d)
{
	char tmp[MRD_CONTAINER_ID_MAX + 48];
	char name[MRD_CONTAINER_ID_MAX + sizeof(SUFFIX)];
	ssize_t len, done = 0, n;
	char *text = NULL;
	unsigned i;
	int fd = -1, r = 0;

	if (!mrd_container_id_ok(id))
		return -EINVAL;
	snprintf(name, sizeof(name), "%s" SUFFIX, id);
	len = asprintf(&text, "# memreclaim-oci-hook: container %s\n"
		       "cgroup = %s\npolicy = %s\n", id, d->cgroup, d->policy);
	if (len < 0)
		return -ENOMEM;
	if (len > MRD_DROPIN_MAX_BYTES) {
		free(text);
		return -EFBIG;
	}
	/* A dot file: the daemon skips it (mrd_dropin_id()). */
	for (i = 0; i < TMP_TRIES && fd < 0; i++) {
		snprintf(tmp, sizeof(tmp), ".%s.%ld.%u", id, (long)getpid(), i);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL |
			    O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		r = -errno;
		free(text);
		return r;
	}
	while (done < len) {
		n = write(fd, text + done, (size_t)(len - done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			break;
		}
		done += n;
	}
	free(text);
	if (r == 0 && fchmod(fd, 0644) < 0)
		r = -errno;
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(dirfd, tmp, 0);
	return r;
}

int mrd_dropin_remove(int dirfd, const char *id)
{
	char name[MRD_CONTAINER_ID_MAX + sizeof(SUFFIX)];

	if (!mrd_container_id_ok(id))
		return -EINVAL;
	snprintf(name, sizeof(name), "%s" SUFFIX, id);
	if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

/* Whether path is absolute and in the normal form mr_group_open() gives
 * a group's path (mr_group_path()): no empty, "." or ".." component, no
 * trailing '/'. Another spelling of a kept group's path would name it
 * twice in the daemon's table, which is keyed by path. */
static bool normal_path(const char *path)
{
	const char *c = path, *e;
	size_t len;

	if (path[0] != '/' || !path[1])
		return false;
	while (*c) {
		c++; /* the '/' */
		e = strchrnul(c, '/');
		len = (size_t)(e - c);
		if (len == 0 || (len == 1 && c[0] == '.') ||
		    (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c = e;
	}
	return true;
}

/* One "key = value" line (no newline) into d; seen: the keys so far. */
static int parse_line(char *line, struct mrd_dropin *d, unsigned *seen,
		      const char **why)
{
	char *eq, *key, *val, *end;
	unsigned bit;

	line += strspn(line, " \t");
	if (line[0] == '\0' || line[0] == '#')
		return 0;
	eq = strchr(line, '=');
	if (!eq) {
		*why = "a line that is not key = value";
		return -EINVAL;
	}
	key = line;
	end = eq;
	while (end > key && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*end = '\0';
	val = eq + 1 + strspn(eq + 1, " \t");
	end = val + strlen(val);
	while (end > val && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	*end = '\0';
	if (strcmp(key, "cgroup") == 0) {
		bit = 1;
		if (!normal_path(val) || strlen(val) >= sizeof(d->cgroup)) {
			*why = "cgroup is not an absolute path in normal form "
			       "(no '//', '.', '..' or trailing '/')";
			return -EINVAL;
		}
		strcpy(d->cgroup, val);
	} else if (strcmp(key, "policy") == 0) {
		bit = 2;
		if (!mrd_section_name_ok(val)) {
			*why = "policy is not a [group] NAME";
			return -EINVAL;
		}
		strcpy(d->policy, val);
	} else {
		*why = "a key other than cgroup and policy";
		return -EINVAL;
	}
	if (*seen & bit) {
		*why = "a key given twice";
		return -EINVAL;
	}
	*seen |= bit;
	return 0;
}

int mrd_dropin_read(int dirfd, const char *name, struct mrd_dropin *d,
		    const char **why)
{
	char buf[MRD_DROPIN_MAX_BYTES + 2], *line, *nl, *next;
	unsigned seen = 0;
	struct stat st;
	ssize_t len;
	int fd, r;

	*why = NULL;
	*d = (struct mrd_dropin){ 0 };
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
		    O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		*why = errno == ELOOP ? "a symbolic link" : strerror(errno);
		return r == -ELOOP ? -EINVAL : r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		*why = strerror(errno);
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		*why = "not a regular file";
		return -EINVAL;
	}
	if (st.st_uid != geteuid()) {
		close(fd);
		*why = "owned by another user";
		return -EPERM;
	}
	len = read(fd, buf, sizeof(buf) - 1);
	r = len < 0 ? -errno : 0;
	close(fd);
	if (r < 0) {
		*why = strerror(-r);
		return r;
	}
	if (len > MRD_DROPIN_MAX_BYTES) {
		*why = "larger than 4096 bytes";
		return -EFBIG;
	}
	buf[len] = '\0';
	if (memchr(buf, '\0', (size_t)len)) {
		*why = "a NUL byte";
		return -EINVAL;
	}
	for (line = buf; line; line = next) {
		nl = strchr(line, '\n');
		next = NULL;
		if (nl) {
			*nl = '\0';
			next = nl + 1;
		}
		r = parse_line(line, d, &seen, why);
		if (r < 0)
			return r;
	}
	if (seen != 3) {
		*why = "cgroup or policy missing";
		return -EINVAL;
	}
	return 0;
}
