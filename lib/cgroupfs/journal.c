/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The limit journal; see journal.h for the files and the protocol. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "fds.h"
#include "fileops.h"
#include "journal.h"

#define MAGIC_LINE "memreclaim-journal 2\n"
#define MAGIC_LINE_1 "memreclaim-journal 1\n" /* one value: "lowered" */
/* The record: the magic line, then one "key value" line per field. */
#define RECORD_MAX (PATH_MAX + 256)

int mri_journal_name(const char *group_path, char *out, size_t len)
{
	struct stat st;

	if (stat(group_path, &st) < 0)
		return -errno;
	snprintf(out, len, "%" PRIx64 "-%" PRIx64 ".journal",
		 (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	return 0;
}

/* fd must be a regular file with one link, owned by the effective user. */
static int check_owned_file(struct mri_journal *j, int fd, const char *name)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_nlink != 1) {
		mri_log(j->log, MR_LOG_ERR,
			"journal: %s/%s is not a regular file of ours: refused",
			j->dir, name);
		return -EPERM;
	}
	return 0;
}

/* Opens `name` in the state dir, creating it, never through a symlink. */
static int open_file(struct mri_journal *j, const char *name)
{
	int fd, r;

	mri_fd_begin();
	fd = openat(j->dir_fd, name,
		    O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	fd = mri_fd_end(fd < 0 ? -errno : fd);
	if (fd < 0) {
		r = fd;
		mri_log(j->log, MR_LOG_ERR, "journal: cannot open %s/%s: %s",
			j->dir, name, strerror(-r));
		return r;
	}
	r = check_owned_file(j, fd, name);
	if (r < 0) {
		mri_fd_close(fd);
		return r;
	}
	return fd;
}

static int open_dir(struct mri_journal *j, const char *state_dir)
{
	struct stat st;
	int fd, r;

	if (mkdir(state_dir, 0700) < 0 && errno != EEXIST) {
		r = -errno;
		mri_log(j->log, MR_LOG_ERR,
			"journal: cannot create state directory %s: %s",
			state_dir, strerror(-r));
		return r;
	}
	mri_fd_begin();
	fd = open(state_dir, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	fd = mri_fd_end(fd < 0 ? -errno : fd);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto fail;
	}
	if (S_ISLNK(st.st_mode))
		r = -ELOOP;
	else if (!S_ISDIR(st.st_mode))
		r = -ENOTDIR;
	else if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
		r = -EPERM;
	else
		return fd;
	mri_log(j->log, MR_LOG_ERR,
		"journal: state directory %s is a symlink, not a directory, "
		"not ours or writable by others: refused", state_dir);
fail:
	mri_fd_close(fd);
	return r;
}

/* A cgroup directory (the group's or an ancestor's), through mri_fops
 * like every file under a cgroup mount; closed with mri_close(). */
static int open_dir_fd(struct mri_journal *j, const char *path)
{
	int fd = mri_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);

	if (fd < 0)
		mri_log(j->log, MR_LOG_ERR, "journal: cannot open %s: %s",
			path, strerror(-fd));
	return fd;
}

int mri_journal_check_dir(const struct mri_journal *j, int dirfd)
{
	struct stat st;

	if (fstat(dirfd, &st) < 0)
		return -errno;
	return (uint64_t)st.st_dev == j->dev && (uint64_t)st.st_ino == j->ino ?
	       0 : -ENOENT;
}

