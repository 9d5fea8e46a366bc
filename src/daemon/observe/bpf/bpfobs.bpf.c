/* bpfobs.bpf.c: per watched thread, two wake-up histograms recorded in the
 * kernel on BTF-enabled scheduler tracepoints (see bpfobs.h for the terms):
 *
 *   hrtimer_expire_entry/exit  per CPU, which timer's callback runs now
 *   sched_waking      the thread is being woken; if that happens inside an
 *                     hrtimer callback on this CPU, remember the timer's
 *                     requested expiry (_softexpires, cyclictest's deadline)
 *   sched_wakeup(_new) the thread is on a run queue: remember the time
 *   sched_switch      the thread gets the CPU: record now - wake-up time
 *                     (wake-up latency, as libbpf-tools' runqlat) and now -
 *                     timer expiry (timer lateness); a thread switched out
 *                     while still runnable forgets both, since a wake-up
 *                     that found it running has no latency to report; one
 *                     going to sleep with a wake-up still pending ran
 *                     without a traced switch-in: counted as lost.
 *
 * Culprit tracking (bpfobs_abi.h), when loaded with track_culprits: the
 * same hrtimer and switch programs, and four more on irq_handler_entry/exit
 * and softirq_entry/exit, keep each CPU's ring of segments while any thread
 * is watched; a switch-in later than the thread's late_ns counts a late
 * wake-up and sends the CPU's ring to the daemon through the ring buffer.
 *
 * Every scheduler program starts with one array lookup of the thread's tid
 * in the filter map and returns if it is not watched; the timer programs
 * cost one per-CPU lookup per hrtimer expiry, and with culprit tracking
 * every interrupt, softirq, timer callback and switch writes one 40-byte
 * segment. Loop-free, integer-only.
 * The running timer is tracked from the tracepoints rather than read from
 * the kernel's per-CPU hrtimer_bases: a typed __ksym of a data symbol needs
 * CONFIG_KALLSYMS_ALL, which not every kernel has (this project's test
 * machine doesn't). Needs Linux 5.12 (atomic fetch-and-add, tp_btf) and,
 * for culprit tracking, the ring buffer (5.8) and bpf_get_current_task_btf
 * (5.11). */
#include "vmlinux.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bpfobs_abi.h"

/* Both maps are resized by bpfobs.c before loading. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct bpfobs_filter);
	__uint(max_entries, 1);
} filter SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct bpfobs_slot);
	__uint(max_entries, 1);
} slots SEC(".maps");

/* Set by bpfobs.c before loading: culprit tracking on (the irq and softirq
 * programs are not even loaded without it). */
const volatile bool track_culprits = false;

/* Written by the daemon (through the mmapped .bss): 0 while no thread is
 * watched, which keeps the segment programs at one load; a new value each
 * time watching starts, which tells every CPU its ring is stale. */
__u64 epoch = 0;

/* One record per late wake-up; sized by bpfobs.c. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} late SEC(".maps");

/* What one CPU is doing, by level: a task, in it a softirq, in that a hard
 * interrupt, in any of them hrtimer callbacks. */
struct level {
	__u32 kind;       /* BPFOBS_SEG_* */
	__s32 id;
};
#define MAX_DEPTH 4

/* Per CPU: the timer whose callback runs now ([0] a hard one, in interrupt
 * context; [1] a soft one, in a softirq: only a hard callback can nest in
 * a soft one, never two of a kind) and the culprit-tracking state. */
struct cpu {
	__u64 timer[2];    /* struct hrtimer *, as a number: never dereferenced */
	__u64 deadline[2]; /* its requested expiry on CLOCK_MONOTONIC */
	__u64 hard[2];     /* its hard expiry: the requested one plus the timer slack */
	__u64 epoch;       /* the epoch ring and levels belong to */
	__u64 since;       /* segments are recorded from here on */
	__u64 start;       /* the open segment began */
	__u32 head;        /* ring[head % BPFOBS_RING] is written next */
	__u32 depth;       /* levels[depth - 1] owns the open segment; 0: the task */
	struct level levels[MAX_DEPTH];
	struct bpfobs_seg ring[BPFOBS_RING];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct cpu);
	__uint(max_entries, 1);
} cpus SEC(".maps");

static __always_inline struct cpu *this_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpus, &zero);
}

/* Culprit tracking is on and some thread is watched: the epoch, else 0. */
static __always_inline __u64 armed(void)
{
	return track_culprits ? *(volatile __u64 *)&epoch : 0;
}

