/* unit-util.h: what the core unit tests (grant, registry, state, dispatch)
 * share: a private temporary directory, configurations made from text
 * through the config API, and real threads of the test process to point at,
 * running as the test's uid or, for a root test, as another. */
#ifndef RTSCHED_UNIT_UTIL_H
#define RTSCHED_UNIT_UTIL_H

#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <check.h>

#include "daemon/config/config.h"

/* mkdtemp under /tmp, mode 0700; the name goes to dir (PATH_MAX). */
void unit_tmpdir(char *dir, const char *tag);
/* rm -rf dir. */
void unit_rmdir(const char *dir);
/* Write text to dir/name (mode 0600), asserting it worked. */
void unit_write(const char *dir, const char *name, const char *text);
/* Write text as dir/rtschedd.conf, load and validate it: the config or a
 * failed assertion that quotes the errors. */
struct config *unit_config(const char *dir, const char *text);

/* A thread of this process that waits until it is stopped. */
struct worker {
	pthread_t th;
	pid_t tid;
	int fd[2];
	sem_t up;
	bool as;        /* worker_start_as(): switch to uid first */
	uid_t uid;
	int err;        /* errno of that switch */
};
void worker_start(struct worker *w);
/* A worker whose own credentials are uid (real, effective and saved), as
 * /proc/TID/status shows them: a root test process switches that one thread
 * (a raw setresuid changes only the calling thread; glibc's changes them
 * all); any other must pass its own uid. */
void worker_start_as(struct worker *w, uid_t uid);
/* Join it and wait until the kernel has released its tid (/proc no longer
 * shows it), so whatever looks it up next sees a thread that is gone. */
void worker_stop(struct worker *w);
/* The start time of a live thread (/proc/TID/stat field 22). */
uint64_t unit_starttime(pid_t tid);

/* What the daemon's code logs (to stderr) from unit_log_capture() on, as
 * unit_log_captured() returns it, giving stderr back (a static buffer, the
 * first 16 KiB). */
void unit_log_capture(void);
const char *unit_log_captured(void);
/* How many times `what` occurs in text. */
int unit_count(const char *text, const char *what);

/* Cases that need what this run lacks (root, CAP_SYS_NICE) are not added to
 * the suite; unit_skip() says which and why, on stderr. */
void unit_skip(const char *what);
/* Whether a thread of this process may make itself SCHED_FIFO 10 (what a
 * real-time case needs: CAP_SYS_NICE or RLIMIT_RTPRIO), tried in a thread. */
bool unit_can_realtime(void);
/* Run the suite s (freed here) and give main()'s exit status: 1 if a test
 * failed, else 77 (automake's SKIP) if unit_skip() left cases out, else 0:
 * a run that could not test everything never reads as a pass. */
int unit_run(Suite *s);

#endif
