/* bench-scan.c: what one look of the watchdog at the machine's tasks costs
 * (scan.c, run at SCHED_FIFO 99 during a starvation episode), against the
 * number of tasks on the machine. Through /proc the look lists every
 * process's threads and reads the stat and schedstat of the real-time ones
 * only; through the BPF task iterator (-b) it is one read, the kernel
 * walking its task list. A machine with many SCHED_OTHER threads (a
 * desktop, or a user who adds thousands of sleeping ones to slow the
 * watchdog down) must not make it expensive.
 *
 *   bench-scan [-b] [-n THREADS] [-r ROUNDS]
 *
 * Starts THREADS (default 0) sleeping SCHED_OTHER threads, then times ROUNDS
 * (default 50) looks and prints one line:
 *     VIA tasks T  rt R  scan p50 X us  max Y us  per task Z us
 * where VIA is /proc or bpf, T the machine's task count (/proc/loadavg)
 * and R how many real-time tasks the look recorded. With -b and no
 * iterator (a build without BPF, no CAP_BPF) it exits 3, saying why. */
#include "autoconfig.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-common.h"
#include "daemon/observe/bpf/tasks.h"
#include "daemon/watchdog/safety_int.h"

static int hold[2];

static void *sleeper(void *arg)
{
	char c;

	(void)arg;
	while (read(hold[0], &c, 1) < 0)
		;
	return NULL;
}

/* The machine's task count: the 4th field of /proc/loadavg, "running/total". */
static long tasks_now(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	long running = 0, total = -1;

	if (f) {
		if (fscanf(f, "%*f %*f %*f %ld/%ld", &running, &total) != 2)
			total = -1;
		fclose(f);
	}
	return total;
}

int main(int argc, char **argv)
{
	long threads = 0, rounds = 50, tasks;
	struct tasks *iter = NULL;
	bool bpf = false;
	struct scan *sc;
	pthread_attr_t a;
	char why[256];
	double *us;
	int opt;

	while ((opt = getopt(argc, argv, "bn:r:")) != -1) {
		if (opt == 'b')
			bpf = true;
		else if (opt == 'n')
			threads = atol(optarg);
		else if (opt == 'r')
			rounds = atol(optarg);
		else {
			fprintf(stderr, "usage: bench-scan [-b] [-n THREADS] [-r ROUNDS]\n");
			return 2;
		}
	}
	if (rounds < 1 || threads < 0 || pipe(hold) < 0)
		return 2;
	if (bpf && tasks_new(&iter, why, sizeof(why)) < 0) {
		fprintf(stderr, "bench-scan: no BPF task iterator: %s\n", why);
		return 3;
	}
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 * 1024);
	for (long i = 0; i < threads; i++) {
		pthread_t th;
		if (pthread_create(&th, &a, sleeper, NULL)) {
			fprintf(stderr, "bench-scan: could start only %ld threads\n", i);
			return 1;
		}
	}
	sc = calloc(1, sizeof(*sc));
	us = calloc((size_t)rounds, sizeof(*us));
	if (!sc || !us || safety_scan_init(sc) < 0) {
		fprintf(stderr, "bench-scan: out of memory, or /proc unreadable\n");
		return 1;
	}
	sc->tasks = iter;
	safety_scan_begin(sc, clock_nsec(CLOCK_MONOTONIC), 0);
	tasks = tasks_now();
	for (long i = 0; i < rounds; i++) {
		double t0 = bench_now_us();
		safety_scan_run(sc);
		us[i] = bench_now_us() - t0;
	}
	qsort(us, (size_t)rounds, sizeof(*us), bench_cmp);
	if (sc->iter_failed) {
		fprintf(stderr, "bench-scan: %lu of the iterator's reads failed\n", sc->iter_failed);
		return 1;
	}
	printf("%-5s  tasks %ld  rt %zu  scan p50 %.0f us  max %.0f us  per task %.2f us\n", bpf ? "bpf" : "/proc",
	       tasks, sc->n,
	       bench_pct(us, (size_t)rounds, 50), us[rounds - 1],
	       tasks > 0 ? bench_pct(us, (size_t)rounds, 50) / (double)tasks : 0.0);
	close(sc->proc);
	free(sc);
	free(us);
	tasks_free(iter);
	return 0;
}
