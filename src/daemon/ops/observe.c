/* ops/observe.c: the ops over what the observers measured: jitter (one row
 * per source, or one source's histogram), jitter-reset, jitter-attach (a
 * client's own histogram memfd) and metrics (the Prometheus text). */
#include "autoconfig.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/core/grant.h"
#include "daemon/cpu/isolate.h"
#include "daemon/cpu/pmqos.h"
#include "daemon/diag/diag.h"
#include "daemon/irq/irqmgr.h"
#include "daemon/observe/jitter.h"
#include "daemon/ops/ops.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/policy.h"
#include "daemon/sys/proc.h"
#include "daemon/watchdog/safety.h"

/* Timer slack of a thread: RT threads get none; others from /proc if we may read it. */
static void timer_slack(const struct task_sched *ts, pid_t pid, char *buf, size_t len)
{
	long long ns;

	if (policy_is_realtime(ts->policy))
		snprintf(buf, len, "0");
	else if (proc_read_timerslack_at(NULL, pid, &ns) == 0)
		snprintf(buf, len, "%lld", ns);
	else
		snprintf(buf, len, "?");
}

struct jitter_ctx {
	struct ctx *x;
	const char *want;   /* histogram of this source ([KIND:]tid or name), or NULL */
	int want_kind;      /* the KIND: given or, once a row matched, its kind; -1 */
	pid_t want_tid;     /* once a row matched, its thread: one source, not every namesake; 0 */
	long rows;
};

/* One source: a summary row, or with histogram= its buckets. */
static void jitter_row_out(void *ud, const struct jitter_row *r)
{
	struct jitter_ctx *jc = ud;
	struct ctx *x = jc->x;
	struct task_sched ts;
	char cpus[128] = "?", slack[32] = "?", tid[16];
	int64_t v;
	double d;

	snprintf(tid, sizeof(tid), "%d", (int)r->tid);
	if (jc->want) {
		/* one source only: a thread can have a timer and two BPF rows;
		 * the first that matches (timer, probe, bpf-timer, bpf-wakeup)
		 * unless the request names the kind */
		if (r->kind == JITTER_SCHEDSTAT || (jc->want_kind >= 0 && (int)r->kind != jc->want_kind) ||
		    (jc->want_tid && r->tid != jc->want_tid) || (strcmp(jc->want, tid) && strcmp(jc->want, r->name)))
			return;
		jc->want_kind = (int)r->kind;
		jc->want_tid = r->tid;
		for (int i = hist_bucket_next(&r->h, 0); i >= 0; i = hist_bucket_next(&r->h, i + 1)) {
			proto_begin(&x->out, "ROW");
			proto_add(&x->out, "name", r->name);
			proto_add(&x->out, "kind", jitter_kind_name(r->kind));
			proto_add_long(&x->out, "lo_ns", (long)hist_bucket_lower(i));
			proto_add_long(&x->out, "hi_ns", i == HIST_OVERFLOW ? -1 : (long)hist_bucket_upper(i));
			proto_add_long(&x->out, "count", (long)hist_bucket_count(&r->h, i));
			send_buf(x);
			jc->rows++;
		}
		return;
	}
	proto_begin(&x->out, "ROW");
	proto_add(&x->out, "kind", jitter_kind_name(r->kind));
	proto_add(&x->out, "name", r->name);
	proto_add_long(&x->out, "tid", r->tid);
	proto_add_long(&x->out, "pid", r->pid);
	proto_add(&x->out, "rule", r->rule);
	if (task_sched_read(r->tid, &ts) == 0) {
		cpulist_format(&ts.cpus, cpus, sizeof(cpus));
		timer_slack(&ts, r->pid, slack, sizeof(slack));
		proto_add(&x->out, "policy", policy_to_string(ts.policy));
		proto_add_long(&x->out, "priority", ts.priority);
	}
	proto_add(&x->out, "cpus", cpus);
	proto_add(&x->out, "timer_slack_ns", slack);
	proto_add(&x->out, "strategy", r->strategy);
	proto_add_long(&x->out, "period_ns", (long)r->period_ns);
	proto_add_long(&x->out, "samples", (long)r->samples);
	if (r->kind == JITTER_SCHEDSTAT) {
		proto_add_long(&x->out, "mean_ns", (long)r->mean_ns);
	} else if (r->samples) {
		static const struct { const char *k; double q; } pct[] = {
			{ "p50_ns", 50 }, { "p90_ns", 90 }, { "p99_ns", 99 }, { "p999_ns", 99.9 }, { "p9999_ns", 99.99 } };
		proto_add_long(&x->out, "min_ns", (long)hist_min(&r->h));
		for (size_t i = 0; i < sizeof(pct) / sizeof(pct[0]); i++)
			if (hist_percentile(&r->h, pct[i].q, &v) == 0)
				proto_add_long(&x->out, pct[i].k, (long)v);
		proto_add_long(&x->out, "max_ns", (long)hist_max(&r->h));
		proto_add_long(&x->out, "mean_ns", (long)r->mean_ns);
		/* the sums are the worker's to write: a stddev past LONG_MAX must
		 * not reach the (undefined) conversion */
		if (hist_stddev(&r->h, &d) == 0)
			proto_add_long(&x->out, "stddev_ns", d < 0x1p63 ? (long)d : LONG_MAX);
		proto_add_long(&x->out, "overruns", (long)hist_overruns(&r->h));
		if (r->period_ns > 0 && hist_percentile(&r->h, 99, &v) == 0) {
			char p[32];
			snprintf(p, sizeof(p), "%.2f", 100.0 * (double)v / (double)r->period_ns);
			proto_add(&x->out, "p99_pct", p);
		}
	}
	/* what the BPF observer saw of its late wake-ups, on every row of a
	 * thread it watches (managed threads and probes) */
	if (r->kind != JITTER_TIMER)
		why_add_summary(x, r->tid);
	send_buf(x);
	jc->rows++;
}

