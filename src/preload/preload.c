/* preload.c: librtsched-preload.so, the library `rtschedctl run` puts in
 * LD_PRELOAD. It turns a program's own scheduling calls that the kernel
 * refused into requests to rtschedd, so a program that sets its own
 * real-time priority (olad --scheduler-policy, jackd -R) gets it through the
 * one grant decision instead of RLIMIT_RTPRIO.
 *
 * Each wrapped call runs the real function first. Only when that fails with
 * the kernel's permission error (EPERM; EACCES or EPERM for a nice value)
 * does the library register the thread with rtschedd (source=preload, the
 * rule from $RTSCHED_RUN_RULE), asking for the policy, priority or nice the
 * call asked for; then it makes the real call again, now within what the
 * thread has, and returns that: success when rtschedd granted it (a priority
 * rtschedd capped is retried at the cap), the first call's error unchanged
 * otherwise, and unchanged when rtschedd cannot be reached. A refusal is
 * written once per thread to stderr (nowhere if fd 2 is closed), with the
 * daemon's code, its diagnosis and what to do.
 *
 * pthread_create with PTHREAD_EXPLICIT_SCHED attributes the kernel refuses
 * is redone with inherited scheduling; the new thread registers itself with
 * the attributes' policy and priority before the start routine runs, and the
 * creator returns only after that answer: on a refusal the thread ends
 * without running the start routine and pthread_create returns EPERM, as it
 * would have. Every thread made through pthread_create is entered in a table
 * of pthread_t to kernel thread id (glibc 2.36 has no pthread_gettid_np), so
 * pthread_setschedparam on another thread of the process can name it.
 *
 * The dynamic loader ignores LD_PRELOAD for setuid and setgid programs
 * (secure execution); that is kept so. The daemon only ever grants the
 * caller's own threads running as its uid.
 *
 * Built without the sanitizers (Makefile.am): an ASan runtime in a library
 * preloaded into uninstrumented programs (olad, jackd) refuses to start. */
#include "autoconfig.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/internal.h"
#include "rtsched.h"
#include "shared/client.h"

#define EXPORT __attribute__((visibility("default")))
/* The rule `rtschedctl run --rule NAME` asks for (none: the daemon's default). */
#define RULE_ENV "RTSCHED_RUN_RULE"

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif
#ifndef SCHED_FLAG_RESET_ON_FORK
#define SCHED_FLAG_RESET_ON_FORK 0x01
#endif

/* sched_setattr(2)'s argument (glibc 2.36 declares neither it nor the call). */
struct preload_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};

/* --- the real functions ------------------------------------------------------ */

/* What a slot holds once the lookup found nothing. */
#define NONE ((void *)1)

/* The next definition of NAME after this library (libc's), looked up once;
 * NULL if there is none. */
static void *real(void **slot, const char *name)
{
	void *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	if (!f) {
		f = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, f ? f : NONE, __ATOMIC_RELEASE);
	}
	return f == NONE ? NULL : f;
}
#define REAL(name) ((__typeof__(&name))real(&real_##name, #name))
static void *real_sched_setscheduler, *real_sched_setparam, *real_sched_setattr, *real_pthread_setschedparam,
	*real_pthread_setschedprio, *real_pthread_create, *real_nice, *real_setpriority;

EXPORT int sched_setattr(pid_t pid, struct preload_sched_attr *attr, unsigned int flags);

/* --- thread ids ---------------------------------------------------------------- */

/* pthread_t -> tid of the threads made through pthread_create since the
 * library was loaded; a slot is freed when its thread exits. Only looked up
 * by pthread_setschedparam/setschedprio on another thread.
 *
 * Without a lock: every thread's start and exit passes here, real-time
 * threads' too, and a lock held by a preempted SCHED_OTHER thread would
 * hold them up without bound (a plain mutex does not lend its holder the
 * waiter's priority). A thread claims a free slot by compare-and-swap of
 * tid from 0 to CLAIMED, writes its pthread_t, then publishes its tid; at
 * exit it stores 0 into the slot it claimed (its index kept in a
 * thread-specific value). A reader takes a slot's thread only between two
 * reads of the same published tid. */
