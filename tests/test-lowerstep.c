/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The journaled lowering step (lib/cgroupfs/lowerstep.c) alone, with a control of
 * its own: a value and a usage in regular files of a temporary directory
 * (so that a killed child's writes are seen), a "kernel" whose lowering
 * write reclaims down to the value, errors injected per write and per
 * read, and a real journal and step lock on a directory standing for the
 * group. The restore rule is checked on the paths the backends' fake
 * trees leave to one backend (tests/test-cgroup1-fake covers them for
 * v1's limit; tests/test-cgroup2-fake the step and a crash for v2's
 * memory.high): a failed restore keeps the record, which close answers
 * and the next open restores; a manager killed with the value lowered
 * is restored at the next open, and an administrator's value since is
 * left; a group gone in the middle of a step drops the record, and one
 * gone at close has nothing left to restore; how a step is sized from
 * usage or from the value; a lowering the kernel refused with EBUSY;
 * a planned run of steps: one lock and one record for its steps, the
 * lock held between them, a value changed between two steps recorded
 * again, and a manager killed in a later step of the run restored.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fileops.h"
#include "journal.h"
#include "log.h"
#include "lowerstep.h"

#define MiB ((uint64_t)1024 * 1024)
#define PAGE ((uint64_t)4096)

static char tmp[PATH_MAX], grp[PATH_MAX + 8], state[PATH_MAX + 8];
static struct mri_logger lg;
static char logbuf[8192];
static struct mri_journal journal;

/* The fake control. Errors are negative errnos, 0 for none. */
static struct {
	int write_err[8];  /* for the n-th write (from 0) */
	int nwrites;
	uint64_t writes[8];
	int read_err[8];   /* for the n-th read of the value (from 0) */
	int nreads;
	int begins, ends, kept_ends;
	char journal_at_write[8][512]; /* the journal at each write */
} fk;

static void log_fn(int level, const char *msg, void *userdata)
{
	size_t n = strlen(logbuf);

	(void)userdata;
	snprintf(logbuf + n, sizeof(logbuf) - n, "%d %s\n", level, msg);
}

static void put(const char *name, uint64_t v)
{
	char p[PATH_MAX + 16];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tmp, name);
	f = fopen(p, "we");
	ck_assert_ptr_nonnull(f);
	if (v == MR_UNLIMITED)
		fputs("max\n", f);
	else
		fprintf(f, "%" PRIu64 "\n", v);
	fclose(f);
}

/* A file may be read while a child rewrites it (truncate, then write):
 * read again until it parses. */
static uint64_t get(const char *name)
{
	struct timespec ts = { 0, 100 * 1000 };
	char p[PATH_MAX + 16], buf[64];
	uint64_t v;
	size_t n;
	FILE *f;
	int i;

	snprintf(p, sizeof(p), "%s/%s", tmp, name);
	for (i = 0; i < 1000; i++) {
		f = fopen(p, "re");
		ck_assert_ptr_nonnull(f);
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		if (strcmp(buf, "max\n") == 0)
			return MR_UNLIMITED;
		if (mri_parse_u64(buf, &v) == 0)
			return v;
		nanosleep(&ts, NULL);
	}
	ck_abort_msg("%s stays unparsable", p);
	return 0;
}

static int op_begin(void *arg)
{
	(void)arg;
	fk.begins++;
	return mri_journal_lock(&journal);
}

/* The journal file as it is now, into out (512 bytes; "" if none). */
static void journal_text(char *out)
{
	char p[PATH_MAX + 64];
	size_t n = 0;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", state, journal.name);
	f = fopen(p, "re");
	if (f) {
		n = fread(out, 1, 511, f);
		fclose(f);
	}
	out[n] = '\0';
}

static void op_end(void *arg, bool keep)
{
	(void)arg;
	fk.ends++;
	fk.kept_ends += keep;
	mri_journal_unlock(&journal);
}

static int op_read(void *arg, uint64_t *value)
{
	int i = fk.nreads++;

	(void)arg;
	if (i < 8 && fk.read_err[i])
		return fk.read_err[i];
	*value = get("value");
	return 0;
}

/* The kernel's side: a value below usage reclaims down to it. */
static int op_write(void *arg, uint64_t value)
{
	int i = fk.nwrites++;

	(void)arg;
	ck_assert_int_lt(i, 8);
	fk.writes[i] = value;
	journal_text(fk.journal_at_write[i]);
	if (fk.write_err[i])
		return fk.write_err[i];
	if (value < get("usage"))
		put("usage", value);
	put("value", value);
	return 0;
}

static int op_usage(void *arg, uint64_t *bytes)
{
	(void)arg;
	*bytes = get("usage");
	return 0;
}

