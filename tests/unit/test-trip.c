/* test-trip.c: the watchdog's choice of culprits at a trip (watchdog/trip.c,
 * watchdog-demote = culprit), on real threads of the test measured by the
 * watchdog's own /proc scan (scan.c): per starved CPU, the real-time threads
 * that may run there and used its time since the scan began are named with
 * what they ran, and those rtschedd manages are set to SCHED_OTHER by the
 * kernel; an idle real-time thread on the same CPU, one that may only run on
 * another CPU and a SCHED_OTHER one are not named; one rtschedd does not
 * manage (a stale entry: its tid's start time changed) is named but keeps
 * its policy; when the real-time threads together ran too little the trip
 * blames no one. What each thread ran is real CPU time (each spins
 * until its own clock says so), so nothing depends on the machine's speed.
 * A user whose real-time threads ran a small share of the time they were
 * there is let off while another accounts for the stall. Every case runs
 * twice: reading the tasks from /proc, and through the BPF
 * task iterators (observe/bpf/tasks.h; skipped where they cannot load),
 * whose records are also compared with /proc's.
 * Needs a process that may be real-time (CAP_SYS_NICE): skipped without. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/observe/bpf/tasks.h"
#include "daemon/sys/proc.h"
#include "daemon/watchdog/safety_int.h"

/* unit-util.h's, which cannot come with safety_int.h (each has a struct worker) */
void unit_skip(const char *what);
bool unit_can_realtime(void);
int unit_run(Suite *s);

#define THRESHOLD_NS (20 * MSEC)
#define SPIN_NS (60 * MSEC)

/* A thread of the test: runs as told, spins SPIN_NS of its own CPU time at
 * each `go`, and blocks in between (no wake-ups: an idle thread's run time
 * stays near 0 however slow the machine). Each case keeps its spinners in
 * static storage, never on its stack: a case that fails (under valgrind
 * every case runs in one process, CK_FORK=no) leaves by a longjmp, and its
 * spinners, still running, must not share memory with the next case's;
 * the fixture's teardown (leftovers()) stops them. */
struct spinner {
	pthread_t th;
	pid_t tid;
	sem_t up, go, done;
	volatile bool stop;
};

#define LIVE_MAX 16
static struct spinner *live[LIVE_MAX];   /* started, not yet stopped */
static pid_t kids[LIVE_MAX];             /* spin_process()'s, not yet stopped */

static void live_add(struct spinner *sp)
{
	for (size_t i = 0; i < LIVE_MAX; i++)
		if (!live[i]) {
			live[i] = sp;
			return;
		}
	ck_abort_msg("more than %d spinners at once", LIVE_MAX);
}

/* Spin until this thread has used ns of CPU time. */
static void spin_cpu(uint64_t ns)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while ((uint64_t)(t.tv_sec - t0.tv_sec) * NSEC + (uint64_t)t.tv_nsec - (uint64_t)t0.tv_nsec < ns);
}

static void *spinner_main(void *arg)
{
	struct spinner *sp = arg;

	sp->tid = gettid();
	sem_post(&sp->up);
	for (;;) {
		while (sem_wait(&sp->go) < 0)
			;
		if (sp->stop)
			return NULL;
		spin_cpu(SPIN_NS);
		sem_post(&sp->done);
	}
}

/* Start it on `cpu` with policy/prio. */
static void spinner_start(struct spinner *sp, int cpu, int policy, int prio)
{
	struct sched_param p = { .sched_priority = prio };
	cpu_set_t one;

	memset(sp, 0, sizeof(*sp));
	sem_init(&sp->up, 0, 0);
	sem_init(&sp->go, 0, 0);
	sem_init(&sp->done, 0, 0);
	ck_assert_int_eq(pthread_create(&sp->th, NULL, spinner_main, sp), 0);
	live_add(sp);
	while (sem_wait(&sp->up) < 0)
		;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	ck_assert_int_eq(pthread_setaffinity_np(sp->th, sizeof(one), &one), 0);
	ck_assert_int_eq(pthread_setschedparam(sp->th, policy, &p), 0);
}

static void spinner_spin(struct spinner *sp)
{
	sem_post(&sp->go);
	while (sem_wait(&sp->done) < 0)
		;
}

