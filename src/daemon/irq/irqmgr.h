/* irqmgr.h: the interrupts and kernel threads rtschedd manages: [irq NAME]
 * sections (a vector's CPUs and its threads' scheduling), [kthread NAME]
 * sections (ksoftirqd/N, rcuc/N, ...) and irq-avoid-cpus (the IRQs no
 * section claims, kept off the CPUs of pinned real-time threads, through
 * irqbalance when it runs). Each entry remembers what it had before and
 * gets it back when its section goes (reload), its device goes (hotplug:
 * the IRQ stays, the device it served is gone) and when rtschedd stops; the
 * state journal carries the originals across a restart or a crash.
 *
 * Syncing reads a snapshot of the machine (sys/irqinfo.h), works out what
 * the configuration wants, and writes only what differs. The scheduling of
 * kernel threads goes through task_sched_write(); IRQ affinity through
 * irqinfo_write_affinity(). */
#ifndef RTSCHED_IRQMGR_H
#define RTSCHED_IRQMGR_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "daemon/config/config.h"
#include "daemon/core/task.h"
#include "daemon/sys/irqinfo.h"

struct irqmgr;
struct registry;
struct state;

/* What an entry could not get, as a stable code (rtschedd(8)): */
#define IRQ_CODE_MANAGED "irq-managed"              /* the kernel manages the vector's affinity (EIO) */
#define IRQ_CODE_AFFINITY "irq-affinity-refused"    /* the kernel refused the CPUs (EINVAL...) */
#define IRQ_CODE_PERMISSION "irq-no-permission"     /* /proc/irq is read-only or not ours to write */
#define IRQ_CODE_NOT_THREADED "irq-not-threaded"    /* a priority, but the IRQ has no thread */
#define IRQ_CODE_BOUND "kthread-bound"              /* PF_NO_SETAFFINITY: the kernel owns its CPUs */
#define IRQ_CODE_REFUSED "kthread-refused"          /* sched_setattr on the thread failed */

/* One IRQ whose affinity rtschedd holds (or tried to). */
struct irq_entry {
	int irq;
	char actions[IRQ_ACTIONS_MAX];  /* its identity: a freed number may come back for another device */
	char section[CONFIG_NAME_MAX];  /* the [irq NAME] that claims it, "" for irq-avoid-cpus */
	bool avoid;                     /* moved off by irq-avoid-cpus */
	bool has_cpus;                  /* the claim sets its CPUs */
	cpu_set_t want;                 /* and these */
	cpu_set_t original;             /* smp_affinity_list before rtschedd wrote it */
	bool written;                   /* rtschedd wrote it: original comes back on release */
	cpu_set_t effective;            /* effective_affinity_list after the write */
	const char *code;               /* IRQ_CODE_*, NULL when all went through */
	char why[160];
	char served[160];               /* the devices behind it, for list */
	bool seen;                      /* (sync bookkeeping) */
	struct irq_entry *next;
};

/* One kernel thread whose scheduling rtschedd holds: an IRQ's thread
 * (irq/N-name) for an [irq NAME], or a [kthread NAME] match. */
struct kt_entry {
	pid_t tid;
	uint64_t starttime;
	char comm[IRQ_KTHREAD_NAME_MAX + 1];
	int irq;                        /* -1: a [kthread] match */
	char section[CONFIG_NAME_MAX];
	unsigned flags;                 /* PROC_PF_* */
	struct task_sched original;
	struct task_sched applied;      /* what the kernel reported after the write */
	bool cpus_changed;              /* the CPUs were set: they come back too */
	const char *code;               /* IRQ_CODE_*, NULL when all went through */
	char why[160];
	bool seen;
	struct kt_entry *next;
};

/* Counts for `status`. */
struct irqmgr_stats {
	size_t irqs, kthreads, avoided;  /* entries: claimed IRQs, kernel threads, IRQs moved by irq-avoid-cpus */
	const char *hotplug;             /* "udev", "kernel uevents", "off (...)" */
	char avoid[64];                  /* the CPUs kept free of unclaimed IRQs, "off" */
	char irqbalance[128];            /* "not running", "told to ban CPUs 1 (pid 123)", ... */
	uint64_t last_sync_usec;         /* the last sync's duration */
	uint64_t last_hotplug_usec;      /* uevent to applied, the last one; 0 if none */
};

/* Create the manager and apply the configuration c: take over what the
 * journal st recorded (st may be NULL), start watching for hotplugged
 * devices when a section needs it. env NULL: the real /proc and /sys.
 * registry (may be NULL) tells irq-avoid-cpus = auto where real-time
 * threads are pinned. isolated (NULL: none) are the CPUs isolation holds
 * already (a restart that re-adopted it): kept off from the first sync,
 * so no IRQ the last rtschedd moved off them comes back for a moment. */
int irqmgr_new(struct irqmgr **ret, sd_event *e, const struct irq_env *env, struct state *st,
	       struct registry *registry, const struct config *c, const cpu_set_t *isolated);
/* A new configuration: apply it; what it no longer claims goes back. */
void irqmgr_reconfigure(struct irqmgr *m, const struct config *c);
/* The registry changed: irq-avoid-cpus = auto follows it (deferred). */
void irqmgr_threads_changed(struct irqmgr *m);
/* CPU isolation (isolate = yes) emptied cpus (empty: released): the IRQs
 * no section claims keep off them as irq-avoid-cpus keeps them, whatever
 * that key says; synced now. */
void irqmgr_isolate(struct irqmgr *m, const cpu_set_t *cpus);
/* Read the machine and bring it in line now. 0 or -errno. */
int irqmgr_sync(struct irqmgr *m);
/* Give everything back and stop (restore) or leave it for the next
 * rtschedd (a restart). NULL is fine. */
void irqmgr_free(struct irqmgr *m, bool restore);

/* fn(ud, tid, true) each time a kernel thread is applied (held: the same
 * tid again and again), fn(ud, tid, false) when rtschedd lets it go: what
 * the BPF observer follows, so `jitter` shows an IRQ's thread by its
 * section (irqmgr_free() says nothing: the daemon stops). */
void irqmgr_set_watch(struct irqmgr *m, void (*fn)(void *ud, pid_t tid, bool held), void *ud);

/* The entries, for list; NULL-terminated lists through ->next. */
const struct irq_entry *irqmgr_irqs(const struct irqmgr *m);
const struct kt_entry *irqmgr_kthreads(const struct irqmgr *m);
void irqmgr_stats(const struct irqmgr *m, struct irqmgr_stats *st);

/* The lookups other modules name IRQs by (`jitter`, `why`): the section
 * that manages IRQ irq ("irq-avoid-cpus" for a move of that key), or NULL
 * when rtschedd leaves it alone; and the same for a kernel thread's tid
 * (an IRQ's thread, or a [kthread] match). m may be NULL. */
const char *irqmgr_irq_section(const struct irqmgr *m, int irq);
const char *irqmgr_tid_section(const struct irqmgr *m, pid_t tid);

#endif
