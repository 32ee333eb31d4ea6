/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The floor of a group's size (lib/core/floor.c): the largest of
 * protection, what reclaim cannot take and the caller's minimum, and its
 * input as read from memory.stat, the limits and the protection. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "floor.h"
#include "memreclaim.h"

#define MiB (1024ULL * 1024)

START_TEST(floor_is_the_largest_part)
{
	struct mri_floor_input in = {
		.min_bytes = 10 * MiB,
		.effective_low_bytes = 20 * MiB,
		.anon_bytes = 30 * MiB,
		.unevictable_bytes = 4 * MiB,
		.kernel_bytes = 3 * MiB,
		.swap_usable = false,
		.caller_min_bytes = 5 * MiB,
	};

	/* no swap: anon + unevictable + kernel = 37 MiB */
	ck_assert_uint_eq(mri_floor_bytes(&in), 37 * MiB);
	/* swap: unevictable + kernel = 7 MiB, below low */
	in.swap_usable = true;
	ck_assert_uint_eq(mri_floor_bytes(&in), 20 * MiB);
	in.effective_low_bytes = 0;
	ck_assert_uint_eq(mri_floor_bytes(&in), 10 * MiB);
	in.min_bytes = 0;
	ck_assert_uint_eq(mri_floor_bytes(&in), 7 * MiB);
	in.caller_min_bytes = 64 * MiB;
	ck_assert_uint_eq(mri_floor_bytes(&in), 64 * MiB);
	ck_assert_uint_eq(mri_floor_bytes(NULL), 0);
}
END_TEST

START_TEST(floor_saturates)
{
	struct mri_floor_input in = {
		.anon_bytes = UINT64_MAX - 1,
		.unevictable_bytes = 2,
		.kernel_bytes = 2,
	};

	ck_assert_uint_eq(mri_floor_bytes(&in), UINT64_MAX);
	in = (struct mri_floor_input){ .min_bytes = MR_UNLIMITED };
	ck_assert_uint_eq(mri_floor_bytes(&in), MR_UNLIMITED);
}
END_TEST

static struct mr_memstat stat_of(uint64_t inactive_anon, uint64_t active_anon)
{
	struct mr_memstat ms = {
		.size = sizeof(ms),
		.present = (1ULL << MR_MEMSTAT_INACTIVE_ANON) |
			   (1ULL << MR_MEMSTAT_ACTIVE_ANON) |
			   (1ULL << MR_MEMSTAT_ANON) |
			   (1ULL << MR_MEMSTAT_SHMEM) |
			   (1ULL << MR_MEMSTAT_UNEVICTABLE) |
			   (1ULL << MR_MEMSTAT_KERNEL),
		.inactive_anon_bytes = inactive_anon,
		.active_anon_bytes = active_anon,
		/* anon + shmem = the LRUs: the LRU form must win */
		.anon_bytes = 1 * MiB,
		.shmem_bytes = 1 * MiB,
		.unevictable_bytes = 2 * MiB,
		.kernel_bytes = 3 * MiB,
	};

	return ms;
}

static struct mr_limits limits_with_swap(uint64_t free_bytes,
					 uint32_t swappiness)
{
	struct mr_limits l = {
		.size = sizeof(l),
		.present = MR_LIMITS_HAS_SWAP_FREE,
		.swap_free_bytes = free_bytes,
		.swappiness = swappiness,
	};

	return l;
}

START_TEST(input_without_swap_counts_all_anon)
{
	struct mr_memstat ms = stat_of(8 * MiB, 12 * MiB);
	struct mr_limits l = limits_with_swap(0, 60);
	struct mr_protection prot = {
		.size = sizeof(prot),
		.min_bytes = 1 * MiB,
		.effective_min_bytes = 0,
		.effective_low_bytes = 6 * MiB,
	};
	struct mri_floor_input in;

	mri_floor_input_of(&ms, &l, &prot, -1, 9 * MiB, &in);
	ck_assert_uint_eq(in.anon_bytes, 20 * MiB);
	ck_assert(!in.swap_usable);
	ck_assert_uint_eq(in.unevictable_bytes, 2 * MiB);
	ck_assert_uint_eq(in.kernel_bytes, 3 * MiB);
	ck_assert_uint_eq(in.min_bytes, 1 * MiB);
	ck_assert_uint_eq(in.effective_low_bytes, 6 * MiB);
	ck_assert_uint_eq(in.caller_min_bytes, 9 * MiB);
	ck_assert_uint_eq(mri_floor_bytes(&in), 25 * MiB);

	/* no limits snapshot: no swap known */
	mri_floor_input_of(&ms, NULL, NULL, -1, 0, &in);
	ck_assert_uint_eq(in.anon_bytes, 20 * MiB);
	ck_assert_uint_eq(in.min_bytes, 0);
}
END_TEST

