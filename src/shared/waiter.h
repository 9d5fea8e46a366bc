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
 *             on clock_gettime to the deadline, never past it. The guard is
 *             learnt from the only event that matters: a sleep that woke
 *             after the deadline (a "miss": the spin could not help). Every
 *             miss raises the guard by a factor, every sleep that woke in
 *             time lowers it by a much smaller one, sized so that the two
 *             balance when misses are WAITER_ADAPT_MISS_PPM of the sleeps.
 *             That is a stochastic-approximation (Robbins-Monro) tracker of
 *             the (1 - miss rate) quantile of this thread's sleep lateness:
 *             it needs no window and reads no magnitudes but one: a sleep
 *             that woke later than the largest guard allowed (max_guard)
 *             is a miss no guard could have caught (a stall of the machine),
 *             so it does not move the guard at all; one 5 ms stall is never
 *             a guard of 5 ms.
 *             Two targets, by what is within reach. The tail: misses held
 *             at WAITER_ADAPT_MISS_PPM (0.06%), below 0.1%, so the lateness
 *             is at the spin's floor at p99.9, not only at p99 (the first
 *             design held 0.8%, which put the p99.9 among the misses: tens
 *             of us). That is bought only while it can be had: when the
 *             stalls beyond max_guard are themselves more than
 *             WAITER_ADAPT_REACH_PPM of the sleeps, they and the tail's
 *             own misses pass 0.1%: the p99.9 is out of any guard's reach,
 *             and spinning for it would be CPU for nothing. Two exponential
 *             averages of the stalls say so together: over the recent
 *             WAITER_ADAPT_REACH_SLEEPS sleeps (the stalls go on) and over
 *             the last WAITER_ADAPT_REACH_LONG_SLEEPS (they are that common,
 *             not one burst: a host that takes the CPU away for 5 ms makes
 *             several sleeps in a row stalls, which over 5000 sleeps alone
 *             read as 0.1%); the stalls gone, the recent average gives the
 *             tail back within seconds. While both are above it, the body:
 *             misses held at
 *             WAITER_ADAPT_BODY_MISS_PPM (0.8%), the p99 at the floor, as
 *             the first design did. Over n sleeps within reach in one mode
 *             the misses are exactly m (n + ln(g_end / g_start) / ln(1 /
 *             down)) while the bounds do not bind: the share is held at m,
 *             not merely aimed at.
 *             A quantile as far out as the tail's needs many sleeps to
 *             find: its steps make the guard halve within
 *             WAITER_ADAPT_HALVE_NS when no sleep misses, but over no fewer
 *             than WAITER_ADAPT_MIN_STEPS periods, which keeps a miss's step
 *             near x1.26 and the guard steady between misses that come a
 *             thousand or more sleeps apart; the body's halve within
 *             WAITER_ADAPT_BODY_HALVE_NS (WAITER_ADAPT_BODY_MIN_STEPS).
 *             The guard stays within [min_guard, max_guard], max_guard
 *             being at most WAITER_ADAPT_BUDGET_PCT of the period: the
 *             spin's budget.
 *             CPU: roughly (guard - typical sleep lateness) / period.
 *
 * Cost. waiter_wait allocates nothing and makes no system call besides the
 * waits (clock_nanosleep, ppoll, sched_yield) and the clock reads (vDSO, no
 * syscall with the tsc clocksource). One thread owns a waiter; other threads
 * read only its histogram, through hist_snapshot. */
#ifndef RTSCHED_WAITER_H
#define RTSCHED_WAITER_H

#include <stdint.h>

#include "shared/hist.h"

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
/* Adaptive: the share of sleeps allowed to wake after the deadline (parts
 * per million; below 0.1% so the p99.9 of the lateness is the spin's; the
 * lower, the higher the guard and the CPU it costs), how fast the guard
 * halves when none does, and the fewest periods that adaptation is spread
 * over (fewer would make each step too coarse for a quantile this far out:
 * a miss multiplies the guard by 2^((1 - m) / (m steps))). The body's
 * (below 1%: the p99 at the floor), when the tail is out of reach: stalls
 * beyond the largest guard above WAITER_ADAPT_REACH_PPM (what the 0.1%
 * budget leaves beside the tail's own misses) both of the last
 * WAITER_ADAPT_REACH_SLEEPS or so sleeps and of the last
 * WAITER_ADAPT_REACH_LONG_SLEEPS: at 0.04%, 2 stalls are expected in 5000
 * sleeps, so one burst would pass it, and 20 in 50,000. */
