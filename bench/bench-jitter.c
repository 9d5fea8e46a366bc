/* bench-jitter.c: the jitter gain rtschedd gives a periodic worker (issue 8,
 * part 2; the OLA control-versus-fifo table made repeatable). A worker thread
 * waits for absolute 1 ms deadlines with librtsched's timer, first as
 * SCHED_OTHER (the control), then after rtsched_register_self() made it
 * SCHED_FIFO through rtschedd. Each phase gets a fresh timer; the timer's own
 * histogram gives the percentiles. run.sh runs it under stress-ng and adds
 * cyclictest rows from the same run.
 *
 *   bench-jitter [-n PERIODS] [-p PERIOD_US] [-s STRATEGY] [-r ROLE] [-o CSV]
 *
 * Defaults: 10000 periods of 1000 us per phase, strategy "sleep" (what
 * cyclictest does: clock_nanosleep to the absolute deadline), role bench-a.
 * The kernel's view of the thread's policy is checked before each phase and
 * printed; exits 1 if the FIFO phase did not run as FIFO. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-common.h"
#include "rtsched.h"

#define CSV_HEADER "series,policy,samples,overruns,p50_us,p90_us,p99_us,p999_us,max_us,mean_us"

/* "SCHED_FIFO 10" or "SCHED_OTHER" as the kernel reports the calling thread. */
static const char *policy_now(char *buf, size_t len, int *policy)
{
	struct sched_param sp = { 0 };

	*policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
	sched_getparam(0, &sp);
	if (*policy == SCHED_FIFO || *policy == SCHED_RR)
		snprintf(buf, len, "%s %d", *policy == SCHED_FIFO ? "SCHED_FIFO" : "SCHED_RR", sp.sched_priority);
	else
		snprintf(buf, len, "%s", *policy == SCHED_OTHER ? "SCHED_OTHER" : "other-class");
	return buf;
}

/* One phase: n periods on a fresh timer; prints and records a row, the
 * policy followed by `how`. 0 or -errno. */
static int phase(const char *series, const char *how, int n, uint64_t period_ns, const char *strategy, FILE *csv)
{
	struct rtsched_timer *t;
	struct rtsched_timer_stats st;
	char pol[96], p[32], p2[32];
	int r, policy, policy2, tries = 0, changed;

	snprintf(pol, sizeof(pol), "%s%s", policy_now(p, sizeof(p), &policy), how);
	if ((r = rtsched_timer_create(&t, period_ns, strategy)) < 0)
		return r;
	for (int i = 0; i < n; i++)
		if ((r = rtsched_timer_wait(t)) < 0)
			goto out;
	/* rtschedd's watchdog may demote a thread; a row must say so */
	changed = 0;
	if (strcmp(policy_now(p2, sizeof(p2), &policy2), p) != 0) {
		fprintf(stderr, "bench-jitter: the thread was %s at the start of the phase and %s at its end\n", p, p2);
		snprintf(pol, sizeof(pol), "%s%s then %s", p, how, p2);
		changed = -ESTALE;
	}
	while ((r = rtsched_timer_stats(t, &st)) == -EAGAIN && tries++ < 100)
		;
	if (r < 0)
		goto out;
	r = changed;
	printf("%-34s %-26s %8llu %6llu %9.1f %9.1f %9.1f %9.1f %9.1f\n", series, pol, (unsigned long long)st.count,
	       (unsigned long long)st.overruns, st.p50_ns / 1e3, st.p90_ns / 1e3, st.p99_ns / 1e3, st.p999_ns / 1e3,
	       st.max_ns / 1e3);
	fflush(stdout);
	if (csv)
		fprintf(csv, "%s,%s,%llu,%llu,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f\n", series, pol,
			(unsigned long long)st.count, (unsigned long long)st.overruns, st.p50_ns / 1e3,
			st.p90_ns / 1e3, st.p99_ns / 1e3, st.p999_ns / 1e3, st.max_ns / 1e3, st.mean_ns / 1e3);
out:
	rtsched_timer_free(t);
	return r;
}

int main(int argc, char **argv)
{
	const char *strategy = "sleep", *role = "bench-a", *csvpath = NULL;
	int n = 10000, period_us = 1000, opt, r, policy;
	char series[64], pol[32];
	FILE *csv;

	while ((opt = getopt(argc, argv, "n:p:s:r:o:")) != -1) {
		switch (opt) {
		case 'n': n = atoi(optarg); break;
		case 'p': period_us = atoi(optarg); break;
		case 's': strategy = optarg; break;
		case 'r': role = optarg; break;
		case 'o': csvpath = optarg; break;
		default: return 64;
		}
	}
	if (n < 1 || period_us < 1)
		return 64;
	csv = bench_open_csv(csvpath, CSV_HEADER);

	snprintf(series, sizeof(series), "worker (librtsched timer %s)", strategy);
	if ((r = phase(series, "", n, (uint64_t)period_us * 1000, strategy, csv)) < 0) {
		fprintf(stderr, "bench-jitter: SCHED_OTHER phase: %s\n", strerror(-r));
		return 1;
	}
	if ((r = rtsched_register_self(role)) < 0) {
		fprintf(stderr, "bench-jitter: rtsched_register_self(%s): %s: %s\n", role, rtsched_strerror(r),
			rtsched_last_message());
		return 1;
	}
	policy_now(pol, sizeof(pol), &policy);
	if (policy != SCHED_FIFO) {
		fprintf(stderr, "bench-jitter: registered, but the kernel reports %s\n", pol);
		return 1;
	}
	r = phase(series, " via rtschedd", n, (uint64_t)period_us * 1000, strategy, csv);
	rtsched_unregister_self();
	if (csv)
		fclose(csv);
	if (r < 0) {
		fprintf(stderr, "bench-jitter: SCHED_FIFO phase: %s\n", strerror(-r));
		return 1;
	}
	return 0;
}