START_TEST(input_with_swap_room)
{
	struct mr_memstat ms = stat_of(8 * MiB, 12 * MiB);
	struct mr_limits l = limits_with_swap(100 * MiB, 60);
	struct mri_floor_input in;

	mri_floor_input_of(&ms, &l, NULL, -1, 0, &in);
	ck_assert_uint_eq(in.anon_bytes, 0);
	ck_assert(in.swap_usable);
	ck_assert_uint_eq(mri_floor_bytes(&in), 5 * MiB);

	/* room for 15 of 20 MiB: 5 MiB stays */
	l.swap_free_bytes = 15 * MiB;
	mri_floor_input_of(&ms, &l, NULL, -1, 0, &in);
	ck_assert_uint_eq(in.anon_bytes, 5 * MiB);
	ck_assert(!in.swap_usable);
	ck_assert_uint_eq(mri_floor_bytes(&in), 10 * MiB);

	/* the library's reclaim passes swappiness=0: nothing swaps */
	l.swap_free_bytes = 100 * MiB;
	mri_floor_input_of(&ms, &l, NULL, 0, 0, &in);
	ck_assert_uint_eq(in.anon_bytes, 20 * MiB);
	/* the kernel's swappiness 0, the library's own 60: swaps */
	l.swappiness = 0;
	mri_floor_input_of(&ms, &l, NULL, 60, 0, &in);
	ck_assert(in.swap_usable);
}
END_TEST

START_TEST(input_without_lrus_or_kernel)
{
	struct mr_memstat ms = {
		.size = sizeof(ms),
		.present = (1ULL << MR_MEMSTAT_ANON) |
			   (1ULL << MR_MEMSTAT_SHMEM),
		.anon_bytes = 7 * MiB,
		.shmem_bytes = 2 * MiB,
		.unevictable_bytes = 99 * MiB, /* not present: ignored */
		.kernel_bytes = 99 * MiB,
	};
	struct mri_floor_input in;

	mri_floor_input_of(&ms, NULL, NULL, -1, 0, &in);
	ck_assert_uint_eq(in.anon_bytes, 9 * MiB);
	ck_assert_uint_eq(in.unevictable_bytes, 0);
	ck_assert_uint_eq(in.kernel_bytes, 0);
	ck_assert_uint_eq(mri_floor_bytes(&in), 9 * MiB);
}
END_TEST

/* Reclaimable slab (dentries, inodes) is kernel memory reclaim takes:
 * the floor counts the rest (a group of cached dentries is not held at
 * its slab; more slab than kernel memory, as a racy read may give,
 * leaves 0). */
START_TEST(input_reclaimable_slab_is_reclaimable)
{
	struct mr_memstat ms = stat_of(8 * MiB, 12 * MiB);
	struct mri_floor_input in;

	ms.present |= 1ULL << MR_MEMSTAT_SLAB_RECLAIMABLE;
	ms.kernel_bytes = 80 * MiB;
	ms.slab_reclaimable_bytes = 76 * MiB;
	mri_floor_input_of(&ms, NULL, NULL, -1, 0, &in);
	ck_assert_uint_eq(in.kernel_bytes, 4 * MiB);
	ms.slab_reclaimable_bytes = 81 * MiB;
	mri_floor_input_of(&ms, NULL, NULL, -1, 0, &in);
	ck_assert_uint_eq(in.kernel_bytes, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("floor");
	TCase *tc = tcase_create("floor");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, floor_is_the_largest_part);
	tcase_add_test(tc, floor_saturates);
	tcase_add_test(tc, input_without_swap_counts_all_anon);
	tcase_add_test(tc, input_with_swap_room);
	tcase_add_test(tc, input_without_lrus_or_kernel);
	tcase_add_test(tc, input_reclaimable_slab_is_reclaimable);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
