/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memreclaimd's log: one line per event on stderr. Under systemd, when
 * stderr is the journal stream that JOURNAL_STREAM names (its device and
 * inode, as sd-daemon(3) says to check), each line starts with its syslog
 * priority, "<N>", which journald takes as the line's priority; otherwise
 * errors and warnings say "error:" and "warning:". Every line names the
 * program. The library's messages (mr_ctx_set_log()) come through here
 * too, from any thread: each line is written with one write(2).
 */
#ifndef MR_EXAMPLES_MEMRECLAIMD_LOG_H
#define MR_EXAMPLES_MEMRECLAIMD_LOG_H

#include <stdbool.h>
#include <stddef.h>

#ifndef MRD_PROG
#define MRD_PROG "memreclaimd"
#endif

/* Looks at JOURNAL_STREAM and stderr once; call before logging. */
void mrd_log_init(void);

/* Whether the lines carry "<N>" prefixes. */
bool mrd_log_prefixed(void);

/* Logs one line at level (an enum mr_log_level, syslog's numbers). */
__attribute__((format(printf, 2, 3)))
void mrd_log(int level, const char *fmt, ...);

/* What to give as the prefix of a module that prints its own lines
 * ("PREFIX: ..." on stderr, as policyopt.h): the program's name, with
 * "<3>" under the journal, then ": where" when where is not NULL. */
const char *mrd_log_prefix(char *buf, size_t len, const char *where);

/* An mr_log_fn for the library's messages. */
void mrd_log_library(int level, const char *msg, void *userdata);

#endif /* MR_EXAMPLES_MEMRECLAIMD_LOG_H */
