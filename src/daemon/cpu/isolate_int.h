/* isolate_int.h: the isolation's insides, for isolate.c and its backends
 * (isolate_v1.c: the v1 cpuset hierarchy; isolate_sd.c: systemd's units on
 * cgroup2). The rest of the daemon goes through isolate.h. */
#ifndef RTSCHED_ISOLATE_INT_H
#define RTSCHED_ISOLATE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "daemon/cpu/isolate.h"
#include "daemon/sys/cgroupfs.h"
#include "daemon/sys/strmap.h"

/* The housekeeping group of the v1 hierarchy, below its root. */
#define ISO_GROUP CGROUPFS_HOUSEKEEPING

enum iso_backend { ISO_NONE, ISO_V1, ISO_SYSTEMD };

/* One thing the isolation changed and puts back, as its journal line says:
 *   M TID STARTTIME GROUP   a task moved out of GROUP (not the root, which
 *                           is where everything in the housekeeping group
 *                           goes back to anyway)
 *   A TID STARTTIME CPUS    a task's affinity was CPUS (a kernel thread, a
 *                           pinned task, rtschedd's own main thread)
 *   G ID CPUS GROUP         another group's cpuset.cpus was CPUS
 *   U ID CPUS UNIT          a systemd unit's AllowedCPUs= was CPUS ("-": none)
 * and, one each: S 0 BACKEND CPUS (isolating CPUS), W 0 MASK (the
 * workqueue mask before), L 0 FLAG (the v1 root group's
 * cpuset.sched_load_balance before). */
struct iso_rec {
	char kind;
	long id;                /* M, A: the tid; G, U: a number of their own */
	uint64_t starttime;     /* M, A: pins the task: a reused tid is never touched */
	bool has_cpus;          /* U: "-" is no AllowedCPUs= at all */
	cpu_set_t cpus;
	char *text;             /* M, G: the group; U: the unit */
	struct iso_rec *next;
};

struct sd_bus;

struct isolate {
	struct isolate_env env;
	struct state *state;
	struct registry *registry;
	struct cgroupfs fs;
	enum iso_backend backend;
	cpu_set_t active;        /* the CPUs isolated now; empty: none */
	bool owned;              /* the housekeeping group is ours: made by us or in our journal */
	bool dirty;              /* sweep again at the next update */
	char who[192];
	const char *code;        /* ISOLATE_CODE_* of the last failure */
	char why[256];
	const char *logged;      /* the failure last logged, not to log it at every retry */
	char logged_why[256];
	bool wq_written;
	char wq_orig[64], wq_wrote[64];
	int lb_orig;             /* the v1 root group's sched_load_balance before; -1: untouched */
	struct iso_rec *recs;
	long next_id;
	char stay[256];          /* per-CPU kernel threads that stay (from the last sweep) */
	size_t moved, kthreads, groups;
	uint64_t apply_usec, release_usec;
	isolate_irq_fn irq_fn;
	void *irq_ud;
	struct sd_bus *bus;      /* systemd's, while units are restricted */
	cpu_set_t hk_applied;    /* the units' AllowedCPUs= now */
	struct strmap sd_seen;   /* the groups the last sweep left by affinity (isolate_sd.c) */
};

/* --- isolate.c: shared by the backends --- */
/* Set the failure code and reason (logged once per change of reason). */
void iso_fail(struct isolate *m, const char *code, int err, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Remember (and journal) a change; NULL on -ENOMEM. */
struct iso_rec *iso_rec_add(struct isolate *m, char kind, long id, uint64_t starttime, const cpu_set_t *cpus,
			    const char *text);
struct iso_rec *iso_rec_find(struct isolate *m, char kind, long id);
/* Forget a change (its journal line goes too). */
void iso_rec_drop(struct isolate *m, struct iso_rec *rec);
/* Forget the M and A changes of tasks that are gone. */
void iso_prune_gone(struct isolate *m);
/* Name a task that stays on the isolated CPUs in the list status shows
 * ("ksoftirqd/1, migration/1, ..."). */
void iso_stay(struct isolate *m, const char *comm);
/* Is tid still the task that started at starttime? */
bool iso_same_task(pid_t tid, uint64_t starttime);
/* A task that cannot leave the group it is in (a kernel thread): take
 * cpus off its affinity if the kernel lets it, else note it in stay.
 * fl: its PF_* flags. */
void iso_kthread(struct isolate *m, pid_t tid, const char *comm, unsigned fl, uint64_t starttime, const cpu_set_t *cpus);
/* Is tid managed, or one of rtschedd's own threads that stays where it is? */
bool iso_keeps(struct isolate *m, pid_t tid);

/* --- isolate_v1.c: the v1 cpuset hierarchy --- */
/* Move every task that can go into the housekeeping group with CPUs hk
 * (made first if needed); other groups give up the isolated CPUs. 0 or
 * -errno (with iso_fail()). */
int iso_v1_apply(struct isolate *m, const cpu_set_t *hk);
/* Everything back: tasks, groups; the housekeeping group removed. */
void iso_v1_release(struct isolate *m);
/* Thread tid is to be managed: back to the root group if isolation moved it. */
int iso_v1_admit(struct isolate *m, pid_t tid);
/* A new task born outside the housekeeping group: into it. */
void iso_v1_fork(struct isolate *m, pid_t tid);

/* --- isolate_sd.c: systemd's units (cgroup2) --- */
/* Is this a machine whose cgroup tree systemd owns (PID 1 is systemd)? */
bool iso_sd_owns(void);
/* AllowedCPUs=hk on every unit that holds no managed thread, at runtime. */
int iso_sd_apply(struct isolate *m, const cpu_set_t *hk);
void iso_sd_release(struct isolate *m);
/* Thread tid is to be managed: its unit gets every CPU back. */
int iso_sd_admit(struct isolate *m, pid_t tid);
/* A new task: into line (a new unit is restricted, a kept unit's task by affinity). */
void iso_sd_fork(struct isolate *m, pid_t tid);

#endif
