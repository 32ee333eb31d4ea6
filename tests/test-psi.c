/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lib/cgroupfs/psi.c: pressure files captured from Linux 6.1 (Debian 6.1.192 under
 * qemu, a group under memory.high pressure, and the root) and 6.18 (this
 * machine's cgroup2 twin of a v1 group at its limit), every malformed form
 * the parser refuses, percent to ppm rounding, reads from a kept fd with
 * injected errors, trigger validation at each edge (with an injected
 * capability probe), and the text a trigger writes.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileops.h"
#include "memreclaim.h"
#include "psi.h"
#include "psitrigger.h"

#define S MR_PRESSURE_SOME
#define F MR_PRESSURE_FULL

struct parse_case {
	const char *name;
	const char *text;
	int ret;
	uint32_t present;
	struct mr_psi_stat some, full;
};

static const struct parse_case parse_cases[] = {
	{ "6.1 group under memory.high, 4 s in",
	  "some avg10=3.11 avg60=0.61 avg300=0.12 total=408597\n"
	  "full avg10=3.11 avg60=0.61 avg300=0.12 total=408597\n",
	  0, S | F, { 31100, 6100, 1200, 408597 },
	  { 31100, 6100, 1200, 408597 } },
	{ "6.1 root, some and full differ",
	  "some avg10=7.01 avg60=1.61 avg300=0.35 total=1251468\n"
	  "full avg10=6.93 avg60=1.58 avg300=0.34 total=1210922\n",
	  0, S | F, { 70100, 16100, 3500, 1251468 },
	  { 69300, 15800, 3400, 1210922 } },
	{ "6.1 new group",
	  "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	  "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
	  0, S | F, { 0, 0, 0, 0 }, { 0, 0, 0, 0 } },
	{ "6.18 v1 twin at its limit",
	  "some avg10=12.76 avg60=2.48 avg300=0.52 total=1833797\n"
	  "full avg10=12.76 avg60=2.48 avg300=0.52 total=1833797\n",
	  0, S | F, { 127600, 24800, 5200, 1833797 },
	  { 127600, 24800, 5200, 1833797 } },
	{ "6.18 root",
	  "some avg10=0.00 avg60=0.00 avg300=0.00 total=79142506\n"
	  "full avg10=0.00 avg60=0.00 avg300=0.00 total=9115628\n",
	  0, S | F, { 0, 0, 0, 79142506 }, { 0, 0, 0, 9115628 } },
	{ "no full line",
	  "some avg10=1.00 avg60=2.00 avg300=3.00 total=42\n",
	  0, S, { 10000, 20000, 30000, 42 }, { 0, 0, 0, 0 } },
	{ "no final newline",
	  "some avg10=0.50 avg60=0.25 avg300=0.01 total=7\n"
	  "full avg10=0.10 avg60=0.00 avg300=0.00 total=3",
	  0, S | F, { 5000, 2500, 100, 7 }, { 1000, 0, 0, 3 } },
	{ "unknown keys and lines ignored",
	  "some avg10=1.00 avg20=9.99 avg60=2.00 avg300=3.00 total=5 x=y\n"
	  "partial avg10=5.00 avg60=5.00 avg300=5.00 total=9\n"
	  "\n"
	  "full total=4 avg300=0.03 avg60=0.02 avg10=0.01 future=1.5\n",
	  0, S | F, { 10000, 20000, 30000, 5 }, { 100, 200, 300, 4 } },
	{ "full before some",
	  "full avg10=0.01 avg60=0.02 avg300=0.03 total=4\n"
	  "some avg10=0.04 avg60=0.05 avg300=0.06 total=8\n",
	  0, S | F, { 400, 500, 600, 8 }, { 100, 200, 300, 4 } },
	{ "total at UINT64_MAX",
	  "some avg10=0.00 avg60=0.00 avg300=0.00 "
	  "total=18446744073709551615\n",
	  0, S, { 0, 0, 0, UINT64_MAX }, { 0, 0, 0, 0 } },
	/* percent -> ppm: four decimals exact, the fifth rounds */
	{ "100 percent",
	  "some avg10=100.00 avg60=100 avg300=99.99 total=1\n",
	  0, S, { 1000000, 1000000, 999900, 1 }, { 0, 0, 0, 0 } },
	{ "one and four decimals",
	  "some avg10=1.5 avg60=12.3456 avg300=0.0001 total=1\n",
	  0, S, { 15000, 123456, 1, 1 }, { 0, 0, 0, 0 } },
	{ "fifth decimal rounds half up",
	  "some avg10=0.00005 avg60=0.000049 avg300=99.999995 total=1\n",
	  0, S, { 1, 0, 1000000, 1 }, { 0, 0, 0, 0 } },
	/* PSI unavailable */
	{ "empty", "", -EOPNOTSUPP, 0, { 0 }, { 0 } },
	{ "only newlines", "\n\n", -EOPNOTSUPP, 0, { 0 }, { 0 } },
	/* malformed */
	{ "no some line",
	  "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
	  -EIO, 0, { 0 }, { 0 } },
	{ "only unknown lines", "foo bar\n", -EIO, 0, { 0 }, { 0 } },
	{ "some without fields", "some\n", -EIO, 0, { 0 }, { 0 } },
	{ "some with blanks only", "some   \n", -EIO, 0, { 0 }, { 0 } },
	{ "missing total",
	  "some avg10=0.00 avg60=0.00 avg300=0.00\n", -EIO, 0, { 0 }, { 0 } },
	{ "missing avg300 in full",
	  "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	  "full avg10=0.00 avg60=0.00 total=0\n", -EIO, 0, { 0 }, { 0 } },
	{ "key repeated",
	  "some avg10=0.00 avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
	  -EIO, 0, { 0 }, { 0 } },
	{ "some line repeated",
	  "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	  "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
	  -EIO, 0, { 0 }, { 0 } },
	{ "token without =",
	  "some avg10=0.00 avg60 avg300=0.00 total=0\n", -EIO, 0, { 0 },
	  { 0 } },
	{ "not a number",
	  "some avg10=abc avg60=0.00 avg300=0.00 total=0\n", -EIO, 0, { 0 },
	  { 0 } },
	{ "negative",
	  "some avg10=-1.00 avg60=0.00 avg300=0.00 total=0\n", -EIO, 0, { 0 },
	  { 0 } },
	{ "empty value",
	  "some avg10= avg60=0.00 avg300=0.00 total=0\n", -EIO, 0, { 0 },
	  { 0 } },
	{ "dot without decimals",
	  "some avg10=1. avg60=0.00 avg300=0.00 total=0\n", -EIO, 0, { 0 },
	  { 0 } },
	{ "two dots",
	  "some avg10=1.0.0 avg60=0.00 avg300=0.00 total=0\n", -EIO, 0, { 0 },
	  { 0 } },
	{ "above 100 percent",
	  "some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n", -EIO, 0,
	  { 0 }, { 0 } },
	{ "total with a fraction",
	  "some avg10=0.00 avg60=0.00 avg300=0.00 total=1.5\n", -EIO, 0,
	  { 0 }, { 0 } },
	{ "total overflows",
	  "some avg10=0.00 avg60=0.00 avg300=0.00 "
	  "total=18446744073709551616\n", -EIO, 0, { 0 }, { 0 } },
	{ "malformed full after a good some",
	  "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
	  "full avg10=x avg60=0.00 avg300=0.00 total=0\n", -EIO, 0, { 0 },
	  { 0 } },
	{ "full without fields",
	  "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull\n", -EIO, 0,
	  { 0 }, { 0 } },
};

static void assert_stat(const char *name, const char *kind,
			const struct mr_psi_stat *got,
			const struct mr_psi_stat *want)
{
	ck_assert_msg(got->avg10_ppm == want->avg10_ppm &&
		      got->avg60_ppm == want->avg60_ppm &&
		      got->avg300_ppm == want->avg300_ppm &&
		      got->total_us == want->total_us,
		      "%s: %s is %u %u %u %llu, want %u %u %u %llu", name, kind,
		      got->avg10_ppm, got->avg60_ppm, got->avg300_ppm,
		      (unsigned long long)got->total_us, want->avg10_ppm,
		      want->avg60_ppm, want->avg300_ppm,
		      (unsigned long long)want->total_us);
}

START_TEST(parse_table)
{
	const struct parse_case *c = &parse_cases[_i];
	struct mr_pressure p, zero = { 0 };

	memset(&p, 0xa5, sizeof(p));
	ck_assert_msg(mri_psi_parse(c->text, &p) == c->ret,
		      "%s: returned %d, want %d", c->name,
		      mri_psi_parse(c->text, &p), c->ret);
	if (c->ret < 0) {
		/* nothing written on error */
		memset(&zero, 0xa5, sizeof(zero));
		ck_assert_msg(memcmp(&p, &zero, sizeof(p)) == 0,
			      "%s: *out changed on error", c->name);
		return;
	}
	ck_assert_uint_eq(p.size, sizeof(p));
	ck_assert_msg(p.present == c->present, "%s: present %#x, want %#x",
		      c->name, p.present, c->present);
	assert_stat(c->name, "some", &p.some, &c->some);
	assert_stat(c->name, "full", &p.full, &c->full);
}
END_TEST

/* ---------------------------------------------------------- kept fd */

static char tmpdir[] = "/tmp/test-psi-XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void)
{
	char path[256];

	mri_file_ops_set(NULL);
	mri_psi_cap_probe_set(NULL);
	snprintf(path, sizeof(path), "%s/memory.pressure", tmpdir);
	unlink(path);
	rmdir(tmpdir);
}

static int write_pressure_file(const char *text)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/memory.pressure", tmpdir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
	return fd;
}

static ssize_t inject_pread_errno;

static ssize_t failing_pread(int fd, void *buf, size_t len, off_t off)
{
	if (inject_pread_errno)
		return inject_pread_errno;
	return mri_file_ops_real.pread(fd, buf, len, off);
}

static struct mri_file_ops read_ops;

static void use_read_ops(ssize_t err)
{
	read_ops = mri_file_ops_real;
	read_ops.pread = failing_pread;
	inject_pread_errno = err;
	mri_file_ops_set(&read_ops);
}

START_TEST(read_from_fd)
{
	struct mr_pressure p;
	int fd = write_pressure_file(parse_cases[3].text);

	ck_assert_int_eq(mri_psi_read(fd, &p), 0);
	ck_assert_uint_eq(p.present, S | F);
	ck_assert_uint_eq(p.some.total_us, 1833797);
	ck_assert_uint_eq(p.full.avg10_ppm, 127600);
	/* read again from the same fd: pread at offset 0 each time */
	memset(&p, 0, sizeof(p));
	ck_assert_int_eq(mri_psi_read(fd, &p), 0);
	ck_assert_uint_eq(p.some.avg60_ppm, 24800);
	close(fd);
}
END_TEST

START_TEST(read_empty_file_is_unsupported)
{
	struct mr_pressure p;
	int fd = write_pressure_file("");

	ck_assert_int_eq(mri_psi_read(fd, &p), -EOPNOTSUPP);
	close(fd);
}
END_TEST

START_TEST(read_errors)
{
	static const struct { ssize_t injected; int want; } cases[] = {
		{ -EOPNOTSUPP, -EOPNOTSUPP }, /* psi=0, cgroup.pressure 0 */
		{ -ENODEV, -ENOENT },         /* group removed (kernfs) */
		{ -ENOENT, -ENOENT },
		{ -EIO, -EIO },
		{ -EACCES, -EACCES },
	};
	struct mr_pressure p;
	int fd = write_pressure_file(parse_cases[0].text);
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		use_read_ops(cases[i].injected);
		ck_assert_int_eq(mri_psi_read(fd, &p), cases[i].want);
	}
	close(fd);
}
END_TEST