/* (a hog_main() thread too: it ends at `stop` whether it had `go` or not) */
static void spinner_stop(struct spinner *sp)
{
	sp->stop = true;
	sem_post(&sp->go);
	pthread_join(sp->th, NULL);
	for (size_t i = 0; i < LIVE_MAX; i++)
		if (live[i] == sp)
			live[i] = NULL;
}

static int policy_of(pid_t tid)
{
	return sched_getscheduler(tid) & ~SCHED_RESET_ON_FORK;
}

/* The task iterators, loaded before the cases fork; the "bpf" cases read
 * through them (`via_iter`, set by their fixture). */
static struct tasks *iter;
static bool via_iter;

static void use_iter(void)
{
	via_iter = true;
}

/* A watchdog that has published `sp`, its scan started now and a first
 * reading taken: just what trip.c reads. */
static struct safety s;
static struct snapshot snap;
static struct safety_entry entries[8];

static int by_tid(const void *a, const void *b)
{
	const struct safety_entry *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static void publish(struct spinner **sp, size_t n, size_t stale)
{
	struct proc_stat st;
	long tck = sysconf(_SC_CLK_TCK);

	memset(&s, 0, sizeof(s));
	atomic_store(&s.threshold_ns, THRESHOLD_NS);
	s.notify = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge(s.notify, 0);
	s.clk_tck = tck > 0 ? tck : 100;
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(proc_read_stat_at(NULL, getpid(), sp[i]->tid, &st), 0);
		/* the stale one: its tid names another thread now */
		entries[i] = (struct safety_entry){ sp[i]->tid, getpid(), st.starttime + (i == stale) };
	}
	qsort(entries, n, sizeof(entries[0]), by_tid);
	snap = (struct snapshot){ .n = n, .threads = entries };
	atomic_store(&s.snap, &snap);
	s.scan = calloc(1, sizeof(*s.scan));
	ck_assert_ptr_nonnull(s.scan);
	ck_assert_int_eq(safety_scan_init(s.scan), 0);
	s.scan->tasks = via_iter ? iter : NULL;
	safety_scan_begin(s.scan, clock_nsec(CLOCK_MONOTONIC),
			  clock_nsec(CLOCK_BOOTTIME) / (NSEC / (uint64_t)s.clk_tck));
	safety_scan_run(s.scan);   /* the baseline: what ran before does not count */
}

static void scan_drop(void)
{
	if (!s.scan)
		return;
	close(s.scan->proc);
	free(s.scan);
	s.scan = NULL;
	close(s.notify);
}

static void unpublish(void)
{
	/* an iterator that failed would have left these cases to /proc */
	ck_assert_uint_eq(s.scan->iter_failed, 0);
	scan_drop();
}

/* A trip: CPU 0 starved, three thresholds' worth, now. */
static void trip_cpu0(void)
{
	cpu_set_t starved;

	CPU_ZERO(&starved);
	CPU_SET(0, &starved);
	safety_trip(&s, &starved, 3 * THRESHOLD_NS, clock_nsec(CLOCK_MONOTONIC), 0);
}

/* The record's entry for tid, or NULL. */
static const struct safety_culprit *culprit_of(pid_t tid)
{
	for (size_t i = 0; i < s.trip[0].n; i++)
		if (s.trip[0].c[i].tid == tid)
			return &s.trip[0].c[i];
	return NULL;
}

/* CPU 0 starved: the managed real-time spinner there is demoted; the one
 * there idle in the window (it ran before), the spinner pinned elsewhere
 * and the SCHED_OTHER spinner are not named and keep theirs; a real-time
 * spinner rtschedd does not manage (its entry's start time is another
 * thread's) is named with what it ran but keeps its policy. */
