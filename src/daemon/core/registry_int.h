/* registry_int.h: the registry's insides, for registry.c, registry_walk.c and
 * registry_hold.c only (the rest of the daemon goes through registry.h). */
#ifndef RTSCHED_REGISTRY_INT_H
#define RTSCHED_REGISTRY_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "daemon/config/config.h"
#include "daemon/core/registry.h"
#include "daemon/diag/diag.h"
#include "daemon/sys/proc.h"

#define REG_BUCKETS 4096

/* A managed thread as the registry holds it: what registry.h shows first
 * (so the registry turns the struct reg_thread * it handed out back into
 * this), then what only the registry touches. */
struct reg_tnode {
	struct reg_thread t;
	uint64_t ss_delay0, ss_count0; /* schedstat at registration (or the last rebase) */
	uint64_t pstart;              /* its process's start time, for an exec_watched() thread that is
				       * not the main thread (0: not read): exec_took_over() */
	struct registry *reg;
	struct reg_thread *hnext, *prev, *next;
	int pidfd;                    /* in the registry's exit epoll set while >= 0 */
};

/* A registered process, the same way. */
struct reg_pnode {
	struct reg_process p;
	int pidfd;
	sd_event_source *exit_src;
	struct registry *reg;
	struct reg_process *prev, *next;
};

/* The hash chain of tid. */
static inline unsigned reg_bucket(pid_t tid)
{
	return (unsigned)tid % REG_BUCKETS;
}

/* The registry's part of t (of p). */
/* A user's thread whose process's exec must be heard of (registry_on_exec)
 * even where thread pidfds report every exit: a main thread registered on
 * its own (not a process's) keeps its tid through an exec, and a set-user-ID
 * program's would keep its grant; any other thread that execs becomes the
 * main thread (the kernel gives it the pid) and its program would keep the
 * grant unmanaged (exec_took_over()). */
static inline bool exec_watched(const struct reg_thread *t)
{
	return t->owner != 0 && (t->tid != t->pid || !t->proc);
}

static inline struct reg_tnode *tnode(const struct reg_thread *t)
{
	return (struct reg_tnode *)t;
}
static inline struct reg_pnode *pnode(const struct reg_process *p)
{
	return (struct reg_pnode *)p;
}

struct registry {
	sd_event *event;
	struct reg_thread *buckets[REG_BUCKETS];
	struct reg_thread *threads;
	struct reg_process *procs;
	size_t n_threads, n_procs;
	size_t n_exec_watched; /* threads that registry_on_exec must hear of (exec_watched()) */
	/* Every managed thread's pidfd, in one epoll set that is one event
	 * source: an sd_event_source per thread was ~300 bytes of each one's ~1 KiB. */
	int exit_ep;
	sd_event_source *exit_src;
	int thread_pidfd; /* 1 yes, 0 no, -1 not probed yet */
	registry_observer observer;
	void *observer_ud;
	registry_admit_fn admit;
	void *admit_ud;
	/* watchdog cooldown: who gets SCHED_OTHER now and real-time afterwards */
	bool hold_all;
	struct reg_hold {
		uid_t account;                 /* only this account's threads are held */
		pid_t pid;                     /* 0: any process of the account */
		uint64_t starttime;            /* the process's: a reused pid is not held */
		char rule[CONFIG_NAME_MAX];    /* "" or the [rule] that matched the culprit */
	} *holds;
	size_t n_holds;
	char last_diag[DIAG_CODE_MAX];            /* the diagnosis of the last apply that failed */
	struct reg_recent recent[REG_RECENT_MAX]; /* a ring; recent_head is the next slot */
	size_t recent_head, n_recent;
	struct ratelimit *log_rl;                 /* refusals' log lines per account (NULL until the first) */
	/* during registry_reapply: the last process whose rlimits were read
	 * (they are per process; reading /proc/PID/limits per thread was over
	 * half of a reload of 10,000 threads) */
	pid_t limits_pid;
	int limits_err;
	struct proc_rlimits limits;
};

/* Tell the observer (the state journal) what changed. */
void registry_notify(struct registry *r, int ev, struct reg_thread *t, struct reg_process *p);
/* The part of s a watchdog demotion takes away (and the promotion gives back). */
static inline struct task_policy registry_policy_of(const struct task_sched *s)
{
	return (struct task_policy){ s->policy, s->priority, s->nice, s->reset_on_fork };
}
/* Is t still the thread that was pinned (its tid not reused)? */
bool registry_same_thread(const struct reg_thread *t);

#endif
