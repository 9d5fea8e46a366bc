/* test-registry.c: the registry (registry.h) on real threads of the test
 * process, with the kernel write recorded instead of made (sched-record.h):
 * what is written when a thread is added, replaced and removed, that the
 * settings a thread had before are the ones put back (the affinity only if
 * it was changed), thread counts per owner, process registrations taking in
 * the threads a process creates later (and the owner's limits refusing
 * some), a tid that names another thread now (and one given to another
 * task during the write: root only), failed writes, a reload, the
 * watchdog's hold, and the change callbacks the state journal follows. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon/core/registry.h"
#include "daemon/sys/proc.h"
#include "sched-record.h"
#include "unit-util.h"

static char dir[PATH_MAX];
static struct config *c;
static sd_event *ev;
static struct registry *r;

/* What the observer was told. */
#define EVENTS_MAX 128
static struct event {
	int ev;
	pid_t id;
	uint64_t starttime;   /* REG_EV_THREAD_ARM: the thread's, and its policy then */
	int policy;
} events[EVENTS_MAX];
static size_t n_events;

static void on_change(void *ud, int e, struct reg_thread *t, struct reg_process *p)
{
	ck_assert_ptr_eq(ud, &events);
	ck_assert_uint_lt(n_events, EVENTS_MAX);
	events[n_events].ev = e;
	events[n_events].id = t ? t->tid : p->pid;
	if (e == REG_EV_THREAD_ARM) {   /* what the kernel has at that instant */
		events[n_events].starttime = t->starttime;
		events[n_events].policy = sched_getscheduler(t->tid) & ~SCHED_RESET_ON_FORK;
	}
	n_events++;
}

/* Whom the test process runs as, to the registry: it is root, and a
 * registration made for another uid holds only while its process runs as
 * that uid (new threads and rescans check it). Linked with
 * -Wl,--wrap=proc_read_status (Makefile.am): the test's own tasks read as
 * running as pretend_uid, when set. */
static uid_t pretend_uid = (uid_t)-1;
int __real_proc_read_status(pid_t tid, struct proc_status *out);
int __wrap_proc_read_status(pid_t tid, struct proc_status *out);
int __wrap_proc_read_status(pid_t tid, struct proc_status *out)
{
	int e = __real_proc_read_status(tid, out);

	if (e == 0 && pretend_uid != (uid_t)-1 && out->tgid == getpid())
		out->uid = out->euid = pretend_uid;
	return e;
}

/* CLOCK_BOOTTIME, read once more, gives `boot_at` (then runs on): the
 * registry's time of a write's return, taken when the write really
 * returned, not after what a test hook did then. */
static bool boot_held;
static struct timespec boot_at;

int __real_clock_gettime(clockid_t clk, struct timespec *ts);
int __wrap_clock_gettime(clockid_t clk, struct timespec *ts);

int __wrap_clock_gettime(clockid_t clk, struct timespec *ts)
{
	if (boot_held && clk == CLOCK_BOOTTIME) {
		boot_held = false;
		*ts = boot_at;
		return 0;
	}
	return __real_clock_gettime(clk, ts);
}

static void setup(void)
{
	sched_record_check_wrapped();
	unit_tmpdir(dir, "test-registry");
	c = unit_config(dir, "[daemon]\nmax-priority = 80\n");
	ck_assert_int_ge(sd_event_new(&ev), 0);
	ck_assert_int_eq(registry_new(&r, ev), 0);
	n_events = 0;
}

static void teardown(void)
{
	registry_free(r, false);
	r = NULL;
	pretend_uid = (uid_t)-1;
	boot_held = false;
	sd_event_unref(ev);
	config_free(c);
	unit_rmdir(dir);
}

static struct sched_spec spec_of(int policy, int priority)
{
	struct sched_spec s;

	memset(&s, 0, sizeof(s));
	s.policy = policy;
	s.priority = priority;
	return s;
}

static const struct grant_request no_req;

static void assert_same(const struct task_sched *a, const struct task_sched *b)
{
	ck_assert_int_eq(a->policy, b->policy);
	ck_assert_int_eq(a->priority, b->priority);
	ck_assert_int_eq(a->nice, b->nice);
	ck_assert_int_eq(a->reset_on_fork, b->reset_on_fork);
	ck_assert(CPU_EQUAL(&a->cpus, &b->cpus));
}

/* Add tid (of this process) with spec; asserts it was granted. */
static struct reg_thread *add(pid_t tid, uid_t owner, const struct sched_spec *spec)
{
	struct reg_thread *t = NULL;
	char msg[512] = "";
	int e = registry_add_thread(r, tid, getpid(), owner, REG_SOURCE_THREAD, &no_req, spec, NULL, &t, msg,
				    sizeof(msg));

	ck_assert_msg(e == 0, "registry_add_thread: %d: %s", e, msg);
	ck_assert_ptr_nonnull(t);
	return t;
}

/* Added: the original is what the kernel holds, the write is the spec on top
 * of it; removed with restore: the original is written back, as it was. */
START_TEST(test_add_remove_restores_original)
{
	struct sched_spec spec = spec_of(SCHED_FIFO, 10);
	const struct sched_write *w;
	const struct reg_recent *rec;
	struct task_sched before;
	struct reg_thread *t;
	struct worker wk;

	worker_start(&wk);
	ck_assert_int_eq(task_sched_read(wk.tid, &before), 0);
	spec.reset_on_fork = true;
	t = add(wk.tid, 1000, &spec);
	ck_assert_ptr_eq(registry_find(r, wk.tid), t);
	ck_assert_uint_eq(registry_n_threads(r), 1);
	ck_assert_int_eq(t->pid, getpid());
	ck_assert_uint_eq(t->starttime, unit_starttime(wk.tid));
	assert_same(&t->original, &before);
	ck_assert_uint_eq(sched_record_n(), 1);
	w = sched_record_get(0);
	ck_assert_int_eq(w->tid, wk.tid);
	ck_assert_int_eq(w->s.policy, SCHED_FIFO);
	ck_assert_int_eq(w->s.priority, 10);
	ck_assert(w->s.reset_on_fork);
	ck_assert_int_eq(w->s.nice, before.nice);   /* fifo leaves the nice as it was */
	ck_assert(!w->set_cpus);                    /* no cpus asked: the affinity is left alone */

	registry_remove_thread(r, t, true);
	ck_assert_ptr_null(registry_find(r, wk.tid));
	ck_assert_uint_eq(registry_n_threads(r), 0);
	ck_assert_uint_eq(sched_record_n(), 2);
	w = sched_record_get(1);
	ck_assert_int_eq(w->tid, wk.tid);
	assert_same(&w->s, &before);
	ck_assert(!w->set_cpus);
	/* `list` can say it was let go with its settings put back */
	rec = registry_recent(r, 0);
	ck_assert_ptr_nonnull(rec);
	ck_assert_int_eq(rec->tid, wk.tid);
	ck_assert_int_eq(rec->code, 0);
	ck_assert_uint_eq(rec->owner, 1000);

	/* removed without restore (a restart keeps threads as they are): no write */
	t = add(wk.tid, 1000, &spec);
	registry_remove_thread(r, t, false);
	ck_assert_uint_eq(sched_record_n(), 3);
	worker_stop(&wk);
}
END_TEST

