/* bpfobs_abi.h: the two maps bpfobs.bpf.c and bpfobs.c share, both created
 * BPF_F_MMAPABLE so the daemon reads and writes them through mmap, with no
 * bpf() syscall and hence no capability once they are loaded:
 *
 *   filter  array of struct bpfobs_filter, indexed by tid / 4: for each tid
 *           below kernel.pid_max, its slot + 1, or 0 if not watched. The
 *           programs' only cost for an unwatched thread is this one lookup.
 *   slots   array of struct bpfobs_slot, one per watched thread: the BPF
 *           programs' per-thread state and its two histograms.
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
	__u32 lost[BPFOBS_NKINDS]; /* wake-ups it ran after without a traced switch-in */
	__u32 where;       /* BPF: BPFOBS_ON/OFF_CPU by the last switch traced, 0: not known */
	__u32 pad;
	struct bpfobs_hist hist[BPFOBS_NKINDS];
};

#endif
