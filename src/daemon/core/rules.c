/* rules.c: automatic matching of threads by name, executable, user, group,
 * unit or cgroup (see rules.h). Only what some rule needs is read from /proc;
 * which rule wins is decided in match.c. */
#include "autoconfig.h"

#include <dirent.h>
#include <time.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "daemon/sys/proc.h"
#include "daemon/core/grant.h"
#include "daemon/core/match.h"
#include "daemon/core/registry.h"
#include "daemon/core/rlimit.h"
#include "daemon/core/rules.h"
#include "daemon/sys/clock.h"

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
 * unit it names: the system manager's only. A unit below user@UID.service
 * is that user's to name (systemd-run --user --unit=jackd.service), so it
 * is no unit to `unit =`; `cgroup =` names such a path whole. */
static void load_cgroup(pid_t pid, struct subject_buf *b)
{
	struct proc_cgroup cg;
	bool user_unit;

	if (proc_read_cgroup(pid, &cg) < 0 || !cg.has_unified)
		return;
	snprintf(b->cgroup, sizeof(b->cgroup), "%s", cg.unified);
	b->s.cgroup = b->cgroup;
	if (proc_unit_from_cgroup(cg.unified, b->unit, sizeof(b->unit), &user_unit) == 0 && !user_unit)
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

/* The owner of a thread a rule matched: its effective uid, as the owner of
 * its /proc directory says (one stat; the matching path is timed, bench's
 * "match"). Whoever runs a setuid program cannot rename its threads (the
 * kernel makes it not dumpable), but names it at its exec (the name of the
 * link it ran): a privileged owner is checked against the real uid too
 * (privileged_own()). -errno if gone. */
static int thread_owner(pid_t pid, pid_t tid, uid_t *owner)
{
	return proc_task_owner(pid, tid, owner);
}

/* Is a thread whose owner (effective uid) is privileged that account's
 * own, real uid too? A set-user-ID program that a user started under a
 * name of their choosing (a symlink named like the rule) runs as root, yet
 * it is the user's: the rule's grant would be root's, past every limit of
 * the user, and a limit grant-rlimit raised, or a policy its children
 * inherit, outlives the program's drop back to the user (rtschedd.conf(5),
 * [rule]). Only a privileged owner's status is read (~5 us over the
 * owner's stat): for any other the grant is that account's own, checked
 * against its limits. 0 if it is its own, else REFUSE_NOT_OWN_THREAD in d. */
static int privileged_own(pid_t pid, pid_t tid, uid_t owner, struct grant_decision *d)
{
	struct proc_status ps;

	if (proc_read_task_status(pid, tid, &ps) < 0) {
		d->verdict = GRANT_REFUSE;
		snprintf(d->msg, sizeof(d->msg), "tid %d: no such thread", (int)tid);
		return d->code = REFUSE_NO_SUCH_THREAD;
	}
	if (grant_owns(owner, &ps))
		return 0;
	d->verdict = GRANT_REFUSE;
	snprintf(d->msg, sizeof(d->msg), "tid %d runs as uid %u (effective %u): a set-user-ID program, or one that "
		 "changed its identity, is not its effective owner's to be granted by a rule", (int)tid,
		 (unsigned)ps.uid, (unsigned)ps.euid);
	snprintf(d->fix, sizeof(d->fix), "start the program as the account it should run as, or let root "
		 "register it (rtschedctl register)");
	return d->code = REFUSE_NOT_OWN_THREAD;
}

/* The grant of rule rl to thread tid (t: already managed, by this rule
 * or another), decided as its owner's own request would be (rules.h),
 * after the owner's rate limit: 0, or a refusal in d. Fills who the thread
 * is held for. */
static int rule_grant(const struct rules_ctx *x, const struct rule *rl, struct reg_thread *t, pid_t tid, pid_t pid,
		      const struct grant_request *req, struct grant_subject *subj, bool *exempt,
		      struct grant_decision *d)
{
	const struct config *c = x->config;
	uid_t owner;
	bool again;
	int e;

	memset(d, 0, sizeof(*d));
	if (thread_owner(pid, tid, &owner) < 0) {
		d->verdict = GRANT_REFUSE;
		snprintf(d->msg, sizeof(d->msg), "tid %d: no such thread", (int)tid);
		return d->code = REFUSE_NO_SUCH_THREAD;
	}
	grant_subject_init(subj, c, owner, (gid_t)-1, pid);
	if (subj->privileged && (e = privileged_own(pid, tid, owner, d)) != 0)
		return e;
	/* user = or group =: the administrator's grant to those users by name */
	*exempt = !subj->privileged && (rl->match.has_user || rl->match.has_group);
	/* already held for this account by this rule: a re-evaluation (a reload)
	 * adds nothing and costs no token */
	again = t && t->source == REG_SOURCE_RULE && t->account == subj->account && !t->exempt &&
		strcmp(t->req.role, rl->name) == 0;
	if (!subj->privileged && !*exempt && !again && x->ratelimit && c->rate_limit &&
	    !ratelimit_take(x->ratelimit, subj->account, clock_usec(CLOCK_MONOTONIC), c->rate_limit, c->rate_burst)) {
		d->verdict = GRANT_REFUSE;
		char who[sizeof(subj->user) + 32];
		/* a uid without a passwd entry has no name to give: "for uid N" */
		if (subj->user[0])
			snprintf(who, sizeof(who), "user %s (uid %u)", subj->user, (unsigned)subj->account);
		else
			snprintf(who, sizeof(who), "uid %u", (unsigned)subj->account);
		snprintf(d->msg, sizeof(d->msg), "more than %u grants per second (burst %u) for %s", c->rate_limit,
			 c->rate_burst, who);
		snprintf(d->fix, sizeof(d->fix), "the rule is tried again when the thread is next seen (renamed, "
			 "reload); raise rate-limit in [daemon]");
		return d->code = REFUSE_RATE_LIMITED;
	}
	struct grant_ask a = { .path = GRANT_PATH_RULE, .subj = subj, .req = req, .target = pid, .exempt = *exempt,
			       .adding = again ? 0 : 1 };
	registry_ask(x->registry, &a);
	return grant_decide(c, &a, d);
}

/* grant-rlimit: rule rl, newly matching the main thread of pid for its
 * owner, raises the process's RLIMIT_RTPRIO to the priority the decision
 * gave (and RLIMIT_RTTIME to grant-rttime-us), once: a reload or a rename
 * that keeps the rule does not come here again, and a program that lowered
 * its own limit keeps it lowered. Before the scheduling is applied, to
 * shorten the race with the program's own call (rlimit.h). */
static void rule_rlimit(const struct rule *rl, pid_t pid, uid_t owner, const struct sched_spec *spec,
			const char *comm)
{
	struct rlimit_change ch;
	char text[160];
	int r;

	if (!rl->grant_rlimit || !policy_is_realtime(spec->policy) || spec->priority < 1)
		return;
	if (!rlimit_capable()) {
		log_debug("rule %s matched pid %d (%s): no CAP_SYS_RESOURCE, its limits stay (rlimit-grant-no-cap)",
			  rl->name, (int)pid, comm);
		return;
	}
	r = rlimit_grant(pid, owner, spec->priority, rl->grant_rttime_us, &ch);
	if (r == -ESRCH)
		return;
	if (r == -EACCES) {
		log_notice("rule %s matched pid %d (%s, uid %u) but did not raise its limits: its real uid is not %u "
			   "(a set-user-ID program), and the limit would outlive the program as its real user's",
			   rl->name, (int)pid, comm, (unsigned)owner, (unsigned)owner);
		return;
	}
	if (r < 0) {
		log_errno(LOG_LEVEL_WARNING, r, "rule %s matched pid %d (%s, uid %u) but could not raise its limits",
			  rl->name, (int)pid, comm, (unsigned)owner);
		return;
	}
	if (!ch.raised)
		return;
	rlimit_change_text(&ch, text, sizeof(text));
	log_info("rule %s raised the limits of pid %d (%s, uid %u): %s", rl->name, (int)pid, comm,
		 (unsigned)owner, text);
}

/* Does t, which a rule manages, run as someone else than it was granted
 * for? One stat; a thread that is gone has not (its exit comes). */
static bool owner_changed(const struct reg_thread *t, pid_t tid, pid_t pid)
{
	uid_t owner;

	return thread_owner(pid, tid, &owner) == 0 && owner != t->owner;
}

void rules_on_task(const struct rules_ctx *x, pid_t tid, pid_t pid, const char *comm, bool force)
{
	static pid_t self;
	struct registry *r = x->registry;
	const struct config *c = x->config;
	struct reg_thread *t = registry_find(r, tid);
	const struct rule *rl = NULL;
	struct subject_buf b = { .comm = "?" }; /* the name in the log lines, if never read */
	struct grant_subject subj;
	struct grant_decision d;
	struct grant_request req;
	char msg[1200];
	bool exempt;
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
	/* the same rule for the same owner: nothing new; a thread whose owner
	 * changed since (a setuid exec, events lost) is decided again */
	if (t && !force && strcmp(t->req.role, rl->name) == 0 && !owner_changed(t, tid, pid))
		return;
	memset(&req, 0, sizeof(req));
	snprintf(req.role, sizeof(req.role), "%s", rl->name);
	e = rule_grant(x, rl, t, tid, pid, &req, &subj, &exempt, &d);
	/* not while the watchdog holds the owner back (HOLD): the program
	 * would make itself real-time through the cooldown */
	if (e == 0 && d.verdict == GRANT_ALLOW && tid == pid && !(t && strcmp(t->req.role, rl->name) == 0))
		rule_rlimit(rl, pid, subj.uid, &d.spec, b.comm);
	if (e != 0)
		grant_decision_text(&d, msg, sizeof(msg));
	else
		e = registry_add_thread(r, tid, pid, subj.uid, REG_SOURCE_RULE, &req, &d.spec, NULL, &t, msg,
					sizeof(msg));
	if (e != 0) {
		if (e != REFUSE_NO_SUCH_THREAD && e != REFUSE_STALE_THREAD) {
			bool managed = (t = registry_find(r, tid)) && t->source == REG_SOURCE_RULE;

			/* a thread it managed before (another rule, or limits since
			 * shrunk) goes back to what it had */
			if (managed)
				registry_remove_thread(r, t, true);
			/* losing a grant is news every time; the same refusal of the
			 * same thread, renamed back and forth, is said once */
			if ((!registry_note_refused(r, tid, pid, subj.uid, REG_SOURCE_RULE, rl->name, e, msg) || managed) &&
			    registry_may_log_refusal(r, subj.account))
				log_warnx("rule %s matched tid %d (%s) but could not apply: %s", rl->name, (int)tid, b.comm,
					  msg);
		}
		return;
	}
	registry_set_account(t, subj.account, exempt);
	log_debug("rule %s matched tid %d (%s) of pid %d, uid %u", rl->name, (int)tid, b.comm, (int)pid,
		  (unsigned)subj.uid);
}

void rules_on_process(const struct rules_ctx *x, pid_t pid)
{
	struct rules_walk w;

	if (!x->config->n_auto_rules && !registry_n_threads(x->registry))
		return;
	if (rules_walk_process(&w, pid) == 0)
		while (!rules_walk_step(x, &w, SIZE_MAX, false))
			;
}

void rules_walk_stop(struct rules_walk *w)
{
	if (w->proc)
		closedir(w->proc);
	free(w->tids);
	*w = (struct rules_walk){ .seen = w->seen };
}

int rules_walk_process(struct rules_walk *w, pid_t pid)
{
	int r;

	*w = (struct rules_walk){ .one = true, .pid = pid };
	if ((r = proc_list_tasks(pid, &w->tids, &w->n)) < 0)
		*w = (struct rules_walk){ 0 };
	return r;
}

bool rules_walk_step(const struct rules_ctx *x, struct rules_walk *w, size_t max_tasks, bool force)
{
	struct dirent *de;
	size_t done = 0;

	if (!w->proc && !w->one) {
		w->seen = 0;
		if (!(w->proc = opendir("/proc")))
			return true;
	}
	while (done < max_tasks) {
		if (w->i < w->n) {
			rules_on_task(x, w->tids[w->i++], w->pid, NULL, force);
			done++;
			continue;
		}
		free(w->tids);
		w->tids = NULL;
		w->n = w->i = 0;
		if (w->one || !(de = readdir(w->proc))) {
			w->seen += done;
			rules_walk_stop(w);
			return true;
		}
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || proc_list_tasks((pid_t)pid, &w->tids, &w->n) < 0) {
			w->n = 0;
			continue;
		}
		w->pid = (pid_t)pid;
	}
	w->seen += done;
	return false;
}

size_t rules_scan(const struct rules_ctx *x, bool force)
{
	struct registry *r = x->registry;
	const struct config *c = x->config;
	struct reg_thread *t, *tn;
	struct rules_walk w = { 0 };

	/* rule-managed threads whose rule is gone or changed are looked at in the walk */
	if (c->n_auto_rules)
		while (!rules_walk_step(x, &w, SIZE_MAX, force))
			;
	/* with no rules left, what rules managed goes back */
	for (t = registry_thread_next(r, NULL); t; t = tn) {
		tn = registry_thread_next(r, t);
		if (t->source == REG_SOURCE_RULE && !config_find_rule(c, t->req.role))
			registry_remove_thread(r, t, true);
		else if (t->source == REG_SOURCE_RULE && !c->n_auto_rules)
			registry_remove_thread(r, t, true);
	}
	return w.seen;
}
