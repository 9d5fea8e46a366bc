/* bench-match.c: how fast rules find threads. Needs a running rtschedd with
 * a rule `thread-name = PREFIX-*` (policy fifo; PREFIX is bench-m unless -p
 * gives another, of up to 10 characters). Every rtschedd on the machine sees
 * every rename through the process events connector, so a run beside another
 * one's daemon with the same rule would be answered by both: run.sh passes a
 * prefix of its own.
 *   bench-match [-o SUMMARY.csv] [-c CDF.csv] [-p PREFIX] [-l LOAD] [-i PAUSE_US] MODE [N]
 * LOAD names the load the run is under (e.g. "stress-ng --cpu 2"): its rows
 * and CDF series end in " under LOAD" (no commas: they are CSV fields).
 * PAUSE_US: a pause (untimed) before each rename or creation, so the
 * daemon's loop is not kept busy back to back; the rows say "every PAUSE_US µs".
 * Modes:
 *   bench-match rename N   a thread renames itself to match, N times; time
 *                          from the rename to SCHED_FIFO as the thread itself
 *                          sees it (then renames away and waits for the restore)
 *   bench-match create N   N threads that name themselves to match at start;
 *                          time from pthread_create to SCHED_FIFO, and from
 *                          the new thread's own prctl(PR_SET_NAME) (issue
 *                          15's measure: what the daemon can answer for,
 *                          without the thread's own start-up), and that
 *                          start-up alone (pthread_create -> the new thread
 *                          runs, no daemon involved)
 *   bench-match spawn N    the main thread names itself PREFIX-p, which
 *                          the rule matches (it becomes FIFO, with
 *                          reset-on-fork); then N threads, one at a time,
 *                          that inherit that name and rename nothing: time
 *                          from pthread_create to SCHED_FIFO as the new
 *                          thread sees it (a thread the rule matches when it
 *                          is created, not when it first runs)
 *   bench-match hold N     N idle threads (for the start-up scan benchmark);
 *                          prints "ready" and waits for stdin to close */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "bench-common.h"

#define TIMEOUT_US 2e6

static const char *summary_path, *cdf_path, *load;
static int pause_us;
static char match_new[16] = "bench-m-new", match_x[16] = "bench-m-x", match_proc[16] = "bench-m-p";

/* Spin until this thread's policy is (or is not) FIFO; the time it took, or -1. */
static double wait_policy(double start, int fifo)
{
	while (((sched_getscheduler(0) & ~SCHED_RESET_ON_FORK) == SCHED_FIFO) != fifo) {
		if (bench_now_us() - start > TIMEOUT_US)
			return -1;
		sched_yield();
	}
	return bench_now_us() - start;
}

struct created {
	double t0, lat, lat_name, lat_start;
};

static void *created_main(void *arg)
{
	struct created *c = arg;
	double tn = bench_now_us();

	c->lat_start = tn - c->t0;
	pthread_setname_np(pthread_self(), match_new);
	c->lat_name = wait_policy(tn, 1);
	c->lat = c->lat_name < 0 ? -1 : c->lat_name + (tn - c->t0);
	return NULL;
}

/* spawn: the new thread looks at its policy first thing; it names nothing */
static void *spawned_main(void *arg)
{
	struct created *c = arg;

	c->lat = wait_policy(c->t0, 1);
	return NULL;
}

/* One thread started with start (after the pause, untimed) and joined. */
static struct created create_one(void *(*start)(void *))
{
	struct created c;
	pthread_t t;

	if (pause_us > 0)
		usleep((useconds_t)pause_us);
	c = (struct created){ .t0 = bench_now_us() };
	pthread_create(&t, NULL, start, &c);
	pthread_join(t, NULL);
	return c;
}

static void *idle_main(void *arg)
{
	pause();
	return NULL;
}

/* Print a row; add it to the summary CSV and the CDF (as series `key`). */
static void report(const char *key_idle, const char *what_idle, double *lat, int n, int timeouts)
{
	char key[128], what[128];
	FILE *f;

	char paced[32] = "";

	if (pause_us > 0)
		snprintf(paced, sizeof(paced), " every %d us", pause_us);
	snprintf(key, sizeof(key), "%s%s%s%s", key_idle, paced, load ? " under " : "", load ? load : "");
	snprintf(what, sizeof(what), "%s%s%s%s", what_idle, paced, load ? " under " : "", load ? load : "");
	qsort(lat, (size_t)n, sizeof(double), bench_cmp);
	printf("%-34s %8d %10.1f %10.1f %10.1f %9d\n", what, n, bench_pct(lat, n, 50), bench_pct(lat, n, 99),
	       lat[n - 1], timeouts);
	f = bench_open_csv(summary_path, "event,samples,p50_us,p99_us,max_us,timeouts");
	if (f) {
		fprintf(f, "%s,%d,%.1f,%.1f,%.1f,%d\n", what, n, bench_pct(lat, n, 50), bench_pct(lat, n, 99),
			lat[n - 1], timeouts);
		fclose(f);
	}
	bench_write_cdf(cdf_path, key, lat, (size_t)n);
}