/* The group's directory, checked (mri_journal_check_dir()). */
static int open_group_dir(struct mri_journal *j)
{
	int fd, r;

	/* Not logged when gone: the caller's -ENOENT says it. */
	fd = mri_open(j->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (fd == -ENOENT || fd == -ENODEV)
		return -ENOENT;
	if (fd < 0) {
		mri_log(j->log, MR_LOG_ERR, "journal: cannot open %s: %s",
			j->path, strerror(-fd));
		return fd;
	}
	r = mri_journal_check_dir(j, fd);
	if (r < 0) {
		mri_close(fd);
		return r;
	}
	return fd;
}

static void close_reads(struct mri_journal_reads *rd)
{
	while (rd->n > 0)
		mri_close(rd->fds[--rd->n]);
}

/* The group's directory and its ancestors up to root included (the root
 * of what this process sees may be a container's own cgroup, whose limit
 * a manager outside can lower), for a reader's shared locks. */
static int open_reads(struct mri_journal *j, struct mri_journal_reads *rd)
{
	char p[PATH_MAX];
	size_t rlen = strlen(j->root);
	char *slash;
	int fd;

	rd->n = 0;
	while (rlen > 1 && j->root[rlen - 1] == '/')
		rlen--;
	fd = open_group_dir(j);
	if (fd < 0)
		return fd;
	rd->fds[rd->n++] = fd;
	strcpy(p, j->path);
	for (;;) {
		slash = strrchr(p, '/');
		if (strlen(p) <= rlen || !slash || slash == p)
			return 0;
		*slash = '\0';
		if (strlen(p) < rlen)
			return 0;
		if (rd->n == MRI_JOURNAL_MAX_DEPTH) {
			close_reads(rd);
			return -ELOOP;
		}
		fd = open_dir_fd(j, p);
		if (fd < 0) {
			close_reads(rd);
			return fd;
		}
		rd->fds[rd->n++] = fd;
	}
}

static void close_step_fds(struct mri_journal *j)
{
	if (j->fd >= 0)
		mri_fd_close(j->fd);
	/* Unlocked before it is closed (mri_close()): a copy of the fd in
	 * a child that has not closed it yet holds nothing. */
	if (j->step_fd >= 0)
		mri_close(j->step_fd);
	if (j->dir_fd >= 0)
		mri_fd_close(j->dir_fd);
	j->fd = j->step_fd = j->dir_fd = -1;
}

int mri_journal_open(struct mri_journal *j, const char *state_dir,
		     const char *group_path, const char *root,
		     struct mri_logger *log)
{
	struct stat st;
	int fd, r;

	j->log = log;
	j->opened = false;
	j->dir_fd = j->step_fd = j->fd = -1;
	if (state_dir[0] != '/' || group_path[0] != '/' || root[0] != '/' ||
	    strchr(group_path, '\n') || strlen(state_dir) >= PATH_MAX ||
	    strlen(group_path) >= PATH_MAX ||
	    strncmp(group_path, root, strlen(root)) != 0)
		return -EINVAL;
	j->dir = state_dir;
	j->path = group_path;
	j->root = root;

	/* Created and checked now, so that a bad state directory fails the
	 * open; each step checks it again. */
	r = open_dir(j, state_dir);
	if (r < 0)
		return r;
	mri_fd_close(r);
	fd = open_dir_fd(j, group_path);
	if (fd < 0)
		return fd;
	r = fstat(fd, &st) < 0 ? -errno : 0;
	mri_close(fd);
	if (r < 0)
		return r;
	j->dev = (uint64_t)st.st_dev;
	j->ino = (uint64_t)st.st_ino;
	snprintf(j->name, sizeof(j->name), "%" PRIx64 "-%" PRIx64 ".journal",
		 j->dev, j->ino);
	j->opened = true;
	return 0;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* flock(fd, op) with a bounded wait: a non-blocking try, then retries
 * for at most wait_ms. */
static int take_flock(int fd, int op, unsigned int wait_ms)
{
	uint64_t start = now_ms();
	unsigned int wait = 1;
	int r;

	for (;;) {
		r = mri_flock(fd, op | LOCK_NB);
		if (r != -EWOULDBLOCK && r != -EINTR)
			return r;
		if (now_ms() - start >= wait_ms)
			return -EBUSY;
		sleep_ms(wait);
		if (wait < 16)
			wait *= 2;
	}
}

/* One holder of a flock, in words, appended to out at *used. */
static void say_holder(char *out, size_t len, size_t *used, long pid,
		       bool shared, unsigned ours)
{
	char comm[64] = "", path[32];
	const char *mode = shared ? "shared" : "exclusive";
	ssize_t n;
	int fd, w;

	if (*used >= len)
		return;
	if (pid == (long)getpid() && ours)
		w = snprintf(out + *used, len - *used, "%s%s by %s of this "
			     "process (pid %ld)", *used ? "; " : "", mode,
			     shared ? "a reader" : "a step", pid);
	else if (pid == (long)getpid())
		w = snprintf(out + *used, len - *used, "%s%s by a lock "
			     "that pid %ld (this process) took, on no fd of "
			     "the library's: an fd of the program's own, or a "
			     "copy of a closed fd in another process (a child "
			     "of clone() that ran no fork handler, or a process "
			     "the fd was passed to)", *used ? "; " : "", mode,
			     pid);
	else if (pid <= 0)
		w = snprintf(out + *used, len - *used, "%s%s by a process "
			     "outside this pid namespace", *used ? "; " : "",
			     mode);
	else {
		snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
		mri_fd_begin();
		fd = open(path, O_RDONLY | O_CLOEXEC);
		fd = mri_fd_end(fd < 0 ? -errno : fd);
		if (fd >= 0) {
			n = read(fd, comm, sizeof(comm) - 1);
			comm[n > 0 ? n : 0] = '\0';
			comm[strcspn(comm, "\n")] = '\0';
			mri_fd_close(fd);
		}
		w = snprintf(out + *used, len - *used, "%s%s by another "
			     "process, pid %ld%s%s%s", *used ? "; " : "", mode,
			     pid, *comm ? " (" : "", comm, *comm ? ")" : "");
	}
	if (w > 0)
		*used += (size_t)w;
}

/* Who holds flocks on the file of fd, in words, into out: from
 * /proc/locks (fs/locks.c, lock_get_status(): "1: FLOCK  ADVISORY  WRITE
 * 1234 00:20:5678 0 EOF", the device's major and minor in hex, the pid
 * of the process that took the lock; a blocked waiter's line has "->"),
 * and this process's own fds locking it (lib/core/fds.h). */
static void describe_holders(int fd, char *out, size_t len)
{
	unsigned maj, min, ours;
	unsigned long long ino;
	char line[256], type[16], mode[16];
	size_t used = 0;
	struct stat st;
	long pid;
	FILE *f;

	snprintf(out, len, "no holder listed in /proc/locks (released "
		 "since)");
	if (fstat(fd, &st) < 0)
		return;
	ours = mri_fds_locking((uint64_t)st.st_dev, (uint64_t)st.st_ino);
	f = mri_fopen("/proc/locks");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "->") ||
		    sscanf(line, "%*d: %15s %*s %15s %ld %x:%x:%llu", type,
			   mode, &pid, &maj, &min, &ino) != 6 ||
		    strcmp(type, "FLOCK") != 0 ||
		    makedev(maj, min) != st.st_dev || ino != st.st_ino)
			continue;
		say_holder(out, len, &used, pid, strcmp(mode, "READ") == 0,
			   ours);
	}
	mri_fclose(f);
}

