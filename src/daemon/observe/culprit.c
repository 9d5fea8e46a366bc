/* culprit.c: late wake-ups worked out into culprits, and the per-thread
 * table of them (see culprit.h). */
#include "autoconfig.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "daemon/observe/culprit.h"

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

const char *culprit_kind_name(enum culprit_kind k)
{
	static const char *const names[CULPRIT_NKINDS] = { "task", "kernel", "irq", "softirq", "timer", "idle",
							   "slack", "unrecorded", "other" };

	return (unsigned)k < CULPRIT_NKINDS ? names[k] : "?";
}

const char *culprit_softirq_name(int vec)
{
	/* the kernel's softirq_to_name[], in vector order */
	static const char *const names[] = { "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL",
					     "TASKLET", "SCHED", "HRTIMER", "RCU" };

	return vec >= 0 && (size_t)vec < sizeof(names) / sizeof(names[0]) ? names[vec] : "?";
}

const char *culprit_policy_name(int policy)
{
	switch (policy) {
	case SCHED_OTHER: return "other";
	case SCHED_FIFO: return "fifo";
	case SCHED_RR: return "rr";
	case SCHED_BATCH: return "batch";
	case SCHED_IDLE: return "idle";
	case SCHED_DEADLINE: return "deadline";
	default: return "?";
	}
}

static bool key_eq(const struct culprit_key *a, const struct culprit_key *b)
{
	return a->kind == b->kind && a->id == b->id && a->tgid == b->tgid && a->prio == b->prio &&
	       a->policy == b->policy && strncmp(a->comm, b->comm, sizeof(a->comm)) == 0;
}

/* The culprit a segment names, for a thread of kernel priority prio. A task
 * of lower priority than a real-time thread could only have kept it waiting
 * where it could not be preempted: in the kernel. */
static void seg_key(const struct bpfobs_seg *g, int prio, struct culprit_key *k)
{
	memset(k, 0, sizeof(*k));
	switch (g->kind) {
	case BPFOBS_SEG_TASK:
		k->kind = prio < 100 && (int)g->prio > prio ? CULPRIT_KERNEL : CULPRIT_TASK;
		k->id = g->id;
		k->tgid = g->tgid;
		k->prio = g->prio;
		k->policy = g->policy;
		memcpy(k->comm, g->comm, sizeof(k->comm) - 1);
		break;
	case BPFOBS_SEG_HARDIRQ:
		k->kind = CULPRIT_HARDIRQ;
		k->id = g->id;
		break;
	case BPFOBS_SEG_SOFTIRQ:
		k->kind = CULPRIT_SOFTIRQ;
		k->id = g->id;
		break;
	case BPFOBS_SEG_TIMER:
		k->kind = CULPRIT_TIMER;
		break;
	case BPFOBS_SEG_IDLE:
		k->kind = CULPRIT_IDLE;
		break;
	default:
		k->kind = CULPRIT_UNRECORDED;
		break;
	}
}

/* Add ns of key to the window's parts (the last part is other once full). */
static void part_add(struct culprit_window *w, const struct culprit_key *k, uint64_t ns)
{
	for (size_t i = 0; i < w->n; i++)
		if (key_eq(&w->part[i].key, k)) {
			w->part[i].ns += ns;
			return;
		}
	if (w->n < CULPRIT_PARTS - 1 || (w->n == CULPRIT_PARTS - 1 && k->kind == CULPRIT_OTHER)) {
		w->part[w->n].key = *k;
		w->part[w->n++].ns = ns;
		return;
	}
	if (w->n == CULPRIT_PARTS - 1) {
		memset(&w->part[w->n].key, 0, sizeof(w->part[w->n].key));
		w->part[w->n].key.kind = CULPRIT_OTHER;
		w->part[w->n++].ns = 0;
	}
	w->part[CULPRIT_PARTS - 1].ns += ns;
}

/* Prepend a piece (the ring is walked newest first): merged with the one
 * after it when both are the same culprit; once the timeline is full, the
 * oldest piece kept swallows the rest as other. */
static void piece_prepend(struct culprit_piece *tmp, size_t *n, const struct culprit_key *k, uint64_t from,
			  uint64_t ns)
{
	if (*n && key_eq(&tmp[*n - 1].key, k)) {
		tmp[*n - 1].offset_ns = from;
		tmp[*n - 1].ns += ns;
		return;
	}
	if (*n == CULPRIT_TIMELINE) {
		struct culprit_piece *last = &tmp[*n - 1];
		if (last->key.kind != CULPRIT_OTHER) {
			memset(&last->key, 0, sizeof(last->key));
			last->key.kind = CULPRIT_OTHER;
		}
		last->ns += last->offset_ns - from;
		last->offset_ns = from;
		return;
	}
	tmp[*n].key = *k;
	tmp[*n].offset_ns = from;
	tmp[(*n)++].ns = ns;
}

