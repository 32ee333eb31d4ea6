/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* memreclaimd's configuration (memreclaimd-config.h), parsed with libinih. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memreclaim.h>

#include "memreclaimd-config.h"
#include "memreclaimd-log.h"

/* Lines up to this long (a [group] header names a path). */
#define MAX_LINE_BYTES 8192

const char *const memreclaimd_config_keys[] = {
	"daemon.backend", "daemon.worker-sched", "daemon.stats-interval",
	"daemon.stats-format", "daemon.metrics-file",
	"daemon.metrics-interval", "daemon.metrics-port",
	"group.margin", "group.hysteresis", "group.batch",
	NULL,
};

static void value_free(struct mrd_value *v)
{
	free(v->text);
	free(v->where);
	*v = (struct mrd_value){ 0 };
}

static int value_set(struct mrd_value *v, const char *text, const char *where)
{
	char *t = strdup(text), *w = strdup(where ? where : "");

	if (!t || !w) {
		free(t);
		free(w);
		return -ENOMEM;
	}
	value_free(v);
	v->text = t;
	v->where = w;
	return 0;
}

void mrd_daemon_defaults(struct mrd_daemon *d)
{
	*d = (struct mrd_daemon){
		.sched = MR_SCHED_NICE,
		.stats_interval_s = MRD_DEFAULT_STATS_INTERVAL_S,
		.metrics_interval_s = MRD_DEFAULT_METRICS_INTERVAL_S,
	};
}

void mrd_daemon_free(struct mrd_daemon *d)
{
	value_free(&d->backend);
	value_free(&d->worker_sched);
	value_free(&d->stats_interval);
	value_free(&d->stats_format);
	value_free(&d->metrics_file);
	value_free(&d->metrics_interval);
	value_free(&d->metrics_port);
}

static int bad(const char *where, const char *key, const char *value,
	       const char *why)
{
	mrd_log(MR_LOG_ERR, "%s: %s '%s': %s", where, key, value, why);
	return -EINVAL;
}

static int parse_seconds(const char *where, const char *key, const char *s,
			 uint64_t min, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (s[0] < '0' || s[0] > '9')
		return bad(where, key, s, "not a whole number of seconds");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return bad(where, key, s, "not a whole number of seconds");
	if (v > MRD_MAX_SECONDS)
		return bad(where, key, s, "more than a year");
	if (v < min)
		return bad(where, key, s, "must be at least 1");
	*out = v;
	return 0;
}

static bool real_backend(const char *name)
{
	return strcmp(name, "auto") == 0 || strcmp(name, "cgroup1") == 0 ||
	       strcmp(name, "cgroup2") == 0;
}

int mrd_daemon_set(struct mrd_daemon *d, const char *key, const char *value,
		   const char *where)
{
	struct mrd_value *v;
	unsigned long long port;
	char *end;
	long n;
	int r;

	if (strcmp(key, "backend") == 0) {
		if (!real_backend(value))
			return bad(where, key, value,
				   "expected auto, cgroup1 or cgroup2");
		v = &d->backend;
	} else if (strcmp(key, "worker-sched") == 0) {
		if (strcmp(value, "idle") == 0) {
			d->sched = MR_SCHED_IDLE;
			d->nice = 0;
		} else if (strncmp(value, "nice:", 5) == 0) {
			errno = 0;
			n = strtol(value + 5, &end, 10);
			if (errno || end == value + 5 || *end || n < -20 ||
			    n > 19)
				return bad(where, key, value,
					   "nice level must be -20..19");
			d->sched = MR_SCHED_NICE;
			d->nice = (int)n;
		} else {
			return bad(where, key, value,
				   "expected idle or nice:N");
		}
		v = &d->worker_sched;
	} else if (strcmp(key, "stats-interval") == 0) {
		r = parse_seconds(where, key, value, 0, &d->stats_interval_s);
		if (r < 0)
			return r;
		v = &d->stats_interval;
	} else if (strcmp(key, "stats-format") == 0) {
		if (strcmp(value, "text") != 0 && strcmp(value, "json") != 0)
			return bad(where, key, value, "expected text or json");
		d->json = strcmp(value, "json") == 0;
		v = &d->stats_format;
	} else if (strcmp(key, "metrics-file") == 0) {
		if (value[0] != '/')
			return bad(where, key, value, "not an absolute path");
		if (strlen(value) >= PATH_MAX - 16)
			return bad(where, key, value, "path too long");
		v = &d->metrics_file;
	} else if (strcmp(key, "metrics-interval") == 0) {
		r = parse_seconds(where, key, value, 1,
				  &d->metrics_interval_s);
		if (r < 0)
			return r;
		v = &d->metrics_interval;
	} else if (strcmp(key, "metrics-port") == 0) {
		errno = 0;
		port = strtoull(value, &end, 10);
		if (value[0] < '0' || value[0] > '9' || errno || *end ||
		    port > 65535)
			return bad(where, key, value,
				   "expected a TCP port, 1..65535 (0: none)");
		d->metrics_port_n = (unsigned)port;
		v = &d->metrics_port;
	} else {
		mrd_log(MR_LOG_ERR, "%s: [daemon] has no key '%s'", where,
			key);
		return -EINVAL;
	}
	r = value_set(v, value, where);
	if (r < 0)
		mrd_log(MR_LOG_ERR, "%s: %s", where, strerror(-r));
	return r;
}

