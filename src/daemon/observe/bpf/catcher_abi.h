/* catcher_abi.h: what catcher.bpf.c and catcher.c share: one record per
 * sched_setscheduler, sched_setparam or sched_setattr that the kernel
 * refused with EPERM, through a BPF ring buffer. Includes nothing. */
#ifndef CATCHER_ABI_H
#define CATCHER_ABI_H

#define CATCHER_SETSCHEDULER 1
#define CATCHER_SETPARAM 2
#define CATCHER_SETATTR 3

#define CATCHER_FOREIGN_TARGET (-1)
#define CATCHER_KEEP_POLICY (-1) /* sched_setparam: the policy the thread has */

struct catcher_event {
	__u64 at_ns;     /* CLOCK_BOOTTIME of the refusal (as /proc stat start times) */
	__s32 tgid;      /* the calling process */
	__s32 tid;       /* the calling thread */
	__u32 uid, gid;  /* the caller's real uid and gid */
	__s32 target;    /* the pid argument (0: the caller itself), in the initial pid
			  * namespace: a caller in a child namespace naming itself by
			  * its number there is 0; naming another task there is
			  * CATCHER_FOREIGN_TARGET (not translated: not acted on) */
	__u32 call;      /* CATCHER_SET* */
	__s32 policy;    /* SCHED_* (without SCHED_RESET_ON_FORK), or CATCHER_KEEP_POLICY */
	__s32 priority;  /* sched_priority */
	__s32 nice;      /* sched_setattr's sched_nice, else 0 */
	__u32 read_ok;   /* 1: the parameters were read from user memory */
};

#endif
