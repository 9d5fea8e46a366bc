/* isolate_v1.c: isolation on the v1 cpuset hierarchy. Every task of the
 * root group that may leave it goes to ROOT/rtschedd.housekeeping, whose
 * CPUs are the others: what those tasks start is born there too. The root
 * group stops balancing load (cpuset.sched_load_balance 0, the housekeeping
 * group balances its own CPUs), so the isolated CPUs are in no scheduling
 * domain, as isolcpus and cgroup2's isolated partitions leave them: no
 * balancing softirq or idle-balance kick there. v1 moves
 * one thread at a time (its tasks file), so the managed threads stay in the
 * root group with every CPU while the rest of their process leaves. Kernel
 * threads stay in the root group (one that moved could not come back
 * once the kernel pinned it); those that may move leave by their affinity
 * (iso_kthread()). Groups below the root that others made give the
 * isolated CPUs up, children first, unless they hold a managed thread. */
#include "autoconfig.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/core/registry.h"
#include "daemon/core/state.h"
#include "daemon/cpu/isolate_int.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/kfile.h"
#include "daemon/sys/log.h"
#include "daemon/sys/proc.h"

/* ROOT/group/file into buf. */
static int group_file(const struct isolate *m, const char *group, const char *file, char *buf, size_t len)
{
	return kfile_path(buf, len, m->fs.mount, "%s/%s", strcmp(group, "/") ? group : "", file);
}

/* The tids of a group's tasks file, malloc'd. */
static int read_tids(const struct isolate *m, const char *group, pid_t **out, size_t *n)
{
	char p[PATH_MAX], line[32];
	pid_t *v = NULL;
	size_t cap = 0;
	FILE *f;
	int r;

	*out = NULL;
	*n = 0;
	if ((r = group_file(m, group, "tasks", p, sizeof(p))) < 0)
		return r;
	if (!(f = fopen(p, "re")))
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (*n == cap) {
			pid_t *nv = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof(*v));
			if (!nv) {
				fclose(f);
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		v[(*n)++] = (pid_t)atoi(line);
	}
	fclose(f);
	*out = v;
	return 0;
}

/* Move tid into group (one write of its number to the group's tasks file). */
static int move_task(const struct isolate *m, const char *group, pid_t tid)
{
	char p[PATH_MAX], num[16];
	int r;

	if ((r = group_file(m, group, "tasks", p, sizeof(p))) < 0)
		return r;
	snprintf(num, sizeof(num), "%d", (int)tid);
	return kfile_write(AT_FDCWD, p, num);
}

/* Does any task of group (or of a group below it) hold a managed thread? */
static bool holds_managed(struct isolate *m, const char *group)
{
	pid_t *tids;
	size_t n;
	bool yes = false;

	if (read_tids(m, group, &tids, &n) < 0)
		return true; /* unknown: leave it alone */
	for (size_t i = 0; i < n && !yes; i++)
		yes = registry_find(m->registry, tids[i]) != NULL;
	free(tids);
	return yes;
}

/* Take the isolated CPUs off group and every group below it, children first
 * (a group's CPUs must stay within its parent's). True when none of them
 * keeps any. */