static void section_free(struct mrd_section *s)
{
	mrd_pattern_free(&s->pattern);
	free(s->where);
	value_free(&s->margin);
	value_free(&s->hysteresis);
	value_free(&s->batch);
	free(s->policy_key);
}

void mrd_config_free(struct mrd_config *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nsections; i++)
		section_free(&c->sections[i]);
	free(c->sections);
	mrd_daemon_free(&c->daemon);
	free(c->path);
	*c = (struct mrd_config){ 0 };
}

/* The parser's state over all the files. */
struct load {
	struct mrd_config cfg;
	FILE *f;
	const char *file;
	unsigned line;         /* of the line the reader gave last */
	bool overlong;         /* that line did not fit */
	int errors;
	bool nomem;
};

static void where_of(const struct load *l, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%u", l->file, l->line);
}

/* The section named header ("group PATTERN"), added on first sight. */
static struct mrd_section *section_get(struct load *l, const char *header,
				       const char *where)
{
	struct mrd_config *c = &l->cfg;
	struct mrd_section *s, *grown;
	struct mrd_pattern p;
	const char *why, *text;
	size_t i;
	int r;

	text = header + strlen("group");
	text += strspn(text, " \t");
	r = mrd_pattern_parse(text, &p, &why);
	if (r < 0) {
		mrd_log(MR_LOG_ERR, "%s: [%s]: %s", where, header, why);
		if (r == -ENOMEM)
			l->nomem = true;
		return NULL;
	}
	for (i = 0; i < c->nsections; i++)
		if (strcmp(c->sections[i].pattern.text, p.text) == 0) {
			mrd_pattern_free(&p);
			return &c->sections[i];
		}
	grown = realloc(c->sections, (c->nsections + 1) * sizeof(*grown));
	if (!grown)
		goto nomem;
	c->sections = grown;
	s = &c->sections[c->nsections];
	*s = (struct mrd_section){ .pattern = p, .where = strdup(where) };
	if (!s->where)
		goto nomem;
	c->nsections++;
	return s;
nomem:
	mrd_pattern_free(&p);
	l->nomem = true;
	return NULL;
}

