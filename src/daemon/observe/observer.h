/* observer.h: the daemon's side of the BPF wake-up observer
 * (observe/bpf/bpfobs.h). It is loaded once at start, while the daemon still
 * holds CAP_BPF and CAP_PERFMON; afterwards it follows the registry (every
 * managed thread is watched, a thread that leaves is not) and gives each
 * managed thread's timer-lateness and wake-up-latency histograms, in total
 * or since the last `rtschedctl jitter --reset`. Where BPF cannot work the
 * daemon has no observer (NULL); every function takes NULL. */
#ifndef RTSCHED_OBSERVER_H
#define RTSCHED_OBSERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "shared/hist.h"
#include "daemon/observe/bpf/bpfobs.h"

struct observer;

/* Load the programs for up to max_threads threads. -errno as bpfobs_new(),
 * with the reason in why. */
int observer_new(struct observer **ret, unsigned max_threads, char *why, size_t len);
/* Detach and free; NULL is fine. */
void observer_free(struct observer *o);
/* Start watching a managed thread (again: nothing changes). */
void observer_watch(struct observer *o, pid_t tid);
/* It is no longer managed: forget it. */
void observer_unwatch(struct observer *o, pid_t tid);
/* tid's histogram of this kind, since the last reset if since_reset; -ENOENT
 * if it is not watched (or o is NULL), else as bpfobs_read(). */
int observer_read(struct observer *o, pid_t tid, enum bpfobs_kind kind, bool since_reset, struct hist *out);
/* tid's histograms count from now for observer_read(since_reset). */
void observer_reset(struct observer *o, pid_t tid);
/* Threads watched now, and the most there is room for. */
unsigned observer_watched(const struct observer *o, unsigned *max);

#endif
