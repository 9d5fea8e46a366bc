/* test-waiter.c: unit tests of the wait strategies (src/shared/waiter.c):
 * one lateness sample per wake-up and never an early one, missed periods
 * counted as overruns with the schedule moved past now, absolute deadlines
 * that don't drift, hybrid's three branches, adaptive's learnt guard (fed
 * synthetic, deterministic lateness sequences: steady, spiky, load coming and
 * going; no clock); and of
 * the daemon's probes (src/daemon/probe.c) that run them: the kernel must
 * report the CPU, policy and priority asked for, and stop must return.
 * Machines running tests are noisy (VMs, parallel make check): assertions are
 * on structure and counts, never on how many microseconds something took. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shared/hist.h"
#include "shared/waiter.h"
#include "daemon/observe/probe.h"
#include "unit-util.h"

#define MS INT64_C(1000000)
#define US INT64_C(1000)

static struct hist h;
static struct waiter w;

/* Sleep a relative time in ns, as a caller doing too much work would. */
static void stall(int64_t ns)
{
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

START_TEST(test_names)
{
	for (int s = 0; s < WAIT__MAX; s++) {
		const char *n = waiter_strategy_name(s);

		ck_assert_ptr_nonnull(n);
		ck_assert_int_eq(waiter_strategy_from_string(n), s);
	}
	ck_assert_int_eq(waiter_strategy_from_string("sleep"), WAIT_SLEEP);
	ck_assert_int_eq(waiter_strategy_from_string("hybrid"), WAIT_HYBRID);
	ck_assert_int_eq(waiter_strategy_from_string("busy"), WAIT_BUSY);
	ck_assert_int_eq(waiter_strategy_from_string("adaptive"), WAIT_ADAPTIVE);
	ck_assert_int_eq(waiter_strategy_from_string("Sleep"), -EINVAL);
	ck_assert_int_eq(waiter_strategy_from_string(""), -EINVAL);
	ck_assert_int_eq(waiter_strategy_from_string(NULL), -EINVAL);
	ck_assert_ptr_null(waiter_strategy_name(WAIT__MAX));
	ck_assert_ptr_null(waiter_strategy_name((enum waiter_strategy)-1));
}
END_TEST

START_TEST(test_init_invalid)
{
	hist_init(&h);
	ck_assert_int_eq(waiter_init(&w, WAIT_SLEEP, 0, &h), -EINVAL);
	ck_assert_int_eq(waiter_init(&w, WAIT_SLEEP, 999, &h), -EINVAL);
	ck_assert_int_eq(waiter_init(&w, WAIT_SLEEP, -MS, &h), -EINVAL);
	ck_assert_int_eq(waiter_init(&w, WAIT_SLEEP, WAITER_MAX_PERIOD_NS + 1, &h), -EINVAL);
	ck_assert_int_eq(waiter_init(&w, WAIT_SLEEP, MS, NULL), -EINVAL);
	ck_assert_int_eq(waiter_init(&w, WAIT__MAX, MS, &h), -EINVAL);
	ck_assert_int_eq(waiter_init(&w, WAIT_HYBRID, MS, &h), 0);
	ck_assert_int_eq(w.guard_ns, WAITER_HYBRID_GUARD_NS);
	ck_assert_int_eq(w.threshold_ns, WAITER_HYBRID_THRESHOLD_NS);
	ck_assert_int_eq(waiter_set_hybrid(&w, -1, MS), -EINVAL);
	ck_assert_int_eq(waiter_set_hybrid(&w, 2 * MS, MS), -EINVAL);
	ck_assert_int_eq(waiter_set_hybrid(&w, MS, MS), 0);
	ck_assert_int_eq(waiter_set_adaptive(&w, -1, MS), -EINVAL);
	ck_assert_int_eq(waiter_set_adaptive(&w, 2 * MS, MS), -EINVAL);
	/* nothing ran: no clock read, no deadline yet */
	ck_assert_int_eq(waiter_deadline(&w), 0);
	ck_assert_uint_eq(hist_count(&h), 0);
}
END_TEST

/* Every strategy (the loop index): one sample per wait, none early, and the
 * return values, the waiter's and the histogram's overruns all agree. */
START_TEST(test_lateness_per_wakeup)
{
	const int n = 20;
	uint64_t missed = 0;
	int64_t seen_lo = INT64_MAX, seen_hi = 0;

	hist_init(&h);
	ck_assert_int_eq(waiter_init(&w, (enum waiter_strategy)_i, MS, &h), 0);
	for (int i = 0; i < n; i++) {
		int64_t deadline, now;
		int r;

		r = waiter_wait(&w);
		now = waiter_now();
		ck_assert_int_ge(r, 0);
		missed += (uint64_t)r;
		/* the deadline just served lies before now, the next one after */
		deadline = waiter_deadline(&w) - (int64_t)(r + 1) * MS;
		ck_assert_int_le(deadline, now);
		ck_assert_int_gt(waiter_deadline(&w), deadline);
		ck_assert_uint_eq(hist_count(&h), (uint64_t)i + 1);
		/* the sample, taken before the return, is at most this late */
		seen_lo = now - deadline < seen_lo ? now - deadline : seen_lo;
		seen_hi = now - deadline > seen_hi ? now - deadline : seen_hi;
	}
	ck_assert_uint_eq(waiter_counters(&w)->waits, n);
	ck_assert_uint_eq(hist_early(&h), 0);
	ck_assert_uint_eq(hist_overruns(&h), missed);
	ck_assert_uint_eq(waiter_counters(&w)->missed, missed);
	ck_assert_int_le(hist_min(&h), seen_lo);
	ck_assert_int_le(hist_max(&h), seen_hi);
	ck_assert_int_le(hist_min(&h), hist_max(&h));
}
END_TEST

/* A caller that stalls for 3 periods misses at least 2 deadlines: they are
 * counted, not silently skipped, and the next deadline lies after the call
 * (not after the return: under valgrind the return itself can take a
 * period). */
START_TEST(test_overruns)
{
	const int64_t period = 2 * MS;
	uint64_t missed = 0;
	int64_t start, before;
	int r;

	hist_init(&h);
	ck_assert_int_eq(waiter_init(&w, (enum waiter_strategy)_i, period, &h), 0);
	start = waiter_now();
	waiter_start(&w, start);
	r = waiter_wait(&w);
	ck_assert_int_ge(r, 0);
	missed += (uint64_t)r;
	stall(3 * period);
	before = waiter_now();
	r = waiter_wait(&w);
	ck_assert_int_ge(r, 2);
	missed += (uint64_t)r;
	ck_assert_int_gt(waiter_deadline(&w), before);
	/* still on the grid */
	ck_assert_int_eq((waiter_deadline(&w) - start) % period, 0);
	ck_assert_uint_ge(waiter_counters(&w)->late_entry, 1);
	ck_assert_uint_ge(hist_overruns(&h), 2);
	ck_assert_uint_eq(hist_overruns(&h), missed);
	ck_assert_uint_eq(hist_count(&h), 2); /* a missed period is no sample */
	/* and it goes on normally */
	r = waiter_wait(&w);
	ck_assert_int_ge(r, 0);
	ck_assert_uint_eq(hist_count(&h), 3);
}
END_TEST

/* 1000 periods: deadline n is start + n * period exactly, n counting the
 * missed periods too, so no error accumulates whatever the strategy. */
START_TEST(test_no_drift)
{
	const int64_t period = 200 * US;
	const int n = 1000;
	uint64_t seq = 1;
	int64_t start;

	hist_init(&h);
	ck_assert_int_eq(waiter_init(&w, (enum waiter_strategy)_i, period, &h), 0);
	start = waiter_now();
	waiter_start(&w, start);
	for (int i = 0; i < n; i++) {
		int r;

		ck_assert_int_eq(waiter_deadline(&w), start + (int64_t)seq * period);
		r = waiter_wait(&w);
		ck_assert_int_ge(r, 0);
		seq += 1 + (uint64_t)r;
	}
	ck_assert_int_eq(waiter_deadline(&w), start + (int64_t)seq * period);
	ck_assert_uint_eq(seq, 1 + n + hist_overruns(&h));
	ck_assert_uint_eq(hist_count(&h), n);
	ck_assert_uint_eq(hist_early(&h), 0);
}
END_TEST

/* The branch is a function of the remaining time: exact at the edges. */
START_TEST(test_hybrid_branch_edges)
{
	hist_init(&h);
	ck_assert_int_eq(waiter_init(&w, WAIT_HYBRID, 10 * MS, &h), 0);
	ck_assert_int_eq(waiter_hybrid_branch(&w, 0), WAITER_HYBRID_DIRECT);
	ck_assert_int_eq(waiter_hybrid_branch(&w, 1), WAITER_HYBRID_DIRECT);
	ck_assert_int_eq(waiter_hybrid_branch(&w, 500 * US), WAITER_HYBRID_DIRECT);
	ck_assert_int_eq(waiter_hybrid_branch(&w, 500 * US + 1), WAITER_HYBRID_TWO_STAGE);
	ck_assert_int_eq(waiter_hybrid_branch(&w, 2 * MS - 1), WAITER_HYBRID_TWO_STAGE);
	ck_assert_int_eq(waiter_hybrid_branch(&w, 2 * MS), WAITER_HYBRID_NORMAL);
	ck_assert_int_eq(waiter_hybrid_branch(&w, 10 * MS), WAITER_HYBRID_NORMAL);
	ck_assert_int_eq(waiter_set_hybrid(&w, 100 * US, 100 * US), 0);
	ck_assert_int_eq(waiter_hybrid_branch(&w, 100 * US), WAITER_HYBRID_DIRECT);
	ck_assert_int_eq(waiter_hybrid_branch(&w, 100 * US + 1), WAITER_HYBRID_NORMAL);
}
END_TEST

struct branch_case {
	int64_t guard, threshold, period;
	enum waiter_hybrid_branch expect;
};

/* Live hybrid waits, each configuration chosen so the remaining time on
 * entry lies in one branch with tens of ms to spare:
 *   guard >= period: every wait is <= guard, whatever the delays;
 *   guard 5 ms < period 100 ms < threshold: two-stage unless 95 ms late;
 *   period 50 ms >= threshold 2 ms: normal unless 48 ms late.
 * What is checked is that each live wait took the branch waiter_hybrid_branch()
 * gives for the remaining time it measured on entry (a sanitizer or valgrind
 * on a loaded machine can make an entry that late), and that the calls each
 * branch makes were made. */
static const struct branch_case branch_cases[] = {
	{ 20 * MS, 40 * MS, 10 * MS, WAITER_HYBRID_DIRECT },
	{ 5 * MS, 200 * MS, 100 * MS, WAITER_HYBRID_TWO_STAGE },
	{ 1 * MS, 2 * MS, 50 * MS, WAITER_HYBRID_NORMAL },
};

START_TEST(test_hybrid_branch_live)
{
	const struct branch_case *bc = &branch_cases[_i];
	const struct waiter_counters *c = waiter_counters(&w);
	const int n = 3;
	uint64_t want[WAITER_HYBRID__MAX] = { 0 };

	hist_init(&h);
	ck_assert_int_eq(waiter_init(&w, WAIT_HYBRID, bc->period, &h), 0);
	ck_assert_int_eq(waiter_set_hybrid(&w, bc->guard, bc->threshold), 0);
	for (int i = 0; i < n; i++) {
		uint64_t before[WAITER_HYBRID__MAX], late = c->late_entry;
		memcpy(before, c->hybrid, sizeof(before));
		ck_assert_int_ge(waiter_wait(&w), 0);
		if (c->late_entry != late) {
			/* entered after its deadline (valgrind can be that slow): no wait, no branch */
			ck_assert_mem_eq(before, c->hybrid, sizeof(before));
			continue;
		}
		want[waiter_hybrid_branch(&w, c->hybrid_entry_ns)]++;
		/* one branch per wait, the classifier's for what it measured */
		for (int k = 0; k < WAITER_HYBRID__MAX; k++)
			ck_assert_uint_eq(c->hybrid[k] - before[k], k == (int)waiter_hybrid_branch(&w, c->hybrid_entry_ns));
	}
	ck_assert_uint_eq(c->hybrid[0] + c->hybrid[1] + c->hybrid[2] + c->late_entry, n);
	if (want[bc->expect] != (uint64_t)n)
		fprintf(stderr, "test_hybrid_branch_live: %d of %d entries came too late for the %s branch\n",
			n - (int)want[bc->expect], n, bc->expect == WAITER_HYBRID_DIRECT ? "direct" :
			bc->expect == WAITER_HYBRID_TWO_STAGE ? "two-stage" : "normal");
	/* direct: clock_nanosleep only; two-stage: a normal wait first (then
	 * clock_nanosleep, unless it woke past the deadline); normal: a normal
	 * wait, which wakes late, never early */
	ck_assert_uint_ge(c->polls, want[WAITER_HYBRID_TWO_STAGE] + want[WAITER_HYBRID_NORMAL]);
	ck_assert_uint_ge(c->nanosleeps, want[WAITER_HYBRID_DIRECT]);
	if (!want[WAITER_HYBRID_TWO_STAGE] && !want[WAITER_HYBRID_NORMAL])
		ck_assert_uint_eq(c->polls, 0);
	if (!want[WAITER_HYBRID_DIRECT] && !want[WAITER_HYBRID_TWO_STAGE])
		ck_assert_uint_eq(c->nanosleeps, 0);
	ck_assert_uint_eq(c->spins, 0);
	ck_assert_uint_eq(hist_count(&h), n);
}
END_TEST

/* Feed n samples of value v; returns the misses among them. */
static int feed(int n, int64_t v)
{
	int m = 0;

	for (int i = 0; i < n; i++)
		m += waiter_adapt_sample(&w, v);
	return m;
}

/* A deterministic stream of sleep lateness: base + scale * Exp(1), from
 * xorshift64 with a fixed seed, so every run sees the same sequence. Its q
 * quantile is base + scale * ln(1 / (1 - q)): for base 20 us, scale 10 us,
 * p99 = 66.1 us, p99.9 = 89.1 us, p99.99 = 112.1 us. */
static uint64_t rng = 0x9e3779b97f4a7c15u;
static int64_t expo(int64_t base, int64_t scale)
{
	double u;

	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	u = (double)(rng >> 11) / 9007199254740992.0; /* [0, 1) */
	return base + (int64_t)((double)scale * -log(1 - u));
}
static int64_t quantile(int64_t base, int64_t scale, double q)
{
	return base + (int64_t)((double)scale * log(1 / (1 - q)));
}

struct run {
	int misses;
	double mean_guard;
	int64_t min_guard, max_guard;
};

/* Feed n samples of expo(base, scale) (every spike_every-th one replaced by
 * a spike of spike_ns, if spike_every > 0), recording into h the lateness
 * each wait would have had. */
static struct run stream(int n, int64_t base, int64_t scale, int spike_every, int64_t spike_ns)
{
	struct run r = { 0, 0, INT64_MAX, 0 };

	for (int i = 1; i <= n; i++) {
		int64_t v = expo(base, scale);

		if (spike_every > 0 && i % spike_every == 0)
			v = spike_ns;
		r.mean_guard += (double)waiter_adapt_guard(&w) / n;
		if (waiter_adapt_guard(&w) > r.max_guard)
			r.max_guard = waiter_adapt_guard(&w);
		if (waiter_adapt_guard(&w) < r.min_guard)
			r.min_guard = waiter_adapt_guard(&w);
		/* what the wait would record: the spin's end, or the miss's excess */
		hist_record(&h, v > waiter_adapt_guard(&w) ? v - waiter_adapt_guard(&w) : 0);
		r.misses += waiter_adapt_sample(&w, v);
	}
	return r;
}

/* The step factors: at 1 kHz the guard halves in WAITER_ADAPT_HALVE_NS of
 * sleeps that all come in time, and misses at WAITER_ADAPT_MISS_PPM balance
 * the sleeps in time. A miss is exactly a sleep that woke after the
 * deadline: lateness > guard. */
START_TEST(test_adaptive_steps)
{
	const struct waiter_counters *c = waiter_counters(&w);
	const double m = WAITER_ADAPT_MISS_PPM / 1e6;
	const int half = (int)(WAITER_ADAPT_HALVE_NS / MS);

	hist_init(&h);
	ck_assert_int_eq(waiter_init(&w, WAIT_ADAPTIVE, MS, &h), 0);
	ck_assert_int_eq(w.adapt_min_ns, WAITER_ADAPT_MIN_GUARD_NS);
	ck_assert_int_eq(w.adapt_max_ns, MS * WAITER_ADAPT_BUDGET_PCT / 100);
	ck_assert_int_eq(waiter_adapt_guard(&w), WAITER_ADAPT_INIT_GUARD_NS);
	ck_assert_double_eq_tol(pow(w.adapt_down, half), 0.5, 1e-9);
	ck_assert_double_eq_tol(m * log(w.adapt_up), (1 - m) * -log(w.adapt_down), 1e-12);
	/* the body's: 0.8%, halving in WAITER_ADAPT_BODY_HALVE_NS */
	const double mb = WAITER_ADAPT_BODY_MISS_PPM / 1e6;
	ck_assert_double_eq_tol(pow(w.adapt_body_down, (double)WAITER_ADAPT_BODY_HALVE_NS / MS), 0.5, 1e-9);
	ck_assert_double_eq_tol(mb * log(w.adapt_body_up), (1 - mb) * -log(w.adapt_body_down), 1e-12);
	ck_assert(waiter_adapt_tail(&w));

	/* the miss test, at the guard in use (100 us) */
	ck_assert_int_eq(waiter_adapt_sample(&w, 100 * US), 0); /* woke exactly at the deadline */
	ck_assert_int_lt(waiter_adapt_guard(&w), 100 * US);
	ck_assert_int_eq(waiter_adapt_sample(&w, waiter_adapt_guard(&w) + 1), 1);
	ck_assert_int_gt(waiter_adapt_guard(&w), 100 * US);
	ck_assert_int_eq(waiter_adapt_sample(&w, -5 * US), 0); /* never early, but harmless */
	ck_assert_uint_eq(c->adapt_samples, 3);
	ck_assert_uint_eq(c->adapt_misses, 1);

	/* a sleep later than the largest guard allowed (250 us here) is a miss
	 * no guard could have caught: counted, but no step */
	int64_t g = waiter_adapt_guard(&w);
	ck_assert_int_eq(waiter_adapt_sample(&w, w.adapt_max_ns + 1), 1);
	ck_assert_int_eq(waiter_adapt_guard(&w), g);
	ck_assert_uint_eq(c->adapt_misses, 2);
	ck_assert_uint_eq(c->adapt_beyond, 1);
	ck_assert_int_eq(waiter_adapt_sample(&w, w.adapt_max_ns), 1); /* within reach: a step */
	ck_assert_int_gt(waiter_adapt_guard(&w), g);
	ck_assert_uint_eq(c->adapt_beyond, 1);

	/* halving: WAITER_ADAPT_HALVE_NS of 1 kHz sleeps in time, from 100 us */
	ck_assert_int_eq(waiter_set_adaptive(&w, WAITER_ADAPT_MIN_GUARD_NS, WAITER_ADAPT_MAX_GUARD_NS), 0);
	ck_assert_int_eq(feed(half, 0), 0);
	ck_assert_int_le(llabs(waiter_adapt_guard(&w) - 50 * US), 1);

	/* slow rates: steps spread over WAITER_ADAPT_MIN_STEPS periods, not one */
	ck_assert_int_eq(waiter_init(&w, WAIT_ADAPTIVE, 100 * MS, &h), 0);
	ck_assert_double_eq_tol(pow(w.adapt_down, WAITER_ADAPT_MIN_STEPS), 0.5, 1e-9);
	ck_assert_int_eq(w.adapt_max_ns, WAITER_ADAPT_MAX_GUARD_NS); /* 25 ms budget, 1 ms cap */
}
END_TEST

/* Bounds: all misses stop at the spin budget, none at the minimum; min ==
 * max is a fixed guard; the budget is a share of the period. */
START_TEST(test_adaptive_bounds)
{
	hist_init(&h);
	ck_assert_int_eq(waiter_init(&w, WAIT_ADAPTIVE, MS, &h), 0);
	ck_assert_int_gt(feed(100, MS * WAITER_ADAPT_BUDGET_PCT / 100), 0);
	ck_assert_int_eq(waiter_adapt_guard(&w), MS * WAITER_ADAPT_BUDGET_PCT / 100);
	feed(200000, 0);
	ck_assert_int_eq(waiter_adapt_guard(&w), WAITER_ADAPT_MIN_GUARD_NS);

	ck_assert_int_eq(waiter_set_adaptive(&w, 100 * US, 100 * US), 0);
	ck_assert_int_eq(waiter_adapt_guard(&w), 100 * US);
	feed(1000, 0);
	ck_assert_int_eq(waiter_adapt_guard(&w), 100 * US);
	feed(1000, 5 * MS);
	ck_assert_int_eq(waiter_adapt_guard(&w), 100 * US);

	ck_assert_int_eq(waiter_init(&w, WAIT_ADAPTIVE, 100 * US, &h), 0);
	ck_assert_int_eq(w.adapt_max_ns, 25 * US);
	ck_assert_int_eq(waiter_adapt_guard(&w), 25 * US); /* the first guard, held to the budget */
	ck_assert_int_eq(waiter_set_adaptive(&w, 50 * US, 60 * US), 0);
	ck_assert_int_eq(w.adapt_min_ns, 25 * US);
	ck_assert_int_eq(w.adapt_max_ns, 25 * US);
}
END_TEST

/* The tail that matters: on a steady load the guard settles between the
 * sleep lateness's p99.9 and p99.99, and the sleeps that miss the deadline
 * are held at WAITER_ADAPT_MISS_PPM, under 0.1%: the p99.9 of the lateness
 * is the spin's (0 here, where the spin ends exactly at the deadline). Held,
 * not aimed at: while the bounds do not bind, the misses over n sleeps are
 * exactly m (n + ln(g_end / g_start) / ln(1 / down)) (waiter.h), whatever
 * the lateness was. */
START_TEST(test_adaptive_steady)
{
	struct run r;
	const int n = 200000;
	const double m = WAITER_ADAPT_MISS_PPM / 1e6;
	double g0, held;
	int64_t p;

	hist_init(&h);
	ck_assert_int_eq(waiter_init(&w, WAIT_ADAPTIVE, MS, &h), 0);
	stream(20000, 20 * US, 10 * US, 0, 0); /* settle */
	g0 = w.adapt_g;
	hist_init(&h);
	r = stream(n, 20 * US, 10 * US, 0, 0);
	ck_assert_int_gt(r.min_guard, w.adapt_min_ns); /* the bounds did not bind */
	ck_assert_int_lt(r.max_guard, w.adapt_max_ns);
	held = m * (n + log(w.adapt_g / g0) / -log(w.adapt_down));
	ck_assert_double_eq_tol((double)r.misses, held, 1e-3);
	ck_assert_double_gt(r.misses, n * m / 2);
	ck_assert_double_lt(r.misses, n * m * 1.5);
	ck_assert_int_lt(r.misses, n / 1000);
	ck_assert_double_ge(r.mean_guard, (double)quantile(20 * US, 10 * US, 0.999));
	ck_assert_double_le(r.mean_guard, (double)quantile(20 * US, 10 * US, 0.9999));
	/* the lateness the waits would have had (stream records it): p99 and
	 * p99.9 at the spin's floor, the misses only beyond */
	ck_assert_int_eq(hist_percentile(&h, 99.9, &p), 0);
	ck_assert_int_eq(p, 0);
	ck_assert_int_eq(hist_percentile(&h, 99.99, &p), 0);
	ck_assert_int_gt(p, 0);
}
END_TEST

/* A stall of the machine is a miss no guard could have caught: a 5 ms spike
 * every 5000 sleeps (0.02%, well within the p99.9's budget) leaves the guard
 * exactly where the same stream without them takes it (the spikes replace
 * samples, the others are the same), and the guard never comes near the
 * budget. */
START_TEST(test_adaptive_spikes)
{
	struct run r, plain;
	const uint64_t seed = rng;
	int64_t g_plain;

	hist_init(&h);
	ck_assert_int_eq(waiter_init(&w, WAIT_ADAPTIVE, MS, &h), 0);
	plain = stream(50000, 20 * US, 10 * US, 0, 0);
	g_plain = waiter_adapt_guard(&w);
	rng = seed;
	ck_assert_int_eq(waiter_init(&w, WAIT_ADAPTIVE, MS, &h), 0);
	r = stream(50000, 20 * US, 10 * US, 5000, 5 * MS);
	ck_assert_uint_eq(waiter_counters(&w)->adapt_beyond, 10);
	ck_assert_uint_eq(waiter_counters(&w)->adapt_body, 0);
	ck_assert_int_ge(r.misses, 10);
	/* the spikes took the place of 10 samples: at most their steps differ */
	ck_assert_double_le(fabs(log((double)waiter_adapt_guard(&w) / (double)g_plain)), 10 * log(w.adapt_up));
	ck_assert_int_lt(r.max_guard, w.adapt_max_ns);
	ck_assert_int_le(r.max_guard, plain.max_guard * 2);
}
END_TEST

/* Out of reach: stalls beyond the largest guard in 0.2% of the sleeps make
 * the p99.9 that of the stalls whatever the guard, so the guard stops
 * buying it: it follows the body's target (misses at
 * WAITER_ADAPT_BODY_MISS_PPM: the p99 at the floor) and costs less; the
 * stalls gone, the tail's target is back. */
START_TEST(test_adaptive_out_of_reach)
{
	struct run r, tail;

	hist_init(&h);
	ck_assert_int_eq(waiter_init(&w, WAIT_ADAPTIVE, MS, &h), 0);
	tail = stream(30000, 20 * US, 10 * US, 0, 0);
	ck_assert(waiter_adapt_tail(&w));
	stream(20000, 20 * US, 10 * US, 500, 5 * MS); /* the share climbs past WAITER_ADAPT_REACH_PPM */
	ck_assert(!waiter_adapt_tail(&w));
	r = stream(50000, 20 * US, 10 * US, 500, 5 * MS);
	ck_assert_uint_gt(waiter_counters(&w)->adapt_body, 45000);
	/* the body's misses: 0.8% of the sleeps within reach, plus the stalls */
	ck_assert_double_gt(r.misses, 50000 * 0.004);
	ck_assert_double_lt(r.misses, 50000 * 0.015);
	ck_assert_double_le(r.mean_guard, (double)quantile(20 * US, 10 * US, 0.999));
	ck_assert_double_lt(r.mean_guard, tail.mean_guard);
	stream(20000, 20 * US, 10 * US, 0, 0);
	ck_assert(waiter_adapt_tail(&w));
}
END_TEST

/* One burst is not a rate: a host that takes the CPU away for a few ms once
 * makes 5 sleeps in a row stalls (0.1% of the last 5000, 0.01% of 50,000).
 * The tail's target holds: no sleep is learnt with the body's, and over
 * the 50,005 sleeps the misses, the burst's among them, stay under 0.1%:
 * the p99.9 at the spin's floor. (Judged on the last 5000 sleeps alone,
 * the burst gave up the tail for some 4600 sleeps, whose 0.8% of misses
 * took the p99.9 out of the floor.) */
START_TEST(test_adaptive_burst)
{
	int64_t p;

	hist_init(&h);
	ck_assert_int_eq(waiter_init(&w, WAIT_ADAPTIVE, MS, &h), 0);
	stream(30000, 20 * US, 10 * US, 0, 0);
	for (int i = 0; i < 5; i++) {
		hist_record(&h, 5 * MS - waiter_adapt_guard(&w));
		ck_assert_int_eq(waiter_adapt_sample(&w, 5 * MS), 1);
		ck_assert(waiter_adapt_tail(&w));
	}
	stream(20000, 20 * US, 10 * US, 0, 0);
	ck_assert_uint_eq(waiter_counters(&w)->adapt_beyond, 5);
	ck_assert_uint_eq(waiter_counters(&w)->adapt_body, 0);
	ck_assert_uint_lt(waiter_counters(&w)->adapt_misses, 50);
	ck_assert_int_eq(hist_percentile(&h, 99.9, &p), 0);
	ck_assert_int_eq(p, 0);
}
END_TEST

/* Load changes, at 1 kHz: twice the lateness, and within a few
 * seconds the guard is above the new p99.9 after few misses (the misses
 * come one in hundreds: a quantile that far out is found by counting them);
 * over the seconds after that the misses are held near WAITER_ADAPT_MISS_PPM.
 * The load gone, the guard halves every WAITER_ADAPT_HALVE_NS until it is
 * back at the old p99.99 or under, but for a miss's step. */
START_TEST(test_adaptive_load_change)
{
	struct run r;
	const int64_t old_top = quantile(20 * US, 10 * US, 0.9999);

	hist_init(&h);
	ck_assert_int_eq(waiter_init(&w, WAIT_ADAPTIVE, MS, &h), 0);
	stream(30000, 20 * US, 10 * US, 0, 0);
	ck_assert_int_lt(waiter_adapt_guard(&w), old_top);
	r = stream(5000, 20 * US, 20 * US, 0, 0);
	ck_assert_int_lt(r.misses, 5000 / 50); /* it rises on a few, not by chasing each */
	ck_assert_int_ge(waiter_adapt_guard(&w), quantile(20 * US, 20 * US, 0.99));
	r = stream(50000, 20 * US, 20 * US, 0, 0);
	ck_assert_double_ge(r.mean_guard, (double)quantile(20 * US, 20 * US, 0.999));
	ck_assert_double_lt(r.misses, 50000 * 2 * (WAITER_ADAPT_MISS_PPM / 1e6));
	stream(2 * (int)(WAITER_ADAPT_HALVE_NS / MS), 20 * US, 10 * US, 0, 0);
	r = stream((int)(WAITER_ADAPT_HALVE_NS / MS), 20 * US, 10 * US, 0, 0);
	ck_assert_double_le(r.mean_guard, (double)old_top);
	ck_assert_int_le(waiter_adapt_guard(&w), old_top * w.adapt_up); /* a miss's step at most */
}
END_TEST

/* Live: every clock_nanosleep of adaptive is one learning sample (no signals
 * here, so no EINTR retries), the guard always lies within its bounds, and a
 * miss is exactly a sleep that woke after the deadline: then the wait spins
 * not once and records a lateness > 0; a sleep that woke in time spins to the
 * deadline (or woke exactly on it, lateness 0). Each wait gets a fresh
 * histogram, so its maximum is that wait's lateness. */
START_TEST(test_adaptive_live)
{
	const struct waiter_counters *c = waiter_counters(&w);
	const int n = 300;
	uint64_t slept = 0, missed = 0;

	hist_init(&h);
	ck_assert_int_eq(waiter_init(&w, WAIT_ADAPTIVE, MS, &h), 0);
	for (int i = 0; i < n; i++) {
		struct waiter_counters before = *c;
		int miss, spun;

		hist_init(&h);
		ck_assert_int_ge(waiter_wait(&w), 0);
		ck_assert_int_ge(waiter_adapt_guard(&w), w.adapt_min_ns);
		ck_assert_int_le(waiter_adapt_guard(&w), w.adapt_max_ns);
		ck_assert_uint_eq(hist_count(&h), 1);
		ck_assert_uint_eq(hist_early(&h), 0);
		if (c->late_entry != before.late_entry)
			continue; /* entered after the deadline: no sleep, nothing learnt */
		ck_assert_uint_eq(c->adapt_samples - before.adapt_samples, c->nanosleeps - before.nanosleeps);
		if (c->nanosleeps == before.nanosleeps)
			continue; /* entered within the guard: spun only */
		slept++;
		miss = (int)(c->adapt_misses - before.adapt_misses);
		spun = c->spins != before.spins;
		missed += (uint64_t)miss;
		ck_assert_int_eq(miss, (!spun && hist_max(&h) > 0));
	}
	ck_assert_uint_eq(c->adapt_samples, c->nanosleeps);
	ck_assert_uint_eq(c->adapt_misses, missed);
	ck_assert_uint_ge(slept, 1);
	ck_assert_uint_eq(c->polls, 0);
	ck_assert_uint_eq(c->yields, 0);
	ck_assert_uint_eq(c->waits, n);
}
END_TEST

/* Busy: clock reads only, a sched_yield every WAITER_BUSY_YIELD_EVERY. */
START_TEST(test_busy_yields)
{
	const struct waiter_counters *c = waiter_counters(&w);

	hist_init(&h);
	ck_assert_int_eq(waiter_init(&w, WAIT_BUSY, MS, &h), 0);
	for (int i = 0; i < 10; i++)
		ck_assert_int_ge(waiter_wait(&w), 0);
	ck_assert_uint_eq(c->nanosleeps, 0);
	ck_assert_uint_eq(c->polls, 0);
	ck_assert_uint_ge(c->spins, 1);
	ck_assert_uint_le(c->yields, c->spins / WAITER_BUSY_YIELD_EVERY);
}
END_TEST

/* Probe parameters: SCHED_OTHER on CPU 0, 1 ms. */
static struct probe_params params(const char *name, bool noise)
{
	struct probe_params p = { .cpu = 0, .policy = SCHED_OTHER, .priority = 0,
				  .period_ns = MS, .strategy = WAIT_SLEEP, .noise = noise };

	snprintf(p.name, sizeof(p.name), "%s", name);
	return p;
}

/* Wait (up to 20 s, for loaded machines) until the probe has n samples. */
static void await_samples(const struct probe *pr, uint64_t n)
{
	static struct hist snap;

	for (int i = 0; i < 2000; i++) {
		ck_assert_int_eq(hist_snapshot(probe_hist(pr), &snap, 1000), 0);
		if (hist_count(&snap) >= n)
			break;
		stall(10 * MS);
	}
	ck_assert_uint_ge(hist_count(&snap), n);
	ck_assert_uint_eq(hist_early(&snap), 0);
	ck_assert_int_eq(probe_error(pr), 0);
}

/* What the kernel says about the probe thread: CPU, policy, priority, name. */
static void check_thread(const struct probe *pr, int policy, int priority, const char *comm)
{
	struct sched_param sp;
	cpu_set_t set;
	char path[64], buf[32] = "";
	FILE *f;
	pid_t tid = probe_tid(pr);

	ck_assert_int_gt(tid, 0);
	ck_assert_int_eq(sched_getaffinity(tid, sizeof(set), &set), 0);
	ck_assert_int_eq(CPU_COUNT(&set), 1);
	ck_assert(CPU_ISSET(probe_params(pr)->cpu, &set));
	ck_assert_int_eq(sched_getscheduler(tid) & ~SCHED_RESET_ON_FORK, policy);
	ck_assert_int_eq(sched_getparam(tid, &sp), 0);
	ck_assert_int_eq(sp.sched_priority, priority);
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), f));
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	ck_assert_str_eq(buf, comm);
}

