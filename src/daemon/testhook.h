/* testhook.h: three hooks for the security tests (tests/security2.sh,
 * tests/watchdog-attacks.sh), inert unless the environment rtschedd was
 * started with names them: only whoever starts the daemon can arm them.
 *
 *   RTSCHEDD_TEST_PAUSE=POINT:FIFO   at the named point of the grant path
 *       ("after-check": the target's ownership was checked, nothing applied
 *       yet; "after-decide": the grant was decided, with the quota's count
 *       of a process's threads, nothing applied yet) the event loop reads
 *       one line from FIFO before it goes on, so a test can change the world
 *       in that window (a thread exits, its tid is reused; a process makes
 *       more threads).
 *   RTSCHEDD_TEST_HOLD_LOCKS=FIFO    on SIGUSR2 the main thread takes glibc's
 *       stdio lock of stderr and, inside malloc_stats(), the main arena's
 *       malloc lock, and blocks in a write to FIFO (a pipe kept full) until
 *       the test reads it (under AddressSanitizer, which has no glibc
 *       arena, only the stdio lock): the main loop stuck inside the locks a starved
 *       SCHED_OTHER thread may hold, for the watchdog test.
 *   RTSCHEDD_TEST_WATCHDOG_STALL_MS=N  each look of the watchdog thread at
 *       /proc (watchdog/scan.c, read at its start) first sleeps N ms, as one
 *       whose path lookup waits on a lookup of the same name by a task the
 *       runaway starves would. */
#ifndef RTSCHED_TESTHOOK_H
#define RTSCHED_TESTHOOK_H

#include <stdbool.h>

/* Block at `point` if RTSCHEDD_TEST_PAUSE names it (see above). */
void testhook_pause(const char *point);
/* Whether RTSCHEDD_TEST_HOLD_LOCKS is set (the daemon then watches SIGUSR2). */
bool testhook_hold_armed(void);
/* Take the locks and block as RTSCHEDD_TEST_HOLD_LOCKS says (see above). */
void testhook_hold_locks(void);

#endif