START_TEST(test_culprits)
{
	static struct spinner culprit, idle, elsewhere, other, stale;
	struct spinner *all[] = { &culprit, &idle, &elsewhere, &other, &stale };
	const struct safety_culprit *c;
	uint64_t v;

	spinner_start(&culprit, 0, SCHED_FIFO, 1);
	spinner_start(&idle, 0, SCHED_FIFO, 2);
	spinner_start(&elsewhere, 1, SCHED_FIFO, 3);
	spinner_start(&other, 0, SCHED_OTHER, 0);
	spinner_start(&stale, 0, SCHED_FIFO, 4);
	spinner_spin(&idle);   /* before the window: not counted */
	publish(all, 5, 4);
	spinner_spin(&culprit);
	spinner_spin(&elsewhere);
	spinner_spin(&other);
	spinner_spin(&stale);

	trip_cpu0();
	ck_assert_int_eq(atomic_load(&s.trip_state[0]), TRIP_READY);
	ck_assert_int_eq(read(s.notify, &v, sizeof(v)), (ssize_t)sizeof(v));   /* the main loop is told */
	ck_assert_uint_eq(s.trip[0].n_demoted, 1);
	ck_assert_uint_eq(s.trip[0].n_failed, 0);
	ck_assert_ptr_nonnull(c = culprit_of(culprit.tid));
	ck_assert(c->managed && c->demoted);
	ck_assert_int_eq(c->pid, getpid());
	ck_assert_int_eq(c->cpu, 0);
	ck_assert_int_eq(c->policy, SCHED_FIFO);
	ck_assert_int_eq(c->priority, 1);
	ck_assert_uint_ge(c->ran_ns, SPIN_NS / 2);
	ck_assert_ptr_nonnull(c = culprit_of(stale.tid));
	ck_assert(!c->managed && !c->demoted);
	ck_assert_ptr_null(culprit_of(idle.tid));
	ck_assert_ptr_null(culprit_of(elsewhere.tid));
	ck_assert_ptr_null(culprit_of(other.tid));
	/* what the kernel says */
	ck_assert_int_eq(policy_of(culprit.tid), SCHED_OTHER);
	ck_assert_int_eq(policy_of(idle.tid), SCHED_FIFO);
	ck_assert_int_eq(policy_of(elsewhere.tid), SCHED_FIFO);
	ck_assert_int_eq(policy_of(other.tid), SCHED_OTHER);
	ck_assert_int_eq(policy_of(stale.tid), SCHED_FIFO);
	unpublish();
	for (size_t i = 0; i < 5; i++)
		spinner_stop(all[i]);
}
END_TEST

/* Only an idle real-time thread there: it did not starve the CPU, so
 * nothing is named or demoted; the main loop gets the CPU's total to log. */
START_TEST(test_no_culprit)
{
	static struct spinner idle;
	struct spinner *all[] = { &idle };

	spinner_start(&idle, 0, SCHED_FIFO, 2);
	spinner_spin(&idle);   /* before the window */
	publish(all, 1, SIZE_MAX);
	trip_cpu0();
	ck_assert_uint_eq(s.trip[0].n_demoted, 0);
	ck_assert_ptr_null(culprit_of(idle.tid));
	ck_assert_uint_eq(s.trip[0].n_cpu_sum, 1);
	ck_assert_int_eq(s.trip[0].cpu_sum[0].cpu, 0);
	ck_assert_int_eq(policy_of(idle.tid), SCHED_FIFO);
	unpublish();
	spinner_stop(&idle);
}
END_TEST

/* Two real-time spinners on the starved CPU, each half of what ran there:
 * both are culprits, each named and demoted. */
START_TEST(test_two_culprits)
{
	static struct spinner a, b;
	struct spinner *all[] = { &a, &b };

	spinner_start(&a, 0, SCHED_FIFO, 1);
	spinner_start(&b, 0, SCHED_RR, 5);
	publish(all, 2, SIZE_MAX);
	spinner_spin(&a);
	spinner_spin(&b);
	trip_cpu0();
	ck_assert_uint_eq(s.trip[0].n_demoted, 2);
	ck_assert_ptr_nonnull(culprit_of(a.tid));
	const struct safety_culprit *cb = culprit_of(b.tid);
	ck_assert_ptr_nonnull(cb);
	ck_assert_int_eq(cb->policy, SCHED_RR);
	ck_assert_int_eq(policy_of(a.tid), SCHED_OTHER);
	ck_assert_int_eq(policy_of(b.tid), SCHED_OTHER);
	unpublish();
	spinner_stop(&a);
	spinner_stop(&b);
}
END_TEST

