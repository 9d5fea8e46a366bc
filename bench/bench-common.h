/* bench-common.h: what every benchmark program shares: a clock in
 * microseconds, nearest-rank percentiles of a sample array, and the two
 * output files run.sh turns into tables and plots (a one-row summary CSV and
 * a CDF CSV of 200 quantiles). Header-only, so a benchmark is one .c file
 * plus this in its SOURCES. */
#ifndef RTSCHED_BENCH_COMMON_H
#define RTSCHED_BENCH_COMMON_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define BENCH_CDF_POINTS 200
#define BENCH_CDF_TAIL_STEP 0.9111627561154887 /* 1e-4^(1/99): 100 tail points */

/* CLOCK_MONOTONIC in microseconds. */
static inline double bench_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* qsort comparator for doubles. */
static inline int bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The p-th percentile (0 < p <= 100) of n sorted samples, nearest rank: the
 * smallest sample with at least p% of the samples at or below it. (No libm:
 * the benchmarks link without -lm.) */
static inline double bench_pct(const double *sorted, size_t n, double p)
{
	double r;
	size_t k;

	if (n == 0)
		return NAN;
	r = p / 100.0 * (double)n;
	k = (size_t)r;
	if ((double)k < r)
		k++;
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return sorted[k - 1];
}

/* Mean of n samples. */
static inline double bench_mean(const double *v, size_t n)
{
	double s = 0;

	for (size_t i = 0; i < n; i++)
		s += v[i];
	return n ? s / (double)n : NAN;
}

/* Append "label,fraction,value" rows of the CDF of n sorted samples to path
 * (created with a header if new): BENCH_CDF_POINTS quantiles, log-spaced in
 * the tail so p99.9 is on the curve, up to the resolution n samples give
 * (1 - 1/n), where the curve ends at the maximum. 0 or -errno. */
static inline int bench_write_cdf(const char *path, const char *label, const double *sorted, size_t n)
{
	FILE *f;
	int fresh;

	if (!path || n == 0)
		return 0;
	f = fopen(path, "r");
	fresh = !f;
	if (f)
		fclose(f);
	f = fopen(path, "a");
	if (!f)
		return -errno;
	if (fresh)
		fprintf(f, "series,fraction,value_us\n");
	/* half the points up to p90, the other half from p90 to p99.999, where
	 * 1 - q shrinks by BENCH_CDF_TAIL_STEP = 1e-4^(1/99) per point */
	double tail = 0.1;
	for (int i = 0; i < BENCH_CDF_POINTS; i++) {
		double q = i < BENCH_CDF_POINTS / 2 ? 0.9 * i / (BENCH_CDF_POINTS / 2) : 1 - tail;

		if (i >= BENCH_CDF_POINTS / 2)
			tail *= BENCH_CDF_TAIL_STEP;
		if (q >= 1 - 1.0 / (double)n)
			break;
		fprintf(f, "%s,%.6f,%.3f\n", label, q, bench_pct(sorted, n, q * 100 > 0 ? q * 100 : 1e-9));
	}
	fprintf(f, "%s,%.6f,%.3f\n", label, 1 - 1.0 / (double)n, sorted[n - 1]);
	return fclose(f) == 0 ? 0 : -errno;
}

/* Open a summary CSV for appending, writing `header` first if it is new;
 * NULL path: no file (returns NULL, not an error). */
static inline FILE *bench_open_csv(const char *path, const char *header)
{
	FILE *f;
	int fresh;

	if (!path)
		return NULL;
	f = fopen(path, "r");
	fresh = !f;
	if (f)
		fclose(f);
	f = fopen(path, "a");
	if (f && fresh)
		fprintf(f, "%s\n", header);
	return f;
}

/* A datagram socket bound to path (replacing a stale one), as systemd's
 * NOTIFY_SOCKET for a daemon started by a benchmark; the fd or -errno. */
static inline int bench_notify_socket(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd, e;

	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	memcpy(a.sun_path, path, strlen(path) + 1);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

#endif