/* The CPU's tracking state, current for epoch e (armed()'s), or NULL when
 * there is none. A stale state (watching started again) restarts with an
 * empty past. */
static __always_inline struct cpu *tracking(struct cpu *c, __u64 e, __u64 now)
{
	if (!e || !c)
		return NULL;
	if (c->epoch != e) {
		c->epoch = e;
		c->since = now;
		c->start = now;
		c->depth = 0;
	}
	return c;
}

/* Close the open segment at now: owned by the innermost level, or by the
 * task t (the idle task as such) when there is none. */
static __always_inline void seg_close(struct cpu *c, __u64 now, struct task_struct *t)
{
	struct bpfobs_seg *g = &c->ring[c->head & (BPFOBS_RING - 1)];
	__u64 d = now > c->start ? now - c->start : 0;
	__u32 depth = c->depth;

	g->start = c->start;
	g->dur = d > 0xffffffffULL ? 0xffffffffU : (__u32)d;
	if (depth > 0 && depth <= MAX_DEPTH) {
		struct level *l = &c->levels[(depth - 1) & (MAX_DEPTH - 1)];
		g->kind = (__u8)l->kind;
		g->id = l->id;
	} else if (!t || t->pid == 0) {
		g->kind = BPFOBS_SEG_IDLE;
		g->id = 0;
	} else {
		g->kind = BPFOBS_SEG_TASK;
		g->id = t->pid;
		g->tgid = t->tgid;
		g->prio = (__u16)t->prio;
		g->policy = (__u8)t->policy;
		bpf_probe_read_kernel(g->comm, sizeof(g->comm), &t->comm);
	}
	c->head++;
	c->start = now;
}

/* Something began to own the CPU, inside whatever did. */
static __always_inline void seg_push(struct cpu *c, __u32 kind, __s32 id)
{
	__u64 e = armed(), now;

	if (!e)
		return;
	now = bpf_ktime_get_ns();
	if (!(c = tracking(c, e, now)))
		return;
	seg_close(c, now, bpf_get_current_task_btf());
	if (c->depth < MAX_DEPTH) {
		c->levels[c->depth & (MAX_DEPTH - 1)] = (struct level){ kind, id };
		c->depth++;
	}
}

/* It ended: the level around it owns the CPU again. An end whose beginning
 * was not seen (tracking started in between) changes no level. */
static __always_inline void seg_pop(struct cpu *c, __u32 kind)
{
	__u64 e = armed(), now;

	if (!e)
		return;
	now = bpf_ktime_get_ns();
	if (!(c = tracking(c, e, now)))
		return;
	seg_close(c, now, bpf_get_current_task_btf());
	if (c->depth > 0 && c->levels[(c->depth - 1) & (MAX_DEPTH - 1)].kind == kind)
		c->depth--;
}

/* The slot of a watched thread (its number in *idx), or NULL: one lookup
 * for everyone else. */
static __always_inline struct bpfobs_slot *slot_at(int tid, __u32 *idx)
{
	struct bpfobs_filter *f;
	struct bpfobs_slot *s;
	__u32 key = (__u32)tid / BPFOBS_TIDS_PER_ENTRY, n;

	if (tid <= 0)
		return NULL;
	f = bpf_map_lookup_elem(&filter, &key);
	if (!f)
		return NULL;
	n = *(volatile __u16 *)&f->slot1[(__u32)tid % BPFOBS_TIDS_PER_ENTRY];
	if (!n)
		return NULL;
	n -= 1;
	s = bpf_map_lookup_elem(&slots, &n);
	if (!s || *(volatile __s32 *)&s->tid != tid)
		return NULL;
	*idx = n;
	return s;
}

static __always_inline struct bpfobs_slot *slot_of(int tid)
{
	__u32 n;

	return slot_at(tid, &n);
}

/* Still runnable after the switch: preempted, or woken before it slept. */
static __always_inline bool still_runnable(bool preempt, struct task_struct *t)
{
	if (preempt)
		return true;
	if (bpf_core_field_exists(t->__state))
		return t->__state == 0;
	return ((struct task_struct___pre514 *)t)->state == 0;
}

/* The expiry of the hrtimer whose callback is waking p on this CPU, or 0.
 * A hard callback runs with interrupts off, so whatever it wakes, it woke.
 * A soft one runs with interrupts on (with PREEMPT_RT, in a thread), so
 * there the timer must be p's own hrtimer_sleeper. Hard timers: sleepers of
 * RT tasks (of all tasks without PREEMPT_RT), timerfd, POSIX timers. */
