/* ops/register.c: register and unregister, and the grant path every front end
 * shares (the control socket's register, the rtkit bus service through
 * dispatch_register()): ownership, the rule, the watchdog's cooldown, the
 * user's limits, then the registry. */
#include "autoconfig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "daemon/core/grant.h"
#include "daemon/core/registry.h"
#include "daemon/ops/ops.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "daemon/sys/proc.h"
#include "daemon/testhook.h"
#include "daemon/watchdog/safety.h"

/* Where the ceiling came from, and whether the priority was clamped to it. */
static void add_cap(struct proto_buf *b, const struct grant_cap *cap)
{
	if (!cap->applies)
		return;
	proto_add_long(b, "cap", cap->cap);
	proto_add(b, "cap_from", cap->from);
	if (cap->clamped)
		proto_add_long(b, "clamped_from", cap->asked);
}

/* The client's process must still be the one that connected. */
static bool peer_alive(const struct peer *p)
{
	if (p->gone)
		return false;
	if (p->pidfd < 0)
		return true;
	/* signal 0 only probes; EPERM (no CAP_KILL over the client) still means it lives */
	return syscall(SYS_pidfd_send_signal, p->pidfd, 0, NULL, 0) == 0 || errno != ESRCH;
}

/* May the client act on this task? Privileged: yes. Otherwise the task is
 * in the client's own process, that process is still the one that connected,
 * and the task runs as the client's uid (grant_owns, with what
 * task_identity() found: a process that exec'd a setuid program is no longer
 * the client's, though its pid is). 0 if it may, else REFUSE_NOT_OWN_THREAD
 * with msg. */
int may_act_on(const struct peer *peer, const struct grant_subject *subj, const struct proc_status *ps,
	       const char *what, long id, char *msg, size_t len)
{
	if (subj->privileged)
		return 0;
	if (ps->tgid != peer->pid || !peer_alive(peer)) {
		snprintf(msg, len, "%s %ld belongs to process %d, not to the caller (pid %d); "
			 "registering another process's threads needs root or admin-group",
			 what, id, (int)ps->tgid, (int)peer->pid);
		return REFUSE_NOT_OWN_THREAD;
	}
	if (!grant_owns(subj->uid, ps)) {
		snprintf(msg, len, "%s %ld runs as uid %u (effective %u), not as the caller's uid %u; "
			 "a process that changed its identity (a setuid program) needs root or admin-group",
			 what, id, (unsigned)ps->uid, (unsigned)ps->euid, (unsigned)subj->uid);
		return REFUSE_NOT_OWN_THREAD;
	}
	return 0;
}

/* The task's thread group and owner, for may_act_on(). A thread of the
 * caller's own process (peer->pid: for rtkit's WithPID calls, the process
 * named) running as the caller is the common case, a thread registering
 * itself, and one stat of /proc/PID/task/TID says so: its owner there is the
 * thread's effective uid, which is what rtkit checks. Anything else (another
 * process's thread, a setuid program, which runs as root) is read from its
 * status: the thread group for a privileged caller, the real and effective
 * uid for the refusal's message; so is a process rtkit's WithPID named that
 * is not the caller's own (its real uid must be the caller's too). The
 * status read was a quarter of the
 * daemon's time per registration. A front end that has just made that stat
 * (known) is taken at its word: the rtkit service, through the caller's
 * process held open. */
static int task_identity(const struct peer *peer, const struct grant_subject *subj, pid_t id,
			 const struct frontend_task *known, struct proc_status *ps)
{
	uid_t owner;
	int r;

	if (known && known->tid == id && known->pid && known->pid == peer->pid) {
		owner = known->owner;
		r = 0;
	} else {
		r = proc_task_owner(peer->pid, id, &owner);
	}
	/* a process the caller only named (rtkit's WithPID) may run as the
	 * caller only in effect: a root daemon's seteuid() window */
	if (r == 0 && (subj->privileged || (owner == subj->uid && !peer->foreign))) {
		ps->tgid = peer->pid;
		ps->pid = id;
		ps->uid = ps->euid = owner;
		return 0;
	}
	return proc_read_status(id, ps);
}

void ops_cooldown_note(struct service *s, char *buf, size_t len)
{
	struct safety_status st;
	char held[512];

	buf[0] = '\0';
	if (!s->safety || !safety_in_cooldown(s->safety))
		return;
	safety_get_status(s->safety, &st);
	registry_holds_text(s->registry, held, sizeof(held));
	snprintf(buf, len, " (%s); real-time grants for %s resume in %llu s", st.last_culprit, held,
		 (unsigned long long)st.cooldown_left_s);
}

/* The path of a grant from a front end's source: a register (thread or
 * preload), the rtkit bus service, or the catcher of refused calls. */
