/* bench-register.c: registration round trip through librtsched, from the
 * request to the policy applied and read back to the reply, as a worker
 * thread sees it. Alternates two roles so every request really changes the
 * thread's scheduling. Prints p50/p99/max and requests per second.
 *
 *   bench-register [N]      (N requests, default 10000; socket from $RTSCHED_SOCKET) */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rtsched.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10000;
	double *lat = malloc(sizeof(double) * (size_t)n), t0, total;
	const char *roles[2] = { "bench-a", "bench-b" };
	int failures = 0;

	if (!lat || n < 1)
		return 1;
	t0 = now_us();
	for (int i = 0; i < n; i++) {
		double s = now_us();
		int r = rtsched_register_self(roles[i & 1]);
		lat[i] = now_us() - s;
		if (r < 0 && failures++ == 0)
			fprintf(stderr, "bench-register: %s: %s\n", rtsched_strerror(r), rtsched_last_message());
	}
	total = now_us() - t0;
	/* the policy must really be what the last request asked for */
	int pol = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
	rtsched_unregister_self();
	qsort(lat, (size_t)n, sizeof(double), cmp);
	printf("registration round trip (librtsched -> rtschedd -> sched_setattr -> read back -> reply)\n");
	printf("%-10s %10s %10s %10s %10s %12s %8s\n", "requests", "p50_us", "p99_us", "max_us", "mean_us", "req_per_s", "failed");
	printf("%-10d %10.1f %10.1f %10.1f %10.1f %12.0f %8d\n", n, lat[n / 2], lat[(int)(n * 0.99)], lat[n - 1],
	       total / n, n / (total / 1e6), failures);
	free(lat);
	return failures || pol != SCHED_FIFO ? 1 : 0;
}
