/* kfeat.h: the kernel features rtschedd's kernel-dependent paths use,
 * probed on the running kernel by trying each one (not by its version):
 * what each is for, the Linux version that brought it and what rtschedd
 * does without it. `rtschedd --check` names them (diag_kernel.c). */
#ifndef RTSCHED_KFEAT_H
#define RTSCHED_KFEAT_H

enum kfeat_id {
	KFEAT_PIDFD_OPEN,      /* pidfd_open(2), Linux 5.3 */
	KFEAT_SO_PEERPIDFD,    /* SO_PEERPIDFD, Linux 6.5 */
	KFEAT_PIDFD_THREAD,    /* pidfd_open(tid, PIDFD_THREAD), Linux 6.9 */
	KFEAT_PROC_CONNECTOR,  /* the process events connector (CONFIG_PROC_EVENTS) */
	KFEAT_N
};

struct kfeat {
	const char *name;      /* "SO_PEERPIDFD" */
	const char *since;     /* "Linux 6.5" */
	const char *use;       /* what rtschedd uses it for */
	const char *fallback;  /* what it does where the kernel lacks it */
	int present;           /* 1 yes, 0 no, -errno if the probe itself failed */
};

/* Probe the running kernel for every feature into f[0..KFEAT_N-1]. */
void kfeat_probe(struct kfeat f[KFEAT_N]);
/* Whether this process may set a real-time policy, asked of the kernel: a
 * thread of its own tries sched_setattr(SCHED_FIFO 1), the very call the
 * daemon applies with, and ends. Whatever would refuse it (a seccomp filter
 * such as systemd's RestrictRealtime=, the real-time budget of its cpu
 * cgroup, a missing capability or RLIMIT_RTPRIO) answers, rather than a
 * guess from a unit's properties. 1 allowed, 0 refused (EPERM), -errno if
 * it could not be tried. */
int kfeat_rt_allowed(void);

#endif
