/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What things cost in the simulator, one named set per era. Every value
 * says where it comes from; docs/simulator.md has the table. Scenarios
 * default to the 2011 set they reproduce, traces to today's.
 */
#include "config.h"

#include <string.h>

#include "sim.h"

#define US 1000ULL
#define MS 1000000ULL

static const struct sim_costs costs_2011 = {
	.name = "2011",
	/* S4's two published timings: 3.6 GiB (944337 pages) of clean
	 * inactive cache freed in 32-page calls in 0.252 s and in 1024-page
	 * calls in 0.178 s. The fixed cost is paid per shrink_node() pass
	 * (one per priority level a call goes through, each walking the
	 * shrinkers): the model's S4 makes 30711 passes for the 28285
	 * 32-page calls (a list below 512 MiB needs more than priority 12
	 * for 32 pages) and 3677 for the 909 1024-page calls. So
	 * 30711 c + 944337 p = 0.252 s and 3677 c + 944337 p = 0.178 s:
	 * c = 2.74 us a pass, p = 178 ns per page scanned and freed, split
	 * here as 100 to scan and 78 to free. (The reference's trace of one
	 * 32-page call, 177 us in the shrinkers, cannot be the average:
	 * 28285 such calls would take 5 s.) */
	.reclaim_call_ns = 2737,
	.scan_page_ns = 100,
	.free_page_ns = 78,
	.activate_page_ns = 50,
	/* A first guess with no published source. S1's limit reclaim time
	 * against the worker's does not come from contention: its clients'
	 * reclaim time is the naps below (reclaim_nap_ns). */
	.lru_contention = 5000,
	/* congestion_wait(BLK_RW_ASYNC, HZ/10) in 2011's shrink paths. */
	.dirty_stall_ns = 100 * MS,
	/* do_try_to_free_pages() up to 2.6.36 (RHEL 6's 2.6.32, the kernel
	 * of most servers in 2011): "Take a nap" after every pass below
	 * DEF_PRIORITY - 2 that scanned pages but left the target unmet,
	 * congestion_wait(BLK_RW_ASYNC, HZ/10) whether or not anything was
	 * congested. A limit reclaim that meets a short inactive list goes
	 * that deep: S1's max of 1.8 s and its p99 without a margin are such
	 * naps (the model's add up to more than the 13.85 s of clients'
	 * reclaim the RFC measured: docs/simulator.md, Known gaps). */
	.reclaim_nap_ns = 100 * MS,
	.minor_fault_ns = 1 * US,
	.hpage_fault_ns = 60 * US,
	/* A 2011 SATA disk: 8 ms a seek, 100 MB/s. */
	.disk_latency_ns = 8 * MS,
	.disk_page_ns = 40 * US,
	/* VM_MAX_READAHEAD, 128 KiB: a buffered read is read in windows
	 * of at most 32 pages (ondemand_readahead(), 2.6.23 to 4.9). */
	.readahead_pages = 32,
	.swap_out_page_ns = 40 * US,
	.zswap_store_page_ns = 10 * US,
	.zswap_load_page_ns = 5 * US,
	.copy_page_ns = 1 * US,
	.worker_wakeup_ns = 50 * US,
	.usage_read_ns = 2 * US,
};

static const struct sim_costs costs_today = {
	.name = "today",
	/* The reference results of S1 today (docs/simulator.md): a reclaim
	 * call of clean cache 56-86 us (1-1.5 ms at p99) on kernel 6.18. A
	 * call for SWAP_CLUSTER_MAX pages in a group of a few hundred MiB
	 * makes three priority passes (each list scanned by its own size >>
	 * priority): 20 us a pass gives about 60 us a call. */
	.reclaim_call_ns = 20 * US,
	.scan_page_ns = 40,
	.free_page_ns = 40,
	.activate_page_ns = 20,
	.lru_contention = 300,
	/* No congestion_wait since 5.16 (reclaim_throttle on writeback
	 * instead, about 1 ms in practice). */
	.dirty_stall_ns = 1 * MS,
	/* Since 2.6.37 wait_iff_congested(), since 5.16 reclaim_throttle():
	 * a short pass sleeps only on congested writeback, which clean
	 * cache never is. */
	.reclaim_nap_ns = 0,
	.minor_fault_ns = 500,
	.hpage_fault_ns = 25 * US,
	/* NVMe: 80 us a request, 2 GB/s. */
	.disk_latency_ns = 80 * US,
	.disk_page_ns = 2 * US,
	/* Since 4.10 ("mm: don't cap request size based on read-ahead
	 * setting") a large read() is read up to the device's io_pages
	 * at once, not in read_ahead_kb windows: a read's misses in one
	 * request. */
	.readahead_pages = 0,
	.swap_out_page_ns = 4 * US,
	.zswap_store_page_ns = 3 * US,
	.zswap_load_page_ns = 2 * US,
	.copy_page_ns = 300,
	/* A pread of usage on a kept fd of cgroup v1 1.5 us on an idle
	 * machine (bench-fastpath reads 1.6-3.5 us under load,
	 * docs/PERFORMANCE.md); an eventfd wake-up and a context switch a few tens of us on a busy
	 * machine. */
	.worker_wakeup_ns = 30 * US,
	.usage_read_ns = 1500,
};

const struct sim_costs *sim_costs_find(const char *name)
{
	if (!name)
		return NULL;
	if (strcmp(name, costs_2011.name) == 0)
		return &costs_2011;
	if (strcmp(name, costs_today.name) == 0)
		return &costs_today;
	return NULL;
}
