/* isolate_sd.c: isolation where systemd owns the cgroup2 tree (PID 1 is
 * systemd, the cpuset controller is on cgroup2). rtschedd does not write
 * systemd's cgroups: it asks systemd, through org.freedesktop.systemd1's
 * SetUnitProperties (runtime: a drop-in under /run/systemd/system.control
 * that a reboot forgets), to give AllowedCPUs= with the other CPUs to every
 * unit beside the managed threads' own. A slice that holds a managed thread
 * is not restricted itself: rtschedd descends into it and restricts its
 * other units. The unit that holds a managed thread keeps every CPU, and
 * what else runs in it (its other threads: cgroup2 puts a process's threads
 * in one group) leaves by affinity; so do the kernel threads of the root
 * group, as on v1. Each unit's AllowedCPUs= goes into the journal ("U ID
 * CPUS GROUP") before the call that changes it, and back on release. A
 * unit started later beside a managed one is restricted when its first
 * process is seen (the process events connector); a new task of a group
 * already swept is moved alone. A directory is PID 1's unit only if that
 * unit's ControlGroup is the directory: groups below a unit that PID 1
 * does not manage (a user manager's units, anything a delegated subtree's
 * owner made, whatever its name) leave by affinity, with their subtrees.
 *
 * Setting properties of other units needs root, or polkit's
 * org.freedesktop.systemd1.manage-units for the verb "set-property" (the
 * example rule conf/examples/rtschedd-isolate.rules grants it to user
 * rtschedd); without it the code is isolate-refused, with systemd's words. */
#include "autoconfig.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "daemon/core/registry.h"
#include "daemon/cpu/isolate_int.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/kfile.h"
#include "daemon/sys/log.h"
#include "daemon/sys/proc.h"
#include "daemon/sys/strmap.h"

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"
/* how long a call waits for systemd (and polkit, for user rtschedd) */
#define ISO_SD_CALL_TIMEOUT_S 5

bool iso_sd_owns(void)
{
	return sd_booted() > 0;
}

/* The groups that keep every CPU: those of managed threads, and
 * rtschedd's own (its pinned probes and canaries). */
struct keep {
	char **path;
	size_t n;
};

static void keep_add(struct keep *k, const char *path)
{
	char **v;

	for (size_t i = 0; i < k->n; i++)
		if (strcmp(k->path[i], path) == 0)
			return;
	if (!(v = realloc(k->path, (k->n + 1) * sizeof(*v))) || !(v[k->n] = strdup(path))) {
		if (v)
			k->path = v;
		return;
	}
	k->path = v;
	k->n++;
}

static void keep_free(struct keep *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->path[i]);
	free(k->path);
}

/* 1: path is a kept group; 2: a kept group lies below it; 0: neither. */
static int kept(const struct keep *k, const char *path)
{
	size_t n = strlen(path);
	int r = 0;

	for (size_t i = 0; i < k->n; i++) {
		if (strcmp(k->path[i], path) == 0)
			return 1;
		if ((n == 1 || (strncmp(k->path[i], path, n) == 0 && k->path[i][n] == '/')))
			r = 2;
	}
	return r;
}

static void keep_collect(struct isolate *m, struct keep *k)
{
	char g[PATH_MAX];
	pid_t last = 0;

	REGISTRY_FOREACH_THREAD(t, m->registry)
		if (t->pid != last && cgroupfs_task_group(&m->fs, t->tid, g, sizeof(g)) == 0) {
			keep_add(k, g);
			last = t->pid;
		}
	if (cgroupfs_task_group(&m->fs, getpid(), g, sizeof(g)) == 0)
		keep_add(k, g);
}

static int bus_open(struct isolate *m)
{
	int r;

	if (m->bus)
		return 0;
	if ((r = sd_bus_open_system(&m->bus)) < 0)
		return r;
	/* a stuck systemd must not hold the event loop for sd-bus's 25 s */
	sd_bus_set_method_call_timeout(m->bus, ISO_SD_CALL_TIMEOUT_S * 1000000ULL);
	return 0;
}