int culprit_window(const struct bpfobs_late *ev, struct culprit_window *w)
{
	uint64_t a = ev->start_ns, b = ev->run_ns, covered = b, slack = 0;
	struct culprit_piece tmp[CULPRIT_TIMELINE];
	struct culprit_key k;
	size_t np = 0;

	if (b <= a)
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	w->delay_ns = b - a;
	w->wake_ns = ev->wake_ns > a && ev->wake_ns <= b ? ev->wake_ns - a : 0;
	w->cpu = (int)ev->cpu;
	w->kind = (int)ev->kind;
	w->prio = (int)ev->prio;
	/* the timer could not fire before its hard expiry: the thread's own
	 * timer slack owns that much of the window, whatever the CPU did */
	if (ev->kind == BPFOBS_KIND_TIMER && ev->hard_ns > a) {
		slack = (ev->hard_ns < b ? ev->hard_ns : b) - a;
		a += slack;
	}
	/* newest first; segments are contiguous, each ending where the next
	 * begins, so the walk stops at the first one that ends before the
	 * window, or at one never written or written before tracking began;
	 * a gap (there should be none) is not recorded time */
	for (unsigned i = 0; i < BPFOBS_RING && covered > a; i++) {
		const struct bpfobs_seg *g = &ev->ring[(ev->head - 1 - i) & (BPFOBS_RING - 1)];
		uint64_t s = g->start, e = g->start + g->dur, lo;

		if (!s || s < ev->since_ns)
			break;
		if (e > covered)
			e = covered;
		if (e <= a)
			break;
		if (e < covered) {
			memset(&k, 0, sizeof(k));
			k.kind = CULPRIT_UNRECORDED;
			part_add(w, &k, covered - e);
			piece_prepend(tmp, &np, &k, e - ev->start_ns, covered - e);
		}
		lo = s > a ? s : a;
		if (e > lo) {
			seg_key(g, w->prio, &k);
			part_add(w, &k, e - lo);
			piece_prepend(tmp, &np, &k, lo - ev->start_ns, e - lo);
		}
		covered = lo;
	}
	if (covered > a) {
		memset(&k, 0, sizeof(k));
		k.kind = CULPRIT_UNRECORDED;
		part_add(w, &k, covered - a);
		piece_prepend(tmp, &np, &k, a - ev->start_ns, covered - a);
	}
	if (slack) {
		memset(&k, 0, sizeof(k));
		k.kind = CULPRIT_SLACK;
		part_add(w, &k, slack);
		piece_prepend(tmp, &np, &k, 0, slack);
	}
	/* largest part first (insertion sort: at most CULPRIT_PARTS) */
	for (size_t i = 1; i < w->n; i++)
		for (size_t j = i; j > 0 && w->part[j].ns > w->part[j - 1].ns; j--) {
			struct culprit_part t = w->part[j];
			w->part[j] = w->part[j - 1];
			w->part[j - 1] = t;
		}
	for (size_t i = 0; i < np; i++)
		w->piece[i] = tmp[np - 1 - i];
	w->npieces = np;
	return 0;
}

/* The entry of key, a free one, or the one with the least time, folded
 * into other first. */
static struct culprit_entry *entry_for(struct culprit_table *t, const struct culprit_key *k)
{
	struct culprit_entry *least = NULL;

	for (size_t i = 0; i < t->n; i++) {
		if (key_eq(&t->top[i].key, k))
			return &t->top[i];
		if (!least || t->top[i].total_ns < least->total_ns)
			least = &t->top[i];
	}
	if (t->n < CULPRIT_TOP)
		least = &t->top[t->n++];
	else {
		t->folded_late += least->late;
		if (least->worst_ns > t->folded_worst)
			t->folded_worst = least->worst_ns;
	}
	memset(least, 0, sizeof(*least));
	least->key = *k;
	return least;
}

void culprit_table_add(struct culprit_table *t, const struct culprit_window *w, uint64_t when_us)
{
	struct culprit_recent *r;

	t->late++;
	t->delay_ns += w->delay_ns;
	for (size_t i = 0; i < w->n; i++) {
		const struct culprit_part *p = &w->part[i];
		struct culprit_entry *e;

		if (p->key.kind == CULPRIT_OTHER) {
			/* a window's own overflow: kept in no entry, so other
			 * (the delay no entry accounts for) has it */
			t->folded_late++;
			if (p->ns > t->folded_worst)
				t->folded_worst = p->ns;
			continue;
		}
		e = entry_for(t, &p->key);
		e->late++;
		e->first += i == 0;
		e->total_ns += p->ns;
		if (p->ns > e->worst_ns)
			e->worst_ns = p->ns;
		e->cpu = w->cpu;
	}
	if (w->delay_ns > t->worst.delay_ns) {
		t->worst = *w;
		t->worst_when_us = when_us;
	}
	r = &t->recent[t->recent_next];
	t->recent_next = (t->recent_next + 1) % CULPRIT_RECENT;
	if (t->nrecent < CULPRIT_RECENT)
		t->nrecent++;
	memset(r, 0, sizeof(*r));
	r->when_us = when_us;
	r->delay_ns = w->delay_ns;
	r->cpu = w->cpu;
	r->kind = w->kind;
	if (w->n) {
		r->top = w->part[0].key;
		r->top_ns = w->part[0].ns;
	}
}

