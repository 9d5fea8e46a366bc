/* isolate.h: runtime CPU isolation. While a thread of a rule with
 * `isolate = yes` is managed (or a probe with it runs), the rule's CPUs are
 * emptied of everything else that can move:
 *   - tasks, through the cpuset controller: on the v1 cpuset hierarchy
 *     (this project's machines) every task of the root group goes to a
 *     housekeeping group with the other CPUs, and what they start later is
 *     born there; other groups give the CPUs up; on a machine whose cgroup2
 *     tree systemd owns, AllowedCPUs= on the units beside the managed
 *     threads' own, set at runtime through systemd's D-Bus API
 *     (isolate_sd.c);
 *   - kernel threads that may move, by their affinity;
 *   - unbound workqueues (/sys/devices/virtual/workqueue/cpumask);
 *   - interrupts nobody claimed, through the IRQ manager's hook.
 * Managed threads of every rule stay where they are, and so do rtschedd's
 * own threads pinned there (its probes, the watchdog's canaries).
 * Released when the last such thread goes, on reload and on stop; every
 * group, mask and affinity comes back as it was, from the state journal
 * too after a crash. What only boot parameters can do (nohz_full,
 * rcu_nocbs) and the per-CPU kernel threads that stay are reported, by
 * isolate_check() and by status. */
#ifndef RTSCHED_ISOLATE_H
#define RTSCHED_ISOLATE_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/config/config.h"

struct isolate;
struct registry;
struct state;

/* Where the files are; NULL members mean the real ones. */
struct isolate_env {
	const char *cgroup;    /* the cgroup root, /sys/fs/cgroup */
	const char *sys;       /* prefix of /sys/devices (the workqueue mask) */
};

/* What could not be done, as a stable code (rtschedd(8)): */
#define ISOLATE_CODE_UNAVAILABLE "isolate-unavailable"       /* no cpuset controller rtschedd can use */
#define ISOLATE_CODE_NO_HOUSEKEEPING "isolate-no-housekeeping" /* it would leave no online CPU */
#define ISOLATE_CODE_REFUSED "isolate-refused"               /* the kernel (or systemd) refused a write */
#define ISOLATE_CODE_BUSY "isolate-busy"                     /* the housekeeping group is someone else's */

/* The IRQ manager's side (irq-avoid): keep interrupts nobody claimed off
 * cpus (empty: isolation is over). */
typedef void (*isolate_irq_fn)(void *ud, const cpu_set_t *cpus);

/* What status and check say. */
struct isolate_status {
	const char *backend;       /* "cpuset v1", "systemd", "none" */
	char cpus[64];             /* the CPUs isolated now, "" if none */
	char who[192];             /* the rules and probes that want them */
	const char *code;          /* ISOLATE_CODE_* of what failed last, NULL */
	char why[256];
	size_t moved;              /* tasks in the housekeeping group (or units restricted) */
	size_t kthreads;           /* kernel threads whose affinity it changed */
	size_t groups;             /* other groups that gave the CPUs up */
	char stay[256];            /* the per-CPU kernel threads that stay on them */
	char workqueue[160];       /* the unbound workqueue mask now and before, "" untouched */
	uint64_t apply_usec;       /* the last apply and release, in µs */
	uint64_t release_usec;
};

/* Create it, and take over what the journal st recorded of a previous
 * rtschedd's isolation (st may be NULL). r: whose threads are managed.
 * env NULL: the real files. 0 or -ENOMEM. */
int isolate_new(struct isolate **ret, const struct isolate_env *env, struct state *st, struct registry *r);
/* Bring the machine in line with what c asks for the threads managed now:
 * isolate, adjust or release. */
void isolate_update(struct isolate *m, const struct config *c);
/* A managed thread went: at the next update it is moved off like the rest. */
void isolate_thread_gone(struct isolate *m);
/* A task was created (the process events connector): one that is not
 * managed goes where the others went. Lost events: isolate_thread_gone(). */
void isolate_on_fork(struct isolate *m, pid_t tid, pid_t tgid);
/* Thread tid is about to be managed: give it the isolated CPUs back if
 * isolation moved it off them (registry_set_admit()). 0 or -errno. */
int isolate_admit(void *m, pid_t tid);
/* True while CPUs are isolated. */
bool isolate_active(const struct isolate *m);
/* The CPUs isolated now (empty: none). NULL is fine. */
void isolate_cpus(const struct isolate *m, cpu_set_t *out);
/* The IRQ manager's hook; NULL until that manager runs. */
void isolate_set_irq_hook(struct isolate *m, isolate_irq_fn fn, void *ud);
void isolate_status(const struct isolate *m, struct isolate_status *st);
/* Release everything (restore) or leave it to the next rtschedd, which
 * reads the journal (a restart). NULL is fine. */
void isolate_free(struct isolate *m, bool restore);

#endif
