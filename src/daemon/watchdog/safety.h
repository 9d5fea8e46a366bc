/* safety.h: the starvation watchdog (rtkit's canary, done better).
 *
 * While managed real-time threads exist, a SCHED_OTHER canary thread runs on
 * each CPU they may use and a SCHED_FIFO 99 watchdog thread watches how long
 * each canary was kept waiting past its ticks (spread at random, and every
 * SAFETY_ALERT_TICK_MS for a window after a wait that counted: canary.c).
 * When a CPU's canary was kept
 * waiting for threshold_ms in total within the last SAFETY_WINDOW_FACTOR x
 * threshold_ms (only waits over SAFETY_FLOOR_MS count), the watchdog thread
 * itself sets the culprits to SCHED_OTHER, then tells the main loop, which
 * logs who they were, holds back real-time grants for their user (or their
 * rule and user, or root's process) for cooldown_s and afterwards asks the
 * daemon to promote the demoted threads again.
 *
 * Who the culprits are is measured, not inferred from what the main loop
 * published: from the first late canary on, the watchdog reads the run time
 * of every real-time thread on the machine from /proc each tick, published
 * or not (a thread that registered, spun and exited between two
 * publications included), and keeps what exited threads ran. At a trip it
 * ranks, per starved CPU, the users (root: the processes) by what their
 * real-time threads ran there and blames the biggest until the rest ran
 * less than half of it all; within each, it demotes its live threads the
 * same way. So a runaway beside an innocent thread that used a quarter of
 * the CPU takes the blame alone, a runaway's serial short-lived threads add
 * up to its user, and one that rtschedd does not manage is named and left
 * alone. With demote_all (`watchdog-demote = all`) it demotes every managed
 * real-time thread that may run on a starved CPU where one was running, and
 * the daemon holds back every real-time grant, as rtkit does.
 *
 * The watchdog thread must never wait for the main loop, which is
 * SCHED_OTHER and may be starved (or stopped) by the very thread to demote,
 * inside any lock it holds (glibc's malloc and stdio locks included): it
 * allocates nothing, prints nothing and takes no lock. What it needs it
 * reads from preallocated memory (the published threads through a hazard
 * pointer, recent grants through a ring), makes system calls only, and
 * writes each trip into a preallocated record the main loop takes when it
 * can (an eventfd says so) and logs.
 *
 * Why a total over a window and not rtkit's "no tick for 10 s": with the
 * kernel's RT throttling on (sched_rt_runtime_us 950000) a FIFO spinner lets
 * a canary run now and then, so it never misses 10 s in a row, yet keeps it
 * waiting well over half of the time. Suspend (CLOCK_BOOTTIME runs ahead of
 * CLOCK_MONOTONIC) and the whole daemon being stopped (the watchdog's own
 * wake-up is late) restart the window instead of counting as starvation.
 *
 * A CPU's canary keeps running for a window after the last published thread
 * that may use it is gone (real-time threads that come and go must not
 * restart its window); with nothing published for longer, every thread of
 * this module sleeps without a timeout: no wake-ups when idle. */
#ifndef RTSCHED_SAFETY_H
#define RTSCHED_SAFETY_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "daemon/sys/proc.h"

#define SAFETY_THRESHOLD_MS_DEFAULT 2000u
#define SAFETY_THRESHOLD_MS_MIN 200u
#define SAFETY_THRESHOLD_MS_MAX 60000u
#define SAFETY_COOLDOWN_S_DEFAULT 60u
#define SAFETY_COOLDOWN_S_MAX 86400u
#define SAFETY_WINDOW_FACTOR 4u      /* the window is this many thresholds */
#define SAFETY_TICKS_PER_THRESHOLD 8u /* canary tick and watchdog check: threshold / 8 */
#define SAFETY_FLOOR_MS 50u          /* shorter waits are ordinary scheduling latency */
#define SAFETY_ALERT_TICK_MS 10u     /* a canary's tick for a window after a wait that counted */
#define SAFETY_SUSPEND_MARGIN_MS 100u /* BOOTTIME ahead of MONOTONIC by more: a suspend */
#define SAFETY_SCAN_SHARE_PCT 5u     /* an episode's scans take at most this share of one CPU */
#define SAFETY_WATCHDOG_PRIORITY 99   /* above every managed thread: max-priority must be <= 98 */

