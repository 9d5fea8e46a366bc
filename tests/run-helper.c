/* run-helper.c: a program that sets its own scheduling, as olad and jackd
 * do, for tests/run.sh. Each argument is one call, made in order; each
 * prints one line with the call's result and what the kernel then reports
 * for the thread that made it:
 *   fifo:N rr:N     sched_setscheduler(0, policy, N)
 *   fifo-of:T:N     sched_setscheduler(T, SCHED_FIFO, N): another task's
 *   fifo-tid:N      sched_setscheduler(gettid(), SCHED_FIFO, N): itself by
 *                   its number (in its own pid namespace), as glibc's
 *                   pthread_setschedparam names a thread
 *   param:N         sched_setparam(0, N)
 *   attr:N          sched_setattr (the system call's glibc-less name) FIFO N
 *   pthread:N       pthread_setschedparam(pthread_self(), FIFO, N)
 *   prio:N          pthread_setschedprio(pthread_self(), N)
 *   create:N        pthread_create with PTHREAD_EXPLICIT_SCHED FIFO N; the
 *                   new thread prints what it runs at before doing anything
 *   nice:N          nice(N)
 *   setprio:N       setpriority(PRIO_PROCESS, 0, N)
 *   hold            print "holding" and wait until stdin ends
 *   rlimit          print "rlimit rtprio=SOFT:HARD rttime=SOFT:HARD", the
 *                   process's limits as getrlimit(2) reads them (-1: unlimited)
 *   exec PROG ARGS  print "exec pid=PID" and execv(2) PROG with ARGS (the
 *                   rest of the line)
 * Built without the sanitizers, like the preload library it is run with. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

struct attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
};
/* glibc 2.36 has no sched_setattr: the preload library's if it is loaded
 * (looked up at run time, as a program built with a newer glibc links it),
 * else the system call */
static int call_setattr(pid_t pid, struct attr *a, unsigned int flags)
{
	int (*f)(pid_t, struct attr *, unsigned int) =
		(int (*)(pid_t, struct attr *, unsigned int))dlsym(RTLD_DEFAULT, "sched_setattr");

	return f ? f(pid, a, flags) : (int)syscall(SYS_sched_setattr, pid, a, flags);
}

/* "policy=fifo priority=10 nice=0" of the calling thread, from the kernel. */
static void kernel(char *buf, size_t len)
{
	struct sched_param sp = { 0 };
	int p = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
	const char *n = p == SCHED_FIFO ? "fifo" : p == SCHED_RR ? "rr" : p == SCHED_OTHER ? "other" : "?";

	sched_getparam(0, &sp);
	errno = 0;
	snprintf(buf, len, "policy=%s priority=%d nice=%d tid=%d", n, sp.sched_priority,
		 getpriority(PRIO_PROCESS, 0), (int)gettid());
}

static void report(const char *call, int rc, int err)
{
	char k[128];

	kernel(k, sizeof(k));
	printf("%s rc=%d errno=%s %s\n", call, rc, rc ? strerrorname_np(err) ?: "0" : "0", k);
	fflush(stdout);
}

#define LIM(v) ((v) == RLIM_INFINITY ? -1LL : (long long)(v))

static void *thread_main(void *arg)
{
	(void)arg;
	report("thread", 0, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		char *colon = strchr(argv[i], ':');
		int n = colon ? atoi(colon + 1) : 0, rc;
		struct sched_param sp = { .sched_priority = n };

		errno = 0;
		if (strncmp(argv[i], "fifo-of:", 8) == 0 && colon && strchr(colon + 1, ':')) {
			pid_t target = (pid_t)atoi(colon + 1);
			sp.sched_priority = atoi(strchr(colon + 1, ':') + 1);
			rc = sched_setscheduler(target, SCHED_FIFO, &sp);
			report(argv[i], rc, errno);
		} else if (strncmp(argv[i], "fifo-tid:", 9) == 0) {
			rc = sched_setscheduler(gettid(), SCHED_FIFO, &sp);
			report(argv[i], rc, errno);
		} else if (strncmp(argv[i], "fifo:", 5) == 0 || strncmp(argv[i], "rr:", 3) == 0) {
			rc = sched_setscheduler(0, argv[i][0] == 'f' ? SCHED_FIFO : SCHED_RR, &sp);
			report(argv[i], rc, errno);
		} else if (strncmp(argv[i], "param:", 6) == 0) {
			rc = sched_setparam(0, &sp);
			report(argv[i], rc, errno);
		} else if (strncmp(argv[i], "attr:", 5) == 0) {
			struct attr a = { .size = sizeof(a), .policy = SCHED_FIFO, .priority = (uint32_t)n };
			rc = call_setattr(0, &a, 0);
			report(argv[i], rc, errno);
		} else if (strncmp(argv[i], "pthread:", 8) == 0) {
			rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
			report(argv[i], rc ? -1 : 0, rc);
		} else if (strncmp(argv[i], "prio:", 5) == 0) {
			rc = pthread_setschedprio(pthread_self(), n);
			report(argv[i], rc ? -1 : 0, rc);
		} else if (strncmp(argv[i], "create:", 7) == 0) {
			pthread_attr_t a;
			pthread_t t;
			pthread_attr_init(&a);
			pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
			pthread_attr_setschedpolicy(&a, SCHED_FIFO);
			pthread_attr_setschedparam(&a, &sp);
			rc = pthread_create(&t, &a, thread_main, NULL);
			report(argv[i], rc ? -1 : 0, rc);
			if (rc == 0)
				pthread_join(t, NULL);
			pthread_attr_destroy(&a);
		} else if (strncmp(argv[i], "nice:", 5) == 0) {
			rc = nice(n);
			report(argv[i], rc == -1 && errno ? -1 : 0, errno);
		} else if (strncmp(argv[i], "setprio:", 8) == 0) {
			rc = setpriority(PRIO_PROCESS, 0, n);
			report(argv[i], rc, errno);
		} else if (strcmp(argv[i], "rlimit") == 0) {
			struct rlimit p, t;
			getrlimit(RLIMIT_RTPRIO, &p);
			getrlimit(RLIMIT_RTTIME, &t);
			printf("rlimit rtprio=%lld:%lld rttime=%lld:%lld\n", LIM(p.rlim_cur), LIM(p.rlim_max),
			       LIM(t.rlim_cur), LIM(t.rlim_max));
			fflush(stdout);
		} else if (strcmp(argv[i], "exec") == 0 && i + 1 < argc) {
			/* the rest of the line is the program and its arguments */
			printf("exec pid=%d\n", (int)getpid());
			fflush(stdout);
			execv(argv[i + 1], argv + i + 1);
			report(argv[i], -1, errno);
			return 126;
		} else if (strcmp(argv[i], "hold") == 0) {
			char buf[64];
			printf("holding\n");
			fflush(stdout);
			while (read(0, buf, sizeof(buf)) > 0)
				;
		} else {
			fprintf(stderr, "run-helper: unknown call '%s'\n", argv[i]);
			return 64;
		}
	}
	return 0;
}
