/* rlimit.h: a rule's grant of RLIMIT_RTPRIO (and RLIMIT_RTTIME) to the
 * process it matched (grant-rlimit = yes, grant-rttime-us in [rule NAME],
 * rtschedd.conf(5)), so that a program that sets its own real-time
 * scheduling passes the kernel's check; and its diagnosis.
 *
 * The limit is raised when the rule first matches the process's main thread
 * (at exec, or at the first scan), to what the one grant decision gave the
 * rule's request, and never lowered. It is a race with the program's own
 * early call; `rtschedctl run` is the race-free way. Raising another
 * process's limits takes CAP_SYS_RESOURCE: without it nothing is tried.
 *
 * Finding codes (stable; rtschedd(8)):
 *   rlimit-grant         ok     a rule has grant-rlimit = yes and the checking
 *                               process holds CAP_SYS_RESOURCE
 *   rlimit-grant-no-cap  error  it has not: the rules' limits are not raised */
#ifndef RTSCHED_RLIMIT_H
#define RTSCHED_RLIMIT_H

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "daemon/config/config.h"
#include "shared/report.h"

/* What rlimit_grant() found and set; RLIM_INFINITY for "unlimited". */
struct rlimit_change {
	rlim_t rtprio_soft, rtprio_hard;        /* before */
	rlim_t rtprio_soft_new, rtprio_hard_new; /* after (the same when nothing was raised) */
	rlim_t rttime_soft, rttime_hard;        /* before, in microseconds */
	rlim_t rttime_soft_new, rttime_hard_new;
	bool raised;                            /* something was raised */
};

/* Does this process hold CAP_SYS_RESOURCE in its effective set? */
bool rlimit_capable(void);

/* Raise the soft and hard RLIMIT_RTPRIO of process pid, a process of owner
 * (its effective uid), to at least prio, and with rttime_us >= 0 its
 * RLIMIT_RTTIME to at least rttime_us; never lower either. The process is
 * pinned (/proc/PID) around the change: -ESRCH if it is gone or no longer
 * owner's (a setuid exec), before or after (then the change is undone
 * where the pin still names it); -EACCES, and nothing raised (or it is
 * undone), if its real uid is not owner (a set-user-ID program). 0
 * (ch->raised says whether anything changed), or prlimit(2)'s -errno
 * (-EPERM without CAP_SYS_RESOURCE). */
int rlimit_grant(pid_t pid, uid_t owner, int prio, int rttime_us, struct rlimit_change *ch);

/* "RLIMIT_RTPRIO 0:0 -> 10:10, RLIMIT_RTTIME ..." of what ch raised, into buf. */
void rlimit_change_text(const struct rlimit_change *ch, char *buf, size_t len);

/* The findings of the rules' rlimit grants for rtschedd --check (daemon
 * false: this process) and rtschedctl check (daemon true: the running
 * rtschedd): none without a grant-rlimit rule. capable: rlimit_capable()
 * of the process meant. -ENOMEM. */
int rlimit_check_add(struct diag_report *rep, const struct config *c, bool capable, bool daemon);

/* Log, at start and reload, that grant-rlimit rules exist but this process
 * cannot raise limits, with the fix. */
void rlimit_warn_incapable(const struct config *c);

#endif
