/* ops/why.c: why, the late wake-ups of one managed thread or probe and
 * what made them late (see rtschedd-protocol(7)): a thread row, a row per
 * culprit (the kept ones, most delay first, then other), the worst late
 * wake-up's timeline, the last few late wake-ups, and a verdict. */
#include "autoconfig.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/core/registry.h"
#include "daemon/diag/diag.h"
#include "daemon/observe/culprit.h"
#include "daemon/observe/jitter.h"
#include "daemon/observe/observer.h"
#include "daemon/ops/ops.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/policy.h"
#include "daemon/sys/proc.h"

/* The thread named by "TID" or "NAME": a managed thread or a probe. 0 with
 * *tid set, or after refusing -ENOENT. */
static int find_target(struct ctx *x, const char *want, pid_t *tid)
{
	struct service *s = x->svc;
	char comm[PROC_COMM_MAX + 1], found[256] = "";
	struct proc_stat st;
	uint64_t when;
	long n;
	int hits = 0;

	if (proto_parse_long(want, 1, INT32_MAX, &n) == 0) {
		*tid = (pid_t)n;
		if (registry_find(s->registry, *tid) || jitter_probe_name(s->jitter, *tid))
			return 0;
		if (observer_gone(s->observer, *tid, comm, sizeof(comm), &when) == 0) {
			uint64_t now = clock_usec(CLOCK_REALTIME);
			refuse(x, PE_NO_SUCH_THREAD, "tid %ld (%s) is not managed any more: it exited or was let go "
			       "%llu s ago, and rtschedd keeps nothing of its late wake-ups", n, comm,
			       (unsigned long long)(now > when ? (now - when) / 1000000u : 0));
		} else if (proc_read_stat(*tid, &st) == 0) {
			refuse(x, PE_NOT_REGISTERED, "tid %ld (%s) is not managed by rtschedd, so not observed; "
			       "register it (rtschedctl register --tid %ld) or write a [rule] that matches it", n,
			       st.comm, n);
		} else {
			refuse(x, PE_NO_SUCH_THREAD, "tid %ld: no such thread (it has exited, or never existed)", n);
		}
		return -ENOENT;
	}
	if ((*tid = jitter_probe_tid(s->jitter, want)))
		return 0;
	/* each a /proc read: the scan is charged like rows (dispatch.c) */
	x->rows += registry_n_threads(s->registry);
	REGISTRY_FOREACH_THREAD(t, s->registry) {
		if (proc_read_stat(t->tid, &st) < 0 || strcmp(st.comm, want))
			continue;
		if (hits++ == 0)
			*tid = t->tid;
		if (strlen(found) < sizeof(found) - 16)
			snprintf(found + strlen(found), sizeof(found) - strlen(found), "%s%d", hits > 1 ? ", " : "",
				 (int)t->tid);
	}
	if (hits == 1)
		return 0;
	if (hits > 1)
		refuse(x, PE_BAD_REQUEST, "%d managed threads are named %s (tids %s); give one tid", hits, want,
		       found);
	else
		refuse(x, PE_NOT_REGISTERED, "no managed thread or probe is named %s; rtschedctl list shows the "
		       "managed threads, rtschedctl jitter the probes", want);
	return -ENOENT;
}

/* "2026-11-26T12:03:04.123Z" */
static void iso_time(uint64_t us, char *buf, size_t len)
{
	time_t t = (time_t)(us / 1000000u);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(buf, len, "?");
	else
		snprintf(buf + strlen(buf), len - strlen(buf), ".%03uZ", (unsigned)(us / 1000u % 1000u));
}

