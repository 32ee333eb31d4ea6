/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* dd: a sequential copy that fills the page cache (workload.h). */
#include "config.h"

#include <errno.h>

#include "workload.h"

static void dd_task(struct sim_task *t, void *arg)
{
	struct sim_dd *dd = arg;
	struct sim_machine *m = dd->m;
	uint64_t off, n;
	int r = 0;

	(void)t;
	for (off = 0; off < dd->file_pages && r == 0; off += n) {
		n = dd->file_pages - off;
		if (n > dd->block_pages)
			n = dd->block_pages;
		r = dd->write ? sim_file_write(m, dd->file, off, n) :
				sim_file_read(m, dd->file, off, n);
	}
	if (r == 0 && dd->write && dd->fsync)
		sim_file_sync(m, dd->file);
	dd->result = r;
	dd->done_ns = sim_now(m);
}

int sim_dd_spawn(struct sim_machine *m, struct sim_memcg *g,
		 uint64_t start_ns, struct sim_dd *dd)
{
	if (!dd->file_pages || !dd->block_pages)
		return -EINVAL;
	dd->m = m;
	dd->file = sim_file_new(m, dd->file_pages);
	if (dd->file == SIM_NOPAGE)
		return -ENOMEM;
	dd->result = 0;
	dd->done_ns = 0;
	if (!sim_task_spawn(m, dd->write ? "dd of=" : "dd if=", g, start_ns,
			    dd_task, dd)) {
		sim_obj_free(m, dd->file);
		return -ENOMEM;
	}
	return 0;
}