/* A thread that spins at `go` until told to stop. */
static void *hog_main(void *arg)
{
	struct spinner *sp = arg;

	sp->tid = gettid();
	sem_post(&sp->up);
	while (sem_wait(&sp->go) < 0)
		;
	while (!sp->stop)
		;
	return NULL;
}

/* Its CPU time, ns. */
static uint64_t cpu_time_of(pthread_t th)
{
	struct timespec t;
	clockid_t id;

	ck_assert_int_eq(pthread_getcpuclockid(th, &id), 0);
	ck_assert_int_eq(clock_gettime(id, &t), 0);
	return (uint64_t)t.tv_sec * NSEC + (uint64_t)t.tv_nsec;
}

/* One runaway on the starved CPU and three of its twins (same process, same
 * FIFO priority) queued behind it: they ran nothing, but the trip demotes
 * them with it, marked as waiting there, and the kernel shows all four
 * SCHED_OTHER; otherwise each twin would starve the CPU for a trip of its
 * own. */
START_TEST(test_waiting_twins)
{
	static struct spinner head, twin[3];
	struct spinner *all[] = { &head, &twin[0], &twin[1], &twin[2] };
	struct sched_param p = { .sched_priority = 1 };
	cpu_set_t one, was;
	const struct safety_culprit *c;
	pthread_attr_t a;

	/* the test itself stays off the starved CPU */
	ck_assert_int_eq(sched_getaffinity(0, sizeof(was), &was), 0);
	CPU_ZERO(&one);
	CPU_SET(1, &one);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	memset(&head, 0, sizeof(head));
	sem_init(&head.up, 0, 0);
	sem_init(&head.go, 0, 0);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	pthread_attr_init(&a);
	ck_assert_int_eq(pthread_attr_setaffinity_np(&a, sizeof(one), &one), 0);
	ck_assert_int_eq(pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED), 0);
	ck_assert_int_eq(pthread_attr_setschedpolicy(&a, SCHED_FIFO), 0);
	ck_assert_int_eq(pthread_attr_setschedparam(&a, &p), 0);
	ck_assert_int_eq(pthread_create(&head.th, &a, hog_main, &head), 0);
	live_add(&head);
	pthread_attr_destroy(&a);
	while (sem_wait(&head.up) < 0)
		;
	for (size_t i = 0; i < 3; i++)
		spinner_start(&twin[i], 0, SCHED_FIFO, 1);
	publish(all, 4, SIZE_MAX);
	sem_post(&head.go);
	while (cpu_time_of(head.th) < SPIN_NS)
		usleep(1000);
	for (size_t i = 0; i < 3; i++)
		sem_post(&twin[i].go);   /* runnable, behind the head at its priority */

	trip_cpu0();
	ck_assert_ptr_nonnull(c = culprit_of(head.tid));
	ck_assert(c->demoted && !c->waiting);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_ptr_nonnull(c = culprit_of(twin[i].tid));
		ck_assert(c->managed && c->demoted && c->waiting);
		ck_assert_int_eq(policy_of(twin[i].tid), SCHED_OTHER);
	}
	ck_assert_uint_eq(s.trip[0].n_demoted, 4);
	ck_assert_int_eq(policy_of(head.tid), SCHED_OTHER);
	unpublish();
	spinner_stop(&head);
	for (size_t i = 0; i < 3; i++) {
		while (sem_wait(&twin[i].done) < 0)
			;
		spinner_stop(&twin[i]);
	}
	ck_assert_int_eq(sched_setaffinity(0, sizeof(was), &was), 0);
}
END_TEST

static void move_to(struct spinner *sp, int a, int b)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(a, &set);
	CPU_SET(b, &set);
	ck_assert_int_eq(pthread_setaffinity_np(sp->th, sizeof(set), &set), 0);
}

/* Blame goes by where the time was spent, not where a thread may run at the
 * trip: the runaway that starved CPU 0 and moved itself to CPU 1 before the
 * trip is demoted; a thread that ran as much, but on CPU 1, and may run on
 * CPU 0 too by then, keeps its policy. (The watchdog looks several times a
 * check: the test looks once after they ran, before they move.) */
