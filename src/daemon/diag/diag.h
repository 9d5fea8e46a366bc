/* diag.h: why a thread can or cannot get real-time scheduling on this
 * machine, as a report of findings, each with a stable code, a severity and
 * the exact fix; and, for a policy change the kernel refused, the most
 * likely cause in one line.  Used by `rtschedd --check`, the control
 * protocol's check request and the apply failure path.
 *
 * Every path is taken from a struct diag_env so the unit tests run against
 * fake /proc, /sys and cgroup trees.  Functions return 0 or -errno; only
 * diag_print_*() write anything.
 *
 * Finding codes (stable: scripts and the man page use them):
 *   cap-sys-nice            ok       the checking process (rtschedd) has CAP_SYS_NICE
 *   no-cap-sys-nice         error    it has not: only same-owner threads within their RLIMIT_RTPRIO
 *   self-restrict-realtime  error    its own unit sets RestrictRealtime=yes: every apply fails
 *   self-seccomp-filter     warning  it runs under some other seccomp filter
 *   rtprio                  ok       the target's RLIMIT_RTPRIO covers the request
 *   rtprio-zero-not-pam     error/warning  RLIMIT_RTPRIO 0 although limits.conf grants more
 *   rtprio-zero             error/warning  RLIMIT_RTPRIO 0 and nothing grants more
 *   rtprio-low              error/warning  RLIMIT_RTPRIO below the requested priority
 *   rtprio-soft-low         warning  soft limit below the request, hard limit enough
 *   limits-grant            info     what limits.conf grants the user, with file:line
 *   limits-grant-none       warning/error  limits.conf grants the user no rtprio
 *   limits-grant-low        warning  it grants less than the requested priority
 *   limits-grant-blocked    warning/error  no process can raise the hard limit to the grant:
 *                                   CAP_SYS_RESOURCE is not in pid 1's bounding set
 *   limits-exempt           info     a "<domain> -" line: pam_limits sets nothing
 *   limits-unreadable       error    a limits file cannot be read: pam_limits fails sessions
 *   rttime                  ok       RLIMIT_RTTIME is a finite, non-zero watchdog
 *   rttime-zero             error    RLIMIT_RTTIME 0: SIGXCPU at the first tick as RT
 *   rttime-unlimited        info/warning  no RT CPU-time watchdog
 *   restrict-realtime       warning/error  the target's unit sets RestrictRealtime=yes
 *   seccomp-filter          info     the target has a seccomp filter of unknown origin
 *   rt-group-budget         ok       the target's cgroup-v1 cpu group has an RT budget
 *   rt-group-budget-zero    error    its cpu.rt_runtime_us is 0: EPERM for any RT policy
 *   rt-throttling           info     kernel.sched_rt_runtime_us < period
 *   rt-throttling-disabled  warning  kernel.sched_rt_runtime_us -1 (or >= period)
 *   rt-runtime-zero         error    kernel.sched_rt_runtime_us 0: no RT task can run
 *   cpu-offline             error/warning  a requested CPU is offline or absent
 *   cpu-outside-cpuset      error/warning  a requested CPU is outside the target's cpuset
 *   cpu-isolated            info/warning  isolcpus state of the CPUs in use
 *   cpu-nohz-full           info/warning  nohz_full state of the CPUs in use
 *   timer-slack             info/warning  SCHED_OTHER timer slack of the target
 *   preempt-model           info/warning  the kernel's preemption model (none or voluntary: a warning)
 *   kernel-feature          info     a kernel feature rtschedd uses is there (kfeat.h)
 *   kernel-feature-missing  info     it is not: what rtschedd does instead
 *   check-failed            info     something could not be read; the report is partial
 *   bpf-*                   the BPF wake-up observer: see observe/bpfcheck.h
 * Interrupts and kernel threads (diag_irq(); the IRQ manager's own codes
 * for what the kernel refused are in irq/irqmgr.h, IRQ_CODE_*):
 *   irq-match               info     what an [irq NAME] or [kthread NAME] section matches now
 *   irq-unmatched           warning  an [irq NAME] section matches no interrupt now
 *   kthread-unmatched       warning  a [kthread NAME] section matches no kernel thread
 *   irq-not-threaded        warning  a priority for an IRQ that has no thread (no threadirqs)
 *   irq-managed             warning  the kernel manages a matched vector's CPUs
 *   irq-no-permission       error    /proc/irq cannot be written (read-only, or not root)
 *   kthread-bound           warning  cpus = for a kernel thread bound to its CPUs
 *   rt-above-irq            warning  a real-time thread at or above an IRQ thread it shares CPUs with
 *   rt-above-ksoftirqd      warning/info  a real-time thread above ksoftirqd where softirqs run there
 *   irq-avoid               info/error  what irq-avoid-cpus keeps free, or that it leaves no CPU
 *   irqbalance              info/warning  irqbalance runs: told over its socket, or to be told by hand
 */