/* The D-Bus interface of a unit's type, from its suffix; NULL: not a unit name. */
static const char *unit_iface(const char *unit)
{
	static const char *const types[][2] = {
		{ ".service", "org.freedesktop.systemd1.Service" }, { ".scope", "org.freedesktop.systemd1.Scope" },
		{ ".slice", "org.freedesktop.systemd1.Slice" },     { ".socket", "org.freedesktop.systemd1.Socket" },
		{ ".mount", "org.freedesktop.systemd1.Mount" },     { ".swap", "org.freedesktop.systemd1.Swap" },
	};
	const char *dot = strrchr(unit, '.');

	for (size_t i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(dot, types[i][0]) == 0)
			return types[i][1];
	return NULL;
}

/* A unit's AllowedCPUs=: *has false when it sets none (every CPU). */
static int get_allowed(struct isolate *m, const char *unit, bool *has, cpu_set_t *cpus, sd_bus_error *err)
{
	sd_bus_message *reply = NULL;
	char *path = NULL;
	const uint8_t *bytes;
	size_t n = 0;
	int r;

	CPU_ZERO(cpus);
	if ((r = sd_bus_path_encode(SD_PATH "/unit", unit, &path)) < 0)
		return r;
	r = sd_bus_get_property(m->bus, SD_DEST, path, unit_iface(unit), "AllowedCPUs", err, &reply, "ay");
	free(path);
	if (r >= 0)
		r = sd_bus_message_read_array(reply, 'y', (const void **)&bytes, &n);
	for (size_t i = 0; r >= 0 && i < n; i++)
		for (int b = 0; b < 8; b++)
			if ((bytes[i] >> b & 1) && i * 8 + (size_t)b < CPU_SETSIZE)
				CPU_SET((int)(i * 8 + (size_t)b), cpus);
	*has = CPU_COUNT(cpus) > 0;
	sd_bus_message_unref(reply);
	return r < 0 ? r : 0;
}

/* AllowedCPUs=cpus (NULL: none) on unit, at runtime. */
static int set_allowed(struct isolate *m, const char *unit, const cpu_set_t *cpus, sd_bus_error *err)
{
	sd_bus_message *msg = NULL, *reply = NULL;
	uint8_t bytes[CPU_SETSIZE / 8] = { 0 };
	size_t n = 0;
	int r;

	for (int c = 0; cpus && c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, cpus)) {
			bytes[c / 8] |= (uint8_t)(1u << (c % 8));
			n = (size_t)c / 8 + 1;
		}
	if ((r = sd_bus_message_new_method_call(m->bus, &msg, SD_DEST, SD_PATH, SD_MANAGER, "SetUnitProperties")) < 0 ||
	    (r = sd_bus_message_append(msg, "sb", unit, 1)) < 0 ||
	    (r = sd_bus_message_open_container(msg, 'a', "(sv)")) < 0 ||
	    (r = sd_bus_message_open_container(msg, 'r', "sv")) < 0 ||
	    (r = sd_bus_message_append(msg, "s", "AllowedCPUs")) < 0 ||
	    (r = sd_bus_message_open_container(msg, 'v', "ay")) < 0 ||
	    (r = sd_bus_message_append_array(msg, 'y', bytes, n)) < 0 ||
	    (r = sd_bus_message_close_container(msg)) < 0 || (r = sd_bus_message_close_container(msg)) < 0 ||
	    (r = sd_bus_message_close_container(msg)) < 0)
		goto out;
	r = sd_bus_call(m->bus, msg, 0, err, &reply);
out:
	sd_bus_message_unref(msg);
	sd_bus_message_unref(reply);
	return r;
}

static struct iso_rec *unit_rec(struct isolate *m, const char *group)
{
	for (struct iso_rec *r = m->recs; r; r = r->next)
		if (r->kind == 'U' && strcmp(r->text, group) == 0)
			return r;
	return NULL;
}

/* The affinity aff without iso, in *rest, if aff has CPUs on both sides:
 * off them already, or pinned onto them alone (the kernel would refuse
 * an empty mask), it stays. */