#define WAITER_ADAPT_MISS_PPM 600
#define WAITER_ADAPT_HALVE_NS INT64_C(5000000000)
#define WAITER_ADAPT_MIN_STEPS 5000
#define WAITER_ADAPT_BODY_MISS_PPM 8000
#define WAITER_ADAPT_BODY_HALVE_NS INT64_C(500000000)
#define WAITER_ADAPT_BODY_MIN_STEPS 200
#define WAITER_ADAPT_REACH_PPM 400
#define WAITER_ADAPT_REACH_SLEEPS 5000
#define WAITER_ADAPT_REACH_LONG_SLEEPS 50000
/* Adaptive bounds: below a few us the spin can't absorb a clock read plus a
 * context switch; the ceiling keeps a noisy machine from turning adaptive into
 * busy-waiting: at most WAITER_ADAPT_BUDGET_PCT of each period is spent
 * spinning, and never more than WAITER_ADAPT_MAX_GUARD_NS. The first guard
 * is about an idle machine's p99 of plain sleep lateness here
 * (field-facts.md). */
#define WAITER_ADAPT_MIN_GUARD_NS INT64_C(5000)
#define WAITER_ADAPT_MAX_GUARD_NS INT64_C(1000000)
#define WAITER_ADAPT_BUDGET_PCT 25
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
	int64_t hybrid_entry_ns;   /* hybrid: the remaining wait it was chosen for, last time */
	uint64_t adapt_samples; /* adaptive: sleeps learnt from */
	uint64_t adapt_misses;  /* adaptive: of which woke after the deadline */
	uint64_t adapt_beyond;  /* adaptive: of those, later than max_guard: no step */
	uint64_t adapt_body;    /* adaptive: sleeps learnt with the body's target (tail out of reach) */
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
	int64_t adapt_guard_ns; /* the guard in use (adapt_g rounded) */
	int64_t adapt_min_ns, adapt_max_ns;
	double adapt_g;         /* the guard, ns, as learnt */
	double adapt_up;        /* factor per miss, > 1 (the tail's target) */
	double adapt_down;      /* factor per sleep in time, < 1 */
	double adapt_body_up, adapt_body_down; /* the same for the body's target */
	double adapt_beyond_share; /* recent sleeps later than max_guard (average) */
	double adapt_beyond_long;  /* the same over WAITER_ADAPT_REACH_LONG_SLEEPS */
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
/* Adaptive's guard bounds, 0 <= min <= max; max is further held to
 * WAITER_ADAPT_BUDGET_PCT of the period. min == max is a fixed guard (the
 * benchmark's baselines). Resets what was learnt. 0 or -EINVAL. */
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
/* Adaptive: learn from one sleep that aimed at deadline - guard (the guard in
 * use, waiter_adapt_guard()) and woke sleep_late_ns after that: a miss if it
 * woke after the deadline; beyond reach, and no step, if it woke later than
 * the largest guard allowed. Returns 1 for a miss, else 0. */
/* Adaptive: is the tail (the p99.9) within reach, so that the tail's target
 * is in force, not the body's? */
static inline int waiter_adapt_tail(const struct waiter *w)
{
	return w->adapt_beyond_share * 1e6 <= WAITER_ADAPT_REACH_PPM ||
	       w->adapt_beyond_long * 1e6 <= WAITER_ADAPT_REACH_PPM;
}
int waiter_adapt_sample(struct waiter *w, int64_t sleep_late_ns);
/* CLOCK_MONOTONIC now, in ns; -errno on failure (never in practice). */
int64_t waiter_now(void);

#endif
