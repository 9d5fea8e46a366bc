/* bench-register.c: registration round trip through librtsched, from the
 * request to the policy applied and read back to the reply, as a worker
 * thread sees it, beside the floor no daemon can beat. Three series, run in
 * interleaved rounds so a burst of load on the machine hits all of them:
 *
 *   floor     two threads of this process: one SOCK_SEQPACKET round trip
 *             (socketpair) in which the other thread does sched_setattr +
 *             sched_getattr + sched_getaffinity on the caller, and replies
 *             with what the kernel reported. What any daemon must do at
 *             least, with no parsing, authorization or bookkeeping.
 *   kept      rtsched_register_self() over librtsched's kept connection
 *             (the default).
 *   new       rtsched_disconnect() + rtsched_register_self(): a new
 *             connection per call (connect, the daemon's accept and
 *             credential look-ups, close), as librtsched did before it kept
 *             one and as rtschedctl does.
 *
 * Every request alternates two roles (FIFO 10 and 11) so it really changes
 * the thread's scheduling, and after each call, outside the timed part, the
 * kernel must report what was asked.
 *
 *   bench-register [-w WARMUP] [-r ROUNDS] [-s SERIES] [-i PAUSE_US] [-o SUMMARY.csv] [-c CDF.csv] [N]
 *
 * SERIES: a comma-separated subset of floor,kept,new (default all), e.g. to
 * profile the daemon under one kind of load.
 * N requests per series (default 10000) in ROUNDS rounds (default 10), after
 * WARMUP untimed ones per series (default 50); socket from $RTSCHED_SOCKET.
 * Needs rules bench-a (fifo 10) and bench-b (fifo 11). Prints one table row
 * per series; exits 1 if any request failed or the kernel did not report
 * what was asked. PAUSE_US: a pause after every timed request (untimed), so
 * an unprivileged user stays under the daemon's rate-limit (section 13). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench-common.h"
#include "rtsched.h"

#ifndef SCHED_FLAG_RESET_ON_FORK
#define SCHED_FLAG_RESET_ON_FORK 0x01
#endif

#define SUMMARY_HEADER "system,connection,samples,failed,p50_us,p90_us,p99_us,max_us,mean_us,req_per_s"

enum series { FLOOR, KEPT, NEW, NSERIES };
static const char *const sys_name[NSERIES] = { "floor", "rtschedd", "rtschedd" };
static const char *const conn_name[NSERIES] = { "socketpair+syscalls", "kept", "new-per-call" };
static const char *const cdf_name[NSERIES] = { "floor", "rtschedd kept", "rtschedd new-per-call" };

/* The kernel's struct sched_attr (glibc 2.36 has no wrapper). */
struct sched_attr_k {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime, sched_deadline, sched_period;
	uint32_t sched_util_min, sched_util_max;
};

struct floor_req {
	pid_t tid;
	int prio;
};

struct floor_rep {
	int err;
	uint32_t policy, prio;
	int ncpus;
};

/* The floor's other thread: apply, read back, reply; until the socket closes. */
static void *floor_server(void *arg)
{
	int fd = *(int *)arg;
	struct floor_req q;
	struct floor_rep p;

	while (recv(fd, &q, sizeof(q), 0) == (ssize_t)sizeof(q)) {
		struct sched_attr_k a = { .size = sizeof(a), .sched_policy = SCHED_FIFO,
					  .sched_flags = SCHED_FLAG_RESET_ON_FORK, .sched_priority = (uint32_t)q.prio };
		cpu_set_t set;

		p.err = 0;
		if (syscall(SYS_sched_setattr, q.tid, &a, 0) < 0 ||
		    syscall(SYS_sched_getattr, q.tid, &a, sizeof(a), 0) < 0 ||
		    sched_getaffinity(q.tid, sizeof(set), &set) < 0)
			p.err = errno;
		p.policy = a.sched_policy;
		p.prio = a.sched_priority;
		p.ncpus = CPU_COUNT(&set);
		if (send(fd, &p, sizeof(p), MSG_NOSIGNAL) < 0)
			break;
	}
	return NULL;
}

static int floor_fd = -1;

/* One floor round trip for the calling thread: 0 or -errno. */
static int floor_call(int prio)
{
	struct floor_req q = { gettid(), prio };
	struct floor_rep p;

	if (send(floor_fd, &q, sizeof(q), MSG_NOSIGNAL) < 0)
		return -errno;
	if (recv(floor_fd, &p, sizeof(p), 0) != (ssize_t)sizeof(p))
		return -EIO;
	if (p.err)
		return -p.err;
	return p.policy == SCHED_FIFO && (int)p.prio == prio ? 0 : -EPROTO;
}