/* The IRQ threads and kernel threads [irq]/[kthread] sections hold, as
 * the BPF observer saw them: named by their section, so `jitter
 * --histogram SECTION` finds an IRQ by what manages it (a section of
 * several threads: the first; the others by tid). */
static void jitter_kthreads(struct jitter_ctx *jc)
{
	struct jitter_row *row = malloc(sizeof(*row));

	if (!row)
		return;
	for (const struct kt_entry *k = irqmgr_kthreads(jc->x->svc->irq); k; k = k->next)
		for (int kind = BPFOBS_TIMER; kind <= BPFOBS_WAKEUP; kind++) {
			double mean = 0;

			memset(row, 0, sizeof(*row));
			if (observer_read(jc->x->svc->observer, k->tid, (enum bpfobs_kind)kind, true, &row->h) < 0)
				break;
			/* an IRQ's thread is woken by its interrupt: a timer row
			 * only once a timer woke it, so that --histogram SECTION
			 * draws the wake-ups, not an empty timer row */
			if (kind == BPFOBS_TIMER && !hist_count(&row->h))
				continue;
			row->kind = kind == BPFOBS_TIMER ? JITTER_BPF_TIMER : JITTER_BPF_WAKEUP;
			snprintf(row->name, sizeof(row->name), "%s", k->section);
			row->tid = row->pid = k->tid;
			snprintf(row->rule, sizeof(row->rule), "%s", k->section);
			snprintf(row->strategy, sizeof(row->strategy), "-");
			row->samples = hist_count(&row->h);
			row->mean_ns = hist_mean(&row->h, &mean) < 0 ? -1 : mean < 0x1p63 ? (int64_t)mean : INT64_MAX;
			jitter_row_out(jc, row);
		}
	free(row);
}

/* jitter: a summary row per source, or with histogram= one source's buckets. */
void op_jitter(struct ctx *x)
{
	struct jitter_ctx jc = { .x = x, .want = proto_get(x->m, "histogram"), .want_kind = -1 };
	const char *colon = jc.want ? strchr(jc.want, ':') : NULL;
	char model[64], qos[256];

	if (colon) {
		static const enum jitter_kind k[] = { JITTER_TIMER, JITTER_PROBE, JITTER_BPF_TIMER, JITTER_BPF_WAKEUP };
		for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++)
			if (strlen(jitter_kind_name(k[i])) == (size_t)(colon - jc.want) &&
			    !strncmp(jc.want, jitter_kind_name(k[i]), (size_t)(colon - jc.want)))
				jc.want_kind = (int)k[i];
		if (jc.want_kind < 0) {
			refuse(x, PE_BAD_REQUEST, "unknown kind in histogram '%s'; use timer:, probe:, bpf-timer: "
			       "or bpf-wakeup: before the name or tid", jc.want);
			return;
		}
		jc.want = colon + 1;
	}

	jitter_foreach(x->svc->jitter, jitter_row_out, &jc);
	jitter_kthreads(&jc);
	proto_begin(&x->out, "OK");
	proto_add_long(&x->out, "rows", jc.rows);
	/* the model check reports; "dynamic" or "voluntary or none" when nothing tells it */
	diag_preempt_model(NULL, model, sizeof(model));
	proto_add(&x->out, "preempt", model);
	proto_add(&x->out, "cpu_dma_latency", pmqos_global_state(x->svc->pmqos, x->svc->config, qos, sizeof(qos)));
	pmqos_cpus_state(x->svc->pmqos, qos, sizeof(qos));
	proto_add(&x->out, "resume_latency", qos);
	if (isolate_active(x->svc->isolate)) {
		struct isolate_status st;
		isolate_status(x->svc->isolate, &st);
		proto_add(&x->out, "isolated", st.cpus);
	}
	send_buf(x);
}