START_TEST(read_malformed_is_eio)
{
	struct mr_pressure p;
	int fd = write_pressure_file("some avg10=zz avg60=0 avg300=0 total=0\n");

	ck_assert_int_eq(mri_psi_read(fd, &p), -EIO);
	close(fd);
}
END_TEST

/* ---------------------------------------------------------- triggers */

static int probe_answer;

static int fake_cap_probe(void)
{
	return probe_answer;
}

#define MS 1000000ULL
#define SEC 1000000000ULL

struct trigger_case {
	const char *name;
	int kind;
	uint64_t stall_ns, window_ns;
	int privileged_ret;   /* probe says CAP_SYS_RESOURCE */
	int unprivileged_ret; /* probe says no, or cannot tell */
};

static const struct trigger_case trigger_cases[] = {
	{ "some 150 ms in 1 s", MR_PSI_SOME, 150 * MS, 1 * SEC, 0, -EINVAL },
	{ "full 100 ms in 2 s", MR_PSI_FULL, 100 * MS, 2 * SEC, 0, 0 },
	{ "unknown kind 2", 2, 100 * MS, 2 * SEC, -EINVAL, -EINVAL },
	{ "unknown kind -1", -1, 100 * MS, 2 * SEC, -EINVAL, -EINVAL },
	{ "stall 0", MR_PSI_SOME, 0, 2 * SEC, -EINVAL, -EINVAL },
	{ "stall 1 us", MR_PSI_SOME, 1000, 2 * SEC, 0, 0 },
	{ "stall equal to window", MR_PSI_SOME, 2 * SEC, 2 * SEC, 0, 0 },
	{ "stall above window", MR_PSI_SOME, 2 * SEC + 1000, 2 * SEC,
	  -EINVAL, -EINVAL },
	{ "window 0", MR_PSI_SOME, 0, 0, -EINVAL, -EINVAL },
	{ "window 500 ms", MR_PSI_SOME, 100 * MS, 500 * MS, 0, -EINVAL },
	{ "window 1 us under 500 ms", MR_PSI_SOME, 100 * MS,
	  500 * MS - 1000, -EINVAL, -EINVAL },
	{ "window 10 s", MR_PSI_SOME, 1 * SEC, 10 * SEC, 0, 0 },
	{ "window 1 us over 10 s", MR_PSI_SOME, 1 * SEC, 10 * SEC + 1000,
	  -EINVAL, -EINVAL },
	{ "window 12 s (a multiple of 2 s, over 10 s)", MR_PSI_SOME,
	  1 * SEC, 12 * SEC, -EINVAL, -EINVAL },
	{ "window UINT64_MAX", MR_PSI_SOME, 1 * SEC, UINT64_MAX, -EINVAL,
	  -EINVAL },
	{ "stall not a whole us", MR_PSI_SOME, 100 * MS + 1, 2 * SEC,
	  -EINVAL, -EINVAL },
	{ "window not a whole us", MR_PSI_SOME, 100 * MS, 2 * SEC + 500,
	  -EINVAL, -EINVAL },
	{ "window 3 s", MR_PSI_SOME, 100 * MS, 3 * SEC, 0, -EINVAL },
	{ "window 4 s", MR_PSI_FULL, 100 * MS, 4 * SEC, 0, 0 },
	{ "window 2 s + 1 us", MR_PSI_SOME, 100 * MS, 2 * SEC + 1000, 0,
	  -EINVAL },
	{ "window 9.999999 s", MR_PSI_SOME, 100 * MS, 10 * SEC - 1000, 0,
	  -EINVAL },
};

