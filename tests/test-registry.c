/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The context's registry of groups (lib/core/context.c) with many groups open
 * on the simulator: every id finds its own group, an event reaches the
 * group whose fd signalled it and no other, closed groups are gone from
 * it, reopened ones get new ids (never one used before), and the ids come
 * back in opening order. Behaviour only: the costs are bench/bench-scale's.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "context.h"
#include "events.h"
#include "group.h"
#include "memreclaim-sim.h"
#include "registry.h"

#define NGROUPS 2000

static mr_sim_t *sim;
static mr_ctx_t *ctx;
static mr_group_t *g[NGROUPS];

static void setup(void)
{
	struct mr_sim_config c = { .size = sizeof(c), .seed = 1 };
	struct rlimit rl;
	char path[32];
	int i;

	/* One eventfd per simulated group: above the usual soft limit. */
	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < NGROUPS + 256 && rl.rlim_max >= NGROUPS + 256) {
		rl.rlim_cur = NGROUPS + 256;
		ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	ck_assert_int_eq(mr_sim_new(&c, &sim), 0);
	ck_assert_int_eq(mr_ctx_new(&ctx), 0);
	ck_assert_int_eq(mr_sim_attach(sim, ctx), 0);
	for (i = 0; i < NGROUPS; i++) {
		snprintf(path, sizeof(path), "/g%d", i);
		ck_assert_int_eq(mr_sim_create_group(sim, path), 0);
		ck_assert_int_eq(mr_group_open(ctx, path, "sim", &g[i]), 0);
	}
	/* Serve the wake-ups of the opens: no event is pending after. */
	ck_assert_int_eq(mr_ctx_worker_dispatch(ctx, MR_DISPATCH_ALL), 0);
}

static void teardown(void)
{
	mr_ctx_free(ctx);
	ck_assert_int_eq(mr_sim_free(sim), 0);
}

static bool readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

/* The kernel's side of an event: the group's event fd signals. */
static void signal_event(mr_group_t *grp)
{
	uint64_t one = 1;

	ck_assert_int_ge(grp->event_fd, 0);
	ck_assert_int_eq(write(grp->event_fd, &one, sizeof(one)), sizeof(one));
}

START_TEST(every_id_finds_its_group)
{
	struct mr_group *found;
	uint64_t *ids;
	size_t n;
	int i;

	for (i = 0; i < NGROUPS; i++) {
		found = mri_ctx_get_group(ctx, g[i]->id);
		ck_assert_ptr_eq(found, g[i]);
		mri_ctx_put_group(ctx, found);
	}
	ck_assert_ptr_null(mri_ctx_get_group(ctx, MRI_WAKE_ID));
	ck_assert_ptr_null(mri_ctx_get_group(ctx, g[NGROUPS - 1]->id + 1));
	/* In opening order. */
	ck_assert_int_eq(mri_ctx_group_ids(ctx, &ids, &n), 0);
	ck_assert_uint_eq(n, NGROUPS);
	for (i = 0; i < NGROUPS; i++)
		ck_assert_uint_eq(ids[i], g[i]->id);
	free(ids);
}
END_TEST

/* Each dispatched event is taken by its own group's event_ack(): the
 * signalled fds are drained, every other one stays as it was. */
START_TEST(events_reach_their_group)
{
	static const int hit[] = { 0, 1, 17, 999, 1000, 1536, NGROUPS - 1 };
	size_t k;
	int i;

	for (k = 0; k < sizeof(hit) / sizeof(hit[0]); k++)
		signal_event(g[hit[k]]);
	/* Another group's fd signalled, then taken out of the set as a
	 * closed group's would be: it must not be served. */
	signal_event(g[500]);
	mri_group_unpoll(g[500]);
	ck_assert_int_eq(mr_ctx_worker_dispatch(ctx, 0), 0);
	for (i = 0; i < NGROUPS; i++) {
		bool signalled = i == 500;

		ck_assert_msg(readable(g[i]->event_fd) == signalled,
			      "group %d: event fd %s", i,
			      signalled ? "drained" : "still readable");
	}
}
END_TEST

START_TEST(close_and_reopen)
{
	uint64_t old_ids[NGROUPS], max_id = 0, *ids;
	struct mr_group *found;
	char path[32];
	size_t n;
	int i;

	for (i = 0; i < NGROUPS; i++) {
		old_ids[i] = g[i]->id;
		if (g[i]->id > max_id)
			max_id = g[i]->id;
	}
	/* Every other group closed: gone from the registry. */
	for (i = 0; i < NGROUPS; i += 2)
		ck_assert_int_eq(mr_group_close(g[i]), 0);
	for (i = 0; i < NGROUPS; i++) {
		found = mri_ctx_get_group(ctx, old_ids[i]);
		if (i % 2 == 0) {
			ck_assert_ptr_null(found);
			continue;
		}
		ck_assert_ptr_eq(found, g[i]);
		mri_ctx_put_group(ctx, found);
	}
	/* Reopened: new ids, above every id used before. */
	for (i = 0; i < NGROUPS; i += 2) {
		snprintf(path, sizeof(path), "/g%d", i);
		ck_assert_int_eq(mr_group_open(ctx, path, "sim", &g[i]), 0);
		ck_assert_uint_gt(g[i]->id, max_id);
		found = mri_ctx_get_group(ctx, g[i]->id);
		ck_assert_ptr_eq(found, g[i]);
		mri_ctx_put_group(ctx, found);
	}
	for (i = 0; i < NGROUPS; i += 2)
		ck_assert_ptr_null(mri_ctx_get_group(ctx, old_ids[i]));
	/* The reopened ones come after the others, in their order. */
	ck_assert_int_eq(mri_ctx_group_ids(ctx, &ids, &n), 0);
	ck_assert_uint_eq(n, NGROUPS);
	for (i = 0; i < NGROUPS / 2; i++) {
		ck_assert_uint_eq(ids[i], g[2 * i + 1]->id);
		ck_assert_uint_eq(ids[NGROUPS / 2 + i], g[2 * i]->id);
	}
	free(ids);
	/* Events still reach reopened groups. */
	signal_event(g[0]);
	signal_event(g[1]);
	ck_assert_int_eq(mr_ctx_worker_dispatch(ctx, 0), 0);
	ck_assert(!readable(g[0]->event_fd));
	ck_assert(!readable(g[1]->event_fd));
}
END_TEST

/* A reference held (the worker's, while it waits for a group) keeps a
 * closing group alive: close returns only after it is dropped. */
static atomic_bool dropping;

static void *put_later(void *arg)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	atomic_store(&dropping, true);
	mri_ctx_put_group(ctx, arg);
	return NULL;
}

START_TEST(close_waits_for_references)
{
	struct mr_group *found = mri_ctx_get_group(ctx, g[7]->id);
	pthread_t t;

	ck_assert_ptr_eq(found, g[7]);
	atomic_store(&dropping, false);
	ck_assert_int_eq(pthread_create(&t, NULL, put_later, found), 0);
	ck_assert_int_eq(mr_group_close(g[7]), 0);
	ck_assert(atomic_load(&dropping));
	ck_assert_int_eq(pthread_join(t, NULL), 0);
}
END_TEST

static Suite *registry_suite(void)
{
	Suite *s = suite_create("registry");
	TCase *tc = tcase_create("many-groups");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, every_id_finds_its_group);
	tcase_add_test(tc, events_reach_their_group);
	tcase_add_test(tc, close_and_reopen);
	tcase_add_test(tc, close_waits_for_references);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(registry_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
