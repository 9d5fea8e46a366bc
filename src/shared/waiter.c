/* waiter.c: the wait strategies of rtsched_timer and the daemon's probes
 * (see waiter.h for the deadlines, the strategies and the cost rules). */
#ifdef HAVE_CONFIG_H
#include "autoconfig.h" /* absent when built by hand, without configure */
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* ppoll; configure's AC_USE_SYSTEM_EXTENSIONS sets it too */
#endif

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "shared/waiter.h"

#define NS_PER_S INT64_C(1000000000)
_Static_assert(WAITER_ADAPT_MISS_PPM > 0 && WAITER_ADAPT_MISS_PPM < 1000, "misses must stay under 0.1%");
_Static_assert(WAITER_ADAPT_BODY_MISS_PPM > 0 && WAITER_ADAPT_BODY_MISS_PPM < 10000, "misses must stay under 1%");
_Static_assert(WAITER_ADAPT_REACH_PPM + WAITER_ADAPT_MISS_PPM <= 1000,
	       "the tail's misses and the stalls it tolerates must stay within 0.1%");

static const char *const names[WAIT__MAX] = {
	[WAIT_SLEEP] = "sleep",
	[WAIT_HYBRID] = "hybrid",
	[WAIT_BUSY] = "busy",
	[WAIT_ADAPTIVE] = "adaptive",
};

int waiter_strategy_from_string(const char *s)
{
	for (int i = 0; s && i < WAIT__MAX; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -EINVAL;
}

const char *waiter_strategy_name(enum waiter_strategy s)
{
	return (unsigned int)s < WAIT__MAX ? names[s] : NULL;
}

/* CLOCK_MONOTONIC cannot fail with a valid clock id and pointer; the check
 * is for seccomp filters and exotic kernels, not for the hot path. */
int64_t waiter_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0)
		return -errno;
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* Read the clock into *now; 0 or -errno. */
static inline int read_now(int64_t *now)
{
	int64_t t = waiter_now();

	if (t < 0)
		return (int)t;
	*now = t;
	return 0;
}

/* The timespec of an absolute or relative time in ns (>= 0). */
static inline struct timespec to_ts(int64_t ns)
{
	return (struct timespec){ .tv_sec = ns / NS_PER_S, .tv_nsec = ns % NS_PER_S };
}

/* Sleep to an absolute time; a signal restarts the same absolute sleep, so
 * it cannot drift. clock_nanosleep returns an error number, not -1. */
static int sleep_until(struct waiter *w, int64_t t)
{
	struct timespec ts = to_ts(t);
	int r;

	do {
		w->c.nanosleeps++;
		r = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	} while (r == EINTR);
	return -r;
}

/* Hybrid's "normal wait": a relative timed wait with timer slack, as a poll
 * or condition-variable wait is. The caller re-reads the clock and loops, so
 * an early return (EINTR) costs nothing. */
