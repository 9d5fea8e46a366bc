/* bench-strategies.c: the wait strategies side by side (issue 8, part 3;
 * issue 15). For periods of 10 ms, 2 ms, 1 ms, 500 us and 100 us (the packet
 * rates of GStreamer's clock_nanosleep table) and each strategy, runs a
 * waiter for a fixed time and prints the lateness percentiles and the CPU
 * time the strategy burnt (CLOCK_THREAD_CPUTIME_ID over wall time). One
 * thread, on the clock of this process.
 *
 *     bench-strategies [--fifo PRIO] [--cpu N] [--period US] [--strategies LIST]
 *                      [--rounds R] [CSV]
 *     bench-strategies --lost [--fifo PRIO] [--cpu N]
 *
 * --lost only spins for 0.5 s and says how much of that time the thread did
 * not run (gaps over 10 us between two clock reads): on a virtual machine
 * whose host is busy, what the hypervisor took, which no strategy and no
 * priority can win back. Every section of run.sh prints it.
 *
 * Strategies: sleep, hybrid, busy, adaptive (waiter.c), and fixed50,
 * fixed100, fixed200: sleep to a fixed guard of 50, 100 or 200 us before
 * the deadline, then spin (adaptive with its guard pinned), the baselines
 * adaptive is judged against. LIST is comma-separated; the default is
 * sleep,hybrid,busy,adaptive. --period runs one period (us) instead of the
 * five. --rounds R splits each row's time into R rounds run in turn over
 * the strategies (each keeps its waiter, what it learnt and its histogram
 * from one round to the next), so a change of load during the run hits
 * every strategy alike.
 *
 * --fifo runs as SCHED_FIFO PRIO (and mlockall, as cyclictest does) if the
 * kernel allows it; the header says what it really ran as. --cpu pins the
 * thread. CSV is written if a path is given. Each row runs 2 s, 0.3 s with
 * BENCH_QUICK=1, or BENCH_SECONDS. Under SCHED_FIFO a round that used more
 * than half a CPU (busy, adaptive at 100 us) may have run into RT
 * throttling; the next waits one RT period (kernel.sched_rt_period_us)
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

#include "shared/hist.h"
#include "shared/waiter.h"

#define NS_PER_S INT64_C(1000000000)

static const int64_t periods_ns[] = { 10000000, 2000000, 1000000, 500000, 100000 };

/* A strategy as the benchmark runs it: a waiter strategy, and for the
 * fixed-guard baselines the guard adaptive is pinned to. */
struct spec {
	const char *name;
	enum waiter_strategy s;
	int64_t fixed_guard_ns; /* 0: not fixed */
};

static const struct spec specs[] = {
	{ "sleep", WAIT_SLEEP, 0 },        { "hybrid", WAIT_HYBRID, 0 },
	{ "busy", WAIT_BUSY, 0 },          { "adaptive", WAIT_ADAPTIVE, 0 },
	{ "fixed50", WAIT_ADAPTIVE, 50000 }, { "fixed100", WAIT_ADAPTIVE, 100000 },
	{ "fixed200", WAIT_ADAPTIVE, 200000 },
};
#define NSPECS (sizeof(specs) / sizeof(specs[0]))