/* One culprit row. */
static void culprit_row(struct ctx *x, int rank, const struct culprit_entry *e, uint64_t delay_ns)
{
	char label[160], pct[16];

	observer_label(x->svc->observer, &e->key, label, sizeof(label));
	snprintf(pct, sizeof(pct), "%.1f", delay_ns ? 100.0 * (double)e->total_ns / (double)delay_ns : 0.0);
	proto_begin(&x->out, "ROW");
	proto_add(&x->out, "row", "culprit");
	proto_add_long(&x->out, "rank", rank);
	proto_add(&x->out, "kind", culprit_kind_name(e->key.kind));
	proto_add(&x->out, "name", label);
	if (e->key.kind == CULPRIT_TASK || e->key.kind == CULPRIT_KERNEL) {
		proto_add(&x->out, "comm", e->key.comm);
		proto_add_long(&x->out, "tid", e->key.id);
		proto_add_long(&x->out, "pid", e->key.tgid);
		proto_add(&x->out, "policy", culprit_policy_name(e->key.policy));
		proto_add_long(&x->out, "kprio", e->key.prio);
	} else if (e->key.kind == CULPRIT_HARDIRQ) {
		proto_add_long(&x->out, "irq", e->key.id);
	} else if (e->key.kind == CULPRIT_SOFTIRQ) {
		proto_add(&x->out, "vector", culprit_softirq_name(e->key.id));
	}
	proto_add(&x->out, "share_pct", pct);
	proto_add_long(&x->out, "total_ns", (long)e->total_ns);
	proto_add_long(&x->out, "worst_ns", (long)e->worst_ns);
	proto_add_long(&x->out, "late", (long)e->late);
	proto_add_long(&x->out, "first", (long)e->first);
	if (e->cpu >= 0)
		proto_add_long(&x->out, "cpu", e->cpu);
	send_buf(x);
}

/* The thread row: who it is, what counts as late, how many were. */
static void thread_row(struct ctx *x, pid_t tid, const struct observer_late *ol, const struct culprit_table *t)
{
	struct service *s = x->svc;
	struct reg_thread *rt = registry_find(s->registry, tid);
	const char *probe = jitter_probe_name(s->jitter, tid);
	struct task_sched ts;
	struct proc_stat st;
	struct hist *h = malloc(sizeof(*h));
	char cpus[128], when[40];

	proto_begin(&x->out, "ROW");
	proto_add(&x->out, "row", "thread");
	proto_add_long(&x->out, "tid", tid);
	proto_add_long(&x->out, "pid", rt ? rt->pid : getpid());
	proto_add(&x->out, "name", proc_read_stat(tid, &st) == 0 ? st.comm : "?");
	if (probe)
		proto_add(&x->out, "probe", probe);
	else
		proto_add(&x->out, "rule", rt && rt->req.role[0] ? rt->req.role : "default");
	if (task_sched_read(tid, &ts) == 0) {
		cpulist_format(&ts.cpus, cpus, sizeof(cpus));
		proto_add(&x->out, "policy", policy_to_string(ts.policy));
		proto_add_long(&x->out, "priority", ts.priority);
		proto_add(&x->out, "cpus", cpus);
	}
	proto_add_long(&x->out, "threshold_ns", (long)ol->lim.late_ns);
	proto_add_long(&x->out, "budget_ns", (long)ol->lim.budget_ns);
	if (h && observer_read(s->observer, tid, BPFOBS_WAKEUP, false, h) == 0)
		proto_add_long(&x->out, "wakeups", (long)hist_count(h));
	if (h && observer_read(s->observer, tid, BPFOBS_TIMER, false, h) == 0)
		proto_add_long(&x->out, "timer_wakeups", (long)hist_count(h));
	free(h);
	proto_add_long(&x->out, "late", (long)(ol->late[BPFOBS_TIMER] + ol->late[BPFOBS_WAKEUP]));
	proto_add_long(&x->out, "late_timer", (long)ol->late[BPFOBS_TIMER]);
	proto_add_long(&x->out, "late_wakeup", (long)ol->late[BPFOBS_WAKEUP]);
	proto_add(&x->out, "culprits", ol->culprits ? "yes" : "no");
	proto_add_long(&x->out, "dropped", (long)ol->dropped);
	proto_add_long(&x->out, "explained", t ? (long)t->late : 0);
	proto_add_long(&x->out, "delay_ns", t ? (long)t->delay_ns : 0);
	if (t && t->worst.delay_ns) {
		iso_time(t->worst_when_us, when, sizeof(when));
		proto_add_long(&x->out, "worst_ns", (long)t->worst.delay_ns);
		proto_add(&x->out, "worst_when", when);
		proto_add_long(&x->out, "worst_cpu", t->worst.cpu);
		proto_add(&x->out, "worst_from", t->worst.kind == BPFOBS_KIND_TIMER ? "timer" : "wakeup");
		if (t->worst.wake_ns)
			proto_add_long(&x->out, "worst_woken_ns", (long)t->worst.wake_ns);
	}
	send_buf(x);
}