static int handler(void *user, const char *section, const char *name,
		   const char *value)
{
	struct load *l = user;
	struct mrd_section *s;
	struct mrd_value *v;
	char where[PATH_MAX + 32];

	where_of(l, where, sizeof(where));
	if (l->overlong)
		return 1; /* reported by the reader */
	if (strcmp(section, "daemon") == 0) {
		if (mrd_daemon_set(&l->cfg.daemon, name, value, where) < 0)
			goto err;
		return 1;
	}
	if (strncmp(section, "group", 5) != 0 ||
	    (section[5] != ' ' && section[5] != '\t')) {
		mrd_log(MR_LOG_ERR, "%s: %s%s%s: not a section memreclaimd "
			"knows ([daemon] or [group PATTERN])", where,
			*section ? "[" : "key outside any section",
			section, *section ? "]" : "");
		goto err;
	}
	s = section_get(l, section, where);
	if (!s)
		goto err;
	if (strcmp(name, "margin") == 0)
		v = &s->margin;
	else if (strcmp(name, "hysteresis") == 0)
		v = &s->hysteresis;
	else if (strcmp(name, "batch") == 0)
		v = &s->batch;
	else {
		mrd_log(MR_LOG_ERR, "%s: [group] has no key '%s' (margin, "
			"hysteresis, batch)", where, name);
		goto err;
	}
	if (value_set(v, value, where) < 0) {
		l->nomem = true;
		goto err;
	}
	return 1;
err:
	l->errors++;
	return 0;
}

/* fgets for libinih, counting lines and refusing one too long. */
static char *reader(char *str, int num, void *stream)
{
	struct load *l = stream;
	size_t len;
	int ch;

	if (!fgets(str, num, l->f))
		return NULL;
	l->line++;
	l->overlong = false;
	len = strlen(str);
	if (len == (size_t)num - 1 && str[len - 1] != '\n' && !feof(l->f)) {
		mrd_log(MR_LOG_ERR, "%s:%u: a line longer than %d bytes",
			l->file, l->line, num - 2);
		l->errors++;
		l->overlong = true;
		while ((ch = fgetc(l->f)) != EOF && ch != '\n')
			;
		strcpy(str, "\n");
	}
	return str;
}

/* Headers of sections with no keys: libinih calls the handler for keys
 * alone, so an empty [group] would vanish in silence. */
static void check_headers(struct load *l, const char *file)
{
	char line[MAX_LINE_BYTES], where[PATH_MAX + 32], *s, *e;
	unsigned n = 0;
	FILE *f = fopen(file, "re");
	size_t i;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		n++;
		s = line + strspn(line, " \t");
		if (*s != '[' || !(e = strchr(s, ']')))
			continue;
		*e = '\0';
		s++;
		if (strncmp(s, "group", 5) != 0 ||
		    (s[5] != ' ' && s[5] != '\t'))
			continue;
		for (i = 0; i < l->cfg.nsections; i++) {
			struct mrd_pattern p;
			const char *why;
			bool same;

			if (mrd_pattern_parse(s + 5 + strspn(s + 5, " \t"),
					      &p, &why) < 0)
				break;
			same = strcmp(p.text,
				      l->cfg.sections[i].pattern.text) == 0;
			mrd_pattern_free(&p);
			if (same)
				break;
		}
		if (i == l->cfg.nsections) {
			snprintf(where, sizeof(where), "%s:%u", file, n);
			mrd_log(MR_LOG_ERR, "%s: [%s] has no keys (give at "
				"least margin = auto or a size)", where, s);
			l->errors++;
		}
	}
	fclose(f);
}

static int load_file(struct load *l, const char *file)
{
	int r;

	l->f = fopen(file, "re");
	if (!l->f) {
		mrd_log(MR_LOG_ERR, "%s: %s", file, strerror(errno));
		l->errors++;
		return -errno;
	}
	l->file = file;
	l->line = 0;
	r = ini_parse_stream(reader, l, handler, l);
	fclose(l->f);
	l->f = NULL;
	if (r == -2)
		l->nomem = true;
	if (r > 0 && l->errors == 0) {
		/* A line libinih itself refused: no '=', no ']'. */
		mrd_log(MR_LOG_ERR, "%s:%d: not a [section], a key = value "
			"or a comment", file, r);
		l->errors++;
	}
	check_headers(l, file);
	return 0;
}

static int conf_filter(const struct dirent *d)
{
	size_t len = strlen(d->d_name);

	return d->d_name[0] != '.' && len > 5 &&
	       strcmp(d->d_name + len - 5, ".conf") == 0;
}

