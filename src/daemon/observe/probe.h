/* probe.h: measuring threads the daemon runs itself, one per [probe NAME].
 *
 * A latency probe is cyclictest in a thread: pinned to a CPU, with the
 * section's policy and priority, it waits for absolute deadlines with a
 * waiter strategy and records every wake-up's lateness, so `rtschedctl
 * jitter` shows what a thread with that policy on that CPU experiences.
 *
 * A noise probe is oslat (the thesis's "dummy program") for CPUs users want
 * to dedicate: a busy loop reading the clock; any gap between two reads is
 * time the CPU was taken away (interrupts, other tasks, SMIs, the
 * hypervisor). Every gap is looked at, but the histogram gets one sample per
 * window of period_ns: the window's largest gap. Recording each gap (tens of
 * millions a second) would keep the seqlock odd so often that no reader's
 * 14.5 KB snapshot could ever complete; per-window maxima keep readers
 * working and answer the question that matters ("in 99% of 1 ms windows, this
 * CPU was never taken away for longer than X"). A gap spanning whole windows
 * (throttling, a VM stall) counts those windows as overruns.
 *
 * CPU cost, by design. A noise probe, and a latency probe with the busy
 * strategy, use 100% of their CPU for as long as they run: only configure
 * them on a CPU you mean to measure, not one with work on it. At a real-time
 * policy with RT throttling on (kernel.sched_rt_runtime_us = 950000 of
 * 1000000 here), such a probe gets 95% of the CPU and every throttled 50 ms
 * appears in its histogram as a gap/overrun; SCHED_OTHER tasks pinned to that
 * CPU (per-CPU kworkers included) get only the remaining 5%. With throttling
 * off (-1) they get nothing: prefer SCHED_OTHER for noise probes unless the
 * CPU is isolated. A probe on the daemon's own CPU at a real-time priority
 * can delay the daemon's event loop the same way.
 *
 * Stopping is cooperative and bounded: a latency probe checks its stop flag
 * after every wake-up (so within one period plus its lateness), a noise probe
 * after every clock read. */
#ifndef RTSCHED_PROBE_H
#define RTSCHED_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "shared/hist.h"
#include "shared/waiter.h"

struct probe_params {
	char name[64];
	int cpu;                  /* pinned here; -1: not pinned */
	int policy;               /* SCHED_OTHER, _BATCH, _IDLE, _FIFO, _RR */
	int priority;             /* within sched_get_priority_min/max(policy) */
	int64_t period_ns;        /* latency: the period; noise: the window (>= 1 us) */
	enum waiter_strategy strategy; /* latency probes only */
	bool noise;               /* a noise probe instead of a latency probe */
};

struct probe;

/* Start a probe thread with *p's CPU, policy and priority (set at creation,
 * so a refusal is returned here: -EPERM without CAP_SYS_NICE, -EINVAL for
 * out-of-range parameters, -ENOMEM, -EAGAIN). On success *ret is running and
 * probe_tid() is valid. */
int probe_start(struct probe **ret, const struct probe_params *p);
/* Stop the thread (see above for how long that takes), join it and free the
 * probe. NULL is fine. */
void probe_stop(struct probe *pr);
/* The live histogram, written by the probe thread: read it with
 * hist_snapshot only. */
const struct hist *probe_hist(const struct probe *pr);
/* The probe thread's kernel tid, for ps, /proc and `rtschedctl jitter`. */
pid_t probe_tid(const struct probe *pr);
/* The parameters it was started with. */
const struct probe_params *probe_params(const struct probe *pr);
/* 0 while the probe runs; the -errno its wait failed with if it stopped by
 * itself (the histogram keeps what it had recorded). */
int probe_error(const struct probe *pr);

#endif
