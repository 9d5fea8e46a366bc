/* refusal.h: why the core turns a request down. The grant path (grant,
 * registry, the register ops, the state journal's re-admission) and jitter's
 * attach follow dbus-broker's convention: 0 when done, one of these
 * (positive) when refused, a normal outcome with a message saying why and
 * what to do, and -errno when something failed. The core never speaks wire
 * codes: dispatch gives each refusal its protocol error in one table
 * (ops_wire_error(), ops/reply.c). */
#ifndef RTSCHED_REFUSAL_H
#define RTSCHED_REFUSAL_H

enum refusal {
	REFUSE_UNKNOWN_ROLE = 1,    /* the role asked for is no [rule] of the configuration */
	REFUSE_BAD_PRIORITY,        /* the priority is not valid for the policy */
	REFUSE_ABOVE_MAX,           /* the priority is above [daemon] max-priority */
	REFUSE_POLICY,              /* the policy is not in the user's policies */
	REFUSE_NICE,                /* the nice is below the user's min-nice (or rtkit's floor) */
	REFUSE_PRIORITY,            /* the priority is above the user's max-priority */
	REFUSE_CPUS,                /* CPUs outside the user's cpus */
	REFUSE_RTPRIO_CAP,          /* the priority is above the rtprio-cap ceiling */
	REFUSE_QUOTA,               /* the user would hold more than max-threads */
	REFUSE_NO_SUCH_THREAD,
	REFUSE_STALE_THREAD,        /* the tid names another thread now (start time changed) */
	REFUSE_NOT_A_PROCESS,       /* pid= names a thread that is not its process's main thread */
	REFUSE_NOT_OWN_THREAD,      /* not the caller's (or the recorded owner's) thread */
	REFUSE_WATCHDOG_COOLDOWN,   /* real-time held back after the watchdog demoted a runaway */
	REFUSE_DEADLINE,            /* a SCHED_DEADLINE thread: its reservation is not ours to replace */
	REFUSE_RTTIME_ZERO,         /* RLIMIT_RTTIME 0: the kernel would SIGKILL it at once */
	REFUSE_APPLY_FAILED,        /* the kernel refused the change (the diagnosis says why) */
	REFUSE_BAD_HISTOGRAM,       /* jitter-attach: not a sealed memfd the size of a struct hist */
	REFUSE_HISTOGRAM_LAYOUT,    /* jitter-attach: a histogram of another layout (another librtsched) */
	REFUSE_RATE_LIMITED,        /* past the rate limit of the caller's (or a [rule] thread owner's) account */
	REFUSE_RTTIME_OVER_MAX,     /* rtkit's contract: a hard RLIMIT_RTTIME above rttime-usec-max */
	REFUSE__MAX
};

#endif
