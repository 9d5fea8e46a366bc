/* ops/query.c: the ops that only read the daemon's state: version, status and
 * list (see rtschedd-protocol(7)). */
#include "autoconfig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/core/registry.h"
#include "daemon/cpu/isolate.h"
#include "daemon/cpu/pmqos.h"
#include "daemon/irq/irqmgr.h"
#include "daemon/sys/cpulist.h"
#include "daemon/observe/observer.h"
#include "daemon/ops/ops.h"
#include "daemon/privs.h"
#include "daemon/sys/policy.h"
#include "daemon/sys/proc.h"
#include "daemon/sys/rtloop.h"
#include "daemon/watchdog/safety.h"

/* version: the daemon's release and protocol version. */
void op_version(struct ctx *x)
{
	proto_begin(&x->out, "OK");
	proto_add(&x->out, "version", PACKAGE_VERSION);
	proto_add_long(&x->out, "proto", PROTO_VERSION);
	send_buf(x);
}

/* status: counters, configuration, and the state of every subsystem. */
void op_status(struct ctx *x)
{
	struct service *s = x->svc;
	const struct config *c = s->config;
	struct service_status st;
	struct rtloop_status ls;
	char loopbuf[32];

	memset(&st, 0, sizeof(st));
	s->hooks->status(s->ud, &st);
	proto_begin(&x->out, "OK");
	proto_add(&x->out, "version", PACKAGE_VERSION);
	proto_add_long(&x->out, "proto", PROTO_VERSION);
	proto_add_long(&x->out, "pid", getpid());
	proto_add_long(&x->out, "uptime_s", (long)((clock_usec(CLOCK_MONOTONIC) - st.start_usec) / 1000000u));
	proto_add_long(&x->out, "threads", (long)registry_n_threads(s->registry));
	proto_add_long(&x->out, "processes", (long)registry_n_processes(s->registry));
	proto_add_long(&x->out, "clients", st.clients);
	proto_add_long(&x->out, "grants", (long)s->grants);
	proto_add_long(&x->out, "refusals", (long)s->refusals);
	proto_add_long(&x->out, "reloads", (long)st.reloads);
	proto_add(&x->out, "config", st.config_path);
	proto_add_long(&x->out, "config_files", (long)c->n_files);
	proto_add(&x->out, "socket", c->socket_path);
	proto_add(&x->out, "socket_activated", st.socket_activated ? "yes" : "no");
	proto_add(&x->out, "default_policy", policy_to_string(c->dflt.policy));
	proto_add_long(&x->out, "default_priority", c->dflt.priority);
	proto_add_long(&x->out, "max_priority", c->max_priority);
	proto_add(&x->out, "thread_exit", registry_thread_pidfds(s->registry) ? "pidfd-thread" : "connector+rescan");
	/* the event loop: what it runs at now (sys/rtloop.h) */
	rtloop_get_status(s->loop, &ls);
	snprintf(loopbuf, sizeof(loopbuf), "fifo/%d", ls.priority);
	proto_add(&x->out, "loop", ls.priority == 0 ? "other (loop-priority = 0)"
				   : ls.error ? "other (the kernel refused SCHED_FIFO)"
				   : ls.realtime ? loopbuf : "other (budget spent)");
	proto_add_long(&x->out, "loop_budget_pct", ls.budget_pct);
	proto_add_long(&x->out, "loop_stepdowns", (long)ls.stepdowns);
	proto_add_long(&x->out, "loop_over_max_us", (long)(ls.over_max_ns / 1000u));
	proto_add_long(&x->out, "loop_cpu_ms", (long)(ls.cpu_ns / 1000000u));
	if (s->safety) {
		struct safety_status ss;
		safety_get_status(s->safety, &ss);
		proto_add(&x->out, "watchdog", ss.cooldown ? "cooldown" : ss.watching ? "watching" : "idle");
		proto_add_long(&x->out, "watchdog_threshold_ms", (long)ss.threshold_ms);
		proto_add_long(&x->out, "watchdog_cooldown_s", (long)ss.cooldown_s);
		proto_add_long(&x->out, "watchdog_cooldown_left_s", (long)ss.cooldown_left_s);
		proto_add_long(&x->out, "watchdog_trips", (long)ss.trips);
		proto_add_long(&x->out, "watchdog_canary_late", (long)ss.canary_late);
		proto_add_long(&x->out, "watchdog_canary_stall_ms", (long)ss.canary_stall_ms);
		if (ss.tasks_iter) {
			proto_add(&x->out, "watchdog_tasks", "bpf");
		} else {
			char buf[300];
			snprintf(buf, sizeof(buf), "/proc (%s)", s->tasks_why);
			proto_add(&x->out, "watchdog_tasks", buf);
		}
		/* duty windows (watchdog/duty.c) need the iterators */
		if (!ss.duty_pct) {
			proto_add(&x->out, "watchdog_duty", "off");
		} else {
			char buf[96];
			snprintf(buf, sizeof(buf), "%u%%%s", ss.duty_pct,
				 ss.tasks_iter ? "" : " (not measured: the watchdog reads /proc)");
			proto_add(&x->out, "watchdog_duty", buf);
		}
		if (ss.last_culprit[0])
			proto_add(&x->out, "watchdog_last", ss.last_culprit);
		if (ss.cooldown) {
			char held[512];
			registry_holds_text(s->registry, held, sizeof(held));
			proto_add(&x->out, "watchdog_held", held[0] ? held : "no one");
		}
	} else {
		proto_add(&x->out, "watchdog", "off");
	}
	if (s->observer) {
		unsigned max, n = observer_watched(s->observer, &max);
		char buf[64];
		snprintf(buf, sizeof(buf), "bpf, %u of %u threads", n, max);
		proto_add(&x->out, "observer", buf);
	} else {
		proto_add(&x->out, "observer", s->observer_why[0] ? s->observer_why : "none");
	}
	proto_add(&x->out, "rtkit", st.rtkit_state);
	if (st.rtkit_detail[0])
		proto_add(&x->out, "rtkit_detail", st.rtkit_detail);
	if (st.rtkit) {
		proto_add_long(&x->out, "rtkit_calls", (long)st.rtkit_calls);
		proto_add_long(&x->out, "rtkit_grants", (long)st.rtkit_grants);
		proto_add_long(&x->out, "rtkit_refusals", (long)st.rtkit_refusals);
	}
	char qos[512];
	proto_add(&x->out, "cpu_dma_latency", pmqos_global_state(s->pmqos, c, qos, sizeof(qos)));
	pmqos_cpus_state(s->pmqos, qos, sizeof(qos));
	proto_add(&x->out, "resume_latency", qos);
	struct isolate_status is;
	isolate_status(s->isolate, &is);
	if (is.cpus[0]) {
		snprintf(qos, sizeof(qos), "cpu %s for %s (%s): %zu tasks on the other CPUs, %zu kernel threads by "
			 "affinity, %zu other groups narrowed; applied in %.1f ms", is.cpus, is.who, is.backend, is.moved,
			 is.kthreads, is.groups, is.apply_usec / 1000.0);
		proto_add(&x->out, "isolation", qos);
		if (is.stay[0])
			proto_add(&x->out, "isolation_stay", is.stay);
		if (is.workqueue[0])
			proto_add(&x->out, "isolation_workqueue", is.workqueue);
	} else {
		proto_add(&x->out, "isolation", is.code ? "not isolated" : "off");
	}
	if (is.code) {
		snprintf(qos, sizeof(qos), "%s: %s", is.code, is.why);
		proto_add(&x->out, "isolation_error", qos);
	}
	if (is.apply_usec)
		proto_add_long(&x->out, "isolation_apply_us", (long)is.apply_usec);
	if (is.release_usec)
		proto_add_long(&x->out, "isolation_release_us", (long)is.release_usec);
	char *caps = privs_describe();
	proto_add(&x->out, "capabilities", caps ? caps : "?");
	free(caps);
	struct irqmgr_stats ir;
	irqmgr_stats(s->irq, &ir);
	proto_add_long(&x->out, "irqs", (long)ir.irqs);
	proto_add_long(&x->out, "kthreads", (long)ir.kthreads);
	proto_add_long(&x->out, "irqs_avoided", (long)ir.avoided);
	proto_add(&x->out, "irq_avoid_cpus", ir.avoid);
	proto_add(&x->out, "hotplug", ir.hotplug);
	proto_add(&x->out, "irqbalance", ir.irqbalance);
	proto_add_long(&x->out, "irq_sync_us", (long)ir.last_sync_usec);
	if (ir.last_hotplug_usec)
		proto_add_long(&x->out, "hotplug_apply_us", (long)ir.last_hotplug_usec);
	proto_add_long(&x->out, "match_rules", (long)c->n_auto_rules);
	proto_add_long(&x->out, "scan_tasks", (long)st.scan_tasks);
	proto_add_long(&x->out, "scan_us", (long)st.scan_usec);
	if (st.procev) {
		proto_add(&x->out, "new_threads", st.procev_active ? "connector" :
			  "connector (idle: nothing needs process events now)");
		proto_add_long(&x->out, "connector_events", (long)st.procev_events);
		proto_add_long(&x->out, "connector_overruns", (long)st.procev_overruns);
	} else {
		char why[96];
		snprintf(why, sizeof(why), "rescan every %u ms (connector %s)", c->rescan_ms,
			 st.procev_error == -ENOTSUP ? "off: process-events = no" : strerror(-st.procev_error));
		proto_add(&x->out, "new_threads", why);
	}
	send_buf(x);
}