START_TEST(test_probe_invalid)
{
	struct probe_params p = params("bad", false);
	struct probe *pr = (struct probe *)&p;

	p.priority = 10; /* SCHED_OTHER takes 0 only */
	ck_assert_int_eq(probe_start(&pr, &p), -EINVAL);
	ck_assert_ptr_null(pr);
	p = params("bad", false);
	p.policy = 42;
	ck_assert_int_eq(probe_start(&pr, &p), -EINVAL);
	p = params("bad", false);
	p.policy = SCHED_FIFO;
	p.priority = 100;
	ck_assert_int_eq(probe_start(&pr, &p), -EINVAL);
	p = params("bad", false);
	p.period_ns = 999;
	ck_assert_int_eq(probe_start(&pr, &p), -EINVAL);
	p = params("bad", false);
	p.cpu = -2;
	ck_assert_int_eq(probe_start(&pr, &p), -EINVAL);
	p = params("bad", false);
	p.strategy = WAIT__MAX;
	ck_assert_int_eq(probe_start(&pr, &p), -EINVAL);
	probe_stop(NULL);
}
END_TEST

/* A latency probe per strategy, SCHED_OTHER: pinned, named, measuring, and
 * stop returns (the test's timeout is the bound). */
START_TEST(test_probe_latency)
{
	struct probe_params p = params("a-long-probe-name", false);
	struct probe *pr;

	p.strategy = (enum waiter_strategy)_i;
	ck_assert_int_eq(probe_start(&pr, &p), 0);
	check_thread(pr, SCHED_OTHER, 0, "probe-a-long-pr");
	ck_assert_str_eq(probe_params(pr)->name, "a-long-probe-name");
	await_samples(pr, 5);
	probe_stop(pr);
}
END_TEST