#ifndef RTSCHED_DIAG_H
#define RTSCHED_DIAG_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "daemon/sys/irqinfo.h"
#include "shared/report.h"

/* The priority the fix lines use when no real-time priority was requested. */
#define DIAG_DEFAULT_RTPRIO 50

/* Where to look.  NULL means the real one: proc "/proc", sys "/sys",
 * cgroup "<sys>/fs/cgroup", limits_conf "/etc/security/limits.conf",
 * limits_dir "/etc/security/limits.d", cmdline "<proc>/cmdline",
 * unit_path "/etc/systemd/system:/run/systemd/system:/lib/systemd/system:
 * /usr/lib/systemd/system" (colon-separated, highest precedence first).
 * With the real /proc capabilities come from the kernel through libcap;
 * with a fake one from the CapEff line of <proc>/<pid>/status. */
struct diag_env {
	const char *proc;
	const char *sys;
	const char *cgroup;
	const char *limits_conf;
	const char *limits_dir;
	const char *cmdline;
	const char *unit_path;
	const char *boot;        /* where config-RELEASE lies (default /boot) */
};

/* What to examine.  The checking process itself ("self": rtschedd, which
 * applies policies) is always examined too. */
struct diag_target {
	pid_t pid;               /* process or thread; 0: none (system-wide checks only) */
	const char *user;        /* whose limits.conf grant to look up; NULL: the pid's owner */
	int policy;              /* requested SCHED_*; -1: none */
	int priority;            /* requested priority, for a real-time policy */
	const cpu_set_t *cpus;   /* requested CPUs; NULL: none */
	/* the share of one CPU (percent) the checking process's own real-time
	 * threads may take per period (safety_self_share()); 0: none */
	int self_rt_pct;
};

/* Run the system-wide checks and those of t into *out (initialised here;
 * free it with diag_report_free() whatever the result).  -ESRCH if t->pid
 * does not exist, -ENOENT if t->user is not a user, -ENOMEM.  Errors are
 * sorted first. */
int diag_run(const struct diag_env *env, const struct diag_target *t, struct diag_report *out);

/* For a failed sched_setattr/sched_setaffinity on t->pid (a tid) with
 * t->policy, t->priority and t->cpus, made by the calling process: the
 * most likely cause and its fix, in one line, into buf.  what names the
 * call that failed ("sched_setaffinity", or NULL for sched_setattr); err is
 * its errno (positive or negative).  Handles EPERM (for a real-time policy:
 * the cgroup RT budget, the caller's seccomp filter, then without
 * CAP_SYS_NICE the owner and the tid's RLIMIT_RTPRIO), EINVAL of
 * sched_setaffinity (CPUs offline or outside the cpuset) and ESRCH.  0 when
 * a cause was found; -ENOENT when none was (buf then says what was ruled
 * out, or is "" for other errors); -ENOSPC if buf is too small (it then
 * holds the cut line); -ENOMEM.  code (DIAG_CODE_MAX) gets the finding code
 * of the cause ("rtprio-zero", "cpu-outside-cpuset"...), "" if none was found:
 * the same code `check` would report for it. */
int diag_explain(const struct diag_env *env, const struct diag_target *t, const char *what,
		 int err, char *buf, size_t len, char *code);

/* --- the daemon: what its checks and explanations run on the event loop ---
 * The checking process is the daemon itself, which does not change between
 * requests, and looking at it meant a system bus connection and PID 1's
 * answers (its unit's RestrictRealtime=) and a probe thread joined on the
 * loop (kfeat_rt_allowed()); the kernel's features were probed each time
 * too. So the daemon examines itself once, at start-up and on each
 * reload, and keeps it. A target's unit is asked of systemd over one
 * connection the daemon keeps, attached to its loop. */

/* Examine the checking process (this one) and probe the kernel's
 * features now, and keep both: every later diag_run() and diag_explain()
 * on the live system uses them instead of looking again. The daemon calls
 * it once its privileges are final, and on every reload. */
