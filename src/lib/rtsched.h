/* rtsched.h: librtsched, the client library of rtschedd.
 *
 * A worker thread asks rtschedd for real-time scheduling in one call:
 *
 *     int r = rtsched_register_self("audio");
 *     if (r < 0)
 *             fprintf(stderr, "rtsched: %s: %s\n", rtsched_strerror(r), rtsched_last_message());
 *
 * Every function returns 0 or a negative errno value; the library never
 * logs, never exits and is thread-safe (each call uses its own connection).
 * The socket is $RTSCHED_SOCKET or /run/rtschedd/control. See librtsched(3). */
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
/* A description of an error returned by this library. */
const char *rtsched_strerror(int err);
/* The daemon's own message for this thread's last failed call ("" if none). */
const char *rtsched_last_message(void);

#ifdef __cplusplus
}
#endif

#endif