static bool leaves_iso(const cpu_set_t *aff, const cpu_set_t *iso, cpu_set_t *rest)
{
	cpu_set_t in;

	CPU_AND(&in, aff, iso);
	if (CPU_COUNT(&in) == 0 || CPU_EQUAL(&in, aff))
		return false;
	CPU_XOR(rest, aff, &in);
	return true;
}

/* Task tid (of the group being swept) leaves iso by affinity, unless it
 * is kept, or moved already. */
static void task_by_affinity(struct isolate *m, pid_t tid, const cpu_set_t *iso)
{
	struct iso_rec *a;
	struct proc_stat st;
	cpu_set_t aff, rest;

	if (tid <= 0 || iso_keeps(m, tid) || proc_read_stat(tid, &st) < 0)
		return;
	if ((a = iso_rec_find(m, 'A', tid))) {
		if (a->starttime == st.starttime)
			return;
		iso_rec_drop(m, a); /* a task gone, its tid reused */
	}
	if (st.flags & PROC_PF_KTHREAD) {
		iso_kthread(m, tid, st.comm, st.flags, st.starttime, iso);
		return;
	}
	if (sched_getaffinity(tid, sizeof(aff), &aff) < 0 || !leaves_iso(&aff, iso, &rest))
		return;
	if (sched_setaffinity(tid, sizeof(rest), &rest) == 0)
		iso_rec_add(m, 'A', tid, st.starttime, &aff, NULL);
}

/* Every task of group that is not kept leaves iso by affinity; with
 * below, the tasks of the groups below it too (a subtree that is not
 * PID 1's units: a user manager's, or a kept unit's own). */
static void group_by_affinity(struct isolate *m, const char *group, const cpu_set_t *iso, bool below, int depth)
{
	const char *g = strcmp(group, "/") ? group : "";
	char p[PATH_MAX], line[32];
	struct dirent *e;
	FILE *f;
	DIR *d;

	if (kfile_path(p, sizeof(p), m->fs.mount, "%s/cgroup.threads", g) < 0)
		return;
	if ((f = fopen(p, "re"))) {
		while (fgets(line, sizeof(line), f))
			task_by_affinity(m, (pid_t)atoi(line), iso);
		fclose(f);
	}
	if (!below || depth >= 32 || kfile_path(p, sizeof(p), m->fs.mount, "%s", g) < 0 || !(d = opendir(p)))
		return;
	while ((e = readdir(d))) {
		char child[PATH_MAX];

		if (e->d_type == DT_DIR && e->d_name[0] != '.' &&
		    snprintf(child, sizeof(child), "%s/%s", g, e->d_name) < (int)sizeof(child) && cgroupfs_path_ok(child))
			group_by_affinity(m, child, iso, true, depth + 1);
	}
	closedir(d);
}

/* Once systemd has written the cgroups of the properties set so far (it
 * does before it reads the next message: one Ping), what Linux before 6.2
 * did to affinities then is undone: a task moved between cpusets, or in a
 * cpuset that changed, was given that cpuset's CPUs. The tasks this
 * module moved off iso by affinity leave again, and managed threads get
 * the CPUs rtschedd set (registry_repin()). */
static void settle(struct isolate *m, const cpu_set_t *iso)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;

	if (m->bus && sd_bus_call_method(m->bus, SD_DEST, SD_PATH, "org.freedesktop.DBus.Peer", "Ping", &err, NULL,
					 NULL) < 0)
		log_debug("isolation: systemd did not answer a Ping: %s", err.message ? err.message : "no bus");
	sd_bus_error_free(&err);
	for (struct iso_rec *r = m->recs; iso && r; r = r->next) {
		struct proc_stat st;
		cpu_set_t aff, rest;

		if (r->kind == 'A' && sched_getaffinity((pid_t)r->id, sizeof(aff), &aff) == 0 &&
		    leaves_iso(&aff, iso, &rest) && proc_read_stat((pid_t)r->id, &st) == 0 &&
		    st.starttime == r->starttime)
			sched_setaffinity((pid_t)r->id, sizeof(rest), &rest);
	}
	registry_repin(m->registry);
}