static enum grant_path path_of(enum reg_source source)
{
	return source == REG_SOURCE_RTKIT ? GRANT_PATH_RTKIT :
	       source == REG_SOURCE_CAUGHT ? GRANT_PATH_CAUGHT : GRANT_PATH_REGISTER;
}

/* How many threads a register of id adds to subj's account: a process's
 * threads not yet held by it, or the thread unless the account holds it
 * already (taking one over from another owner, root or a match rule,
 * adds it). */
static size_t register_adding(struct service *s, const struct grant_subject *subj, pid_t id, bool is_pid)
{
	size_t adding = 1;

	if (is_pid) {
		struct reg_process *rp = registry_find_process(s->registry, id);
		pid_t *tids;
		if (proc_list_tasks(id, &tids, &adding) == 0)
			free(tids);
		if (rp && subj->account == rp->account)
			adding = adding > rp->n_threads ? adding - rp->n_threads : 0;
	} else {
		struct reg_thread *held = registry_find(s->registry, id);

		if (held && held->account == subj->account && !held->exempt)
			adding = 0;
	}
	return adding;
}

/* The grant path past the rate limit (see ops.h): 0 when granted (*out
 * filled), else a refusal or -errno with msg. */
int register_grant(struct service *s, const struct peer *peer, const struct grant_subject *subj, pid_t id,
		   bool is_pid, const struct grant_request *req, enum reg_source source,
		   const struct frontend_task *known, struct register_granted *out, char *msg, size_t len)
{
	struct grant_decision *d = &out->decision;
	struct proc_status ps;
	struct proc_stat pin;
	char note[1700];
	int e, r;

	memset(out, 0, sizeof(*out));
	msg[0] = '\0';
	/* pinned first (its start time), then checked, then applied only if
	 * still the same task: a tid checked as the caller's and reused by
	 * another user's thread before the apply is refused, not changed */
	/* a thread managed already (a new role, a new priority) is pinned by
	 * its pidfd: the kernel formatting its stat was a tenth of a grant */
	/* a front end that read the owner (rtkit: through the caller's process
	 * held open) pinned the thread in the same step: that start time */
	if (!is_pid && known && known->tid == id && known->pid && known->pid == peer->pid && known->starttime) {
		pin.starttime = known->starttime;
		r = 0;
	} else if (!is_pid && registry_known_start(s->registry, id, &pin.starttime)) {
		r = 0;
	} else {
		r = proc_read_stat(id, &pin);
	}
	if (r < 0 || (r = task_identity(peer, subj, id, known, &ps)) < 0) {
		snprintf(msg, len, "%s %d: %s", is_pid ? "pid" : "tid", (int)id,
			 r == -ESRCH ? "no such task" : strerror(-r));
		return REFUSE_NO_SUCH_THREAD;
	}
	if (is_pid && ps.tgid != id) {
		snprintf(msg, len, "%d is a thread of process %d, not a process; use tid=%d", (int)id, (int)ps.tgid,
			 (int)id);
		return REFUSE_NOT_A_PROCESS;
	}
	if ((e = may_act_on(peer, subj, &ps, is_pid ? "pid" : "tid", id, msg, len)) != 0)
		return e;
	testhook_pause("after-check");
	ops_cooldown_note(s, note, sizeof(note));
	struct grant_ask a = {
		.path = path_of(source), .subj = subj, .req = req, .target = ps.tgid,
		.limits = known && known->tid == id ? &known->limits : NULL,
		.adding = register_adding(s, subj, id, is_pid), .cooldown_note = note,
		.rttime_max = source == REG_SOURCE_RTKIT ? s->config->rtkit.rttime_usec_max : 0,
	};
	registry_ask(s->registry, &a);
	if ((e = grant_decide(s->config, &a, d)) != 0) {
		grant_decision_text(d, msg, len);
		return e;
	}
	testhook_pause("after-decide");
	size_t left = 0;
	if (is_pid)
		/* no more threads than were counted for the quota: those its
		 * process made since are decided one by one, below */
		e = registry_add_process_pinned(s->registry, id, pin.starttime, subj->uid, req, &d->spec, a.adding,
						&left, &out->process, msg, len);
	else
		e = registry_add_thread_pinned(s->registry, id, ps.tgid, pin.starttime, subj->uid, source, req,
					       &d->spec, &out->thread, msg, len);
	if (e == REFUSE_APPLY_FAILED)
		snprintf(out->diag, sizeof(out->diag), "%s", registry_last_diag(s->registry));
	if (e != 0)
		return e;
	/* a subordinate uid's threads count against its owner's quota */
	if (is_pid)
		registry_set_process_account(out->process, subj->account);
	else
		registry_set_account(out->thread, subj->account, false);
	if (left && registry_process_more(s->registry, s->config, out->process)) {
		snprintf(msg, len, "pid %d: a thread of it runs as another user now (it exec'd a setuid program): "
			 "its registration ended", (int)id);
		return REFUSE_NOT_OWN_THREAD;
	}
	s->grants++;
	return 0;
}

