/* rules.c: automatic matching of threads by name, executable, user, group,
 * unit or cgroup (see rules.h). Only what some rule needs is read from /proc;
 * which rule wins is decided in match.c. */
#include "autoconfig.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/sys/log.h"
#include "daemon/sys/proc.h"
#include "daemon/core/match.h"
#include "daemon/core/registry.h"
#include "daemon/core/rules.h"

struct subject_buf {
	struct match_subject s;
	char comm[PROC_COMM_MAX + 1];
	char pcomm[PROC_COMM_MAX + 1];
	char exe[PATH_MAX];
	char cgroup[sizeof(((struct proc_cgroup *)0)->unified)];
	char unit[256];
	gid_t groups[PROC_GROUPS_MAX];
};

/* The cgroup v2 path of a process ("0::/system.slice/x.service") and the
 * unit it names. */
static void load_cgroup(pid_t pid, struct subject_buf *b)
{
	struct proc_cgroup cg;

	if (proc_read_cgroup(pid, &cg) < 0 || !cg.has_unified)
		return;
	snprintf(b->cgroup, sizeof(b->cgroup), "%s", cg.unified);
	b->s.cgroup = b->cgroup;
	if (proc_unit_from_cgroup(cg.unified, b->unit, sizeof(b->unit), NULL) == 0)
		b->s.unit = b->unit;
}

/* Real uid, gid and supplementary groups from /proc/TID/status. */
static int load_ids(pid_t tid, struct subject_buf *b)
{
	struct proc_status ps;
	int r;

	if ((r = proc_read_status(tid, &ps)) < 0)
		return r;
	b->s.uid = ps.uid;
	b->s.gid = ps.gid;
	memcpy(b->groups, ps.groups, ps.n_groups * sizeof(*b->groups));
	b->s.groups = b->groups;
	b->s.n_groups = ps.n_groups;
	return 0;
}

/* Fill what the configured rules need to know about tid; comm is its name
 * when a COMM event just told it (NULL: read it). -ESRCH if gone. */
static int load_subject(const struct config *c, pid_t tid, pid_t pid, const char *comm, struct subject_buf *b)
{
	char path[64];
	ssize_t n;
	int r;

	memset(&b->s, 0, sizeof(b->s));
	b->s.uid = (uid_t)-1;
	b->s.gid = (gid_t)-1;
	if (comm)
		snprintf(b->comm, sizeof(b->comm), "%s", comm);
	else if ((r = proc_read_comm(pid, tid, b->comm, sizeof(b->comm))) < 0)
		return r;
	b->s.thread_name = b->comm;
	if ((c->match_needs & MATCH_NEED_PROCESS_NAME) && proc_read_comm(pid, 0, b->pcomm, sizeof(b->pcomm)) == 0)
		b->s.process_name = b->pcomm;
	if (c->match_needs & MATCH_NEED_EXE) {
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
		n = readlink(path, b->exe, sizeof(b->exe) - 1);
		if (n > 0) {
			b->exe[n] = '\0';
			b->s.exe = b->exe;
		}
	}
	if (c->match_needs & MATCH_NEED_CGROUP)
		load_cgroup(pid, b);
	if (c->match_needs & MATCH_NEED_IDS)
		load_ids(tid, b);
	return 0;
}

void rules_on_task(struct registry *r, const struct config *c, pid_t tid, pid_t pid, const char *comm, bool force)
{
	static pid_t self;
	struct reg_thread *t = registry_find(r, tid);
	const struct rule *rl = NULL;
	struct subject_buf b = { .comm = "?" }; /* the name in the log lines, if never read */
	struct grant_request req;
	struct sched_spec spec;
	char msg[512];
	int e;

	if (t && t->source != REG_SOURCE_RULE)
		return; /* an explicit registration wins over any rule */
	if (!self)
		self = getpid();
	if ((!c->n_auto_rules && !t) || pid == self)
		return;
	if (c->n_auto_rules && load_subject(c, tid, pid, comm, &b) == 0)
		rl = config_match(c, &b.s);
	if (!rl) {
		if (t) {
			log_info("tid %d (%s) no longer matches rule %s; restoring it", (int)tid, b.comm, t->req.role);
			registry_remove_thread(r, t, true);
		}
		return;
	}
	if (t && !force && strcmp(t->req.role, rl->name) == 0)
		return;
	memset(&req, 0, sizeof(req));
	snprintf(req.role, sizeof(req.role), "%s", rl->name);
	spec = rl->spec;
	e = registry_add_thread(r, tid, pid, 0, REG_SOURCE_RULE, &req, &spec, NULL, &t, msg, sizeof(msg));
	if (e != 0) {
		if (e != REFUSE_NO_SUCH_THREAD && e != REFUSE_STALE_THREAD) {
			log_warnx("rule %s matched tid %d (%s) but could not apply: %s", rl->name, (int)tid, b.comm, msg);
			registry_note_refused(r, tid, pid, 0, REG_SOURCE_RULE, rl->name, e, msg);
		}
		return;
	}
	log_debug("rule %s matched tid %d (%s) of pid %d", rl->name, (int)tid, b.comm, (int)pid);
}

void rules_on_process(struct registry *r, const struct config *c, pid_t pid)
{
	pid_t *tids;
	size_t n;

	if (!c->n_auto_rules && !registry_n_threads(r))
		return;
	if (proc_list_tasks(pid, &tids, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		rules_on_task(r, c, tids[i], pid, NULL, false);
	free(tids);
}

size_t rules_scan(struct registry *r, const struct config *c, bool force)
{
	struct reg_thread *t, *tn;
	struct dirent *de;
	size_t seen = 0;
	DIR *proc;

	/* rule-managed threads whose rule is gone or changed are looked at in the walk */
	if (c->n_auto_rules) {
		proc = opendir("/proc");
		if (!proc)
			return 0;
		while ((de = readdir(proc))) {
			char *end;
			long pid = strtol(de->d_name, &end, 10);
			pid_t *tids;
			size_t n;

			if (*end || pid <= 0 || proc_list_tasks((pid_t)pid, &tids, &n) < 0)
				continue;
			for (size_t i = 0; i < n; i++)
				rules_on_task(r, c, tids[i], (pid_t)pid, NULL, force);
			seen += n;
			free(tids);
		}
		closedir(proc);
	}
	/* with no rules left, what rules managed goes back */
	for (t = registry_threads(r); t; t = tn) {
		tn = t->next;
		if (t->source == REG_SOURCE_RULE && !config_find_rule(c, t->req.role))
			registry_remove_thread(r, t, true);
		else if (t->source == REG_SOURCE_RULE && !c->n_auto_rules)
			registry_remove_thread(r, t, true);
	}
	return seen;
}