void diag_self_keep(void);
/* Forget what diag_self_keep() kept: each diagnosis looks again. */
void diag_self_forget(void);
/* Ask systemd about units over one system bus connection, attached to e,
 * kept and reused (until now: a connection per lookup, as rtschedd --check
 * still does). It is opened without waiting; a lookup while it is not ready
 * (connecting, or opened again after it closed) reads the unit's files
 * instead, so the loop never waits for the bus to answer a connect or a
 * Hello; each lookup waits DIAG_BUS_TIMEOUT_US at most in all, and after
 * one timed out, or took DIAG_BUS_SLOW_US or more (a busy PID 1, or a bus a
 * user loads with messages: each lookup stops the real-time loop), the bus
 * is left alone for DIAG_BUS_QUIET_US. 0 or -errno. */
int diag_bus_attach(sd_event *e);
/* Close that connection (at exit); lookups open their own again. */
void diag_bus_detach(void);

/* What one unit lookup over the bus may take, all its calls together; what
 * makes it slow (a healthy systemd answers in about a millisecond); and for
 * how long the daemon's connection stays closed after one timed out or was
 * slow. */
#define DIAG_BUS_TIMEOUT_US (2u * 1000000u)
#define DIAG_BUS_SLOW_US (100u * 1000u)
#define DIAG_BUS_QUIET_US (60u * 1000000u)

/* An [irq NAME] or [kthread NAME] section, as diag_irq() checks it. */
struct diag_irq_section {
	bool kthread;                     /* [kthread NAME], else [irq NAME] */
	const char *name;
	const char *where;                /* "FILE:LINE" of its header */
	const struct irq_selector *sel;   /* [irq]: what it matches */
	const char *match;                /* [kthread]: the glob on the thread's name */
	int policy, priority;             /* priority 0: scheduling left alone */
	bool has_cpus;
	cpu_set_t cpus;
};

/* A real-time priority something gives threads: the [daemon] default, a
 * [rule NAME], or (in a running daemon) a managed thread. */
struct diag_rt_use {
	const char *who;                  /* "[rule ola-main]", "tid 123 (olad)" */
	int priority;
	bool has_cpus;
	cpu_set_t cpus;                   /* without: every CPU */
};

struct diag_irq_input {
	const struct diag_irq_section *sections;
	size_t n_sections;
	const struct diag_rt_use *rt;
	size_t n_rt;
	bool avoid;                       /* irq-avoid-cpus is on */
	cpu_set_t avoid_cpus;             /* what it keeps free now */
	const char *avoid_text;           /* its value: "auto", "2-3" */
	bool irqbalance_told;             /* the daemon told irqbalance (rtschedctl check), or can (root) */
};

/* The checks of interrupts and kernel threads: what each section matches,
 * what the kernel will refuse, whether /proc/irq can be written, real-time
 * priorities against the IRQ threads and ksoftirqd they share CPUs with,
 * irq-avoid-cpus and irqbalance. Findings are appended to r. -ENOMEM. */
int diag_irq(const struct diag_env *env, const struct diag_irq_input *in, struct diag_report *r);

/* The kernel's preemption model in one word, told as the preempt-model
 * finding tells it (/sys/kernel/realtime, the version string, debugfs's
 * sched/preempt, preempt= on a PREEMPT_DYNAMIC kernel's command line, the
 * build's configuration): "rt", or "none", "voluntary", "full" or "lazy"
 * ("full" for a CONFIG_PREEMPT kernel known only from its version string).
 * env NULL: the real paths.  0, or -ENOENT when nothing readable tells the
 * mode: mode is then "dynamic" (a PREEMPT_DYNAMIC kernel) or "voluntary or
 * none"; -ENOSPC if the word was cut to fit len; -ENOMEM ("unknown"). */
int diag_preempt_model(const struct diag_env *env, char *mode, size_t len);

/* --- parsers of kernel text; they take a NUL-terminated buffer so they can
 * be tested and fuzzed.  The files of a process (stat, status, limits,
 * cgroup) are read and parsed by daemon/sys/proc.h --- */

/* The value of key ("isolcpus") on a kernel command line; the last one
 * wins, as for the kernel, and nothing after " -- " counts.  -ENOENT if
 * absent, -ENOSPC if it does not fit. */
int diag_cmdline_param(const char *cmdline, const char *key, char *val, size_t len);

/* The CPUs of an isolcpus= or nohz_full= value ("domain,managed_irq,2-3"):
 * flag words are skipped.  -EINVAL on a bad list. */
int diag_parse_cpu_param(const char *val, cpu_set_t *set);

#endif