/* What a sweep found a group to be (struct isolate's sd_seen): its tasks,
 * and those below it, leave the isolated CPUs by affinity; whether it is
 * named like a unit but is not PID 1's; or a unit systemd would not
 * restrict, which keeps the CPUs (neither asked about again). */
#define SEEN_AFFINITY 1u
#define SEEN_NOT_UNIT 2u
#define SEEN_STAYS 4u

/* A call rtschedd stopped waiting for (sd-bus's method timeout): systemd
 * may still carry it out, when polkit answers it. */
static bool no_answer(int r, const sd_bus_error *err)
{
	return r == -ETIMEDOUT || sd_bus_error_has_name(err, SD_BUS_ERROR_TIMEOUT) ||
	       sd_bus_error_has_name(err, SD_BUS_ERROR_NO_REPLY);
}

/* 1: unit is PID 1's unit of group; 0: it is not (no such unit, or its
 * group is elsewhere: a directory named like it in a delegated subtree,
 * such as a user's own "system.slice" below user@UID.service, must not
 * make rtschedd restrict the real one); -errno. */
static int unit_at(struct isolate *m, const char *unit, const char *group, sd_bus_error *err)
{
	char *path = NULL, *cg = NULL;
	int r;

	if ((r = sd_bus_path_encode(SD_PATH "/unit", unit, &path)) < 0)
		return r;
	r = sd_bus_get_property_string(m->bus, SD_DEST, path, unit_iface(unit), "ControlGroup", err, &cg);
	free(path);
	if (r < 0 && (sd_bus_error_has_name(err, SD_BUS_ERROR_UNKNOWN_OBJECT) ||
		      sd_bus_error_has_name(err, "org.freedesktop.systemd1.NoSuchUnit"))) {
		sd_bus_error_free(err);
		return 0;
	}
	if (r < 0)
		return r;
	r = strcmp(cg, group) == 0;
	free(cg);
	return r;
}

/* AllowedCPUs=hk on the unit of group (once; again if hk changed): 0 or
 * -errno; SEEN_NOT_UNIT: group is not PID 1's unit of that name (the
 * caller sweeps it by affinity); SEEN_STAYS: systemd will not restrict it
 * (it keeps the CPUs). */
static int restrict_unit(struct isolate *m, const char *group, const char *unit, const cpu_set_t *hk)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	struct iso_rec *rec = unit_rec(m, group);
	cpu_set_t cpus;
	bool has, fresh = !rec;
	int r;

	if (rec && CPU_EQUAL(hk, &m->hk_applied))
		return 0;
	if (rec) {
		if ((r = get_allowed(m, unit, &has, &cpus, &err)) == 0 && CPU_EQUAL(&cpus, hk))
			goto out;
	} else if ((r = unit_at(m, unit, group, &err)) == 0) {
		return SEEN_NOT_UNIT; /* a user manager's unit, a user's directory */
	} else if (r < 0 || (r = get_allowed(m, unit, &has, &cpus, &err)) < 0) {
		goto out;
	}
	/* journaled before the call: a call that times out is carried out when
	 * systemd gets polkit's answer, and rtschedd may die in between */
	if (fresh && !(rec = iso_rec_add(m, 'U', 0, 0, has ? &cpus : NULL, group))) {
		iso_stay(m, unit);
		goto out;
	}
	if ((r = set_allowed(m, unit, hk, &err)) < 0 && no_answer(r, &err)) {
		log_notice("isolation: systemd did not answer within %d s about AllowedCPUs= on %s; it may still set "
			   "them, and they are given back at release either way", ISO_SD_CALL_TIMEOUT_S, unit);
		r = 0;
	} else if (r < 0 && fresh) {
		iso_rec_drop(m, rec); /* systemd said no: nothing to give back */
	}
