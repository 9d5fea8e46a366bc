/* safety_int.h: what the files of the watchdog share and no other module
 * uses (see safety.h for what the watchdog does and why).
 *
 * Threads and what they share:
 *   canary (canary.c; one per watched CPU, SCHED_OTHER nice -20, pinned):
 *     ticks every threshold/8 and adds each wait past a tick (over the
 *     floor) to `stall`.
 *   watchdog (watch.c, scan.c, trip.c; SCHED_FIFO 99): samples every
 *     canary's total each tick and keeps a window per CPU; from the first
 *     late canary on, reads the run time of every real-time thread from
 *     /proc each tick (scan.c); on starvation demotes (trip.c), fills the
 *     trip record and writes `notify`.
 *   main loop (safety.c, and trip.c for a trip's outcome): publishes
 *     threads, parks and wakes the others through their `kick` eventfd,
 *     logs, runs the cooldown and calls the ops.
 *
 * Nothing the watchdog thread touches is behind a lock the main loop (or a
 * canary) can hold, and it allocates nothing: the main loop may be stopped
 * anywhere, glibc's malloc and stdio locks included. Counters are C11
 * atomics written by one thread each. The published threads are an
 * immutable snapshot behind one pointer: the watchdog announces the one it
 * reads in `hazard`, and the main loop frees a replaced snapshot only once
 * it is not announced. Grants too recent to be in a snapshot come through
 * `ring`, whose slots carry a sequence number (a seqlock per slot). Each trip
 * record is the watchdog's while its `trip_state` is TRIP_FREE and the main
 * loop's while it is TRIP_READY. */
#ifndef RTSCHED_SAFETY_INT_H
#define RTSCHED_SAFETY_INT_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <systemd/sd-event.h>

#include "daemon/sys/clock.h"
#include "daemon/watchdog/safety.h"

struct tasks;

#define NSEC 1000000000ull
#define MSEC 1000000ull

enum { WANT_PARK, WANT_RUN, WANT_EXIT };
enum { TRIP_FREE, TRIP_READY };
#define TRIP_SLOTS 4              /* trip records the main loop may not have taken yet: a starved
				   * loop must not make later trips' demotions unknown to the
				   * registry, nor their users unheld */

#define TRACK_MAX 4096            /* real-time threads one starvation episode tracks */
#define TRACK_SLOTS 8192          /* their hash table: a power of two, twice TRACK_MAX */
#define RING_SIZE 1024            /* recent grants the watchdog sees before they are published */
#define DENTS_PROC 32768          /* getdents64 buffers: /proc, then a process's task/ */
#define DENTS_TASK 8192
#define TRACK_CPUS 4              /* CPUs a tracked thread's run time is kept apart for */

/* A published thread: its CPU set is an index into the snapshot's sets,
 * which holds each distinct set once (10,000 threads share a handful). */
struct safety_entry {
	pid_t tid, pid;
	uint64_t starttime;
};

/* What the main loop published, immutable once published; sorted by tid. */
struct snapshot {
	size_t n;
	struct safety_entry *threads;
	struct snapshot *retired_next;   /* the main loop's list of ones to free */
};

/* One recent grant; seq is odd while the main loop writes the slot. */
struct ring_slot {
	_Atomic uint64_t seq;
	_Atomic pid_t tid;
	_Atomic uint64_t starttime;
};

/* A real-time thread seen during a starvation episode (scan.c). */
struct track {
	pid_t tid, pid;                  /* 0: a free slot */
	uint64_t starttime;
	uid_t uid;                       /* effective, from its /proc directory */
	uint64_t run0;                   /* its run time when first seen (0: born in the episode) */
	uint64_t run;                    /* and when last seen */
	struct {
		int cpu;
		uint64_t ns;                 /* 0: a free entry */
	} on[TRACK_CPUS];                /* what it ran in the episode, by the CPU each look saw it on */
	uint64_t on_more;                /* and on CPUs past those (counted wherever it may run) */
	uint64_t seen0, seen;            /* CLOCK_MONOTONIC ns of its first and last look in the episode */
	int processor;                   /* where it last ran */
	int policy, priority;
	char state;                      /* as stat showed it: 'R' runs or waits to */
	bool alive;                      /* seen in the last scan */
	char comm[PROC_COMM_MAX + 1];
	char pcomm[PROC_COMM_MAX + 1];   /* its process's, "" if not read yet (/proc) */
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
	_Atomic uint64_t late;      /* ticks it woke more than SAFETY_FLOOR_MS late (in `stall`) */
	_Atomic uint64_t ontime;    /* CLOCK_MONOTONIC ns of its last tick that was not */
	_Atomic unsigned epoch;     /* bumped at each start: the watchdog restarts its window */
	uint64_t rng;               /* the canary thread's own: its ticks' spread (canary.c) */
	/* the watchdog thread's own */
	struct safety_window win;
	unsigned seen_epoch;
};

