/* demo-worker.c: a media-style worker thread that asks rtschedd for its
 * scheduling with librtsched, shows what the kernel now reports, does a
 * little periodic work, and gives the scheduling back.
 *
 *   demo-worker [ROLE [SECONDS]]   (ROLE defaults to "audio"; "" or "-" asks
 *                                   for the daemon's default policy)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rtsched.h"

static const char *role = "audio";
static int seconds = 2;

/* What the kernel says about the calling thread, not what was asked. */
static void show(const char *when)
{
	struct sched_param sp;
	cpu_set_t cpus;
	int policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
	const char *name = policy == SCHED_FIFO ? "SCHED_FIFO" : policy == SCHED_RR ? "SCHED_RR" :
			   policy == SCHED_BATCH ? "SCHED_BATCH" : policy == SCHED_IDLE ? "SCHED_IDLE" : "SCHED_OTHER";

	sched_getparam(0, &sp);
	sched_getaffinity(0, sizeof(cpus), &cpus);
	printf("demo-worker: tid %d %s: %s priority %d on %d CPU(s)\n", gettid(), when, name,
	       sp.sched_priority, CPU_COUNT(&cpus));
}

static void *worker(void *arg)
{
	struct rtsched_request req = RTSCHED_REQUEST_INIT;
	struct rtsched_grant g;
	int r;

	pthread_setname_np(pthread_self(), "demo-worker");
	show("before");
	req.role = role;
	r = rtsched_register(&req, &g);
	if (r < 0) {
		fprintf(stderr, "demo-worker: register failed: %s: %s\n", rtsched_strerror(r), rtsched_last_message());
		return (void *)1;
	}
	printf("demo-worker: rtschedd granted rule %s: %s priority %d, cpus %s, reset-on-fork %d\n", g.rule,
	       g.policy, g.priority, g.cpus, g.reset_on_fork);
	show("registered");

	/* 1 ms periodic work, as an audio or DMX output thread would do, on
	 * librtsched's timer; rtschedd reads its wake-up histogram */
	struct rtsched_timer *t;
	struct rtsched_timer_stats st;
	if ((r = rtsched_timer_create(&t, 1000000, "sleep")) < 0 || (r = rtsched_timer_attach(t, NULL)) < 0) {
		fprintf(stderr, "demo-worker: timer: %s: %s\n", rtsched_strerror(r), rtsched_last_message());
		return (void *)1;
	}
	for (int i = 0; i < seconds * 1000; i++)
		if (rtsched_timer_wait(t) < 0)
			break;
	while (rtsched_timer_stats(t, &st) == -EAGAIN)
		;
	printf("demo-worker: %llu wake-ups at 1 ms: p50 %.1f us, p99 %.1f us, max %.1f us, %llu missed\n",
	       (unsigned long long)st.count, st.p50_ns / 1e3, st.p99_ns / 1e3, st.max_ns / 1e3,
	       (unsigned long long)st.overruns);
	rtsched_timer_free(t);

	r = rtsched_unregister_self();
	if (r < 0)
		fprintf(stderr, "demo-worker: unregister failed: %s: %s\n", rtsched_strerror(r), rtsched_last_message());
	show("unregistered");
	return (void *)(long)(r < 0);
}

int main(int argc, char **argv)
{
	pthread_t t;
	void *ret;

	if (argc > 1)
		role = argv[1][0] && strcmp(argv[1], "-") ? argv[1] : NULL; /* "" or "-": the default */
	if (argc > 2)
		seconds = atoi(argv[2]);
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	pthread_join(t, &ret);
	return ret ? 1 : 0;
}
