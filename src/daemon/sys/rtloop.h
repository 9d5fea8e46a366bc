/* rtloop.h: the daemon's event loop as a real-time thread with a CPU budget
 * (issue 28, item 1; doc in rtschedd.conf(5), loop-priority and loop-budget).
 *
 * A SCHED_OTHER loop applies a new thread's policy milliseconds late on a
 * busy machine; a real-time loop without a bound would let any user's flood
 * of free requests hold a CPU at real-time priority. So the loop runs
 * SCHED_FIFO (with reset-on-fork) and measures its own CPU time
 * (CLOCK_THREAD_CPUTIME_ID) after every event it dispatches (an sd-event
 * post source): once it has used its budget of a period, it steps down to
 * SCHED_OTHER until the period ends, when a timer gives it its real-time
 * policy back. What it runs at real-time priority per period is therefore at
 * most the budget plus the one event it was dispatching. Periods start
 * lazily at the first event after the last one ended: no wake-ups when idle.
 *
 * When the kernel refuses the policy (no CAP_SYS_NICE, a cgroup without
 * real-time budget, a seccomp filter) the loop logs why and stays
 * SCHED_OTHER: never a start-up failure. */
#ifndef RTSCHED_RTLOOP_H
#define RTSCHED_RTLOOP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#define RTLOOP_PERIOD_MS 100u        /* a budget's period */
#define RTLOOP_PRIORITY_DEFAULT 1
#define RTLOOP_BUDGET_DEFAULT 10     /* percent of one CPU */
#define RTLOOP_BUDGET_MAX 50         /* a period's budget stays under the watchdog's 50 ms floor */

struct rtloop_params {
	int priority;    /* SCHED_FIFO priority, 0: the loop stays SCHED_OTHER */
	int budget_pct;  /* percent of one CPU per period, -1: no budget */
};

struct rtloop_status {
	int priority;             /* configured, 0: off */
	int budget_pct;           /* -1: none */
	bool realtime;            /* SCHED_FIFO now */
	int error;                /* the kernel's refusal (-errno), 0 if none */
	unsigned long stepdowns;  /* periods whose budget was spent */
	uint64_t over_max_ns;     /* the most a period ran at real-time priority beyond its budget */
	uint64_t cpu_ns;          /* the loop's CPU time so far */
};

struct rtloop;

/* Watch the loop of the calling thread (the one that runs e). Nothing is
 * changed until rtloop_apply(). Returns 0 or -errno. */
int rtloop_new(struct rtloop **ret, sd_event *e);
/* Give the loop its scheduling and budget (start and reload). A refusal by
 * the kernel is logged and kept for the status, not returned: 0 or -errno
 * for the event sources only. */
int rtloop_apply(struct rtloop *l, const struct rtloop_params *p);
/* The loop's tid while a budget bounds what it runs at real-time priority,
 * else 0: the watchdog leaves that thread out of its blame. */
pid_t rtloop_bounded_tid(const struct rtloop *l);
/* Numbers for `rtschedctl status`. */
void rtloop_get_status(const struct rtloop *l, struct rtloop_status *out);
/* Back to SCHED_OTHER and free; NULL is fine. */
void rtloop_free(struct rtloop *l);

#endif