/* The drop-ins of path.d, in lexical order (strcmp, as systemd). */
static int load_dropins(struct load *l, const char *path)
{
	char dir[PATH_MAX], file[PATH_MAX];
	struct dirent **names;
	int n, i, r = 0;

	snprintf(dir, sizeof(dir), "%s.d", path);
	n = scandir(dir, &names, conf_filter, alphasort);
	if (n < 0) {
		if (errno == ENOENT)
			return 0;
		mrd_log(MR_LOG_ERR, "%s: %s", dir, strerror(errno));
		l->errors++;
		return -errno;
	}
	for (i = 0; i < n; i++) {
		if ((size_t)snprintf(file, sizeof(file), "%s/%s", dir,
				     names[i]->d_name) >= sizeof(file)) {
			mrd_log(MR_LOG_ERR, "%s/%s: path too long", dir,
				names[i]->d_name);
			l->errors++;
		} else {
			load_file(l, file);
		}
		free(names[i]);
	}
	free(names);
	return r;
}

/* Parses a section's values into its policy and its key. */
static int section_finish(struct mrd_section *s)
{
	struct policy_opts *p = &s->policy;
	char prefix[PATH_MAX + 64];
	int r = 0;

	*p = (struct policy_opts){ 0 };
	if (s->margin.text)
		r = policyopt_parse(mrd_log_prefix(prefix, sizeof(prefix),
						   s->margin.where),
				    "margin", s->margin.text, p);
	else
		r = policyopt_parse("", "margin", "auto", p);
	if (r == 0 && s->hysteresis.text)
		r = policyopt_parse(mrd_log_prefix(prefix, sizeof(prefix),
						   s->hysteresis.where),
				    "hysteresis", s->hysteresis.text, p);
	if (r == 0 && s->batch.text)
		r = policyopt_parse(mrd_log_prefix(prefix, sizeof(prefix),
						   s->batch.where),
				    "batch", s->batch.text, p);
	if (r == 0) {
		snprintf(prefix, sizeof(prefix), "%s [group %s]", s->where,
			 s->pattern.text);
		r = policyopt_check(mrd_log_prefix(prefix, sizeof(prefix),
				    prefix), p);
	}
	if (r < 0)
		return r;
	if (asprintf(&s->policy_key, "margin=%s\nhysteresis=%s\nbatch=%s",
		     s->margin.text ? s->margin.text : "auto",
		     s->hysteresis.text ? s->hysteresis.text : "",
		     s->batch.text ? s->batch.text : "") < 0) {
		s->policy_key = NULL;
		return -ENOMEM;
	}
	return 0;
}

int mrd_config_load(const char *path, struct mrd_config *out)
{
	struct load l = { 0 };
	bool ustack = ini_use_stack;
	int max_line = ini_max_line, initial = ini_initial_alloc;
	size_t i;
	int r;

	/* Lines as long as a path; values as given (a ';' in a path is no
	 * comment); no continuation lines. */
	ini_use_stack = false;
	ini_max_line = ini_initial_alloc = MAX_LINE_BYTES;
	ini_allow_realloc = false;
	ini_allow_inline_comments = false;
	ini_allow_multiline = false;
	mrd_daemon_defaults(&l.cfg.daemon);
	l.cfg.path = strdup(path);
	if (!l.cfg.path)
		l.nomem = true;
	else if (load_file(&l, path) == 0)
		load_dropins(&l, path);
	ini_use_stack = ustack;
	ini_max_line = max_line;
	ini_initial_alloc = initial;
	for (i = 0; l.errors == 0 && !l.nomem && i < l.cfg.nsections; i++) {
		r = section_finish(&l.cfg.sections[i]);
		if (r == -ENOMEM)
			l.nomem = true;
		else if (r < 0)
			l.errors++;
	}
	if (l.nomem) {
		mrd_log(MR_LOG_ERR, "%s: %s", path, strerror(ENOMEM));
		mrd_config_free(&l.cfg);
		return -ENOMEM;
	}
	if (l.errors) {
		mrd_config_free(&l.cfg);
		return -EINVAL;
	}
	*out = l.cfg;
	return 0;
}

const struct mrd_section *mrd_config_section_for(const struct mrd_config *c,
						 const char *path)
{
	size_t i;

	for (i = 0; i < c->nsections; i++)
		if (mrd_pattern_match(&c->sections[i].pattern, path))
			return &c->sections[i];
	return NULL;
}
