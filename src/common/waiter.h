/* waiter.h: periodic waits on absolute CLOCK_MONOTONIC deadlines, with the
 * wake-up lateness of every period recorded into a struct hist. Shared by
 * librtsched's rtsched_timer (a worker thread's own loop) and the daemon's
 * probes (a cyclictest-like thread per [probe NAME]).
 *
 * Deadlines. Deadline n (n = 1, 2, ...) is exactly start + n * period, in
 * integer nanoseconds, so nothing drifts however long the loop runs. The
 * schedule starts at waiter_start() or, if it was not called, at the first
 * waiter_wait(). A wait returns at or after its deadline (never before:
 * hist's `early` stays 0) and records actual - deadline into the histogram.
 * If the thread returns so late that further deadlines have passed too, they
 * are missed periods: counted with hist_add_overruns, returned to the
 * caller, and the schedule moves to the first deadline after now. It never
 * waits zero times in a row to "catch up", and it never drops a period
 * without counting it.
 *
 * Strategies (how to get from now to the deadline):
 *   sleep     clock_nanosleep(TIMER_ABSTIME) to the deadline, as cyclictest.
 *   hybrid    GStreamer's GstSystemClock: a remaining wait <= guard (500 us)
 *             goes straight to clock_nanosleep(TIMER_ABSTIME); one < threshold
 *             (2 ms) first waits normally (ppoll with a relative timeout,
 *             which gets timer slack) until guard before the deadline, then
 *             clock_nanosleep to it; one >= threshold is a normal wait for the
 *             whole time, re-checked on wake-up as GStreamer does.
 *   busy      spin on clock_gettime, sched_yield every WAITER_BUSY_YIELD_EVERY
 *             reads (the sleep-vs-busy-wait blog's loop). ~100% of a CPU.
 *   adaptive  clock_nanosleep(TIMER_ABSTIME) to deadline - guard, then spin
 *             on clock_gettime to the deadline. The guard is learnt: about
 *             the p99 of this thread's own recent sleep lateness (how late
 *             the clock_nanosleep woke relative to deadline - guard), within
 *             [min_guard, max_guard]. Lateness nears the busy-wait floor for
 *             roughly guard / period of a CPU.
 *
 * Cost. waiter_wait allocates nothing and makes no system call besides the
 * waits (clock_nanosleep, ppoll, sched_yield) and the clock reads (vDSO, no
 * syscall with the tsc clocksource). One thread owns a waiter; other threads
 * read only its histogram, through hist_snapshot. */
#ifndef RTSCHED_WAITER_H
#define RTSCHED_WAITER_H

#include <stdint.h>

#include "hist.h"

enum waiter_strategy {
	WAIT_SLEEP,
	WAIT_HYBRID,
	WAIT_BUSY,
	WAIT_ADAPTIVE,
	WAIT__MAX,
};

/* GStreamer's values (gstsystemclock.c, the clock_nanosleep merge request). */
#define WAITER_HYBRID_GUARD_NS INT64_C(500000)
#define WAITER_HYBRID_THRESHOLD_NS INT64_C(2000000)
/* Clock reads between two sched_yield calls of the busy strategy: ~20-50 us
 * of spinning with a vDSO clock read of 20-50 ns. */
#define WAITER_BUSY_YIELD_EVERY 1000
/* Adaptive: sleep-lateness samples the guard is learnt from (a ring), how
 * often (in samples) it is re-learnt, and the quantile it aims at. */
#define WAITER_ADAPT_WINDOW 256
#define WAITER_ADAPT_EVERY 16
#define WAITER_ADAPT_QUANTILE 99 /* percent */
/* Adaptive bounds: below a few us the spin can't absorb a clock read plus a
 * context switch; the ceiling keeps a noisy machine from turning adaptive into
 * busy-waiting (max_guard is also held to period / 2). The first guard, used
 * until WAITER_ADAPT_EVERY samples exist, is about an idle machine's p99 of
 * plain sleep lateness here (field-facts.md). */
#define WAITER_ADAPT_MIN_GUARD_NS INT64_C(5000)
#define WAITER_ADAPT_MAX_GUARD_NS INT64_C(1000000)
#define WAITER_ADAPT_INIT_GUARD_NS INT64_C(100000)
/* Longest period accepted: a minute, far beyond any real-time loop, and what
 * the daemon's jitter-attach accepts. */
#define WAITER_MAX_PERIOD_NS (INT64_C(60) * 1000000000)

