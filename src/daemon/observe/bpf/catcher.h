/* catcher.h: the catcher of refused scheduling calls. A program that calls
 * sched_setscheduler, sched_setparam or sched_setattr itself without the
 * privilege (RLIMIT_RTPRIO 0: a service without LimitRTPRIO=, a daemon
 * started outside a PAM session) gets EPERM before rtschedd hears of it;
 * catcher.bpf.c sees the refusal and hands the request here, so that the
 * daemon can grant it as a register by the caller (caught.c). Needs the
 * syscalls' tracepoints (CONFIG_FTRACE_SYSCALLS) and BPF ring buffers
 * (Linux 5.8).
 *
 * Privileges: catcher_new() needs CAP_BPF and CAP_PERFMON, as the observer;
 * reading (a mmapped ring buffer) needs none. Not thread-safe. */
#ifndef RTSCHED_CATCHER_H
#define RTSCHED_CATCHER_H

#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "daemon/observe/bpf/catcher_abi.h"

struct catcher;

/* Load and attach; -errno with the reason in why, as bpfobs_new() (-ENOPKG
 * built without BPF, -EPERM no capabilities, -EOPNOTSUPP no fexit on this
 * kernel or architecture...). */
int catcher_new(struct catcher **ret, char *why, size_t len);
/* Detach and free; NULL is fine. */
void catcher_free(struct catcher *c);
/* The descriptor to poll for refusals. */
int catcher_fd(struct catcher *c);
/* Hand the waiting refusals to fn, oldest first, at most RB_BATCH
 * (bpfload.h) of them; the number, or -errno. */
int catcher_read(struct catcher *c, void (*fn)(void *ud, const struct catcher_event *ev), void *ud);

#endif
