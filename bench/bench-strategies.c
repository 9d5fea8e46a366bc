/* bench-strategies.c: the wait strategies side by side (issue 8, part 3).
 * For periods of 10 ms, 2 ms, 1 ms, 500 us and 100 us (the packet rates of
 * GStreamer's clock_nanosleep table) and each strategy (sleep, hybrid, busy,
 * adaptive), runs a waiter for a fixed time and prints the lateness
 * percentiles and the CPU time the strategy burnt (CLOCK_THREAD_CPUTIME_ID
 * over wall time). One thread, on the clock of this process.
 *
 *     bench-strategies [--fifo PRIO] [--cpu N] [CSV]
 *
 * --fifo runs as SCHED_FIFO PRIO (and mlockall, as cyclictest does) if the
 * kernel allows it; the header says what it really ran as. --cpu pins the
 * thread. CSV is written if a path is given. Each row runs 2 s, 0.3 s with
 * BENCH_QUICK=1, or BENCH_SECONDS. Under SCHED_FIFO a row that used more
 * than half a CPU (busy, adaptive at 100 us) may have run into RT
 * throttling; the next row waits one RT period (kernel.sched_rt_period_us)
 * so the throttled remainder is not charged to it. Exits 1 on a usage,
 * clock or wait error. */
#ifdef HAVE_CONFIG_H
#include "autoconfig.h" /* absent when built by hand, without configure */
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* CPU_SET, sched_setaffinity */
#endif

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <time.h>

#include "common/hist.h"
#include "common/waiter.h"

#define NS_PER_S INT64_C(1000000000)

static const int64_t periods_ns[] = { 10000000, 2000000, 1000000, 500000, 100000 };
static const enum waiter_strategy strategies[] = { WAIT_SLEEP, WAIT_HYBRID, WAIT_BUSY, WAIT_ADAPTIVE };

struct row {
	int64_t period_ns;
	enum waiter_strategy s;
	uint64_t samples, overruns;
	int64_t p50, p90, p99, p999, max;
	double cpu_pct;
	int64_t guard_ns; /* hybrid: configured; adaptive: learnt at the end; else -1 */
};

/* A clock in ns; a failure ends the benchmark. */
static int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts) < 0) {
		perror("clock_gettime");
		exit(1);
	}
	return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

/* Seconds per row from the environment. */
static double row_seconds(void)
{
	const char *s = getenv("BENCH_SECONDS");
	const char *q = getenv("BENCH_QUICK");
	double v;

	if (s && *s) {
		v = strtod(s, NULL);
		if (v > 0 && v < 3600)
			return v;
		fprintf(stderr, "bench-strategies: ignoring BENCH_SECONDS=%s\n", s);
	}
	return q && strcmp(q, "1") == 0 ? 0.3 : 2.0;
}

/* A percentile of h in ns, 0 without samples. */
static int64_t pct(const struct hist *h, double q)
{
	int64_t v;

	return hist_percentile(h, q, &v) < 0 ? 0 : v;
}

/* One row: wait for `seconds` of deadlines with strategy s. */
static void run_row(struct row *r, int64_t period, enum waiter_strategy s, double seconds)
{
	static struct hist h;
	static struct waiter w;
	int64_t start, stop, cpu0, rc;

	hist_init(&h);
	if (waiter_init(&w, s, period, &h) < 0) {
		fprintf(stderr, "bench-strategies: waiter_init failed\n");
		exit(1);
	}
	cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	start = clock_ns(CLOCK_MONOTONIC);
	stop = start + (int64_t)(seconds * 1e9);
	waiter_start(&w, start);
	while (waiter_deadline(&w) <= stop) {
		if ((rc = waiter_wait(&w)) < 0) {
			fprintf(stderr, "bench-strategies: wait: %s\n", strerror((int)-rc));
			exit(1);
		}
	}
	r->cpu_pct = 100.0 * (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0) /
		     (double)(clock_ns(CLOCK_MONOTONIC) - start);
	r->period_ns = period;
	r->s = s;
	r->samples = hist_count(&h);
	r->overruns = hist_overruns(&h);
	r->p50 = pct(&h, 50);
	r->p90 = pct(&h, 90);
	r->p99 = pct(&h, 99);
	r->p999 = pct(&h, 99.9);
	r->max = hist_max(&h);
	r->guard_ns = s == WAIT_HYBRID ? w.guard_ns : s == WAIT_ADAPTIVE ? waiter_adapt_guard(&w) : -1;
}

