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
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "waiter.h"

#define NS_PER_S INT64_C(1000000000)
/* The adaptive guard is the k-th largest of the window, k small: keep the k
 * largest in a sorted array instead of sorting the window. */
#define ADAPT_TOPK 4
_Static_assert(WAITER_ADAPT_WINDOW * (100 - WAITER_ADAPT_QUANTILE) / 100 + 1 <= ADAPT_TOPK,
	       "ADAPT_TOPK too small for the window and the quantile");
_Static_assert(WAITER_ADAPT_EVERY <= WAITER_ADAPT_WINDOW, "re-learn within one window");

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

		if (first)
			w->c.hybrid[b]++;
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

/* The guard is the WAITER_ADAPT_QUANTILE-th percentile (nearest rank) of the
 * window: the k-th largest sample, k = n - ceil(q n) + 1. */
static int64_t adapt_quantile(const struct waiter *w)
{
	unsigned int n = w->adapt_len;
	unsigned int rank = (WAITER_ADAPT_QUANTILE * n + 99) / 100;
	unsigned int k = n - rank + 1;
	int64_t top[ADAPT_TOPK];

	for (unsigned int i = 0; i < k; i++)
		top[i] = INT64_MIN;
	for (unsigned int i = 0; i < n; i++) {
		int64_t v = w->adapt_ring[i];
		unsigned int j;

		if (v <= top[k - 1])
			continue;
		for (j = k - 1; j > 0 && top[j - 1] < v; j--)
			top[j] = top[j - 1];
		top[j] = v;
	}
	return top[k - 1];
}

/* Re-learnt every WAITER_ADAPT_EVERY samples, not every period: the scan of
 * the window costs ~0.3 us, which at 10 kHz would be 0.3% of a CPU. */
void waiter_adapt_sample(struct waiter *w, int64_t sleep_late_ns)
{
	int64_t g;

	w->adapt_ring[w->adapt_pos] = sleep_late_ns > 0 ? sleep_late_ns : 0;
	w->adapt_pos = (w->adapt_pos + 1) % WAITER_ADAPT_WINDOW;
	if (w->adapt_len < WAITER_ADAPT_WINDOW)
		w->adapt_len++;
	if (++w->adapt_pending < WAITER_ADAPT_EVERY)
		return;
	w->adapt_pending = 0;
	g = adapt_quantile(w);
	if (g < w->adapt_min_ns)
		g = w->adapt_min_ns;
	if (g > w->adapt_max_ns)
		g = w->adapt_max_ns;
	w->adapt_guard_ns = g;
	w->c.adapt_updates++;
}

/* Sleep to deadline - guard, learn how late that sleep woke, spin the rest.
 * No sched_yield in the spin: it is at most max_guard (<= 1 ms, <= period/2)
 * and normally the thread's p99 sleep lateness, tens of us; a yield would
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

int waiter_set_adaptive(struct waiter *w, int64_t min_guard_ns, int64_t max_guard_ns)
{
	int64_t g = WAITER_ADAPT_INIT_GUARD_NS;

	if (min_guard_ns < 0 || max_guard_ns < min_guard_ns)
		return -EINVAL;
	if (max_guard_ns > w->period_ns / 2)
		max_guard_ns = w->period_ns / 2;
	if (min_guard_ns > max_guard_ns)
		min_guard_ns = max_guard_ns;
	w->adapt_min_ns = min_guard_ns;
	w->adapt_max_ns = max_guard_ns;
	w->adapt_guard_ns = g < min_guard_ns ? min_guard_ns : g > max_guard_ns ? max_guard_ns : g;
	w->adapt_pos = w->adapt_len = w->adapt_pending = 0;
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
