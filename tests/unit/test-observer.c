/* test-observer.c: the daemon's bookkeeping around the BPF observer
 * (observe/observer.c) with the real programs loaded: a thread watched once
 * however often the registry re-applies it, `jitter --reset` as a baseline
 * that since-reset reads subtract exactly, the baseline and the histograms
 * gone with the thread, a full observer said once (and again after a slot
 * came free), and every call safe without an observer (NULL: no BPF). The
 * samples are the kernel's own (a worker thread of the test sleeping on
 * timers); what is asserted is the relation between reads, not how many
 * samples BPF caught. Needs CAP_BPF and CAP_PERFMON (root) and a build with
 * BPF: skipped without. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/observe/observer.h"
#include "unit-util.h"

#define MAX_THREADS 2

static struct observer *o;
static char why[512];
/* the daemon's default threshold (late-threshold-us = 200), no budget */
static const struct observer_limits lim = { .late_ns = 200000 };

/* A thread that sleeps `n` times 1 ms on a timer each time it is told. */
struct sleeper {
	pthread_t th;
	pid_t tid;
	sem_t go, done;
	int n;            /* sleeps to do; -1: exit */
};

static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;
	struct timespec ts = { 0, 1000000 };

	s->tid = gettid();
	sem_post(&s->done);
	for (;;) {
		while (sem_wait(&s->go) < 0)
			;
		if (s->n < 0)
			return NULL;
		for (int i = 0; i < s->n; i++)
			clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
		sem_post(&s->done);
	}
}

static void sleeper_start(struct sleeper *s)
{
	memset(s, 0, sizeof(*s));
	sem_init(&s->go, 0, 0);
	sem_init(&s->done, 0, 0);
	ck_assert_int_eq(pthread_create(&s->th, NULL, sleeper_main, s), 0);
	while (sem_wait(&s->done) < 0)
		;
}

/* n sleeps, and back to waiting for the next order (no timer running). */
static void sleeper_run(struct sleeper *s, int n)
{
	s->n = n;
	sem_post(&s->go);
	while (sem_wait(&s->done) < 0)
		;
}

static void sleeper_stop(struct sleeper *s)
{
	s->n = -1;
	sem_post(&s->go);
	pthread_join(s->th, NULL);
}

static uint64_t count(pid_t tid, enum bpfobs_kind k, bool since_reset)
{
	struct hist h;

	ck_assert_int_eq(observer_read(o, tid, k, since_reset, &h), 0);
	return hist_count(&h);
}

static void setup(void)
{
	ck_assert_msg(observer_new(&o, MAX_THREADS, true, why, sizeof(why)) == 0, "%s", why);
}

static void teardown(void)
{
	observer_free(o);
	o = NULL;
}

