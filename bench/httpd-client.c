/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The keep-alive load client of bench-httpd (httpd-client.h). */
#define _GNU_SOURCE /* strncasecmp, memmem */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "bench.h"
#include "httpd-client.h"

#define MAX_CONNECTIONS 64
#define RECV_BYTES (256 * 1024)
#define HEADER_MAX (16 * 1024)
/* A response that takes longer than this is an error, not a sample. */
#define IO_TIMEOUT_S 30

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform on (0, 1]: never 0, whose log Box-Muller cannot take. */
static double uniform(uint64_t *state)
{
	return ((splitmix64(state) >> 11) + 1) * 0x1.0p-53;
}

int httpd_write_files(const char *dir, uint32_t nfiles, uint64_t file_bytes,
		      volatile sig_atomic_t *stop)
{
	char path[PATH_MAX], tag[24];
	char *buf = malloc(file_bytes);
	uint32_t i;
	uint64_t k;
	int fd, e = 0;

	if (!buf) {
		fprintf(stderr, "%s: writing %s: out of memory\n",
			program_invocation_short_name, dir);
		return -1;
	}
	for (k = 0; k < file_bytes; k++)
		buf[k] = (char)('a' + k % 26);
	for (i = 0; i < nfiles && !e && !*stop; i++) {
		snprintf(path, sizeof(path), "%s/" HTTPD_FILE_NAME_FMT, dir, i);
		httpd_file_tag(tag, i);
		memcpy(buf, tag, HTTPD_FILE_TAG_LEN);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			  0644);
		if (fd < 0 ||
		    write(fd, buf, file_bytes) != (ssize_t)file_bytes ||
		    fsync(fd) ||
		    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)) {
			fprintf(stderr, "%s: writing %s: %s\n",
				program_invocation_short_name, path,
				strerror(errno));
			e = -1;
		}
		if (fd >= 0)
			close(fd);
	}
	free(buf);
	return e || *stop ? -1 : 0;
}

int httpd_drop_files(const char *dir, uint32_t nfiles)
{
	char path[PATH_MAX];
	uint32_t i;
	int fd, e = 0;

	for (i = 0; i < nfiles; i++) {
		snprintf(path, sizeof(path), "%s/" HTTPD_FILE_NAME_FMT, dir, i);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED)) {
			fprintf(stderr, "%s: dropping the cache of %s: "
				"%s\n", program_invocation_short_name, path,
				strerror(errno));
			e = -1;
		}
		if (fd >= 0)
			close(fd);
	}
	return e;
}

void httpd_schedule(uint32_t *files, size_t requests, uint32_t nfiles,
		    double sigma, uint64_t seed)
{
	const double mid = (nfiles - 1) / 2.0;
	uint64_t state = seed;
	size_t i;

	for (i = 0; i < requests; i++) {
		/* Box-Muller, one of the pair. */
		double z = sqrt(-2 * log(uniform(&state))) *
			   cos(2 * M_PI * uniform(&state));
		double x = round(mid + sigma * z);

		files[i] = x < 0 ? 0 : x > nfiles - 1 ? nfiles - 1 :
			   (uint32_t)x;
	}
}

struct shared {
	const struct httpd_load *load;
	struct httpd_result *res;
	atomic_size_t next;        /* the next request to send */
	atomic_bool failed;
	pthread_mutex_t lock;      /* res->error */
	uint64_t start_ns;
};

struct conn {
	struct shared *sh;
	int fd;
	char *buf;                 /* RECV_BYTES */
	uint64_t end_ns;           /* when its last response was read */
};

static void fail(struct shared *sh, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&sh->lock);
	if (!sh->res->error[0]) {
		va_start(ap, fmt);
		vsnprintf(sh->res->error, sizeof(sh->res->error), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&sh->lock);
	atomic_store(&sh->failed, true);
}