out:
	if (r < 0 && (sd_bus_error_has_name(&err, SD_BUS_ERROR_ACCESS_DENIED) ||
		      sd_bus_error_has_name(&err, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED) || !err.name)) {
		/* not allowed (or no answer): nothing will be */
		iso_fail(m, ISOLATE_CODE_REFUSED, 0, "AllowedCPUs= on %s: %s (rtschedd needs root, or polkit's "
			 "manage-units for set-property: rtschedd.conf(5))", unit, err.message ? err.message : strerror(-r));
	} else if (r < 0) {
		/* one unit that will not (a unit type without resource control) keeps the CPUs */
		log_notice("isolation: %s keeps the isolated CPUs: systemd says %s", unit, err.message);
		iso_stay(m, unit);
		r = SEEN_STAYS;
	}
	sd_bus_error_free(&err);
	return r;
}

static void seen_put(struct strmap *seen, const char *group, size_t how)
{
	int added;
	struct strmap_entry *e = strmap_put(seen, group, &added);

	if (e)
		e->value = how;
}

/* What the last sweep found group, or the nearest group above it, to be
 * (SEEN_*); 0: nothing (a group made since). */
static size_t seen_how(const struct isolate *m, const char *group)
{
	char g[PATH_MAX], *slash;
	struct strmap_entry *e;

	if (snprintf(g, sizeof(g), "%s", group) >= (int)sizeof(g))
		return 0;
	do {
		if ((e = strmap_get(&m->sd_seen, g)))
			return e->value;
		slash = strrchr(g, '/');
		if (slash)
			*slash = '\0';
	} while (slash && g[0]);
	return 0;
}

/* A directory named like a unit: restrict_unit()'s answer, or the last
 * sweep's where it found the directory not PID 1's unit or one that stays. */
static int unit_dir(struct isolate *m, const char *group, const char *unit, const cpu_set_t *hk)
{
	struct strmap_entry *was = strmap_get(&m->sd_seen, group);
	size_t known = was ? was->value & (SEEN_NOT_UNIT | SEEN_STAYS) : 0;

	if (!known)
		return restrict_unit(m, group, unit, hk);
	if (known & SEEN_STAYS)
		iso_stay(m, unit);
	return (int)known;
}

/* Restrict every unit below group but those that hold kept groups, which
 * are descended into (or, kept themselves, left with their tasks by
 * affinity). What is swept by affinity goes into seen. */
static int walk(struct isolate *m, const char *group, const struct keep *k, const cpu_set_t *hk,
		const cpu_set_t *iso, int depth, struct strmap *seen)
{
	char p[PATH_MAX], child[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int r = 0;

	if (kfile_path(p, sizeof(p), m->fs.mount, "%s", strcmp(group, "/") ? group : "/") < 0 || !(d = opendir(p)))
		return -errno;
	while ((e = readdir(d)) && r >= 0) {
		size_t how = SEEN_AFFINITY;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		if (snprintf(child, sizeof(child), "%s/%s", strcmp(group, "/") ? group : "", e->d_name) >= (int)sizeof(child) ||
		    !cgroupfs_path_ok(child))
			continue;
		int kk = kept(k, child);
		if (kk == 2) {
			if (depth < 32)
				r = walk(m, child, k, hk, iso, depth + 1, seen);
			continue;
		}
		if (kk == 0 && unit_iface(e->d_name)) {
			if ((r = unit_dir(m, child, e->d_name, hk)) <= 0)
				continue; /* restricted (or refused: the walk ends) */
			how = (size_t)r;
			r = 0;
			if (how == SEEN_STAYS) {
				seen_put(seen, child, how);
				continue;
			}
			how |= SEEN_AFFINITY;
		}
		/* kept, not a unit (a delegated subtree's own group), or not PID 1's */
		group_by_affinity(m, child, iso, true, 0);
		seen_put(seen, child, how);
	}
	closedir(d);
	return r;
}

int iso_sd_apply(struct isolate *m, const cpu_set_t *hk)
{
	struct keep k = { NULL, 0 };
	struct strmap seen = { NULL, 0, 0 };
	cpu_set_t online, iso;
	int r;

	if ((r = bus_open(m)) < 0) {
		iso_fail(m, ISOLATE_CODE_UNAVAILABLE, r, "cannot reach systemd on the system bus");
		return r;
	}
	if (cpulist_online(&online) < 0)
		CPU_ZERO(&online);
	CPU_XOR(&iso, &online, hk);
	keep_collect(m, &k);
	m->moved = 0;
	r = walk(m, "/", &k, hk, &iso, 0, &seen);
	strmap_clear(&m->sd_seen);
	m->sd_seen = seen;
	/* the root group's own tasks: kernel threads */
	group_by_affinity(m, "/", &iso, false, 0);
	keep_free(&k);
	settle(m, &iso);
	if (r < 0)
		return r;
	m->hk_applied = *hk;
	for (struct iso_rec *u = m->recs; u; u = u->next)
		m->moved += u->kind == 'U';
	return 0;
}

/* A restricted unit gets its AllowedCPUs= back. */
static void unit_back(struct isolate *m, struct iso_rec *r)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	const char *unit = strrchr(r->text, '/') + 1;

	char was[256] = "";
	int e;

	if ((e = bus_open(m)) >= 0)
		e = set_allowed(m, unit, r->has_cpus ? &r->cpus : NULL, &err);
	if (e < 0 && r->has_cpus)
		cpulist_format(&r->cpus, was, sizeof(was));
	if (e < 0 && no_answer(e, &err))
		log_notice("isolation: systemd did not answer within %d s about giving %s its AllowedCPUs= back; it may "
			   "still do it, if not: systemctl set-property --runtime %s AllowedCPUs=%s",
			   ISO_SD_CALL_TIMEOUT_S, unit, unit, was);
	else if (e < 0)
		log_warnx("isolation: cannot give %s its AllowedCPUs= back: %s; as root: systemctl set-property "
			  "--runtime %s AllowedCPUs=%s", unit, err.message ? err.message : strerror(-e), unit, was);
	sd_bus_error_free(&err);
	iso_rec_drop(m, r);
}