void culprit_table_other(const struct culprit_table *t, struct culprit_entry *other)
{
	uint64_t first = 0, total = 0;

	memset(other, 0, sizeof(*other));
	other->key.kind = CULPRIT_OTHER;
	for (size_t i = 0; i < t->n; i++) {
		first += t->top[i].first;
		total += t->top[i].total_ns;
	}
	other->late = t->folded_late;
	other->first = t->late > first ? t->late - first : 0;
	other->total_ns = t->delay_ns > total ? t->delay_ns - total : 0;
	other->worst_ns = t->folded_worst;
	other->cpu = -1;
}

size_t culprit_table_sorted(const struct culprit_table *t, const struct culprit_entry **out, size_t max)
{
	size_t n = 0;

	/* every entry is considered: with max below t->n the ones kept are the
	 * largest, not the first ones met */
	for (size_t i = 0; i < t->n && max; i++) {
		size_t j = n < max ? n++ : n;
		if (j == max && out[j - 1]->total_ns >= t->top[i].total_ns)
			continue; /* smaller than every one kept */
		if (j == max)
			j--; /* the smallest kept makes room */
		for (; j > 0 && out[j - 1]->total_ns < t->top[i].total_ns; j--)
			out[j] = out[j - 1];
		out[j] = &t->top[i];
	}
	return n;
}

size_t culprit_table_recent(const struct culprit_table *t, const struct culprit_recent **out, size_t max)
{
	size_t n = 0, start = (t->recent_next + CULPRIT_RECENT - t->nrecent) % CULPRIT_RECENT;

	for (size_t i = 0; i < t->nrecent && n < max; i++)
		out[n++] = &t->recent[(start + i) % CULPRIT_RECENT];
	return n;
}

/* "fifo 50", "other", "other nice -5", "deadline". */
static void sched_text(const struct culprit_key *k, char *buf, size_t len)
{
	const char *pol = culprit_policy_name(k->policy);

	if (k->prio < 100 && k->policy != SCHED_DEADLINE)
		snprintf(buf, len, "%s %d", pol, 99 - k->prio);
	else if (k->prio >= 100 && k->prio != 120 && k->policy != SCHED_DEADLINE)
		snprintf(buf, len, "%s nice %d", pol, k->prio - 120);
	else
		snprintf(buf, len, "%s", pol);
}

void culprit_label(const struct culprit_key *k, const char *irq_name, const char *irq_section, char *buf, size_t len)
{
	char s[32];

	switch (k->kind) {
	case CULPRIT_TASK:
	case CULPRIT_KERNEL:
		sched_text(k, s, sizeof(s));
		if (k->id == k->tgid)
			snprintf(buf, len, "%.16s (pid %d, %s)%s", k->comm, k->id, s,
				 k->kind == CULPRIT_KERNEL ? " in the kernel" : "");
		else
			snprintf(buf, len, "%.16s (tid %d of pid %d, %s)%s", k->comm, k->id, k->tgid, s,
				 k->kind == CULPRIT_KERNEL ? " in the kernel" : "");
		break;
	case CULPRIT_HARDIRQ:
		snprintf(buf, len, "irq %d%s%s%s%s%s", k->id, irq_name && *irq_name ? " " : "", irq_name ? irq_name : "",
			 irq_section ? " ([irq " : "", irq_section ? irq_section : "", irq_section ? "])" : "");
		break;
	case CULPRIT_SOFTIRQ:
		snprintf(buf, len, "softirq %s", culprit_softirq_name(k->id));
		break;
	case CULPRIT_TIMER:
		snprintf(buf, len, "timer callbacks");
		break;
	case CULPRIT_IDLE:
		snprintf(buf, len, "idle (waking the CPU)");
		break;
	case CULPRIT_SLACK:
		snprintf(buf, len, "timer slack");
		break;
	case CULPRIT_UNRECORDED:
		snprintf(buf, len, "not recorded");
		break;
	default:
		snprintf(buf, len, "other");
		break;
	}
}

/* "200 us", "1.5 ms". */
static void dur_text(uint64_t ns, char *buf, size_t len)
{
	if (ns >= 1000000)
		snprintf(buf, len, "%.3g ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.3g us", (double)ns / 1e3);
}

