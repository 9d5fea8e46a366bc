/* spin-helper.c: a runaway thread for tests/runaway.sh.
 *
 *   spin-helper [--cpu N] [--name NAME] [--mode spin|duty|idle] [--seconds S]
 *               [--register ROLE|-] [--busy-ms B] [--period-ms P] [--serial MS]
 *               [--workers W] [--move-to M] [--register-process ROLE|-]
 *               [--repromote 1]
 *   spin-helper query TID    print what the kernel reports for TID
 *
 * One worker thread named NAME ("runaway"), pinned to CPU N (0), prints
 * "tid TID pid PID" on stdout once it exists. Its work: "spin" burns the CPU
 * forever, "duty" burns B ms (10) of every P ms (20) (a steady, well-behaved
 * real-time load: 50% by default), "idle" sleeps. SIGUSR1 switches it to spin, SIGUSR2 to
 * idle; each time it starts to spin it prints "spinning" (a test's proof
 * that the CPU is now taken, not a guess of how long that takes). With --register it first asks rtschedd for real-time scheduling
 * through librtsched (ROLE "-": the daemon's default) and prints
 * "registered POLICY PRIO" or "err ERRNO". Whatever happens, the process
 * exits after S seconds (60): a test that dies cannot leave a spinner behind.
 *
 * --workers W: W such workers, the i-th pinned to CPU N + i (modulo the CPUs
 * online), each announced
 * ("tid ...") and doing the same work. --move-to M: each worker, once
 * announced (and registered), pins itself to CPU M instead and prints
 * "moved M" before it starts its work. --register-process: once every
 * worker spins, the main thread registers the whole process in one request
 * (pid=) and prints "registered process N" or "err ERRNO".
 *
 * --repromote 1: a spinning worker that finds itself demoted from a
 * real-time policy (by the watchdog) prints "demoted", sets that policy and
 * priority back on itself at once and prints "repromoted POLICY PRIO" (it
 * needs a limit or CAP_SYS_NICE of its own: root). --repromote 2: the same,
 * but it spins on as SCHED_OTHER until a SIGUSR1 (one per demotion).
 *
 * --serial MS: the watchdog dodge of issue 23. One worker after another,
 * each new (its own tid), pinned, registered as above (it prints "tid",
 * then "registered" or "err" each time), spins MS ms and exits; the next
 * starts at once. Each lives shorter than the daemon's 100 ms deferral of
 * what it tells its watchdog, so none is ever published, while together
 * they keep the CPU real-time-busy. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rtsched.h"

enum { MODE_IDLE, MODE_SPIN, MODE_DUTY };

static atomic_int mode = MODE_SPIN;
static int cpu, n_workers = 1, move_to = -1;
static const char *proc_role;
static atomic_int n_spinning;
static double seconds = 60;
static const char *name = "runaway";
static const char *role;
static double busy_s = 0.010, period_s = 0.020;
static double serial_s;    /* --serial: each worker's life; 0: one worker */
static int repromote;      /* --repromote */
static atomic_int raise_ok; /* --repromote 2: a SIGUSR1 came */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_usr(int sig)
{
	atomic_store(&mode, sig == SIGUSR1 ? MODE_SPIN : MODE_IDLE);
	if (sig == SIGUSR1)
		atomic_store(&raise_ok, 1);
}

static void pin(int c)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(c, &one);
	if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one)) {
		printf("err affinity\n");
		exit(2);
	}
}

/* Pin, name, announce and (with --register) register the calling thread. */
static void worker_start(int c)
{
	pin(c);
	pthread_setname_np(pthread_self(), name);
	printf("tid %d pid %d\n", gettid(), getpid());
	if (role) {
		struct rtsched_request req = RTSCHED_REQUEST_INIT;
		struct rtsched_grant g;
		int r;

		req.role = strcmp(role, "-") ? role : NULL;
		r = rtsched_register(&req, &g);
		if (r < 0)
			printf("err %d %s\n", -r, rtsched_last_message());
		else
			printf("registered %s %d\n", g.policy, g.priority);
	}
	if (move_to >= 0) {
		pin(move_to);
		printf("moved %d\n", move_to);
	}
}

/* --repromote: back to the real-time policy it last had, if demoted. */
static void repromote_check(int *pol, struct sched_param *sp, bool *told)
{
	int now = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
	struct sched_param p;

	/* the priority 0 of a demotion between the two calls is not kept */
	if ((now == SCHED_FIFO || now == SCHED_RR) && sched_getparam(0, &p) == 0 && p.sched_priority > 0) {
		*pol = now;
		*sp = p;
		*told = false;
	} else if (now == SCHED_FIFO || now == SCHED_RR || *pol < 0) {
		return;
	} else if (!*told) {
		printf("demoted\n");
		*told = true;
		atomic_store(&raise_ok, 0);
	} else if (repromote == 1 || atomic_load(&raise_ok)) {
		if (sched_setscheduler(0, *pol, sp) == 0)
			printf("repromoted %s %d\n", *pol == SCHED_FIFO ? "fifo" : "rr", sp->sched_priority);
		else
			printf("err repromote %d\n", errno);
		*pol = -1;   /* once per demotion */
	}
}