static const struct mri_lowerstep_ops ops_from_value = {
	.file = "memory.limit_in_bytes",
	.name = "test",
	.begin = op_begin,
	.end = op_end,
	.read = op_read,
	.write = op_write,
	.read_usage = op_usage,
	.lower_from_value = true,
};

static const struct mri_lowerstep_ops ops_from_usage = {
	.file = "memory.high",
	.name = "test",
	.begin = op_begin,
	.end = op_end,
	.read = op_read,
	.write = op_write,
	.read_usage = op_usage,
	.lower_from_value = false,
};

static struct mri_lowerstep step;

/* A new handle's step (what an open sets up). */
static void step_init(const struct mri_lowerstep_ops *ops)
{
	mri_lowerstep_init(&step, ops, NULL, &journal, &lg, grp, PAGE);
}

/* Size of the journal file, -1 if it does not exist. */
static long long journal_size(void)
{
	char p[PATH_MAX + 64];
	struct stat st;

	snprintf(p, sizeof(p), "%s/%s", state, journal.name);
	return lstat(p, &st) < 0 ? -1 : st.st_size;
}

static void setup(void)
{
	char t[] = "/tmp/mr-lowerstep-XXXXXX";

	ck_assert_ptr_nonnull(mkdtemp(t));
	/* Symlink-free paths, as the journal wants. */
	ck_assert_ptr_nonnull(realpath(t, tmp));
	snprintf(grp, sizeof(grp), "%s/grp", tmp);
	snprintf(state, sizeof(state), "%s/state", tmp);
	ck_assert_int_eq(mkdir(grp, 0755), 0);
	memset(&fk, 0, sizeof(fk));
	put("value", MR_UNLIMITED);
	put("usage", 100 * MiB);
	mri_logger_init(&lg);
	lg.fn = log_fn;
	lg.max_level = MR_LOG_DEBUG;
	logbuf[0] = '\0';
	mri_lowerstep_test_pause_ms = 0;
	ck_assert_int_eq(mri_journal_open(&journal, state, grp, tmp, &lg), 0);
	step_init(&ops_from_value);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	mri_journal_close(&journal);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(lowers_then_restores)
{
	uint64_t asked, freed;

	ck_assert_int_eq(mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed),
			 0);
	ck_assert_uint_eq(asked, 8 * MiB);
	ck_assert_uint_eq(freed, 8 * MiB);
	ck_assert_int_eq(fk.nwrites, 2);
	ck_assert_uint_eq(fk.writes[0], 92 * MiB);
	ck_assert_uint_eq(fk.writes[1], MR_UNLIMITED);
	ck_assert_uint_eq(get("value"), MR_UNLIMITED);
	/* A reclaim step: the run goes on, its fds may be kept. */
	ck_assert_int_eq(fk.kept_ends, 1);
	ck_assert_int_eq(journal_size(), -1); /* no record, no file */
	ck_assert_int_eq(mri_lowerstep_finish(&step), 0);
}
END_TEST

/* A restore that fails keeps the record: close answers the error while
 * it still fails, and the next open restores. */
START_TEST(failed_restore_keeps_journal)
{
	uint64_t asked = 1, freed = 1;
	int fd;

	fk.write_err[1] = -EPERM;
	fk.write_err[2] = -EPERM; /* the retry at close fails too */
	ck_assert_int_eq(mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed),
			 -EPERM);
	ck_assert_uint_eq(asked, 0);
	ck_assert_uint_eq(freed, 0);
	ck_assert_uint_eq(get("value"), 92 * MiB);
	ck_assert(step.restore_failed);
	ck_assert_int_gt(journal_size(), 0);
	ck_assert_ptr_nonnull(strstr(logbuf, "3 test: "));
	ck_assert_ptr_nonnull(strstr(logbuf, "journal kept"));
	ck_assert_int_eq(mri_lowerstep_finish(&step), -EPERM);
	ck_assert_int_gt(journal_size(), 0);
	/* A close that cannot have the lock with a record of its own kept
	 * says so. */
	fd = open(grp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX), 0);
	ck_assert_int_eq(mri_lowerstep_finish(&step), -EBUSY);
	close(fd);
	ck_assert_int_gt(journal_size(), 0);

	/* The next open restores it. */
	step_init(&ops_from_value);
	ck_assert_int_eq(mri_lowerstep_recover(&step), 0);
	ck_assert_int_eq(fk.nwrites, 4);
	ck_assert_uint_eq(fk.writes[3], MR_UNLIMITED);
	ck_assert_uint_eq(get("value"), MR_UNLIMITED);
	ck_assert_int_eq(journal_size(), -1);
	ck_assert_ptr_nonnull(strstr(logbuf, "recovered"));
}
END_TEST

/* A read that fails (not ENOENT) cannot tell an administrator's value
 * from ours: the original is written all the same. */