/* list: what the BPF observer saw of a thread since its registration (or
 * the last jitter --reset): samples and p99 of each kind, and how measured. */
static void list_observed(struct ctx *x, pid_t tid)
{
	struct hist *h = malloc(sizeof(*h));
	int64_t v;

	if (!h)
		return;
	if (observer_read(x->svc->observer, tid, BPFOBS_TIMER, true, h) < 0) {
		proto_add(&x->out, "observed", "schedstat");
		free(h);
		return;
	}
	proto_add(&x->out, "observed", "bpf");
	for (int k = BPFOBS_TIMER; k <= BPFOBS_WAKEUP; k++) {
		char key[32];

		if (k != BPFOBS_TIMER && observer_read(x->svc->observer, tid, (enum bpfobs_kind)k, true, h) < 0)
			break;
		snprintf(key, sizeof(key), "bpf_%s_samples", bpfobs_kind_name((enum bpfobs_kind)k));
		proto_add_long(&x->out, key, (long)hist_count(h));
		if (hist_percentile(h, 99, &v) == 0) {
			snprintf(key, sizeof(key), "bpf_%s_p99_ns", bpfobs_kind_name((enum bpfobs_kind)k));
			proto_add_long(&x->out, key, (long)v);
		}
	}
	free(h);
}

