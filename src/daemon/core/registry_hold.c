/* registry_hold.c: the watchdog's side of the registry (see registry.h):
 * demotions it made, who is held back from real-time during its cooldown,
 * and the promotion back afterwards. */
#include "autoconfig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sys/accounts.h"
#include "daemon/core/registry.h"
#include "daemon/core/registry_int.h"
#include "daemon/core/task.h"
#include "daemon/sys/policy.h"
#include "daemon/sys/proc.h"

/* Record a demotion the watchdog made (or make it, if the thread was granted
 * after the watchdog looked). */
static void thread_demote(struct registry *r, struct reg_thread *t)
{
	struct task_sched other = t->applied;
	const char *what;

	t->demoted_from = registry_policy_of(&t->applied);
	t->demoted = true;
	other.policy = SCHED_OTHER;
	other.priority = 0;
	task_sched_write(t->tid, &other, false, &what); /* the watchdog thread may have done it */
	task_sched_read(t->tid, &t->applied);
	registry_notify(r, REG_EV_THREAD_SET, t, NULL);
}

size_t registry_demote(struct registry *r, const cpu_set_t *starved)
{
	size_t n = 0;

	for (struct reg_thread *t = r->threads; t; t = tnode(t)->next) {
		cpu_set_t both;

		CPU_AND(&both, &t->applied.cpus, starved);
		if (t->demoted || !policy_is_realtime(t->applied.policy) || !CPU_COUNT(&both) ||
		    !registry_same_thread(t))
			continue;
		thread_demote(r, t);
		n++;
	}
	return n;
}

struct reg_thread *registry_demote_thread(struct registry *r, pid_t tid, uint64_t starttime)
{
	struct reg_thread *t = registry_find(r, tid);

	if (!t || t->starttime != starttime || t->demoted || !registry_same_thread(t))
		return NULL;
	thread_demote(r, t);
	return t;
}

void registry_hold_all(struct registry *r)
{
	r->hold_all = true;
}

/* The start time of process pid, 0 if gone. */
static uint64_t process_starttime(pid_t pid)
{
	struct proc_stat st;

	return proc_read_stat(pid, &st) == 0 ? st.starttime : 0;
}

int registry_hold(struct registry *r, uid_t account, pid_t pid, const char *rule)
{
	struct reg_hold *h, want = { .account = account };

	/* a rule's hold: its matches of the account, and the culprit's process;
	 * a registration's: the whole account, but root's only its process */
	snprintf(want.rule, sizeof(want.rule), "%s", rule ? rule : "");
	if (want.rule[0] || account == 0) {
		want.pid = pid;
		want.starttime = process_starttime(pid);
	}
	for (size_t i = 0; i < r->n_holds; i++) {
		h = &r->holds[i];
		if (h->account == want.account && h->pid == want.pid && h->starttime == want.starttime &&
		    strcmp(h->rule, want.rule) == 0)
			return 0;
	}
	h = realloc(r->holds, (r->n_holds + 1) * sizeof(*h));
	if (!h) {
		r->hold_all = true;   /* cannot say whom: hold everyone rather than no one */
		return -ENOMEM;
	}
	r->holds = h;
	r->holds[r->n_holds++] = want;
	return 0;
}

int registry_hold_thread(struct registry *r, const struct reg_thread *t)
{
	return registry_hold(r, t->account, t->pid, t->source == REG_SOURCE_RULE ? t->req.role : "");
}

bool registry_held(struct registry *r, uid_t account, pid_t pid, const char *rule)
{
	if (r->hold_all)
		return true;
	for (size_t i = 0; i < r->n_holds; i++) {
		const struct reg_hold *h = &r->holds[i];

		if (h->account != account)
			continue;
		if (h->rule[0] && rule && strcmp(h->rule, rule) == 0)
			return true;
		if (h->pid ? h->pid == pid && h->starttime == process_starttime(pid) : !h->rule[0])
			return true;
	}
	return false;
}

void registry_ask(struct registry *r, struct grant_ask *a)
{
	const struct grant_subject *s = a->subj;

	/* counted only when the quota is checked (a walk of every thread: a
	 * reload's pass, which adds nothing, must not make it one per thread) */
	a->held = s->privileged || a->adding == 0 ? 0 : registry_count_owner(r, s->account);
	a->cooldown = registry_held(r, s->account, a->target, a->path == GRANT_PATH_RULE ? a->req->role : NULL);
}

void registry_holds_text(struct registry *r, char *buf, size_t len)
{
	size_t off = 0;

	snprintf(buf, len, "%s", r->hold_all ? "every process" : "");
	for (size_t i = 0; !r->hold_all && i < r->n_holds && off < len; i++) {
		const struct reg_hold *h = &r->holds[i];
		struct account a;
		bool found = accounts_by_uid(h->account, &a) == 0;
		char who[128] = "", proc[64] = "";
		struct proc_stat st;
		int k;

		snprintf(who, sizeof(who), "uid %u%s%.64s%s", (unsigned)h->account, found ? " (" : "",
			 found ? a.name : "", found ? ")" : "");
		if (h->pid)
			snprintf(proc, sizeof(proc), "pid %d (%s)", (int)h->pid,
				 proc_read_stat(h->pid, &st) == 0 && st.starttime == h->starttime ? st.comm : "gone");
		if (h->rule[0])
			k = snprintf(buf + off, len - off, "%s%s and rule %s of %s", off ? ", " : "", proc, h->rule, who);
		else if (h->pid)
			k = snprintf(buf + off, len - off, "%s%s", off ? ", " : "", proc);
		else
			k = snprintf(buf + off, len - off, "%severy grant of %s", off ? ", " : "", who);
		if (k < 0)
			break;
		off += (size_t)k;
	}
}

size_t registry_promote(struct registry *r)
{
	size_t n = 0;

	r->hold_all = false;
	free(r->holds);
	r->holds = NULL;
	r->n_holds = 0;
	for (struct reg_thread *t = r->threads; t; t = tnode(t)->next) {
		struct task_sched back = t->applied;  /* the CPUs are not written */
		const char *what;

		if (!t->demoted)
			continue;
		t->demoted = false;
		back.policy = t->demoted_from.policy;
		back.priority = t->demoted_from.priority;
		back.nice = t->demoted_from.nice;
		back.reset_on_fork = t->demoted_from.reset_on_fork;
		if (!registry_same_thread(t))
			continue;
		if (policy_is_realtime(back.policy))
			registry_notify(r, REG_EV_THREAD_ARM, t, NULL);
		if (task_sched_write(t->tid, &back, false, &what) < 0)
			continue;
		task_sched_read(t->tid, &t->applied);
		registry_notify(r, REG_EV_THREAD_SET, t, NULL);
		n++;
	}
	return n;
}