/* --serial: one short-lived spinner. */
static void *serial_worker(void *arg)
{
	double end;

	worker_start(cpu);
	end = now_s() + serial_s;
	while (now_s() < end)
		;
	return NULL;
}

static void *worker(void *arg)
{
	double end = now_s() + seconds;

	if (serial_s > 0) {
		while (now_s() < end) {
			pthread_t th;
			if (pthread_create(&th, NULL, serial_worker, NULL))
				exit(1);
			pthread_join(th, NULL);
		}
		exit(0);
	}
	worker_start((cpu + (int)(intptr_t)arg) % (int)sysconf(_SC_NPROCESSORS_ONLN));
	while (now_s() < end) {
		int m = atomic_load(&mode);
		double t = now_s();

		if (m == MODE_SPIN) {
			int pol = -1;
			struct sched_param sp = { 0 };
			bool told = false;

			printf("spinning\n");
			atomic_fetch_add(&n_spinning, 1);
			while (atomic_load(&mode) == MODE_SPIN && now_s() < end)
				if (repromote)
					repromote_check(&pol, &sp, &told);
		} else if (m == MODE_DUTY) {
			while (now_s() < t + busy_s)
				;
			usleep((useconds_t)((period_s - busy_s) * 1e6));
		} else {
			usleep(20000);
		}
	}
	exit(0);
}

static void query(pid_t tid)
{
	struct sched_param sp;
	int pol = sched_getscheduler(tid);

	if (pol < 0 || sched_getparam(tid, &sp) < 0) {
		printf("error %s\n", strerror(errno));
		exit(1);
	}
	pol &= ~SCHED_RESET_ON_FORK;
	printf("policy=%s priority=%d\n", pol == SCHED_FIFO ? "fifo" : pol == SCHED_RR ? "rr" :
	       pol == SCHED_BATCH ? "batch" : pol == SCHED_IDLE ? "idle" : "other", sp.sched_priority);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr };
	pthread_t th;
	sigset_t usr;

	if (argc == 3 && strcmp(argv[1], "query") == 0) {
		query(atoi(argv[2]));
		return 0;
	}
	for (int i = 1; i < argc; i += 2) { /* OPTION VALUE pairs */
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v) {
			fprintf(stderr, "usage: spin-helper [--cpu N] [--name NAME] [--mode spin|duty|idle] "
				"[--seconds S] [--register ROLE|-] [--busy-ms B] [--period-ms P] [--serial MS] [--workers W] [--move-to M] [--register-process ROLE|-] [--repromote 1] | query TID\n");
			return 64;
		}
		if (strcmp(a, "--cpu") == 0)
			cpu = atoi(v);
		else if (strcmp(a, "--name") == 0)
			name = v;
		else if (strcmp(a, "--seconds") == 0)
			seconds = atof(v);
		else if (strcmp(a, "--register") == 0)
			role = v;
		else if (strcmp(a, "--busy-ms") == 0)
			busy_s = atof(v) / 1e3;
		else if (strcmp(a, "--period-ms") == 0)
			period_s = atof(v) / 1e3;
		else if (strcmp(a, "--serial") == 0)
			serial_s = atof(v) / 1e3;
		else if (strcmp(a, "--register-process") == 0)
			proc_role = v;
		else if (strcmp(a, "--workers") == 0)
			n_workers = atoi(v);
		else if (strcmp(a, "--move-to") == 0)
			move_to = atoi(v);
		else if (strcmp(a, "--repromote") == 0)
			repromote = atoi(v);
		else if (strcmp(a, "--mode") == 0)
			atomic_store(&mode, strcmp(v, "duty") == 0 ? MODE_DUTY : strcmp(v, "idle") == 0 ? MODE_IDLE : MODE_SPIN);
		else {
			fprintf(stderr, "spin-helper: unknown option %s\n", a);
			return 64;
		}
	}
	if (busy_s <= 0 || period_s <= busy_s) {
		fprintf(stderr, "spin-helper: --busy-ms must be above 0 and below --period-ms\n");
		return 64;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	/* the signals land in the main thread, which is never starved of them */
	sigemptyset(&usr);
	sigaddset(&usr, SIGUSR1);
	sigaddset(&usr, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &usr, NULL);
	for (int i = 0; i < n_workers; i++)
		if (pthread_create(&th, NULL, worker, (void *)(intptr_t)i))
			return 1;
	pthread_sigmask(SIG_UNBLOCK, &usr, NULL);
	if (proc_role) {
		struct rtsched_request req = RTSCHED_REQUEST_INIT;
		struct rtsched_grant g;
		int r;

		while (atomic_load(&n_spinning) < n_workers)
			usleep(1000);
		req.pid = getpid();
		req.role = strcmp(proc_role, "-") ? proc_role : NULL;
		r = rtsched_register(&req, &g);
		if (r < 0)
			printf("err %d %s\n", -r, rtsched_last_message());
		else
			printf("registered process %d\n", g.threads);
	}
	for (;;)
		pause();
}
