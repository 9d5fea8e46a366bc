/* test-safety.c: the watchdog's decisions without threads: suspend and stop
 * detection from the two clocks, the stall window, a simulated CPU under
 * the loads that must and must not trip it, the choice of the culprit and
 * of the threads to demote (stat parsing: test-proc). */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "daemon/watchdog/safety.h"

#define MS 1000000ull
#define S 1000000000ull

START_TEST(test_clock_ok)
{
	struct safety_clocks a = { 10 * S, 50 * S }, b = { 10 * S + 250 * MS, 50 * S + 250 * MS };

	ck_assert_int_eq(safety_clock_check(&a, &b, 250 * MS, false), SAFETY_CLOCK_OK);
	/* a watchdog a little late, and the clocks read a little apart */
	b.mono += 60 * MS;
	b.boot += 90 * MS;
	ck_assert_int_eq(safety_clock_check(&a, &b, 250 * MS, false), SAFETY_CLOCK_OK);
}
END_TEST

START_TEST(test_clock_suspend)
{
	/* 3 s of freezing and thawing on MONOTONIC, 60 s asleep on BOOTTIME only */
	struct safety_clocks a = { 10 * S, 50 * S }, b = { 13 * S, 113 * S };

	ck_assert_int_eq(safety_clock_check(&a, &b, 250 * MS, false), SAFETY_CLOCK_SUSPENDED);
	/* even a short suspend within one period */
	b = (struct safety_clocks){ 10 * S + 250 * MS, 50 * S + 500 * MS };
	ck_assert_int_eq(safety_clock_check(&a, &b, 250 * MS, false), SAFETY_CLOCK_SUSPENDED);
}
END_TEST

START_TEST(test_clock_late)
{
	/* the whole daemon was stopped for 3 s: both clocks ran */
	struct safety_clocks a = { 10 * S, 50 * S }, b = { 13 * S, 53 * S };

	ck_assert_int_eq(safety_clock_check(&a, &b, 250 * MS, false), SAFETY_CLOCK_LATE);
	/* short periods still allow 100 ms of lateness */
	b = (struct safety_clocks){ 10 * S + 120 * MS, 50 * S + 120 * MS };
	ck_assert_int_eq(safety_clock_check(&a, &b, 25 * MS, false), SAFETY_CLOCK_OK);
	b = (struct safety_clocks){ 10 * S + 130 * MS, 50 * S + 130 * MS };
	ck_assert_int_eq(safety_clock_check(&a, &b, 25 * MS, false), SAFETY_CLOCK_LATE);
	/* a canary ticked meanwhile: the daemon ran, only the watchdog was held
	 * (in a lookup of /proc): judged, not started over */
	b = (struct safety_clocks){ 13 * S, 53 * S };
	ck_assert_int_eq(safety_clock_check(&a, &b, 250 * MS, true), SAFETY_CLOCK_OK);
	/* a suspend is one whatever the canaries did */
	b = (struct safety_clocks){ 13 * S, 113 * S };
	ck_assert_int_eq(safety_clock_check(&a, &b, 250 * MS, true), SAFETY_CLOCK_SUSPENDED);
}
END_TEST

START_TEST(test_stall_now)
{
	/* not yet due, or due but within the floor: only the total */
	ck_assert_uint_eq(safety_stall_now(7, 100 * MS, 0, 90 * MS, 50 * MS), 7);
	ck_assert_uint_eq(safety_stall_now(7, 100 * MS, 0, 140 * MS, 50 * MS), 7);
	/* overdue past the floor: the whole wait counts */
	ck_assert_uint_eq(safety_stall_now(7, 100 * MS, 0, 300 * MS, 50 * MS), 7 + 200 * MS);
	/* a restart after the deadline: only what came after it */
	ck_assert_uint_eq(safety_stall_now(0, 100 * MS, 1000 * MS, 1300 * MS, 50 * MS), 300 * MS);
	ck_assert_uint_eq(safety_stall_now(0, 100 * MS, 1000 * MS, 1040 * MS, 50 * MS), 0);
}
END_TEST

