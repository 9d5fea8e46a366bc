/* rttime.h: the one reading of a process's RLIMIT_RTTIME, which the grant
 * decision (core/grant.c: refuse a real-time grant the kernel would punish
 * at once, rtkit's contract of a bounded hard limit) and the diagnosis
 * (diag/diag_proc.c: the rttime findings) share. */
#ifndef RTSCHED_RTTIME_H
#define RTSCHED_RTTIME_H

#include <sys/resource.h>

#include "daemon/sys/proc.h"

enum rttime_verdict {
	RTTIME_UNREAD = 0,   /* the limits were not read */
	RTTIME_BOUNDED,      /* a finite, non-zero watchdog: what rtkit asks for */
	RTTIME_ZERO,         /* soft 0: SIGXCPU (SIGKILL at hard 0) at its first real-time tick */
	RTTIME_UNLIMITED,    /* no watchdog: a runaway is stopped only by RT throttling */
	RTTIME_OVER_MAX,     /* a hard limit above the front end's ceiling (rtkit's RTTimeUSecMax) */
};

/* The soft limit a process can raise itself to without CAP_SYS_RESOURCE
 * that rtschedd suggests: 200 ms, or the hard limit if lower; 0 if the
 * hard limit is 0 (only a restart with a higher limit helps). */
#define RTTIME_SUGGEST_USEC 200000

struct rttime_judgement {
	enum rttime_verdict verdict;
	rlim_t suggest_soft;      /* see RTTIME_SUGGEST_USEC */
	char hard[32];            /* the hard limit as text: "unlimited" or "N" (µs) */
};

/* Judge l (NULL: not read); max_hard > 0 is a ceiling on the hard limit
 * (rtkit's RTTimeUSecMax), checked first: rtkit's contract comes before
 * what the kernel would do. */
void rttime_judge(const struct proc_rlimits *l, long max_hard, struct rttime_judgement *j);

#endif