/* One strategy at one period: its waiter and histogram live across rounds. */
struct row {
	const struct spec *sp;
	int64_t period_ns;
	struct waiter w;
	struct hist h;
	int64_t cpu_ns, wall_ns;
	uint64_t samples, overruns;
	int64_t p50, p90, p99, p999, max;
	double cpu_pct;
	int64_t guard_ns; /* hybrid: configured; adaptive and fixed: in use at the end; else -1 */
	uint64_t misses, sleeps; /* adaptive and fixed: sleeps that woke after the deadline */
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

/* Set up a row: a fresh waiter and histogram. */
static void row_init(struct row *r, const struct spec *sp, int64_t period)
{
	memset(r, 0, sizeof(*r));
	r->sp = sp;
	r->period_ns = period;
	hist_init(&r->h);
	if (waiter_init(&r->w, sp->s, period, &r->h) < 0 ||
	    (sp->fixed_guard_ns && waiter_set_adaptive(&r->w, sp->fixed_guard_ns, sp->fixed_guard_ns) < 0)) {
		fprintf(stderr, "bench-strategies: waiter_init failed\n");
		exit(1);
	}
	if (sp->fixed_guard_ns && waiter_adapt_guard(&r->w) != sp->fixed_guard_ns) {
		fprintf(stderr, "bench-strategies: a %s guard does not fit the spin budget of a %.0f us period\n",
			sp->name, (double)period / 1000);
		exit(1);
	}
}

/* One round of a row: wait for `seconds` of deadlines, on a schedule that
 * starts now (the gap since the last round is not a missed period). */
static void run_round(struct row *r, double seconds)
{
	int64_t start, stop, cpu0, rc;

	cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	start = clock_ns(CLOCK_MONOTONIC);
	stop = start + (int64_t)(seconds * 1e9);
	waiter_start(&r->w, start);
	while (waiter_deadline(&r->w) <= stop) {
		if ((rc = waiter_wait(&r->w)) < 0) {
			fprintf(stderr, "bench-strategies: wait: %s\n", strerror((int)-rc));
			exit(1);
		}
	}
	r->cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
	r->wall_ns += clock_ns(CLOCK_MONOTONIC) - start;
}

/* The row's figures, after its last round. */
static void row_finish(struct row *r)
{
	const struct waiter_counters *c = waiter_counters(&r->w);

	r->cpu_pct = 100.0 * (double)r->cpu_ns / (double)r->wall_ns;
	r->samples = hist_count(&r->h);
	r->overruns = hist_overruns(&r->h);
	r->p50 = pct(&r->h, 50);
	r->p90 = pct(&r->h, 90);
	r->p99 = pct(&r->h, 99);
	r->p999 = pct(&r->h, 99.9);
	r->max = hist_max(&r->h);
	r->guard_ns = r->sp->s == WAIT_HYBRID ? r->w.guard_ns : r->sp->s == WAIT_ADAPTIVE ? waiter_adapt_guard(&r->w) : -1;
	r->misses = c->adapt_misses;
	r->sleeps = c->adapt_samples;
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
	printf("%9.0f  %-8s %8" PRIu64, (double)r->period_ns / 1000.0, r->sp->name, r->samples);
	put_us(r->p50);
	put_us(r->p90);
	put_us(r->p99);
	put_us(r->p999);
	put_us(r->max);
	printf(" %8" PRIu64 " %6.1f%%", r->overruns, r->cpu_pct);
	if (r->guard_ns >= 0)
		printf(" %8.1f", (double)r->guard_ns / 1000.0);
	if (r->sleeps)
		printf(" %6.2f%%", 100.0 * (double)r->misses / (double)r->sleeps);
	printf("\n");
	fflush(stdout);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench-strategies [--fifo PRIO] [--cpu N] [--period US] [--strategies LIST] "
		"[--rounds R] [CSV]\n"
		"       bench-strategies --lost [--fifo PRIO] [--cpu N]\n"
		"  LIST: comma-separated sleep, hybrid, busy, adaptive, fixed50, fixed100, fixed200\n");
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

/* --lost: spin 0.5 s, sum the gaps over 10 us between clock reads. */
static void lost(void)
{
	int64_t start = clock_ns(CLOCK_MONOTONIC), prev = start, end = start + NS_PER_S / 2, gaps = 0, worst = 0;
	long n = 0;

	while (prev < end) {
		int64_t t = clock_ns(CLOCK_MONOTONIC), g = t - prev;

		if (g > 10000) {
			gaps += g;
			n++;
		}
		if (g > worst)
			worst = g;
		prev = t;
	}
	printf("%.1f%% of 0.5 s lost in %ld gaps over 10 us (longest %.1f us)\n", 100.0 * (double)gaps / (double)(prev - start),
	       n, (double)worst / 1000);
}

/* Parse --strategies: the chosen specs into out[], their number. */
static size_t parse_specs(const char *list, const struct spec **out)
{
	size_t n = 0;
	const char *p = list;

	while (*p) {
		size_t len = strcspn(p, ",");
		size_t i;

		for (i = 0; i < NSPECS; i++)
			if (strlen(specs[i].name) == len && strncmp(specs[i].name, p, len) == 0)
				break;
		if (i == NSPECS || n == NSPECS) {
			fprintf(stderr, "bench-strategies: unknown strategy '%.*s'\n", (int)len, p);
			usage();
		}
		out[n++] = &specs[i];
		p += len;
		if (*p == ',')
			p++;
	}
	if (n == 0)
		usage();
	return n;
}

int main(int argc, char **argv)
{
	const struct spec *chosen[NSPECS];
	size_t np = sizeof(periods_ns) / sizeof(periods_ns[0]);
	size_t ns = parse_specs("sleep,hybrid,busy,adaptive", chosen);
	const int64_t *periods = periods_ns;
	int64_t one_period;
	const char *csv = NULL;
	double seconds = row_seconds();
	int cpu = -1, fifo = 0, rounds = 1, policy, prio, only_lost = 0;
	char as[160];
	FILE *out = NULL;
	struct row *rows;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--fifo") == 0 && i + 1 < argc)
			fifo = atoi(argv[++i]);
		else if (strcmp(argv[i], "--cpu") == 0 && i + 1 < argc)
			cpu = atoi(argv[++i]);
		else if (strcmp(argv[i], "--period") == 0 && i + 1 < argc) {
			one_period = (int64_t)atol(argv[++i]) * 1000;
			if (one_period < 1000 || one_period > WAITER_MAX_PERIOD_NS)
				usage();
			periods = &one_period;
			np = 1;
		} else if (strcmp(argv[i], "--strategies") == 0 && i + 1 < argc)
			ns = parse_specs(argv[++i], chosen);
		else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (strcmp(argv[i], "--lost") == 0)
			only_lost = 1;
		else if (argv[i][0] != '-' && !csv)
			csv = argv[i];
		else
			usage();
	}
	if (fifo < 0 || fifo > 99 || cpu < -1 || cpu >= CPU_SETSIZE || rounds < 1 || rounds > 1000)
		usage();
	if (only_lost) {
		setup(cpu, fifo, as, sizeof(as), &policy, &prio);
		printf("a thread spinning as %s: ", as);
		lost();
		return 0;
	}
	if (csv && !(out = fopen(csv, "w"))) {
		perror(csv);
		return 1;
	}
	/* rows are large (a waiter and a 14.5 KB histogram each) and must not move */
	rows = calloc(ns, sizeof(*rows));
	if (!rows) {
		perror("calloc");
		return 1;
	}
	setup(cpu, fifo, as, sizeof(as), &policy, &prio);
	print_machine();
	printf("ran as %s; %.1f s per row%s%s; lateness in us; CPU = thread CPU time / wall time\n", as, seconds,
	       rounds > 1 ? ", in rounds taken in turn" : "",
	       policy == SCHED_FIFO ? " (+ one RT period of rest after rounds over 50% CPU)" : "");
	printf("hybrid: guard %.0f us, threshold %.0f us; busy: sched_yield every %d clock reads; "
	       "adaptive: guard tracks the sleep lateness that keeps misses (sleeps waking after the deadline) "
	       "at %.2f%% (no step for sleeps later than the largest guard; %.1f%% while those are over %.2f%%), "
	       "halving in %.0f ms without misses (at least %d periods), in [%.0f us, min(%.0f us, %d%% of the period)]; "
	       "fixedN: guard N us; miss = share of sleeps that woke after the deadline\n\n",
	       (double)WAITER_HYBRID_GUARD_NS / 1000, (double)WAITER_HYBRID_THRESHOLD_NS / 1000,
	       WAITER_BUSY_YIELD_EVERY, WAITER_ADAPT_MISS_PPM / 1e4, WAITER_ADAPT_BODY_MISS_PPM / 1e4,
	       WAITER_ADAPT_REACH_PPM / 1e4, (double)WAITER_ADAPT_HALVE_NS / 1e6,
	       WAITER_ADAPT_MIN_STEPS, (double)WAITER_ADAPT_MIN_GUARD_NS / 1000, (double)WAITER_ADAPT_MAX_GUARD_NS / 1000,
	       WAITER_ADAPT_BUDGET_PCT);
	printf("%9s  %-8s %8s %9s %9s %9s %9s %9s %8s %7s %8s %7s\n", "period", "strategy", "samples", "p50", "p90",
	       "p99", "p99.9", "max", "overruns", "CPU", "guard", "miss");
	if (out)
		fprintf(out, "period_us,strategy,samples,p50_ns,p90_ns,p99_ns,p999_ns,max_ns,overruns,cpu_pct,"
			     "guard_ns,policy,priority,misses,sleeps\n");
	for (size_t i = 0; i < np; i++) {
		for (size_t j = 0; j < ns; j++)
			row_init(&rows[j], chosen[j], periods[i]);
		for (int k = 0; k < rounds; k++) {
			for (size_t j = 0; j < ns; j++) {
				int64_t cpu0 = rows[j].cpu_ns, wall0 = rows[j].wall_ns;

				run_round(&rows[j], seconds / rounds);
				if (policy == SCHED_FIFO &&
				    (rows[j].cpu_ns - cpu0) * 2 > rows[j].wall_ns - wall0)
					settle();
			}
		}
		for (size_t j = 0; j < ns; j++) {
			struct row *r = &rows[j];

			row_finish(r);
			print_row(r);
			if (out)
				fprintf(out, "%" PRId64 ",%s,%" PRIu64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
					",%" PRId64 ",%" PRIu64 ",%.2f,%" PRId64 ",%s,%d,%" PRIu64 ",%" PRIu64 "\n",
					r->period_ns / 1000, r->sp->name, r->samples, r->p50, r->p90, r->p99,
					r->p999, r->max, r->overruns, r->cpu_pct, r->guard_ns,
					policy == SCHED_FIFO ? "fifo" : "other", prio, r->misses, r->sleeps);
		}
	}
	free(rows);
	if (out && fclose(out) != 0) {
		perror(csv);
		return 1;
	}
	return 0;
}
