/* observing.h: the BPF wake-up observer (src/daemon/observe/observer.c) as
 * the daemon runs it: loaded at start while CAP_BPF and CAP_PERFMON are
 * held, then watching every managed thread as the registry changes, and
 * the kernel threads the IRQ manager holds in half of its slots at most.
 * The observer is svc->observer (NULL: unavailable, svc->observer_why says
 * why). */
#ifndef RTSCHED_OBSERVING_H
#define RTSCHED_OBSERVING_H

#include <systemd/sd-event.h>

struct reg_thread;
struct service;

/* Load it (unless observe-threads = 0) and watch what is managed so far;
 * without it the daemon runs on, schedstat rows only. */
void observing_start(struct service *s, sd_event *e);
/* A registry change (REG_EV_*) of thread t: watch or forget it. */
void observing_thread(struct service *s, int ev, const struct reg_thread *t);
/* A new configuration: every thread's budgets and late threshold again. */
void observing_reconfigure(struct service *s);

#endif