START_TEST(test_window)
{
	struct safety_window w;

	ck_assert_int_eq(safety_window_init(&w, 4), 0);
	ck_assert_uint_eq(w.size, 5);
	ck_assert_uint_eq(safety_window_push(&w, 100), 0);    /* baseline */
	ck_assert_uint_eq(safety_window_push(&w, 150), 50);
	ck_assert_uint_eq(safety_window_push(&w, 400), 300);
	ck_assert_uint_eq(safety_window_push(&w, 400), 300);
	ck_assert_uint_eq(safety_window_push(&w, 400), 300);  /* full: 100 is still the oldest */
	ck_assert_uint_eq(safety_window_push(&w, 400), 250);  /* 100 fell out, 150 is the oldest */
	ck_assert_uint_eq(safety_window_push(&w, 400), 0);
	/* a total that went down (a wait seen, then not) never wraps */
	ck_assert_uint_eq(safety_window_push(&w, 300), 0);
	safety_window_reset(&w);
	ck_assert_uint_eq(safety_window_push(&w, 1000), 0);
	ck_assert_uint_eq(safety_window_push(&w, 1200), 200);
	safety_window_done(&w);
}
END_TEST

/* A CPU simulated in 1 ms steps: busy(t) says whether real-time threads hold
 * it at t ms; the canary runs whenever it is free and due and ticks as
 * canary.c does (seeded with `seed`), the watchdog samples every tick as
 * safety.c does. Returns the ms of the trip, or -1. */
static long simulate_seed(bool (*busy)(long t), unsigned threshold_ms, long for_ms, uint64_t seed)
{
	uint64_t tick = threshold_ms * MS / SAFETY_TICKS_PER_THRESHOLD, floor = SAFETY_FLOOR_MS * MS;
	uint64_t deadline = tick, stall = 0, next_check = tick, alert = 0, rng = seed | 1;
	struct safety_window w;
	long trip = -1;

	ck_assert_int_eq(safety_window_init(&w, SAFETY_WINDOW_FACTOR * SAFETY_TICKS_PER_THRESHOLD), 0);
	safety_window_push(&w, 0);
	for (long t = 0; t < for_ms && trip < 0; t++) {
		uint64_t now = (uint64_t)t * MS;
		if (now >= deadline && !busy(t)) {
			uint64_t late = now - deadline;
			if (late > floor)
				stall += late;
			deadline = safety_canary_next(now, late, tick, threshold_ms * MS * SAFETY_WINDOW_FACTOR,
						      &alert, &rng);
		}
		if (now >= next_check) {
			if (safety_window_push(&w, safety_stall_now(stall, deadline, 0, now, floor)) >= threshold_ms * MS)
				trip = t;
			next_check = now + tick;
		}
	}
	safety_window_done(&w);
	return trip;
}

/* The same load with 16 seeds of the canary's ticks: the latest trip (-1
 * if any seed did not trip), or with `any`, -1 only if no seed tripped. */
static long simulate_seeds(bool (*busy)(long t), unsigned threshold_ms, long for_ms, bool any)
{
	long worst = 0;

	for (uint64_t seed = 1; seed <= 16; seed++) {
		long t = simulate_seed(busy, threshold_ms, for_ms, seed * 0x9E3779B97F4A7C15ull);
		if (any && t >= 0)
			return t;
		if (!any && t < 0)
			return -1;
		if (t > worst)
			worst = t;
	}
	return any ? -1 : worst;
}
/* every seed trips: the latest trip, or -1 */
static long simulate(bool (*busy)(long t), unsigned threshold_ms, long for_ms)
{
	return simulate_seeds(busy, threshold_ms, for_ms, false);
}
/* no seed trips */
static bool never_trips(bool (*busy)(long t), unsigned threshold_ms, long for_ms)
{
	return simulate_seeds(busy, threshold_ms, for_ms, true) < 0;
}

/* rt throttling: the spinner runs 950 ms of each second */
static bool throttled_spinner(long t) { return t % 1000 < 950; }
/* what this machine's kernel showed: ~950 ms held, then ~1 s free */
static bool served_spinner(long t) { return t % 1950 < 950; }
/* RT throttling off: the CPU is gone */
static bool full_spinner(long t) { return true; }
/* an audio-like load: 10 ms of every 20 ms */
static bool duty(long t) { return t % 20 < 10; }
/* one long burst (a 900 ms hiccup) every 10 s */
static bool hiccup(long t) { return t % 10000 < 900; }
/* two 600 ms bursts a second apart: 1.2 s within the window */
static bool two_bursts(long t) { return (t >= 1000 && t < 1600) || (t >= 2600 && t < 3200); }
/* serial spinners whose gaps a canary re-armed at wake-up + tick would lock
 * onto (threshold 1 s, tick 125 ms): 150 ms on, 10 off (it would wait 35 ms
 * at each tick, under the floor); 95 on, 25 off (each tick in a gap) */