/* Wait out the current RT throttling period (see the top of the file). */
static void settle(void)
{
	long us = 1000000;
	struct timespec ts;
	FILE *f = fopen("/proc/sys/kernel/sched_rt_period_us", "r");

	if (f) {
		if (fscanf(f, "%ld", &us) != 1 || us <= 0 || us > 10000000)
			us = 1000000;
		fclose(f);
	}
	us += us / 10;
	ts.tv_sec = us / 1000000;
	ts.tv_nsec = us % 1000000 * 1000;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ns as us with one decimal, right-aligned in 9 columns. */
static void put_us(int64_t ns)
{
	printf(" %9.1f", (double)ns / 1000.0);
}

static void print_row(const struct row *r)
{
	printf("%9.0f  %-8s %8" PRIu64, (double)r->period_ns / 1000.0, waiter_strategy_name(r->s), r->samples);
	put_us(r->p50);
	put_us(r->p90);
	put_us(r->p99);
	put_us(r->p999);
	put_us(r->max);
	printf(" %8" PRIu64 " %6.1f%%", r->overruns, r->cpu_pct);
	if (r->guard_ns >= 0)
		printf(" %8.1f", (double)r->guard_ns / 1000.0);
	printf("\n");
	fflush(stdout);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench-strategies [--fifo PRIO] [--cpu N] [CSV]\n");
	exit(1);
}

/* Apply --cpu and --fifo; describe what the thread really runs as. */
static void setup(int cpu, int fifo, char *as, size_t len, int *policy, int *prio)
{
	char pin[32] = "not pinned";
	const char *lock = "";

	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0) {
			fprintf(stderr, "bench-strategies: CPU %d: %s\n", cpu, strerror(errno));
			exit(1);
		}
		snprintf(pin, sizeof(pin), "on CPU %d", cpu);
	}
	if (fifo > 0) {
		struct sched_param sp = { .sched_priority = fifo };

		if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0)
			fprintf(stderr, "bench-strategies: SCHED_FIFO %d refused (%s): running as SCHED_OTHER\n",
				fifo, strerror(errno));
		lock = mlockall(MCL_CURRENT | MCL_FUTURE) == 0 ? ", memory locked" : ", mlockall failed";
	}
	*policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
	*prio = 0;
	if (*policy == SCHED_FIFO) {
		struct sched_param sp;

		sched_getparam(0, &sp);
		*prio = sp.sched_priority;
		snprintf(as, len, "SCHED_FIFO %d, %s%s", *prio, pin, lock);
	} else {
		snprintf(as, len, "SCHED_OTHER (timer slack %d ns), %s%s", prctl(PR_GET_TIMERSLACK), pin, lock);
	}
}

/* The machine, so tables from different runs can be told apart. */
static void print_machine(void)
{
	struct utsname u;
	char cs[64] = "?", load[64] = "?";
	FILE *f;

	uname(&u);
	if ((f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r"))) {
		if (fgets(cs, sizeof(cs), f))
			cs[strcspn(cs, "\n")] = '\0';
		fclose(f);
	}
	if ((f = fopen("/proc/loadavg", "r"))) {
		if (fgets(load, sizeof(load), f))
			load[strcspn(load, "\n")] = '\0';
		fclose(f);
	}
	printf("kernel %s %s, clocksource %s, loadavg %s\n", u.release, u.version, cs, load);
}

int main(int argc, char **argv)
{
	const size_t np = sizeof(periods_ns) / sizeof(periods_ns[0]);
	const size_t ns = sizeof(strategies) / sizeof(strategies[0]);
	const char *csv = NULL;
	double seconds = row_seconds();
	int cpu = -1, fifo = 0, policy, prio;
	char as[160];
	FILE *out = NULL;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--fifo") == 0 && i + 1 < argc)
			fifo = atoi(argv[++i]);
		else if (strcmp(argv[i], "--cpu") == 0 && i + 1 < argc)
			cpu = atoi(argv[++i]);
		else if (argv[i][0] != '-' && !csv)
			csv = argv[i];
		else
			usage();
	}
	if (fifo < 0 || fifo > 99 || cpu < -1 || cpu >= CPU_SETSIZE)
		usage();
	if (csv && !(out = fopen(csv, "w"))) {
		perror(csv);
		return 1;
	}
	setup(cpu, fifo, as, sizeof(as), &policy, &prio);
	print_machine();
	printf("ran as %s; %.1f s per row%s; lateness in us; CPU = thread CPU time / wall time\n", as, seconds,
	       policy == SCHED_FIFO ? " (+ one RT period of rest after rows over 50% CPU)" : "");
	printf("hybrid: guard %.0f us, threshold %.0f us; busy: sched_yield every %d clock reads; "
	       "adaptive: guard = p%d of the last %d sleeps in [%.0f us, min(%.0f us, period/2)]\n\n",
	       (double)WAITER_HYBRID_GUARD_NS / 1000, (double)WAITER_HYBRID_THRESHOLD_NS / 1000,
	       WAITER_BUSY_YIELD_EVERY, WAITER_ADAPT_QUANTILE, WAITER_ADAPT_WINDOW,
	       (double)WAITER_ADAPT_MIN_GUARD_NS / 1000, (double)WAITER_ADAPT_MAX_GUARD_NS / 1000);
	printf("%9s  %-8s %8s %9s %9s %9s %9s %9s %8s %7s %8s\n", "period", "strategy", "samples", "p50", "p90",
	       "p99", "p99.9", "max", "overruns", "CPU", "guard");
	if (out)
		fprintf(out, "period_us,strategy,samples,p50_ns,p90_ns,p99_ns,p999_ns,max_ns,overruns,cpu_pct,"
			     "guard_ns,policy,priority\n");
	for (size_t i = 0; i < np; i++) {
		for (size_t j = 0; j < ns; j++) {
			struct row r;

			run_row(&r, periods_ns[i], strategies[j], seconds);
			print_row(&r);
			if (policy == SCHED_FIFO && r.cpu_pct > 50)
				settle();
			if (out)
				fprintf(out, "%" PRId64 ",%s,%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
					",%" PRId64 ",%" PRIu64 ",%.2f,%" PRId64 ",%s,%d\n",
					r.period_ns / 1000, waiter_strategy_name(r.s), r.samples, r.p50, r.p90, r.p99,
					r.p999, r.max, r.overruns, r.cpu_pct, r.guard_ns,
					policy == SCHED_FIFO ? "fifo" : "other", prio);
		}
	}
	if (out && fclose(out) != 0) {
		perror(csv);
		return 1;
	}
	return 0;
}
