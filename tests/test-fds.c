/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's fds across fork() (lib/core/fds.c): nothing is allocated under
 * the fork lock, a fork() from a thread inside a hold or from another
 * fork handler does not hang, and an fd that cannot be tracked is closed
 * by the file-access table that opened it.
 *
 * The program defines malloc, calloc, realloc and free itself, over
 * glibc's: the library's objects and glibc's own calls (fopen(), opendir())
 * reach these, which count the calls made while the calling thread holds
 * the fork lock.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <memreclaim.h>

#include "fds.h"
#include "fileops.h"

/* ------------------------------------------------------------ malloc */

void *__libc_malloc(size_t len);
void *__libc_calloc(size_t n, size_t len);
void *__libc_realloc(void *p, size_t len);
void __libc_free(void *p);

static atomic_uint allocs;       /* every call */
static atomic_uint allocs_held;  /* calls under the fork lock */

static void count(void)
{
	atomic_fetch_add(&allocs, 1);
	if (mri_fork_held_by_me())
		atomic_fetch_add(&allocs_held, 1);
}

void *malloc(size_t len)
{
	count();
	return __libc_malloc(len);
}

void *calloc(size_t n, size_t len)
{
	count();
	return __libc_calloc(n, len);
}

void *realloc(void *p, size_t len)
{
	count();
	return __libc_realloc(p, len);
}

void free(void *p)
{
	if (p)
		count();
	__libc_free(p);
}

static char tmp[64];

static void setup(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/mr-fds-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmp));
	ck_assert_int_eq(setenv("MEMRECLAIM_STATE_DIR", tmp, 1), 0);
}

static void teardown(void)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/file", tmp);
	unlink(p);
	rmdir(tmp);
}

/* A stream and a directory of the library, read and closed, and an fd
 * tracked at a number far above the others (a part of the bitmap not
 * touched before): no allocation while the fork lock is held, though the
 * stream, the directory and the reads do allocate. */
START_TEST(no_allocation_under_the_fork_lock)
{
	struct rlimit rl;
	char p[128], *line = NULL;
	unsigned n = 0, total, held;
	size_t cap = 0;
	struct dirent *e;
	FILE *f;
	DIR *d;
	int fd;

	snprintf(p, sizeof(p), "%s/file", tmp);
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs("one\ntwo\n", f), 0);
	ck_assert_int_eq(fclose(f), 0);
	atomic_store(&allocs, 0);
	atomic_store(&allocs_held, 0);

	f = mri_fopen(p);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(getline(&line, &cap, f), 4);
	ck_assert_str_eq(line, "one\n");
	ck_assert_int_eq(getline(&line, &cap, f), 4);
	ck_assert_str_eq(line, "two\n");
	ck_assert_int_eq(getline(&line, &cap, f), -1);
	ck_assert_int_eq(mri_fclose(f), 0);
	free(line);

	d = mri_opendir(tmp);
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, "file") == 0;
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(mri_closedir(d), 0);

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_max > 16384) {
		rl.rlim_cur = rl.rlim_max;
		ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
		mri_fd_begin();
		fd = fcntl(0, F_DUPFD_CLOEXEC, 16000);
		fd = mri_fd_end(fd < 0 ? -errno : fd);
		ck_assert_int_ge(fd, 16000);
		ck_assert_int_eq(mri_fd_close(fd), 0);
	}

	total = atomic_load(&allocs);
	held = atomic_load(&allocs_held);
	ck_assert_uint_gt(total, 0); /* the hook is live */
	ck_assert_msg(held == 0, "%u of %u allocator calls under the fork "
		      "lock", held, total);
	ck_assert(!mri_fork_held_by_me());
}
END_TEST

/* ------------------------------------------------------------ fork */

/* A file-access table whose open forks once, when asked, while the
 * calling thread holds the fork lock's read side. */
static bool fork_in_open;
static pid_t forked = -1;

static int forking_open(const char *path, int flags, mode_t mode)
{
	if (fork_in_open) {
		fork_in_open = false;
		forked = fork();
	}
	return mri_file_ops_real.open(path, flags, mode);
}