static bool narrow(struct isolate *m, const char *group, const cpu_set_t *iso, int depth)
{
	char p[PATH_MAX], child[PATH_MAX], text[4096];
	cpu_set_t cpus, rest;
	struct dirent *e;
	bool ok = true;
	DIR *d;
	int r;

	if (group_file(m, group, "", p, sizeof(p)) < 0 || !(d = opendir(p)))
		return false;
	while ((e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.' || (depth == 0 && strcmp(e->d_name, ISO_GROUP) == 0))
			continue;
		if (snprintf(child, sizeof(child), "%s/%s", strcmp(group, "/") ? group : "", e->d_name) >=
		    (int)sizeof(child) || !cgroupfs_path_ok(child) || depth > 32) {
			ok = false;
			continue;
		}
		ok &= narrow(m, child, iso, depth + 1);
	}
	closedir(d);
	if (depth == 0)
		return ok;
	if (group_file(m, group, "cpuset.cpus", p, sizeof(p)) < 0 || kfile_read(AT_FDCWD, p, text, sizeof(text)) < 0 ||
	    cpulist_parse(text, &cpus, NULL) < 0)
		return false;
	CPU_AND(&rest, &cpus, iso);
	if (CPU_COUNT(&rest) == 0)
		return ok;
	const char *why = !ok ? "a group below it keeps them" : holds_managed(m, group) ? "it holds managed threads" : NULL;
	CPU_XOR(&rest, &cpus, &rest);
	if (!why && CPU_COUNT(&rest) == 0)
		why = "it has no other CPU";
	if (!why) {
		cpulist_format(&rest, text, sizeof(text));
		if ((r = kfile_write(AT_FDCWD, p, text)) == 0) {
			iso_rec_add(m, 'G', 0, 0, &cpus, group);
			m->groups++;
			return true;
		}
		why = strerror(-r);
	}
	log_notice("isolation: cpuset group %s keeps the isolated CPUs (%s); its tasks may still run there", group, why);
	return false;
}

/* Copy a file of the root group into the housekeeping group. */
static int copy_root(struct isolate *m, const char *file)
{
	char from[PATH_MAX], to[PATH_MAX], text[4096];
	int r;

	if ((r = group_file(m, "/", file, from, sizeof(from))) < 0 || (r = kfile_read(AT_FDCWD, from, text, sizeof(text))) < 0 ||
	    (r = group_file(m, "/" ISO_GROUP, file, to, sizeof(to))) < 0)
		return r;
	return kfile_write(AT_FDCWD, to, text);
}

/* Make the housekeeping group (once) and give it the CPUs hk. */
static int setup(struct isolate *m, const cpu_set_t *hk)
{
	char p[PATH_MAX], now[4096], text[4096];
	int r;

	if ((r = kfile_path(p, sizeof(p), m->fs.mount, "/%s", ISO_GROUP)) < 0)
		return r;
	if (!m->owned) {
		if (mkdir(p, 0755) < 0) {
			r = -errno;
			if (r == -EEXIST)
				iso_fail(m, ISOLATE_CODE_BUSY, 0, "%s exists and is not in this rtschedd's journal: another "
					 "rtschedd isolates CPUs, or one lost its journal; if none runs, move its tasks back "
					 "(for t in $(cat %s/tasks); do echo $t > %s/tasks; done) and rmdir it", p, p,
					 m->fs.mount);
			else if (r == -EACCES || r == -EPERM)
				iso_fail(m, ISOLATE_CODE_REFUSED, r, "cannot make the housekeeping group %s (rtschedd keeps "
					 "CAP_DAC_OVERRIDE for it only when its configuration at start has isolate = yes: "
					 "restart it)", p);
			else
				iso_fail(m, ISOLATE_CODE_REFUSED, r, "cannot make the housekeeping group %s", p);
			return r;
		}
		m->owned = true;
		if ((r = copy_root(m, "cpuset.mems")) < 0) {
			iso_fail(m, ISOLATE_CODE_REFUSED, r, "cannot give %s the memory nodes of the root group", p);
			return r;
		}
	}
	cpulist_format(hk, text, sizeof(text));
	if ((r = group_file(m, "/" ISO_GROUP, "cpuset.cpus", p, sizeof(p))) < 0)
		return r;
	if ((kfile_read(AT_FDCWD, p, now, sizeof(now)) < 0 || strcmp(now, text) != 0) &&
	    (r = kfile_write(AT_FDCWD, p, text)) < 0) {
		iso_fail(m, ISOLATE_CODE_REFUSED, r, "cannot give the housekeeping group CPUs %s (%s)", text, p);
		return r;
	}
	/* no load balancing but the housekeeping group's own */
	if (m->lb_orig < 0 && group_file(m, "/", "cpuset.sched_load_balance", p, sizeof(p)) == 0 &&
	    kfile_read(AT_FDCWD, p, now, sizeof(now)) == 0 && (!strcmp(now, "0") || !strcmp(now, "1"))) {
		if ((r = kfile_write(AT_FDCWD, p, "0")) < 0) {
			iso_fail(m, ISOLATE_CODE_REFUSED, r, "cannot stop the root group's load balancing (%s)", p);
			return r;
		}
		m->lb_orig = now[0] - '0';
		state_put(m->state, "L 0 %d", m->lb_orig);
	}
	return 0;
}

/* Off the isolated CPUs: a user task into the housekeeping group (its
 * affinity recorded if it was pinned there), a kernel thread by affinity. */
static int sweep_one(struct isolate *m, pid_t tid, const cpu_set_t *iso, const cpu_set_t *online)
{
	struct proc_stat st;
	cpu_set_t aff, in;
	int r;

	if (iso_keeps(m, tid) || proc_read_stat(tid, &st) < 0)
		return 0;
	if (st.flags & PROC_PF_KTHREAD) {
		iso_kthread(m, tid, st.comm, st.flags, st.starttime, iso);
		return 0;
	}
	/* a task pinned onto the isolated CPUs gets them back on release as it had them */
	if (sched_getaffinity(tid, sizeof(aff), &aff) == 0 && !CPU_EQUAL(&aff, online) &&
	    (CPU_AND(&in, &aff, iso), CPU_COUNT(&in)) && !iso_rec_find(m, 'A', tid))
		iso_rec_add(m, 'A', tid, st.starttime, &aff, NULL);
	r = move_task(m, "/" ISO_GROUP, tid);
	if (r < 0 && r != -ESRCH) {
		/* one task the kernel will not move (a SCHED_DEADLINE reservation
		 * the other CPUs cannot hold) stays, and says so */
		log_notice("isolation: tid %d (%s) stays on the isolated CPUs: %s", (int)tid, st.comm, strerror(-r));
		iso_stay(m, st.comm);
	}
	return r == 0 ? 1 : 0;
}

/* rtschedd's own threads belong to the root group: one started by a task
 * of the housekeeping group (a restart) could not pin its probes and
 * canaries to the isolated CPUs. */
static void own_to_root(struct isolate *m)
{
	char g[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir("/proc/self/task");

	while (d && (e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid > 0 && cgroupfs_task_group(&m->fs, tid, g, sizeof(g)) == 0 && strcmp(g, "/" ISO_GROUP) == 0)
			move_task(m, "/", tid);
	}
	if (d)
		closedir(d);
}

int iso_v1_apply(struct isolate *m, const cpu_set_t *hk)
{
	cpu_set_t online, iso;
	pid_t *tids;
	size_t n;
	int r, moved = 1;

	if ((r = setup(m, hk)) < 0)
		return r;
	own_to_root(m);
	if (cpulist_online(&online) < 0)
		CPU_ZERO(&online);
	CPU_XOR(&iso, &online, hk);
	/* tasks forked meanwhile by tasks still in the root group: again, a few times */
	for (int pass = 0; pass < 4 && moved > 0; pass++) {
		if ((r = read_tids(m, "/", &tids, &n)) < 0) {
			iso_fail(m, ISOLATE_CODE_REFUSED, r, "cannot read the root cpuset group's tasks");
			return r;
		}
		moved = 0;
		for (size_t i = 0; i < n; i++)
			moved += sweep_one(m, tids[i], &iso, &online);
		free(tids);
	}
	if (read_tids(m, "/" ISO_GROUP, &tids, &n) == 0) {
		m->moved = n;
		free(tids);
	}
	narrow(m, "/", &iso, 0);
	return 0;
}

/* The group a task is in, if it is one isolation changed ("/" and others: ""). */
static void changed_group(struct isolate *m, pid_t tid, char *g, size_t len, bool *ours)
{
	*ours = false;
	if (cgroupfs_task_group(&m->fs, tid, g, len) < 0 || strcmp(g, "/") == 0) {
		g[0] = '\0';
		return;
	}
	if (strcmp(g, "/" ISO_GROUP) == 0) {
		*ours = true;
		return;
	}
	for (struct iso_rec *r = m->recs; r; r = r->next)
		if (r->kind == 'G' && strncmp(g, r->text, strlen(r->text)) == 0 &&
		    (g[strlen(r->text)] == '/' || g[strlen(r->text)] == '\0'))
			return;
	g[0] = '\0';
}

int iso_v1_admit(struct isolate *m, pid_t tid)
{
	char g[PATH_MAX];
	struct proc_stat st;
	bool ours;
	int r;

	changed_group(m, tid, g, sizeof(g), &ours);
	if (!g[0])
		return 0;
	/* a name the journal's "M" line cannot hold (a blank in it): the task
	 * could not be put back there after a restart, so it stays */
	if (!ours && !cgroupfs_path_ok(g)) {
		log_notice("isolation: tid %d stays in cpuset group %s (a name rtschedd does not journal)", (int)tid, g);
		return 0;
	}
	if (!ours && !iso_rec_find(m, 'M', tid) && proc_read_stat(tid, &st) == 0)
		iso_rec_add(m, 'M', tid, st.starttime, NULL, g);
	r = move_task(m, "/", tid);
	if (r < 0 && r != -ESRCH)
		log_errno(LOG_LEVEL_WARNING, r, "isolation: tid %d cannot leave cpuset group %s for the root group",
			  (int)tid, g);
	return r == -ESRCH ? 0 : r;
}

void iso_v1_fork(struct isolate *m, pid_t tid)
{
	char g[PATH_MAX];
	struct proc_stat st;
	cpu_set_t online;

	if (proc_read_stat(tid, &st) < 0)
		return;
	if (st.flags & PROC_PF_KTHREAD) {
		iso_kthread(m, tid, st.comm, st.flags, st.starttime, &m->active);
		return;
	}
	if (cgroupfs_task_group(&m->fs, tid, g, sizeof(g)) < 0 || strcmp(g, "/") != 0)
		return; /* born in the housekeeping group (or another), as it should */
	if (cpulist_online(&online) == 0 && sweep_one(m, tid, &m->active, &online) > 0)
		m->moved++;
}

void iso_v1_release(struct isolate *m)
{
	struct iso_rec *r, *next;
	char p[PATH_MAX];
	pid_t *tids;
	size_t n;

	/* tasks moved out of other groups go back there first */
	for (r = m->recs; r; r = next) {
		next = r->next;
		if (r->kind != 'M')
			continue;
		if (iso_same_task((pid_t)r->id, r->starttime)) {
			int e = move_task(m, r->text, (pid_t)r->id);
			if (e < 0 && e != -ESRCH)
				log_errno(LOG_LEVEL_WARNING, e, "isolation: tid %ld cannot go back to cpuset group %s", r->id,
					  r->text);
		}
		iso_rec_drop(m, r);
	}
	if (m->owned) {
		/* tasks fork while they go back: until the group is empty */
		for (int pass = 0; pass < 10 && read_tids(m, "/" ISO_GROUP, &tids, &n) == 0; pass++) {
			for (size_t i = 0; i < n; i++)
				move_task(m, "/", tids[i]);
			free(tids);
			if (n == 0)
				break;
		}
		kfile_path(p, sizeof(p), m->fs.mount, "/%s", ISO_GROUP);
		for (int i = 0; i < 50; i++) {
			/* a task that just exited leaves the group a moment later */
			if (rmdir(p) == 0 || errno == ENOENT) {
				m->owned = false;
				break;
			}
			if (errno != EBUSY)
				break;
			nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
		}
		if (m->owned)
			log_warn("isolation: cannot remove %s; the next rtschedd tries again", p);
	}
	if (m->lb_orig >= 0) {
		char v[2] = { (char)('0' + m->lb_orig), '\0' };
		int e;
		if (group_file(m, "/", "cpuset.sched_load_balance", p, sizeof(p)) == 0 &&
		    (e = kfile_write(AT_FDCWD, p, v)) < 0)
			log_errno(LOG_LEVEL_WARNING, e, "isolation: cannot put the root group's load balancing back to %s", v);
		m->lb_orig = -1;
		state_put_gone(m->state, 'L', 0);
	}
	/* the groups narrowed, parents first (the newest records) */
	for (r = m->recs; r; r = next) {
		char text[4096];
		int e;

		next = r->next;
		if (r->kind != 'G')
			continue;
		cpulist_format(&r->cpus, text, sizeof(text));
		if (group_file(m, r->text, "cpuset.cpus", p, sizeof(p)) == 0 && (e = kfile_write(AT_FDCWD, p, text)) < 0 &&
		    e != -ENOENT)
			log_errno(LOG_LEVEL_WARNING, e, "isolation: cannot give cpuset group %s its CPUs %s back", r->text,
				  text);
		iso_rec_drop(m, r);
	}
}