void why_add_summary(struct ctx *x, pid_t tid)
{
	struct observer *o = x->svc->observer;
	const struct culprit_entry *e[CULPRIT_TOP + 1];
	const struct culprit_table *t;
	struct culprit_entry other;
	struct observer_late ol;
	char key[48], label[160], pct[16];
	size_t n;

	if (observer_late(o, tid, &ol) < 0)
		return;
	proto_add_long(&x->out, "late", (long)(ol.late[BPFOBS_TIMER] + ol.late[BPFOBS_WAKEUP]));
	proto_add_long(&x->out, "late_threshold_ns", (long)ol.lim.late_ns);
	if (ol.lim.budget_ns) {
		proto_add_long(&x->out, "budget_ns", (long)ol.lim.budget_ns);
		proto_add_long(&x->out, "budget_misses", (long)(ol.late[BPFOBS_TIMER] + ol.late[BPFOBS_WAKEUP]));
	}
	if (!(t = observer_table(o, tid)) || !t->late)
		return;
	n = culprit_table_sorted(t, e, CULPRIT_TOP);
	culprit_table_other(t, &other);
	if (other.total_ns || other.first)
		e[n++] = &other;
	for (size_t i = 0; i < n; i++) {
		observer_label(o, &e[i]->key, label, sizeof(label));
		snprintf(pct, sizeof(pct), "%.1f", 100.0 * (double)e[i]->total_ns / (double)t->delay_ns);
		snprintf(key, sizeof(key), "culprit_%zu_name", i + 1);
		proto_add(&x->out, key, label);
		snprintf(key, sizeof(key), "culprit_%zu_kind", i + 1);
		proto_add(&x->out, key, culprit_kind_name(e[i]->key.kind));
		snprintf(key, sizeof(key), "culprit_%zu_share_pct", i + 1);
		proto_add(&x->out, key, pct);
		snprintf(key, sizeof(key), "culprit_%zu_total_ns", i + 1);
		proto_add_long(&x->out, key, (long)e[i]->total_ns);
		snprintf(key, sizeof(key), "culprit_%zu_first", i + 1);
		proto_add_long(&x->out, key, (long)e[i]->first);
	}
}

