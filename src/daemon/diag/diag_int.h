/* diag_int.h: what diag.c, diag_proc.c and diag_kernel.c share and no
 * other module uses: the state of one diagnosis and the file helpers. */
#ifndef RTSCHED_DIAG_INT_H
#define RTSCHED_DIAG_INT_H

#include <limits.h>
#include <stdbool.h>

#include "daemon/sys/kfeat.h"
#include "daemon/sys/proc.h"
#include "daemon/diag/diag.h"

/* What was read about one process: the target or the checking process. */
struct diag_proc {
	bool loaded;
	pid_t pid;                      /* from its status; the self of a fake tree has one too */
	pid_t id;                       /* what names its directory: the pid asked for, 0 for self */
	char dir[PATH_MAX];             /* <proc>/<pid> or <proc>/self */
	struct proc_status st;
	bool have_limits;
	struct proc_rlimits lim;
	int cap_sys_nice;               /* 1, 0, or -errno when unknown */
	bool have_cgroup;
	struct proc_cgroup cg;
	char unit[256];                 /* "" if none */
	bool user_unit;                 /* runs under a user manager: systemctl --user */
	int restrict_rt;                /* 1 RestrictRealtime=yes, 0 no, -errno unit not found */
	bool transient;                 /* the unit was made by systemd-run (known from systemd) */
	char restrict_src[PATH_MAX + 16];
	int rt_allowed;                 /* self on the live system: kfeat_rt_allowed(); else -ENOSYS */
};

struct diag_ctx {
	struct diag_env env;            /* every path filled in */
	char cgroup_buf[PATH_MAX], cmdline_buf[PATH_MAX];
	bool real;                      /* the live /proc: capabilities come from the kernel */
	struct diag_report *r;
	const struct diag_target *t;
	int err;                        /* first failure to grow the report */
	struct diag_proc self, target;  /* target.loaded only with a pid */
	bool target_is_self;
	bool rt_requested;
	int need;                       /* the RLIMIT_RTPRIO a request needs: its priority, or 1 */
	int fix_prio;                   /* the priority fix lines use */
	long grant;                     /* what a PAM session of the user reaches; -1 unknown */
	char grant_src[DIAG_SRC_MAX];
	bool grant_blocked;             /* no process here can raise RLIMIT_RTPRIO's hard limit */
	bool rt_unthrottled;            /* kernel.sched_rt_runtime_us is -1 */
};

/* Fill the defaults of env into c and start the report; -ENOMEM. */
int diag_ctx_init(struct diag_ctx *c, const struct diag_env *env, const struct diag_target *t,
		  struct diag_report *r);
/* Read the file named by fmt whole into buf (NUL-terminated).  -errno,
 * -EFBIG if it does not fit. */
int diag_read(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Read one integer from the file named by fmt. */
int diag_read_ll(long long *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Format into a path buffer; -ENAMETOOLONG instead of a silent cut. */
int diag_path(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Add a finding with a formatted message; fix may be NULL. */
void diag_add(struct diag_ctx *c, const char *code, enum diag_severity sev, const char *fix,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Note that a check could not be made: a check-failed info finding. */
void diag_failed(struct diag_ctx *c, const char *what, int err);
/* Format into a fix or message buffer; a cut is marked with "...". */
void diag_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Append to a fix or message being built; keeps it NUL-terminated and
 * marks a cut with "...". */
void diag_cat(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The kernel's features diag_self_keep() probed, NULL if none are kept. */
const struct kfeat *diag_kept_features(void);
/* Fill p's RestrictRealtime= fields from the checking process kept when
 * p is this process in the same unit (a running process's unit property
 * does not change until it starts again): true, or false to look it up. */
bool diag_kept_unit(struct diag_proc *p);
/* Whether a unit lookup may wait for the daemon's bus connection to become
 * ready (diag_self_keep() at start-up), instead of reading files. */
void diag_bus_may_wait(bool wait);

/* diag_proc.c: load what /proc says about a process (pid 0: self).
 * -ESRCH if it does not exist. */
int diag_proc_load(struct diag_ctx *c, struct diag_proc *p, pid_t pid);
/* The checking process: CAP_SYS_NICE, its own seccomp filter. */
void diag_check_self(struct diag_ctx *c);
/* What limits.conf grants user; sets c->grant. */
void diag_check_limits(struct diag_ctx *c, const char *user);
/* The target process: RLIMIT_RTPRIO, RLIMIT_RTTIME, its unit, seccomp,
 * RT group budget, cpuset, timer slack. */
void diag_check_target(struct diag_ctx *c);
/* The RT budget of a process's cgroup-v1 cpu group. */
struct diag_budget {
	char group[1024];               /* its path in the hierarchy */
	char file[PATH_MAX];            /* its cpu.rt_runtime_us */
	long long runtime, period;      /* microseconds */
	char fix[DIAG_TEXT_MAX];        /* with a zero budget: the writes that give it one */
};
/* Read p's group budget into *b.  1 when it is zero (b->fix filled), 0
 * when it is not, -ENOENT when p is in no cgroup-v1 cpu group, -errno. */
int diag_rt_budget(struct diag_ctx *c, const struct diag_proc *p, struct diag_budget *b);
/* The effective cpuset of p, and the file it came from.  -ENOENT if none. */
int diag_cpuset(struct diag_ctx *c, const struct diag_proc *p, cpu_set_t *set, char *src, size_t len);
/* The writable knob beside a cpuset's read-only effective list (src from
 * diag_cpuset): cpuset.cpus in the same directory. */
void diag_cpuset_knob(const char *src, char *knob, size_t len);
/* The fix line for "give it the capability" for process p. */
void diag_fix_cap(const struct diag_proc *p, char *fix, size_t len);
/* The fix for RestrictRealtime=yes on p's unit (edit it, or for a transient
 * unit start it again without the property). */
void diag_fix_restrict(const struct diag_proc *p, char *fix, size_t len);

/* diag_unit.c: RestrictRealtime= of a unit: from systemd over the system
 * bus when it answers for a loaded service (the only source for a transient
 * unit: systemd-run -p RestrictRealtime=yes), else from its files.  1 or 0,
 * with where it was found in src ("" if nowhere), *transient set for a
 * transient unit; -ENOENT when neither knows the unit. */
int diag_unit_restrict_rt(struct diag_ctx *c, const char *unit, bool user_unit, bool *transient, char *src,
			  size_t len);

/* diag_kernel.c: system-wide checks: RT throttling, the preemption model. */
void diag_check_kernel(struct diag_ctx *c);
/* CPUs: requested ones offline or outside the cpuset; isolcpus and
 * nohz_full state of the CPUs in use. */
void diag_check_cpus(struct diag_ctx *c);
/* The online CPUs; -errno. */
int diag_online_cpus(struct diag_ctx *c, cpu_set_t *set);

#endif
