/* bench-caught.c: refused call -> applied, for rtschedd's catcher of
 * refused scheduling calls (catch-refused = yes). Run as a user with
 * RLIMIT_RTPRIO 0 and a [user] grant: each round the thread drops back to
 * SCHED_OTHER (always allowed), calls sched_setscheduler(FIFO prio), which
 * the kernel refuses (EPERM), and spins on sched_getscheduler() until the
 * kernel reports SCHED_FIFO: the time from just before the call to then is
 * one sample. A round that sees no change within 1 s is a miss.
 * rtschedd applies its reset-on-fork default with the grant, and the
 * kernel lets an unprivileged thread leave real-time only with the flag
 * kept, so the way back is SCHED_OTHER | SCHED_RESET_ON_FORK.
 *   bench-caught ROUNDS PRIO LABEL
 * prints "label n p50_us p99_us max_us misses" (the caller, which may
 * write where this user cannot, keeps it). */
#define _GNU_SOURCE
#include <sched.h>

#include "bench-common.h"

#define TIMEOUT_US 1e6
#define GAP_US 2000

int main(int argc, char **argv)
{
	struct sched_param other = { 0 }, sp = { 0 };
	int rounds, misses = 0;
	size_t n = 0;
	double *v;

	if (argc != 4 || (rounds = atoi(argv[1])) < 1 || (sp.sched_priority = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: bench-caught ROUNDS PRIO LABEL\n");
		return 64;
	}
	v = calloc((size_t)rounds, sizeof(*v));
	if (!v)
		return 71;
	for (int i = 0; i < rounds; i++) {
		double t0, t;

		if (sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &other) < 0) {
			perror("bench-caught: back to SCHED_OTHER");
			free(v);
			return 71;
		}
		t0 = bench_now_us();
		if (sched_setscheduler(0, SCHED_FIFO, &sp) == 0) {
			fprintf(stderr, "bench-caught: sched_setscheduler succeeded: run with RLIMIT_RTPRIO 0, not as root\n");
			free(v);
			return 71;
		}
		if (errno != EPERM) {
			perror("bench-caught: sched_setscheduler");
			free(v);
			return 71;
		}
		while ((sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) != SCHED_FIFO &&
		       (t = bench_now_us()) - t0 < TIMEOUT_US)
			;
		t = bench_now_us();
		if ((sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) == SCHED_FIFO)
			v[n++] = t - t0;
		else
			misses++;
		usleep(GAP_US);
	}
	qsort(v, n, sizeof(*v), bench_cmp);
	printf("%s %zu %.1f %.1f %.1f %d\n", argv[3], n, bench_pct(v, n, 50), bench_pct(v, n, 99), n ? v[n - 1] : 0.0,
	       misses);
	free(v);
	return 0;
}