static bool locked_150(long t) { return t % 160 < 150; }
static bool locked_95(long t) { return t % 120 < 95; }
/* tests/watchdog-attacks.sh part B on a busy machine: 95 on, 20 off */
static bool serial_95(long t) { return t % 115 < 95; }

START_TEST(test_simulated_loads)
{
	/* each load trips (with every seed of the canary's ticks) within [lo, hi] ms */
	static const struct {
		const char *what;
		bool (*busy)(long t);
		unsigned threshold_ms;
		long for_ms, lo, hi;
	} trips[] = {
		{ "full starvation", full_spinner, 2000, 60000, 2000, 2500 },
		{ "throttled spinner", throttled_spinner, 2000, 60000, 1, 4000 },
		{ "spinner with a fair server", served_spinner, 2000, 60000, 1, 8000 },
		{ "threshold 1 s", served_spinner, 1000, 60000, 1, 4000 },
		{ "two bursts", two_bursts, 1000, 10000, 1, 3300 },
		/* periodic bursts longer than the floor, whatever their phase */
		{ "150 on, 10 off", locked_150, 1000, 60000, 1, 4000 },
		{ "95 on, 25 off", locked_95, 1000, 60000, 1, 4000 },
		{ "95 on, 20 off", serial_95, 1000, 60000, 1, 4000 },
	};

	for (size_t i = 0; i < sizeof(trips) / sizeof(trips[0]); i++) {
		long t = simulate(trips[i].busy, trips[i].threshold_ms, trips[i].for_ms);
		ck_assert_msg(t >= trips[i].lo && t <= trips[i].hi, "%s: tripped at %ld ms", trips[i].what, t);
	}
	ck_assert(never_trips(duty, 2000, 60000));
	ck_assert(never_trips(duty, SAFETY_THRESHOLD_MS_MIN, 60000));
	ck_assert(never_trips(hiccup, 2000, 60000));
	ck_assert(never_trips(hiccup, 1000, 60000));
}
END_TEST

START_TEST(test_culprit)
{
	struct proc_stat t[6] = {
		{ .tid = 10, .state = 'S', .processor = 0, .policy = SCHED_FIFO, .rt_priority = 80 },  /* asleep */
		{ .tid = 11, .state = 'R', .processor = 1, .policy = SCHED_FIFO, .rt_priority = 70 },  /* elsewhere */
		{ .tid = 12, .state = 'R', .processor = 0, .policy = SCHED_RR, .rt_priority = 40, .cputime = 10 },
		{ .tid = 13, .state = 'R', .processor = 0, .policy = SCHED_FIFO, .rt_priority = 40, .cputime = 20 },
		{ .tid = 14, .state = 'R', .processor = 0, .policy = SCHED_OTHER },                     /* demoted */
		{ .tid = 15, .state = 'X', .processor = 0, .policy = SCHED_FIFO, .rt_priority = 90 },  /* gone */
	};

	ck_assert_int_eq(safety_pick_culprit(t, 6, 0), 3);   /* same priority: the most CPU time */
	t[2].rt_priority = 45;
	ck_assert_int_eq(safety_pick_culprit(t, 6, 0), 2);   /* the highest priority */
	ck_assert_int_eq(safety_pick_culprit(t, 6, 1), 1);
	ck_assert_int_eq(safety_pick_culprit(t, 6, 2), -1);
	ck_assert_int_eq(safety_pick_culprit(t, 0, 0), -1);
}
END_TEST

/* Who is blamed for a starved CPU, from what each ran there (issue 23):
 * the biggest, until the rest ran less than half of it all. */
