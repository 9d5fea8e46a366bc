/* culprit.h: what made a thread's wake-ups late. The BPF observer sends a
 * record of each late wake-up (struct bpfobs_late: the window from the
 * timer's expiry, or from the wake-up, to the thread getting its CPU, and
 * the segments that CPU ran meanwhile); culprit_window() works out who had
 * how much of that window, and a struct culprit_table keeps, per thread and
 * in bounded memory, the CULPRIT_TOP culprits with the most delay (the rest
 * folded into "other"), the worst late wake-up with its timeline, and the
 * last CULPRIT_RECENT late wake-ups. culprit_verdict() turns the top
 * culprit into one line a person can act on.
 *
 * Pure: no I/O and no clock (times are passed in), so tests/unit/
 * test-culprit.c drives it with made-up records. */
#ifndef RTSCHED_CULPRIT_H
#define RTSCHED_CULPRIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "daemon/observe/bpf/bpfobs_abi.h"

/* What took the time. */
enum culprit_kind {
	CULPRIT_TASK,       /* a task ran first: higher or equal priority, or the thread is not real-time */
	CULPRIT_KERNEL,     /* a lower-priority task held the CPU in the kernel, where it was not preempted */
	CULPRIT_HARDIRQ,    /* a hard interrupt handler */
	CULPRIT_SOFTIRQ,    /* a softirq vector */
	CULPRIT_TIMER,      /* hrtimer callbacks: the tick, other threads' timers, the thread's own wake-up */
	CULPRIT_IDLE,       /* the CPU was idle: the time it took to wake */
	CULPRIT_SLACK,      /* the thread's own timer slack: its timer was due only that much later */
	CULPRIT_UNRECORDED, /* before the CPU's segment ring began (it had filled, or tracking had just started) */
	CULPRIT_OTHER,      /* the culprits a table or a window had no room for */
	CULPRIT_NKINDS,
};

/* Who, exactly: two keys are one culprit when every field is equal. */
struct culprit_key {
	enum culprit_kind kind;
	int id;             /* task, kernel: its tid; hardirq: the irq; softirq: the vector; else 0 */
	int tgid;           /* task, kernel: its process */
	int prio;           /* task, kernel: its kernel priority (0..99 real-time, 100..139 others) */
	int policy;         /* task, kernel: SCHED_* */
	char comm[16];      /* task, kernel: its name as the kernel had it, NUL-terminated */
};

/* Parts of one window kept apart; more distinct culprits fold into other. */
#define CULPRIT_PARTS 32
/* Pieces of a window's timeline; the rest folds into one last piece. */
#define CULPRIT_TIMELINE 32

struct culprit_part {
	struct culprit_key key;
	uint64_t ns;
};

/* A piece of the timeline: key had the CPU from offset_ns after the window
 * began, for ns. */
struct culprit_piece {
	struct culprit_key key;
	uint64_t offset_ns;
	uint64_t ns;
};

/* One late wake-up, worked out. */
struct culprit_window {
	uint64_t delay_ns;  /* the window: timer lateness, or wake-up latency */
	uint64_t wake_ns;   /* from its start to the wake-up (timer: the timer's own lateness); 0 if not known */
	int cpu;
	int kind;           /* BPFOBS_KIND_TIMER (from the timer's expiry) or BPFOBS_KIND_WAKEUP */
	int prio;           /* the thread's kernel priority */
	size_t n;
	struct culprit_part part[CULPRIT_PARTS];       /* largest first; they add up to delay_ns */
	size_t npieces;
	struct culprit_piece piece[CULPRIT_TIMELINE];  /* in time order */
};

/* Culprits kept per thread: every one of them is exported (Prometheus,
 * jitter --json), so this bounds the label cardinality too. */
#define CULPRIT_TOP 8
/* Late wake-ups remembered, the newest last. */
#define CULPRIT_RECENT 8