/* jitter-reset: start every source's histogram again (dispatch let only
 * root and admin-group through). */
void op_jitter_reset(struct ctx *x)
{
	jitter_reset(x->svc->jitter);
	for (const struct kt_entry *k = irqmgr_kthreads(x->svc->irq); k; k = k->next)
		observer_reset(x->svc->observer, k->tid);
	proto_begin(&x->out, "OK");
	send_buf(x);
}

/* jitter-attach: watch a histogram the client's thread fills in a memfd it
 * passed. The descriptor is kept only when it is one; anything else is left
 * in x->fd, which the control socket closes off the event loop. */
void op_jitter_attach(struct ctx *x)
{
	struct proc_status ps;
	const char *strategy = proto_get(x->m, "strategy");
	char msg[512];
	long tid, period;
	size_t max = JITTER_SOURCES_MAX;
	int e;

	if (x->fd < 0) {
		refuse(x, PE_BAD_REQUEST, "jitter-attach needs the histogram memfd passed with SCM_RIGHTS");
		return;
	}
	if (proto_get_long(x->m, "tid", 1, INT32_MAX, &tid) < 0 ||
	    proto_get_long(x->m, "period_ns", 1, 60L * 1000000000L, &period) < 0 || !strategy ||
	    strlen(strategy) >= 16) {
		refuse(x, PE_BAD_REQUEST, "jitter-attach needs tid=TID period_ns=N strategy=NAME");
		return;
	}
	if ((e = jitter_fd_check(x->fd, msg, sizeof(msg))) != 0) {
		refuse(x, ops_wire_error(e), "%s", msg);
		return;
	}
	if (proc_read_status((pid_t)tid, &ps) < 0) {
		refuse(x, PE_NO_SUCH_THREAD, "tid %ld: no such thread", tid);
		return;
	}
	if (may_act_on(x->peer, &x->subj, &ps, "tid", tid, msg, sizeof(msg)) != 0) {
		refuse(x, PE_NOT_OWN_THREAD, "%s", msg);
		return;
	}
	/* a user may watch as many timers as it may hold real-time threads */
	if (!x->subj.privileged) {
		struct grant_limits l;
		grant_limits_get(x->svc->config, &x->subj, &l);
		max = (size_t)l.max_threads;
	}
	e = jitter_attach(x->svc->jitter, (pid_t)tid, ps.tgid, x->subj.account, max, period, strategy, &x->fd, msg,
			  sizeof(msg));
	if (e != 0) {
		refuse(x, ops_wire_error(e), "%s", msg);
		return;
	}
	/* a new source: the daemon's tick may have to start */
	x->svc->hooks->changed(x->svc->ud);
	proto_begin(&x->out, "OK");
	proto_add_long(&x->out, "tid", tid);
	send_buf(x);
}

/* The Prometheus text, one ROW per line. */
void op_metrics(struct ctx *x)
{
	char *text = NULL, *save = NULL;
	size_t len = 0;
	long rows = 0;
	FILE *f = open_memstream(&text, &len);

	struct jitter_counters jc = { .grants = x->svc->grants, .refusals = x->svc->refusals, .watchdog_trips = -1,
				      .interval_s = x->svc->config->metrics_interval_s };
	struct safety_status ss;

	if (x->svc->safety) {
		safety_get_status(x->svc->safety, &ss);
		jc.watchdog_trips = (long)ss.trips;
	}
	if (!f || jitter_prometheus(x->svc->jitter, f, &jc) < 0) {
		if (f)
			fclose(f);
		free(text);
		refuse(x, PE_INTERNAL, "cannot build the metrics");
		return;
	}
	fclose(f);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save), rows++) {
		proto_begin(&x->out, "ROW");
		proto_add(&x->out, "line", l);
		send_buf(x);
	}
	free(text);
	proto_begin(&x->out, "OK");
	proto_add_long(&x->out, "rows", rows);
	send_buf(x);
}