/* What to do about a softirq vector on CPU cpu. */
static void softirq_advice(int vec, int cpu, char *buf, size_t len)
{
	switch (vec) {
	case 2: /* NET_TX */
	case 3: /* NET_RX */
		snprintf(buf, len, "move the network interrupts and their RPS/XPS steering off CPU %d "
			 "(/proc/irq/N/smp_affinity_list, /sys/class/net/DEV/queues/*/rps_cpus)", cpu);
		break;
	case 4: /* BLOCK */
	case 5: /* IRQ_POLL */
		snprintf(buf, len, "move the disk's interrupts off CPU %d (/proc/irq/N/smp_affinity_list)", cpu);
		break;
	case 9: /* RCU */
		snprintf(buf, len, "offload RCU callbacks from CPU %d (boot with rcu_nocbs=%d)", cpu, cpu);
		break;
	case 1: /* TIMER */
	case 8: /* HRTIMER */
		snprintf(buf, len, "move the programs whose timers expire there off CPU %d, or keep the tick off "
			 "it (nohz_full=%d)", cpu, cpu);
		break;
	case 7: /* SCHED */
		snprintf(buf, len, "keep load balancing off CPU %d (isolcpus=%d or an isolated cpuset)", cpu, cpu);
		break;
	default:
		snprintf(buf, len, "move the interrupts that raise it off CPU %d", cpu);
		break;
	}
}

void culprit_verdict(const struct culprit_verdict_in *in, char *buf, size_t len)
{
	const struct culprit_key *k = &in->top->key;
	char label[160], thr[32], what[320], s[32];
	int rt = 99 - in->thread_prio;

	culprit_label(k, in->irq_name, in->irq_section, label, sizeof(label));
	dur_text(in->threshold_ns, thr, sizeof(thr));
	switch (k->kind) {
	case CULPRIT_TASK:
		sched_text(k, s, sizeof(s));
		if (in->thread_prio >= 100)
			snprintf(what, sizeof(what), "the thread is not real-time: make it so (a [rule] or "
				 "rtschedctl register), or move %.16s off CPU %d", k->comm, in->cpu);
		else if (k->prio == in->thread_prio)
			snprintf(what, sizeof(what), "it shares CPU %d at the thread's own priority (%s): give the "
				 "thread a higher one, or move %.16s off CPU %d", in->cpu, s, k->comm, in->cpu);
		else
			snprintf(what, sizeof(what), "it runs at a higher priority (%s) on CPU %d: lower it below %d, "
				 "or move one of them to another CPU", s, in->cpu, rt);
		break;
	case CULPRIT_KERNEL:
		snprintf(what, sizeof(what), "under preemption %s a task in a system call keeps the CPU until it "
			 "returns or yields: boot with preempt=full, or move %.16s off CPU %d",
			 in->preempt ? in->preempt : "none or voluntary", k->comm, in->cpu);
		break;
	case CULPRIT_HARDIRQ:
		if (in->irq_section)
			snprintf(what, sizeof(what), "[irq %s] places it: give it CPUs other than %d there",
				 in->irq_section, in->cpu);
		else
			snprintf(what, sizeof(what), "move it off CPU %d (/proc/irq/%d/smp_affinity_list)", in->cpu,
				 k->id);
		break;
	case CULPRIT_SOFTIRQ:
		softirq_advice(k->id, in->cpu, what, sizeof(what));
		break;
	case CULPRIT_TIMER:
		snprintf(what, sizeof(what), "timer callbacks (the tick and others' timers) ran on CPU %d: keep "
			 "the tick off it (nohz_full=%d), and other programs' timers elsewhere", in->cpu, in->cpu);
		break;
	case CULPRIT_IDLE:
		snprintf(what, sizeof(what), "CPU %d was idle and slow to wake (power saving, or the "
			 "hypervisor): set cpu-dma-latency = 0 in [daemon]", in->cpu);
		break;
	case CULPRIT_SLACK:
		snprintf(what, sizeof(what), "the kernel may fire a timer of a thread that is not real-time that "
			 "much after it is due, to save wake-ups: make the thread real-time (its slack is then 0), or "
			 "lower its slack (prctl PR_SET_TIMERSLACK, /proc/PID/timerslack_ns)");
		break;
	case CULPRIT_UNRECORDED:
		snprintf(what, sizeof(what), "more happened on CPU %d than its ring of %d segments holds; the "
			 "culprits below had the recorded part", in->cpu, BPFOBS_RING);
		break;
	default:
		snprintf(what, sizeof(what), "many culprits, none of them kept: see the recent late wake-ups");
		break;
	}
	/* rounded down: 99.7% is not "100%", which a person reads as "nothing else" */
	snprintf(buf, len, "%d%% of the delay over %s: %s; %s", (int)(100.0 * in->share + 1e-9), thr, label, what);
}
