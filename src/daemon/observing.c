/* observing.c: what the BPF observer watches (see observing.h). */
#include "autoconfig.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon/config/config.h"
#include "daemon/core/registry.h"
#include "daemon/irq/irqmgr.h"
#include "daemon/observe/jitter.h"
#include "daemon/observe/observer.h"
#include "daemon/observing.h"
#include "daemon/service.h"
#include "daemon/sys/log.h"

/* The IRQ manager took or let go a kernel thread: the BPF observer follows
 * it as it follows the registry's threads, in half of its slots at most (a
 * [kthread] section for every ksoftirqd/N of a 64-CPU machine must not leave the
 * managed threads unobserved). */
static void on_kthread_held(void *ud, pid_t tid, bool held)
{
	struct service *s = ud;
	unsigned max;

	if (!held)
		observer_unwatch(s->observer, tid);
	else if (observer_watched(s->observer, &max) < max / 2) {
		struct observer_limits lim;
		observer_limits_of(s->config, NULL, &lim); /* no rule: the daemon's late-threshold-us */
		observer_watch(s->observer, tid, &lim);
	}
}

void observing_start(struct service *s, sd_event *e)
{
	const struct config *c = s->config;
	int r;

	if (!c->observe_threads) {
		s->observer_error = -ECANCELED;
		snprintf(s->observer_why, sizeof(s->observer_why), "observe-threads = 0 in the configuration");
		log_info("BPF wake-up observer off (observe-threads = 0)");
		return;
	}
	r = observer_new(&s->observer, c->observe_threads, c->culprits, s->observer_why, sizeof(s->observer_why));
	if (r == 0 && (r = observer_attach(s->observer, e)) < 0) {
		snprintf(s->observer_why, sizeof(s->observer_why), "cannot watch its ring buffer: %s", strerror(-r));
		observer_free(s->observer);
		s->observer = NULL;
	}
	if (r < 0) {
		s->observer_error = r;
		log_notice("BPF wake-up observer unavailable, jitter shows schedstat means only: %s", s->observer_why);
		return;
	}
	jitter_set_observer(s->jitter, s->observer);
	REGISTRY_FOREACH_THREAD(t, s->registry)
		observer_watch_thread(s->observer, c, t);
	/* and the IRQ and kernel threads [irq]/[kthread] sections hold */
	for (const struct kt_entry *k = irqmgr_kthreads(s->irq); k; k = k->next)
		on_kthread_held(s, k->tid, true);
	irqmgr_set_watch(s->irq, on_kthread_held, s);
	log_info("BPF wake-up observer loaded: timer lateness and wake-up latency of up to %u managed threads%s",
		 c->observe_threads, c->culprits ? ", and the culprits of late wake-ups" : "");
}

void observing_thread(struct service *s, int ev, const struct reg_thread *t)
{
	/* the BPF observer's tid filter follows the registry */
	if (ev == REG_EV_THREAD_SET)
		observer_watch_thread(s->observer, s->config, t);
	else if (ev == REG_EV_THREAD_GONE)
		observer_unwatch(s->observer, t->tid);
}

void observing_reconfigure(struct service *s)
{
	/* budgets and the late threshold of threads whose rule did not change */
	REGISTRY_FOREACH_THREAD(t, s->registry)
		observer_watch_thread(s->observer, s->config, t);
}