#define TIDS_MAX 4096
#define CLAIMED ((pid_t)-1)
static struct {
	pthread_t thread;
	pid_t tid; /* 0: free; CLAIMED: being filled */
} tids[TIDS_MAX];
static pthread_key_t tids_key;
static pthread_once_t tids_once = PTHREAD_ONCE_INIT;

/* At a thread's exit: free its slot (slot is its index + 1). */
static void tids_forget(void *slot)
{
	__atomic_store_n(&tids[(uintptr_t)slot - 1].tid, 0, __ATOMIC_RELEASE);
}

/* In a fork()ed child: only the forking thread is left, and the parent's
 * pthread_t values may come back for the child's new threads. */
static void tids_fork_child(void)
{
	memset(tids, 0, sizeof(tids));
	pthread_setspecific(tids_key, NULL);
}

static void tids_init(void)
{
	pthread_key_create(&tids_key, tids_forget);
	pthread_atfork(NULL, NULL, tids_fork_child);
}

/* Enter the calling thread (a full table just leaves it out). */
static void tids_enter(void)
{
	pthread_once(&tids_once, tids_init);
	for (size_t i = 0; i < TIDS_MAX; i++) {
		pid_t free_slot = 0;

		if (__atomic_load_n(&tids[i].tid, __ATOMIC_RELAXED) != 0 ||
		    !__atomic_compare_exchange_n(&tids[i].tid, &free_slot, CLAIMED, false, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		/* CLAIMED is seen before the new thread by a reader that sees it */
		__atomic_thread_fence(__ATOMIC_RELEASE);
		__atomic_store_n(&tids[i].thread, pthread_self(), __ATOMIC_RELAXED);
		__atomic_store_n(&tids[i].tid, (pid_t)gettid(), __ATOMIC_RELEASE);
		pthread_setspecific(tids_key, (void *)(uintptr_t)(i + 1));
		return;
	}
}

/* The kernel's id of a thread of this process; 0 if unknown. */
static pid_t tid_of(pthread_t t)
{
	if (pthread_equal(t, pthread_self()))
		return (pid_t)gettid();
	for (size_t i = 0; i < TIDS_MAX; i++) {
		pid_t tid = __atomic_load_n(&tids[i].tid, __ATOMIC_ACQUIRE);
		pthread_t th;

		if (tid <= 0)
			continue;
		th = __atomic_load_n(&tids[i].thread, __ATOMIC_RELAXED);
		/* the slot was not freed and taken again while th was read */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (pthread_equal(th, t) && __atomic_load_n(&tids[i].tid, __ATOMIC_RELAXED) == tid)
			return tid;
	}
	return 0;
}

/* The thread a sched_* call names (0: the caller), if it is one of this
 * process's; else 0: only its own threads are the program's to ask for. */
static pid_t own_tid(pid_t pid)
{
	char path[64];

	if (pid == 0)
		return (pid_t)gettid();
	if (pid < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d", (int)pid);
	return access(path, F_OK) == 0 ? pid : 0;
}

/* Look every real function up at load time: dlsym takes the loader's lock,
 * which the thread of a library constructor that creates a thread and waits
 * for it (libffado's, in jackd's dlopen of a driver) holds; the new thread
 * must never need it. A call before this runs (another preloaded library's
 * constructor) looks its function up itself. */
__attribute__((constructor)) static void resolve_all(void)
{
	real(&real_sched_setscheduler, "sched_setscheduler");
	real(&real_sched_setparam, "sched_setparam");
	real(&real_sched_setattr, "sched_setattr"); /* NULL with glibc 2.36 */
	real(&real_pthread_setschedparam, "pthread_setschedparam");
	real(&real_pthread_setschedprio, "pthread_setschedprio");
	real(&real_pthread_create, "pthread_create");
	real(&real_nice, "nice");
	real(&real_setpriority, "setpriority");
	pthread_once(&tids_once, tids_init);
	/* and NSS for the same reason (it loads modules), and because a
	 * request may come from a real-time thread: the daemon user's uid now,
	 * if the socket is not root's or ours (conn.c's constructor does it
	 * too; whichever runs first) */
	client_load_daemon_user();
}

/* --- asking rtschedd ------------------------------------------------------------ */

static const char *policy_name(int policy)
{
	switch (policy & ~SCHED_RESET_ON_FORK) {
	case SCHED_FIFO: return "fifo";
	case SCHED_RR: return "rr";
	case SCHED_OTHER: return "other";
	case SCHED_BATCH: return "batch";
	case SCHED_IDLE: return "idle";
	default: return NULL;
	}
}

static __thread bool refusal_told;
static bool unreachable_told;

/* Write a line to stderr if the program still has one open for writing. */
static void say(const char *line)
{
	int fl = fcntl(STDERR_FILENO, F_GETFL);
	size_t len = strlen(line);

	if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
		return;
	while (len > 0) {
		ssize_t n = write(STDERR_FILENO, line, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		line += n;
		len -= (size_t)n;
	}
}

/* Tell why rtschedd did not grant CALL's WHAT for tid: once per thread for a
 * refusal, once per process for a daemon it cannot reach. */
static void tell(const char *call, const char *what, pid_t tid, int r)
{
	char line[PROTO_MSG_MAX + 512];
	const char *code = lib_last_code(), *diag = rtsched_last_diag();

	if (!code[0]) {
		/* no answer from the daemon: nothing was refused by it */
		if (__atomic_exchange_n(&unreachable_told, true, __ATOMIC_RELAXED))
			return;
		snprintf(line, sizeof(line),
			 "rtsched-preload: %s(%s) refused by the kernel, and rtschedd did not answer: %s (%s); "
			 "fix: start rtschedd (systemctl start rtschedd.socket), or set RTSCHED_SOCKET to its socket\n",
			 call, what, rtsched_last_message()[0] ? rtsched_last_message() : rtsched_strerror(r),
			 strerror(-r));
		say(line);
		return;
	}
	if (refusal_told)
		return;
	refusal_told = true;
	snprintf(line, sizeof(line),
		 "rtsched-preload: %s (pid %d), thread %d: %s(%s) refused by rtschedd: %s%s%s: %s "
		 "(`rtschedctl check --pid %d` explains more)\n",
		 program_invocation_short_name, (int)getpid(), (int)tid, call, what, code,
		 diag[0] ? ", diagnosis " : "", diag, rtsched_last_message(), (int)getpid());
	say(line);
}

/* Register tid with rtschedd for policy/priority/nice (RTSCHED_UNSET: not
 * asked), as the preload source. 0 with *g the kernel's view after the
 * grant, or -errno (told). */
static int ask(const char *call, const char *what, pid_t tid, const char *policy, int priority, int nice,
	       struct rtsched_grant *g)
{
	struct rtsched_request req = RTSCHED_REQUEST_INIT;
	const char *rule = getenv(RULE_ENV);
	int r;

	req.tid = tid;
	req.policy = policy;
	req.priority = priority;
	req.nice = nice;
	req.role = rule && rule[0] ? rule : NULL;
	r = lib_register(&req, "preload", g);
	if (r < 0)
		tell(call, what, tid, r);
	return r;
}

/* Ask for a real-time policy at prio for tid. The priority to retry the
 * real call with (prio, or rtschedd's lower cap), with *rof whether the
 * grant set SCHED_RESET_ON_FORK (the kernel then refuses a call that
 * clears it); -errno if not granted. */
static int ask_rt(const char *call, pid_t tid, int policy, int prio, bool *rof)
{
	const char *name = policy_name(policy);
	struct rtsched_grant g;
	char what[32];

	snprintf(what, sizeof(what), "%s %d", name, prio);
	if (ask(call, what, tid, name, prio, RTSCHED_UNSET, &g) < 0)
		return -EPERM;
	if (strcmp(g.policy, name) != 0 || g.priority < 1 || g.priority > prio)
		return -EPERM;
	*rof = g.reset_on_fork;
	return g.priority;
}

/* Ask for nice for tid (keeping its policy, SCHED_OTHER or SCHED_BATCH). */
static int ask_nice(const char *call, pid_t tid, int nice)
{
	int pol = sched_getscheduler(tid);
	struct rtsched_grant g;
	char what[32];

	if (pol < 0)
		return -errno;
	pol &= ~SCHED_RESET_ON_FORK;
	if (pol != SCHED_OTHER && pol != SCHED_BATCH)
		return -EPERM;
	snprintf(what, sizeof(what), "nice %d", nice);
	return ask(call, what, tid, policy_name(pol), 0, nice, &g) < 0 ? -EPERM : 0;
}

/* --- sched_* -------------------------------------------------------------------- */

/* What a wrapped call that returns -1 and sets errno returns after a retry:
 * 0 with the caller's errno as it was, or -1 with the first call's. */
static int outcome(bool granted, int saved, int err)
{
	errno = granted ? saved : err;
	return granted ? 0 : -1;
}

/* sched_setscheduler and sched_setparam after a refusal: rtschedd, then the
 * real call again within the grant. */
static int retry_sched(const char *call, pid_t pid, int policy, const struct sched_param *param, int err)
{
	int base = policy & ~SCHED_RESET_ON_FORK, prio;
	struct sched_param sp;
	pid_t tid;
	bool rof;

	if ((base != SCHED_FIFO && base != SCHED_RR) || !param || !(tid = own_tid(pid)))
		return -err;
	if ((prio = ask_rt(call, tid, base, param->sched_priority, &rof)) < 0)
		return -err;
	sp.sched_priority = prio;
	if (REAL(sched_setscheduler)(pid, policy | (rof ? SCHED_RESET_ON_FORK : 0), &sp) < 0)
		return -err;
	return 0;
}

EXPORT int sched_setscheduler(pid_t pid, int policy, const struct sched_param *param)
{
	int saved = errno, r, err;

	if ((r = REAL(sched_setscheduler)(pid, policy, param)) == 0 || errno != EPERM)
		return r;
	err = errno;
	return outcome(retry_sched("sched_setscheduler", pid, policy, param, err) == 0, saved, err);
}

EXPORT int sched_setparam(pid_t pid, const struct sched_param *param)
{
	int saved = errno, r, err, pol;

	if ((r = REAL(sched_setparam)(pid, param)) == 0 || errno != EPERM)
		return r;
	err = errno;
	pol = sched_getscheduler(pid);
	return outcome(pol >= 0 && retry_sched("sched_setparam", pid, pol & ~SCHED_RESET_ON_FORK, param, err) == 0,
		       saved, err);
}

/* glibc 2.36 has no sched_setattr: programs that use this name (from a newer
 * glibc, or their own declaration) get the system call. */
static int sys_sched_setattr(pid_t pid, struct preload_sched_attr *attr, unsigned int flags)
{
	int (*f)(pid_t, struct preload_sched_attr *, unsigned int) =
		(int (*)(pid_t, struct preload_sched_attr *, unsigned int))real(&real_sched_setattr, "sched_setattr");

	return f ? f(pid, attr, flags) : (int)syscall(SYS_sched_setattr, pid, attr, flags);
}

EXPORT int sched_setattr(pid_t pid, struct preload_sched_attr *attr, unsigned int flags)
{
	int saved = errno, r, err, prio;
	struct preload_sched_attr again;
	pid_t tid;
	bool rof;

	if ((r = sys_sched_setattr(pid, attr, flags)) == 0 || errno != EPERM)
		return r;
	err = errno;
	/* only what rtschedd grants: a policy, its priority or nice, reset-on-fork */
	if (!attr || attr->size < offsetof(struct preload_sched_attr, sched_runtime) ||
	    (attr->sched_flags & ~(uint64_t)SCHED_FLAG_RESET_ON_FORK) || !(tid = own_tid(pid)))
		goto refused;
	again = *attr;
	again.size = sizeof(again);
	if (attr->sched_policy == SCHED_FIFO || attr->sched_policy == SCHED_RR) {
		if (attr->sched_priority > 99 ||
		    (prio = ask_rt("sched_setattr", tid, (int)attr->sched_policy, (int)attr->sched_priority, &rof)) < 0)
			goto refused;
		again.sched_priority = (uint32_t)prio;
		if (rof)
			again.sched_flags |= SCHED_FLAG_RESET_ON_FORK;
	} else if ((attr->sched_policy == SCHED_OTHER || attr->sched_policy == SCHED_BATCH) &&
		   attr->sched_nice < 0 && attr->sched_nice >= -20) {
		if (ask_nice("sched_setattr", tid, attr->sched_nice) < 0)
			goto refused;
	} else {
		goto refused;
	}
	return outcome(sys_sched_setattr(pid, &again, flags) == 0, saved, err);
refused:
	return outcome(false, saved, err);
}

/* --- pthread_* ------------------------------------------------------------------- */

EXPORT int pthread_setschedparam(pthread_t t, int policy, const struct sched_param *param)
{
	int saved = errno, r, prio, base = policy & ~SCHED_RESET_ON_FORK;
	struct sched_param sp;
	pid_t tid;
	bool rof;

	if ((r = REAL(pthread_setschedparam)(t, policy, param)) != EPERM)
		return r;
	if ((base != SCHED_FIFO && base != SCHED_RR) || !(tid = tid_of(t)))
		return r;
	if ((prio = ask_rt("pthread_setschedparam", tid, base, param->sched_priority, &rof)) < 0)
		return r;
	sp.sched_priority = prio;
	/* again through glibc, which keeps the thread's parameters for pthread_getschedparam */
	if (REAL(pthread_setschedparam)(t, policy | (rof ? SCHED_RESET_ON_FORK : 0), &sp) != 0)
		return r;
	errno = saved;
	return 0;
}

EXPORT int pthread_setschedprio(pthread_t t, int prio)
{
	int r, pol, got;
	struct sched_param sp;
	pid_t tid;
	bool rof;

	if ((r = REAL(pthread_setschedprio)(t, prio)) != EPERM)
		return r;
	if (!(tid = tid_of(t)) || (pol = sched_getscheduler(tid)) < 0)
		return r;
	pol &= ~SCHED_RESET_ON_FORK;
	if ((pol != SCHED_FIFO && pol != SCHED_RR) || (got = ask_rt("pthread_setschedprio", tid, pol, prio, &rof)) < 0)
		return r;
	sp.sched_priority = got;
	return REAL(pthread_setschedparam)(t, pol | (rof ? SCHED_RESET_ON_FORK : 0), &sp) == 0 ? 0 : r;
}

/* What a thread made through pthread_create starts with. */
struct start {
	void *(*fn)(void *);
	void *arg;
	/* a thread made again after the kernel refused explicit scheduling: */
	bool ask;          /* register first with policy/priority */
	int policy;
	int priority;
	int result;        /* 0 granted, else the error pthread_create returns */
	sem_t answered;    /* posted once result is set */
};

/* The start of every thread: enter its tid; for a redone explicit-sched
 * thread, get the attributes' scheduling before the start routine, or end. */
static void *trampoline(void *p)
{
	struct start *st = p;
	void *(*fn)(void *) = st->fn;
	void *arg = st->arg;

	tids_enter();
	if (!st->ask) {
		free(st);
		return fn(arg);
	}
	/* the kernel refused these attributes to the creator: rtschedd, then
	 * the real call within the grant */
	bool rof;
	int prio = ask_rt("pthread_create", (pid_t)gettid(), st->policy, st->priority, &rof);
	int r = prio < 0 ? -1
			 : REAL(sched_setscheduler)(0, st->policy | (rof ? SCHED_RESET_ON_FORK : 0),
						    &(struct sched_param){ .sched_priority = prio });
	st->result = r == 0 ? 0 : EPERM;
	/* st is the creator's: after this post it may be gone */
	r = st->result;
	sem_post(&st->answered);
	return r == 0 ? fn(arg) : NULL;
}

/* Copy what the new thread needs of attr, but with inherited scheduling. */
static int attr_inherit(const pthread_attr_t *attr, pthread_attr_t *a2)
{
	void *stack;
	size_t size;
	int v;
	cpu_set_t cpus, all;
	sigset_t mask;

	if (pthread_attr_init(a2) != 0)
		return -ENOMEM;
	if (pthread_attr_getstack(attr, &stack, &size) == 0 && stack) {
		pthread_attr_setstack(a2, stack, size);
	} else {
		if (pthread_attr_getstacksize(attr, &size) == 0)
			pthread_attr_setstacksize(a2, size);
		if (pthread_attr_getguardsize(attr, &size) == 0)
			pthread_attr_setguardsize(a2, size);
	}
	if (pthread_attr_getscope(attr, &v) == 0)
		pthread_attr_setscope(a2, v);
	/* glibc reports every CPU when the attributes set none */
	memset(&all, 0xff, sizeof(all));
	if (pthread_attr_getaffinity_np(attr, sizeof(cpus), &cpus) == 0 && memcmp(&cpus, &all, sizeof(cpus)) != 0)
		pthread_attr_setaffinity_np(a2, sizeof(cpus), &cpus);
	if (pthread_attr_getsigmask_np(attr, &mask) == 0)
		pthread_attr_setsigmask_np(a2, &mask);
	pthread_attr_setinheritsched(a2, PTHREAD_INHERIT_SCHED);
	pthread_attr_setdetachstate(a2, PTHREAD_CREATE_JOINABLE);
	return 0;
}

/* pthread_create again after EPERM on explicit scheduling: see the top. */
static int create_granted(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg, int policy,
			  int priority, int err)
{
	struct start st;
	pthread_attr_t a2;
	pthread_t nt;
	int detach = PTHREAD_CREATE_JOINABLE, r;

	if (attr_inherit(attr, &a2) < 0)
		return err;
	pthread_attr_getdetachstate(attr, &detach);
	memset(&st, 0, sizeof(st));
	st.fn = fn;
	st.arg = arg;
	st.ask = true;
	st.policy = policy;
	st.priority = priority;
	st.result = EPERM;
	sem_init(&st.answered, 0, 0);
	r = REAL(pthread_create)(&nt, &a2, trampoline, &st);
	pthread_attr_destroy(&a2);
	if (r != 0) {
		sem_destroy(&st.answered);
		return err;
	}
	while (sem_wait(&st.answered) < 0 && errno == EINTR)
		;
	r = st.result;
	sem_destroy(&st.answered);
	if (r != 0) {
		pthread_join(nt, NULL);
		return err;
	}
	if (detach == PTHREAD_CREATE_DETACHED)
		pthread_detach(nt);
	*t = nt;
	return 0;
}

EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	int inherit = PTHREAD_INHERIT_SCHED, policy = SCHED_OTHER, saved = errno, r;
	struct sched_param sp = { 0 };
	struct start *st = calloc(1, sizeof(*st));

	if (!st)
		return REAL(pthread_create)(t, attr, fn, arg);
	st->fn = fn;
	st->arg = arg;
	r = REAL(pthread_create)(t, attr, trampoline, st);
	if (r == 0)
		return 0;
	/* the thread never ran: st is still ours */
	free(st);
	if (r != EPERM || !attr || pthread_attr_getinheritsched(attr, &inherit) != 0 ||
	    inherit != PTHREAD_EXPLICIT_SCHED || pthread_attr_getschedpolicy(attr, &policy) != 0 ||
	    (policy != SCHED_FIFO && policy != SCHED_RR) || pthread_attr_getschedparam(attr, &sp) != 0)
		return r;
	r = create_granted(t, attr, fn, arg, policy, sp.sched_priority, r);
	errno = saved;
	return r;
}

/* --- nice ------------------------------------------------------------------------- */

/* The nice of tid now, or INT_MIN. */
static int nice_of(pid_t tid)
{
	int n;

	errno = 0;
	n = getpriority(PRIO_PROCESS, (id_t)tid);
	return n == -1 && errno ? INT_MIN : n;
}

EXPORT int setpriority(__priority_which_t which, id_t who, int prio)
{
	int saved = errno, r, err;
	pid_t tid;

	if ((r = REAL(setpriority)(which, who, prio)) == 0 || (errno != EACCES && errno != EPERM))
		return r;
	err = errno;
	if (which != PRIO_PROCESS || prio >= 0 || who > INT_MAX || !(tid = own_tid((pid_t)who)))
		goto refused;
	if (prio < -20)
		prio = -20;
	return outcome(ask_nice("setpriority", tid, prio) == 0 && REAL(setpriority)(which, who, prio) == 0, saved, err);
refused:
	return outcome(false, saved, err);
}

EXPORT int nice(int inc)
{
	int saved = errno, r, err, cur, want;
	pid_t tid = (pid_t)gettid();

	errno = 0;
	r = REAL(nice)(inc);
	if (r != -1 || (errno != EPERM && errno != EACCES)) {
		if (!errno)
			errno = saved;
		return r;
	}
	err = errno;
	if ((cur = nice_of(tid)) == INT_MIN || inc >= 0)
		goto refused;
	want = inc < -40 ? -20 : cur + inc < -20 ? -20 : cur + inc;
	if (ask_nice("nice", tid, want) < 0 || REAL(setpriority)(PRIO_PROCESS, 0, want) < 0)
		goto refused;
	errno = saved;
	return nice_of(tid);
refused:
	errno = err;
	return -1;
}
