/* observer.h: the daemon's side of the BPF wake-up observer
 * (observe/bpf/bpfobs.h). It is loaded once at start, while the daemon still
 * holds CAP_BPF and CAP_PERFMON; afterwards it follows the registry (every
 * managed thread is watched, a thread that leaves is not) and the probes,
 * and gives each watched thread's timer-lateness and wake-up-latency
 * histograms, in total or since the last `rtschedctl jitter --reset`.
 *
 * Late wake-ups. Each watched thread has a threshold: its budget
 * (budget-us of its [rule] or [probe]) if it has one, else [daemon]
 * late-threshold-us. The kernel counts its wake-ups later than that; with
 * culprit tracking (culprits = yes) each of them also comes with what its
 * CPU ran meanwhile, which goes into the thread's culprit table
 * (observe/culprit.h) for `rtschedctl why`, jitter rows and metrics. A
 * thread that misses its budget gets a log line naming the top culprit,
 * at most one per OBSERVER_LOG_EVERY_S seconds per thread.
 *
 * Where BPF cannot work the daemon has no observer (NULL); every function
 * takes NULL. */
#ifndef RTSCHED_OBSERVER_H
#define RTSCHED_OBSERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "shared/hist.h"
#include "daemon/config/config.h"
#include "daemon/core/registry.h"
#include "daemon/observe/bpf/bpfobs.h"
#include "daemon/observe/culprit.h"

#define OBSERVER_LOG_EVERY_S 10

struct observer;

/* What makes a thread's wake-up late. */
struct observer_limits {
	uint64_t budget_ns;      /* its budget; 0: none (then late_ns is the daemon's threshold) */
	uint64_t late_ns;        /* later than this is late */
	const char *rule;        /* the rule or probe the budget comes from, for the log; NULL: none */
};

/* What the kernel counted of a thread's late wake-ups. */
struct observer_late {
	struct observer_limits lim;
	char rule[CONFIG_NAME_MAX];
	uint64_t late[2];        /* by kind: timer lateness, wake-up latency */
	uint64_t dropped;        /* of those, the ones whose culprits are not known */
	bool culprits;           /* culprit tracking is on */
};

/* Load the programs for up to max_threads threads, with culprit tracking
 * if culprits. -errno as bpfobs_new(), with the reason in why. */
int observer_new(struct observer **ret, unsigned max_threads, bool culprits, char *why, size_t len);
/* Read late wake-ups' records as they come, in e's loop. */
int observer_attach(struct observer *o, sd_event *e);
/* Detach and free; NULL is fine. */
void observer_free(struct observer *o);
/* Start watching a thread (again: its limits change, nothing else does). */
void observer_watch(struct observer *o, pid_t tid, const struct observer_limits *lim);
/* Start watching a managed thread, with the limits of its rule in c. */
void observer_watch_thread(struct observer *o, const struct config *c, const struct reg_thread *t);
/* The limits a thread of rule role ("" or NULL: the default) has under c. */
void observer_limits_of(const struct config *c, const char *role, struct observer_limits *lim);
/* It is no longer managed: forget it, keeping its name and when it went for
 * observer_gone(). */
void observer_unwatch(struct observer *o, pid_t tid);
/* tid's histogram of this kind, since the last reset if since_reset; -ENOENT
 * if it is not watched (or o is NULL), else as bpfobs_read(). */
int observer_read(struct observer *o, pid_t tid, enum bpfobs_kind kind, bool since_reset, struct hist *out);
/* tid's histograms count from now for observer_read(since_reset). */
void observer_reset(struct observer *o, pid_t tid);
/* Threads watched now, and the most there is room for. */
unsigned observer_watched(const struct observer *o, unsigned *max);
/* Whether culprit tracking is on. */
bool observer_culprits(const struct observer *o);
/* tid's late wake-ups. -ENOENT if it is not watched. */
int observer_late(struct observer *o, pid_t tid, struct observer_late *out);
/* tid's culprit table (read the records waiting first), or NULL if it had
 * no late wake-up worked out (or is not watched). */
const struct culprit_table *observer_table(struct observer *o, pid_t tid);
/* A thread watched until recently: its name and when it went (CLOCK_REALTIME
 * us). -ENOENT if it is not remembered (OBSERVER_GONE_MAX are). */
#define OBSERVER_GONE_MAX 32
int observer_gone(const struct observer *o, pid_t tid, char *comm, size_t len, uint64_t *when_us);
/* The name of irq's handlers (/proc/interrupts), cached; "" if unknown. */
const char *observer_irq_name(struct observer *o, int irq);
/* The hook that names the section placing an interrupt ([irq NAME], issue
 * 30): fn returns its name or NULL. Unset, no interrupt has one. */
typedef const char *(*observer_irq_section_fn)(void *ud, int irq);
void observer_set_irq_section(struct observer *o, observer_irq_section_fn fn, void *ud);
/* irq's section by that hook, or NULL. */
const char *observer_irq_section(struct observer *o, int irq);
/* A culprit as people read it: culprit_label() with an interrupt's name and
 * section. */
void observer_label(struct observer *o, const struct culprit_key *k, char *buf, size_t len);

#endif
