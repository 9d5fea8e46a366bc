/* guard.c: the watchdog's wiring into the daemon (see guard.h). */
#include "autoconfig.h"

#include <errno.h>
#include <stdlib.h>

#include "daemon/config/config.h"
#include "daemon/core/grant.h"
#include "daemon/core/registry.h"
#include "daemon/guard.h"
#include "daemon/service.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "daemon/sys/rtloop.h"
#include "daemon/watchdog/safety.h"
#include "shared/cleanup.h"

struct guard {
	sd_event *event;
	struct service *svc;
	sd_event_source *publish;       /* coalesced update of the watchdog's thread list */
};

/* Tell the watchdog which threads it guards: the real-time ones, and the
 * ones it demoted, until the cooldown promotes them (one that raises itself
 * back with a limit of its own is a runaway it still knows). */
static void publish(struct guard *g)
{
	struct registry *r = g->svc->registry;
	struct safety_thread *v;
	size_t n = 0;

	if (!g->svc->safety)
		return;
	v = calloc(registry_n_threads(r) + 1, sizeof(*v));
	if (!v)
		return;
	REGISTRY_FOREACH_THREAD(t, r)
		if (policy_is_realtime(t->applied.policy) || t->demoted)
			v[n++] = (struct safety_thread){ t->tid, t->pid, t->starttime };
	safety_set_threads(g->svc->safety, v, n);
	free(v);
}

static int on_publish(sd_event_source *s, uint64_t usec, void *userdata)
{
	publish(userdata);
	return 0;
}

/* The watchdog demoted a runaway: record it in the registry, hold back its
 * user's grants (its rule's and its process's for a rule match, root's
 * process only; everyone's with watchdog-demote = all) and say who. */
static void on_demoted(void *ud, const struct safety_trip *trip)
{
	struct guard *g = ud;
	struct registry *r = g->svc->registry;
	char held[512];
	size_t n = 0;

	if (trip->demote_all) {
		n = registry_demote(r, &trip->starved);
		registry_hold_all(r);
	}
	for (size_t i = 0; i < trip->n; i++) {
		const struct safety_culprit *c = &trip->c[i];
		struct reg_thread *t;

		if (!c->managed)
			continue;
		t = c->demoted ? registry_demote_thread(r, c->tid, c->starttime) : NULL;
		if (t) {
			n++;
			registry_hold_thread(r, t);
		} else if (!trip->demote_all) {
			/* demoted before, and raised itself back since; or gone, or
			 * not the registry's any more: its user is held all the same */
			n += c->demoted;
			registry_hold(r, grant_account(c->uid), c->pid, "");
		}
	}
	registry_holds_text(r, held, sizeof(held));
	log_warnx("watchdog: %zu managed real-time thread%s now SCHED_OTHER; real-time grants held back for %s "
		  "for %u s", n, n == 1 ? "" : "s", held[0] ? held : "no one", g->svc->config->watchdog_cooldown_s);
	g->svc->hooks->changed(g->svc->ud);
}

static void on_promote(void *ud)
{
	struct guard *g = ud;
	size_t n = registry_promote(g->svc->registry);

	log_notice("watchdog: %zu thread%s promoted back to real-time", n, n == 1 ? "" : "s");
	g->svc->hooks->changed(g->svc->ud);
}

int guard_new(struct guard **ret, sd_event *e, struct service *svc)
{
	_cleanup_free_ struct guard *g = calloc(1, sizeof(*g));
	int r;

	if (!g)
		return -ENOMEM;
	*g = (struct guard){ .event = e, .svc = svc };
	if ((r = sd_event_add_time(e, &g->publish, CLOCK_MONOTONIC, 0, 0, on_publish, g)) < 0)
		return r;
	sd_event_source_set_enabled(g->publish, SD_EVENT_OFF);
	*ret = TAKE_PTR(g);
	return 0;
}

void guard_configure(struct guard *g)
{
	static const struct safety_ops ops = { .demoted = on_demoted, .promote = on_promote };
	struct service *s = g->svc;
	const struct config *c = s->config;
	struct safety_params p = { .enabled = c->watchdog, .threshold_ms = c->watchdog_threshold_ms,
				   .cooldown_s = c->watchdog_cooldown_s, .demote_all = c->watchdog_demote_all,
				   .duty_pct = c->watchdog_duty > 0 ? (unsigned)c->watchdog_duty : 0,
				   .loop_tid = rtloop_bounded_tid(s->loop), .tasks = s->tasks };
	int r;

	if (s->safety && !p.enabled) {
		safety_free(s->safety);
		s->safety = NULL;
	} else if (s->safety) {
		safety_set_params(s->safety, &p);
	} else if (p.enabled) {
		r = safety_new(&s->safety, g->event, &p, &ops, g);
		if (r < 0) {
			log_errno(LOG_LEVEL_WARNING, r, "watchdog unavailable (it needs CAP_SYS_NICE for its FIFO 99 "
				  "thread, and a cpu cgroup with real-time budget); runaway real-time threads are not caught");
			s->safety = NULL;
		}
	}
	publish(g);
}

void guard_follow(struct guard *g)
{
	uint64_t now;

	/* the watchdog's copy of the real-time set is rebuilt at most every
	 * 100 ms: rebuilding it per registration made registering n threads O(n^2) */
	if (!g->svc->safety || sd_event_source_get_enabled(g->publish, NULL) != 0)
		return;
	sd_event_now(g->event, CLOCK_MONOTONIC, &now);
	sd_event_source_set_time(g->publish, now + 100000);
	sd_event_source_set_enabled(g->publish, SD_EVENT_ONESHOT);
}

bool guard_free(struct guard *g)
{
	bool stopped;

	if (!g)
		return true;
	sd_event_source_disable_unref(g->publish);
	stopped = safety_free(g->svc->safety);
	g->svc->safety = NULL;
	free(g);
	return stopped;
}