/* The affinity is written back only if rtschedd changed it. */
START_TEST(test_cpus_restored_when_changed)
{
	struct sched_spec pinned = spec_of(SCHED_RR, 20), plain = spec_of(SCHED_RR, 20);
	const struct sched_write *w;
	struct task_sched before;
	struct reg_thread *t;
	struct worker wk;

	worker_start(&wk);
	ck_assert_int_eq(task_sched_read(wk.tid, &before), 0);
	pinned.has_cpus = true;
	CPU_ZERO(&pinned.cpus);
	CPU_SET(0, &pinned.cpus);
	t = add(wk.tid, 0, &pinned);
	w = sched_record_last(wk.tid);
	ck_assert(w->set_cpus && CPU_EQUAL(&w->s.cpus, &pinned.cpus));
	ck_assert(t->cpus_changed);
	assert_same(&t->original, &before);
	registry_remove_thread(r, t, true);
	w = sched_record_last(wk.tid);
	ck_assert(w->set_cpus);
	assert_same(&w->s, &before);

	/* pinned, then asked again without cpus: the original affinity goes
	 * back with that write, and the restore need not touch it again */
	t = add(wk.tid, 0, &pinned);
	ck_assert_ptr_eq(add(wk.tid, 0, &plain), t);
	w = sched_record_last(wk.tid);
	ck_assert(w->set_cpus && CPU_EQUAL(&w->s.cpus, &before.cpus));
	ck_assert(!t->cpus_changed);
	registry_remove_thread(r, t, true);
	w = sched_record_last(wk.tid);
	ck_assert(!w->set_cpus);
	assert_same(&w->s, &before);
	worker_stop(&wk);
}
END_TEST

/* Asked again: one entry, the new request, owner and source replace the old;
 * the original is still the one from the first registration (here one a
 * previous rtschedd recorded, which the kernel's current view is not). */
START_TEST(test_replace_keeps_original)
{
	struct sched_spec fifo = spec_of(SCHED_FIFO, 10), rr = spec_of(SCHED_RR, 30);
	struct grant_request q = no_req;
	struct reg_saved saved;
	struct reg_thread *t;
	struct worker wk;
	char msg[512];

	worker_start(&wk);
	memset(&saved, 0, sizeof(saved));
	saved.starttime = unit_starttime(wk.tid);
	ck_assert_int_eq(task_sched_read(wk.tid, &saved.original), 0);
	saved.original.policy = SCHED_FIFO;
	saved.original.priority = 5;
	ck_assert_int_eq(registry_adopt_thread(r, wk.tid, getpid(), 1000, REG_SOURCE_RULE, &q, &fifo, NULL, &saved,
					       msg, sizeof(msg)), 0);
	t = registry_find(r, wk.tid);
	ck_assert_ptr_nonnull(t);
	assert_same(&t->original, &saved.original);
	ck_assert_uint_eq(sched_record_n(), 1);

	snprintf(q.role, sizeof(q.role), "other-role");
	ck_assert_int_eq(registry_add_thread(r, wk.tid, getpid(), 2000, REG_SOURCE_THREAD, &q, &rr, NULL, NULL, msg,
					     sizeof(msg)), 0);
	ck_assert_ptr_eq(registry_find(r, wk.tid), t);
	ck_assert_uint_eq(registry_n_threads(r), 1);
	ck_assert_uint_eq(t->owner, 2000);
	ck_assert_int_eq(t->source, REG_SOURCE_THREAD);
	ck_assert_str_eq(t->req.role, "other-role");
	assert_same(&t->original, &saved.original);
	ck_assert_int_eq(sched_record_last(wk.tid)->s.policy, SCHED_RR);
	ck_assert_int_eq(sched_record_last(wk.tid)->s.priority, 30);

	registry_remove_thread(r, t, true);
	ck_assert_uint_eq(sched_record_n(), 3);
	assert_same(&sched_record_last(wk.tid)->s, &saved.original);
	worker_stop(&wk);
}
END_TEST

/* Freed with restore (the daemon stopping): each thread gets exactly its
 * own original back, after its grant; freed without (a restart): nothing. */
START_TEST(test_free_restores_each)
{
	struct task_sched orig[3];
	struct reg_saved saved;
	struct worker wk[3];
	char msg[512];

	for (int i = 0; i < 3; i++) {
		struct sched_spec s = spec_of(SCHED_FIFO, 10 + i);

		worker_start(&wk[i]);
		/* distinct originals, so a mix-up shows */
		memset(&saved, 0, sizeof(saved));
		saved.starttime = unit_starttime(wk[i].tid);
		ck_assert_int_eq(task_sched_read(wk[i].tid, &saved.original), 0);
		saved.original.policy = SCHED_RR;
		saved.original.priority = 1 + i;
		orig[i] = saved.original;
		ck_assert_int_eq(registry_adopt_thread(r, wk[i].tid, getpid(), 0, REG_SOURCE_THREAD, &no_req, &s, NULL,
						       &saved, msg, sizeof(msg)), 0);
	}
	ck_assert_uint_eq(sched_record_n(), 3);
	registry_free(r, true);
	r = NULL;
	ck_assert_uint_eq(sched_record_n(), 6);
	for (int i = 0; i < 3; i++) {
		ck_assert_uint_eq(sched_record_count(wk[i].tid), 2);
		ck_assert_int_eq(sched_record_get((size_t)i)->tid, wk[i].tid);   /* the grants first */
		ck_assert_int_eq(sched_record_get((size_t)i)->s.priority, 10 + i);
		assert_same(&sched_record_last(wk[i].tid)->s, &orig[i]);
	}

	ck_assert_int_eq(registry_new(&r, ev), 0);
	for (int i = 0; i < 3; i++) {
		struct sched_spec s = spec_of(SCHED_FIFO, 10);
		add(wk[i].tid, 0, &s);
	}
	registry_free(r, false);
	r = NULL;
	ck_assert_uint_eq(sched_record_n(), 9);
	for (int i = 0; i < 3; i++)
		worker_stop(&wk[i]);
}
END_TEST