struct safety_params {
	bool enabled;
	unsigned threshold_ms;  /* SAFETY_THRESHOLD_MS_MIN..MAX */
	unsigned cooldown_s;    /* 1..SAFETY_COOLDOWN_S_MAX */
	bool demote_all;        /* every managed real-time thread on a guilty CPU, not the culprits */
	unsigned duty_pct;      /* a CPU its managed real-time threads kept this share of over a window
				 * trips too, whatever its canary waited (duty.c); 0: off */
	pid_t loop_tid;         /* the daemon's own event loop while a budget bounds its real-time
				 * run time (sys/rtloop.h), 0 if none: never blamed */
	const struct tasks *tasks; /* BPF task iterators (observe/bpf/tasks.h) to read the tasks
				    * through, or NULL: /proc. Taken at safety_new() only; it
				    * must outlive the object. */
};

#define SAFETY_DUTY_PCT_DEFAULT 90u
#define SAFETY_PARAMS_DEFAULT \
	{ true, SAFETY_THRESHOLD_MS_DEFAULT, SAFETY_COOLDOWN_S_DEFAULT, false, SAFETY_DUTY_PCT_DEFAULT, 0, NULL }

/* A managed real-time thread, as the main loop publishes it. */
struct safety_thread {
	pid_t tid, pid;
	uint64_t starttime;   /* field 22 of /proc/TID/stat: pins the tid */
};

#define SAFETY_CULPRITS_MAX 1024
#define SAFETY_TRIP_MAX 256          /* threads one trip names */
#define SAFETY_TRIP_CPUS 16          /* starved CPUs one trip sums up */

/* What the real-time threads that may run on a starved CPU ran there. */
struct safety_cpu_sum {
	int cpu;
	uint64_t total_ns;
};

/* A thread a trip blamed: demoted, or named (one rtschedd does not manage). */
struct safety_culprit {
	pid_t tid, pid;
	uint64_t starttime;
	uid_t uid;                      /* its effective uid (/proc) */
	int cpu;                        /* the starved CPU it was blamed for */
	int policy, priority;           /* what it had */
	uint64_t ran_ns;                /* what it ran of the trip's span_ns */
	bool managed;                   /* rtschedd granted it real-time */
	bool demoted;                   /* set to SCHED_OTHER by the watchdog thread */
	bool waiting;                   /* runnable there behind the blamed ones, its
					 * user's: demoted with them */
	char comm[PROC_COMM_MAX + 1], pcomm[PROC_COMM_MAX + 1];
};

/* What the watchdog did, handed to ops->demoted in the main loop. */
struct safety_trip {
	cpu_set_t starved;              /* the CPUs whose canary starved */
	uint64_t stall_ms;              /* the worst canary's wait within the window */
	uint64_t span_ns;               /* how long run times were measured before it */
	bool demote_all;                /* the params' demote_all when it tripped */
	unsigned duty_pct;              /* 0: a canary starved; else a duty trip: the managed real-time
					 * threads kept this share of the CPUs over span_ns (stall_ms: the
					 * most they ran on one) */
	struct safety_culprit c[SAFETY_TRIP_MAX];
	size_t n;
	struct safety_cpu_sum cpu_sum[SAFETY_TRIP_CPUS];
	size_t n_cpu_sum;
	size_t n_demoted;
	size_t n_failed;                /* real-time threads it could not demote */
	unsigned long unlogged;         /* trips made while the main loop had not taken this one */
	char culprits[SAFETY_CULPRITS_MAX]; /* the main loop's text: "CPU 0: tid 12 (spin) of pid 10
					     * (app), fifo/50, ran 3.8 s of the last 4.1 s; ..." */
	uint64_t cooldown_until_usec;   /* CLOCK_BOOTTIME */
};

/* Called in the main loop, never from the module's threads. */
struct safety_ops {
	/* The watchdog tripped and already set the culprits marked demoted to
	 * SCHED_OTHER: record them, hold back their users, and (demote_all)
	 * demote any managed real-time thread on trip->starved it does not list. */
	void (*demoted)(void *ud, const struct safety_trip *trip);
	/* The cooldown is over: give demoted threads their real-time policy back. */
	void (*promote)(void *ud);
};