static int connect_server(uint16_t port, char *err, size_t len)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = IO_TIMEOUT_S };
	int one = 1, fd;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		snprintf(err, len, "connecting to 127.0.0.1:%u: %s",
			 (unsigned)port, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* The value of header name in the header block hdr (NUL-terminated,
 * lines ending in CRLF), or NULL. */
static const char *header(const char *hdr, const char *name)
{
	size_t len = strlen(name);
	const char *line = strstr(hdr, "\r\n");

	for (; line && line[2]; line = strstr(line + 2, "\r\n")) {
		const char *p = line + 2;

		if (!strncasecmp(p, name, len) && p[len] == ':') {
			p += len + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			return p;
		}
	}
	return NULL;
}

/* Reads one response to the request for file; 0 or -1 (failed). */
static int read_response(struct conn *c, uint32_t file)
{
	struct shared *sh = c->sh;
	uint64_t want = sh->load->file_bytes, body = 0;
	char tag[24], got[HTTPD_FILE_TAG_LEN];
	const char *end = NULL, *cl;
	size_t have = 0, hlen, taglen = 0, take;
	ssize_t k;

	/* The header block, and whatever of the body came with it. */
	while (!end) {
		if (have == HEADER_MAX) {
			fail(sh, "file %u: no end of headers in %d bytes",
			     file, HEADER_MAX);
			return -1;
		}
		k = recv(c->fd, c->buf + have, HEADER_MAX - have, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			fail(sh, "file %u: %s before the headers' end", file,
			     k ? strerror(errno) : "connection closed");
			return -1;
		}
		have += (size_t)k;
		end = memmem(c->buf, have, "\r\n\r\n", 4);
	}
	hlen = (size_t)(end - c->buf) + 4;
	c->buf[hlen - 2] = '\0'; /* the headers, ending in one CRLF */
	if (strncmp(c->buf, "HTTP/1.1 200 ", 13)) {
		fail(sh, "file %u: status line \"%.*s\"", file,
		     (int)strcspn(c->buf, "\r"), c->buf);
		return -1;
	}
	cl = header(c->buf, "Content-Length");
	if (!cl || strtoull(cl, NULL, 10) != want ||
	    header(c->buf, "Transfer-Encoding")) {
		fail(sh, "file %u: Content-Length %.*s, not %llu", file,
		     cl ? (int)strcspn(cl, "\r") : 4, cl ? cl : "none",
		     (unsigned long long)want);
		return -1;
	}
	httpd_file_tag(tag, file);
	/* The body: its first bytes kept for the tag, the rest counted. */
	k = (ssize_t)(have - hlen);
	memmove(c->buf, c->buf + hlen, (size_t)k);
	for (;;) {
		if (body + (uint64_t)k > want) {
			fail(sh, "file %u: %llu bytes past the body", file,
			     (unsigned long long)(body + (uint64_t)k - want));
			return -1;
		}
		take = (size_t)k < HTTPD_FILE_TAG_LEN - taglen ?
		       (size_t)k : HTTPD_FILE_TAG_LEN - taglen;
		memcpy(got + taglen, c->buf, take);
		taglen += take;
		body += (uint64_t)k;
		if (body == want)
			break;
		k = recv(c->fd, c->buf, RECV_BYTES, 0);
		if (k < 0 && errno == EINTR) {
			k = 0;
			continue;
		}
		if (k <= 0) {
			fail(sh, "file %u: %s after %llu of %llu body bytes",
			     file, k ? strerror(errno) : "connection closed",
			     (unsigned long long)body,
			     (unsigned long long)want);
			return -1;
		}
	}
	if (taglen < HTTPD_FILE_TAG_LEN ||
	    memcmp(got, tag, HTTPD_FILE_TAG_LEN)) {
		fail(sh, "file %u: the body does not begin with its tag",
		     file);
		return -1;
	}
	return 0;
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	struct shared *sh = c->sh;
	const struct httpd_load *load = sh->load;
	char req[128];
	size_t i;
	int n;

	while (!atomic_load(&sh->failed)) {
		uint64_t t0;

		if (*load->stop) {
			fail(sh, "interrupted");
			break;
		}
		i = atomic_fetch_add(&sh->next, 1);
		if (i >= load->requests)
			break;
		n = snprintf(req, sizeof(req), "GET /" HTTPD_FILE_NAME_FMT
			     " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
			     load->files[i]);
		t0 = bench_now_ns();
		if (send_all(c->fd, req, (size_t)n)) {
			fail(sh, "file %u: sending the request: %s",
			     load->files[i], strerror(errno));
			break;
		}
		if (read_response(c, load->files[i]))
			break;
		c->end_ns = bench_now_ns();
		sh->res->latency_ns[i] = c->end_ns - t0;
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int httpd_run(const struct httpd_load *load, struct httpd_result *res)
{
	struct conn conns[MAX_CONNECTIONS];
	pthread_t threads[MAX_CONNECTIONS];
	struct shared sh = { .load = load, .res = res };
	unsigned i, opened = 0, started = 0;
	uint64_t end = 0;

	res->error[0] = '\0';
	res->wall_ns = 0;
	if (load->connections < 1 || load->connections > MAX_CONNECTIONS) {
		snprintf(res->error, sizeof(res->error),
			 "%u connections: 1 to %d", load->connections,
			 MAX_CONNECTIONS);
		return -1;
	}
	atomic_init(&sh.next, 0);
	atomic_init(&sh.failed, false);
	pthread_mutex_init(&sh.lock, NULL);
	for (; opened < load->connections; opened++) {
		struct conn *c = &conns[opened];

		c->sh = &sh;
		c->end_ns = 0;
		c->buf = malloc(RECV_BYTES);
		c->fd = c->buf ? connect_server(load->port, res->error,
						sizeof(res->error)) : -1;
		if (c->fd < 0) {
			if (!c->buf)
				snprintf(res->error, sizeof(res->error),
					 "out of memory");
			free(c->buf);
			break;
		}
	}
	if (opened == load->connections) {
		/* Creating the threads takes microseconds of a pass of
		 * seconds: the clock starts before. */
		sh.start_ns = bench_now_ns();
		for (; started < opened; started++) {
			int e = pthread_create(&threads[started], NULL,
					       conn_main, &conns[started]);

			if (e) {
				fail(&sh, "starting a connection thread: %s",
				     strerror(e));
				break;
			}
		}
		for (i = 0; i < started; i++) {
			pthread_join(threads[i], NULL);
			if (conns[i].end_ns > end)
				end = conns[i].end_ns;
		}
		res->wall_ns = end > sh.start_ns ? end - sh.start_ns : 0;
	}
	for (i = 0; i < opened; i++) {
		close(conns[i].fd);
		free(conns[i].buf);
	}
	pthread_mutex_destroy(&sh.lock);
	if (opened < load->connections || atomic_load(&sh.failed))
		return -1;
	qsort(res->latency_ns, load->requests, sizeof(uint64_t), cmp_u64);
	return 0;
}