START_TEST(test_count_owner)
{
	struct sched_spec s = spec_of(SCHED_FIFO, 10);
	struct reg_thread *t[3];
	struct worker wk[3];

	for (int i = 0; i < 3; i++)
		worker_start(&wk[i]);
	t[0] = add(wk[0].tid, 1000, &s);
	t[1] = add(wk[1].tid, 1000, &s);
	t[2] = add(wk[2].tid, 2000, &s);
	ck_assert_uint_eq(registry_count_owner(r, 1000), 2);
	ck_assert_uint_eq(registry_count_owner(r, 2000), 1);
	ck_assert_uint_eq(registry_count_owner(r, 0), 0);
	/* asked again by another user: the thread is counted for that user now */
	ck_assert_ptr_eq(add(wk[1].tid, 2000, &s), t[1]);
	ck_assert_uint_eq(registry_count_owner(r, 1000), 1);
	ck_assert_uint_eq(registry_count_owner(r, 2000), 2);
	registry_remove_thread(r, t[0], true);
	ck_assert_uint_eq(registry_count_owner(r, 1000), 0);
	ck_assert_uint_eq(registry_n_threads(r), 2);
	(void)t[2];
	for (int i = 0; i < 3; i++)
		worker_stop(&wk[i]);
}
END_TEST

/* Users' threads whose process's exec must be heard of (follow.c) are
 * counted: a main thread registered on its own (an exec keeps its tid) and a
 * thread that is not the main thread (one that execs takes the pid); not
 * root's, not a registered process's main thread; the count follows a
 * registration that changes owner. */
