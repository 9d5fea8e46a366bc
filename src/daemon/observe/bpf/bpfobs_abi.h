/* bpfobs_abi.h: what bpfobs.bpf.c and bpfobs.c share. Three maps, read
 * and written by the daemon through mmap, with no bpf() syscall and hence
 * no capability once they are loaded:
 *
 *   filter  array of struct bpfobs_filter, indexed by tid / 4: for each tid
 *           below kernel.pid_max, its slot + 1, or 0 if not watched. The
 *           programs' only cost for an unwatched thread is this one lookup.
 *   slots   array of struct bpfobs_slot, one per watched thread: the BPF
 *           programs' per-thread state and its two histograms.
 *   late    a BPF ring buffer of struct bpfobs_late: one record per wake-up
 *           later than its thread's late_ns, with what its CPU did while the
 *           thread waited (culprit tracking; the daemon's observe/culprit.c
 *           makes sense of it).
 *
 * Culprit tracking. While any thread is watched, every CPU keeps a ring of
 * its last BPFOBS_RING segments: contiguous stretches of time, each owned
 * by one thing, the innermost that ran: a hard interrupt handler, a
 * softirq vector, hrtimer callbacks, or else the task on the CPU (the idle
 * task included). A segment is closed (written to the ring) whenever the
 * owner changes, so the ring covers the CPU's recent past without gaps.
 * A late wake-up's record carries that ring as it was when the thread got
 * the CPU: what ran between its timer's expiry (or its wake-up) and then.
 *
 * Protocol. Watch: the daemon takes a free slot, zeroes its state, inits
 * both histograms, stores slot.tid, then (release) the filter entry.
 * Unwatch: filter entry 0, then slot.tid 0; the slot is reused last (a FIFO
 * of free slots), so a program still running on another CPU with the old
 * entry has long finished. The programs ignore a slot whose tid is not the
 * thread's. Includes nothing, like bpfobs_hist.h. */
#ifndef BPFOBS_ABI_H
#define BPFOBS_ABI_H

#include "bpfobs_hist.h"

/* Four 16-bit entries per 8-byte array element: an array map rounds every
 * value up to 8 bytes, so one u16 per element would cost 4x the memory. */
#define BPFOBS_TIDS_PER_ENTRY 4
#define BPFOBS_MAX_SLOTS 65535 /* slot + 1 must fit a u16 */

struct bpfobs_filter {
	__u16 slot1[BPFOBS_TIDS_PER_ENTRY];
};

/* The two histograms of a thread (enum bpfobs_kind in bpfobs.h). */
#define BPFOBS_KIND_TIMER 0  /* timer expiry -> running */
#define BPFOBS_KIND_WAKEUP 1 /* wake-up -> running */
#define BPFOBS_NKINDS 2

#define BPFOBS_ON_CPU 1
#define BPFOBS_OFF_CPU 2

struct bpfobs_slot {
	__s32 tid;         /* the thread observed here; 0: free */
	__u32 races;       /* writer overlaps bpfobs_hist_record saw (stays 0) */
	__u64 wake_ns;     /* BPF: CLOCK_MONOTONIC of a wake-up not yet run, or 0 */
	__u64 deadline_ns; /* BPF: CLOCK_MONOTONIC expiry of the timer that woke it, or 0 */
	__u64 hard_ns;     /* BPF: that timer's hard expiry (plus its slack), with deadline_ns */
	__u32 lost[BPFOBS_NKINDS]; /* wake-ups it ran after without a traced switch-in */
	__u32 where;       /* BPF: BPFOBS_ON/OFF_CPU by the last switch traced, 0: not known */
	__u32 dropped;     /* BPF: late wake-ups whose record found the ring buffer full */
	__u64 late_ns;     /* daemon: a wake-up later than this is late (0: none is) */
	__u64 late[BPFOBS_NKINDS]; /* BPF: late wake-ups, by what they were measured from */
	struct bpfobs_hist hist[BPFOBS_NKINDS];
};

/* --- culprit tracking ------------------------------------------------------ */

#define BPFOBS_RING 128 /* segments per CPU: a power of two */

/* Who owned a segment. */
#define BPFOBS_SEG_TASK 1    /* a task (id: its tid) */
#define BPFOBS_SEG_IDLE 2    /* the CPU's idle task */
#define BPFOBS_SEG_HARDIRQ 3 /* a hard interrupt handler (id: the irq) */
#define BPFOBS_SEG_SOFTIRQ 4 /* a softirq vector (id: its number, NET_RX_SOFTIRQ...) */
#define BPFOBS_SEG_TIMER 5   /* hrtimer callbacks: the tick, sleeps' timers... */

struct bpfobs_seg {
	__u64 start;      /* CLOCK_MONOTONIC ns; 0: never written */
	__u32 dur;        /* ns, at most 2^32 - 1 */
	__u8 kind;        /* BPFOBS_SEG_* */
	__u8 policy;      /* task: SCHED_* */
	__u16 prio;       /* task: its effective kernel priority (0..139, lower runs first) */
	__s32 id;         /* task: tid; hardirq: irq; softirq: vector */
	__s32 tgid;       /* task: its process */
	char comm[16];    /* task: its name */
};

/* One late wake-up. */
struct bpfobs_late {
	__s32 tid;        /* the watched thread */
	__u32 cpu;        /* where it got the CPU (and waited, unless it migrated) */
	__u32 kind;       /* BPFOBS_KIND_TIMER: start_ns is its timer's expiry; else its wake-up */
	__u32 prio;       /* its effective kernel priority then */
	__u64 start_ns;   /* the window began (CLOCK_MONOTONIC) */
	__u64 hard_ns;    /* timer: its hard expiry, start_ns plus the thread's timer slack; else 0 */
	__u64 wake_ns;    /* it was woken (sched_wakeup), 0 if not seen */
	__u64 run_ns;     /* it got the CPU: the window ended */
	__u64 since_ns;   /* the CPU's ring holds nothing from before this */
	__u32 head;       /* ring[(head - 1) % BPFOBS_RING] is the newest segment */
	__u32 slot;       /* the thread's slot */
	struct bpfobs_seg ring[BPFOBS_RING];
};

#endif