/* Watched once; a reset is a baseline that since-reset reads subtract. */
START_TEST(test_reset_baseline)
{
	struct sleeper s;
	unsigned max;
	uint64_t t1, w1, tb, wb, t2;

	sleeper_start(&s);
	observer_watch(o, s.tid, &lim);
	observer_watch(o, s.tid, &lim);   /* re-applied: the same slot, counted once */
	ck_assert_uint_eq(observer_watched(o, &max), 1);
	ck_assert_uint_eq(max, MAX_THREADS);
	sleeper_run(&s, 50);
	t1 = count(s.tid, BPFOBS_TIMER, false);
	w1 = count(s.tid, BPFOBS_WAKEUP, false);
	ck_assert_uint_gt(t1, 0);
	ck_assert_uint_gt(w1, 0);
	/* without a reset, since-reset is everything */
	ck_assert_uint_eq(count(s.tid, BPFOBS_TIMER, true), t1);
	/* a watch of a watched thread keeps its histograms */
	observer_watch(o, s.tid, &lim);
	ck_assert_uint_eq(count(s.tid, BPFOBS_TIMER, false), t1);

	observer_reset(o, s.tid);
	/* only the sleeper's own timers fire, and it is not sleeping now */
	ck_assert_uint_eq(count(s.tid, BPFOBS_TIMER, true), 0);
	/* the baseline is the count at the reset: at least t1/w1, at most what
	 * is read right after it (a stray wake-up may land between reads: under
	 * valgrind its thread lock wakes the sleeper) */
	tb = count(s.tid, BPFOBS_TIMER, false);
	wb = count(s.tid, BPFOBS_WAKEUP, false);
	sleeper_run(&s, 50);
	t2 = count(s.tid, BPFOBS_TIMER, false);
	ck_assert_uint_gt(t2, tb);
	/* since-reset = all - baseline, read in both orders: all after since
	 * gives a bound from below, since after all one from above */
	for (int kind = 0; kind < 2; kind++) {
		enum bpfobs_kind k = kind ? BPFOBS_WAKEUP : BPFOBS_TIMER;
		uint64_t lo = kind ? w1 : t1, hi = kind ? wb : tb;
		uint64_t s1 = count(s.tid, k, true), a1 = count(s.tid, k, false);
		uint64_t a2 = count(s.tid, k, false), s2 = count(s.tid, k, true);
		ck_assert_uint_ge(a1 - s1, lo);
		ck_assert_uint_le(a2 - s2, hi);
	}
	/* a second reset replaces the first */
	observer_reset(o, s.tid);
	ck_assert_uint_eq(count(s.tid, BPFOBS_TIMER, true), 0);
	ck_assert_uint_eq(count(s.tid, BPFOBS_TIMER, false), t2);

	/* unwatched: nothing to read; watched again: fresh, no old baseline */
	observer_unwatch(o, s.tid);
	ck_assert_uint_eq(observer_watched(o, NULL), 0);
	struct hist h;
	ck_assert_int_eq(observer_read(o, s.tid, BPFOBS_TIMER, false, &h), -ENOENT);
	observer_unwatch(o, s.tid);   /* twice: nothing happens */
	ck_assert_uint_eq(observer_watched(o, NULL), 0);
	observer_watch(o, s.tid, &lim);
	ck_assert_uint_eq(count(s.tid, BPFOBS_TIMER, false), 0);
	ck_assert_uint_eq(count(s.tid, BPFOBS_TIMER, true), 0);
	sleeper_run(&s, 20);
	ck_assert_uint_eq(count(s.tid, BPFOBS_TIMER, true), count(s.tid, BPFOBS_TIMER, false));
	observer_reset(o, s.tid);   /* a baseline left for observer_free */
	sleeper_stop(&s);
}
END_TEST

/* All slots taken: said once, not per thread; once a slot came free and
 * the observer filled up again, said again. */
START_TEST(test_full)
{
	struct sleeper s[MAX_THREADS + 2];

	for (int i = 0; i < MAX_THREADS + 2; i++)
		sleeper_start(&s[i]);
	unit_log_capture();
	for (int i = 0; i < MAX_THREADS + 2; i++)
		observer_watch(o, s[i].tid, &lim);
	ck_assert_uint_eq(observer_watched(o, NULL), MAX_THREADS);
	observer_unwatch(o, s[0].tid);
	observer_watch(o, s[MAX_THREADS].tid, &lim);
	ck_assert_uint_eq(observer_watched(o, NULL), MAX_THREADS);
	observer_watch(o, s[MAX_THREADS + 1].tid, &lim);
	ck_assert_int_eq(unit_count(unit_log_captured(), "raise observe-threads ="), 2);
	for (int i = 0; i < MAX_THREADS + 2; i++)
		sleeper_stop(&s[i]);
}
END_TEST

/* No observer (no BPF): every call is safe and says so. */
START_TEST(test_null)
{
	struct hist h;
	unsigned max = 7;

	observer_watch(NULL, gettid(), &lim);
	observer_unwatch(NULL, gettid());
	observer_reset(NULL, gettid());
	ck_assert_int_eq(observer_read(NULL, gettid(), BPFOBS_TIMER, false, &h), -ENOENT);
	ck_assert_uint_eq(observer_watched(NULL, &max), 0);
	ck_assert_uint_eq(max, 0);
	observer_free(NULL);
}
END_TEST

int main(void)
{
	Suite *su = suite_create("observer");
	TCase *none = tcase_create("none");
	struct observer *probe = NULL;
	int r;

	tcase_add_test(none, test_null);
	suite_add_tcase(su, none);
	/* whether this process can load the programs at all */
	r = observer_new(&probe, 1, true, why, sizeof(why));
	observer_free(probe);
	if (r == 0) {
		TCase *bpf = tcase_create("bpf");
		tcase_add_checked_fixture(bpf, setup, teardown);
		tcase_add_test(bpf, test_reset_baseline);
		tcase_add_test(bpf, test_full);
		suite_add_tcase(su, bpf);
	} else {
		char msg[640];
		snprintf(msg, sizeof(msg), "the BPF cases: the observer cannot load here: %s", why);
		unit_skip(msg);
	}
	return unit_run(su);
}