START_TEST(test_blame_where_it_ran)
{
	static struct spinner hopper, bystander;
	struct spinner *all[] = { &hopper, &bystander };
	const struct safety_culprit *c;

	spinner_start(&hopper, 0, SCHED_FIFO, 1);
	spinner_start(&bystander, 1, SCHED_FIFO, 2);
	publish(all, 2, SIZE_MAX);
	spinner_spin(&hopper);
	spinner_spin(&bystander);
	safety_scan_run(s.scan);
	move_to(&hopper, 1, 1);
	move_to(&bystander, 0, 1);

	trip_cpu0();
	ck_assert_ptr_nonnull(c = culprit_of(hopper.tid));
	ck_assert(c->demoted);
	ck_assert_int_eq(c->cpu, 0);
	ck_assert_uint_ge(c->ran_ns, SPIN_NS / 2);
	ck_assert_ptr_null(culprit_of(bystander.tid));
	ck_assert_uint_eq(s.trip[0].n_demoted, 1);
	ck_assert_int_eq(policy_of(hopper.tid), SCHED_OTHER);
	ck_assert_int_eq(policy_of(bystander.tid), SCHED_FIFO);
	unpublish();
	spinner_stop(&hopper);
	spinner_stop(&bystander);
}
END_TEST

/* Two trips before the main loop takes the first (it is starved too): each
 * has a record of its own, with its culprit, for the registry's marks and
 * its user's hold; none is only counted as unlogged. */
START_TEST(test_second_trip_kept)
{
	static struct spinner a, b;
	struct spinner *all[] = { &a, &b };

	spinner_start(&a, 0, SCHED_FIFO, 1);
	spinner_start(&b, 0, SCHED_FIFO, 2);
	publish(all, 2, SIZE_MAX);
	spinner_spin(&a);
	trip_cpu0();
	/* the next episode, as the watchdog begins it at a late canary */
	safety_scan_begin(s.scan, clock_nsec(CLOCK_MONOTONIC),
			  clock_nsec(CLOCK_BOOTTIME) / (NSEC / (uint64_t)s.clk_tck));
	safety_scan_run(s.scan);
	spinner_spin(&b);
	trip_cpu0();
	ck_assert_uint_eq(atomic_load(&s.unlogged), 0);
	ck_assert_int_eq(atomic_load(&s.trip_state[0]), TRIP_READY);
	ck_assert_int_eq(atomic_load(&s.trip_state[1]), TRIP_READY);
	ck_assert_uint_lt(s.trip_seq[0], s.trip_seq[1]);
	ck_assert_uint_eq(s.trip[0].n, 1);
	ck_assert_int_eq(s.trip[0].c[0].tid, a.tid);
	ck_assert(s.trip[0].c[0].demoted);
	ck_assert_uint_eq(s.trip[1].n, 1);
	ck_assert_int_eq(s.trip[1].c[0].tid, b.tid);
	ck_assert(s.trip[1].c[0].demoted);
	ck_assert_int_eq(policy_of(a.tid), SCHED_OTHER);
	ck_assert_int_eq(policy_of(b.tid), SCHED_OTHER);
	unpublish();
	spinner_stop(&a);
	spinner_stop(&b);
}
END_TEST

/* A process of its own (root: each process is a unit of blame) whose one
 * thread, born now, turns SCHED_FIFO `prio` on CPU 0, spins `ns` of its
 * own CPU time and then sleeps, real-time still. Returns once it has spun. */