/* The real-time case: only where this process may be real-time (main). */
START_TEST(test_probe_fifo)
{
	struct probe_params p = params("fifo", false);
	struct probe *pr;

	p.policy = SCHED_FIFO;
	p.priority = 10;
	ck_assert_int_eq(probe_start(&pr, &p), 0);
	check_thread(pr, SCHED_FIFO, 10, "probe-fifo");
	await_samples(pr, 5);
	probe_stop(pr);
}
END_TEST

/* A noise probe spins, records one sample per 1 ms window, and stops. */
START_TEST(test_probe_noise)
{
	struct probe_params p = params("noise", true);
	struct probe *pr;

	ck_assert_int_eq(probe_start(&pr, &p), 0);
	check_thread(pr, SCHED_OTHER, 0, "probe-noise");
	await_samples(pr, 3);
	probe_stop(pr);
}
END_TEST

/* All tests in one suite; timeouts allow for valgrind and loaded machines. */
static Suite *waiter_suite(void)
{
	Suite *s = suite_create("waiter");
	TCase *tc = tcase_create("core");
	TCase *tp = tcase_create("probe");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_init_invalid);
	tcase_add_loop_test(tc, test_lateness_per_wakeup, 0, WAIT__MAX);
	tcase_add_loop_test(tc, test_overruns, 0, WAIT__MAX);
	tcase_add_loop_test(tc, test_no_drift, 0, WAIT__MAX);
	tcase_add_test(tc, test_hybrid_branch_edges);
	tcase_add_loop_test(tc, test_hybrid_branch_live, 0,
			    (int)(sizeof(branch_cases) / sizeof(branch_cases[0])));
	tcase_add_test(tc, test_adaptive_steps);
	tcase_add_test(tc, test_adaptive_bounds);
	tcase_add_test(tc, test_adaptive_steady);
	tcase_add_test(tc, test_adaptive_spikes);
	tcase_add_test(tc, test_adaptive_out_of_reach);
	tcase_add_test(tc, test_adaptive_burst);
	tcase_add_test(tc, test_adaptive_load_change);
	tcase_add_test(tc, test_adaptive_live);
	tcase_add_test(tc, test_busy_yields);
	suite_add_tcase(s, tc);
	tcase_set_timeout(tp, 60);
	tcase_add_test(tp, test_probe_invalid);
	tcase_add_loop_test(tp, test_probe_latency, 0, WAIT__MAX);
	if (unit_can_realtime())
		tcase_add_test(tp, test_probe_fifo);
	else
		unit_skip("test_probe_fifo: this process may not be SCHED_FIFO 10 (no CAP_SYS_NICE, RLIMIT_RTPRIO < 10)");
	tcase_add_test(tp, test_probe_noise);
	suite_add_tcase(s, tp);
	return s;
}

int main(void)
{
	return unit_run(waiter_suite());
}
