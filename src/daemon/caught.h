/* caught.h: the front end of refused scheduling calls. The catcher
 * (observe/bpf/catcher.h) reports each sched_setscheduler, sched_setparam
 * and sched_setattr the kernel refused with EPERM; this grants what was
 * asked as a register of the thread by the caller would be
 * (dispatch_register(): the caller's [user]/[group] limits, quota, rate
 * limit, rules, watchdog), with source "caught", and logs the outcome once
 * per thread. */
#ifndef RTSCHED_CAUGHT_H
#define RTSCHED_CAUGHT_H

#include <stddef.h>
#include <systemd/sd-event.h>

struct service;
struct caught;

/* Load the catcher (needs CAP_BPF and CAP_PERFMON: call before the drop)
 * and serve it on e. -errno with the reason in why (-ENOPKG: built
 * without BPF; others as bpfobs_new()). */
int caught_start(struct caught **ret, sd_event *e, struct service *s, char *why, size_t len);
/* Stop and free; NULL is fine. Granted threads stay as the registry has them. */
void caught_free(struct caught *c);

#endif