struct safety_status {
	bool enabled;
	bool watching;                  /* canaries running */
	int n_cpus;                     /* CPUs with a running canary */
	unsigned threshold_ms, window_ms, cooldown_s;
	bool cooldown;
	uint64_t cooldown_left_s;
	unsigned long trips, suspends;  /* suspends: windows restarted for a suspend or a stop */
	uint64_t canary_late;           /* canary ticks woken more than SAFETY_FLOOR_MS late, all CPUs */
	uint64_t canary_stall_ms;       /* what those waits added up to */
	char last_culprit[SAFETY_CULPRITS_MAX]; /* "" if never tripped */
	bool tasks_iter;                /* it reads the tasks through BPF iterators, not /proc */
	unsigned duty_pct;              /* watchdog-duty, 0: off */
	unsigned long iter_failed;      /* looks for which an iterator failed (/proc then) */
};

struct safety;
struct tasks;

/* Create the watchdog (its SCHED_FIFO thread starts now, asleep, so a missing
 * privilege shows at start-up: -EPERM). Threads take the caller's
 * capabilities, which are per thread: create it after dropping privileges.
 * With !p->enabled nothing starts and every other call is a no-op. Returns 0
 * or -errno; on failure *ret may still hold an object for safety_free(). */
int safety_new(struct safety **ret, sd_event *e, const struct safety_params *p, const struct safety_ops *ops,
	       void *ud);
/* Stop and join every thread (a canary still starved gets a second, then is
 * left to the process exit); NULL is fine. Demoted threads stay demoted.
 * False if a thread is left running: what it reads (p->tasks) must stay. */
bool safety_free(struct safety *s);
/* Publish the managed real-time threads (a copy is taken). Canaries run on
 * every CPU the daemon may use while there is one (a thread may move itself
 * to any CPU after its grant); with n == 0 they park once their window is
 * over. Returns 0 or -errno. */
int safety_set_threads(struct safety *s, const struct safety_thread *t, size_t n);
/* A thread is about to be made real-time (called before the kernel write):
 * the watchdog may demote it before the next safety_set_threads() publishes
 * it (a ring of the latest grants), and the canaries and the watchdog run
 * from now on, so that a thread that spins from its grant on and starves
 * the main loop before that publication is still caught. */
void safety_arm(struct safety *s, pid_t tid, pid_t pid, uint64_t starttime);
/* New threshold, cooldown, demote_all and loop_tid (on reload); the enabled flag is kept. */
void safety_set_params(struct safety *s, const struct safety_params *p);
/* True while real-time grants must be refused after a trip. */
bool safety_in_cooldown(const struct safety *s);
/* Numbers for `rtschedctl status`. */
void safety_get_status(const struct safety *s, struct safety_status *out);
/* Set a real-time thread to SCHED_OTHER (keeping reset-on-fork and nice)
 * if it is still the thread started at `starttime`. 0 if done or not
 * real-time, -ESRCH if gone or reused, else -errno. */
int safety_demote_tid(pid_t tid, uint64_t starttime);
/* The share of one CPU, in percent, that the daemon's own real-time threads
 * may take per period: its event loop's (rtloop.h: loop_budget of it at
 * loop_priority, all of a CPU without a budget, none at priority 0) and,
 * with the watchdog on, the watchdog's scans during an episode
 * (SAFETY_SCAN_SHARE_PCT); at most 100. A cgroup-v1 RT budget below it
 * throttles the FIFO 99 watchdog with them (`check`'s
 * self-rt-group-budget). */
int safety_self_share(int loop_priority, int loop_budget, bool watchdog);

/* --- the pure decisions, exposed for the unit tests -------------------------- */

/* Both clocks read together, in ns. */
struct safety_clocks {
	uint64_t mono, boot;
};

enum safety_clock_verdict {
	SAFETY_CLOCK_OK,
	SAFETY_CLOCK_SUSPENDED,   /* BOOTTIME ran ahead of MONOTONIC: the machine slept */
	SAFETY_CLOCK_LATE,        /* the watchdog itself woke far too late: the daemon was stopped */
};

