/* safety_int.h: what the files of the watchdog share and no other module
 * uses (see safety.h for what the watchdog does and why).
 *
 * Threads and what they share:
 *   canary (canary.c; one per watched CPU, SCHED_OTHER nice -20, pinned):
 *     ticks every threshold/8 and adds each wait past a tick (over the
 *     floor) to `stall`.
 *   watchdog (watch.c; SCHED_FIFO 99): samples every canary's total each
 *     tick, keeps a window per CPU, and on starvation demotes (trip.c) and
 *     writes `notify`.
 *   main loop (safety.c, and trip.c for a trip's outcome): publishes
 *     threads, parks and wakes the others through their `kick` eventfd,
 *     logs, runs the cooldown and calls the ops.
 * Counters are C11 atomics written by one thread each. The thread list and
 * the trip record sit behind one priority-inheriting mutex: the main loop or
 * a canary holding it while a spinner preempts it must not stall the
 * watchdog, so the watchdog's priority is lent to whoever holds it. */
#ifndef RTSCHED_SAFETY_INT_H
#define RTSCHED_SAFETY_INT_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <systemd/sd-event.h>

#include "daemon/watchdog/safety.h"

#define NSEC 1000000000ull
#define MSEC 1000000ull

enum { WANT_PARK, WANT_RUN, WANT_EXIT };

/* Run-time samples kept per thread: one per threshold across the window. */
#define RUN_SLOTS (SAFETY_WINDOW_FACTOR + 1)

/* A published thread as the watchdog keeps it: its CPU set is an index into
 * safety.cpusets, which holds each distinct set once. 10,000 threads share a
 * handful of sets, and a cpu_set_t of their own was 128 of the 184 bytes the
 * watchdog kept per managed thread (24 + 40 for the run-time samples now). */
struct safety_entry {
	pid_t tid, pid;
	uint64_t starttime;
	size_t cpus;
};

/* A thread of this module and how the main loop steers it. */
struct worker {
	pthread_t th;
	bool started;
	int kick;             /* eventfd: re-read `want` */
	_Atomic int want;
};

struct canary {
	struct worker w;
	struct safety *s;
	int cpu;
	_Atomic uint64_t deadline;  /* CLOCK_MONOTONIC ns of the tick it waits for */
	_Atomic uint64_t stall;     /* ns it was kept waiting past its ticks, in total */
	_Atomic unsigned epoch;     /* bumped at each start: the watchdog restarts its window */
	/* the watchdog thread's own */
	struct safety_window win;
	unsigned seen_epoch;
};

struct safety {
	sd_event *event;
	struct safety_params params;
	struct safety_ops ops;
	void *ud;
	cpu_set_t allowed;                 /* CPUs this process may pin a canary to */
	_Atomic uint64_t threshold_ns;
	_Atomic uint64_t since;            /* CLOCK_MONOTONIC ns: waits before it don't count */
	_Atomic unsigned param_epoch;
	_Atomic unsigned long suspends;

	struct worker wd;
	struct canary *_Atomic canary[CPU_SETSIZE];
	cpu_set_t running;                 /* the main loop's view */

	pthread_mutex_t lock;              /* PI; guards the fields below */
	struct safety_entry *threads;
	uint64_t (*runs)[RUN_SLOTS];       /* each thread's run time (ns) at each sample, by slot */
	size_t n_threads;
	cpu_set_t *cpusets;                /* the distinct CPU sets of `threads` */
	size_t n_cpusets;
	bool trip_pending;                 /* the watchdog waits for the main loop */
	struct safety_trip trip;
	struct safety_thread *trip_demoted;

	int notify;                        /* eventfd: watchdog -> main loop */
	sd_event_source *notify_src, *cooldown_src;
	uint64_t cooldown_until;           /* CLOCK_BOOTTIME usec; 0: no cooldown */
	unsigned long trips;
	char last_culprit[SAFETY_CULPRITS_MAX];

	/* the watchdog thread's own: when each slot of `runs` was sampled */
	uint64_t run_time[RUN_SLOTS];      /* CLOCK_MONOTONIC ns */
	unsigned run_head, run_filled, run_ticks;
	uint64_t run_since;                /* when sampling (re)started */
};

/* safety.c: clocks and the module's threads */

/* clk now, in ns. */
uint64_t safety_now_ns(clockid_t clk);
/* CLOCK_MONOTONIC and CLOCK_BOOTTIME, read together. */
void safety_clocks_now(struct safety_clocks *c);
/* The canary tick and watchdog check period: threshold / 8. */
uint64_t safety_tick_ns(struct safety *s);
/* Wait for a kick or timeout_ns (UINT64_MAX: none). True if kicked or
 * interrupted, so the caller re-reads what it should do. */
bool safety_worker_wait(struct worker *w, uint64_t timeout_ns);
/* Tell a worker to run, park or exit. */
void safety_worker_steer(struct worker *w, int want);
/* Start a thread with every signal blocked, the given scheduling, affinity
 * (cpus may be NULL) and stack size. Returns 0 or -errno. */
int safety_worker_start(struct worker *w, void *(*fn)(void *), void *arg, int policy, int prio,
			const cpu_set_t *cpus, size_t stack);
/* Ask a thread to exit and join it, for at most a second. False if it is
 * still running (its memory must then stay). */
bool safety_worker_stop(struct worker *w);

/* canary.c */

/* The canary for `cpu`, created parked on first use. Returns 0 or -errno. */
int safety_canary_get(struct safety *s, int cpu, struct canary **ret);

/* watch.c */

/* The watchdog thread (SCHED_FIFO 99): checks the canaries every tick. */
void *safety_watch_main(void *arg);

/* trip.c */

/* A thread's time on a CPU so far (ns), 0 if it is gone. */
uint64_t safety_run_ns(pid_t pid, pid_t tid);
/* Sample every published thread's run time into the next slot (the
 * watchdog thread, once per threshold). */
void safety_run_sample(struct safety *s, uint64_t mono);
/* Starvation on `starved`: demote the culprits, in the watchdog thread, then
 * tell the main loop. */
void safety_trip(struct safety *s, const cpu_set_t *starved, uint64_t worst_ns, uint64_t now_mono);
/* The main loop's side of a trip (the `notify` eventfd): log, start the
 * cooldown, call ops->demoted. */
int safety_on_notify(sd_event_source *src, int fd, uint32_t revents, void *userdata);
/* The cooldown is over: call ops->promote. */
int safety_on_cooldown(sd_event_source *src, uint64_t usec, void *userdata);

#endif