/* The watchdog thread's working memory, allocated with the object. */
struct scan {
	int proc;                        /* /proc, open for the thread's life */
	const struct tasks *tasks;       /* the task iterators (observe/bpf/tasks.h), or NULL: /proc */
	unsigned long iter_failed;       /* looks that fell back to /proc */
	uint64_t tick_ns;                /* ns per clock tick, /proc's unit of start times */
	_Alignas(8) char dents[DENTS_PROC];  /* getdents64 packs 8-aligned records */
	_Alignas(8) char tdents[DENTS_TASK];
	struct track t[TRACK_MAX];
	size_t n;                        /* slots of t in use */
	int32_t slot[TRACK_SLOTS];       /* hash of tids: index into t, -1 empty */
	bool on;                         /* an episode: some canary was late, or a duty window */
	bool duty;                       /* the episode is a duty window (duty.c), no canary late */
	uint64_t duty_end;               /* CLOCK_MONOTONIC ns its window ends */
	uint64_t duty_ran[CPU_SETSIZE];  /* duty.c's scratch: what managed threads ran per CPU */
	uint64_t since_boot_ticks;       /* its start, in the clock ticks of /proc's starttime */
	uint64_t since_mono;             /* and in CLOCK_MONOTONIC ns */
	uint64_t next_scan;              /* CLOCK_MONOTONIC ns of the next scan in it */
	uint64_t look_mono;              /* CLOCK_MONOTONIC ns of the look under way */
	unsigned long untracked;         /* threads past TRACK_MAX (not measured) */
	uint64_t test_stall_ns;          /* RTSCHEDD_TEST_WATCHDOG_STALL_MS (testhook.h): each look
					  * waits this long first, as one held in the kernel would */
	/* trip.c's scratch: per starved CPU, runners and their run time */
	size_t cand[TRACK_MAX];
	uint64_t ran[TRACK_MAX], uran[TRACK_MAX];
	uint64_t ukey[TRACK_MAX], uspan[TRACK_MAX];
	bool pick[TRACK_MAX], upick[TRACK_MAX];
	struct safety_trip trip;         /* built here, copied to safety.trip when that is free */
};

struct safety {
	sd_event *event;
	struct safety_params params;     /* the main loop's copy */
	struct safety_ops ops;
	void *ud;
	cpu_set_t allowed;                 /* CPUs this process may pin a canary to */
	_Atomic uint64_t threshold_ns;
	_Atomic bool demote_all;
	_Atomic unsigned duty_pct;         /* params.duty_pct, for the watchdog thread */
	_Atomic pid_t loop_tid;            /* params.loop_tid, for the watchdog thread */
	_Atomic uint64_t since;            /* CLOCK_MONOTONIC ns: waits before it don't count */
	_Atomic unsigned param_epoch;
	_Atomic unsigned long suspends;
	long clk_tck;                      /* sysconf(_SC_CLK_TCK), read before the thread starts */

	struct worker wd;
	struct canary *_Atomic canary[CPU_SETSIZE];
	cpu_set_t running;                 /* the main loop's view */
	cpu_set_t wanted;                  /* the CPUs the published threads may use */
	uint64_t wanted_at[CPU_SETSIZE];   /* CLOCK_MONOTONIC ns a CPU was last wanted (0: never) */
	int canary_error;                  /* the last canary that could not start */

	struct snapshot *_Atomic snap;     /* the published threads */
	struct snapshot *_Atomic hazard;   /* the one the watchdog reads now */
	struct snapshot *retired;          /* replaced, to free once not announced */
	struct ring_slot ring[RING_SIZE];
	_Atomic uint64_t ring_next;        /* grants written so far */