int mri_journal_lock(struct mri_journal *j)
{
	char why[512];
	int r;

	/* Kept from the last step of a run (mri_journal_unlock_keep()). */
	if (j->step_fd < 0) {
		r = open_group_dir(j);
		if (r < 0)
			return r;
		j->step_fd = r;
	}
	r = take_flock(j->step_fd, LOCK_EX, MRI_JOURNAL_LOCK_WAIT_MS);
	if (r == -EBUSY) {
		describe_holders(j->step_fd, why, sizeof(why));
		mri_log(j->log, MR_LOG_WARNING, "%s: reclaim lock not had in "
			"%d ms: held %s", j->path, MRI_JOURNAL_LOCK_WAIT_MS,
			why);
	}
	if (r < 0)
		goto fail;
	if (j->dir_fd < 0) {
		r = open_dir(j, j->dir);
		if (r < 0)
			goto fail;
		j->dir_fd = r;
	}
	r = open_file(j, j->name);
	if (r < 0)
		goto fail;
	j->fd = r;
	return 0;
fail:
	/* Closing the directory's fd drops its lock. */
	close_step_fds(j);
	return r;
}

/* Still under the lock: removes the journal file if it holds no record,
 * so a manager that ends without closing its groups (a program under a
 * preloaded allocator hook that just exits) leaves nothing in the state
 * directory. Safe: every reader and writer of the file takes the lock
 * first, and the next step creates the file again. */
static void drop_if_empty(struct mri_journal *j)
{
	struct stat st;

	if (j->fd >= 0 && fstat(j->fd, &st) == 0 && st.st_size == 0)
		unlinkat(j->dir_fd, j->name, 0);
}

