/* irqmgr_int.h: the IRQ manager's insides, for irqmgr.c (the syncs, the
 * events, the queries), irqmgr_journal.c (its journal lines) and
 * irqmgr_kt.c (the kernel threads it sets) only. */
#ifndef RTSCHED_IRQMGR_INT_H
#define RTSCHED_IRQMGR_INT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <systemd/sd-event.h>

#include "daemon/irq/irqmgr.h"
#include "daemon/sys/irqinfo.h"

#define CPUS_TEXT_MAX 4096

struct irqmgr {
	sd_event *event;
	struct irq_env env;
	char proc[PATH_MAX], sys[PATH_MAX], ibrun[PATH_MAX];
	struct state *state;
	struct registry *registry;
	const struct config *config;
	struct irq_entry *irqs;
	struct kt_entry *kts;
	bool default_written;
	cpu_set_t default_original;
	cpu_set_t avoid;                  /* the set in force, empty: none */
	bool avoid_warned;
	cpu_set_t isolated;               /* CPUs isolate = yes emptied (irqmgr_isolate): avoided too */
	struct hotplug *hotplug;
	int hotplug_error;
	struct irqbalance *ib;
	sd_event_source *later;           /* a coalesced sync */
	uint64_t pending_since;           /* CLOCK_MONOTONIC of the first uevent it waits for; 0: none */
	uint64_t last_sync_usec, last_hotplug_usec;
	bool announce;                    /* a new configuration: say what matches nothing */
	void (*watch)(void *ud, pid_t tid, bool held);  /* irqmgr_set_watch() */
	void *watch_ud;
	bool recheck;                     /* a removal was synced: look once more, later */
};


/* What a kernel thread should get. */
struct irqmgr_kt_want {
	const char *section;
	int irq;
	bool has_policy;
	int policy, priority, nice;
	bool has_cpus;
	cpu_set_t cpus;
};

/* A CPU set as the journal and the log write it ("-" if empty). */
void irqmgr_fmt_cpus(const cpu_set_t *set, char *buf, size_t len);

/* The journal (irqmgr_journal.c): an IRQ's, a kernel thread's and the
 * default affinity's line; */
void irqmgr_journal_irq(struct irqmgr *m, const struct irq_entry *e);
void irqmgr_journal_kt(struct irqmgr *m, const struct kt_entry *k);
void irqmgr_journal_default(struct irqmgr *m);
/* the compaction's writer: every live entry; */
size_t irqmgr_journal_write(void *ud, FILE *f);
/* a line of the last run: its entry, with the originals it recorded. */
void irqmgr_adopt_line(void *ud, char *line);

/* Kernel threads (irqmgr_kt.c): is tid still the thread k names; */
bool irqmgr_kt_alive(struct irqmgr *m, const struct kt_entry *k);
/* give one back what it had (its policy,
 * and its CPUs if they were set); */
void irqmgr_kt_restore(struct irqmgr *m, struct kt_entry *k);
/* forget *pp (restored first if asked), unlinking it; */
void irqmgr_kt_drop(struct irqmgr *m, struct kt_entry **pp, bool restore);
/* apply want to snapshot thread t (an entry is made the first time). */
void irqmgr_kt_apply(struct irqmgr *m, const struct irq_kthread *t, const struct irqmgr_kt_want *w);

#endif