	struct scan *scan;                 /* the watchdog thread's */
	_Atomic int trip_state[TRIP_SLOTS]; /* TRIP_FREE / TRIP_READY, each record's */
	struct safety_trip trip[TRIP_SLOTS]; /* the records (see trip_state) */
	uint64_t trip_seq[TRIP_SLOTS];     /* the order they were made in (the watchdog's, while free) */
	uint64_t trips_made;               /* the watchdog thread's count */
	_Atomic unsigned long unlogged;    /* trips while every record was the main loop's */

	int notify;                        /* eventfd: watchdog -> main loop */
	sd_event_source *notify_src, *cooldown_src, *park_src;
	uint64_t cooldown_until;           /* CLOCK_BOOTTIME usec; 0: no cooldown */
	unsigned long trips;
	char last_culprit[SAFETY_CULPRITS_MAX];
};

/* safety.c: clocks and the module's threads */

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
/* The watchdog thread: the snapshot it may read until safety_snap_put(). */
const struct snapshot *safety_snap_get(struct safety *s);
void safety_snap_put(struct safety *s);
/* The watchdog thread: whether tid (started at starttime) is managed: in the
 * snapshot or among the recent grants. */
bool safety_is_managed(struct safety *s, const struct snapshot *snap, pid_t tid, uint64_t starttime);

/* canary.c */

/* The canary for `cpu`, created parked on first use. Returns 0 or -errno. */
int safety_canary_get(struct safety *s, int cpu, struct canary **ret);

/* watch.c */

/* The watchdog thread (SCHED_FIFO 99): checks the canaries every tick. */
void *safety_watch_main(void *arg);

/* scan.c: lock-free /proc reading for the watchdog thread */

/* Open /proc and empty the table; -errno. Called before the thread starts. */
int safety_scan_init(struct scan *sc);
/* Start an episode now (the table emptied). */
void safety_scan_begin(struct scan *sc, uint64_t mono, uint64_t boot_ticks);
/* End it. */
void safety_scan_end(struct scan *sc);
/* Read every real-time thread's run time into the table. */
void safety_scan_run(struct scan *sc);
/* Whether the tracked thread may run on cpu now (its affinity; the CPU it
 * last ran on, once it is gone). */
bool safety_track_on(const struct track *t, int cpu);
/* How long the tracked thread was there in the episode, from its first
 * look to its last, and at least `ran` (what it ran there). */
uint64_t safety_track_span(const struct track *t, uint64_t ran);
/* What the tracked thread ran in the episode. */
uint64_t safety_track_ran(const struct track *t);
/* What it ran on cpu: the time between two looks counts for the CPU the
 * second one saw it on. */
uint64_t safety_track_ran_on(const struct track *t, int cpu);
/* The name of process pid into buf ("?" if unreadable). */
void safety_read_pcomm(struct scan *sc, pid_t pid, char *buf, size_t len);
/* safety_demote_tid(), with the thread's identity read through the task
 * iterator where there is one (no /proc lookup). */
int safety_scan_demote(struct scan *sc, pid_t tid, pid_t pid, uint64_t starttime);

/* duty.c */

/* At a check without a late canary (late: whether one was): run the duty
 * windows, one after another, and at each window's end trip on the CPUs
 * whose managed real-time threads ran duty_pct of it or more. True if it
 * tripped. */
bool safety_duty_check(struct safety *s, bool late, uint64_t now_mono, uint64_t boot_ticks);

/* trip.c */

/* Starvation on `starved`: demote the culprits, in the watchdog thread, then
 * tell the main loop. duty_pct: 0 for a canary's trip, else the share of
 * the CPU the managed threads kept (a duty trip, duty.c); worst_ns is then
 * what they ran there. */
void safety_trip(struct safety *s, const cpu_set_t *starved, uint64_t worst_ns, uint64_t now_mono, unsigned duty_pct);
/* The main loop's side of a trip (the `notify` eventfd): log, start the
 * cooldown, call ops->demoted. */
int safety_on_notify(sd_event_source *src, int fd, uint32_t revents, void *userdata);
/* The cooldown is over: call ops->promote. */
int safety_on_cooldown(sd_event_source *src, uint64_t usec, void *userdata);

#endif