START_TEST(trigger_check_privileged)
{
	const struct trigger_case *c = &trigger_cases[_i];

	probe_answer = 1;
	mri_psi_cap_probe_set(fake_cap_probe);
	ck_assert_msg(mri_psi_trigger_check(c->kind, c->stall_ns,
					    c->window_ns) ==
		      c->privileged_ret, "%s: got %d, want %d", c->name,
		      mri_psi_trigger_check(c->kind, c->stall_ns, c->window_ns),
		      c->privileged_ret);
}
END_TEST

START_TEST(trigger_check_unprivileged)
{
	const struct trigger_case *c = &trigger_cases[_i];

	probe_answer = 0;
	mri_psi_cap_probe_set(fake_cap_probe);
	ck_assert_msg(mri_psi_trigger_check(c->kind, c->stall_ns,
					    c->window_ns) ==
		      c->unprivileged_ret, "%s: got %d, want %d", c->name,
		      mri_psi_trigger_check(c->kind, c->stall_ns, c->window_ns),
		      c->unprivileged_ret);
}
END_TEST

START_TEST(trigger_check_probe_failure_is_strict)
{
	const struct trigger_case *c = &trigger_cases[_i];

	probe_answer = -EPERM;
	mri_psi_cap_probe_set(fake_cap_probe);
	ck_assert_msg(mri_psi_trigger_check(c->kind, c->stall_ns,
					    c->window_ns) ==
		      c->unprivileged_ret, "%s", c->name);
}
END_TEST