/* fork() and wait for the child, which exits at once: whether it did. */
static bool fork_works(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	return pid > 0 && waitpid(pid, &status, 0) == pid &&
	       WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* A fork() from inside an open (a file-access hook, or a signal handler
 * that interrupted one) cannot have the fork lock's write side: it must
 * not wait for it (the test's timeout would fail it). The child's
 * handler still closes the library's other fds, and in both processes
 * the lock serves the next open, close and fork. */
START_TEST(fork_inside_an_open)
{
	struct mri_file_ops ops = mri_file_ops_real;
	mr_ctx_t *ctx;
	int kept, fd, status;

	ops.open = forking_open;
	/* A context installs the library's fork handler. */
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	kept = mri_open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	ck_assert_int_ge(kept, 0);
	mri_file_ops_set(&ops);
	fork_in_open = true;
	fd = mri_open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	mri_file_ops_set(NULL);
	if (forked == 0) {
		bool ok = fd >= 0 && fcntl(kept, F_GETFD) < 0 &&
			  errno == EBADF && mri_close(fd) == 0 &&
			  !mri_fork_held_by_me() && fork_works();

		_exit(ok ? 0 : 1);
	}
	ck_assert_int_gt(forked, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(waitpid(forked, &status, 0), forked);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert(!mri_fork_held_by_me());
	ck_assert_int_ge(fcntl(kept, F_GETFD), 0);
	ck_assert_int_eq(mri_close(fd), 0);
	ck_assert_int_eq(mri_close(kept), 0);
	ck_assert(fork_works());
	mr_ctx_free(ctx);
}
END_TEST

/* A fork handler registered before the library's runs after its prepare
 * handler, with the fork lock's write side held by the same thread, and
 * calls the library: its open and close neither wait nor release the
 * write side, and the fork after is had as ever. */
static bool open_in_prepare;
static int prepare_opened = -2;

static void early_prepare(void)
{
	int fd;

	if (!open_in_prepare)
		return;
	fd = mri_open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	prepare_opened = fd < 0 ? fd : mri_close(fd);
}

START_TEST(library_call_from_a_fork_handler)
{
	mr_ctx_t *ctx;

	ck_assert_int_eq(pthread_atfork(early_prepare, NULL, NULL), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	open_in_prepare = true;
	ck_assert(fork_works());
	open_in_prepare = false;
	ck_assert_int_eq(prepare_opened, 0);
	ck_assert(fork_works());
	ck_assert(fork_works());
	mr_ctx_free(ctx);
}
END_TEST

/* --------------------------------------------- the table's own close */

static int opens, closes, closed_fd = -1;

static int beyond_open(const char *path, int flags, mode_t mode)
{
	(void)path;
	(void)flags;
	(void)mode;
	opens++;
	return MRI_FDS_MAX; /* a number the library cannot track */
}

static int beyond_openat(int dirfd, const char *path, int flags,
			 mode_t mode)
{
	(void)dirfd;
	return beyond_open(path, flags, mode);
}

static int counting_close(int fd)
{
	closes++;
	closed_fd = fd;
	return 0;
}

static const struct mri_file_ops beyond_ops = {
	.open = beyond_open,
	.openat = beyond_openat,
	.close = counting_close,
};

/* An fd the library cannot track is closed by the table that opened it:
 * a counting table sees every open closed. */
START_TEST(untracked_fd_closed_by_its_table)
{
	mri_file_ops_set(&beyond_ops);
	ck_assert_int_eq(mri_open("x", O_RDONLY, 0), -EMFILE);
	ck_assert_int_eq(mri_openat(AT_FDCWD, "x", O_RDONLY, 0), -EMFILE);
	mri_file_ops_set(NULL);
	ck_assert_int_eq(opens, 2);
	ck_assert_int_eq(closes, 2);
	ck_assert_int_eq(closed_fd, MRI_FDS_MAX);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fds");
	SRunner *sr;
	TCase *tc;
	int failed;

	tc = tcase_create("fds");
	tcase_add_checked_fixture(tc, setup, teardown);
	/* A hang detector, not a timing: the forks must not wait forever. */
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, no_allocation_under_the_fork_lock);
	tcase_add_test(tc, fork_inside_an_open);
	tcase_add_test(tc, library_call_from_a_fork_handler);
	tcase_add_test(tc, untracked_fd_closed_by_its_table);
	suite_add_tcase(s, tc);

	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