START_TEST(restore_after_failed_read)
{
	uint64_t asked, freed;

	fk.read_err[1] = -EIO; /* the restore's read */
	ck_assert_int_eq(mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed),
			 0);
	ck_assert_int_eq(fk.nwrites, 2);
	ck_assert_uint_eq(get("value"), MR_UNLIMITED);
	ck_assert_int_eq(journal_size(), -1);
}
END_TEST

/* A manager killed with the value lowered leaves its record; the next
 * open restores, unless someone else has changed the value since. */
START_TEST(crash_restored_at_next_open)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	uint64_t asked, freed;
	int i, status;
	pid_t pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		mri_lowerstep_test_pause_ms = 60000;
		mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed);
		_exit(1);
	}
	for (i = 0; i < 2000 && get("value") != 92 * MiB; i++)
		nanosleep(&ts, NULL);
	ck_assert_uint_eq(get("value"), 92 * MiB);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status));
	ck_assert_int_gt(journal_size(), 0);

	step_init(&ops_from_value);
	ck_assert_int_eq(mri_lowerstep_recover(&step), 0);
	ck_assert_uint_eq(get("value"), MR_UNLIMITED);
	ck_assert_int_eq(journal_size(), -1);
	ck_assert_ptr_nonnull(strstr(logbuf, "recovered"));

	/* Again, and an administrator sets 150 MiB before the open. */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		mri_lowerstep_test_pause_ms = 60000;
		mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed);
		_exit(1);
	}
	for (i = 0; i < 2000 && get("value") == MR_UNLIMITED; i++)
		nanosleep(&ts, NULL);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	put("value", 150 * MiB);
	fk.nwrites = 0;
	step_init(&ops_from_value);
	ck_assert_int_eq(mri_lowerstep_recover(&step), 0);
	ck_assert_int_eq(fk.nwrites, 0);
	ck_assert_uint_eq(get("value"), 150 * MiB);
	ck_assert_int_eq(journal_size(), -1);
	ck_assert_ptr_nonnull(strstr(logbuf, "changed by someone else"));
}
END_TEST

/* The group removed in the middle of a step: nothing is left to restore,
 * the record is dropped; removed before close: close answers 0. */
START_TEST(group_gone_mid_step)
{
	uint64_t asked, freed;

	fk.read_err[1] = -ENOENT; /* the restore's read */
	ck_assert_int_eq(mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed),
			 -ENOENT);
	ck_assert_int_eq(fk.nwrites, 1);
	ck_assert(!step.restore_failed);
	ck_assert_int_eq(journal_size(), -1); /* no record, no file */
	ck_assert_int_eq(rmdir(grp), 0);
	ck_assert_int_eq(mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed),
			 -ENOENT);
	ck_assert_int_eq(mri_lowerstep_finish(&step), 0);
	ck_assert_int_eq(fk.nwrites, 1);
}
END_TEST

/* Usage above the value: with lower_from_value (cgroup1) the step lowers
 * from the value; without (cgroup2) from usage, and only below the
 * value. */
START_TEST(sized_from_value_or_usage)
{
	uint64_t asked, freed;

	put("value", 90 * MiB);
	ck_assert_int_eq(mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed),
			 0);
	ck_assert_uint_eq(fk.writes[0], 82 * MiB);
	ck_assert_uint_eq(fk.writes[1], 90 * MiB);
	ck_assert_uint_eq(asked, 8 * MiB);
	ck_assert_uint_eq(freed, 18 * MiB);

	step_init(&ops_from_usage);
	fk.nwrites = 0;
	put("usage", 100 * MiB);
	ck_assert_int_eq(mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed),
			 -EAGAIN);
	ck_assert_int_eq(fk.nwrites, 0);
	put("value", 95 * MiB);
	ck_assert_int_eq(mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed),
			 0);
	ck_assert_uint_eq(fk.writes[0], 92 * MiB);
	ck_assert_uint_eq(fk.writes[1], 95 * MiB);
	/* Below a page asks a page; one page must stay. */
	put("usage", 2 * PAGE);
	ck_assert_int_eq(mri_lowerstep_reclaim(&step, 1, &asked, &freed), 0);
	ck_assert_uint_eq(asked, PAGE);
	ck_assert_int_eq(mri_lowerstep_reclaim(&step, 1, &asked, &freed),
			 -EAGAIN);
	ck_assert_int_eq(journal_size(), -1);
}
END_TEST

/* EBUSY to the lowering write: the kernel reclaimed what it could and
 * kept the value, which is then not written again. */
