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
	"daemon.metrics-interval", "daemon.metrics-port", "daemon.hybrid-psi",
	"daemon.runtime-dir",
	"group.path", "group.margin", "group.hysteresis", "group.batch",
	"group.runtime",
	"group.proactive", "group.pressure-target", "group.min-size",
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
	value_free(&d->hybrid_psi);
	value_free(&d->runtime_dir);
}

const char *mrd_daemon_runtime_dir(const struct mrd_daemon *d)
{
	return d->runtime_dir.text ? d->runtime_dir.text :
	       MRD_DEFAULT_RUNTIME_DIR;
}

static int bad(const char *where, const char *key, const char *value,
	       const char *why)
{
	if (where[0] == '-') /* the command line's option */
		mrd_log(MR_LOG_ERR, "%s '%s': %s", where, value, why);
	else
		mrd_log(MR_LOG_ERR, "%s: %s '%s': %s", where, key, value, why);
	return -EINVAL;
}

int mrd_parse_seconds(const char *where, const char *key, const char *s,
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
		r = mrd_parse_seconds(where, key, value, 0, &d->stats_interval_s);
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
		r = mrd_parse_seconds(where, key, value, 1,
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
	} else if (strcmp(key, "hybrid-psi") == 0) {
		if (strcmp(value, "yes") != 0 && strcmp(value, "no") != 0)
			return bad(where, key, value, "expected yes or no");
		d->hybrid_psi_on = strcmp(value, "yes") == 0;
		v = &d->hybrid_psi;
	} else if (strcmp(key, "runtime-dir") == 0) {
		if (value[0] != '/')
			return bad(where, key, value, "not an absolute path");
		if (strlen(value) >= PATH_MAX - 256)
			return bad(where, key, value, "path too long");
		v = &d->runtime_dir;
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
	free(s->name);
	free(s->where);
	value_free(&s->path);
	value_free(&s->margin);
	value_free(&s->hysteresis);
	value_free(&s->batch);
	value_free(&s->runtime);
	value_free(&s->proactive);
	value_free(&s->pressure_target);
	value_free(&s->min_size);
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
	bool bad_section;      /* the section in progress was refused */
	int errors;
	bool nomem;
};

static void where_of(const struct load *l, char *buf, size_t len)
{
	snprintf(buf, len, "%s:%u", l->file, l->line);
}

/* The section [group NAME], added on first sight. */
static struct mrd_section *section_get(struct load *l, const char *name,
				       const char *where)
{
	struct mrd_config *c = &l->cfg;
	struct mrd_section *s, *grown;
	size_t i;

	for (i = 0; i < c->nsections; i++)
		if (strcmp(c->sections[i].name, name) == 0)
			return &c->sections[i];
	grown = realloc(c->sections, (c->nsections + 1) * sizeof(*grown));
	if (!grown)
		goto nomem;
	c->sections = grown;
	s = &c->sections[c->nsections];
	*s = (struct mrd_section){ .name = strdup(name),
				   .where = strdup(where) };
	if (!s->name || !s->where) {
		free(s->name);
		free(s->where);
		goto nomem;
	}
	c->nsections++;
	return s;
nomem:
	l->nomem = true;
	return NULL;
}

/* The NAME of a section header "group NAME", or NULL. */
static const char *group_name(const char *section)
{
	if (strncmp(section, "group", 5) != 0 ||
	    (section[5] != ' ' && section[5] != '\t'))
		return NULL;
	return section + 5 + strspn(section + 5, " \t");
}

static int handler(void *user, const char *section, const char *name,
		   const char *value)
{
	struct load *l = user;
	struct mrd_section *s;
	struct mrd_value *v;
	const char *gname;
	char where[PATH_MAX + 32];

	where_of(l, where, sizeof(where));
	if (l->overlong || l->bad_section)
		return 1; /* reported by the reader */
	if (strcmp(section, "daemon") == 0) {
		if (mrd_daemon_set(&l->cfg.daemon, name, value, where) < 0)
			goto err;
		return 1;
	}
	gname = group_name(section);
	if (!gname) {
		mrd_log(MR_LOG_ERR, "%s: key outside any section", where);
		goto err;
	}
	s = section_get(l, gname, where);
	if (!s)
		goto err;
	if (strcmp(name, "path") == 0)
		v = &s->path;
	else if (strcmp(name, "margin") == 0)
		v = &s->margin;
	else if (strcmp(name, "hysteresis") == 0)
		v = &s->hysteresis;
	else if (strcmp(name, "batch") == 0)
		v = &s->batch;
	else if (strcmp(name, "runtime") == 0)
		v = &s->runtime;
	else if (strcmp(name, "proactive") == 0)
		v = &s->proactive;
	else if (strcmp(name, "pressure-target") == 0)
		v = &s->pressure_target;
	else if (strcmp(name, "min-size") == 0)
		v = &s->min_size;
	else {
		mrd_log(MR_LOG_ERR, "%s: [group] has no key '%s' (path, "
			"margin, hysteresis, batch, runtime, proactive, "
			"pressure-target, min-size)", where, name);
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

bool mrd_section_name_ok(const char *name)
{
	size_t i;

	for (i = 0; name[i]; i++)
		if (i >= 49 ||
		    !((name[i] >= 'a' && name[i] <= 'z') ||
		      (name[i] >= 'A' && name[i] <= 'Z') ||
		      (name[i] >= '0' && name[i] <= '9') ||
		      (name[i] && strchr("-_.", name[i]))))
			return false;
	return i > 0;
}

/* A section header the reader saw at where: [daemon] or [group NAME]
 * (registered here, so that a section without keys is seen too). */
static void header(struct load *l, const char *line, const char *where)
{
	const char *s = line + strspn(line, " \t") + 1, *e = strchr(s, ']');
	char text[256];
	const char *name;
	size_t len;

	l->bad_section = false;
	if (!e)
		return; /* libinih reports it */
	len = (size_t)(e - s);
	if (len >= sizeof(text) || len > 49) {
		mrd_log(MR_LOG_ERR, "%s: a section name longer than 49 bytes "
			"(a [group]'s pattern goes in its path key)", where);
		goto bad;
	}
	memcpy(text, s, len);
	text[len] = '\0';
	if (strcmp(text, "daemon") == 0)
		return;
	name = group_name(text);
	if (!name) {
		mrd_log(MR_LOG_ERR, "%s: [%s]: not a section memreclaimd knows "
			"([daemon] or [group NAME])", where, text);
		goto bad;
	}
	if (!mrd_section_name_ok(name)) {
		mrd_log(MR_LOG_ERR, "%s: [%s]: a group's NAME is letters, "
			"digits, '-', '_' and '.' (its pattern goes in its "
			"path key)", where, text);
		goto bad;
	}
	section_get(l, name, where);
	return;
bad:
	l->errors++;
	l->bad_section = true;
}

/* fgets for libinih, counting lines, taking section headers, and
 * refusing a line too long. */
static char *reader(char *str, int num, void *stream)
{
	struct load *l = stream;
	char where[PATH_MAX + 32];
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
		return str;
	}
	if (str[strspn(str, " \t")] == '[') {
		where_of(l, where, sizeof(where));
		header(l, str, where);
	}
	return str;
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
	l->bad_section = false;
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
	/* The policy keys, in the order their meanings depend on: the
	 * default margin follows from proactive. */
	const struct {
		const char *key;
		const struct mrd_value *v;
	} keys[] = {
		{ "proactive", &s->proactive },
		{ "pressure-target", &s->pressure_target },
		{ "min-size", &s->min_size },
		{ "margin", &s->margin },
		{ "hysteresis", &s->hysteresis },
		{ "batch", &s->batch },
	};
	struct policy_opts *p = &s->policy;
	char prefix[64];
	const char *why;
	size_t i;
	int r;

	if (!s->path.text) {
		mrd_log(MR_LOG_ERR, "%s: [group %s] has no path (the pattern of "
			"the groups it keeps)", s->where, s->name);
		return -EINVAL;
	}
	r = mrd_pattern_parse(s->path.text, &s->pattern, &why);
	if (r < 0) {
		mrd_log(MR_LOG_ERR, "%s: path '%s': %s", s->path.where,
			s->path.text, why);
		return r;
	}
	/* Messages name each key with the file and line that gave it. */
	*p = (struct policy_opts){ .keys = true };
	mrd_log_prefix(prefix, sizeof(prefix), NULL);
	for (i = 0, r = 0; r == 0 && i < sizeof(keys) / sizeof(keys[0]); i++) {
		/* The adaptive margin is the default, but for the proactive
		 * controller alone. */
		if (!keys[i].v->text && strcmp(keys[i].key, "margin") == 0 &&
		    p->proactive != POLICYOPT_PROACTIVE_ON &&
		    p->proactive != POLICYOPT_PROACTIVE_DRY_RUN)
			r = policyopt_parse(prefix, "margin", "auto", p);
		else if (keys[i].v->text)
			r = policyopt_parse_as(prefix, keys[i].key,
					       keys[i].v->where,
					       keys[i].v->text, p);
	}
	if (r == 0)
		r = policyopt_check(prefix, p);
	if (r < 0)
		return r;
	if (s->runtime.text && strcmp(s->runtime.text, "yes") != 0 &&
	    strcmp(s->runtime.text, "no") != 0) {
		mrd_log(MR_LOG_ERR, "%s: runtime '%s': expected yes or no",
			s->runtime.where, s->runtime.text);
		return -EINVAL;
	}
	s->runtime_on = s->runtime.text && strcmp(s->runtime.text, "yes") == 0;
	/* runtime is not in the key: the walk skips a runtime section, and
	 * a drop-in's group finds its section by name on every reload. */
	if (asprintf(&s->policy_key, "path=%s\nmargin=%s\nhysteresis=%s\n"
		     "batch=%s\nproactive=%s\npressure-target=%s\n"
		     "min-size=%s", s->pattern.text,
		     s->margin.text ? s->margin.text : "",
		     s->hysteresis.text ? s->hysteresis.text : "",
		     s->batch.text ? s->batch.text : "",
		     s->proactive.text ? s->proactive.text : "",
		     s->pressure_target.text ? s->pressure_target.text : "",
		     s->min_size.text ? s->min_size.text : "") < 0) {
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

const struct mrd_section *mrd_config_runtime_section(const struct mrd_config *c,
						     const char *name)
{
	size_t i;

	for (i = 0; i < c->nsections; i++)
		if (c->sections[i].runtime_on &&
		    strcmp(c->sections[i].name, name) == 0)
			return &c->sections[i];
	return NULL;
}

const struct mrd_section *mrd_config_section_for(const struct mrd_config *c,
						 const char *path)
{
	size_t i;

	for (i = 0; i < c->nsections; i++)
		if (!c->sections[i].runtime_on &&
		    mrd_pattern_match(&c->sections[i].pattern, path))
			return &c->sections[i];
	return NULL;
}
