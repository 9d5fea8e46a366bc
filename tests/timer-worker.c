/* timer-worker.c: a periodic worker for the jitter tests. One thread named
 * "timer-worker" creates a librtsched timer, hands its histogram to rtschedd,
 * waits N periods (optionally stalling once to miss deadlines), prints its
 * own counts, then keeps the thread alive until stdin closes.
 *
 *   timer-worker PERIOD_US STRATEGY N [STALL_AT STALL_MS]
 *
 * $TIMER_WORKER_NAME: the thread's name instead (any bytes, cut at 15 by
 * the kernel: what a hostile worker may call itself). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "rtsched.h"

static long period_us, n, stall_at = -1, stall_ms;
static const char *strategy;

static void *worker(void *arg)
{
	struct rtsched_timer *t;
	struct rtsched_timer_stats st;
	long missed = 0;
	int r;

	const char *name = getenv("TIMER_WORKER_NAME");
	char comm[16];

	/* pthread_setname_np refuses nothing shorter than 16 bytes */
	snprintf(comm, sizeof(comm), "%s", name && *name ? name : "timer-worker");
	pthread_setname_np(pthread_self(), comm);
	if ((r = rtsched_timer_create(&t, (uint64_t)period_us * 1000, strategy)) < 0 ||
	    (r = rtsched_timer_attach(t, NULL)) < 0) {
		printf("error %s: %s\n", rtsched_strerror(r), rtsched_last_message());
		return NULL;
	}
	printf("attached tid %d\n", gettid());
	fflush(stdout);
	for (long i = 0; i < n; i++) {
		if (i == stall_at) {
			struct timespec ts = { stall_ms / 1000, (stall_ms % 1000) * 1000000 };
			nanosleep(&ts, NULL);
		}
		r = rtsched_timer_wait(t);
		if (r < 0) {
			printf("error wait %d\n", r);
			return NULL;
		}
		missed += r;
	}
	while (rtsched_timer_stats(t, &st) == -EAGAIN)
		;
	printf("done count=%llu overruns=%llu missed=%ld p99_ns=%lld\n", (unsigned long long)st.count,
	       (unsigned long long)st.overruns, missed, (long long)st.p99_ns);
	fflush(stdout);
	while (getchar() != EOF)
		;
	rtsched_timer_free(t);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;

	if (argc < 4)
		return 64;
	period_us = atol(argv[1]);
	strategy = argv[2];
	n = atol(argv[3]);
	if (argc > 5) {
		stall_at = atol(argv[4]);
		stall_ms = atol(argv[5]);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	pthread_create(&th, NULL, worker, NULL);
	pthread_join(th, NULL);
	return 0;
}