static __always_inline __u64 timer_deadline(struct task_struct *p, __u64 *hard)
{
	struct cpu *r = this_cpu();
	struct task_struct *sleeper = NULL;

	if (!r)
		return 0;
	if (r->timer[0]) {
		*hard = r->hard[0];
		return r->deadline[0];
	}
	if (!r->timer[1])
		return 0;
	bpf_probe_read_kernel(&sleeper, sizeof(sleeper),
			      (void *)(r->timer[1] + bpf_core_field_offset(struct hrtimer_sleeper, task)));
	*hard = r->hard[1];
	return sleeper == p ? r->deadline[1] : 0;
}

/* Defined (and so attached) before the entry, so an exit is never missed
 * for an entry that was seen; an exit without entry clears nothing. It
 * matches by pointer: the callback may have freed the timer. */
SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(bpfobs_timer_exit, struct hrtimer *t)
{
	struct cpu *r = this_cpu();

	if (!r)
		return 0;
	if (r->timer[0] == (__u64)t)
		r->timer[0] = 0;
	else if (r->timer[1] == (__u64)t)
		r->timer[1] = 0;
	seg_pop(r, BPFOBS_SEG_TIMER);
	return 0;
}

/* Every hrtimer expiry: one per-CPU lookup and three loads. The base's
 * offset turns REALTIME, BOOTTIME and TAI expiries into MONOTONIC ones. */
SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(bpfobs_timer_entry, struct hrtimer *t, ktime_t *now)
{
	struct cpu *r = this_cpu();
	__s64 exp;
	__u32 k;

	if (!r)
		return 0;
	k = t->is_soft ? 1 : 0;
	exp = t->_softexpires - t->base->offset;
	r->deadline[k] = exp > 0 ? (__u64)exp : 0;
	exp = t->node.expires - t->base->offset;
	r->hard[k] = exp > 0 ? (__u64)exp : 0;
	r->timer[k] = (__u64)t;
	seg_push(r, BPFOBS_SEG_TIMER, 0);
	return 0;
}

/* Hard interrupt handlers and softirqs own their time (culprit tracking
 * only: bpfobs.c does not load these without it). */
SEC("tp_btf/irq_handler_entry")
int BPF_PROG(bpfobs_irq_entry, int irq, struct irqaction *action)
{
	seg_push(this_cpu(), BPFOBS_SEG_HARDIRQ, irq);
	return 0;
}

SEC("tp_btf/irq_handler_exit")
int BPF_PROG(bpfobs_irq_exit, int irq, struct irqaction *action, int ret)
{
	seg_pop(this_cpu(), BPFOBS_SEG_HARDIRQ);
	return 0;
}

SEC("tp_btf/softirq_entry")
int BPF_PROG(bpfobs_softirq_entry, unsigned int vec)
{
	seg_push(this_cpu(), BPFOBS_SEG_SOFTIRQ, (__s32)vec);
	return 0;
}