/* register: tid= or pid= with optional scheduling fields (dispatch parsed
 * them, and took the rate-limit token), and source= (thread, the default,
 * or preload: only the label list shows; it grants nothing more); the
 * grant, or why not. */
void op_register(struct ctx *x)
{
	const struct grant_request *req = &x->req;
	enum reg_source source = REG_SOURCE_THREAD;
	struct register_granted g;
	char msg[768];
	bool is_pid = x->is_pid;
	long id = x->id;
	const char *v;
	int e;

	if ((v = proto_get(x->m, "source"))) {
		if (strcmp(v, "preload") == 0 && !is_pid) {
			source = REG_SOURCE_PRELOAD;
		} else if (strcmp(v, "thread") != 0) {
			refuse(x, PE_BAD_REQUEST, "source must be thread or, with tid=, preload");
			return;
		}
	}
	e = register_grant(x->svc, x->peer, &x->subj, (pid_t)id, is_pid, req, source, NULL, &g, msg,
			   sizeof(msg));
	if (e != 0) {
		refuse_msg(x, ops_wire_error(e), g.diag, msg);
		return;
	}
	if (is_pid) {
		struct reg_process *p = g.process;
		proto_begin(&x->out, "OK");
		proto_add_long(&x->out, "pid", id);
		proto_add_long(&x->out, "threads", (long)p->n_threads);
		proto_add(&x->out, "rule", req->role[0] ? req->role : "default");
		struct reg_thread *t = registry_find(x->svc->registry, (pid_t)id);
		if (t)
			add_sched(&x->out, &t->applied);
		add_cap(&x->out, &g.decision.cap);
		if (msg[0])
			proto_add(&x->out, "warning", msg);
		log_info("registered process %d (%zu threads) for uid %u, rule %s", (int)id, p->n_threads,
			 (unsigned)x->peer->uid, req->role[0] ? req->role : "default");
		send_buf(x);
		return;
	}
	struct reg_thread *t = g.thread;
	proto_begin(&x->out, "OK");
	proto_add_long(&x->out, "tid", t->tid);
	proto_add_long(&x->out, "pid", t->pid);
	proto_add(&x->out, "rule", req->role[0] ? req->role : "default");
	add_sched(&x->out, &t->applied);
	add_cap(&x->out, &g.decision.cap);
	if (log_enabled(LOG_LEVEL_INFO)) {
		task_sched_format(&t->applied, msg, sizeof(msg));
		log_info("registered tid %d (pid %d) for uid %u, rule %s: %s", (int)t->tid, (int)t->pid,
			 (unsigned)x->peer->uid, req->role[0] ? req->role : "default", msg);
	}
	send_buf(x);
}

/* unregister: give a thread or process back the scheduling it had. */
void op_unregister(struct ctx *x)
{
	struct service *s = x->svc;
	const struct grant_subject *subj = &x->subj;
	struct task_sched now;
	bool is_pid = x->is_pid;
	long id = x->id;

	if (is_pid) {
		struct reg_process *p = registry_find_process(s->registry, (pid_t)id);
		if (!p) {
			refuse(x, PE_NOT_REGISTERED, "process %ld is not registered", id);
			return;
		}
		if (!subj->privileged && p->owner != subj->uid) {
			refuse(x, PE_NOT_OWN_THREAD, "process %ld was registered by uid %u; only it, root or admin-group may unregister it",
			       id, (unsigned)p->owner);
			return;
		}
		registry_remove_process(s->registry, p, true);
	} else {
		struct reg_thread *t = registry_find(s->registry, (pid_t)id);
		if (!t) {
			refuse(x, PE_NOT_REGISTERED, "tid %ld is not managed", id);
			return;
		}
		if (!subj->privileged && t->owner != subj->uid) {
			refuse(x, PE_NOT_OWN_THREAD, "tid %ld was registered by uid %u; only it, root or admin-group may unregister it",
			       id, (unsigned)t->owner);
			return;
		}
		if (t->proc) {
			refuse(x, PE_BAD_REQUEST, "tid %ld is managed as part of registered process %d; "
			       "unregister --pid %d, or register the thread on its own first", id, (int)t->proc->pid,
			       (int)t->proc->pid);
			return;
		}
		registry_remove_thread(s->registry, t, true);
	}
	log_info("unregistered %s %ld", is_pid ? "process" : "tid", id);
	proto_begin(&x->out, "OK");
	proto_add_long(&x->out, is_pid ? "pid" : "tid", id);
	if (task_sched_read((pid_t)id, &now) == 0)
		add_sched(&x->out, &now);
	send_buf(x);
}