/* The restricted unit group is in (or below), or NULL. */
static struct iso_rec *restricted(struct isolate *m, const char *g)
{
	for (struct iso_rec *r = m->recs; r; r = r->next)
		if (r->kind == 'U' && strncmp(g, r->text, strlen(r->text)) == 0 &&
		    (g[strlen(r->text)] == '/' || g[strlen(r->text)] == '\0'))
			return r;
	return NULL;
}

void iso_sd_release(struct isolate *m)
{
	struct iso_rec *r, *next;

	for (r = m->recs; r; r = next) {
		next = r->next;
		if (r->kind == 'U')
			unit_back(m, r);
	}
	settle(m, NULL);
	m->bus = sd_bus_flush_close_unref(m->bus);
	CPU_ZERO(&m->hk_applied);
	strmap_clear(&m->sd_seen);
}

int iso_sd_admit(struct isolate *m, pid_t tid)
{
	char g[PATH_MAX];
	struct iso_rec *r;

	if (cgroupfs_task_group(&m->fs, tid, g, sizeof(g)) < 0 || !(r = restricted(m, g)))
		return 0;
	/* cgroup2 moves no single thread: its unit gets every CPU back, and
	 * the next sweep restricts what else runs there */
	unit_back(m, r);
	/* written before the thread's settings are applied, which it would undo */
	settle(m, NULL);
	m->dirty = true;
	return 0;
}

void iso_sd_fork(struct isolate *m, pid_t tid)
{
	char g[PATH_MAX];
	struct proc_stat st;

	if (proc_read_stat(tid, &st) < 0)
		return;
	if (st.flags & PROC_PF_KTHREAD) {
		iso_kthread(m, tid, st.comm, st.flags, st.starttime, &m->active);
		return;
	}
	if (cgroupfs_task_group(&m->fs, tid, g, sizeof(g)) < 0 || restricted(m, g))
		return; /* born in a restricted unit, as it should */
	/* a new task of a group the last sweep saw: this task alone, not a
	 * sweep per fork (each costs a walk of the tree and calls to PID 1) */
	size_t how = seen_how(m, g);
	if (how & SEEN_STAYS)
		return; /* a unit systemd would not restrict */
	if (how & SEEN_AFFINITY) {
		task_by_affinity(m, tid, &m->active);
		return;
	}
	/* a new unit beside a managed one */
	iso_prune_gone(m);
	iso_sd_apply(m, &m->hk_applied);
}
