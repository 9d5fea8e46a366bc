/* sched-record.h: the kernel write, recorded instead of made. Tests that
 * link sched-record.c with -Wl,--wrap=task_sched_write (Makefile.am) get
 * every task_sched_write() the daemon code makes recorded here, and none
 * reaches sched_setattr or sched_setaffinity: real threads of the test
 * process can be registered without their scheduling ever changing.
 * task_sched_read() is not wrapped, so reads stay real. A test may let
 * the writes through (sched_record_passthrough()). */
#ifndef RTSCHED_SCHED_RECORD_H
#define RTSCHED_SCHED_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "daemon/core/task.h"

#define SCHED_RECORD_MAX 256

struct sched_write {
	pid_t tid;
	struct task_sched s;
	bool set_cpus;
};

/* Forget what was recorded; writes succeed again. */
void sched_record_reset(void);
/* How many writes, and the i-th (in order). */
size_t sched_record_n(void);
const struct sched_write *sched_record_get(size_t i);
/* How many writes went to tid. */
size_t sched_record_count(pid_t tid);
/* The k-th write to tid (from 0), or NULL. */
const struct sched_write *sched_record_nth(pid_t tid, size_t k);
/* The last write to tid, or NULL. */
const struct sched_write *sched_record_last(pid_t tid);
/* From now on writes fail with err (-errno) at the call `what`; 0: succeed. */
void sched_record_fail(int err, const char *what);
/* From now on call fn(tid, ud) at each write, before it is recorded (NULL:
 * none); a test does there what may happen between the daemon's checks and
 * its write. */
void sched_record_on_write(void (*fn)(pid_t tid, void *ud), void *ud);
/* The same, after the write has returned: what may happen between the
 * write and the daemon's check after it. */
void sched_record_after_write(void (*fn)(pid_t tid, void *ud), void *ud);
/* From now on writes also reach the kernel (task_sched_write itself), and
 * return what it returned: for a test of what the kernel ends up holding. */
void sched_record_passthrough(bool on);
/* Fail the test unless the wrap is linked in (call it in every setup). */
void sched_record_check_wrapped(void);

#endif
