/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memreclaim-oci-hook — an OCI runtime hook that hands a container's
 * memory cgroup to memreclaimd, and takes it back when the container
 * stops.
 *
 *   memreclaim-oci-hook [--config PATH] [--runtime-dir DIR]
 *   memreclaim-oci-hook --help | --version
 *
 * memreclaim-oci-hook(8) is its manual.
 *
 * The runtime gives the container's state on stdin (the OCI runtime
 * specification, "State" and "POSIX-platform Hooks"): its id, status,
 * pid and annotations. At createRuntime, prestart or poststart (status
 * "creating", "created" or "running"), a container annotated
 *
 *   io.memreclaim.policy = NAME
 *
 * gets a drop-in in memreclaimd's runtime directory (memreclaimd-dropin.h)
 * naming its memory cgroup, found from its pid's /proc entry
 * (mr_group_open_pid()), and the policy NAME: a [group NAME] section of
 * memreclaimd's configuration with runtime = yes, whose path the group
 * must match. At poststop (status "stopped") the drop-in is removed, and
 * memreclaimd releases the group. Any other status is refused. A
 * container without the annotation is left alone.
 *
 * Everything in the state is the container owner's to choose, and is
 * checked: the state is read whole, MAX_STATE_BYTES at most, as strict
 * JSON (json-c); the id must be a safe file name (mrd_container_id_ok());
 * the policy must name a runtime section of the configuration (read from
 * --config, memreclaimd's default otherwise); any other annotation of
 * the io.memreclaim. prefix is a mistake; the cgroup comes from the
 * kernel's /proc/PID/cgroup, never from the state's cgroupsPath, and
 * must match the section's path.
 *
 * Exit status: 0 done (or nothing asked), 1 refused or failed (said why
 * on stderr; nothing written: the runtime then fails the container's
 * start), 2 a bad option.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <memreclaim.h>

#include "memreclaimd-config.h"
#include "memreclaimd-dropin.h"
#include "memreclaimd-log.h"

#ifndef MRD_DEFAULT_CONFIG
#define MRD_DEFAULT_CONFIG "/etc/memreclaim/memreclaimd.conf"
#endif

/* The annotation that selects the policy, and the prefix of the hook's
 * annotations. */
#define ANNOTATION_PREFIX "io.memreclaim."
#define ANNOTATION_POLICY ANNOTATION_PREFIX "policy"

/* The largest state read: a container's state is a few hundred bytes
 * plus its annotations (Kubernetes limits a pod's to 256 KiB). */
#define MAX_STATE_BYTES (1024 * 1024)
/* The deepest JSON nesting accepted (the state has two levels). */
#define MAX_JSON_DEPTH 8

struct state {
	const char *id;
	const char *status;
	long long pid;           /* 0: not given */
	const char *policy;      /* NULL: no annotation */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " MRD_PROG " [--config PATH] [--runtime-dir DIR]\n"
		"An OCI runtime hook: reads the container's state on stdin; at createRuntime,\n"
		"prestart or poststart, a container annotated " ANNOTATION_POLICY "=NAME is handed\n"
		"to memreclaimd with the policy of its [group NAME] section (runtime = yes);\n"
		"at poststop it is taken back.\n"
		"\n"
		"  --config PATH       memreclaimd's configuration (default " MRD_DEFAULT_CONFIG "):\n"
		"                      the policies, and runtime-dir\n"
		"  --runtime-dir DIR   memreclaimd's runtime directory (default: the configuration's\n"
		"                      runtime-dir, else " MRD_DEFAULT_RUNTIME_DIR ")\n"
		"  --version           print the version and exit\n"
		"  --help              print this help and exit\n"
		"\n"
		"Exit status: 0 done (or nothing asked), 1 refused or failed (nothing written),\n"
		"2 a bad option.\n");
}

/* Reads stdin whole into a new NUL-terminated buffer. */
static char *read_state(size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap + 1), *grown;
	ssize_t r;

	while (buf) {
		if (n == cap) {
			if (cap >= MAX_STATE_BYTES) {
				mrd_log(MR_LOG_ERR, "the state on stdin is over "
					"%d bytes", MAX_STATE_BYTES);
				free(buf);
				return NULL;
			}
			cap *= 2;
			grown = realloc(buf, cap + 1);
			if (!grown)
				break;
			buf = grown;
		}
		r = read(0, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			mrd_log(MR_LOG_ERR, "reading the state: %s",
				strerror(errno));
			free(buf);
			return NULL;
		}
		if (r == 0) {
			buf[n] = '\0';
			*len = n;
			return buf;
		}
		n += (size_t)r;
	}
	free(buf);
	mrd_log(MR_LOG_ERR, "reading the state: %s", strerror(ENOMEM));
	return NULL;
}

