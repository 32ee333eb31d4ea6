/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The load of bench-httpd: HTTP/1.1 keep-alive GETs of a fixed request
 * sequence to a server on 127.0.0.1, over a few connections, each a
 * thread that sends one request and reads its whole response before the
 * next (no pipelining). Every response must be "HTTP/1.1 200", carry a
 * Content-Length of the file's size, deliver that many bytes and begin
 * with the file's tag (httpd_file_tag()); anything else ends the pass as
 * an error.
 */
#ifndef MEMRECLAIM_BENCH_HTTPD_CLIENT_H
#define MEMRECLAIM_BENCH_HTTPD_CLIENT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A file's name below the docroot: "f" and its index in 5 digits (at
 * most 99999 files). */
#define HTTPD_FILE_NAME_FMT "f%05u"
#define HTTPD_FILE_TAG_LEN 7

/* The HTTPD_FILE_TAG_LEN bytes a file's content begins with, its name and
 * a newline, into tag (NUL-terminated). */
static inline void httpd_file_tag(char tag[static 24], uint32_t file)
{
	snprintf(tag, 24, HTTPD_FILE_NAME_FMT "\n", file);
}

/* Writes nfiles files of file_bytes each into dir (an existing
 * directory on a disk filesystem), named HTTPD_FILE_NAME_FMT, each
 * beginning with its tag and the rest the letters a to z; each is
 * fsynced and dropped from the page cache (POSIX_FADV_DONTNEED), so that
 * its first read comes from the disk. file_bytes is at least
 * HTTPD_FILE_TAG_LEN; nfiles at most 99999. Stops when *stop becomes
 * non-zero. 0, or -1 (said on stderr, or stopped). */
int httpd_write_files(const char *dir, uint32_t nfiles, uint64_t file_bytes,
		      volatile sig_atomic_t *stop);

/* Drops the clean page cache of the nfiles files httpd_write_files()
 * wrote into dir (POSIX_FADV_DONTNEED per file), wherever it is charged.
 * 0, or -1 (said on stderr). */
int httpd_drop_files(const char *dir, uint32_t nfiles);

/* Fills files[0..requests) with file indexes drawn from a normal
 * distribution of mean (nfiles - 1) / 2 and standard deviation sigma
 * (in files), rounded and clamped to [0, nfiles); the same seed gives the
 * same sequence. */
void httpd_schedule(uint32_t *files, size_t requests, uint32_t nfiles,
		    double sigma, uint64_t seed);

struct httpd_load {
	uint16_t port;            /* on 127.0.0.1 */
	unsigned connections;     /* 1 to 64 */
	size_t requests;
	const uint32_t *files;    /* requests entries: each request's file */
	uint64_t file_bytes;      /* the size of every file */
	volatile sig_atomic_t *stop; /* set: end the pass (an error) */
};

struct httpd_result {
	uint64_t wall_ns;       /* first request sent to last response read */
	uint64_t *latency_ns;   /* requests entries, sorted ascending */
	char error[256];        /* the first error, "" when none */
};

/* Runs one pass: connects, sends every request, reads every response.
 * res->latency_ns must hold load->requests entries; each is the time
 * from the request's first byte sent to its response's last byte read
 * (CLOCK_MONOTONIC). Returns 0, or -1 with res->error set. */
int httpd_run(const struct httpd_load *load, struct httpd_result *res);

#endif