START_TEST(test_exec_watched)
{
	struct sched_spec s = spec_of(SCHED_FIFO, 10);
	struct grant_request q = no_req;
	struct reg_process *p;
	struct reg_thread *m, *w;
	struct worker wk;
	char msg[512];

	worker_start(&wk);
	w = add(wk.tid, 0, &s);
	ck_assert_uint_eq(registry_n_exec_watched(r), 0);
	ck_assert_ptr_eq(add(wk.tid, 1000, &s), w);
	ck_assert_uint_eq(registry_n_exec_watched(r), 1);
	registry_remove_thread(r, w, true);
	ck_assert_uint_eq(registry_n_exec_watched(r), 0);
	m = add(getpid(), 1000, &s);
	ck_assert_uint_eq(registry_n_exec_watched(r), 1);
	ck_assert_ptr_eq(add(getpid(), 0, &s), m);   /* root's now */
	ck_assert_uint_eq(registry_n_exec_watched(r), 0);
	ck_assert_ptr_eq(add(getpid(), 2000, &s), m);
	ck_assert_uint_eq(registry_n_exec_watched(r), 1);
	registry_remove_thread(r, m, true);
	ck_assert_uint_eq(registry_n_exec_watched(r), 0);
	/* a process's main thread is the process registration's to follow;
	 * its other threads are counted */
	ck_assert_int_eq(registry_add_process(r, getpid(), 1000, &q, &s, &p, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(registry_n_exec_watched(r), registry_n_threads(r) - 1);
	registry_remove_process(r, p, true);
	ck_assert_uint_eq(registry_n_exec_watched(r), 0);
	worker_stop(&wk);
}
END_TEST

/* The iterators visit every managed thread once; the safe one lets its
 * body remove the thread it is on. */
START_TEST(test_iterators)
{
	struct sched_spec s = spec_of(SCHED_FIFO, 10);
	struct worker wk[3];
	size_t n = 0, seen[3] = { 0 };

	for (int i = 0; i < 3; i++) {
		worker_start(&wk[i]);
		add(wk[i].tid, 0, &s);
	}
	REGISTRY_FOREACH_THREAD(t, r) {
		for (int i = 0; i < 3; i++)
			seen[i] += t->tid == wk[i].tid;
		n++;
	}
	ck_assert_uint_eq(n, 3);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(seen[i], 1);
	n = 0;
	REGISTRY_FOREACH_THREAD_SAFE(t, tn, r) {
		registry_remove_thread(r, t, true);
		n++;
	}
	ck_assert_uint_eq(n, 3);
	ck_assert_uint_eq(registry_n_threads(r), 0);
	ck_assert_ptr_null(registry_thread_next(r, NULL));
	ck_assert_ptr_null(registry_process_next(r, NULL));
	for (int i = 0; i < 3; i++)
		worker_stop(&wk[i]);
}
END_TEST

/* The schedstat baseline is taken at registration and again by the
 * registry's rebase (a jitter reset), and no one else writes it. */
START_TEST(test_schedstat_rebase)
{
	struct sched_spec s = spec_of(SCHED_FIFO, 10);
	uint64_t run, delay, count, delay0, count0, delay1, count1;
	pid_t tid = gettid();
	struct reg_thread *t;

	if (proc_read_schedstat(getpid(), tid, &run, &delay, &count) < 0)
		return; /* no schedstat in this kernel: nothing to take a baseline of */
	t = add(tid, 0, &s);
	registry_schedstat_base(t, &delay0, &count0);
	ck_assert_uint_ge(count0, count);
	/* each sleep ends with a new run of this thread on a CPU */
	for (int i = 0; i < 3; i++)
		usleep(1000);
	registry_schedstat_base(t, &delay1, &count1);
	ck_assert_uint_eq(count1, count0);
	ck_assert_uint_eq(delay1, delay0);
	registry_schedstat_rebase(r);
	registry_schedstat_base(t, &delay1, &count1);
	ck_assert_uint_ge(count1, count0 + 3);
	ck_assert_uint_ge(delay1, delay0);
	ck_assert_int_eq(proc_read_schedstat(getpid(), tid, &run, &delay, &count), 0);
	ck_assert_uint_ge(count, count1);
	registry_remove_thread(r, t, true);
}
END_TEST

/* Every thread of this process now. */
static size_t own_threads(void)
{
	pid_t *tids = NULL;
	size_t n = 0;

	ck_assert_int_eq(proc_list_tasks(getpid(), &tids, &n), 0);
	free(tids);
	return n;
}

/* A process registration: all its threads now, one registered on its own
 * before taken over, threads it creates later through the connector's
 * notice or a rescan, threads that exit dropped. */
START_TEST(test_process_takes_new_threads)
{
	struct sched_spec s = spec_of(SCHED_FIFO, 10), s2 = spec_of(SCHED_FIFO, 20);
	struct grant_request q = no_req;
	struct reg_process *p = NULL;
	struct task_sched before;
	struct worker alone, w1, w2, w3;
	size_t n, writes;
	char msg[512];

	worker_start(&alone);
	worker_start(&w1);
	ck_assert_int_eq(task_sched_read(alone.tid, &before), 0);
	add(alone.tid, 0, &s2);
	n = own_threads();
	ck_assert_int_eq(registry_add_process(r, getpid(), 0, &q, &s, &p, msg, sizeof(msg)), 0);
	ck_assert_ptr_nonnull(p);
	ck_assert_ptr_eq(registry_find_process(r, getpid()), p);
	ck_assert_uint_eq(p->n_threads, n);
	ck_assert_uint_eq(registry_n_threads(r), n);
	REGISTRY_FOREACH_THREAD(t, r) {
		ck_assert_ptr_eq(t->proc, p);
		ck_assert_int_eq(t->source, REG_SOURCE_PROCESS);
	}
	/* the thread registered alone: its original back, then the process's grant */
	ck_assert_uint_eq(sched_record_count(alone.tid), 3);
	ck_assert_int_eq(sched_record_nth(alone.tid, 0)->s.priority, 20);
	assert_same(&sched_record_nth(alone.tid, 1)->s, &before);
	ck_assert_int_eq(sched_record_last(alone.tid)->s.priority, 10);
	assert_same(&registry_find(r, alone.tid)->original, &before);

	/* a new thread, from the process events connector */
	worker_start(&w2);
	registry_on_new_thread(r, c, w2.tid, getpid());
	ck_assert_ptr_nonnull(registry_find(r, w2.tid));
	ck_assert_ptr_eq(registry_find(r, w2.tid)->proc, p);
	ck_assert_int_eq(sched_record_last(w2.tid)->s.policy, SCHED_FIFO);
	ck_assert_uint_eq(p->n_threads, n + 1);
	/* one the connector missed, found by a rescan */
	worker_start(&w3);
	registry_rescan(r, c);
	ck_assert_ptr_nonnull(registry_find(r, w3.tid));
	ck_assert_uint_eq(p->n_threads, n + 2);
	/* a notice for a thread of a process nobody registered does nothing */
	registry_on_new_thread(r, c, w3.tid, getpid() + 1);

	/* one exits: dropped, nothing written to its tid */
	writes = sched_record_n();
	worker_stop(&w2);
	registry_on_exit(r, w2.tid);
	ck_assert_ptr_null(registry_find(r, w2.tid));
	ck_assert_uint_eq(p->n_threads, n + 1);
	ck_assert_uint_eq(sched_record_n(), writes);

	/* registered again with new settings: every thread gets them */
	ck_assert_int_eq(registry_add_process(r, getpid(), 0, &q, &s2, &p, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(registry_n_processes(r), 1);
	REGISTRY_FOREACH_THREAD(t, r)
		ck_assert_int_eq(sched_record_last(t->tid)->s.priority, 20);

	/* removed: every thread gets its original back */
	registry_remove_process(r, p, true);
	ck_assert_uint_eq(registry_n_threads(r), 0);
	ck_assert_uint_eq(registry_n_processes(r), 0);
	ck_assert_ptr_null(registry_find_process(r, getpid()));
	assert_same(&sched_record_last(alone.tid)->s, &before);
	ck_assert_int_eq(sched_record_last(w3.tid)->s.policy, before.policy);
	worker_stop(&alone);
	worker_stop(&w1);
	worker_stop(&w3);
}
END_TEST

/* The owner's limits hold for threads a registered process creates later:
 * refused ones are left alone and remembered with the reason. */
START_TEST(test_new_thread_limits)
{
	struct sched_spec s = spec_of(SCHED_FIFO, 10);
	struct grant_request q = no_req;
	const struct reg_recent *rec;
	struct reg_process *p;
	struct passwd *pw = getpwnam("nobody");
	struct worker w1, w2;
	char msg[512], text[256];
	size_t n;

	ck_assert_ptr_nonnull(pw);
	pretend_uid = pw->pw_uid;
	n = own_threads();
	snprintf(text, sizeof(text), "[user nobody]\nmax-priority = 20\npolicies = fifo\nmax-threads = %zu\n", n);
	config_free(c);
	c = unit_config(dir, text);
	ck_assert_int_eq(registry_add_process(r, getpid(), pw->pw_uid, &q, &s, &p, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(registry_count_owner(r, pw->pw_uid), n);

	worker_start(&w1);
	registry_on_new_thread(r, c, w1.tid, getpid());
	ck_assert_ptr_null(registry_find(r, w1.tid));
	ck_assert_uint_eq(sched_record_count(w1.tid), 0);
	rec = registry_recent(r, 0);
	ck_assert_ptr_nonnull(rec);
	ck_assert_int_eq(rec->tid, w1.tid);
	ck_assert_int_eq(rec->code, REFUSE_QUOTA);
	ck_assert_int_eq(rec->source, REG_SOURCE_PROCESS);
	ck_assert_msg(strstr(rec->why, "max-threads in [user nobody]"), "%s", rec->why);
	/* a rescan (the fallback without the connector, or after an overrun)
	 * finds the same thread: the same limits hold, and the refusal, said
	 * once, is not logged again every rescan */
	int saved_err = dup(STDERR_FILENO), log_fd;
	char log_path[PATH_MAX + 16], logged[4096] = "";
	snprintf(log_path, sizeof(log_path), "%s/log", dir);
	log_fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert_int_ge(log_fd, 0);
	ck_assert_int_ge(saved_err, 0);
	ck_assert_int_ge(dup2(log_fd, STDERR_FILENO), 0);
	registry_rescan(r, c);
	registry_rescan(r, c);
	ck_assert_int_ge(dup2(saved_err, STDERR_FILENO), 0);
	close(saved_err);
	close(log_fd);
	log_fd = open(log_path, O_RDONLY);
	ck_assert_int_ge(read(log_fd, logged, sizeof(logged) - 1), 0);
	close(log_fd);
	ck_assert_msg(!registry_find(r, w1.tid), "a rescan took a thread over max-threads");
	ck_assert_uint_eq(sched_record_count(w1.tid), 0);
	ck_assert_msg(!strstr(logged, "left alone"), "logged again: %s", logged);

	/* room for one more, but the process asked for more than the user may have */
	snprintf(text, sizeof(text), "[user nobody]\nmax-priority = 20\npolicies = fifo\nmax-threads = %zu\n", n + 5);
	config_free(c);
	c = unit_config(dir, text);
	p->req.has_priority = true;
	p->req.priority = 30;
	registry_on_new_thread(r, c, w1.tid, getpid());
	ck_assert_ptr_null(registry_find(r, w1.tid));
	ck_assert_int_eq(registry_recent(r, 0)->code, REFUSE_PRIORITY);
	ck_assert_int_eq(registry_recent(r, 0)->tid, w1.tid);    /* the same entry, updated */
	ck_assert_ptr_null(registry_recent(r, 1));
	/* within the limits again: the next rescan takes it */
	p->req.priority = 20;
	registry_rescan(r, c);
	ck_assert_ptr_nonnull(registry_find(r, w1.tid));
	ck_assert_int_eq(sched_record_last(w1.tid)->s.priority, 20);

	/* found by a rescan, within the limits: taken */
	worker_start(&w2);
	registry_rescan(r, c);
	ck_assert_ptr_nonnull(registry_find(r, w2.tid));
	ck_assert_int_eq(sched_record_last(w2.tid)->s.priority, 20);
	registry_remove_process(r, p, true);
	worker_stop(&w1);
	worker_stop(&w2);
}
END_TEST

/* A registered process whose exec was not heard of (events lost, or no
 * connector) and that runs as someone else now (a setuid program): neither a
 * new thread nor a rescan grants it anything at its registrant's limits;
 * the registration ends, its threads get back what they had. */
START_TEST(test_disowned_process)
{
	struct sched_spec s = spec_of(SCHED_FIFO, 10);
	struct grant_request q = no_req;
	struct passwd *pw = getpwnam("nobody");
	struct reg_process *p;
	struct worker wk;
	char msg[512];

	ck_assert_ptr_nonnull(pw);
	pretend_uid = pw->pw_uid;
	ck_assert_int_eq(registry_add_process(r, getpid(), pw->pw_uid, &q, &s, &p, msg, sizeof(msg)), 0);
	pretend_uid = 0;   /* what a setuid-root exec makes of it */
	worker_start(&wk);
	sched_record_reset();
	registry_on_new_thread(r, c, wk.tid, getpid());
	ck_assert_ptr_null(registry_find_process(r, getpid()));
	ck_assert_ptr_null(registry_find(r, wk.tid));
	ck_assert_uint_eq(registry_n_threads(r), 0);
	ck_assert_uint_eq(sched_record_count(wk.tid), 0);
	ck_assert_uint_eq(sched_record_count(getpid()), 1);   /* the main thread restored */
	ck_assert_int_eq(sched_record_last(getpid())->s.policy, SCHED_OTHER);
	/* the same found by a rescan */
	pretend_uid = pw->pw_uid;
	ck_assert_int_eq(registry_add_process(r, getpid(), pw->pw_uid, &q, &s, &p, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(registry_n_threads(r), own_threads());
	pretend_uid = 0;
	registry_rescan(r, c);
	ck_assert_ptr_null(registry_find_process(r, getpid()));
	ck_assert_uint_eq(registry_n_threads(r), 0);
	worker_stop(&wk);
}
END_TEST

/* A thread of a registered process that registered on its own afterwards
 * keeps its own registration: a rescan takes in new threads only. */
START_TEST(test_rescan_keeps_own_registration)
{
	struct sched_spec s = spec_of(SCHED_FIFO, 10), own = spec_of(SCHED_RR, 30);
	struct grant_request q = no_req;
	struct reg_process *p;
	struct reg_thread *t;
	struct worker wk;
	size_t writes;
	char msg[512];

	worker_start(&wk);
	ck_assert_int_eq(registry_add_process(r, getpid(), 0, &q, &s, &p, msg, sizeof(msg)), 0);
	t = add(wk.tid, 0, &own);
	ck_assert_ptr_null(t->proc);
	ck_assert_int_eq(t->source, REG_SOURCE_THREAD);
	ck_assert_uint_eq(p->n_threads, own_threads() - 1);
	writes = sched_record_n();
	registry_rescan(r, c);
	t = registry_find(r, wk.tid);
	ck_assert_ptr_nonnull(t);
	ck_assert_msg(!t->proc && t->source == REG_SOURCE_THREAD, "a rescan gave the thread back to its process");
	ck_assert_uint_eq(sched_record_n(), writes);
	ck_assert_int_eq(sched_record_last(wk.tid)->s.policy, SCHED_RR);
	registry_remove_process(r, p, true);
	ck_assert_ptr_eq(registry_find(r, wk.tid), t);   /* not the process's to restore */
	worker_stop(&wk);
}
END_TEST

/* A child process that waits until it is killed, or its parent ends. */
static pid_t sleeper(void)
{
	pid_t p = fork();

	ck_assert_int_ge(p, 0);
	if (p == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	return p;
}

/* At the write (once): the task written to ends and its id goes to a new
 * process (ns_last_pid set just below it), which the write then reaches:
 * the id reuse the check after the write is there to catch. With own_fifo
 * (an int *), the new process is then given SCHED_FIFO at that priority,
 * as a thread may have it of its own. */
static pid_t reused_by;

static void reuse_tid(pid_t tid, void *own_fifo)
{
	int st;

	if (own_fifo) {   /* called after the write */
		ck_assert_int_eq(__real_clock_gettime(CLOCK_BOOTTIME, &boot_at), 0);
		boot_held = true;
	}
	sched_record_on_write(NULL, NULL);
	sched_record_after_write(NULL, NULL);
	ck_assert_int_eq(kill(tid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(tid, &st, 0), tid);
	/* past the clock tick (10 ms) the old one started in: without thread
	 * pidfds (before Linux 6.9, and under valgrind, which has no
	 * pidfd_open) the check compares /proc's start times, in ticks, and an
	 * id reused within the tick looks the same (rtschedd(8)); CI run 24's
	 * valgrind run was such a reuse */
	nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
	for (int k = 0; k < 1000 && reused_by != tid; k++) {
		FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
		pid_t p;

		ck_assert_ptr_nonnull(f);
		fprintf(f, "%d", (int)tid - 1);
		ck_assert_int_eq(fclose(f), 0);
		if ((p = sleeper()) == tid) {
			reused_by = p;
		} else {
			kill(p, SIGKILL);
			waitpid(p, &st, 0);
		}
	}
	ck_assert_msg(reused_by == tid, "could not give id %d to a new process through ns_last_pid", (int)tid);
	if (own_fifo)
		ck_assert_int_eq(sched_setscheduler(tid, SCHED_FIFO, &(struct sched_param){ *(int *)own_fifo }), 0);
}

/* Root only (main): the tid is given to another task between the write and
 * the check after it (audit of the grant paths, F4). The grant is refused
 * as stale, and the new holder does not keep the real-time policy written
 * to it: set back to SCHED_OTHER, as the kernel then reports. */
START_TEST(test_reused_during_write)
{
	struct sched_spec s = spec_of(SCHED_FIFO, 10);
	char msg[512] = "";
	pid_t a = sleeper();
	int st, pol;

	reused_by = 0;
	sched_record_passthrough(true);
	sched_record_on_write(reuse_tid, NULL);
	ck_assert_int_eq(registry_add_thread(r, a, a, 0, REG_SOURCE_THREAD, &no_req, &s, NULL, NULL, msg, sizeof(msg)),
			 REFUSE_STALE_THREAD);
	ck_assert_int_eq(reused_by, a);
	ck_assert_msg(strstr(msg, "exited while its scheduling was being set"), "%s", msg);
	ck_assert_ptr_null(registry_find(r, a));
	/* the write reached the new holder (FIFO 10), then it was set back */
	ck_assert_int_eq(sched_record_nth(a, 0)->s.policy, SCHED_FIFO);
	pol = sched_getscheduler(a);
	ck_assert_msg(pol == SCHED_OTHER, "id %d, another process's now, was left at policy %d (SCHED_FIFO is %d) by a "
		      "grant it never asked for", (int)a, pol, SCHED_FIFO);
	ck_assert_uint_eq(sched_record_count(a), 2);
	ck_assert_int_eq(sched_record_nth(a, 1)->s.policy, SCHED_OTHER);
	ck_assert_int_eq(sched_record_nth(a, 1)->s.nice, 0);
	sched_record_passthrough(false);
	kill(a, SIGKILL);
	waitpid(a, &st, 0);
}
END_TEST

/* Root only (main): the thread written to ends after the write, and its
 * id goes to a process that has the granted policy of its own (review R6).
 * The grant is refused as stale, and the new holder, which began after the
 * write, keeps its own policy: the undo is for a thread the write may have
 * reached. */
START_TEST(test_reused_after_write)
{
	struct sched_spec s = spec_of(SCHED_FIFO, 10);
	char msg[512] = "";
	pid_t a = sleeper();
	int st, pol, own = 10;

	reused_by = 0;
	sched_record_passthrough(true);
	sched_record_after_write(reuse_tid, &own);
	ck_assert_int_eq(registry_add_thread(r, a, a, 0, REG_SOURCE_THREAD, &no_req, &s, NULL, NULL, msg, sizeof(msg)),
			 REFUSE_STALE_THREAD);
	ck_assert_int_eq(reused_by, a);
	ck_assert_msg(strstr(msg, "exited while its scheduling was being set"), "%s", msg);
	ck_assert_ptr_null(registry_find(r, a));
	pol = sched_getscheduler(a);
	ck_assert_msg(pol == SCHED_FIFO, "id %d, another process's since after the write, with SCHED_FIFO 10 of its "
		      "own, was set to policy %d by the undo of a write that never reached it", (int)a, pol);
	ck_assert_uint_eq(sched_record_count(a), 1);
	ck_assert(!boot_held);
	sched_record_passthrough(false);
	kill(a, SIGKILL);
	waitpid(a, &st, 0);
}
END_TEST

/* A tid whose thread is gone, or that names another thread now. */
START_TEST(test_stale_and_gone)
{
	struct sched_spec s = spec_of(SCHED_FIFO, 10);
	struct reg_saved saved;
	struct reg_thread *t;
	struct worker wk, gone;
	char msg[512];

	worker_start(&wk);
	worker_start(&gone);
	pid_t gone_tid = gone.tid;
	worker_stop(&gone);

	/* no such thread */
	ck_assert_int_eq(registry_add_thread(r, gone_tid, getpid(), 0, REG_SOURCE_THREAD, &no_req, &s, NULL, NULL, msg,
					     sizeof(msg)), REFUSE_NO_SUCH_THREAD);
	ck_assert_msg(strstr(msg, "no such thread"), "%s", msg);

	/* a record whose start time is not the thread's: a reused tid */
	memset(&saved, 0, sizeof(saved));
	ck_assert_int_eq(task_sched_read(wk.tid, &saved.original), 0);
	saved.starttime = unit_starttime(wk.tid) + 1;
	ck_assert_int_eq(registry_adopt_thread(r, wk.tid, getpid(), 0, REG_SOURCE_THREAD, &no_req, &s, NULL, &saved, msg,
					       sizeof(msg)), REFUSE_STALE_THREAD);
	ck_assert_msg(strstr(msg, "start time changed"), "%s", msg);
	ck_assert_ptr_null(registry_find(r, wk.tid));
	registry_restore_saved(wk.tid, &saved);
	ck_assert_uint_eq(sched_record_n(), 0);
	/* the right start time: the record is written back */
	saved.starttime--;
	saved.cpus_changed = true;
	registry_restore_saved(wk.tid, &saved);
	ck_assert_uint_eq(sched_record_n(), 1);
	assert_same(&sched_record_get(0)->s, &saved.original);
	ck_assert(sched_record_get(0)->set_cpus);

	/* a managed thread that exits: its tid is never written again */
	t = add(wk.tid, 0, &s);
	ck_assert_uint_eq(sched_record_n(), 2);
	registry_set_observer(r, on_change, &events);
	worker_stop(&wk);
	registry_remove_thread(r, t, true);
	ck_assert_uint_eq(sched_record_n(), 2);
	ck_assert_uint_eq(n_events, 1);
	ck_assert_int_eq(events[0].ev, REG_EV_THREAD_GONE);
	ck_assert_int_eq(events[0].id, wk.tid);
}
END_TEST

/* A reload that finds a managed thread gone before its exit was noticed
 * (the daemon was stopped, or the notice is still queued): its tid, which
 * may name another thread by now, is not written; the entry goes. */
START_TEST(test_reapply_gone)
{
	struct sched_spec s = spec_of(SCHED_FIFO, 10);
	struct worker wk;
	size_t writes;

	worker_start(&wk);
	add(wk.tid, 0, &s);
	writes = sched_record_n();
	worker_stop(&wk);
	registry_reapply(r, c);
	ck_assert_uint_eq(sched_record_n(), writes);
	ck_assert_ptr_null(registry_find(r, wk.tid));
	ck_assert_uint_eq(registry_n_threads(r), 0);
}
END_TEST

/* Exits noticed by the connector and by a rescan. */
START_TEST(test_exit_paths)
{
	struct sched_spec s = spec_of(SCHED_FIFO, 10);
	struct worker a, b, live;

	worker_start(&a);
	worker_start(&b);
	worker_start(&live);
	add(a.tid, 0, &s);
	add(b.tid, 0, &s);
	add(live.tid, 0, &s);
	registry_on_exit(r, live.tid);           /* a notice for a live thread changes nothing */
	ck_assert_ptr_nonnull(registry_find(r, live.tid));
	worker_stop(&a);
	worker_stop(&b);
	registry_on_exit(r, a.tid);
	ck_assert_ptr_null(registry_find(r, a.tid));
	ck_assert_ptr_nonnull(registry_find(r, b.tid));
	registry_rescan(r, c);
	ck_assert_ptr_null(registry_find(r, b.tid));
	ck_assert_ptr_nonnull(registry_find(r, live.tid));
	ck_assert_uint_eq(registry_n_threads(r), 1);
	ck_assert_uint_eq(sched_record_n(), 3);
	worker_stop(&live);
}
END_TEST

/* The kernel refusing: the code, the call and errno in the message, nothing
 * registered; a thread taken over from a previous rtschedd gets its recorded
 * original back when its new settings fail. */
START_TEST(test_write_fails)
{
	struct sched_spec s = spec_of(SCHED_FIFO, 10);
	struct reg_saved saved;
	struct worker wk;
	char msg[512], needle[64];

	worker_start(&wk);
	sched_record_fail(-EPERM, "sched_setattr");
	ck_assert_int_eq(registry_add_thread(r, wk.tid, getpid(), 0, REG_SOURCE_THREAD, &no_req, &s, NULL, NULL, msg,
					     sizeof(msg)), REFUSE_APPLY_FAILED);
	snprintf(needle, sizeof(needle), "sched_setattr(tid %d, fifo/10", (int)wk.tid);
	ck_assert_msg(strstr(msg, needle) && strstr(msg, strerror(EPERM)), "%s", msg);
	ck_assert_ptr_null(registry_find(r, wk.tid));
	ck_assert_uint_eq(registry_n_threads(r), 0);
	ck_assert_uint_eq(sched_record_n(), 1);         /* not restored: nothing was changed */

	sched_record_fail(-ESRCH, "sched_setattr");
	ck_assert_int_eq(registry_add_thread(r, wk.tid, getpid(), 0, REG_SOURCE_THREAD, &no_req, &s, NULL, NULL, msg,
					     sizeof(msg)), REFUSE_NO_SUCH_THREAD);

	sched_record_reset();
	sched_record_fail(-EPERM, "sched_setaffinity");
	memset(&saved, 0, sizeof(saved));
	saved.starttime = unit_starttime(wk.tid);
	ck_assert_int_eq(task_sched_read(wk.tid, &saved.original), 0);
	saved.original.policy = SCHED_RR;
	saved.original.priority = 3;
	ck_assert_int_eq(registry_adopt_thread(r, wk.tid, getpid(), 0, REG_SOURCE_THREAD, &no_req, &s, NULL, &saved, msg,
					       sizeof(msg)), REFUSE_APPLY_FAILED);
	ck_assert_msg(strstr(msg, "sched_setaffinity("), "%s", msg);
	ck_assert_uint_eq(sched_record_n(), 2);
	assert_same(&sched_record_get(1)->s, &saved.original);
	ck_assert_ptr_null(registry_find(r, wk.tid));
	worker_stop(&wk);
}
END_TEST

/* A reload: registrations are resolved and checked again; a role that is
 * gone, or limits that no longer allow a thread, put its original back. */
START_TEST(test_reapply)
{
	struct sched_spec s;
	struct grant_request q = no_req;
	struct passwd *pw = getpwnam("nobody");
	struct task_sched before;
	struct worker a, b, d;
	char msg[512];

	ck_assert_ptr_nonnull(pw);
	config_free(c);
	c = unit_config(dir, "[rule audio]\npolicy = fifo\npriority = 30\n[rule video]\npolicy = fifo\npriority = 20\n"
			     "[user nobody]\nmax-priority = 40\npolicies = fifo\n");
	worker_start(&a);
	worker_start(&b);
	worker_start(&d);
	ck_assert_int_eq(task_sched_read(a.tid, &before), 0);
	snprintf(q.role, sizeof(q.role), "audio");
	ck_assert_int_eq(grant_resolve(c, &q, &s), 0);
	ck_assert_int_eq(registry_add_thread(r, a.tid, getpid(), 0, REG_SOURCE_THREAD, &q, &s, NULL, NULL, msg,
					     sizeof(msg)), 0);
	snprintf(q.role, sizeof(q.role), "video");
	ck_assert_int_eq(grant_resolve(c, &q, &s), 0);
	ck_assert_int_eq(registry_add_thread(r, b.tid, getpid(), pw->pw_uid, REG_SOURCE_THREAD, &q, &s, NULL, NULL,
					     msg, sizeof(msg)), 0);
	ck_assert_int_eq(registry_add_thread(r, d.tid, getpid(), 0, REG_SOURCE_THREAD, &q, &s, NULL, NULL, msg,
					     sizeof(msg)), 0);

	/* audio is gone, video moved to 35, and nobody may have 30 at most */
	config_free(c);
	c = unit_config(dir, "[rule video]\npolicy = fifo\npriority = 35\n"
			     "[user nobody]\nmax-priority = 30\npolicies = fifo\n");
	registry_reapply(r, c);
	ck_assert_ptr_null(registry_find(r, a.tid));
	assert_same(&sched_record_last(a.tid)->s, &before);
	ck_assert_ptr_null(registry_find(r, b.tid));
	ck_assert_int_eq(sched_record_last(b.tid)->s.policy, before.policy);
	ck_assert_int_eq(registry_recent(r, 0)->code, 0);
	ck_assert_ptr_nonnull(registry_find(r, d.tid));  /* root's: re-applied */
	ck_assert_int_eq(sched_record_last(d.tid)->s.priority, 35);
	worker_stop(&a);
	worker_stop(&b);
	worker_stop(&d);
}
END_TEST

/* A reload reads a process's rlimits once for all its threads (they are per
 * process), but afresh in every pass: RLIMIT_RTTIME lowered to 0 between
 * two reloads restores every thread of the process at the second, and a
 * registration after the pass reads the limit again. */
START_TEST(test_reapply_rttime_per_pass)
{
	struct sched_spec s;
	struct grant_request q = no_req;
	struct task_sched before_a, before_b;
	struct rlimit old, rl;
	struct worker a, b;
	char msg[512];

	config_free(c);
	c = unit_config(dir, "[rule audio]\npolicy = fifo\npriority = 30\n");
	worker_start(&a);
	worker_start(&b);
	ck_assert_int_eq(task_sched_read(a.tid, &before_a), 0);
	ck_assert_int_eq(task_sched_read(b.tid, &before_b), 0);
	snprintf(q.role, sizeof(q.role), "audio");
	ck_assert_int_eq(grant_resolve(c, &q, &s), 0);
	ck_assert_int_eq(registry_add_thread(r, a.tid, getpid(), 0, REG_SOURCE_THREAD, &q, &s, NULL, NULL, msg,
					     sizeof(msg)), 0);
	ck_assert_int_eq(registry_add_thread(r, b.tid, getpid(), 0, REG_SOURCE_THREAD, &q, &s, NULL, NULL, msg,
					     sizeof(msg)), 0);
	registry_reapply(r, c); /* the limits as they are: both stay */
	ck_assert_ptr_nonnull(registry_find(r, a.tid));
	ck_assert_ptr_nonnull(registry_find(r, b.tid));

	ck_assert_int_eq(getrlimit(RLIMIT_RTTIME, &old), 0);
	rl = old;
	rl.rlim_cur = 0;
	ck_assert_int_eq(setrlimit(RLIMIT_RTTIME, &rl), 0);
	registry_reapply(r, c);
	ck_assert_ptr_null(registry_find(r, a.tid));
	ck_assert_ptr_null(registry_find(r, b.tid));
	assert_same(&sched_record_last(a.tid)->s, &before_a);
	assert_same(&sched_record_last(b.tid)->s, &before_b);
	ck_assert_int_eq(setrlimit(RLIMIT_RTTIME, &old), 0);
	ck_assert_int_eq(registry_add_thread(r, a.tid, getpid(), 0, REG_SOURCE_THREAD, &q, &s, NULL, NULL, msg,
					     sizeof(msg)), 0);
	worker_stop(&a);
	worker_stop(&b);
}
END_TEST

/* The watchdog's cooldown: real time is held back, and given at promote. */
START_TEST(test_hold_and_promote)
{
	struct sched_spec s = spec_of(SCHED_FIFO, 10);
	struct reg_thread *t;
	struct worker wk;
	char text[64];

	worker_start(&wk);
	registry_hold_all(r);
	ck_assert(registry_held(r, 0, getpid(), NULL));
	t = add(wk.tid, 0, &s);
	ck_assert_int_eq(sched_record_last(wk.tid)->s.policy, SCHED_OTHER);
	ck_assert(t->demoted);
	ck_assert_int_eq(t->demoted_from.policy, SCHED_FIFO);
	registry_holds_text(r, text, sizeof(text));
	ck_assert_str_eq(text, "every process");
	ck_assert_uint_eq(registry_promote(r), 1);
	ck_assert(!registry_held(r, 0, getpid(), NULL));
	ck_assert_int_eq(sched_record_last(wk.tid)->s.policy, SCHED_FIFO);
	ck_assert_int_eq(sched_record_last(wk.tid)->s.priority, 10);
	ck_assert(!t->demoted);
	worker_stop(&wk);
}
END_TEST

/* Holds are per account and, for a rule match, per rule: neither a fork nor
 * a new process of the culprit's user escapes one, and another user the
 * same rule matches is not caught by it (issue 23). */
START_TEST(test_hold_keys)
{
	char text[256], want[256];

	/* a non-root user's registration: every real-time grant of that account */
	ck_assert_int_eq(registry_hold(r, 1000, 1, ""), 0);
	ck_assert(registry_held(r, 1000, getpid(), NULL));
	ck_assert(registry_held(r, 1000, getpid(), "any-rule"));
	ck_assert(!registry_held(r, 1001, getpid(), NULL));
	ck_assert(!registry_held(r, 0, getpid(), NULL));
	registry_promote(r);
	ck_assert(!registry_held(r, 1000, getpid(), NULL));
	/* a rule's match: that rule's matches of the account anywhere, and the culprit's process */
	ck_assert_int_eq(registry_hold(r, 1000, getpid(), "runaway"), 0);
	ck_assert(registry_held(r, 1000, 1, "runaway"));
	ck_assert(!registry_held(r, 1001, 1, "runaway"));
	ck_assert(!registry_held(r, 1000, 1, "other"));
	ck_assert(!registry_held(r, 1000, 1, NULL));
	ck_assert(registry_held(r, 1000, getpid(), NULL));
	registry_promote(r);
	/* root's registration: its process, not every service root runs */
	ck_assert_int_eq(registry_hold(r, 0, getpid(), ""), 0);
	ck_assert(registry_held(r, 0, getpid(), NULL));
	ck_assert(!registry_held(r, 0, 1, NULL));
	registry_holds_text(r, text, sizeof(text));
	snprintf(want, sizeof(want), "pid %d (", (int)getpid());
	ck_assert_msg(strncmp(text, want, strlen(want)) == 0, "holds text: %s", text);
	registry_promote(r);
	ck_assert_int_eq(registry_hold(r, 1000, getpid(), ""), 0);
	registry_holds_text(r, text, sizeof(text));
	ck_assert_msg(strstr(text, "every grant of uid 1000") != NULL, "holds text: %s", text);
	registry_promote(r);
}
END_TEST

/* The callbacks the state journal is written from. */
START_TEST(test_observer)
{
	struct sched_spec s = spec_of(SCHED_FIFO, 10);
	struct grant_request q = no_req;
	struct reg_process *p;
	struct reg_thread *t;
	struct worker wk;
	struct proc_stat st;
	size_t n;
	char msg[512];

	worker_start(&wk);
	ck_assert_int_eq(proc_read_stat(wk.tid, &st), 0);
	registry_set_observer(r, on_change, &events);
	t = add(wk.tid, 0, &s);
	/* a real-time grant is announced before the kernel write (the watchdog
	 * must watch first), with the start time that pins the thread */
	ck_assert_uint_eq(n_events, 2);
	ck_assert_int_eq(events[0].ev, REG_EV_THREAD_ARM);
	ck_assert_int_eq(events[0].id, wk.tid);
	ck_assert_uint_eq(events[0].starttime, st.starttime);
	ck_assert_int_eq(events[0].policy, SCHED_OTHER);
	ck_assert_int_eq(events[1].ev, REG_EV_THREAD_SET);
	ck_assert_int_eq(events[1].id, wk.tid);
	add(wk.tid, 0, &s);                          /* asked again: set again */
	ck_assert_uint_eq(n_events, 4);
	ck_assert_int_eq(events[2].ev, REG_EV_THREAD_ARM);
	ck_assert_int_eq(events[3].ev, REG_EV_THREAD_SET);
	registry_remove_thread(r, t, true);
	ck_assert_uint_eq(n_events, 5);
	ck_assert_int_eq(events[4].ev, REG_EV_THREAD_GONE);
	ck_assert_int_eq(events[4].id, wk.tid);

	n_events = 0;
	n = own_threads();
	ck_assert_int_eq(registry_add_process(r, getpid(), 0, &q, &s, &p, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(n_events, 1 + 2 * n);
	ck_assert_int_eq(events[0].ev, REG_EV_PROC_SET);   /* the process before its threads */
	ck_assert_int_eq(events[0].id, getpid());
	for (size_t i = 1; i <= 2 * n; i += 2) {
		ck_assert_int_eq(events[i].ev, REG_EV_THREAD_ARM);
		ck_assert_int_eq(events[i].policy, SCHED_OTHER);
		ck_assert_int_eq(events[i + 1].ev, REG_EV_THREAD_SET);
		ck_assert_int_eq(events[i + 1].id, events[i].id);
	}
	n_events = 0;
	registry_remove_process(r, p, true);
	ck_assert_uint_eq(n_events, 1 + n);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(events[i].ev, REG_EV_THREAD_GONE);
	ck_assert_int_eq(events[n].ev, REG_EV_PROC_GONE);   /* the threads before their process */
	ck_assert_int_eq(events[n].id, getpid());

	/* detached: freeing tells nobody */
	add(wk.tid, 0, &s);
	n_events = 0;
	registry_set_observer(r, NULL, NULL);
	registry_free(r, true);
	r = NULL;
	ck_assert_uint_eq(n_events, 0);
	worker_stop(&wk);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("registry");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_add_remove_restores_original);
	tcase_add_test(tc, test_cpus_restored_when_changed);
	tcase_add_test(tc, test_replace_keeps_original);
	tcase_add_test(tc, test_free_restores_each);
	tcase_add_test(tc, test_count_owner);
	tcase_add_test(tc, test_exec_watched);
	tcase_add_test(tc, test_disowned_process);
	tcase_add_test(tc, test_iterators);
	tcase_add_test(tc, test_schedstat_rebase);
	tcase_add_test(tc, test_process_takes_new_threads);
	tcase_add_test(tc, test_new_thread_limits);
	tcase_add_test(tc, test_rescan_keeps_own_registration);
	tcase_add_test(tc, test_stale_and_gone);
	if (geteuid() == 0 && access("/proc/sys/kernel/ns_last_pid", W_OK) == 0)
	{
		tcase_add_test(tc, test_reused_during_write);
		tcase_add_test(tc, test_reused_after_write);
	} else {
		unit_skip("test_reused_during_write, test_reused_after_write: need root and a writable "
			  "/proc/sys/kernel/ns_last_pid, to give a tid to a new process");
	}
	tcase_add_test(tc, test_reapply_gone);
	tcase_add_test(tc, test_exit_paths);
	tcase_add_test(tc, test_write_fails);
	tcase_add_test(tc, test_reapply);
	tcase_add_test(tc, test_reapply_rttime_per_pass);
	tcase_add_test(tc, test_hold_and_promote);
	tcase_add_test(tc, test_hold_keys);
	tcase_add_test(tc, test_observer);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