void mri_journal_unlock(struct mri_journal *j)
{
	drop_if_empty(j);
	close_step_fds(j);
}

void mri_journal_unlock_keep(struct mri_journal *j)
{
	drop_if_empty(j);
	mri_fd_close(j->fd);
	j->fd = -1;
	mri_flock(j->step_fd, LOCK_UN);
}

void mri_journal_rest(struct mri_journal *j)
{
	if (j->opened)
		close_step_fds(j);
}

static bool valid_file_name(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++) {
		if (!((s[n] >= 'a' && s[n] <= 'z') ||
		      (s[n] >= 'A' && s[n] <= 'Z') ||
		      (s[n] >= '0' && s[n] <= '9') ||
		      s[n] == '.' || s[n] == '_' || s[n] == '-'))
			return false;
	}
	return n > 0 && n < MRI_JOURNAL_FILE_MAX && strcmp(s, ".") != 0 &&
	       strcmp(s, "..") != 0;
}

/* Takes the line "<key> <value>\n" at *p: NUL-terminates it and returns
 * the value, advancing *p; NULL if the line is not there. */
static char *take_line(char **p, const char *key)
{
	size_t klen = strlen(key);
	char *value, *nl;

	if (strncmp(*p, key, klen) != 0 || (*p)[klen] != ' ')
		return NULL;
	value = *p + klen + 1;
	nl = strchr(value, '\n');
	if (!nl || nl == value)
		return NULL;
	*nl = '\0';
	*p = nl + 1;
	return value;
}

static int take_u64(char **p, const char *key, uint64_t *out)
{
	char *v = take_line(p, key);

	return v ? mri_parse_u64(v, out) : -EIO;
}

static int parse_record(const struct mri_journal *j, char *buf,
			struct mri_journal_record *rec, const char **why)
{
	char *p = buf, *v, id[40];
	uint64_t pid;
	bool one;

	*why = "malformed";
	one = strncmp(p, MAGIC_LINE_1, strlen(MAGIC_LINE_1)) == 0;
	if (!one && strncmp(p, MAGIC_LINE, strlen(MAGIC_LINE)) != 0) {
		*why = "bad magic or version";
		return -EIO;
	}
	p += strlen(one ? MAGIC_LINE_1 : MAGIC_LINE);
	v = take_line(&p, "cgroup");
	if (!v)
		return -EIO;
	snprintf(id, sizeof(id), "%" PRIx64 ":%" PRIx64, j->dev, j->ino);
	if (strcmp(v, id) != 0) {
		*why = "the record of another cgroup";
		return -EIO;
	}
	if (!take_line(&p, "path"))
		return -EIO;
	v = take_line(&p, "file");
	if (!v || !valid_file_name(v))
		return -EIO;
	strcpy(rec->file, v);
	if (take_u64(&p, "original", &rec->original) < 0)
		return -EIO;
	if (one) {
		if (take_u64(&p, "lowered", &rec->lowest) < 0)
			return -EIO;
		rec->highest = rec->lowest;
	} else if (take_u64(&p, "lowest", &rec->lowest) < 0 ||
		   take_u64(&p, "highest", &rec->highest) < 0 ||
		   rec->lowest > rec->highest) {
		return -EIO;
	}
	if (take_u64(&p, "pid", &pid) < 0 || pid == 0 || pid > INT_MAX ||
	    *p != '\0')
		return -EIO;
	rec->pid = (pid_t)pid;
	return 0;
}

int mri_journal_read(struct mri_journal *j, struct mri_journal_record *rec)
{
	char buf[RECORD_MAX];
	const char *why;
	size_t off = 0;
	ssize_t n;

	while (off < sizeof(buf) - 1) {
		n = pread(j->fd, buf + off, sizeof(buf) - 1 - off, (off_t)off);
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		off += (size_t)n;
	}
	if (off == 0)
		return 0;
	buf[off] = '\0';
	if (off == sizeof(buf) - 1 || strlen(buf) != off) {
		why = "oversized or binary";
	} else if (parse_record(j, buf, rec, &why) == 0) {
		return 1;
	}
	mri_log(j->log, MR_LOG_ERR,
		"journal: %s/%s for %s is %s: refused, file kept", j->dir,
		j->name, j->path, why);
	return -EIO;
}