static int poll_for(struct waiter *w, int64_t rel_ns)
{
	struct timespec ts = to_ts(rel_ns);

	w->c.polls++;
	if (ppoll(NULL, 0, &ts, NULL) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

/* Spin on the clock until t, calling sched_yield every yield_every reads
 * (0: never); *now is the last read, >= t on success. */
static int spin_until(struct waiter *w, int64_t t, int64_t *now, unsigned int yield_every)
{
	unsigned int n = 0;
	int r;

	while (*now < t) {
		if (yield_every && ++n == yield_every) {
			n = 0;
			w->c.yields++;
			sched_yield();
		}
		w->c.spins++;
		if ((r = read_now(now)) < 0)
			return r;
	}
	return 0;
}

enum waiter_hybrid_branch waiter_hybrid_branch(const struct waiter *w, int64_t remaining_ns)
{
	if (remaining_ns <= w->guard_ns)
		return WAITER_HYBRID_DIRECT;
	if (remaining_ns < w->threshold_ns)
		return WAITER_HYBRID_TWO_STAGE;
	return WAITER_HYBRID_NORMAL;
}

/* GStreamer's loop: choose by what remains, wait, re-read the clock and go
 * again until the deadline has passed. A two-stage wait wakes near guard
 * before the deadline and so takes the direct branch on its second turn. */
static int wait_hybrid(struct waiter *w, int64_t deadline, int64_t *now)
{
	bool first = true;
	int r;

	while (*now < deadline) {
		int64_t rem = deadline - *now;
		enum waiter_hybrid_branch b = waiter_hybrid_branch(w, rem);

		if (first) {
			w->c.hybrid[b]++;
			w->c.hybrid_entry_ns = rem;
		}
		first = false;
		if (b == WAITER_HYBRID_DIRECT)
			r = sleep_until(w, deadline);
		else if (b == WAITER_HYBRID_TWO_STAGE)
			r = poll_for(w, rem - w->guard_ns);
		else
			r = poll_for(w, rem);
		if (r < 0 || (r = read_now(now)) < 0)
			return r;
	}
	return 0;
}

/* One step of the tracker (waiter.h): up on a miss, down otherwise, by the
 * tail's factors while the p99.9 is within reach and the body's when it is
 * not, held within the bounds; no step for a sleep later than any allowed
 * guard, which counts towards that reach. */
int waiter_adapt_sample(struct waiter *w, int64_t sleep_late_ns)
{
	int miss = sleep_late_ns > w->adapt_guard_ns, beyond = sleep_late_ns > w->adapt_max_ns;
	double g;

	w->c.adapt_samples++;
	w->c.adapt_misses += (uint64_t)miss;
	w->adapt_beyond_share += ((double)beyond - w->adapt_beyond_share) / WAITER_ADAPT_REACH_SLEEPS;
	w->adapt_beyond_long += ((double)beyond - w->adapt_beyond_long) / WAITER_ADAPT_REACH_LONG_SLEEPS;
	if (beyond) {
		w->c.adapt_beyond++;
		return miss;
	}
	if (waiter_adapt_tail(w))
		g = w->adapt_g * (miss ? w->adapt_up : w->adapt_down);
	else {
		w->c.adapt_body++;
		g = w->adapt_g * (miss ? w->adapt_body_up : w->adapt_body_down);
	}

	if (g < (double)w->adapt_min_ns)
		g = (double)w->adapt_min_ns;
	if (g > (double)w->adapt_max_ns)
		g = (double)w->adapt_max_ns;
	w->adapt_g = g;
	w->adapt_guard_ns = (int64_t)(g + 0.5);
	return miss;
}

/* Sleep to deadline - guard, learn whether that sleep woke in time, spin the
 * rest. No sched_yield in the spin: it is at most max_guard (<= 1 ms, <=
 * WAITER_ADAPT_BUDGET_PCT of the period) and normally tens of us; a yield would
 * hand the CPU to a SCHED_OTHER hog for up to a whole slice (ms) or, under
 * SCHED_FIFO, to a same-priority task, which is exactly the lateness the spin
 * is there to avoid. A sleep entered too late to be a sleep is not a sample:
 * it measures the caller's overrun, not the kernel's wake-up. */
static int wait_adaptive(struct waiter *w, int64_t deadline, int64_t *now)
{
	int64_t target = deadline - w->adapt_guard_ns;
	int r;

	if (*now < target) {
		if ((r = sleep_until(w, target)) < 0 || (r = read_now(now)) < 0)
			return r;
		waiter_adapt_sample(w, *now - target);
	}
	return spin_until(w, deadline, now, 0);
}

/* One wait by the chosen strategy; on success *now is the wake-up time,
 * at or after the deadline. */
static int wait_for(struct waiter *w, int64_t deadline, int64_t *now)
{
	int r;

	switch (w->strategy) {
	case WAIT_SLEEP:
		if ((r = sleep_until(w, deadline)) < 0)
			return r;
		return read_now(now);
	case WAIT_HYBRID:
		return wait_hybrid(w, deadline, now);
	case WAIT_BUSY:
		return spin_until(w, deadline, now, WAITER_BUSY_YIELD_EVERY);
	case WAIT_ADAPTIVE:
		return wait_adaptive(w, deadline, now);
	default:
		return -EINVAL;
	}
}

int waiter_init(struct waiter *w, enum waiter_strategy strategy, int64_t period_ns, struct hist *hist)
{
	if (!w || !hist || (unsigned int)strategy >= WAIT__MAX || period_ns < 1000 ||
	    period_ns > WAITER_MAX_PERIOD_NS)
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	w->strategy = strategy;
	w->period_ns = period_ns;
	w->hist = hist;
	w->guard_ns = WAITER_HYBRID_GUARD_NS;
	w->threshold_ns = WAITER_HYBRID_THRESHOLD_NS;
	return waiter_set_adaptive(w, WAITER_ADAPT_MIN_GUARD_NS, WAITER_ADAPT_MAX_GUARD_NS);
}

int waiter_set_hybrid(struct waiter *w, int64_t guard_ns, int64_t threshold_ns)
{
	if (guard_ns < 0 || threshold_ns < guard_ns)
		return -EINVAL;
	w->guard_ns = guard_ns;
	w->threshold_ns = threshold_ns;
	return 0;
}

/* The step factors for a miss rate of ppm, halving within halve_ns or
 * min_steps periods, whichever is more: down = 2^(-1/steps), and balance at
 * the target rate m: m ln(up) = (1 - m) ln(1/down). At 1 kHz the tail's
 * (5000 steps) multiply the guard by 1.26 per miss and 0.99986 per sleep in
 * time, the body's (500 steps) by 1.19 and 0.9986. */
static void adapt_steps(const struct waiter *w, int ppm, int64_t halve_ns, int min_steps, double *up, double *down)
{
	const double m = ppm / 1e6;
	double steps = (double)halve_ns / (double)w->period_ns;
	double ln_down;

	if (steps < min_steps)
		steps = min_steps;
	ln_down = log(2.0) / steps;
	*down = exp(-ln_down);
	*up = exp(ln_down * (1 - m) / m);
}

int waiter_set_adaptive(struct waiter *w, int64_t min_guard_ns, int64_t max_guard_ns)
{
	int64_t g = WAITER_ADAPT_INIT_GUARD_NS, budget = w->period_ns / 100 * WAITER_ADAPT_BUDGET_PCT;

	if (min_guard_ns < 0 || max_guard_ns < min_guard_ns)
		return -EINVAL;
	if (max_guard_ns > budget)
		max_guard_ns = budget;
	if (min_guard_ns > max_guard_ns)
		min_guard_ns = max_guard_ns;
	w->adapt_min_ns = min_guard_ns;
	w->adapt_max_ns = max_guard_ns;
	w->adapt_guard_ns = g < min_guard_ns ? min_guard_ns : g > max_guard_ns ? max_guard_ns : g;
	w->adapt_g = (double)w->adapt_guard_ns;
	w->adapt_beyond_share = 0;
	w->adapt_beyond_long = 0;
	adapt_steps(w, WAITER_ADAPT_MISS_PPM, WAITER_ADAPT_HALVE_NS, WAITER_ADAPT_MIN_STEPS, &w->adapt_up,
		    &w->adapt_down);
	adapt_steps(w, WAITER_ADAPT_BODY_MISS_PPM, WAITER_ADAPT_BODY_HALVE_NS, WAITER_ADAPT_BODY_MIN_STEPS,
		    &w->adapt_body_up, &w->adapt_body_down);
	return 0;
}

void waiter_start(struct waiter *w, int64_t start_ns)
{
	w->start_ns = start_ns;
	w->seq = 1;
	w->next_ns = start_ns + w->period_ns;
}

int waiter_wait(struct waiter *w)
{
	int64_t deadline, now = 0, late;
	uint64_t missed = 0;
	int r;

	if ((r = read_now(&now)) < 0)
		return r;
	if (w->seq == 0)
		waiter_start(w, now);
	deadline = w->next_ns;
	if (now >= deadline)
		w->c.late_entry++;
	else if ((r = wait_for(w, deadline, &now)) < 0)
		return r;
	late = now - deadline;
	hist_record(w->hist, late);
	/* deadlines deadline + k * period <= now, k >= 1, went by unserved */
	if (late >= w->period_ns) {
		missed = (uint64_t)(late / w->period_ns);
		hist_add_overruns(w->hist, missed);
		w->c.missed += missed;
	}
	w->c.waits++;
	w->seq += 1 + missed;
	w->next_ns = w->start_ns + (int64_t)w->seq * w->period_ns;
	return missed > INT32_MAX ? INT32_MAX : (int)missed;
}
