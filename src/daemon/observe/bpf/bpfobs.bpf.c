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
 * Every scheduler program starts with one array lookup of the thread's tid
 * in the filter map and returns if it is not watched; the timer programs
 * cost one per-CPU lookup per hrtimer expiry. Loop-free, integer-only.
 * The running timer is tracked from the tracepoints rather than read from
 * the kernel's per-CPU hrtimer_bases: a typed __ksym of a data symbol needs
 * CONFIG_KALLSYMS_ALL, which not every kernel has (this project's test
 * machine doesn't). Needs Linux 5.12 (atomic fetch-and-add, tp_btf). */
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

/* Per CPU, the timer whose callback runs now: [0] a hard one (interrupt
 * context), [1] a soft one (softirq). Only a hard callback can nest in a
 * soft one, never two of a kind, so two entries are enough. */
struct running {
	__u64 timer[2];    /* struct hrtimer *, as a number: never dereferenced */
	__u64 deadline[2]; /* its requested expiry on CLOCK_MONOTONIC */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct running);
	__uint(max_entries, 1);
} running SEC(".maps");

/* The slot of a watched thread, or NULL: one lookup for everyone else. */
static __always_inline struct bpfobs_slot *slot_of(int tid)
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
	return s;
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
static __always_inline __u64 timer_deadline(struct task_struct *p)
{
	__u32 zero = 0;
	struct running *r = bpf_map_lookup_elem(&running, &zero);
	struct task_struct *sleeper = NULL;

	if (!r)
		return 0;
	if (r->timer[0])
		return r->deadline[0];
	if (!r->timer[1])
		return 0;
	bpf_probe_read_kernel(&sleeper, sizeof(sleeper),
			      (void *)(r->timer[1] + bpf_core_field_offset(struct hrtimer_sleeper, task)));
	return sleeper == p ? r->deadline[1] : 0;
}

/* Defined (and so attached) before the entry, so an exit is never missed
 * for an entry that was seen; an exit without entry clears nothing. It
 * matches by pointer: the callback may have freed the timer. */
SEC("tp_btf/hrtimer_expire_exit")
int BPF_PROG(bpfobs_timer_exit, struct hrtimer *t)
{
	__u32 zero = 0;
	struct running *r = bpf_map_lookup_elem(&running, &zero);

	if (!r)
		return 0;
	if (r->timer[0] == (__u64)t)
		r->timer[0] = 0;
	else if (r->timer[1] == (__u64)t)
		r->timer[1] = 0;
	return 0;
}

/* Every hrtimer expiry: one per-CPU lookup and three loads. The base's
 * offset turns REALTIME, BOOTTIME and TAI expiries into MONOTONIC ones. */
SEC("tp_btf/hrtimer_expire_entry")
int BPF_PROG(bpfobs_timer_entry, struct hrtimer *t, ktime_t *now)
{
	__u32 zero = 0, k;
	struct running *r = bpf_map_lookup_elem(&running, &zero);
	__s64 exp;

	if (!r)
		return 0;
	k = t->is_soft ? 1 : 0;
	exp = t->_softexpires - t->base->offset;
	r->deadline[k] = exp > 0 ? (__u64)exp : 0;
	r->timer[k] = (__u64)t;
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(bpfobs_waking, struct task_struct *p)
{
	struct bpfobs_slot *s = slot_of(p->pid);

	if (s)
		s->deadline_ns = timer_deadline(p);
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

/* Only the three arguments every kernel since 4.x passes (prev_state came
 * in 5.18): the state is read from prev itself. */
SEC("tp_btf/sched_switch")
int BPF_PROG(bpfobs_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	struct bpfobs_slot *s = slot_of(prev->pid);
	__u64 now, w, d;

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
	s = slot_of(next->pid);
	if (!s)
		return 0;
	s->where = BPFOBS_ON_CPU;
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
	return 0;
}

/* GPL-compatible, as bpf_probe_read_kernel requires; the userspace side of
 * rtschedd stays MIT. */
char LICENSE[] SEC("license") = "Dual MIT/GPL";