/* The branch the hybrid strategy takes for a remaining wait (see above). */
enum waiter_hybrid_branch {
	WAITER_HYBRID_DIRECT,    /* remaining <= guard: clock_nanosleep only */
	WAITER_HYBRID_TWO_STAGE, /* < threshold: normal wait to guard, then clock_nanosleep */
	WAITER_HYBRID_NORMAL,    /* >= threshold: a normal wait for the whole time */
	WAITER_HYBRID__MAX,
};

/* What the waits did, for tests, the benchmark and diagnostics. Owned by the
 * waiting thread: read it from that thread only. */
struct waiter_counters {
	uint64_t waits;      /* waiter_wait calls that reached their deadline */
	uint64_t missed;     /* missed periods, as reported to hist_add_overruns */
	uint64_t late_entry; /* waits entered after their deadline: the caller overran */
	uint64_t nanosleeps; /* clock_nanosleep calls (EINTR retries included) */
	uint64_t polls;      /* hybrid's normal waits (ppoll) */
	uint64_t spins;      /* clock reads spent spinning */
	uint64_t yields;     /* sched_yield calls of the busy strategy */
	uint64_t hybrid[WAITER_HYBRID__MAX]; /* hybrid: branch taken on entry to a wait */
	uint64_t adapt_updates; /* adaptive: times the guard was re-learnt */
};

struct waiter {
	enum waiter_strategy strategy;
	int64_t period_ns;
	int64_t start_ns;  /* deadline n = start_ns + n * period_ns */
	uint64_t seq;      /* n of the next deadline; 0 until the schedule starts */
	int64_t next_ns;   /* the next deadline, start_ns + seq * period_ns */
	struct hist *hist; /* where the lateness goes; this thread is its writer */
	/* hybrid */
	int64_t guard_ns;
	int64_t threshold_ns;
	/* adaptive */
	int64_t adapt_guard_ns; /* the guard in use */
	int64_t adapt_min_ns, adapt_max_ns;
	int64_t adapt_ring[WAITER_ADAPT_WINDOW]; /* recent sleep lateness, ns */
	unsigned int adapt_pos, adapt_len, adapt_pending;
	struct waiter_counters c;
};

/* "sleep", "hybrid", "busy", "adaptive" to the enum value; -EINVAL otherwise. */
int waiter_strategy_from_string(const char *s);
/* The name of a strategy; NULL for a value out of range. */
const char *waiter_strategy_name(enum waiter_strategy s);

/* Set up *w for `strategy` every period_ns (1 us .. WAITER_MAX_PERIOD_NS),
 * recording into *hist (which the caller has hist_init'ed, and keeps alive).
 * Hybrid gets GStreamer's guard and threshold, adaptive its default bounds.
 * Reads no clock: the schedule starts later. 0 or -EINVAL. */
int waiter_init(struct waiter *w, enum waiter_strategy strategy, int64_t period_ns, struct hist *hist);
/* Hybrid's guard and threshold, 0 <= guard <= threshold; 0 or -EINVAL. */
int waiter_set_hybrid(struct waiter *w, int64_t guard_ns, int64_t threshold_ns);
/* Adaptive's guard bounds, 0 <= min <= max; max is further held to period / 2.
 * Resets what was learnt. 0 or -EINVAL. */
int waiter_set_adaptive(struct waiter *w, int64_t min_guard_ns, int64_t max_guard_ns);
/* Start the schedule now: the first deadline is start_ns + period. Optional
 * (the first waiter_wait starts it from its own clock read). */
void waiter_start(struct waiter *w, int64_t start_ns);
/* Wait for the next deadline, record the lateness, count missed periods and
 * move to the first deadline after now. Returns the number of missed periods
 * (0 normally; capped at INT32_MAX, the histogram gets the full count) or
 * -errno from the clock or the wait (EINTR is retried, never returned). */
int waiter_wait(struct waiter *w);

/* The next deadline (CLOCK_MONOTONIC ns), 0 before the schedule starts. */
static inline int64_t waiter_deadline(const struct waiter *w) { return w->next_ns; }
/* Adaptive: the guard currently in use (ns). */
static inline int64_t waiter_adapt_guard(const struct waiter *w) { return w->adapt_guard_ns; }
/* What the waits did so far. */
static inline const struct waiter_counters *waiter_counters(const struct waiter *w) { return &w->c; }

/* Internals, exposed so tests can drive them without a clock. */
/* The hybrid branch for a remaining wait of `remaining_ns`. */
enum waiter_hybrid_branch waiter_hybrid_branch(const struct waiter *w, int64_t remaining_ns);
/* Adaptive: learn from one sleep-lateness sample (negative counts as 0). */
void waiter_adapt_sample(struct waiter *w, int64_t sleep_late_ns);
/* CLOCK_MONOTONIC now, in ns; -errno on failure (never in practice). */
int64_t waiter_now(void);

#endif