static const char *string_field(json_object *o, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

/* The state's fields, checked; *root keeps the strings. Returns 0 or -1
 * after saying why. */
static int parse_state(const char *text, size_t len, json_object **root,
		       struct state *st)
{
	json_tokener *tok = json_tokener_new_ex(MAX_JSON_DEPTH);
	json_object *o, *v;
	enum json_tokener_error err;

	*root = NULL;
	*st = (struct state){ 0 };
	if (!tok) {
		mrd_log(MR_LOG_ERR, "%s", strerror(ENOMEM));
		return -1;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	if (memchr(text, '\0', len)) {
		mrd_log(MR_LOG_ERR, "the state holds a NUL byte");
		json_tokener_free(tok);
		return -1;
	}
	o = json_tokener_parse_ex(tok, text, (int)len);
	err = json_tokener_get_error(tok);
	if (o && err == json_tokener_success &&
	    text[tok->char_offset + strspn(text + tok->char_offset,
					   " \t\r\n")] != '\0') {
		mrd_log(MR_LOG_ERR, "the state: text after its JSON object");
		json_object_put(o);
		o = NULL;
	} else if (!o || err != json_tokener_success) {
		mrd_log(MR_LOG_ERR, "the state is not JSON: %s",
			err == json_tokener_continue ? "it ends early" :
			json_tokener_error_desc(err));
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	if (!o)
		return -1;
	*root = o;
	if (!json_object_is_type(o, json_type_object)) {
		mrd_log(MR_LOG_ERR, "the state is not a JSON object");
		return -1;
	}
	st->id = string_field(o, "id");
	st->status = string_field(o, "status");
	if (!st->id || !st->status) {
		mrd_log(MR_LOG_ERR, "the state has no id or status string");
		return -1;
	}
	if (json_object_object_get_ex(o, "pid", &v)) {
		if (!json_object_is_type(v, json_type_int)) {
			mrd_log(MR_LOG_ERR, "the state's pid is not a number");
			return -1;
		}
		errno = 0;
		st->pid = (long long)json_object_get_int64(v);
		if (errno || st->pid < 0 || st->pid > INT_MAX) {
			mrd_log(MR_LOG_ERR, "the state's pid is out of range");
			return -1;
		}
	}
	if (json_object_object_get_ex(o, "annotations", &v)) {
		if (!json_object_is_type(v, json_type_object)) {
			mrd_log(MR_LOG_ERR, "the state's annotations are not "
				"an object");
			return -1;
		}
		json_object_object_foreach(v, key, val) {
			if (strncmp(key, ANNOTATION_PREFIX,
				    sizeof(ANNOTATION_PREFIX) - 1) != 0)
				continue;
			if (strcmp(key, ANNOTATION_POLICY) != 0) {
				mrd_log(MR_LOG_ERR, "annotation %.64s: unknown "
					"(this hook reads " ANNOTATION_POLICY
					" alone)", key);
				return -1;
			}
			if (!json_object_is_type(val, json_type_string)) {
				mrd_log(MR_LOG_ERR, ANNOTATION_POLICY
					": not a string");
				return -1;
			}
			st->policy = json_object_get_string(val);
		}
	}
	return 0;
}

/* The names of cfg's runtime sections, for a refusal. */
static void say_known(const struct mrd_config *cfg, const char *config)
{
	char list[1024] = "";
	size_t k, used = 0;

	for (k = 0; k < cfg->nsections && used < sizeof(list); k++)
		if (cfg->sections[k].runtime_on)
			used += (size_t)snprintf(list + used, sizeof(list) - used,
						 "%s%s", used ? ", " : "",
						 cfg->sections[k].name);
	mrd_log(MR_LOG_ERR, "%s: the policies a container may name are the "
		"[group] sections with runtime = yes: %s", config,
		used ? list : "(none)");
}

/* The container asks for the policy st->policy: hand its group over. */
static int add(const struct state *st, const struct mrd_config *cfg,
	       const char *config, const char *dir)
{
	const struct mrd_section *s;
	struct mrd_dropin *d;
	mr_group_t *g;
	mr_ctx_t *ctx;
	int r, dfd;

	if (!mrd_section_name_ok(st->policy) ||
	    !(s = mrd_config_runtime_section(cfg, st->policy))) {
		mrd_log(MR_LOG_ERR, ANNOTATION_POLICY " '%.64s': not a policy "
			"of %s", st->policy, config);
		say_known(cfg, config);
		return -1;
	}
	if (st->pid <= 0) {
		mrd_log(MR_LOG_ERR, "container %s: the state has no pid (at "
			"createRuntime, prestart and poststart it has one)",
			st->id);
		return -1;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		mrd_log(MR_LOG_ERR, "%s", strerror(ENOMEM));
		return -1;
	}
	r = mr_ctx_new(&ctx);
	if (r == 0) {
		mr_ctx_set_log(ctx, mrd_log_library, NULL, MR_LOG_INFO);
		r = mr_group_open_pid(ctx, (pid_t)st->pid, &g);
		if (r == 0) {
			snprintf(d->cgroup, sizeof(d->cgroup), "%s",
				 mr_group_path(g));
			mr_group_close(g);
		}
		mr_ctx_free(ctx);
	}
	if (r < 0) {
		mrd_log(MR_LOG_ERR, "container %s: the memory cgroup of pid "
			"%lld: %s", st->id, st->pid, mr_strerror(r));
		free(d);
		return -1;
	}
	if (!mrd_pattern_match(&s->pattern, d->cgroup)) {
		mrd_log(MR_LOG_ERR, "container %s: its memory cgroup %s is not "
			"a path of [group %s] (path = %s, %s)", st->id,
			d->cgroup, s->name, s->pattern.text, s->path.where);
		free(d);
		return -1;
	}
	snprintf(d->policy, sizeof(d->policy), "%s", s->name);
	dfd = mrd_runtime_dir_open(MRD_PROG, dir, true);
	r = dfd < 0 ? dfd : mrd_dropin_write(dfd, st->id, d);
	if (dfd >= 0 && r < 0)
		mrd_log(MR_LOG_ERR, "%s/%s.conf: %s", dir, st->id,
			strerror(-r));
	if (dfd >= 0)
		close(dfd);
	free(d);
	return r < 0 ? -1 : 0;
}

/* The container stopped: its drop-in goes, if there is one. */
static int take_back(const struct state *st, const char *dir)
{
	int dfd, r;

	if (access(dir, F_OK) < 0 && errno == ENOENT)
		return 0; /* no directory, no drop-in */
	dfd = mrd_runtime_dir_open(MRD_PROG, dir, false);
	if (dfd < 0)
		return -1;
	r = mrd_dropin_remove(dfd, st->id);
	if (r < 0)
		mrd_log(MR_LOG_ERR, "%s/%s.conf: %s", dir, st->id,
			strerror(-r));
	close(dfd);
	return r < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "runtime-dir", required_argument, NULL, 'r' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *config = MRD_DEFAULT_CONFIG, *dir = NULL;
	struct mrd_config cfg;
	struct state st;
	json_object *root;
	size_t len;
	char *text;
	int c, r, status = 1;

	mrd_log_init();
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'r':
			if (optarg[0] != '/') {
				mrd_log(MR_LOG_ERR, "--runtime-dir '%s': not an "
					"absolute path", optarg);
				return 2;
			}
			dir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf(MRD_PROG " %s (libmemreclaim %s)\n",
			       PACKAGE_VERSION, mr_version());
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		mrd_log(MR_LOG_ERR, "unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return 2;
	}
	text = read_state(&len);
	if (!text)
		return 1;
	r = parse_state(text, len, &root, &st);
	free(text);
	if (r < 0)
		goto out;
	if (!st.policy) {
		status = 0; /* not asked (the annotation stays to poststop) */
		goto out;
	}
	if (!mrd_container_id_ok(st.id)) {
		mrd_log(MR_LOG_ERR, "container id '%.64s%s': not a file name "
			"this hook writes (letters, digits, '_', '+', '-', '.', "
			"not first, at most %d)", st.id,
			strlen(st.id) > 64 ? "..." : "", MRD_CONTAINER_ID_MAX);
		goto out;
	}
	if (mrd_config_load(config, &cfg) < 0) {
		mrd_log(MR_LOG_ERR, "%s: refused", config);
		goto out;
	}
	if (!dir)
		dir = mrd_daemon_runtime_dir(&cfg.daemon);
	if (strcmp(st.status, "stopped") == 0) {
		r = take_back(&st, dir);
	} else if (strcmp(st.status, "creating") == 0 ||
		   strcmp(st.status, "created") == 0 ||
		   strcmp(st.status, "running") == 0) {
		r = add(&st, &cfg, config, dir);
	} else {
		/* The specification's four states are all a hook may see
		 * (a "paused" is runc's own, and no hook runs then). */
		mrd_log(MR_LOG_ERR, "container %s: status '%.32s': not one of "
			"creating, created, running (handed over) or stopped "
			"(taken back)", st.id, st.status);
		r = -1;
	}
	if (r == 0)
		status = 0;
	mrd_config_free(&cfg);
out:
	json_object_put(root);
	return status;
}
