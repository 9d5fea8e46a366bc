/* bench-register.c: registration round trip through librtsched, from the
 * request to the policy applied and read back to the reply, as a worker
 * thread sees it. Alternates two roles (FIFO 10 and 11) so every request
 * really changes the thread's scheduling, and checks after each call, outside
 * the timed part, that the kernel reports what was asked. librtsched opens a
 * new connection per call, and that is what is timed.
 *
 *   bench-register [-w WARMUP] [-o SUMMARY.csv] [-c CDF.csv] [N]
 *
 * N requests (default 10000) after WARMUP untimed ones (default 50); socket
 * from $RTSCHED_SOCKET. Needs rules bench-a (fifo 10) and bench-b (fifo 11).
 * Prints one table row; exits 1 if any request failed or the kernel did not
 * report what rtschedd replied. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench-common.h"
#include "rtsched.h"

#define SUMMARY_HEADER "system,connection,samples,failed,p50_us,p90_us,p99_us,max_us,mean_us,req_per_s"

/* The calling thread's policy is FIFO at prio: 1 if so. */
static int is_fifo(int prio)
{
	struct sched_param sp;
	int pol = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;

	return pol == SCHED_FIFO && sched_getparam(0, &sp) == 0 && sp.sched_priority == prio;
}

int main(int argc, char **argv)
{
	const char *roles[2] = { "bench-a", "bench-b" }, *summary = NULL, *cdf = NULL;
	int n, warmup = 50, failures = 0, wrong = 0, opt;
	double *lat, total;
	FILE *f;

	while ((opt = getopt(argc, argv, "w:o:c:")) != -1) {
		switch (opt) {
		case 'w': warmup = atoi(optarg); break;
		case 'o': summary = optarg; break;
		case 'c': cdf = optarg; break;
		default: return 64;
		}
	}
	n = optind < argc ? atoi(argv[optind]) : 10000;
	lat = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
	if (!lat || n < 1)
		return 64;
	for (int i = 0; i < warmup; i++)
		rtsched_register_self(roles[i & 1]);
	total = 0;
	for (int i = 0; i < n; i++) {
		double s = bench_now_us();
		int r = rtsched_register_self(roles[i & 1]);
		lat[i] = bench_now_us() - s;
		total += lat[i];
		if (r < 0) {
			if (failures++ == 0)
				fprintf(stderr, "bench-register: %s: %s\n", rtsched_strerror(r), rtsched_last_message());
		} else if (!is_fifo(10 + (i & 1))) {
			wrong++;
		}
	}
	rtsched_unregister_self();
	qsort(lat, (size_t)n, sizeof(double), bench_cmp);
	printf("%-10s %-16s %8d %6d %9.1f %9.1f %9.1f %9.1f %9.1f %10.0f\n", "rtschedd", "new-per-call", n,
	       failures + wrong, bench_pct(lat, n, 50), bench_pct(lat, n, 90), bench_pct(lat, n, 99), lat[n - 1],
	       total / n, n / (total / 1e6));
	if (wrong)
		fprintf(stderr, "bench-register: %d replies were OK but the kernel reported another policy\n", wrong);
	f = bench_open_csv(summary, SUMMARY_HEADER);
	if (f) {
		fprintf(f, "rtschedd,new-per-call,%d,%d,%.1f,%.1f,%.1f,%.1f,%.1f,%.0f\n", n, failures + wrong,
			bench_pct(lat, n, 50), bench_pct(lat, n, 90), bench_pct(lat, n, 99), lat[n - 1], total / n,
			n / (total / 1e6));
		fclose(f);
	}
	bench_write_cdf(cdf, "rtschedd", lat, (size_t)n);
	free(lat);
	return failures || wrong ? 1 : 0;
}
