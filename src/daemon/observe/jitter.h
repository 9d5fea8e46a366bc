/* jitter.h: observed wake-up latency, from four sources under one export:
 * histograms that librtsched timers share with the daemon (a sealed memfd,
 * read without costing the worker a syscall), probes the daemon runs itself
 * ([probe NAME]), for every managed thread the BPF observer's timer-lateness
 * and wake-up-latency histograms (observe/observer.h), and where that is
 * unavailable, its run-queue delay from /proc/PID/task/TID/schedstat. */
#ifndef RTSCHED_JITTER_H
#define RTSCHED_JITTER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "shared/hist.h"
#include "daemon/config/config.h"
#include "daemon/core/refusal.h"
#include "daemon/core/registry.h"
#include "daemon/observe/observer.h"

enum jitter_kind { JITTER_TIMER, JITTER_PROBE, JITTER_SCHEDSTAT, JITTER_BPF_TIMER, JITTER_BPF_WAKEUP };
/* "timer", "probe", "schedstat", "bpf-timer", "bpf-wakeup": the kind= of a row, the
 * source= label of a metric */
const char *jitter_kind_name(enum jitter_kind k);

/* One row of `rtschedctl jitter`. Percentiles are -1 where the source has
 * none (schedstat gives a mean only). */
struct jitter_row {
	enum jitter_kind kind;
	char name[64];          /* thread comm or probe name */
	pid_t tid, pid;
	char rule[64];
	char strategy[16];
	int64_t period_ns;      /* 0: not periodic */
	struct hist h;          /* since the last reset (timer, probe) */
	uint64_t samples;
	int64_t mean_ns;        /* schedstat: run-queue wait per run */
};

struct jitter;

/* The sources, with a row per thread managed in r (read, never written). */
int jitter_new(struct jitter **ret, struct registry *r);
/* The BPF observer whose histograms the managed threads' rows come from
 * (NULL: none, schedstat rows instead). */
void jitter_set_observer(struct jitter *j, struct observer *o);
void jitter_free(struct jitter *j);
/* Most timer sources in all; one account may have at most its max-threads
 * ([user]/[group]: as many as it may hold real-time threads). */
#define JITTER_SOURCES_MAX 4096
/* Whether fd is a sealed memfd the size of a struct hist, the only kind a
 * timer is taken from: 0, or REFUSE_BAD_HISTOGRAM with msg. Asks nothing of
 * a file's owner (a FUSE file cannot stall it): the seals come first. */
int jitter_fd_check(int fd, char *msg, size_t len);
/* Take a worker's timer histogram: *fd, which jitter_fd_check() accepted,
 * is consumed (set to -1). `owner` may have at most `max` sources (the
 * histogram of one thread each, one memfd each). Returns 0, else a refusal
 * (enum refusal) or -errno with msg. A new source is the caller's to report
 * to the daemon (it may start the tick). */
int jitter_attach(struct jitter *j, pid_t tid, pid_t pid, uid_t owner, size_t max, int64_t period_ns,
		  const char *strategy, int *fd, char *msg, size_t len);
/* Start and stop probes to match the [probe NAME] sections of c. */
void jitter_apply_config(struct jitter *j, const struct config *c);
/* A task exited: drop its timer histogram. */
void jitter_on_exit(struct jitter *j, pid_t tid);
/* Every source's current row, through fn. */
void jitter_foreach(struct jitter *j, void (*fn)(void *ud, const struct jitter_row *r), void *ud);
/* Start counting afresh for `rtschedctl jitter` (Prometheus counters stay monotonic). */
void jitter_reset(struct jitter *j);
/* What the exposition says of the daemon itself. */
struct jitter_counters {
	unsigned long grants, refusals;
	long watchdog_trips;       /* -1: the watchdog is off */
	unsigned interval_s;       /* metrics-interval: how often the file is written */
	bool timestamp;            /* say when it was written (the metrics file) */
};
/* The Prometheus text exposition of everything the daemon knows: the
 * jitter histograms, late wake-ups, budget misses and their culprits (the
 * top CULPRIT_TOP per thread, the rest as culprit="other"), and c. */
int jitter_prometheus(struct jitter *j, FILE *f, const struct jitter_counters *c);
/* The tid of the probe called name, 0 if none. */
pid_t jitter_probe_tid(struct jitter *j, const char *name);
/* The name of the probe running as tid, NULL if none. */
const char *jitter_probe_name(struct jitter *j, pid_t tid);
/* Timer and probe sources. */
size_t jitter_n_sources(const struct jitter *j);
/* The worst p99 over timer and probe sources, for STATUS=; -1 if none. */
int64_t jitter_worst_p99(struct jitter *j, char *who, size_t len);

#endif