START_TEST(real_capability_probe)
{
	/* The tests run as root with a full effective set, or as a user
	 * without it; either way capget answers. */
	int r = mri_psi_has_sys_resource();

	ck_assert_msg(r == 0 || r == 1, "capget: %d", r);
	if (geteuid() == 0) {
		FILE *f = fopen("/proc/self/status", "re");
		char line[256];
		unsigned long long eff = 0;

		ck_assert_ptr_nonnull(f);
		while (fgets(line, sizeof(line), f))
			sscanf(line, "CapEff: %llx", &eff);
		fclose(f);
		ck_assert_int_eq(r, (int)((eff >> 24) & 1)); /* CAP_SYS_RESOURCE */
	}
}
END_TEST

/* The trigger's open and write, through an injected table. */
static int open_err, write_err, write_short;
static int opened_fd, closed_fd;
static int open_flags;
static char written[128];
static size_t written_len;

static int trig_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	int fd;

	open_flags = flags;
	if (open_err)
		return open_err;
	/* The regular file stands in for memory.pressure: no O_NONBLOCK
	 * meaning there, the flags are checked above. */
	fd = mri_file_ops_real.openat(dirfd, path, flags, mode);
	opened_fd = fd;
	return fd;
}

static ssize_t trig_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	ck_assert_int_eq(fd, opened_fd);
	ck_assert_int_eq(off, 0);
	ck_assert_uint_lt(len, sizeof(written));
	memcpy(written, buf, len);
	written_len = len;
	if (write_err)
		return write_err;
	if (write_short)
		return (ssize_t)len - 1;
	return (ssize_t)len;
}

