/* rtsched.h: librtsched, the client library of rtschedd.
 *
 * A worker thread asks rtschedd for real-time scheduling in one call:
 *
 *     int r = rtsched_register_self("audio");
 *     if (r < 0)
 *             fprintf(stderr, "rtsched: %s: %s\n", rtsched_strerror(r), rtsched_last_message());
 *
 * Every function returns 0 or a negative errno value; the library never
 * logs, never exits and is thread-safe. Requests go over one connection the
 * process keeps (a thread that finds it busy uses one of its own); a fork()ed
 * child never uses its parent's, and a daemon restart is survived by
 * reconnecting once. The socket is $RTSCHED_SOCKET or /run/rtschedd/control.
 * See librtsched(3). */
#ifndef RTSCHED_H
#define RTSCHED_H

#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RTSCHED_UNSET (-1000)

/* What to ask for; zero-initialise with RTSCHED_REQUEST_INIT and set what you need. */
struct rtsched_request {
	pid_t tid;            /* a thread (0: the calling thread unless pid is set) */
	pid_t pid;            /* or a whole process, its threads now and later */
	const char *role;     /* a [rule NAME] of the daemon's config, or NULL for its default */
	const char *policy;   /* "fifo", "rr", "other", "batch", "idle", or NULL for the role's */
	int priority;         /* RTSCHED_UNSET for the role's */
	int nice;             /* RTSCHED_UNSET for the role's */
	const char *cpus;     /* CPU list "0-1,3", or NULL for the role's */
	const char *socket;   /* NULL: $RTSCHED_SOCKET or the default path */
};

#define RTSCHED_REQUEST_INIT { 0, 0, NULL, NULL, RTSCHED_UNSET, RTSCHED_UNSET, NULL, NULL }

/* What the kernel reports for the thread after rtschedd changed it. */
struct rtsched_grant {
	char policy[8];
	int priority;
	int nice;
	int reset_on_fork;
	char cpus[128];
	char rule[64];
	int threads;          /* for a process registration: threads managed */
};

/* Register the calling thread with a role (NULL: the daemon's default). */
int rtsched_register_self(const char *role);
/* Give the calling thread its original scheduling back. */
int rtsched_unregister_self(void);
/* Register as described by req; fills *grant (may be NULL). */
int rtsched_register(const struct rtsched_request *req, struct rtsched_grant *grant);
/* Unregister a thread (tid) or, with tid 0, a process (pid). */
int rtsched_unregister(pid_t tid, pid_t pid, const char *socket);
/* Close the connection the process keeps to rtschedd (the next request
 * opens a new one). Call it before dropping privileges, or before closing
 * descriptors the library does not know about. Always 0. */
int rtsched_disconnect(void);
/* A description of an error returned by this library. */
const char *rtsched_strerror(int err);
/* The daemon's own message for this thread's last failed call ("" if none). */
const char *rtsched_last_message(void);
/* For a last call that failed with -EIO (the kernel refused the change): the
 * cause the daemon diagnosed, as the finding code `rtschedctl check` uses
 * ("rtprio-zero", "restrict-realtime", "cpu-outside-cpuset", ...); "" if it
 * found none, or for any other result. */
const char *rtsched_last_diag(void);

/* --- Periodic timer: wait for absolute deadlines, measure the lateness ------
 *
 *     struct rtsched_timer *t;
 *     rtsched_timer_create(&t, 1000000, "adaptive");   // 1 ms
 *     rtsched_timer_attach(t, NULL);                   // optional: rtschedd reads it
 *     for (;;) {
 *             int missed = rtsched_timer_wait(t);      // >= 0, or -errno
 *             do_one_period(missed);
 *     }
 *
 * Deadline n is exactly start + n * period on CLOCK_MONOTONIC; the schedule
 * starts at the first rtsched_timer_wait. Each wake-up records its lateness
 * (wake-up - deadline) into a histogram; periods the thread missed entirely
 * are counted as overruns and returned by the wait, never silently skipped.
 * Strategies ("sleep" if NULL):
 *   "sleep"     clock_nanosleep(TIMER_ABSTIME) to the deadline; ~0% CPU.
 *   "hybrid"    GStreamer's: waits >= threshold (2 ms) are plain timed waits,
 *               shorter ones end with clock_nanosleep over the last guard
 *               (500 us); see rtsched_timer_set_hybrid.
 *   "busy"      spin on the clock, yielding now and then; a whole CPU.
 *   "adaptive"  clock_nanosleep to a learnt guard before the deadline, then
 *               spin to it: the guard tracks the sleep lateness that keeps
 *               misses (sleeps waking after the deadline) at 0.06%, so the
 *               p99.9 is the spin's, within a quarter of the period; stalls
 *               beyond that do not move it, and while they exceed 0.04%
 *               of the sleeps (the p99.9 out of reach), misses are held at
 *               0.8% (the p99).
 *               Near-busy lateness for several % of a CPU at 1 kHz.
 * The histogram lives in a sealed memfd; rtsched_timer_attach hands it to
 * rtschedd, which reads it without a system call by the worker.
 * A timer belongs to the thread that waits on it: create, configure, attach
 * and wait from that thread. rtsched_timer_stats may be called from any
 * thread at any time. rtsched_timer_wait allocates nothing and makes no
 * system call besides the wait itself and clock reads. */
#include <stdint.h> /* here so the section stays self-contained; C headers are fine in extern "C" */

struct rtsched_timer;

/* What a timer measured so far, from a consistent snapshot of its histogram.
 * Percentiles are within 1%; all 0 while count is 0. */
struct rtsched_timer_stats {
	uint64_t count;    /* wake-ups recorded */
	uint64_t overruns; /* periods missed entirely */
	int64_t min_ns;
	int64_t max_ns;
	double mean_ns;
	int64_t p50_ns;
	int64_t p90_ns;
	int64_t p99_ns;
	int64_t p999_ns;
};

/* A timer of period_ns (1 us .. 60 s) with a strategy ("sleep", "hybrid",
 * "busy", "adaptive"; NULL: "sleep"). -EINVAL, -ENOMEM, or -errno of
 * memfd_create/mmap. */
int rtsched_timer_create(struct rtsched_timer **t, uint64_t period_ns, const char *strategy);
/* Hybrid's guard and threshold (guard <= threshold; 500 us and 2 ms by
 * default); ignored by the other strategies. 0 or -EINVAL. */
int rtsched_timer_set_hybrid(struct rtsched_timer *t, uint64_t guard_ns, uint64_t threshold_ns);
/* Hand the histogram to rtschedd for the calling thread (socket NULL: the
 * default), so its jitter reports and metrics include this thread. */
int rtsched_timer_attach(struct rtsched_timer *t, const char *socket);
/* Wait for the next deadline. Returns the number of periods missed before
 * this wake-up (0 normally), or -errno. */
int rtsched_timer_wait(struct rtsched_timer *t);
/* Fill *out from the timer's own histogram; -EAGAIN if the waiting thread
 * kept it busy (retry), -ENOMEM. */
int rtsched_timer_stats(struct rtsched_timer *t, struct rtsched_timer_stats *out);
/* Free the timer (NULL is fine); no thread may be waiting on it. */
void rtsched_timer_free(struct rtsched_timer *t);

#ifdef __cplusplus
}
#endif

#endif
