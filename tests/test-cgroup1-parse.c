/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup v1 parsing: memory.stat captured from Linux 6.18 (tests/data),
 * every form of "unlimited", mri_parse_u64() and /proc/self/mountinfo.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup1.h"
#include "fileops.h"
#include "memreclaim.h"
#include "mountinfo.h"

static char data_path[PATH_MAX];

static const char *data(const char *name)
{
	const char *dir = getenv("MEMRECLAIM_TEST_DATA");
	const char *top = getenv("top_srcdir");

	if (dir)
		snprintf(data_path, sizeof(data_path), "%s/%s", dir, name);
	else
		snprintf(data_path, sizeof(data_path), "%s/tests/data/%s",
			 top ? top : ".", name);
	return data_path;
}

static char *slurp(const char *name)
{
	static char buf[16384];
	FILE *f = fopen(data(name), "re");
	size_t n;

	ck_assert_msg(f, "cannot open %s", data_path);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

#define ALL_V1_FIELDS                                                    \
	(((1ULL << (MR_MEMSTAT_WORKINGSET_REFAULT_FILE + 1)) - 1) &       \
	 ~(1ULL << MR_MEMSTAT_PGSCAN) & ~(1ULL << MR_MEMSTAT_PGSTEAL))

START_TEST(memstat_child_of_limited)
{
	struct mr_memstat ms;
	uint64_t hier = 0, memsw = 0;

	ck_assert_int_eq(mri_cgroup1_parse_memstat(
		slurp("v1-6.18-memory.stat.child-of-limited"), 4096, &ms,
		&hier, &memsw), 0);
	ck_assert_uint_eq(ms.size, sizeof(ms));
	ck_assert_uint_eq(ms.present, ALL_V1_FIELDS);
	ck_assert_uint_eq(hier, 268435456);
	ck_assert_uint_eq(memsw, MR_UNLIMITED);
	ck_assert_uint_eq(ms.anon_bytes, 3231744);
	ck_assert_uint_eq(ms.file_bytes, 25608192);
	ck_assert_uint_eq(ms.shmem_bytes, 0);
	ck_assert_uint_eq(ms.file_mapped_bytes, 40960);
	ck_assert_uint_eq(ms.file_dirty_bytes, 20480);
	ck_assert_uint_eq(ms.file_writeback_bytes, 0);
	ck_assert_uint_eq(ms.anon_thp_bytes, 0);
	ck_assert_uint_eq(ms.inactive_anon_bytes, 3080192);
	ck_assert_uint_eq(ms.active_anon_bytes, 4096);
	ck_assert_uint_eq(ms.inactive_file_bytes, 126976);
	ck_assert_uint_eq(ms.active_file_bytes, 25477120);
	ck_assert_uint_eq(ms.unevictable_bytes, 0);
	ck_assert_uint_eq(ms.swap_bytes, 0);
	ck_assert_uint_eq(ms.pgfault, 2033);
	ck_assert_uint_eq(ms.pgmajfault, 3);
	ck_assert_uint_eq(ms.pgpgin_bytes, 2216ULL * 4096);
	ck_assert_uint_eq(ms.pgpgout_bytes, 957ULL * 4096);
	ck_assert_uint_eq(ms.pgscan_bytes, 0);
	ck_assert_uint_eq(ms.pgsteal_bytes, 0);
	ck_assert_uint_eq(ms.workingset_refault_anon_bytes, 0);
	ck_assert_uint_eq(ms.workingset_refault_file_bytes, 0);
}
END_TEST

/* The parent's local counters are 0 and its total_* hold the child's:
 * only the hierarchical keys count. */
START_TEST(memstat_hierarchical_totals)
{
	struct mr_memstat ms;
	uint64_t hier = 0;

	ck_assert_int_eq(mri_cgroup1_parse_memstat(
		slurp("v1-6.18-memory.stat.limited-parent"), 4096, &ms,
		&hier, NULL), 0);
	ck_assert_uint_eq(hier, 268435456);
	ck_assert_uint_eq(ms.file_bytes, 25612288);
	ck_assert_uint_eq(ms.anon_bytes, 3235840);
	ck_assert_uint_eq(ms.file_dirty_bytes, 28672);
	ck_assert_uint_eq(ms.inactive_file_bytes, 131072);
	ck_assert_uint_eq(ms.active_file_bytes, 25477120);
	ck_assert_uint_eq(ms.pgpgin_bytes, 2247ULL * 4096);
	ck_assert_uint_eq(ms.pgpgout_bytes, 986ULL * 4096);
	ck_assert_uint_eq(ms.pgfault, 2109);
}
END_TEST

START_TEST(memstat_fresh_unlimited)
{
	struct mr_memstat ms;
	uint64_t hier = 0;

	ck_assert_int_eq(mri_cgroup1_parse_memstat(
		slurp("v1-6.18-memory.stat.fresh"), 4096, &ms, &hier, NULL), 0);
	ck_assert_uint_eq(hier, MR_UNLIMITED);
	ck_assert_uint_eq(ms.present, ALL_V1_FIELDS);
	ck_assert_uint_eq(ms.file_bytes, 0);
	ck_assert_uint_eq(ms.pgpgin_bytes, 0);
}
END_TEST

START_TEST(memstat_unknown_missing_and_pages)
{
	struct mr_memstat ms;
	uint64_t hier = 0;

	/* Unknown keys (local or future) are skipped; absent keys leave
	 * their bit clear; page counts scale with the page size and
	 * saturate. */
	ck_assert_int_eq(mri_cgroup1_parse_memstat(
		"total_future_thing 12\nrss 999\n"
		"total_workingset_refault_file 3\n"
		"total_pgpgin 18446744073709551615\n"
		"total_inactive_file 8192\n", 65536, &ms, &hier, NULL), 0);
	ck_assert_uint_eq(hier, MR_UNLIMITED);
	ck_assert_uint_eq(ms.present,
			  (1ULL << MR_MEMSTAT_WORKINGSET_REFAULT_FILE) |
			  (1ULL << MR_MEMSTAT_PGPGIN) |
			  (1ULL << MR_MEMSTAT_INACTIVE_FILE));
	ck_assert_uint_eq(ms.workingset_refault_file_bytes, 3 * 65536);
	ck_assert_uint_eq(ms.pgpgin_bytes, UINT64_MAX);
	ck_assert_uint_eq(ms.inactive_file_bytes, 8192);
	ck_assert_uint_eq(ms.anon_bytes, 0);
}
END_TEST

START_TEST(memstat_malformed)
{
	struct mr_memstat ms;
	uint64_t hier;

	ck_assert_int_eq(mri_cgroup1_parse_memstat("total_cache x\n", 4096,
						   &ms, &hier, NULL), -EIO);
	ck_assert_int_eq(mri_cgroup1_parse_memstat("total_cache -1\n", 4096,
						   &ms, &hier, NULL), -EIO);
	ck_assert_int_eq(mri_cgroup1_parse_memstat(
		"total_cache 99999999999999999999\n", 4096, &ms, &hier, NULL),
		-EIO);
	ck_assert_int_eq(mri_cgroup1_parse_memstat("total_cache\n", 4096,
						   &ms, &hier, NULL), -EIO);
	ck_assert_int_eq(mri_cgroup1_parse_memstat(
		"hierarchical_memory_limit \n", 4096, &ms, &hier, NULL), -EIO);
	ck_assert_int_eq(mri_cgroup1_parse_memstat(
		"hierarchical_memsw_limit x\n", 4096, &ms, &hier, NULL), -EIO);
	ck_assert_int_eq(mri_cgroup1_parse_memstat("", 4096, &ms, &hier,
						   NULL), 0);
	ck_assert_uint_eq(ms.present, 0);
}
END_TEST

START_TEST(unlimited_forms)
{
	static const char *const forms[] = {
		"9223372036854771712",  /* 4 KiB pages: this machine */
		"9223372036854767616",  /* 8 KiB */
		"9223372036854759424",  /* 16 KiB */
		"9223372036854710272",  /* 64 KiB */
		"9223372036854775807",  /* LONG_MAX */
		"18446744073709551615", /* before 3.19 */
	};
	struct mr_memstat ms;
	uint64_t v, hier;
	char buf[64];
	size_t i;

	for (i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		ck_assert_int_eq(mri_parse_u64(forms[i], &v), 0);
		ck_assert_uint_eq(mri_cgroup1_limit_value(v), MR_UNLIMITED);
		snprintf(buf, sizeof(buf), "hierarchical_memory_limit %s\n",
			 forms[i]);
		ck_assert_int_eq(mri_cgroup1_parse_memstat(buf, 4096, &ms,
							   &hier, NULL), 0);
		ck_assert_uint_eq(hier, MR_UNLIMITED);
	}
	/* The forms, computed. */
	ck_assert_uint_eq(mri_cgroup1_limit_value(LONG_MAX / 4096 * 4096),
			  MR_UNLIMITED);
	ck_assert_uint_eq(mri_cgroup1_limit_value(LONG_MAX / 65536 * 65536),
			  MR_UNLIMITED);
	/* Neighbours are limits (2^63 - 24576 is no page-size form). */
	ck_assert_uint_eq(mri_cgroup1_limit_value(9223372036854751232ULL),
			  9223372036854751232ULL);
	ck_assert_uint_eq(mri_cgroup1_limit_value(18446744073709551614ULL),
			  18446744073709551614ULL);
	ck_assert_uint_eq(mri_cgroup1_limit_value(268435456), 268435456);
	ck_assert_uint_eq(mri_cgroup1_limit_value(0), 0);
	/* The captured file of an unlimited group. */
	ck_assert_int_eq(mri_parse_u64(slurp("v1-6.18-child.limit_in_bytes"),
				       &v), 0);
	ck_assert_uint_eq(mri_cgroup1_limit_value(v), MR_UNLIMITED);
}
END_TEST

START_TEST(parse_u64_edges)
{
	uint64_t v = 7;

	ck_assert_int_eq(mri_parse_u64("0", &v), 0);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(mri_parse_u64("29474816\n", &v), 0);
	ck_assert_uint_eq(v, 29474816);
	ck_assert_int_eq(mri_parse_u64("5 \t\n", &v), 0);
	ck_assert_uint_eq(v, 5);
	ck_assert_int_eq(mri_parse_u64("18446744073709551615", &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	v = 7;
	ck_assert_int_eq(mri_parse_u64("18446744073709551616", &v), -ERANGE);
	ck_assert_int_eq(mri_parse_u64("99999999999999999999\n", &v), -ERANGE);
	ck_assert_int_eq(mri_parse_u64("", &v), -EIO);
	ck_assert_int_eq(mri_parse_u64("\n", &v), -EIO);
	ck_assert_int_eq(mri_parse_u64("abc", &v), -EIO);
	ck_assert_int_eq(mri_parse_u64("12x", &v), -EIO);
	ck_assert_int_eq(mri_parse_u64("12\nx", &v), -EIO);
	ck_assert_int_eq(mri_parse_u64("-1", &v), -EIO);
	ck_assert_int_eq(mri_parse_u64("+1", &v), -EIO);
	ck_assert_int_eq(mri_parse_u64(" 1", &v), -EIO);
	ck_assert_int_eq(mri_parse_u64("1 2", &v), -EIO);
	ck_assert_uint_eq(v, 7); /* untouched on error */
}
END_TEST

START_TEST(mountinfo_captured)
{
	struct mri_cgroup_mount m;

	ck_assert_int_eq(mri_mount_find_memory_v1(
		data("mountinfo.6.18-hybrid"), &m), 0);
	ck_assert_str_eq(m.mount_point, "/sys/fs/cgroup/memory");
	ck_assert_str_eq(m.root, "/");
	ck_assert_int_eq(m.version, 1);
	ck_assert(m.has_memory);

	ck_assert_int_eq(mri_mount_find(data("mountinfo.6.18-hybrid"),
					"/sys/fs/cgroup/memory/a/b", &m), 0);
	ck_assert_str_eq(m.mount_point, "/sys/fs/cgroup/memory");
	ck_assert(m.has_memory);
	ck_assert_int_eq(mri_mount_find(data("mountinfo.6.18-hybrid"),
					"/sys/fs/cgroup/memory", &m), 0);
	ck_assert_str_eq(m.mount_point, "/sys/fs/cgroup/memory");
	ck_assert_int_eq(mri_mount_find(data("mountinfo.6.18-hybrid"),
					"/sys/fs/cgroup/unified/x", &m), 0);
	ck_assert_int_eq(m.version, 2);
	ck_assert(!m.has_memory);
	ck_assert_int_eq(mri_mount_find(data("mountinfo.6.18-hybrid"),
					"/sys/fs/cgroup/cpu/x", &m), 0);
	ck_assert_str_eq(m.mount_point, "/sys/fs/cgroup/cpu");
	ck_assert(!m.has_memory);
	/* A sibling whose name extends a mount point is not beneath it,
	 * and the tmpfs at /sys/fs/cgroup is no cgroup. */
	ck_assert_int_eq(mri_mount_find(data("mountinfo.6.18-hybrid"),
					"/sys/fs/cgroup/memoryx", &m),
			 -ENODEV);
	ck_assert_int_eq(mri_mount_find(data("mountinfo.6.18-hybrid"),
					"/tmp", &m), -ENODEV);
}
END_TEST

START_TEST(mountinfo_escapes)
{
	struct mri_cgroup_mount m;

	ck_assert_int_eq(mri_mount_find_memory_v1(data("mountinfo.escapes"),
						  &m), 0);
	ck_assert_str_eq(m.mount_point, "/srv/cg mem\tx");
	ck_assert_str_eq(m.root, "/my root");
	ck_assert_int_eq(mri_mount_find(data("mountinfo.escapes"),
					"/srv/cg mem\tx/grp", &m), 0);
	ck_assert_str_eq(m.mount_point, "/srv/cg mem\tx");
	ck_assert_int_eq(mri_mount_find(data("mountinfo.escapes"),
					"/srv/back\\slash/g", &m), 0);
	ck_assert_str_eq(m.mount_point, "/srv/back\\slash");
	ck_assert(!m.has_memory);
	/* The escaped form is not the path. */
	ck_assert_int_eq(mri_mount_find(data("mountinfo.escapes"),
					"/srv/cg\\040mem\\011x", &m), -ENODEV);
}
END_TEST

START_TEST(mountinfo_whole_tokens)
{
	struct mri_cgroup_mount m;

	/* "memory_pressure", "name=memory", "nomemory", "memoryx" are not
	 * "memory"; "cpu" is found in "cpu,cpuacct" and not in "cpuset". */
	ck_assert_int_eq(mri_mount_find_memory_v1(
		data("mountinfo.cpu-cpuset"), &m), -ENODEV);
	ck_assert_int_eq(mri_mount_find(data("mountinfo.cpu-cpuset"),
					"/cg/memsw/a", &m), 0);
	ck_assert(!m.has_memory);
	ck_assert_int_eq(mri_mount_find(data("mountinfo.cpu-cpuset"),
					"/cg/cpu,cpuacct/a", &m), 0);
	ck_assert_str_eq(m.mount_point, "/cg/cpu,cpuacct");
	ck_assert_int_eq(mri_mount_find(data("mountinfo.cpu-cpuset"),
					"/cg/cpu", &m), -ENODEV);
}
END_TEST

START_TEST(mountinfo_v2_only)
{
	struct mri_cgroup_mount m;

	ck_assert_int_eq(mri_mount_find_memory_v1(data("mountinfo.v2-only"),
						  &m), -ENODEV);
	ck_assert_int_eq(mri_mount_find(data("mountinfo.v2-only"),
					"/sys/fs/cgroup/system.slice", &m), 0);
	ck_assert_int_eq(m.version, 2);
	ck_assert_str_eq(m.mount_point, "/sys/fs/cgroup");
	ck_assert(!m.has_memory);
}
END_TEST

START_TEST(mountinfo_longest_prefix)
{
	struct mri_cgroup_mount m;

	ck_assert_int_eq(mri_mount_find(data("mountinfo.longest-prefix"),
					"/cg/memory/x", &m), 0);
	ck_assert_str_eq(m.mount_point, "/cg/memory");
	/* Of two mounts on /cg/memory, the later one is on top. */
	ck_assert_str_eq(m.root, "/");
	ck_assert(m.has_memory);
	/* A tmpfs deeper down is not a cgroup mount. */
	ck_assert_int_eq(mri_mount_find(data("mountinfo.longest-prefix"),
					"/cg/memory/deeper/y", &m), 0);
	ck_assert_str_eq(m.mount_point, "/cg/memory");
	ck_assert_int_eq(mri_mount_find(data("mountinfo.longest-prefix"),
					"/cg/mem", &m), 0);
	ck_assert_str_eq(m.mount_point, "/cg/mem");
	ck_assert(!m.has_memory);
	ck_assert_int_eq(mri_mount_find(data("mountinfo.longest-prefix"),
					"/cg/memoryless", &m), 0);
	ck_assert_str_eq(m.mount_point, "/cg");
	ck_assert_int_eq(m.version, 2);
	/* The memory hierarchy mounted whole wins over a subtree. */
	ck_assert_int_eq(mri_mount_find_memory_v1(
		data("mountinfo.longest-prefix"), &m), 0);
	ck_assert_str_eq(m.root, "/");
}
END_TEST

START_TEST(mountinfo_malformed)
{
	struct mri_cgroup_mount m;

	ck_assert_int_eq(mri_mount_find_memory_v1(
		data("mountinfo.malformed-no-separator"), &m), -EIO);
	ck_assert_int_eq(mri_mount_find(data("mountinfo.malformed-short"),
					"/sys/fs/cgroup", &m), -EIO);
	ck_assert_int_eq(mri_mount_find(data("mountinfo.malformed-escape"),
					"/sys/fs/cgroup", &m), -EIO);
	ck_assert_int_eq(mri_mount_find(data("no-such-mountinfo"),
					"/sys/fs/cgroup", &m), -ENOENT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cgroup1-parse");
	TCase *tc = tcase_create("memstat");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, memstat_child_of_limited);
	tcase_add_test(tc, memstat_hierarchical_totals);
	tcase_add_test(tc, memstat_fresh_unlimited);
	tcase_add_test(tc, memstat_unknown_missing_and_pages);
	tcase_add_test(tc, memstat_malformed);
	tcase_add_test(tc, unlimited_forms);
	tcase_add_test(tc, parse_u64_edges);
	suite_add_tcase(s, tc);
	tc = tcase_create("mountinfo");
	tcase_add_test(tc, mountinfo_captured);
	tcase_add_test(tc, mountinfo_escapes);
	tcase_add_test(tc, mountinfo_whole_tokens);
	tcase_add_test(tc, mountinfo_v2_only);
	tcase_add_test(tc, mountinfo_longest_prefix);
	tcase_add_test(tc, mountinfo_malformed);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
