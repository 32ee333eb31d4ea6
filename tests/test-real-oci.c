/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memreclaim-oci-hook and memreclaimd's runtime directory with a real
 * container runtime: Debian's crun runs two containers from a busybox
 * rootfs this test builds (no image, no registry), each in a memory
 * cgroup beneath a parent the test creates in MEMRECLAIM_TEST_PARENT
 * (--cgroup-manager=cgroupfs, linux.cgroupsPath), with a 64 MiB limit,
 * streaming a 256 MiB file through its page cache. The hook is in the
 * bundle's config.json (crun reads no hooks.d) at createRuntime and
 * poststop. The first container has no annotation: memreclaimd leaves it
 * alone, and its limit hits (memory.failcnt) are the reference. The
 * second is annotated io.memreclaim.policy=containers: memreclaimd takes
 * its group from the hook's drop-in before it streams, keeps a 16 MiB
 * margin (at least 10 times fewer limit hits than the first), and
 * releases it when the poststop hook removes the drop-in. A third,
 * annotated with a policy the configuration lacks, is refused by the
 * hook and never starts. Nothing is
 * left: the containers are deleted (crun's state lives in the test's own
 * directory), the groups crun made in every v1 hierarchy removed, the
 * daemon stopped. Where podman is installed (scripts/lib.sh installs
 * it), the hooks.d file as installed is tried with podman run --rm
 * --hooks-dir: podman injects the hook for the annotated container at
 * prestart and runs it at poststop. Then drop-ins written by hand show
 * what memreclaimd takes, refuses and releases, at start, on events and
 * on reload.
 *
 * crun 1.8.1 refuses a hybrid host whose cgroup2 mount has a controller
 * ("cgroups in hybrid mode not supported, drop all controllers from
 * cgroupv2", libcrun/cgroup.c): this host's cgroup2 has hugetlb. crun
 * is then run in a mount namespace of its own with a tmpfs over
 * /sys/fs/cgroup/unified, where it sees a v1-only host (its "legacy"
 * mode); the host's mounts are untouched.
 */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemonproc.h"
#include "memreclaim.h"
#include "mountinfo.h"
#include "realcg.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define MiB (1024ULL * 1024)
#define LIMIT_BYTES (64 * MiB)
#define DATA_BYTES (256 * MiB)
#define MARGIN "16M"
/* Long enough for what a container or the daemon does on a loaded
 * machine; the test waits for events, never for a time. */
#define WAIT_MS 60000
#define BUSYBOX "/bin/busybox"
#define MAX_HIER 16

static char grp[PATH_MAX];        /* the containers' parent group */
static char rel[PATH_MAX];        /* grp below the v1 memory mount */
static char rel_parent[PATH_MAX]; /* parent below the v1 memory mount */
static char work[PATH_MAX], conf[PATH_MAX + 16], rdir[PATH_MAX + 16];
static char bundle[PATH_MAX + 16], ctl[PATH_MAX + 16], croot[PATH_MAX + 16];
static char data[PATH_MAX], hook[PATH_MAX];
static struct daemonproc d;
/* The v1 hierarchies crun makes the containers' groups in, and whether
 * parent existed in each before (if not, crun made it, and it goes). */
static char hier[MAX_HIER][PATH_MAX];
static bool had_parent[MAX_HIER];
static int nhier;
static bool hybrid;               /* cgroup2 at /sys/fs/cgroup/unified */
/* The test program's pid (not the forked test's): the names of what it
 * makes, which the parent cleans up after the test however it ended. */
static int run_pid;

static int add_hier(const struct mri_cgroup_mount *m, void *arg)
{
	char p[PATH_MAX * 2];

	(void)arg;
	if (m->version != 1 || strcmp(m->root, "/") != 0 || nhier == MAX_HIER)
		return 0;
	fmt(hier[nhier], sizeof(hier[0]), "%s", m->mount_point);
	fmt(p, sizeof(p), "%s%s", m->mount_point, rel_parent);
	had_parent[nhier] = access(p, F_OK) == 0;
	nhier++;
	return 0;
}

/* Removes what crun made of the group `sub` (below rel) in every
 * hierarchy: its children, then itself. Returns how many could not be
 * removed. */
static int remove_everywhere(const char *sub)
{
	char p[PATH_MAX * 2], c[PATH_MAX * 3];
	struct dirent *e;
	int i, left = 0;
	DIR *dp;

	for (i = 0; i < nhier; i++) {
		fmt(p, sizeof(p), "%s%s", hier[i], sub);
		dp = opendir(p);
		if (!dp)
			continue;
		while ((e = readdir(dp)))
			if (e->d_type == DT_DIR && e->d_name[0] != '.') {
				fmt(c, sizeof(c), "%s/%s", p, e->d_name);
				if (rmdir(c) < 0) {
					fprintf(stderr, "rmdir %s: %s\n", c,
						strerror(errno));
					left++;
				}
			}
		closedir(dp);
		if (rmdir(p) < 0) {
			fprintf(stderr, "rmdir %s: %s\n", p, strerror(errno));
			left++;
		}
	}
	return left;
}

/* The containers' parents of dead runs, in the other hierarchies (the
 * memory one is rc_sweep_stale()'s). */
static void sweep_stale_hierarchies(void)
{
	char p[PATH_MAX * 2], sub[PATH_MAX * 3];
	struct dirent *e;
	int i;
	DIR *dp;

	for (i = 0; i < nhier; i++) {
		fmt(p, sizeof(p), "%s%s", hier[i], rel_parent);
		dp = opendir(p);
		while (dp && (e = readdir(dp))) {
			if (e->d_type != DT_DIR || !rc_dead_run(e->d_name, '-'))
				continue;
			fmt(sub, sizeof(sub), "%s/%s", rel_parent, e->d_name);
			if (remove_everywhere(sub) == 0)
				fprintf(stderr, "removed stale %s%s\n", hier[i],
					sub);
		}
		if (dp)
			closedir(dp);
	}
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	ssize_t n;

	ck_assert_msg(in >= 0, "%s: %s", from, strerror(errno));
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	ck_assert_msg(out >= 0, "%s: %s", to, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ck_assert_int_eq(write(out, buf, (size_t)n), n);
	ck_assert_int_eq(n, 0);
	close(in);
	ck_assert_int_eq(close(out), 0);
}

/* The bundle's rootfs: a static busybox and the applets the script
 * uses. */
static void make_rootfs(void)
{
	static const char *const applets[] = { "sh", "cat", "sleep", "touch",
					       "test", "[", NULL };
	static const char *const dirs[] = { "rootfs", "rootfs/bin",
					    "rootfs/proc", "rootfs/dev",
					    "rootfs/ctl", "rootfs/data",
					    "rootfs/tmp", NULL };
	char p[PATH_MAX * 2];
	int i;

	for (i = 0; dirs[i]; i++) {
		fmt(p, sizeof(p), "%s/%s", bundle, dirs[i]);
		ck_assert_int_eq(mkdir(p, 0755), 0);
	}
	fmt(p, sizeof(p), "%s/rootfs/bin/busybox", bundle);
	copy_file(BUSYBOX, p, 0755);
	for (i = 0; applets[i]; i++) {
		fmt(p, sizeof(p), "%s/rootfs/bin/%s", bundle, applets[i]);
		ck_assert_int_eq(symlink("busybox", p), 0);
	}
	fmt(p, sizeof(p), "%s/rootfs/data/f", bundle);
	write_text(p, "");
}

static json_object *str(const char *s)
{
	return json_object_new_string(s);
}

static json_object *strs(const char *const *v)
{
	json_object *a = json_object_new_array();

	for (; *v; v++)
		json_object_array_add(a, str(*v));
	return a;
}

static json_object *mount_of(const char *dest, const char *type,
			     const char *src, const char *const *opts)
{
	json_object *m = json_object_new_object();

	json_object_object_add(m, "destination", str(dest));
	json_object_object_add(m, "type", str(type));
	json_object_object_add(m, "source", str(src));
	if (opts)
		json_object_object_add(m, "options", strs(opts));
	return m;
}

static json_object *hook_of(void)
{
	char env_state[PATH_MAX + 32];
	const char *args[] = { "memreclaim-oci-hook", "--config", conf,
			       "--runtime-dir", rdir, NULL };
	const char *env[] = { env_state, NULL };
	json_object *h = json_object_new_object(), *a = json_object_new_array();

	fmt(env_state, sizeof(env_state), "MEMRECLAIM_STATE_DIR=%s",
	    state_dir);
	json_object_object_add(h, "path", str(hook));
	json_object_object_add(h, "args", strs(args));
	json_object_object_add(h, "env", strs(env));
	json_object_array_add(a, h);
	return a;
}

/* The bundle's config.json for the container in group `leaf` of grp,
 * annotated with the policy or not. */
static void write_config(const char *leaf, const char *policy)
{
	static const char *const script[] = { "/bin/sh", "-c",
		"touch /ctl/ready; "
		"while [ ! -e /ctl/go ]; do sleep 0.05; done; "
		"cat /data/f > /dev/null && touch /ctl/done; "
		"while [ ! -e /ctl/exit ]; do sleep 0.05; done", NULL };
	static const char *const env[] = { "PATH=/bin", NULL };
	static const char *const nsnames[] = { "pid", "mount", "ipc", "uts",
					       "network", NULL };
	static const char *const devopts[] = { "nosuid", "strictatime",
					       "mode=755", "size=65536k",
					       NULL };
	static const char *const ro[] = { "rbind", "ro", NULL };
	static const char *const rw[] = { "rbind", "rw", NULL };
	json_object *c = json_object_new_object(), *o, *ns, *m, *r, *mem;
	char path[PATH_MAX * 2], cg[PATH_MAX * 2];
	int i;

	json_object_object_add(c, "ociVersion", str("1.0.2"));
	o = json_object_new_object();
	json_object_object_add(o, "terminal", json_object_new_boolean(0));
	m = json_object_new_object();
	json_object_object_add(m, "uid", json_object_new_int(0));
	json_object_object_add(m, "gid", json_object_new_int(0));
	json_object_object_add(o, "user", m);
	json_object_object_add(o, "args", strs(script));
	json_object_object_add(o, "env", strs(env));
	json_object_object_add(o, "cwd", str("/"));
	json_object_object_add(c, "process", o);
	o = json_object_new_object();
	json_object_object_add(o, "path", str("rootfs"));
	json_object_object_add(c, "root", o);
	json_object_object_add(c, "hostname", str("memreclaim-test"));
	m = json_object_new_array();
	json_object_array_add(m, mount_of("/proc", "proc", "proc", NULL));
	json_object_array_add(m, mount_of("/dev", "tmpfs", "tmpfs", devopts));
	json_object_array_add(m, mount_of("/data/f", "bind", data, ro));
	json_object_array_add(m, mount_of("/ctl", "bind", ctl, rw));
	json_object_object_add(c, "mounts", m);
	/* crun writes its hooks' stderr where this annotation says
	 * (libcrun/container.c, open_hooks_output()). */
	o = json_object_new_object();
	fmt(path, sizeof(path), "%s/hooks-%s.log", work, leaf);
	json_object_object_add(o, "run.oci.hooks.stderr", str(path));
	if (policy)
		json_object_object_add(o, "io.memreclaim.policy", str(policy));
	json_object_object_add(c, "annotations", o);
	o = json_object_new_object();
	json_object_object_add(o, "createRuntime", hook_of());
	json_object_object_add(o, "poststop", hook_of());
	json_object_object_add(c, "hooks", o);
	o = json_object_new_object();
	ns = json_object_new_array();
	for (i = 0; nsnames[i]; i++) {
		m = json_object_new_object();
		json_object_object_add(m, "type", str(nsnames[i]));
		json_object_array_add(ns, m);
	}
	json_object_object_add(o, "namespaces", ns);
	fmt(cg, sizeof(cg), "%s/%s", rel, leaf);
	json_object_object_add(o, "cgroupsPath", str(cg));
	r = json_object_new_object();
	mem = json_object_new_object();
	json_object_object_add(mem, "limit",
			       json_object_new_int64((int64_t)LIMIT_BYTES));
	json_object_object_add(r, "memory", mem);
	json_object_object_add(o, "resources", r);
	json_object_object_add(c, "linux", o);
	fmt(path, sizeof(path), "%s/config.json", bundle);
	ck_assert_int_eq(json_object_to_file_ext(path, c,
						 JSON_C_TO_STRING_PRETTY), 0);
	json_object_put(c);
}

/* Starts argv (a NULL-terminated list, argv[0] looked up in $PATH) in a
 * mount namespace of its own; on a hybrid host with a tmpfs over
 * /sys/fs/cgroup/unified (see the top). Its output goes to log. Returns
 * its pid. */
static pid_t ns_start(const char *log, const char *const *argv)
{
	pid_t pid;
	int fd;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		_exit(126);
	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		perror("mount namespace");
		_exit(126);
	}
	if (hybrid && mount("memreclaim-test", "/sys/fs/cgroup/unified",
			    "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			    "size=4k") < 0) {
		perror("tmpfs over /sys/fs/cgroup/unified");
		_exit(126);
	}
	execvp(argv[0], (char *const *)argv);
	perror(argv[0]);
	_exit(127);
}

/* Starts `crun ARGS...`, with --root in the test's directory and the
 * cgroupfs manager (ns_start()). */
static pid_t crun_start(const char *log, const char *const *args)
{
	const char *argv[16] = { "crun", "--root", croot,
				 "--cgroup-manager=cgroupfs" };
	int i;

	for (i = 0; args[i]; i++)
		argv[4 + i] = args[i];
	argv[4 + i] = NULL;
	return ns_start(log, argv);
}

static int wait_child(pid_t pid)
{
	int status;

	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

static const char *log_tail(const char *log)
{
	static char buf[1501];
	ssize_t n;
	off_t size;
	int fd = open(log, O_RDONLY | O_CLOEXEC);

	buf[0] = '\0';
	if (fd < 0)
		return buf;
	size = lseek(fd, 0, SEEK_END);
	lseek(fd, size > 1500 ? size - 1500 : 0, SEEK_SET);
	n = read(fd, buf, 1500);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return buf;
}

/* Waits for the file ctl/name while the container `pid` runs. */
static void wait_ctl(pid_t pid, const char *name, const char *log)
{
	unsigned long long end = dp_mono_ms() + WAIT_MS;
	char p[PATH_MAX * 2];
	int status;

	fmt(p, sizeof(p), "%s/%s", ctl, name);
	while (access(p, F_OK) < 0) {
		ck_assert_msg(waitpid(pid, &status, WNOHANG) == 0,
			      "crun ended (status %d) before %s; its log:\n%s",
			      status, name, log_tail(log));
		ck_assert_msg(dp_mono_ms() < end, "no %s in %d ms; crun's "
			      "log:\n%s", name, WAIT_MS, log_tail(log));
		dp_wait_for(&d, 20, false, 0, NULL);
	}
}

static void ctl_reset(void)
{
	static const char *const names[] = { "ready", "go", "done", "exit",
					     NULL };
	char p[PATH_MAX * 2];
	int i;

	for (i = 0; names[i]; i++) {
		fmt(p, sizeof(p), "%s/%s", ctl, names[i]);
		unlink(p);
	}
}

static void ctl_touch(const char *name)
{
	char p[PATH_MAX * 2];

	fmt(p, sizeof(p), "%s/%s", ctl, name);
	write_text(p, "");
}

static uint64_t failcnt(const char *group)
{
	return strtoull(read_text(group, "memory.failcnt"), NULL, 10);
}

/* One container: group `leaf`, id `id`, the policy annotation or none.
 * Streams the data file once through it when the daemon has taken it
 * (or, without the policy, at once); returns the growth of its
 * memory.failcnt meanwhile. */
static uint64_t run_container(const char *id, const char *leaf,
			      const char *policy)
{
	const char *run[] = { "run", "--bundle", bundle, id, NULL };
	char log[PATH_MAX * 2], group[PATH_MAX * 2], dropin[PATH_MAX * 2];
	char released[PATH_MAX];
	uint64_t before, after;
	size_t from = d.elen;
	pid_t pid;
	int status;

	fmt(log, sizeof(log), "%s/crun-%s.log", work, leaf);
	fmt(group, sizeof(group), "%s/%s", grp, leaf);
	fmt(dropin, sizeof(dropin), "%s/%s.conf", rdir, id);
	ctl_reset();
	write_config(leaf, policy);
	rc_drop_cache(data);
	pid = crun_start(log, run);
	wait_ctl(pid, "ready", log);
	ck_assert_str_eq(read_text(group, "memory.limit_in_bytes"),
			 "67108864\n");
	if (policy) {
		/* The hook's drop-in, then the daemon's record: the group
		 * is kept before the container streams. */
		ck_assert_msg(access(dropin, F_OK) == 0, "no drop-in %s; "
			      "crun's log:\n%s", dropin, log_tail(log));
		dp_wait_records(&d, "start", group, 1, WAIT_MS);
		ck_assert_msg(strstr(d.obuf, "\"margin_bytes\":16777216,"),
			      "no 16 MiB margin: %s", dp_tail(d.obuf));
	} else {
		ck_assert_int_eq(access(dropin, F_OK), -1);
	}
	before = failcnt(group);
	ctl_touch("go");
	wait_ctl(pid, "done", log);
	after = failcnt(group);
	ctl_touch("exit");
	status = wait_child(pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "crun run: status %d; its log:\n%s", status,
		      log_tail(log));
	/* crun removed the container's group; the poststop hook, the
	 * drop-in. */
	ck_assert_int_eq(access(group, F_OK), -1);
	ck_assert_int_eq(access(dropin, F_OK), -1);
	if (policy) {
		fmt(released, sizeof(released), "container %s: its drop-in "
		    "was removed; released", id);
		ck_assert_msg(dp_wait_for(&d, WAIT_MS, true, from, released),
			      "memreclaimd did not release %s; its stderr:\n%s",
			      group, dp_tail(d.ebuf + from));
	} else {
		dp_wait_for(&d, 200, false, 0, NULL);
		ck_assert_int_eq(dp_count_records(&d, "start", group), 0);
	}
	return after - before;
}

/* Starts `podman ARGS...` with its storage, run and temporary directories
 * in the test's directory, the cgroupfs manager and events to a file
 * (ns_start()). */
static pid_t podman_start(const char *log, const char *const *args)
{
	static char root[PATH_MAX + 32], runroot[PATH_MAX + 32];
	static char tmp[PATH_MAX + 32];
	const char *argv[48] = { "podman", "--root", root, "--runroot",
				 runroot, "--tmpdir", tmp,
				 "--cgroup-manager=cgroupfs",
				 "--events-backend=file" };
	int i;

	fmt(root, sizeof(root), "%s/podman/root", work);
	fmt(runroot, sizeof(runroot), "%s/podman/run", work);
	fmt(tmp, sizeof(tmp), "%s/podman/tmp", work);
	for (i = 0; args[i]; i++)
		argv[9 + i] = args[i];
	argv[9 + i] = NULL;
	return ns_start(log, argv);
}

/* `podman run --rm` of the bundle's rootfs with the hooks of hooks, in a
 * group beneath grp (--cgroup-parent) with a 64 MiB limit, annotated
 * io.memreclaim.policy=containers, until ctl/exit appears. */
static pid_t podman_run(const char *log, const char *hooks)
{
	static char parent_opt[PATH_MAX + 32], vol[PATH_MAX + 16];
	static char rootfs[PATH_MAX + 16];
	const char *args[] = {
		"--hooks-dir", hooks, "run", "--rm",
		/* podman's defaults for these are above the hard limits
		 * a sandboxed root may have (crun's setrlimit() fails) */
		"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024",
		"--network=none",
		parent_opt, "--memory", "64m", "--annotation",
		"io.memreclaim.policy=containers", "--volume", vol,
		"--rootfs", rootfs, "/bin/sh", "-c",
		"touch /ctl/ready; "
		"while [ ! -e /ctl/exit ]; do sleep 0.05; done", NULL };

	fmt(parent_opt, sizeof(parent_opt), "--cgroup-parent=%s", rel);
	fmt(vol, sizeof(vol), "%s:/ctl", ctl);
	fmt(rootfs, sizeof(rootfs), "%s/rootfs", bundle);
	return podman_start(log, args);
}

/* A container whose annotation names no runtime section: the hook
 * fails at createRuntime, saying why, crun fails the start and removes
 * what it made, and nothing reaches the daemon. */
static void refused_policy(void)
{
	const char *run[] = { "run", "--bundle", bundle, NULL, NULL };
	char log[PATH_MAX * 2], p[PATH_MAX * 2], id[64];
	size_t from = d.elen;
	int status;

	fmt(id, sizeof(id), "memreclaim-test-%d-c3", run_pid);
	run[3] = id;
	fmt(log, sizeof(log), "%s/crun-c3.log", work);
	ctl_reset();
	write_config("c3", "no-such-policy");
	status = wait_child(crun_start(log, run));
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) != 0,
		      "crun run started a container with an unknown policy; "
		      "its log:\n%s", log_tail(log));
	fmt(p, sizeof(p), "%s/hooks-c3.log", work);
	ck_assert_msg(strstr(log_tail(p), "io.memreclaim.policy "
			     "'no-such-policy': not a policy of"),
		      "the hook did not say why; its stderr:\n%s",
		      log_tail(p));
	fmt(p, sizeof(p), "%s/%s.conf", rdir, id);
	ck_assert_int_eq(access(p, F_OK), -1);
	fmt(p, sizeof(p), "%s/c3", grp);
	ck_assert_int_eq(access(p, F_OK), -1);
	fmt(p, sizeof(p), "%s/%s", croot, id);
	ck_assert_int_eq(access(p, F_OK), -1);
	dp_wait_for(&d, 200, true, from, NULL);
	ck_assert_ptr_null(strstr(d.ebuf + from, "c3"));
}

static void setup(void)
{
	char env[PATH_MAX + 64];
	const char *top = getenv("top_builddir");

	fmt(hook, sizeof(hook), "%s/examples/memreclaim-oci-hook",
	    top && *top ? top : ".");
	ck_assert_ptr_nonnull(realpath(hook, env));
	fmt(hook, sizeof(hook), "%s", env);
	fmt(grp, sizeof(grp), "%s/memreclaim-test-%d-oci", parent,
	    run_pid);
	ck_assert_int_eq(mkdir(grp, 0755), 0);
	fmt(work, sizeof(work), "/tmp/memreclaim-test-oci-%d", run_pid);
	ck_assert_int_eq(mkdir(work, 0700), 0);
	fmt(conf, sizeof(conf), "%s/m.conf", work);
	fmt(rdir, sizeof(rdir), "%s/groups.d", work);
	fmt(bundle, sizeof(bundle), "%s/bundle", work);
	fmt(ctl, sizeof(ctl), "%s/ctl", work);
	fmt(croot, sizeof(croot), "%s/crun", work);
	ck_assert_int_eq(mkdir(bundle, 0755), 0);
	ck_assert_int_eq(mkdir(ctl, 0755), 0);
	make_rootfs();
	fmt(data, sizeof(data), "%s/memreclaim-test-%d.oci", data_dir,
	    run_pid);
	rc_make_uncached_file(data, DATA_BYTES);
	d.pid = 0;
}

static void teardown(void)
{
	static const char *const podman_rm[] = { "rm", "--all", "--force",
						 NULL };
	const char *del[] = { "delete", "--force", NULL, NULL };
	char log[PATH_MAX * 2], id[64], cmd[PATH_MAX + 32];
	int i;

	if (d.pid > 0 && kill(d.pid, 0) == 0) {
		kill(d.pid, SIGKILL);
		waitpid(d.pid, NULL, 0);
	}
	/* Containers a failed test left (crun's state is in croot). */
	fmt(log, sizeof(log), "%s/crun-delete.log", work);
	for (i = 1; i <= 3; i++) {
		fmt(id, sizeof(id), "memreclaim-test-%d-c%d", run_pid, i);
		fmt(cmd, sizeof(cmd), "%s/%s", croot, id);
		if (access(cmd, F_OK) == 0) {
			del[2] = id;
			wait_child(crun_start(log, del));
		}
	}
	/* A container podman left running (its storage is in work). */
	fmt(cmd, sizeof(cmd), "%s/podman", work);
	if (access(cmd, F_OK) == 0)
		wait_child(podman_start(log, podman_rm));
	remove_everywhere(rel);
	for (i = 0; i < nhier; i++)
		if (!had_parent[i]) {
			fmt(cmd, sizeof(cmd), "%s%s", hier[i], rel_parent);
			rmdir(cmd);
		}
	unlink(data);
	fmt(cmd, sizeof(cmd), "rm -rf '%s'", work);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", work);
	rc_remove_state_dir();
}

START_TEST(container_kept_and_released)
{
	char env_state[PATH_MAX + 32], text[PATH_MAX * 3], id1[64], id2[64];
	char prog[] = "memreclaimd", opt[] = "--config";
	char *argv[] = { prog, opt, conf, NULL };
	char *env[] = { env_state, NULL };
	uint64_t without, with;
	char p[PATH_MAX * 2];
	int i;

	fmt(text, sizeof(text),
	    "[daemon]\nstats-interval = 0\nstats-format = json\n"
	    "worker-sched = nice:-10\nruntime-dir = %s\n\n"
	    "[group containers]\npath = %s/*\nruntime = yes\n"
	    "margin = " MARGIN "\n", rdir, grp);
	write_text(conf, text);
	fmt(env_state, sizeof(env_state), "MEMRECLAIM_STATE_DIR=%s",
	    state_dir);
	dp_start(&d, argv, env);
	ck_assert_msg(dp_wait_for(&d, WAIT_MS, true, 0, "following the "
				  "containers' drop-ins"),
		      "memreclaimd does not follow %s:\n%s", rdir,
		      dp_tail(d.ebuf));

	fmt(id1, sizeof(id1), "memreclaim-test-%d-c1", run_pid);
	fmt(id2, sizeof(id2), "memreclaim-test-%d-c2", run_pid);
	without = run_container(id1, "c1", NULL);
	with = run_container(id2, "c2", "containers");
	fprintf(stderr, "limit hits while streaming %llu MiB through a "
		"64 MiB container: %" PRIu64 " left alone, %" PRIu64
		" kept by memreclaimd (margin " MARGIN ")\n",
		DATA_BYTES / MiB, without, with);
	ck_assert_uint_gt(without, 0);
	ck_assert_msg(with * 10 <= without, "limit hits: %" PRIu64 " kept, "
		      "%" PRIu64 " left alone", with, without);

	/* A policy the configuration does not have: the hook refuses it,
	 * and crun does not start the container. */
	refused_policy();

	/* Stopped cleanly, with nothing kept. */
	kill(d.pid, SIGTERM);
	ck_assert_int_eq(dp_exit(&d), 0);
	d.pid = 0;
	fmt(p, sizeof(p), "%s/%s", croot, id1);
	ck_assert_int_eq(access(p, F_OK), -1);
	fmt(p, sizeof(p), "%s/%s", croot, id2);
	ck_assert_int_eq(access(p, F_OK), -1);
	/* The groups crun made in every hierarchy beside ours go now; the
	 * memory one is grp itself, which we made. */
	ck_assert_int_eq(remove_everywhere(rel), 0);
	for (i = 0; i < nhier; i++) {
		fmt(p, sizeof(p), "%s%s", hier[i], rel);
		ck_assert_int_eq(access(p, F_OK), -1);
	}
}
END_TEST

/* Writes the drop-in rdir/name whole, through a temporary file and a
 * rename as the hook does. */
static void put_dropin(const char *name, const char *text)
{
	char tmp[PATH_MAX * 2], path[PATH_MAX * 2];

	fmt(tmp, sizeof(tmp), "%s/.%s.tmp", rdir, name);
	fmt(path, sizeof(path), "%s/%s", rdir, name);
	write_text(tmp, text);
	ck_assert_int_eq(rename(tmp, path), 0);
}

static void wait_err(size_t from, const char *what)
{
	ck_assert_msg(dp_wait_for(&d, WAIT_MS, true, from, what),
		      "stderr has no '%s':\n%s", what, dp_tail(d.ebuf + from));
}

static void mkgroup(const char *path)
{
	ck_assert_msg(mkdir(path, 0755) == 0, "mkdir %s: %s", path,
		      strerror(errno));
	write_file(path, "memory.limit_in_bytes", "67108864");
}

/* The runtime directory without a runtime: drop-ins written by hand for
 * groups the test makes. One present before the daemon starts is taken
 * at start; a policy the configuration lacks, a group outside the
 * section's path, a file that does not parse and a second container
 * naming a kept group are refused; a drop-in written again with another
 * policy reconfigures its group; a reload that removes the section
 * releases it; removing the file releases it, its limit as it was; a
 * group removed while its drop-in stays is released. */
START_TEST(dropins_taken_refused_and_released)
{
	char env_state[PATH_MAX + 32], text[PATH_MAX * 4], g1[PATH_MAX * 2];
	char g2[PATH_MAX * 2], want[PATH_MAX * 3];
	char prog[] = "memreclaimd", opt[] = "--config";
	char *argv[] = { prog, opt, conf, NULL };
	char *env[] = { env_state, NULL };
	char head[PATH_MAX + 128], body[PATH_MAX * 3];
	size_t from;
	int i;

	fmt(g1, sizeof(g1), "%s/g1", grp);
	fmt(g2, sizeof(g2), "%s/g2", grp);
	mkgroup(g1);
	mkgroup(g2);
	fmt(head, sizeof(head), "[daemon]\nstats-interval = 0\n"
	    "stats-format = json\nruntime-dir = %s\n\n", rdir);
	fmt(body, sizeof(body),
	    "[group small]\npath = %s/*\nruntime = yes\nmargin = 8M\n"
	    "[group big]\npath = %s/*\nruntime = yes\nmargin = 16M\n"
	    "[group elsewhere]\npath = %s/elsewhere/*\nruntime = yes\n",
	    grp, grp, grp);
	fmt(text, sizeof(text), "%s%s", head, body);
	write_text(conf, text);
	ck_assert_int_eq(mkdir(rdir, 0755), 0);
	fmt(text, sizeof(text), "cgroup = %s\npolicy = small\n", g1);
	put_dropin("a.conf", text);
	fmt(env_state, sizeof(env_state), "MEMRECLAIM_STATE_DIR=%s",
	    state_dir);
	dp_start(&d, argv, env);
	/* Taken at start, with the section's margin. */
	fmt(want, sizeof(want), "%s: container a: kept with [group small]", g1);
	wait_err(0, want);
	dp_wait_records(&d, "start", g1, 1, WAIT_MS);
	ck_assert_msg(strstr(d.obuf, "\"margin_bytes\":8388608,"), "%s",
		      dp_tail(d.obuf));

	from = d.elen;
	fmt(text, sizeof(text), "cgroup = %s\npolicy = nope\n", g2);
	put_dropin("b.conf", text);
	wait_err(from, "b.conf: drop-in refused: policy 'nope' is no [group] "
		 "section with runtime = yes");
	from = d.elen;
	fmt(text, sizeof(text), "cgroup = %s\npolicy = elsewhere\n", g2);
	put_dropin("c.conf", text);
	fmt(want, sizeof(want), "c.conf: drop-in refused: %s is not a path of "
	    "[group elsewhere]", g2);
	wait_err(from, want);
	from = d.elen;
	put_dropin("d.conf", "[container]\n");
	wait_err(from, "d.conf: drop-in refused: a line that is not key = "
		 "value");
	from = d.elen;
	fmt(text, sizeof(text), "cgroup = %s\npolicy = small\n", g1);
	put_dropin("e.conf", text);
	wait_err(from, "container e's drop-in refused: the group is container "
		 "a's");
	ck_assert_int_eq(dp_count_records(&d, "start", g2), 0);
	/* The refused files go; a keeps its group (e held nothing). */
	for (i = 0; i < 4; i++) {
		fmt(text, sizeof(text), "%s/%c.conf", rdir, "bcde"[i]);
		ck_assert_int_eq(unlink(text), 0);
	}

	/* Written again with another policy: the same handle, the new
	 * margin. */
	from = d.elen;
	fmt(text, sizeof(text), "cgroup = %s\npolicy = big\n", g1);
	put_dropin("a.conf", text);
	fmt(want, sizeof(want), "%s: margin 16777216 bytes", g1);
	wait_err(from, want);
	ck_assert_ptr_null(strstr(d.ebuf, "released"));
	ck_assert_int_eq(dp_count_records(&d, "start", g1), 1);

	/* A reload without its section releases it. */
	from = d.elen;
	fmt(body, sizeof(body),
	    "[group small]\npath = %s/*\nruntime = yes\nmargin = 8M\n", grp);
	fmt(text, sizeof(text), "%s%s", head, body);
	write_text(conf, text);
	kill(d.pid, SIGHUP);
	wait_err(from, "container a: its drop-in was refused; released");
	/* Named again: taken; its file removed: released, its limit as
	 * it was. */
	from = d.elen;
	fmt(text, sizeof(text), "cgroup = %s\npolicy = small\n", g1);
	put_dropin("a.conf", text);
	fmt(want, sizeof(want), "%s: container a: kept with [group small]", g1);
	wait_err(from, want);
	from = d.elen;
	fmt(text, sizeof(text), "%s/a.conf", rdir);
	ck_assert_int_eq(unlink(text), 0);
	wait_err(from, "container a: its drop-in was removed; released");
	ck_assert_str_eq(read_text(g1, "memory.limit_in_bytes"), "67108864\n");
	/* A container's group removed with its drop-in left (a runtime
	 * killed before its poststop hooks): released all the same (no
	 * final record: nothing is left to read); the drop-in's removal
	 * later is no error. */
	from = d.elen;
	fmt(text, sizeof(text), "cgroup = %s\npolicy = small\n", g2);
	put_dropin("f.conf", text);
	fmt(want, sizeof(want), "%s: container f: kept with [group small]", g2);
	wait_err(from, want);
	ck_assert_int_eq(rmdir(g2), 0);
	fmt(want, sizeof(want), "%s: container f: its cgroup was removed with "
	    "its drop-in still there", g2);
	wait_err(from, want);
	fmt(text, sizeof(text), "%s/f.conf", rdir);
	ck_assert_int_eq(unlink(text), 0);
	kill(d.pid, SIGTERM);
	ck_assert_int_eq(dp_exit(&d), 0);
	d.pid = 0;
	ck_assert_int_eq(rmdir(g1), 0);
}
END_TEST

/* The hooks.d file as installed (examples/memreclaim-oci-hook.json.in,
 * the hook's directory this build's), with the test's configuration and
 * runtime directory added to its args and its state directory to its
 * env, in dir/memreclaim-oci-hook.json. Its when and stages are the
 * file's own: they are what podman is to read. */
static void write_hooks_d(const char *dir)
{
	const char *top = getenv("top_srcdir");
	char in[PATH_MAX], out[PATH_MAX * 2], hookdir[PATH_MAX];
	char env_state[PATH_MAX + 32], *text, *at;
	const char *args[] = { "memreclaim-oci-hook", "--config", conf,
			       "--runtime-dir", rdir, NULL };
	const char *env[] = { env_state, NULL };
	json_object *o, *h, *st;
	FILE *f;
	long len;

	fmt(in, sizeof(in), "%s/examples/memreclaim-oci-hook.json.in",
	    top && *top ? top : ".");
	f = fopen(in, "re");
	ck_assert_msg(f != NULL, "%s: %s", in, strerror(errno));
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)len + PATH_MAX);
	ck_assert_ptr_nonnull(text);
	ck_assert_int_eq(fread(text, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	at = strstr(text, "@ocihookdir@");
	ck_assert_ptr_nonnull(at);
	fmt(hookdir, sizeof(hookdir), "%s", hook);
	*strrchr(hookdir, '/') = '\0';
	memmove(at + strlen(hookdir), at + strlen("@ocihookdir@"),
		strlen(at + strlen("@ocihookdir@")) + 1);
	memcpy(at, hookdir, strlen(hookdir));
	o = json_tokener_parse(text);
	free(text);
	ck_assert_ptr_nonnull(o);
	ck_assert(json_object_object_get_ex(o, "stages", &st));
	ck_assert_str_eq(json_object_to_json_string(st),
			 "[ \"prestart\", \"poststop\" ]");
	ck_assert(json_object_object_get_ex(o, "hook", &h));
	ck_assert_str_eq(json_object_get_string(json_object_object_get(h,
			 "path")), hook);
	fmt(env_state, sizeof(env_state), "MEMRECLAIM_STATE_DIR=%s",
	    state_dir);
	json_object_object_add(h, "args", strs(args));
	json_object_object_add(h, "env", strs(env));
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	fmt(out, sizeof(out), "%s/memreclaim-oci-hook.json", dir);
	ck_assert_int_eq(json_object_to_file(out, o), 0);
	json_object_put(o);
}

/* The group podman made for its container beneath grp (libpod-ID), into
 * out; false when there is none. */
static bool podman_group(char *out, size_t len)
{
	struct dirent *e;
	bool found = false;
	DIR *dp = opendir(grp);

	while (dp && !found && (e = readdir(dp)))
		if (strncmp(e->d_name, "libpod-", 7) == 0) {
			fmt(out, len, "%s/%s", grp, e->d_name);
			found = true;
		}
	if (dp)
		closedir(dp);
	return found;
}

/* podman with the hooks.d file (podman reads hooks.d; crun does not): a
 * container annotated io.memreclaim.policy is handed to memreclaimd at
 * prestart and taken back at poststop, which podman runs itself when it
 * removes the container (--rm). */
START_TEST(podman_reads_the_hooks_d_file)
{
	char env_state[PATH_MAX + 32], text[PATH_MAX * 3];
	char hooks[PATH_MAX + 16], group[PATH_MAX * 2];
	char log[PATH_MAX + 16], prog[] = "memreclaimd", opt[] = "--config";
	char *argv[] = { prog, opt, conf, NULL };
	char *env[] = { env_state, NULL };
	unsigned long long end;
	size_t from;
	int status;
	pid_t pid;

	fmt(hooks, sizeof(hooks), "%s/hooks.d", work);
	fmt(log, sizeof(log), "%s/podman.log", work);
	write_hooks_d(hooks);
	fmt(text, sizeof(text),
	    "[daemon]\nstats-interval = 0\nstats-format = json\n"
	    "runtime-dir = %s\n\n[group containers]\npath = %s/*\n"
	    "runtime = yes\nmargin = " MARGIN "\n", rdir, grp);
	write_text(conf, text);
	fmt(env_state, sizeof(env_state), "MEMRECLAIM_STATE_DIR=%s",
	    state_dir);
	dp_start(&d, argv, env);
	ck_assert(dp_wait_for(&d, WAIT_MS, true, 0, "following the "
			      "containers' drop-ins"));
	ctl_reset();
	from = d.elen;
	pid = podman_run(log, hooks);
	wait_ctl(pid, "ready", log);
	/* The hook's drop-in, then the daemon's record. */
	ck_assert_msg(podman_group(group, sizeof(group)), "no libpod group in "
		      "%s; podman's log:\n%s", grp, log_tail(log));
	wait_err(from, "kept with [group containers]");
	dp_wait_records(&d, "start", group, 1, WAIT_MS);
	ctl_touch("exit");
	status = wait_child(pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "podman run: status %d; its log:\n%s", status,
		      log_tail(log));
	wait_err(from, "its drop-in was removed; released");
	end = dp_mono_ms() + WAIT_MS;
	while (access(group, F_OK) == 0) {
		ck_assert_msg(dp_mono_ms() < end, "%s left", group);
		dp_sleep_ms(20);
	}
	kill(d.pid, SIGTERM);
	ck_assert_int_eq(dp_exit(&d), 0);
	d.pid = 0;
}
END_TEST

/* Whether prog is an executable in $PATH. */
static bool in_path(const char *prog)
{
	const char *path = getenv("PATH"), *p, *colon;
	char f[PATH_MAX];

	for (p = path ? path : "/usr/bin:/bin"; *p; p = colon + 1) {
		colon = strchrnul(p, ':');
		fmt(f, sizeof(f), "%.*s/%s", (int)(colon - p), p, prog);
		if (access(f, X_OK) == 0)
			return true;
		if (!*colon)
			break;
	}
	return false;
}

int main(void)
{
	struct mri_cgroup_mount m;
	struct statfs sf;
	Suite *s;
	TCase *tc;
	SRunner *sr;
	size_t n;
	int failed, r;

	run_pid = (int)getpid();
	r = rc_find_places("-oci");
	if (r)
		return r;
	if (!in_path("crun"))
		return rc_skip("crun is not installed (Debian: apt-get install "
			       "crun)");
	if (access(BUSYBOX, X_OK) < 0)
		return rc_skip(BUSYBOX " is missing (Debian: apt-get install "
			       "busybox-static)");
	if (mri_mount_find_memory_v1("/proc/self/mountinfo", &m) < 0)
		return rc_skip("no cgroup v1 memory controller is mounted");
	n = strlen(m.mount_point);
	if (strncmp(parent, m.mount_point, n) != 0 ||
	    (parent[n] != '/' && parent[n] != '\0') ||
	    strcmp(m.root, "/") != 0)
		return rc_skip("MEMRECLAIM_TEST_PARENT is not below the whole "
			       "v1 memory hierarchy's mount, where crun's "
			       "cgroupsPath is rooted");
	fmt(rel_parent, sizeof(rel_parent), "%s", parent + n);
	fmt(rel, sizeof(rel), "%s/memreclaim-test-%d-oci", rel_parent,
	    run_pid);
	mri_mount_each("/proc/self/mountinfo", add_hier, NULL);
	hybrid = statfs("/sys/fs/cgroup/unified", &sf) == 0 &&
		 (unsigned long)sf.f_type == CGROUP2_SUPER_MAGIC;
	rc_sweep_stale();
	sweep_stale_hierarchies();

	s = suite_create("real-oci");
	tc = tcase_create("crun");
	/* In this process, around the forked test: a failed test leaves
	 * its containers running (killing crun does not stop them), and the
	 * teardown deletes them. */
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, container_kept_and_released);
	suite_add_tcase(s, tc);
	/* podman reads hooks.d (crun does not): where it is installed, the
	 * hooks.d file is tried with it. The suite does not install it. */
	if (in_path("podman")) {
		tc = tcase_create("podman");
		tcase_add_unchecked_fixture(tc, setup, teardown);
		tcase_set_timeout(tc, 300);
		tcase_add_test(tc, podman_reads_the_hooks_d_file);
		suite_add_tcase(s, tc);
	} else {
		printf("podman is not installed: the hooks.d file is not tried "
		       "with it\n");
	}
	tc = tcase_create("dropins");
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, dropins_taken_refused_and_released);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