/* How a thread came to be managed, as list names it. */
static const char *source_name(enum reg_source s)
{
	return s == REG_SOURCE_PROCESS ? "process" : s == REG_SOURCE_RULE ? "match" :
	       s == REG_SOURCE_RTKIT ? "rtkit" : s == REG_SOURCE_PRELOAD ? "preload" :
	       s == REG_SOURCE_CAUGHT ? "caught" : "thread";
}

/* The IRQ fields of a list row: its number, names, CPUs (where the kernel
 * handles it now: a move is made at the vector's next interrupt), what it
 * serves. */
static void add_irq(struct proto_buf *b, const struct irq_entry *e, const cpu_set_t *effective)
{
	char cpus[256];

	proto_add_long(b, "irq", e->irq);
	proto_add(b, "irq_actions", e->actions);
	if (e->has_cpus && cpulist_format(&e->want, cpus, sizeof(cpus)) == 0)
		proto_add(b, "irq_cpus", cpus);
	if (cpulist_format(effective, cpus, sizeof(cpus)) == 0)
		proto_add(b, "irq_effective", cpus);
	if (e->written && cpulist_format(&e->original, cpus, sizeof(cpus)) == 0)
		proto_add(b, "irq_original", cpus);
	if (e->served[0])
		proto_add(b, "irq_serves", e->served);
}

/* applied, partial (some of it went through) or refused, with the code
 * and the reason. */
static void add_irq_state(struct proto_buf *b, const char *code, bool some, const char *why)
{
	proto_add(b, "state", !code ? "applied" : some ? "partial" : "refused");
	if (code) {
		proto_add(b, "state_code", code);
		proto_add(b, "state_msg", why);
	}
}

/* The first fields of a kernel thread's row: the thread, what the kernel
 * reports, its section and source. */
static void kt_row_begin(struct ctx *x, const struct kt_entry *k, const char *source)
{
	proto_begin(&x->out, "ROW");
	proto_add_long(&x->out, "tid", k->tid);
	proto_add_long(&x->out, "pid", k->tid);
	proto_add(&x->out, "comm", k->comm);
	add_sched(&x->out, &k->applied);
	proto_add(&x->out, "rule", k->section);
	proto_add(&x->out, "source", source);
	proto_add_long(&x->out, "owner", 0);
}

/* list: the IRQs and kernel threads rtschedd holds, one ROW per thread
 * (an IRQ without a thread gets one of its own). Returns how many. */