START_TEST(lowering_ebusy_is_partial)
{
	uint64_t asked, freed;

	fk.write_err[0] = -EBUSY;
	ck_assert_int_eq(mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed),
			 0);
	ck_assert_uint_eq(asked, 8 * MiB);
	ck_assert_uint_eq(freed, 0);
	ck_assert_int_eq(fk.nwrites, 1);
	ck_assert_int_eq(journal_size(), -1);
}
END_TEST

/* A planned run: the lock is taken and the record written once, at the
 * first step, and kept between steps (each of which restores the value);
 * the run's end clears the record and releases the lock. */
START_TEST(run_locks_and_records_once)
{
	uint64_t asked, freed;
	int fd;

	put("value", 200 * MiB);
	mri_lowerstep_plan(&step, 24 * MiB);
	ck_assert_int_eq(mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed),
			 0);
	ck_assert_int_eq(mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed),
			 0);
	ck_assert_int_eq(mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed),
			 0);
	ck_assert_int_eq(fk.begins, 1);
	ck_assert_int_eq(fk.ends, 0);
	ck_assert_uint_eq(fk.writes[0], 92 * MiB);
	ck_assert_uint_eq(fk.writes[2], 84 * MiB);
	ck_assert_uint_eq(fk.writes[4], 76 * MiB);
	ck_assert_uint_eq(get("value"), 200 * MiB);
	/* One record for the three steps: usage at the first less the
	 * run's 24 MiB up to the original less one. */
	ck_assert_str_eq(fk.journal_at_write[0], fk.journal_at_write[4]);
	ck_assert_ptr_nonnull(strstr(fk.journal_at_write[0],
				     "lowest 79691776\nhighest 209715199\n"));
	/* Between steps the lock is held (another manager waits). */
	fd = open(grp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), -1);
	mri_lowerstep_rest(&step);
	ck_assert_int_eq(fk.ends, 1);
	ck_assert_int_eq(journal_size(), -1);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
	close(fd);
	/* The plan is gone: the next step is a run of its own. */
	ck_assert_int_eq(mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed),
			 0);
	ck_assert_int_eq(fk.begins, 2);
	ck_assert_int_eq(fk.ends, 2);
	ck_assert_ptr_nonnull(strstr(fk.journal_at_write[6],
				     "lowest 71303168\nhighest 71303168\n"));
}
END_TEST

/* A value changed between two steps of a run (an administrator's write)
 * is the next step's original: the run's record is written again. */
START_TEST(run_rerecords_changed_value)
{
	uint64_t asked, freed;

	put("value", 200 * MiB);
	mri_lowerstep_plan(&step, 24 * MiB);
	ck_assert_int_eq(mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed),
			 0);
	put("value", 150 * MiB);
	ck_assert_int_eq(mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed),
			 0);
	ck_assert_uint_eq(fk.writes[3], 150 * MiB);
	ck_assert_uint_eq(get("value"), 150 * MiB);
	ck_assert_ptr_nonnull(strstr(fk.journal_at_write[2],
				     "original 157286400\n"));
	mri_lowerstep_rest(&step);
	ck_assert_int_eq(journal_size(), -1);
}
END_TEST

/* A manager killed in the second step of a run leaves the run's record,
 * which covers that step's value: the next open restores. */
START_TEST(run_killed_mid_run_restored)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	uint64_t asked, freed;
	int i, status;
	pid_t pid;

	put("value", 200 * MiB);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		mri_lowerstep_plan(&step, 24 * MiB);
		mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed);
		mri_lowerstep_test_pause_ms = 60000;
		mri_lowerstep_reclaim(&step, 8 * MiB, &asked, &freed);
		_exit(1);
	}
	for (i = 0; i < 2000 && get("value") != 84 * MiB; i++)
		nanosleep(&ts, NULL);
	ck_assert_uint_eq(get("value"), 84 * MiB);
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_gt(journal_size(), 0);

	step_init(&ops_from_value);
	ck_assert_int_eq(mri_lowerstep_recover(&step), 0);
	ck_assert_uint_eq(get("value"), 200 * MiB);
	ck_assert_int_eq(journal_size(), -1);
	ck_assert_ptr_nonnull(strstr(logbuf, "recovered"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("lowerstep");
	TCase *tc = tcase_create("step");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, lowers_then_restores);
	tcase_add_test(tc, failed_restore_keeps_journal);
	tcase_add_test(tc, restore_after_failed_read);
	tcase_add_test(tc, crash_restored_at_next_open);
	tcase_add_test(tc, group_gone_mid_step);
	tcase_add_test(tc, sized_from_value_or_usage);
	tcase_add_test(tc, lowering_ebusy_is_partial);
	tcase_add_test(tc, run_locks_and_records_once);
	tcase_add_test(tc, run_rerecords_changed_value);
	tcase_add_test(tc, run_killed_mid_run_restored);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