/* Judge the interval between two watchdog wake-ups meant to be period_ns
 * apart; canaries_ticked: a canary ticked in it, so the daemon was not
 * stopped, only the watchdog held (a look at /proc waiting on a name a
 * starved task is looking up): it is judged, not a reason to start over. */
enum safety_clock_verdict safety_clock_check(const struct safety_clocks *prev, const struct safety_clocks *now,
					     uint64_t period_ns, bool canaries_ticked);
/* A canary's total wait, counting the tick it is overdue for now: waits are
 * measured from max(deadline, since) and count only past floor_ns. */
uint64_t safety_stall_now(uint64_t stall_total, uint64_t deadline, uint64_t since, uint64_t now,
			  uint64_t floor_ns);

/* A canary's ticks: the next after a wake-up at `now` that waited `late`
 * ns past its last one (canary.c says why they are spread at random). A
 * wait past SAFETY_FLOOR_MS makes it alert for a window (*alert_until);
 * while alert it ticks every SAFETY_ALERT_TICK_MS, otherwise at random
 * within half to one and a half `tick`. *rng is its xorshift64* state (not
 * 0). */
uint64_t safety_canary_next(uint64_t now, uint64_t late, uint64_t tick, uint64_t window,
			    uint64_t *alert_until, uint64_t *rng);

/* The watchdog's history of one canary: cumulative stall sampled each check. */
struct safety_window {
	uint64_t *samples;
	size_t size, head, filled;
};

/* Room for a window of `checks` checks. Returns 0 or -ENOMEM. */
int safety_window_init(struct safety_window *w, size_t checks);
void safety_window_done(struct safety_window *w);
/* Forget the history; the next sample is the new baseline. */
void safety_window_reset(struct safety_window *w);
/* Add a sample; returns the stall within the window (0 for the first). */
uint64_t safety_window_push(struct safety_window *w, uint64_t stall_total);

/* The thread that was running on `cpu`: real-time, state R, last on `cpu`;
 * the highest priority, then the most CPU time. Its index, or -1. */
int safety_pick_culprit(const struct proc_stat *t, size_t n, int cpu);
/* Whether `rest` of `total` is still about half or more: at least 15/32,
 * so that of two runaways sharing a CPU equally, whose measured run times
 * differ by a little, both are blamed, not the one that happened to run
 * more; an innocent thread at 40% beside a runaway is not. */
#define SAFETY_NEAR_HALF(rest, total) (32 * (uint64_t)(rest) >= 15 * (uint64_t)(total))
/* Which of n runners (users, processes or threads) of a starved CPU to
 * blame, from what each ran there (ns): the biggest, until the rest ran
 * less than (about) half of what all of them ran; none if all of them together ran
 * less than `threshold_ns` (the stall is not theirs). A runaway beside an
 * innocent thread using a quarter of the CPU is blamed alone. Sets pick[i];
 * returns how many. */
size_t safety_pick_share(const uint64_t *ran, size_t n, uint64_t threshold_ns, bool *pick);
/* The CPUs (of ran[0..n), what managed real-time threads ran on each in
 * span_ns) they kept pct percent of span_ns or more: into *busy, the most
 * one of them ran into *worst; how many. 0 with pct 0 (duty.c). */
unsigned safety_duty_busy(const uint64_t *ran, size_t n, uint64_t span_ns, unsigned pct, cpu_set_t *busy,
			  uint64_t *worst);
/* A runner that ran less than 1/SAFETY_DUTY_MIN of the time it was there:
 * an audio thread's share of a CPU, not a runaway's. */
#define SAFETY_DUTY_MIN 8
/* Of the runners safety_pick_share() picked, let off those that ran less
 * than 1/SAFETY_DUTY_MIN of `span` (ns each was there in the episode), the
 * lowest share first, while the others picked still ran at least
 * `threshold_ns` without them: beside a runaway, another user's audio
 * thread that had run a little longer in all (a third user's runaway had
 * only just begun) is not blamed, but someone always is. Clears pick[i];
 * returns how many remain picked. */
size_t safety_pick_duty(const uint64_t *ran, const uint64_t *span, size_t n, uint64_t threshold_ns, bool *pick);

#endif