/* why: thread=TID|NAME. */
void op_why(struct ctx *x)
{
	struct service *s = x->svc;
	const char *want = proto_get(x->m, "thread");
	const struct culprit_entry *sorted[CULPRIT_TOP];
	const struct culprit_recent *recent[CULPRIT_RECENT];
	const struct culprit_table *t;
	struct culprit_entry other;
	struct observer_late ol;
	char verdict[640], label[160], thr[32], model[64], when[40];
	size_t n;
	long rows = 0;
	pid_t tid;

	if (!want || !*want) {
		refuse(x, PE_BAD_REQUEST, "why needs thread=TID or thread=NAME");
		return;
	}
	if (find_target(x, want, &tid) < 0)
		return;
	if (!s->observer) {
		refuse(x, PE_NOT_OBSERVED, "rtschedd has no BPF observer, which is what sees late wake-ups: %s "
		       "(rtschedctl check says more)", s->observer_why[0] ? s->observer_why : "not loaded");
		return;
	}
	if (observer_late(s->observer, tid, &ol) < 0) {
		unsigned max, used = observer_watched(s->observer, &max);
		refuse(x, PE_NOT_OBSERVED, "tid %d is managed but the BPF observer does not watch it (%u of its %u "
		       "observe-threads slots in use, or a tid at or above kernel.pid_max when it loaded; the log says "
		       "which): raise observe-threads in [daemon], which takes effect at the next start",
		       (int)tid, used, max);
		return;
	}
	t = observer_table(s->observer, tid);
	thread_row(x, tid, &ol, t);
	rows++;
	snprintf(thr, sizeof(thr), "%.0f us", (double)ol.lim.late_ns / 1e3);
	if (!ol.culprits) {
		snprintf(verdict, sizeof(verdict), "%llu wake-up%s later than %s; culprit tracking is off "
			 "(culprits = no in [daemon]): set it to yes and restart rtschedd to see what made them late",
			 (unsigned long long)(ol.late[0] + ol.late[1]), ol.late[0] + ol.late[1] == 1 ? "" : "s", thr);
	} else if (!t || !t->late) {
		snprintf(verdict, sizeof(verdict), "no wake-up later than %s%s", thr,
			 ol.late[0] + ol.late[1] ? " has been worked out yet (the ones counted found the ring buffer "
			 "full)" : " since rtschedd began to observe it");
	} else {
		n = culprit_table_sorted(t, sorted, CULPRIT_TOP);
		culprit_table_other(t, &other);
		for (size_t i = 0; i < n; i++, rows++)
			culprit_row(x, (int)i + 1, sorted[i], t->delay_ns);
		if (other.total_ns) {
			culprit_row(x, (int)n + 1, &other, t->delay_ns);
			rows++;
		}
		for (size_t i = 0; i < t->worst.npieces; i++, rows++) {
			const struct culprit_piece *p = &t->worst.piece[i];
			observer_label(s->observer, &p->key, label, sizeof(label));
			proto_begin(&x->out, "ROW");
			proto_add(&x->out, "row", "timeline");
			proto_add_long(&x->out, "offset_ns", (long)p->offset_ns);
			proto_add_long(&x->out, "ns", (long)p->ns);
			proto_add(&x->out, "kind", culprit_kind_name(p->key.kind));
			proto_add(&x->out, "name", label);
			send_buf(x);
		}
		n = culprit_table_recent(t, recent, CULPRIT_RECENT);
		for (size_t i = 0; i < n; i++, rows++) {
			observer_label(s->observer, &recent[i]->top, label, sizeof(label));
			iso_time(recent[i]->when_us, when, sizeof(when));
			proto_begin(&x->out, "ROW");
			proto_add(&x->out, "row", "recent");
			proto_add(&x->out, "when", when);
			proto_add_long(&x->out, "delay_ns", (long)recent[i]->delay_ns);
			proto_add_long(&x->out, "cpu", recent[i]->cpu);
			proto_add(&x->out, "from", recent[i]->kind == BPFOBS_KIND_TIMER ? "timer" : "wakeup");
			proto_add(&x->out, "top", label);
			proto_add(&x->out, "top_kind", culprit_kind_name(recent[i]->top.kind));
			proto_add_long(&x->out, "top_ns", (long)recent[i]->top_ns);
			send_buf(x);
		}
		diag_preempt_model(NULL, model, sizeof(model));
		struct culprit_verdict_in in = {
			.top = sorted[0], .share = (double)sorted[0]->total_ns / (double)t->delay_ns,
			.threshold_ns = ol.lim.late_ns, .thread_prio = t->worst.prio, .cpu = sorted[0]->cpu,
			.preempt = model,
			.irq_name = sorted[0]->key.kind == CULPRIT_HARDIRQ ? observer_irq_name(s->observer, sorted[0]->key.id) : NULL,
			.irq_section = sorted[0]->key.kind == CULPRIT_HARDIRQ ? observer_irq_section(s->observer, sorted[0]->key.id) : NULL,
		};
		culprit_verdict(&in, verdict, sizeof(verdict));
	}
	proto_begin(&x->out, "OK");
	proto_add_long(&x->out, "rows", rows);
	proto_add(&x->out, "verdict", verdict);
	send_buf(x);
}