/* The calling thread's policy is FIFO at prio: 1 if so. */
static int is_fifo(int prio)
{
	struct sched_param sp;
	int pol = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;

	return pol == SCHED_FIFO && sched_getparam(0, &sp) == 0 && sp.sched_priority == prio;
}

/* One request of series s asking for FIFO 10 + (i & 1). */
static int one(enum series s, int i)
{
	static const char *const roles[2] = { "bench-a", "bench-b" };

	switch (s) {
	case FLOOR:
		return floor_call(10 + (i & 1));
	case NEW:
		rtsched_disconnect();
		/* fall through */
	default:
		return rtsched_register_self(roles[i & 1]);
	}
}

int main(int argc, char **argv)
{
	const char *summary = NULL, *cdf = NULL;
	int n, warmup = 50, rounds = 10, pause_us = 0, opt, sv[2], failures[NSERIES] = { 0 }, wrong[NSERIES] = { 0 }, done[NSERIES] = { 0 };
	double *lat[NSERIES], total[NSERIES] = { 0 };
	int want[NSERIES] = { 1, 1, 1 };
	pthread_t server;
	FILE *f;
	int bad = 0;

	while ((opt = getopt(argc, argv, "w:r:s:i:o:c:")) != -1) {
		switch (opt) {
		case 's':
			want[FLOOR] = strstr(optarg, "floor") != NULL;
			want[KEPT] = strstr(optarg, "kept") != NULL;
			want[NEW] = strstr(optarg, "new") != NULL;
			break;
		case 'w': warmup = atoi(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		case 'i': pause_us = atoi(optarg); break;
		case 'o': summary = optarg; break;
		case 'c': cdf = optarg; break;
		default: return 64;
		}
	}
	n = optind < argc ? atoi(argv[optind]) : 10000;
	if (n < 1 || rounds < 1 || rounds > n)
		return 64;
	for (int s = 0; s < NSERIES; s++)
		if (!(lat[s] = malloc(sizeof(double) * (size_t)n)))
			return 1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 ||
	    pthread_create(&server, NULL, floor_server, &sv[1]) != 0) {
		perror("bench-register: floor");
		return 1;
	}
	floor_fd = sv[0];
	for (int s = 0; s < NSERIES; s++)
		for (int i = 0; want[s] && i < warmup; i++)
			one((enum series)s, i);
	/* round r runs the series in a rotated order, so none always goes first */
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < NSERIES; k++) {
			enum series s = (enum series)((r + k) % NSERIES);
			int end = (int)((long)n * (r + 1) / rounds);

			if (!want[s])
				continue;
			for (int i = done[s]; i < end; i++) {
				double t0 = bench_now_us();
				int rc = one(s, i);

				lat[s][i] = bench_now_us() - t0;
				total[s] += lat[s][i];
				if (rc < 0) {
					if (failures[s]++ == 0)
						fprintf(stderr, "bench-register: %s %s: %s: %s\n", sys_name[s], conn_name[s],
							rtsched_strerror(rc), s == FLOOR ? "" : rtsched_last_message());
				} else if (!is_fifo(10 + (i & 1))) {
					wrong[s]++;
				}
				if (pause_us > 0)
					usleep((useconds_t)pause_us);
			}
			done[s] = end;
		}
	}
	rtsched_unregister_self();
	close(floor_fd);
	pthread_join(server, NULL);
	close(sv[1]);
	f = bench_open_csv(summary, SUMMARY_HEADER);
	for (int s = 0; s < NSERIES; s++) {
		double *v = lat[s];

		if (!want[s]) {
			free(v);
			continue;
		}
		qsort(v, (size_t)n, sizeof(double), bench_cmp);
		printf("%-10s %-20s %8d %6d %9.1f %9.1f %9.1f %9.1f %9.1f %10.0f\n", sys_name[s], conn_name[s], n,
		       failures[s] + wrong[s], bench_pct(v, n, 50), bench_pct(v, n, 90), bench_pct(v, n, 99),
		       v[n - 1], total[s] / n, n / (total[s] / 1e6));
		if (wrong[s])
			fprintf(stderr, "bench-register: %s %s: %d replies were OK but the kernel reported another policy\n",
				sys_name[s], conn_name[s], wrong[s]);
		if (f)
			fprintf(f, "%s,%s,%d,%d,%.1f,%.1f,%.1f,%.1f,%.1f,%.0f\n", sys_name[s], conn_name[s], n,
				failures[s] + wrong[s], bench_pct(v, n, 50), bench_pct(v, n, 90), bench_pct(v, n, 99),
				v[n - 1], total[s] / n, n / (total[s] / 1e6));
		bench_write_cdf(cdf, cdf_name[s], v, (size_t)n);
		bad |= failures[s] || wrong[s];
		free(v);
	}
	if (f)
		fclose(f);
	return bad;
}
