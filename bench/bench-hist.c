/* bench-hist.c: what recording costs the real-time thread (ns per
 * hist_record) and what reading costs the daemon (ns per hist_snapshot and
 * per percentile query). Prints its figures; exits 1 on a clock failure. */
#ifdef HAVE_CONFIG_H
#include "autoconfig.h" /* absent when built by hand, without configure */
#endif

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "shared/hist.h"

#define RECORDS 10000000
#define SNAPSHOTS 100000
#define NVALUES 65536 /* a power of two, cycled through */

/* CLOCK_MONOTONIC in ns. */
static int64_t now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) < 0) {
		perror("clock_gettime");
		exit(1);
	}
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Lateness as measured here: log-uniform over 100 ns .. 10 ms, a few early
 * wake-ups and a few past 10 s, so every branch of hist_record is taken. */
static void make_values(int64_t *v)
{
	uint64_t x = 88172645463325252ULL; /* xorshift64, fixed seed */

	for (int i = 0; i < NVALUES; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v[i] = (int64_t)exp(log(100) + (double)(x >> 11) / 9007199254740992.0 * log(1e5));
		if (i % 1000 == 0)
			v[i] = -v[i];
		if (i % 10007 == 0)
			v[i] = 20 * HIST_MAX_NS;
	}
}

int main(void)
{
	static int64_t v[NVALUES];
	static struct hist h, snap;
	int64_t t0, t1, p99 = 0;
	int ok = 0;

	make_values(v);
	hist_init(&h);
	for (int i = 0; i < NVALUES; i++) /* warm the caches and the branch predictor */
		hist_record(&h, v[i]);

	t0 = now_ns();
	for (int i = 0; i < RECORDS; i++)
		hist_record(&h, v[i & (NVALUES - 1)]);
	t1 = now_ns();
	printf("sizeof(struct hist): %zu bytes, %d buckets\n", sizeof(struct hist), HIST_NBUCKETS);
	printf("hist_record: %.2f ns/op (%d records)\n", (double)(t1 - t0) / RECORDS, RECORDS);

	t0 = now_ns();
	for (int i = 0; i < SNAPSHOTS; i++)
		ok += hist_snapshot(&h, &snap, 1) == 0;
	t1 = now_ns();
	printf("hist_snapshot: %.0f ns/op, uncontended (%d of %d succeeded)\n",
	       (double)(t1 - t0) / SNAPSHOTS, ok, SNAPSHOTS);

	t0 = now_ns();
	for (int i = 0; i < SNAPSHOTS; i++)
		hist_percentile(&snap, 99, &p99);
	t1 = now_ns();
	printf("hist_percentile: %.0f ns/op (p99 = %" PRId64 " ns)\n",
	       (double)(t1 - t0) / SNAPSHOTS, p99);
	return 0;
}