static int trig_close(int fd)
{
	closed_fd = fd;
	return mri_file_ops_real.close(fd);
}

static struct mri_file_ops trig_ops;

static int open_dir(void)
{
	int dirfd, fd;

	fd = write_pressure_file("");
	close(fd);
	dirfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dirfd, 0);
	trig_ops = mri_file_ops_real;
	trig_ops.openat = trig_openat;
	trig_ops.pwrite = trig_pwrite;
	trig_ops.close = trig_close;
	open_err = write_err = write_short = 0;
	opened_fd = closed_fd = -1;
	written_len = 0;
	mri_file_ops_set(&trig_ops);
	return dirfd;
}

START_TEST(trigger_open_writes_text_with_newline)
{
	int dirfd = open_dir(), fd;

	fd = mri_psi_trigger_open(dirfd, "memory.pressure", MR_PSI_SOME,
				  150000, 1000000);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fd, opened_fd);
	ck_assert_int_eq(closed_fd, -1);
	ck_assert_int_eq(open_flags, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	ck_assert_uint_eq(written_len, strlen("some 150000 1000000\n"));
	ck_assert(memcmp(written, "some 150000 1000000\n", written_len) == 0);
	ck_assert_int_ne(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	close(fd);

	fd = mri_psi_trigger_open(dirfd, "memory.pressure", MR_PSI_FULL,
				  10000000, 10000000);
	ck_assert_int_ge(fd, 0);
	ck_assert(memcmp(written, "full 10000000 10000000\n", written_len) == 0);
	close(fd);
	close(dirfd);
}
END_TEST

START_TEST(trigger_open_errors)
{
	static const struct {
		int open_err, write_err, write_short, want;
	} cases[] = {
		{ -ENOENT, 0, 0, -ENOENT },
		{ -ENODEV, 0, 0, -ENOENT },
		{ -EOPNOTSUPP, 0, 0, -EOPNOTSUPP },
		{ -EACCES, 0, 0, -EACCES },
		{ -EMFILE, 0, 0, -EMFILE },
		{ 0, -EINVAL, 0, -EINVAL },   /* the kernel refused the trigger */
		{ 0, -EBUSY, 0, -EBUSY },     /* a second trigger on the fd */
		{ 0, -EOPNOTSUPP, 0, -EOPNOTSUPP },
		{ 0, -ENODEV, 0, -ENOENT },
		{ 0, -EPERM, 0, -EPERM },
		{ 0, 0, 1, -EIO },            /* short write */
	};
	int dirfd = open_dir(), fd;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		open_err = cases[i].open_err;
		write_err = cases[i].write_err;
		write_short = cases[i].write_short;
		opened_fd = closed_fd = -1;
		fd = mri_psi_trigger_open(dirfd, "memory.pressure",
					  MR_PSI_SOME, 100000, 2000000);
		ck_assert_msg(fd == cases[i].want, "case %zu: %d, want %d", i,
			      fd, cases[i].want);
		/* an opened fd is closed again when the write fails */
		ck_assert_int_eq(closed_fd, opened_fd);
	}
	close(dirfd);
}
END_TEST