int mri_journal_write(struct mri_journal *j,
		      const struct mri_journal_record *rec)
{
	char buf[RECORD_MAX];
	ssize_t n;
	int len;

	if (!valid_file_name(rec->file))
		return -EINVAL;
	len = snprintf(buf, sizeof(buf),
		       MAGIC_LINE "cgroup %" PRIx64 ":%" PRIx64 "\npath %s\n"
		       "file %s\noriginal %" PRIu64 "\nlowest %" PRIu64
		       "\nhighest %" PRIu64 "\npid %ld\n",
		       j->dev, j->ino, j->path, rec->file, rec->original,
		       rec->lowest, rec->highest, (long)rec->pid);
	if (len < 0 || (size_t)len >= sizeof(buf))
		return -EINVAL;
	if (ftruncate(j->fd, 0) < 0)
		return -errno;
	n = pwrite(j->fd, buf, (size_t)len, 0);
	if (n < 0)
		return -errno;
	return n == len ? 0 : -EIO;
}

int mri_journal_clear(struct mri_journal *j)
{
	return ftruncate(j->fd, 0) < 0 ? -errno : 0;
}

int mri_journal_reads_begin(struct mri_journal *j,
			    struct mri_journal_reads *rd)
{
	unsigned int wait = 1;
	char why[512];
	uint64_t start;
	size_t i, k;
	int r;

	r = open_reads(j, rd);
	if (r < 0)
		return r;
	start = now_ms();
	/* All or nothing: a reader never holds an ancestor's lock while it
	 * waits for the group's, which would hold off the ancestor's steps
	 * for as long as the group is busy. */
	for (;;) {
		for (i = 0; i < rd->n; i++) {
			if (mri_flock(rd->fds[i], LOCK_SH | LOCK_NB) < 0)
				break;
		}
		if (i == rd->n)
			return 0;
		k = i;
		while (i-- > 0)
			mri_flock(rd->fds[i], LOCK_UN);
		if (now_ms() - start >= MRI_JOURNAL_READ_WAIT_MS) {
			describe_holders(rd->fds[k], why, sizeof(why));
			mri_log(j->log, MR_LOG_WARNING, "%s: limits not read: "
				"a step kept %s locked for %d ms: held %s",
				j->path, k ? "an ancestor" : "the group",
				MRI_JOURNAL_READ_WAIT_MS, why);
			close_reads(rd);
			return -EBUSY;
		}
		sleep_ms(wait);
		if (wait < 16)
			wait *= 2;
	}
}

void mri_journal_reads_end(struct mri_journal_reads *rd)
{
	/* Each fd is unlocked, then closed (mri_close()): a copy in a child
	 * holds nothing. */
	close_reads(rd);
}

void mri_journal_close(struct mri_journal *j)
{
	if (!j->opened)
		return;
	/* A lock and an unlock: the file goes if it holds no record. */
	if (mri_journal_lock(j) == 0)
		mri_journal_unlock(j);
	j->opened = false;
}

void mri_journal_forget(struct mri_journal *j)
{
	if (!j->opened)
		return;
	j->fd = j->step_fd = j->dir_fd = -1; /* closed by the fork handler */
	j->opened = false;
}

int mri_journal_settle(struct mri_journal *j, const char *file,
		       const char *path,
		       int (*restore)(void *arg,
				      const struct mri_journal_record *rec),
		       void *arg)
{
	struct mri_journal_record rec;
	int r, c;

	r = mri_journal_read(j, &rec);
	if (r <= 0)
		return r;
	if (strcmp(rec.file, file) != 0) {
		mri_log(j->log, MR_LOG_ERR, "%s: journal names %s, not %s, "
			"the file this backend lowers: refused", path,
			rec.file, file);
		return -EIO;
	}
	/* Restore first, log after: the log callback may block. */
	r = restore(arg, &rec);
	if (r < 0 && r != -ENOENT)
		return r;
	c = mri_journal_clear(j);
	mri_log(j->log, MR_LOG_NOTICE, "%s: journal of pid %d: %s had been "
		"lowered from %" PRIu64 " to %" PRIu64 " at most; recovered",
		path, (int)rec.pid, file, rec.original, rec.lowest);
	return r < 0 ? r : c;
}