int main(int argc, char **argv)
{
	int n, timeouts = 0, got = 0, opt;
	double *lat, *lat_name, *lat_start;

	while ((opt = getopt(argc, argv, "o:c:p:l:i:")) != -1) {
		switch (opt) {
		case 'o': summary_path = optarg; break;
		case 'c': cdf_path = optarg; break;
		case 'i': pause_us = atoi(optarg); break;
		case 'l':
			if (strchr(optarg, ',') || strlen(optarg) > 60)
				return 64;
			load = optarg;
			break;
		case 'p':
			/* "bench-plain", the name that must not match, must not start with PREFIX- */
			if (strlen(optarg) > 10 ||
			    (strncmp(optarg, "bench-plain", strlen(optarg)) == 0 && "bench-plain"[strlen(optarg)] == '-'))
				return 64;
			snprintf(match_new, sizeof(match_new), "%s-new", optarg);
			snprintf(match_x, sizeof(match_x), "%s-x", optarg);
			snprintf(match_proc, sizeof(match_proc), "%s-p", optarg);
			break;
		default: return 64;
		}
	}
	argc -= optind - 1;
	argv += optind - 1;
	n = argc > 2 ? atoi(argv[2]) : 1000;
	lat = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
	lat_name = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
	lat_start = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
	if (argc < 2 || !lat || !lat_name || !lat_start || n < 1)
		return 64;
	if (strcmp(argv[1], "hold") == 0) {
		pthread_attr_t a;
		pthread_t t;
		char name[16];
		pthread_attr_init(&a);
		pthread_attr_setstacksize(&a, 64 * 1024);
		for (int i = 0; i < n; i++) {
			if (pthread_create(&t, &a, idle_main, NULL) != 0) {
				fprintf(stderr, "bench-match: only %d threads\n", i);
				break;
			}
			snprintf(name, sizeof(name), "bench-idle-%d", i % 10000);
			pthread_setname_np(t, name);
		}
		printf("ready\n");
		fflush(stdout);
		while (getchar() != EOF)
			;
		free(lat);
		free(lat_name);
		free(lat_start);
		return 0;
	}
	printf("%-34s %8s %10s %10s %10s %9s\n", "rule matching", "samples", "p50_us", "p99_us", "max_us", "timeouts");
	if (strcmp(argv[1], "rename") == 0) {
		for (int i = 0; i < n; i++) {
			double t0, l;
			if (pause_us > 0)
				usleep((useconds_t)pause_us);
			t0 = bench_now_us();
			pthread_setname_np(pthread_self(), match_x);
			l = wait_policy(t0, 1);
			if (l < 0)
				timeouts++;
			else
				lat[got++] = l;
			pthread_setname_np(pthread_self(), "bench-plain");
			if (wait_policy(bench_now_us(), 0) < 0)
				timeouts++;
		}
		if (got)
			report("rename", "rename -> policy applied", lat, got, timeouts);
	} else if (strcmp(argv[1], "create") == 0) {
		for (int i = 0; i < n; i++) {
			struct created c = create_one(created_main);
			if (c.lat < 0) {
				timeouts++;
			} else {
				lat_name[got] = c.lat_name;
				lat_start[got] = c.lat_start;
				lat[got++] = c.lat;
			}
		}
		if (got) {
			report("create", "create+name -> policy applied", lat, got, timeouts);
			report("create-name", "new thread named -> policy applied", lat_name, got, timeouts);
			report("create-start", "pthread_create -> new thread runs", lat_start, got, timeouts);
		}
	} else if (strcmp(argv[1], "spawn") == 0) {
		double t0 = bench_now_us();
		prctl(PR_SET_NAME, match_proc);
		if (wait_policy(t0, 1) < 0) {
			fprintf(stderr, "bench-match: the main thread did not become SCHED_FIFO as %s: is there a "
				"rule that matches it?\n", match_proc);
			return 1;
		}
		for (int i = 0; i < n; i++) {
			struct created c = create_one(spawned_main);
			if (c.lat < 0)
				timeouts++;
			else
				lat[got++] = c.lat;
		}
		if (got)
			report("spawn", "created matching -> policy applied", lat, got, timeouts);
	} else {
		return 64;
	}
	free(lat);
	free(lat_name);
	free(lat_start);
	return timeouts ? 1 : 0;
}