START_TEST(trigger_open_unknown_kind)
{
	int dirfd = open_dir();

	ck_assert_int_eq(mri_psi_trigger_open(dirfd, "memory.pressure", 2,
					      100000, 2000000), -EINVAL);
	ck_assert_int_eq(opened_fd, -1); /* nothing opened */
	close(dirfd);
}
END_TEST

/* A wake-up is real when the stall total grew by the trigger's stall
 * since the last sample; each check moves the sample. */
START_TEST(wakeup_against_the_total)
{
	struct mri_psi_armed a = { .fd = 3, .kind = MR_PSI_SOME,
				   .stall_us = 100000,
				   .last_total_us = 1000000 };

	ck_assert(!mri_psi_wakeup_real(&a, 1000001));
	ck_assert(!mri_psi_wakeup_real(&a, 1100000));
	ck_assert(mri_psi_wakeup_real(&a, 1200001));
	ck_assert_uint_eq(a.last_total_us, 1200001);
	/* Exactly the stall is a crossing. */
	ck_assert(mri_psi_wakeup_real(&a, 1300001));
	/* A total that fell (the group recreated) is a new base. */
	ck_assert(!mri_psi_wakeup_real(&a, 5));
	ck_assert(mri_psi_wakeup_real(&a, 100005));
}
END_TEST

static Suite *psi_suite(void)
{
	Suite *s = suite_create("psi");
	TCase *tc;
	int n_trig = (int)(sizeof(trigger_cases) / sizeof(trigger_cases[0]));

	tc = tcase_create("parse");
	tcase_add_loop_test(tc, parse_table, 0,
			    (int)(sizeof(parse_cases) / sizeof(parse_cases[0])));
	suite_add_tcase(s, tc);

	tc = tcase_create("read");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, wakeup_against_the_total);
	tcase_add_test(tc, read_from_fd);
	tcase_add_test(tc, read_empty_file_is_unsupported);
	tcase_add_test(tc, read_errors);
	tcase_add_test(tc, read_malformed_is_eio);
	suite_add_tcase(s, tc);

	tc = tcase_create("trigger");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, trigger_check_privileged, 0, n_trig);
	tcase_add_loop_test(tc, trigger_check_unprivileged, 0, n_trig);
	tcase_add_loop_test(tc, trigger_check_probe_failure_is_strict, 0,
			    n_trig);
	tcase_add_test(tc, real_capability_probe);
	tcase_add_test(tc, trigger_open_writes_text_with_newline);
	tcase_add_test(tc, trigger_open_errors);
	tcase_add_test(tc, trigger_open_unknown_kind);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(psi_suite());
	int failed;

	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