SEC("tp_btf/softirq_exit")
int BPF_PROG(bpfobs_softirq_exit, unsigned int vec)
{
	seg_pop(this_cpu(), BPFOBS_SEG_SOFTIRQ);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(bpfobs_waking, struct task_struct *p)
{
	struct bpfobs_slot *s = slot_of(p->pid);
	__u64 hard = 0;

	if (s) {
		s->deadline_ns = timer_deadline(p, &hard);
		s->hard_ns = hard;
	}
	return 0;
}

/* Record one sample of a kind; count a writer overlap. */
static __always_inline void record(struct bpfobs_slot *s, int kind, __u64 now, __u64 since)
{
	if (bpfobs_hist_record(&s->hist[kind & 1], (__s64)(now - since)))
		__sync_fetch_and_add(&s->races, 1);
}

/* Both samples of this wake-up are lost: say so, forget them. */
static __always_inline void lose(struct bpfobs_slot *s)
{
	if (s->wake_ns)
		__sync_fetch_and_add(&s->lost[BPFOBS_KIND_WAKEUP], 1);
	if (s->deadline_ns)
		__sync_fetch_and_add(&s->lost[BPFOBS_KIND_TIMER], 1);
	s->wake_ns = 0;
	s->deadline_ns = 0;
}

/* A wake-up that finds the thread still on its CPU (the timer of a sleep
 * fired before it got off: it asked for a time already past, or was held
 * up on the way) has no wait to measure, but its timer is already late:
 * the thread runs now, so the timer sample is taken now, as cyclictest's
 * clock_gettime after the call would. Only the thread's own switch-in or
 * this can write its histograms, never both at once: while it is on a CPU
 * it cannot be switched in. A wake-up after it left the CPU is traced only
 * once it is off (ttwu waits for on_cpu to clear, or queues the wake-up to
 * run after the switch), so on_cpu is 0 there, and on_cpu with the last
 * traced switch taking it off means a switch-in was not traced: lost. */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(bpfobs_wakeup, struct task_struct *p)
{
	struct bpfobs_slot *s = slot_of(p->pid);
	__u64 now, d;

	if (!s)
		return 0;
	now = bpf_ktime_get_ns();
	if (!p->on_cpu) {
		s->wake_ns = now;
		return 0;
	}
	s->wake_ns = 0;
	if (s->where == BPFOBS_OFF_CPU) {
		lose(s);
		return 0;
	}
	d = s->deadline_ns;
	s->deadline_ns = 0;
	if (d)
		record(s, BPFOBS_KIND_TIMER, now, d);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(bpfobs_wakeup_new, struct task_struct *p)
{
	struct bpfobs_slot *s = slot_of(p->pid);

	if (s)
		s->wake_ns = bpf_ktime_get_ns();
	return 0;
}

/* A late wake-up: count it and, with culprit tracking, send the CPU's ring
 * as it is now (the thread's wait just ended). */
static __always_inline void report_late(struct bpfobs_slot *s, __u32 n, struct cpu *c, struct task_struct *p,
					__u32 kind, __u64 start, __u64 hard, __u64 wake, __u64 now)
{
	struct bpfobs_late *ev;

	__sync_fetch_and_add(&s->late[kind & 1], 1);
	if (!c)
		return;
	ev = bpf_ringbuf_reserve(&late, sizeof(*ev), 0);
	if (!ev) {
		__sync_fetch_and_add(&s->dropped, 1);
		return;
	}
	ev->tid = p->pid;
	ev->cpu = bpf_get_smp_processor_id();
	ev->kind = kind;
	ev->prio = (__u32)p->prio;
	ev->start_ns = start;
	ev->hard_ns = hard;
	ev->wake_ns = wake;
	ev->run_ns = now;
	ev->since_ns = c->since;
	ev->head = c->head;
	ev->slot = n;
	bpf_probe_read_kernel(ev->ring, sizeof(ev->ring), c->ring);
	bpf_ringbuf_submit(ev, 0);
}

/* Only the three arguments every kernel since 4.x passes (prev_state came
 * in 5.18): the state is read from prev itself. */
SEC("tp_btf/sched_switch")
int BPF_PROG(bpfobs_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct bpfobs_slot *s = slot_of(prev->pid);
	__u64 e = armed(), now = 0, w, d, lim;
	struct cpu *c = NULL;
	__u32 n = 0;

	if (e) {
		now = bpf_ktime_get_ns();
		c = tracking(this_cpu(), e, now);
	}

	/* prev's time on this CPU ends here (a level still open at a switch
	 * lost its end: the task owns the CPU again) */
	if (c) {
		c->depth = 0;
		seg_close(c, now, prev);
	}
	if (s) {
		s->where = BPFOBS_OFF_CPU;
		if (still_runnable(preempt, prev)) {
			s->wake_ns = 0;
			s->deadline_ns = 0;
		} else {
			/* Going to sleep with a wake-up pending: it ran after
			 * that wake-up, but no sched_switch said so (a
			 * context switch the kernel did not trace). */
			lose(s);
		}
	}
	s = slot_at(next->pid, &n);
	if (!s)
		return 0;
	s->where = BPFOBS_ON_CPU;
	if (!now)
		now = bpf_ktime_get_ns();
	w = s->wake_ns;
	d = s->deadline_ns;
	if (w) {
		s->wake_ns = 0;
		record(s, BPFOBS_KIND_WAKEUP, now, w);
	}
	if (d) {
		s->deadline_ns = 0;
		record(s, BPFOBS_KIND_TIMER, now, d);
	}
	/* late: measured from the timer's expiry if a timer woke it, else
	 * from the wake-up */
	lim = *(volatile __u64 *)&s->late_ns;
	if (!lim)
		return 0;
	if (d && now > d && now - d >= lim)
		report_late(s, n, c, next, BPFOBS_KIND_TIMER, d, s->hard_ns, w, now);
	else if (!d && w && now > w && now - w >= lim)
		report_late(s, n, c, next, BPFOBS_KIND_WAKEUP, w, 0, w, now);
	return 0;
}

/* GPL-compatible, as bpf_probe_read_kernel requires; the userspace side of
 * rtschedd stays MIT. */
char LICENSE[] SEC("license") = "Dual MIT/GPL";