START_TEST(test_share)
{
	/* a spinner, an audio thread at 10% and an idle one, threshold 1 s */
	uint64_t ran[3] = { 38 * S / 10, 4 * S / 10, 0 };
	bool pick[3];

	ck_assert_uint_eq(safety_pick_share(ran, 3, S, pick), 1);
	ck_assert(pick[0] && !pick[1] && !pick[2]);
	/* an innocent thread using 30% of the CPU beside a runaway that got the
	 * rest of what throttling leaves (65%): the runaway alone (before, the
	 * innocent 1.2 s was over the threshold and it was demoted too) */
	ran[0] = 26 * S / 10;
	ran[1] = 12 * S / 10;
	ck_assert_uint_eq(safety_pick_share(ran, 3, S, pick), 1);
	ck_assert(pick[0] && !pick[1] && !pick[2]);
	/* two runaways sharing it equally: both */
	ran[0] = 19 * S / 10;
	ran[1] = 19 * S / 10;
	ck_assert_uint_eq(safety_pick_share(ran, 3, S, pick), 2);
	ck_assert(pick[0] && pick[1] && !pick[2]);
	/* as measured, one of them a little ahead: still both */
	ran[0] = 191 * S / 100;
	ran[1] = 187 * S / 100;
	ck_assert_uint_eq(safety_pick_share(ran, 3, S, pick), 2);
	ck_assert(pick[0] && pick[1] && !pick[2]);
	/* an innocent at 40% beside a runaway at 60%: the runaway alone */
	ran[0] = 24 * S / 10;
	ran[1] = 16 * S / 10;
	ck_assert_uint_eq(safety_pick_share(ran, 3, S, pick), 1);
	ck_assert(pick[0] && !pick[1] && !pick[2]);
	/* many small ones (a serial dodge's threads, as users they add up) */
	uint64_t small[5] = { 5 * S / 10, 4 * S / 10, 3 * S / 10, 2 * S / 10, 1 * S / 10 };
	bool p5[5];
	ck_assert_uint_eq(safety_pick_share(small, 5, S, p5), 2);   /* 0.9 of 1.5 s */
	ck_assert(p5[0] && p5[1] && !p5[2]);
	/* all of them together too little: the stall is someone else's */
	ran[0] = 5 * S / 10;
	ran[1] = 4 * S / 10;
	ran[2] = 0;
	ck_assert_uint_eq(safety_pick_share(ran, 3, S, pick), 0);
	ck_assert(!pick[0] && !pick[1] && !pick[2]);
	ck_assert_uint_eq(safety_pick_share(ran, 0, S, pick), 0);
}
END_TEST

/* Three users on a starved CPU (runaway.sh's flake): an unmanaged runaway
 * that ran 0.6 s, a steady audio thread that ran 0.3 s of the 3.4 s it was
 * there, and a runaway that began 0.25 s ago and ran all of it. The share
 * alone blames the runaway and the audio thread (the rest after the first,
 * 0.55 s, is near half of 1.15 s); the audio thread's 9% is let off, as the
 * runaway's 0.6 s alone accounts for the stall. */
START_TEST(test_duty)
{
	uint64_t ran[3] = { 6 * S / 10, 3 * S / 10, 25 * S / 100 };
	uint64_t span[3] = { 6 * S / 10, 34 * S / 10, 25 * S / 100 };
	bool pick[3];

	ck_assert_uint_eq(safety_pick_share(ran, 3, S / 2, pick), 2);
	ck_assert(pick[0] && pick[1] && !pick[2]);
	ck_assert_uint_eq(safety_pick_duty(ran, span, 3, S / 2, pick), 1);
	ck_assert(pick[0] && !pick[1] && !pick[2]);
	/* two equal runaways: both stay */
	ran[0] = ran[1] = 19 * S / 10;
	span[0] = span[1] = 4 * S;
	ck_assert_uint_eq(safety_pick_share(ran, 2, S / 2, pick), 2);
	ck_assert_uint_eq(safety_pick_duty(ran, span, 2, S / 2, pick), 2);
	ck_assert(pick[0] && pick[1]);
	/* two small shares that only together account for the stall: someone
	 * is blamed all the same, both */
	ran[0] = ran[1] = 3 * S / 10;
	span[0] = span[1] = 34 * S / 10;
	ck_assert_uint_eq(safety_pick_share(ran, 2, S / 2, pick), 2);
	ck_assert_uint_eq(safety_pick_duty(ran, span, 2, S / 2, pick), 2);
	/* of two small shares, the smaller goes first; the other then stays */
	ran[0] = 4 * S / 10;
	ran[1] = 3 * S / 10;
	span[0] = 34 * S / 10;
	span[1] = 36 * S / 10;
	ran[2] = 7 * S / 10;
	span[2] = 7 * S / 10;
	for (int i = 0; i < 3; i++)
		pick[i] = true;
	ck_assert_uint_eq(safety_pick_duty(ran, span, 3, S / 2, pick), 1);
	ck_assert(!pick[0] && !pick[1] && pick[2]);
	ran[2] = 45 * S / 100;   /* now the runaway alone is under the bar: one small share stays */
	span[2] = 45 * S / 100;
	for (int i = 0; i < 3; i++)
		pick[i] = true;
	ck_assert_uint_eq(safety_pick_duty(ran, span, 3, S / 2, pick), 2);
	ck_assert(pick[0] && !pick[1] && pick[2]);
	/* a share at exactly 1/8 is a runaway's */
	ran[0] = S;
	span[0] = 8 * S;
	ran[1] = S;
	span[1] = S;
	pick[0] = pick[1] = true;
	ck_assert_uint_eq(safety_pick_duty(ran, span, 2, S / 2, pick), 2);
}
END_TEST

