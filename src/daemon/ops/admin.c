/* ops/admin.c: the ops about the daemon's rules and the machine: reload (of
 * the configuration) and check (the diagnosis of a process or a user). */
#include "autoconfig.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/sys/accounts.h"
#include "daemon/core/grant.h"
#include "daemon/core/registry.h"
#include "daemon/core/rlimit.h"
#include "daemon/diag/diag.h"
#include "daemon/watchdog/safety.h"
#include "daemon/cpu/cpucheck.h"
#include "daemon/irq/irqcheck.h"
#include "daemon/irq/irqmgr.h"
#include "daemon/observe/bpfcheck.h"
#include "daemon/ops/ops.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/policy.h"
#include "daemon/sys/proc.h"

/* reload: read the configuration again (dispatch let only root and
 * admin-group through, and took the rate-limit token). */
void op_reload(struct ctx *x)
{
	char err[512];

	if (x->svc->hooks->reload(x->svc->ud, err, sizeof(err)) < 0) {
		refuse(x, PE_CONFIG_INVALID, "%s; the running configuration was kept", err);
		return;
	}
	proto_begin(&x->out, "OK");
	proto_add_long(&x->out, "threads", (long)registry_n_threads(x->svc->registry));
	proto_add_long(&x->out, "rules", (long)x->svc->config->n_rules);
	send_buf(x);
}

/* The grant decision a register would meet (grant_decide(), path check,
 * which changes nothing): for the user checked (or the caller), against the
 * process checked (or the caller's), as one thread more for the account,
 * the cooldown included. A refusal is a row with its wire code and fix;
 * one the diagnosis found already (rttime-zero) is not said twice. */
static void check_grant(struct ctx *x, const struct grant_subject *caller, const struct diag_target *t,
			struct diag_report *rep)
{
	const struct config *c = x->svc->config;
	struct grant_subject subj = *caller;
	struct grant_decision d;
	char note[1700];

	if (t->user && strcmp(t->user, caller->user) != 0) {
		struct account a;
		if (accounts_by_name(t->user, &a) < 0)
			return;
		grant_subject_init(&subj, c, a.uid, a.gid, 0);
	}
	ops_cooldown_note(x->svc, note, sizeof(note));
	struct grant_ask a = { .path = GRANT_PATH_CHECK, .subj = &subj, .req = &x->req,
			       .target = t->pid ? t->pid : caller->pid, .adding = 1, .cooldown_note = note };
	registry_ask(x->svc->registry, &a);
	if (grant_decide(c, &a, &d) == 0)
		return;
	/* a failure (-errno: the rtprio cap unreadable) is "internal", as on the wire */
	const char *code = proto_error_code(ops_wire_error(d.code));
	for (size_t i = 0; i < rep->n; i++)
		if (strcmp(rep->v[i].code, code) == 0)
			return;
	diag_report_add(rep, code, DIAG_ERROR, d.msg,
			d.fix[0] ? d.fix : "see the message: it names the limit and where it is set");
	diag_report_sort(rep);
}

/* check --pid of an IRQ thread or a kernel thread a section holds: which
 * section, what it had before and what it has now (an irq-match finding). */
static int check_held_kthread(const struct irqmgr *m, pid_t tid, struct diag_report *rep)
{
	for (const struct kt_entry *k = irqmgr_kthreads(m); k; k = k->next) {
		char msg[DIAG_TEXT_MAX], fix[DIAG_TEXT_MAX], was[96], now[96];

		if (k->tid != tid)
			continue;
		task_sched_format(&k->original, was, sizeof(was));
		task_sched_format(&k->applied, now, sizeof(now));
		snprintf(msg, sizeof(msg), "%d (%.32s) is held by [%s %.64s]: %s, was %s", (int)k->tid, k->comm,
			 k->irq >= 0 ? "irq" : "kthread", k->section, now, was);
		snprintf(fix, sizeof(fix), "rtschedctl jitter --histogram %.64s shows how late it runs once woken; "
			 "remove the section (and reload) to give it back", k->section);
		return diag_report_add(rep, "irq-match", DIAG_INFO, msg, fix);
	}
	return 0;
}

/* check: the diagnosis of a process or a user, one ROW per finding. A
 * non-privileged client may examine only itself (its processes, its user);
 * dispatch took the rate-limit token before any field here is parsed. */
/* check's target: pid= (the caller's own unless privileged), user= (its
 * own name unless privileged), and the scheduling fields dispatch parsed
 * as a register's (OP_SCHED), resolved as a register's are: the diagnosis
 * looks at what the grant decides on. 0, or -EINVAL after refusing. */