static pid_t spin_process(int prio, uint64_t ns)
{
	int done[2];
	pid_t pid;
	char c;

	ck_assert_int_eq(pipe(done), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct sched_param p = { .sched_priority = prio };
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(0, &one);
		if (sched_setaffinity(0, sizeof(one), &one) < 0 || sched_setscheduler(0, SCHED_FIFO, &p) < 0)
			_exit(1);
		spin_cpu(ns);
		if (write(done[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	for (size_t i = 0; i < LIVE_MAX; i++)
		if (!kids[i]) {
			kids[i] = pid;
			break;
		}
	close(done[1]);
	ck_assert_int_eq(read(done[0], &c, 1), 1);
	close(done[0]);
	return pid;
}

static void process_stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	for (size_t i = 0; i < LIVE_MAX; i++)
		if (kids[i] == pid)
			kids[i] = 0;
}

/* The test's CPUs, as main() found them (test_waiting_twins moves off CPU 0). */
static cpu_set_t test_cpus;

/* After each case (checked fixture; in one process too, CK_FORK=no, after
 * a failed one): what it left running is stopped, so that a failure is
 * reported as one, not as a hang of a later case waiting for a thread that
 * an earlier one's leftover took the wake-up of. */
static void leftovers(void)
{
	for (size_t i = 0; i < LIVE_MAX; i++) {
		if (live[i])
			spinner_stop(live[i]);
		if (kids[i])
			process_stop(kids[i]);
	}
	scan_drop();
	sched_setaffinity(0, sizeof(test_cpus), &test_cpus);
}

/* Three units on the starved CPU (runaway.sh's flake): a runaway process
 * rtschedd does not manage (100 ms), a managed steady thread that ran 60 ms
 * of the second it was there, and a second runaway process that ran 50 ms
 * and has just begun. By share alone the steady thread was blamed with the
 * first runaway (the rest after it, 110 of 210 ms, is near half) and
 * demoted; its 6% of the time is an audio thread's, and the first runaway
 * accounts for the stall without it: it keeps fifo, unnamed. */
START_TEST(test_duty_let_off)
{
	static struct spinner steady;
	struct spinner *all[] = { &steady };
	struct timespec wait = { 1, 0 };
	const struct safety_culprit *c;
	pid_t f, r;

	spinner_start(&steady, 0, SCHED_FIFO, 2);
	publish(all, 1, SIZE_MAX);
	spinner_spin(&steady);   /* 60 ms */
	f = spin_process(5, 100 * MSEC);
	r = spin_process(4, 50 * MSEC);
	nanosleep(&wait, NULL);

	trip_cpu0();
	ck_assert_ptr_null(culprit_of(steady.tid));
	ck_assert_ptr_nonnull(c = culprit_of(f));
	ck_assert(!c->managed && !c->demoted);
	ck_assert_ptr_null(culprit_of(r));
	ck_assert_int_eq(policy_of(steady.tid), SCHED_FIFO);
	unpublish();
	process_stop(f);
	process_stop(r);
	spinner_stop(&steady);
}
END_TEST

/* A record of the iterator for tid, or false. */
struct find {
	pid_t tid;
	struct tasks_rec r;
	bool found;
};

static void find_rec(struct find *f, int fd)
{
	struct tasks_rec r;
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	/* one record per read is fine too: the kernel keeps the rest */
	while ((n = read(fd, &r, sizeof(r))) == (ssize_t)sizeof(r))
		if (r.tid == f->tid) {
			f->r = r;
			f->found = true;
		}
	ck_assert_int_eq(n, 0);
	close(fd);
}

/* The iterator's record of a real-time thread says what /proc says: its
 * ids, start time, owner, CPU, policy, priority, names and run time; a
 * SCHED_OTHER thread is not among the real-time records, but is among its
 * process's. */
START_TEST(test_iter_matches_proc)
{
	static struct spinner rt, other;
	struct find f = { 0 }, g = { 0 };
	struct proc_stat st;
	uint64_t run_after;
	char buf[128];
	FILE *fp;

	spinner_start(&rt, 1, SCHED_RR, 7);
	spinner_start(&other, 1, SCHED_OTHER, 0);
	pthread_setname_np(rt.th, "iter-rt");
	spinner_spin(&rt);
	f.tid = rt.tid;
	find_rec(&f, tasks_open(iter));
	ck_assert_int_eq(proc_read_stat_at(NULL, getpid(), rt.tid, &st), 0);
	snprintf(buf, sizeof(buf), "/proc/%d/task/%d/schedstat", (int)getpid(), (int)rt.tid);
	ck_assert_ptr_nonnull(fp = fopen(buf, "r"));
	ck_assert_int_eq(fscanf(fp, "%" SCNu64, &run_after), 1);
	fclose(fp);

	ck_assert(f.found);
	ck_assert_int_eq(f.r.pid, getpid());
	ck_assert_uint_eq(clock_ticks_of(f.r.start_ns, sysconf(_SC_CLK_TCK)), st.starttime);
	ck_assert_uint_eq(f.r.euid, geteuid());
	ck_assert_int_eq(f.r.cpu, 1);
	ck_assert_uint_eq(f.r.policy, SCHED_RR);
	ck_assert_uint_eq(f.r.priority, 7);
	ck_assert_str_eq(f.r.comm, "iter-rt");
	ck_assert_int_eq(proc_read_stat_at(NULL, getpid(), getpid(), &st), 0);
	ck_assert_str_eq(f.r.pcomm, st.comm);
	ck_assert_uint_ge(f.r.run_ns, SPIN_NS / 2);
	ck_assert_uint_le(f.r.run_ns, run_after);
	ck_assert_uint_eq(f.r.running, 0);   /* blocked on its semaphore */

	g.tid = other.tid;
	find_rec(&g, tasks_open(iter));
	ck_assert(!g.found);
	find_rec(&g, tasks_open_process(iter, getpid()));
	ck_assert(g.found);
	ck_assert_uint_eq(g.r.policy, SCHED_OTHER);
	spinner_stop(&rt);
	spinner_stop(&other);
}
END_TEST

/* A demotion checks the thread's identity through the iterator of its
 * process: another start time (a reused tid) or another process is never
 * touched; the right one is set to SCHED_OTHER. */
START_TEST(test_iter_demote_identity)
{
	static struct spinner rt;
	struct proc_stat st;
	struct scan *sc = calloc(1, sizeof(*sc));

	ck_assert_ptr_nonnull(sc);
	ck_assert_int_eq(safety_scan_init(sc), 0);
	sc->tasks = iter;
	spinner_start(&rt, 1, SCHED_FIFO, 3);
	ck_assert_int_eq(proc_read_stat_at(NULL, getpid(), rt.tid, &st), 0);
	ck_assert_int_eq(safety_scan_demote(sc, rt.tid, getpid(), st.starttime + 1), -ESRCH);
	ck_assert_int_eq(safety_scan_demote(sc, rt.tid, getppid(), st.starttime), -ESRCH);
	ck_assert_int_eq(policy_of(rt.tid), SCHED_FIFO);
	ck_assert_int_eq(safety_scan_demote(sc, rt.tid, getpid(), st.starttime), 0);
	ck_assert_int_eq(policy_of(rt.tid), SCHED_OTHER);
	ck_assert_uint_eq(sc->iter_failed, 0);
	spinner_stop(&rt);
	close(sc->proc);
	free(sc);
}
END_TEST

static TCase *cases(const char *name, bool bpf)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, bpf ? use_iter : NULL, leftovers);
	tcase_add_test(tc, test_culprits);
	tcase_add_test(tc, test_no_culprit);
	tcase_add_test(tc, test_two_culprits);
	/* valgrind runs one thread at a time, each waiting for its lock in
	 * the kernel: twins never wait on a runqueue behind the runaway */
	if (!strstr(getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "", "vgpreload"))
		tcase_add_test(tc, test_waiting_twins);
	tcase_add_test(tc, test_blame_where_it_ran);
	tcase_add_test(tc, test_second_trip_kept);
	tcase_add_test(tc, test_duty_let_off);
	if (bpf) {
		tcase_add_test(tc, test_iter_matches_proc);
		tcase_add_test(tc, test_iter_demote_identity);
	}
	return tc;
}

int main(void)
{
	Suite *su = suite_create("trip");
	char why[256];
	int r;

	if (!unit_can_realtime()) {
		unit_skip("test-trip: this process may not be real-time (no CAP_SYS_NICE)");
		suite_add_tcase(su, tcase_create("none"));
	} else if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		unit_skip("test-trip: needs 2 CPUs (a real-time thread pinned to the other one)");
		suite_add_tcase(su, tcase_create("none"));
	} else {
		if (strstr(getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "", "vgpreload"))
			unit_skip("test_waiting_twins: under valgrind, which queues threads on its own lock");
		if (sched_getaffinity(0, sizeof(test_cpus), &test_cpus) < 0) {
			perror("sched_getaffinity");
			return 1;
		}
		suite_add_tcase(su, cases("proc", false));
		if (tasks_new(&iter, why, sizeof(why)) < 0) {
			unit_skip("test-trip's bpf cases: the task iterators cannot load here");
			fprintf(stderr, "  (%s)\n", why);
		} else {
			suite_add_tcase(su, cases("bpf", true));
		}
	}
	r = unit_run(su);
	tasks_free(iter);
	return r;
}
