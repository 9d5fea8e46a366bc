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
 *   churn:N         4 threads each create and join N threads, all at once
 *                   (the preload library's table of thread ids filled and
 *                   emptied concurrently); prints "churn:N rc=0 ..."
 *   others:N        during a churn of 4 x 1100 threads (more than the
 *                   table's 4096 slots), N threads that wait; then
 *                   pthread_setschedparam(FIFO 10+K) on the K-th from this
 *                   thread, and each prints "other:K rc=RC ..." (RC that
 *                   call's) with what it runs at; after the churn one more
 *                   thread is set to FIFO 30 the same way: "late rc=RC ..."
 * Built without the sanitizers, like the preload library it is run with. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
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

/* --- churn:N and others:N ---------------------------------------------------------- */

static void *idle_main(void *arg)
{
	return arg;
}

static void *churn_main(void *arg)
{
	int n = *(int *)arg;

	for (int k = 0; k < n; k++) {
		pthread_t t;
		if (pthread_create(&t, NULL, idle_main, NULL) != 0)
			return (void *)1;
		pthread_join(t, NULL);
	}
	return NULL;
}

#define CHURNERS 4
static pthread_t churners[CHURNERS];

/* Start CHURNERS threads that each create and join n threads. */
static int churn_start(int *n)
{
	for (int k = 0; k < CHURNERS; k++)
		if (pthread_create(&churners[k], NULL, churn_main, n) != 0)
			return -1;
	return 0;
}

/* Wait for them: 0 if every thread could be made. */
static int churn_end(void)
{
	int bad = 0;

	for (int k = 0; k < CHURNERS; k++) {
		void *r;
		pthread_join(churners[k], &r);
		bad |= r != NULL;
	}
	return bad ? -1 : 0;
}

struct other {
	pthread_t th;
	char name[32];
	int rc;        /* the pthread_setschedparam this thread waits for */
	sem_t up, go;
};

static void *other_main(void *arg)
{
	struct other *o = arg;

	sem_post(&o->up);
	while (sem_wait(&o->go) < 0)
		;
	report(o->name, o->rc ? -1 : 0, o->rc);
	return NULL;
}

/* Start o's thread and wait until it runs its start routine (the preload
 * library enters a thread in its table when the thread starts: a
 * pthread_setschedparam right after pthread_create may come first), then
 * other_set() sets it to FIFO prio from here and lets it report. */
static int other_start(struct other *o, const char *name)
{
	snprintf(o->name, sizeof(o->name), "%s", name);
	sem_init(&o->up, 0, 0);
	sem_init(&o->go, 0, 0);
	if (pthread_create(&o->th, NULL, other_main, o) != 0)
		return -1;
	while (sem_wait(&o->up) < 0)
		;
	return 0;
}

static void other_set(struct other *o, int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	o->rc = pthread_setschedparam(o->th, SCHED_FIFO, &sp);
	sem_post(&o->go);
}

static int others(int n)
{
	static int per = 1100;
	struct other *o = calloc((size_t)n + 1, sizeof(*o));
	char name[32];
	int rc = 0;

	if (!o || churn_start(&per) < 0)
		return -1;
	for (int k = 0; k < n; k++) {
		snprintf(name, sizeof(name), "other:%d", k);
		if (other_start(&o[k], name) != 0)
			rc = -1;
	}
	for (int k = 0; k < n; k++)
		other_set(&o[k], 10 + k);
	for (int k = 0; k < n; k++)
		pthread_join(o[k].th, NULL);
	if (churn_end() < 0)
		rc = -1;
	if (other_start(&o[n], "late") != 0)
		return -1;
	other_set(&o[n], 30);
	pthread_join(o[n].th, NULL);
	free(o);
	return rc;
}

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
		} else if (strncmp(argv[i], "churn:", 6) == 0) {
			rc = churn_start(&n) < 0 ? -1 : churn_end();
			report(argv[i], rc, rc ? EAGAIN : 0);
		} else if (strncmp(argv[i], "others:", 7) == 0) {
			rc = others(n);
			report(argv[i], rc, rc ? EAGAIN : 0);
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