struct culprit_entry {
	struct culprit_key key;
	uint64_t late;      /* late wake-ups it had a part in */
	uint64_t first;     /* ... in which its part was the largest */
	uint64_t total_ns;  /* its time in them, all told */
	uint64_t worst_ns;  /* its largest part in one */
	int cpu;            /* where it was last seen */
};

struct culprit_recent {
	uint64_t when_us;   /* CLOCK_REALTIME */
	uint64_t delay_ns;
	int cpu;
	int kind;
	struct culprit_key top; /* its largest part */
	uint64_t top_ns;
};

struct culprit_table {
	uint64_t late;          /* late wake-ups worked out */
	uint64_t delay_ns;      /* their delay, all told */
	uint64_t folded_late, folded_worst; /* of the culprits folded into other */
	size_t n;
	struct culprit_entry top[CULPRIT_TOP];
	uint64_t worst_when_us; /* CLOCK_REALTIME of the worst */
	struct culprit_window worst; /* delay_ns 0: none yet */
	size_t nrecent, recent_next;
	struct culprit_recent recent[CULPRIT_RECENT];
};

/* Work out the record of one late wake-up into w. -EINVAL if it is not one
 * (its window ends before it begins). */
int culprit_window(const struct bpfobs_late *ev, struct culprit_window *w);
/* Count a worked-out late wake-up in t, at when_us (CLOCK_REALTIME). A new
 * culprit takes a free entry, else the one with the least time, whose
 * totals go to other: other only grows, so exported counters never go
 * down. */
void culprit_table_add(struct culprit_table *t, const struct culprit_window *w, uint64_t when_us);
/* What other holds: the delay and late wake-ups no kept entry accounts
 * for. Its late counts every folded culprit's; first and total_ns are
 * exact. */
void culprit_table_other(const struct culprit_table *t, struct culprit_entry *other);
/* The kept entries, most time first, into out (at most max); their number. */
size_t culprit_table_sorted(const struct culprit_table *t, const struct culprit_entry **out, size_t max);
/* The recent late wake-ups, oldest first, into out; their number. */
size_t culprit_table_recent(const struct culprit_table *t, const struct culprit_recent **out, size_t max);

/* "task", "kernel", "irq", "softirq", "timer", "idle", "slack", "unrecorded",
 * "other". */
const char *culprit_kind_name(enum culprit_kind k);
/* NET_RX, TIMER...: the kernel's name of a softirq vector; "?" if unknown. */
const char *culprit_softirq_name(int vec);
/* "fifo", "other"...; "?" if unknown. */
const char *culprit_policy_name(int policy);
/* A culprit as a person reads it: "irq 38 virtio2-input.0",
 * "softirq NET_RX", "spinner (tid 812, fifo 50)", "dd (pid 90, other) in
 * the kernel", "timer callbacks", "idle (waking the CPU)", "timer slack",
 * "not recorded", "other". irq_name (from /proc/interrupts) and irq_section (the [irq]
 * section that places it) may be NULL. The task's name goes in as it is:
 * escaping it is the output's job. */
void culprit_label(const struct culprit_key *k, const char *irq_name, const char *irq_section, char *buf, size_t len);

/* What the verdict is made of. */
struct culprit_verdict_in {
	const struct culprit_entry *top; /* the culprit with the most time */
	double share;                    /* its share of the delay, 0..1 */
	uint64_t threshold_ns;           /* what counted as late */
	int thread_prio;                 /* the thread's kernel priority (as struct culprit_window) */
	int cpu;                         /* where the thread waited */
	const char *preempt;             /* the preemption model ("none", "voluntary", "full"...), or NULL */
	const char *irq_name, *irq_section; /* as culprit_label() */
};

/* One line: "78% of the delay over 200 us: irq 24 virtio0-input; move it
 * off CPU 1 (/proc/irq/24/smp_affinity_list)". */
void culprit_verdict(const struct culprit_verdict_in *in, char *buf, size_t len);

#endif