static int check_target(struct ctx *x, struct diag_target *t)
{
	const struct grant_subject *subj = &x->subj;
	const char *user = proto_get(x->m, "user");
	struct sched_spec spec;
	struct proc_status ps;
	long n;
	int r;

	if ((r = proto_get_long(x->m, "pid", 1, INT32_MAX, &n)) == 0) {
		t->pid = (pid_t)n;
		if (proc_read_status(t->pid, &ps) < 0) {
			refuse(x, PE_NO_SUCH_THREAD, "pid %ld: no such process", n);
			return -EINVAL;
		}
		if (!subj->privileged && ps.uid != subj->uid) {
			refuse(x, PE_NOT_ADMIN, "pid %ld belongs to uid %u; checking another user's process needs root "
			       "or admin-group", n, (unsigned)ps.uid);
			return -EINVAL;
		}
	} else if (r != -ENOENT) {
		refuse(x, PE_BAD_REQUEST, "pid must be a positive number");
		return -EINVAL;
	}
	if (user) {
		if (!subj->privileged && strcmp(user, subj->user) != 0) {
			refuse(x, PE_NOT_ADMIN, "checking user %s needs root or admin-group", user);
			return -EINVAL;
		}
		t->user = user;
	}
	if (x->req.has_policy || x->req.role[0]) {
		if (grant_resolve(x->svc->config, &x->req, &spec) == 0) {
			t->policy = spec.policy;
			t->priority = spec.priority;
		} else {
			t->policy = x->req.has_policy ? x->req.policy : x->svc->config->dflt.policy;
			t->priority = x->req.has_priority ? x->req.priority : 0;
		}
	}
	if (x->req.has_cpus)
		t->cpus = &x->req.cpus;
	return 0;
}

void op_check(struct ctx *x)
{
	const struct grant_subject *subj = &x->subj;
	const struct config *c = x->svc->config;
	struct diag_target t = { .policy = -1,
				 .self_rt_pct = safety_self_share(c->loop_priority, c->loop_budget, c->watchdog) };
	struct diag_report rep;
	int r;

	if (check_target(x, &t) < 0)
		return;
	struct diag_env env = { .limits_conf = x->svc->config->limits_conf, .limits_dir = x->svc->config->limits_dir };
	diag_report_init(&rep);
	r = diag_run(&env, &t, &rep);
	if (r < 0) {
		diag_report_free(&rep);
		refuse(x, r == -ESRCH ? PE_NO_SUCH_THREAD : r == -ENOENT ? PE_BAD_REQUEST : PE_INTERNAL,
		       "check failed: %s%s", strerror(-r), r == -ENOENT ? " (no such user?)" : "");
		return;
	}
	if (t.policy >= 0)
		check_grant(x, subj, &t, &rep);
	bpfcheck_add(&rep, x->svc->observer_error, x->svc->observer_why, true);
	bpfcheck_catcher_add(&rep, x->svc->catcher_error, x->svc->catcher_why, true);
	if (cpucheck_run(NULL, x->svc->config, x->svc->pmqos, x->svc->isolate, &rep) < 0 ||
	    /* interrupts and kernel threads; other users' threads are named to
	     * root and admin-group only */
	    irqcheck_run(NULL, x->svc->config, subj->privileged ? x->svc->registry : NULL, x->svc->irq, &rep) < 0 ||
	    (t.pid && check_held_kthread(x->svc->irq, t.pid, &rep) < 0) ||
	    /* the rules' RLIMIT_RTPRIO grants: the running daemon's capability */
	    rlimit_check_add(&rep, x->svc->config, rlimit_capable(), true) < 0) {
		diag_report_free(&rep);
		refuse(x, PE_INTERNAL, "check failed: out of memory");
		return;
	}
	diag_report_sort(&rep);
	for (size_t i = 0; i < rep.n; i++) {
		proto_begin(&x->out, "ROW");
		proto_add(&x->out, "code", rep.v[i].code);
		proto_add(&x->out, "severity", diag_severity_name(rep.v[i].severity));
		proto_add(&x->out, "message", rep.v[i].message);
		proto_add(&x->out, "fix", rep.v[i].fix);
		send_buf(x);
	}
	proto_begin(&x->out, "OK");
	proto_add_long(&x->out, "rows", (long)rep.n);
	proto_add(&x->out, "worst", diag_severity_name(diag_report_worst(&rep)));
	proto_add_long(&x->out, "pid", rep.pid);
	proto_add(&x->out, "comm", rep.comm);
	proto_add(&x->out, "unit", rep.unit);
	proto_add(&x->out, "user", rep.user);
	proto_add_long(&x->out, "has_limits", rep.has_limits);
	proto_add_long(&x->out, "rtprio_soft", rep.rtprio_soft);
	proto_add_long(&x->out, "rtprio_hard", rep.rtprio_hard);
	proto_add(&x->out, "soft_src", rep.soft_src);
	proto_add(&x->out, "hard_src", rep.hard_src);
	send_buf(x);
	diag_report_free(&rep);
}