static long list_irqs(struct ctx *x)
{
	const struct irqmgr *m = x->svc->irq;
	long rows = 0;

	for (const struct irq_entry *e = irqmgr_irqs(m); e; e = e->next) {
		cpu_set_t aff, eff = e->effective;
		bool any = false;

		irqinfo_read_affinity(NULL, e->irq, &aff, &eff);
		for (const struct kt_entry *k = irqmgr_kthreads(m); k; k = k->next) {
			if (k->irq != e->irq)
				continue;
			any = true;
			kt_row_begin(x, k, "irq");
			add_irq(&x->out, e, &eff);
			const char *code = k->code ? k->code : e->code;
			add_irq_state(&x->out, code, !k->code || !e->code, k->code ? k->why : e->why);
			send_buf(x);
			rows++;
		}
		if (any)
			continue;
		char cpus[256];
		proto_begin(&x->out, "ROW");
		proto_add(&x->out, "comm", e->actions);
		if (cpulist_format(&eff, cpus, sizeof(cpus)) == 0)
			proto_add(&x->out, "cpus", cpus);
		proto_add(&x->out, "rule", e->avoid ? "irq-avoid-cpus" : e->section);
		proto_add(&x->out, "source", e->avoid ? "irq-avoid" : "irq");
		proto_add_long(&x->out, "owner", 0);
		add_irq(&x->out, e, &eff);
		add_irq_state(&x->out, e->code, false, e->why);
		send_buf(x);
		rows++;
	}
	for (const struct kt_entry *k = irqmgr_kthreads(m); k; k = k->next) {
		if (k->irq >= 0)
			continue;
		kt_row_begin(x, k, "kthread");
		proto_add(&x->out, "original_policy", policy_to_string(k->original.policy));
		proto_add_long(&x->out, "original_priority", k->original.priority);
		add_irq_state(&x->out, k->code, k->code && strcmp(k->code, IRQ_CODE_BOUND) == 0, k->why);
		send_buf(x);
		rows++;
	}
	return rows;
}

/* list: one ROW per managed thread (with all=1, also the recent unmanaged ones). */
void op_list(struct ctx *x)
{
	struct safety_status ss = { 0 };
	long rows = 0, all = 0;
	int r = proto_get_long(x->m, "all", 0, 1, &all);

	if (r < 0 && r != -ENOENT) {
		refuse(x, PE_BAD_REQUEST, "all=%s: use all=1 (or 0)", proto_get(x->m, "all"));
		return;
	}

	if (x->svc->safety)
		safety_get_status(x->svc->safety, &ss);
	REGISTRY_FOREACH_THREAD(t, x->svc->registry) {
		struct proc_stat st;

		proto_begin(&x->out, "ROW");
		proto_add_long(&x->out, "tid", t->tid);
		proto_add_long(&x->out, "pid", t->pid);
		proto_add(&x->out, "comm", proc_read_stat(t->tid, &st) == 0 ? st.comm : "?");
		add_sched(&x->out, &t->applied);
		proto_add(&x->out, "rule", t->req.role[0] ? t->req.role : "default");
		proto_add(&x->out, "source", source_name(t->source));
		proto_add_long(&x->out, "owner", (long)t->owner);
		proto_add_long(&x->out, "since", (long)(t->since_usec / 1000000u));
		/* why the policy shown is what it is: applied as asked, or set to
		 * SCHED_OTHER by the watchdog until its cooldown ends */
		proto_add(&x->out, "state", t->demoted ? "demoted" : "applied");
		if (t->demoted) {
			proto_add(&x->out, "state_by", "watchdog");
			proto_add_long(&x->out, "state_left_s", ss.cooldown ? (long)ss.cooldown_left_s : 0);
		}
		list_observed(x, t->tid);
		send_buf(x);
		rows++;
	}
	rows += list_irqs(x);
	/* with all=1, threads not managed, still alive, that a rule matched (or
	 * a process registered) and were refused, or that were let go and
	 * restored; without, only how many there are */
	const struct reg_recent *e;
	bool admin = x->subj.privileged;
	long unmanaged = 0;
	for (size_t i = 0; (e = registry_recent(x->svc->registry, i)); i++) {
		struct proc_stat st;
		struct task_sched now;

		if (registry_find(x->svc->registry, e->tid) || proc_read_stat(e->tid, &st) < 0 ||
		    st.starttime != e->starttime)
			continue;
		unmanaged++;
		/* the kernel's view only for a row that is sent */
		if (!all || task_sched_read(e->tid, &now) < 0)
			continue;
		proto_begin(&x->out, "ROW");
		proto_add_long(&x->out, "tid", e->tid);
		proto_add_long(&x->out, "pid", e->pid);
		proto_add(&x->out, "comm", st.comm);
		add_sched(&x->out, &now);
		proto_add(&x->out, "rule", e->rule[0] ? e->rule : "default");
		proto_add(&x->out, "source", source_name(e->source));
		proto_add_long(&x->out, "owner", (long)e->owner);
		proto_add_long(&x->out, "since", (long)(e->when_usec / 1000000u));
		proto_add(&x->out, "state", e->code == 0 ? "restored" : "refused");
		if (e->code != 0) {
			proto_add(&x->out, "state_code", proto_error_code(ops_wire_error(e->code)));
			/* the reason may quote the owner's limits: theirs and the admins' to read */
			if (admin || x->peer->uid == e->owner)
				proto_add(&x->out, "state_msg", e->why);
		}
		send_buf(x);
		rows++;
	}
	proto_begin(&x->out, "OK");
	proto_add_long(&x->out, "rows", rows);
	proto_add_long(&x->out, "unmanaged", unmanaged);
	send_buf(x);
}