/* A duty window's verdict (duty.c): a CPU whose managed threads ran the
 * share or more of the span, and no other. */
START_TEST(test_duty_busy)
{
	const uint64_t ms = 1000000;
	uint64_t ran[4] = { 3600 * ms, 3599 * ms, 2000 * ms, 0 }, worst;
	cpu_set_t busy;

	ck_assert_uint_eq(safety_duty_busy(ran, 4, 4000 * ms, 90, &busy, &worst), 1);
	ck_assert(CPU_ISSET(0, &busy) && !CPU_ISSET(1, &busy) && !CPU_ISSET(2, &busy));
	ck_assert_uint_eq(worst, 3600 * ms);
	ck_assert_uint_eq(safety_duty_busy(ran, 4, 4000 * ms, 50, &busy, &worst), 3);
	ck_assert(CPU_ISSET(2, &busy) && !CPU_ISSET(3, &busy));
	/* off, or nothing measured yet */
	ck_assert_uint_eq(safety_duty_busy(ran, 4, 4000 * ms, 0, &busy, &worst), 0);
	ck_assert_uint_eq(safety_duty_busy(ran, 4, 0, 90, &busy, &worst), 0);
	ck_assert_int_eq(CPU_COUNT(&busy), 0);
}
END_TEST

/* What the daemon's own real-time threads may take of a CPU (check's
 * self-rt-group-budget): the loop's budget and the watchdog's scans. */
START_TEST(test_self_share)
{
	ck_assert_int_eq(safety_self_share(1, 10, true), 15);
	ck_assert_int_eq(safety_self_share(1, 10, false), 10);
	ck_assert_int_eq(safety_self_share(0, 10, true), (int)SAFETY_SCAN_SHARE_PCT);
	ck_assert_int_eq(safety_self_share(1, -1, true), 100);   /* a loop without a budget */
	ck_assert_int_eq(safety_self_share(0, 10, false), 0);
}
END_TEST

START_TEST(test_demote_identity)
{
	struct proc_stat st;

	ck_assert_int_eq(proc_read_stat(getpid(), &st), 0);
	/* a reused tid (another start time) is never touched */
	ck_assert_int_eq(safety_demote_tid(getpid(), st.starttime + 1), -ESRCH);
	/* not real-time: nothing to do */
	ck_assert_int_eq(safety_demote_tid(getpid(), st.starttime), 0);
	ck_assert_int_eq(safety_demote_tid(0x3fffffff, 1), -ESRCH);
}
END_TEST

START_TEST(test_disabled)
{
	struct safety_params p = SAFETY_PARAMS_DEFAULT;
	struct safety_thread t = { .tid = getpid(), .pid = getpid() };
	struct safety *s = NULL;
	sd_event *e = NULL;
	struct safety_status st;

	ck_assert_int_ge(sd_event_new(&e), 0);
	p.threshold_ms = 10;
	ck_assert_int_eq(safety_new(&s, e, &p, NULL, NULL), -EINVAL);
	p.threshold_ms = SAFETY_THRESHOLD_MS_DEFAULT;
	p.enabled = false;
	ck_assert_int_eq(safety_new(&s, e, &p, NULL, NULL), 0);
	ck_assert_int_eq(safety_set_threads(s, &t, 1), 0);
	ck_assert(!safety_in_cooldown(s));
	safety_get_status(s, &st);
	ck_assert(!st.enabled);
	ck_assert_uint_eq(st.trips, 0);
	safety_free(s);
	sd_event_unref(e);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("safety");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_clock_ok);
	tcase_add_test(tc, test_clock_suspend);
	tcase_add_test(tc, test_clock_late);
	tcase_add_test(tc, test_stall_now);
	tcase_add_test(tc, test_window);
	tcase_add_test(tc, test_simulated_loads);
	tcase_add_test(tc, test_culprit);
	tcase_add_test(tc, test_share);
	tcase_add_test(tc, test_duty);
	tcase_add_test(tc, test_self_share);
	tcase_add_test(tc, test_duty_busy);
	tcase_add_test(tc, test_demote_identity);
	tcase_add_test(tc, test_disabled);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
