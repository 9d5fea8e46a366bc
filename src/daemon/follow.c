/* follow.c: process events, rescans and scans (see follow.h). */
#include "autoconfig.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/config/config.h"
#include "daemon/core/registry.h"
#include "daemon/core/rules.h"
#include "daemon/cpu/isolate.h"
#include "daemon/follow.h"
#include "daemon/observe/jitter.h"
#include "daemon/service.h"
#include "daemon/sys/log.h"
#include "daemon/sys/clock.h"
#include "daemon/sys/procev.h"
#include "shared/cleanup.h"

/* What the walks look at per turn of the loop: as the connector's turn
 * (sys/procev.h), at most 64 tasks, for at most 200 us, checked every 4. */
#define FOLLOW_WALK_TASKS PROCEV_BATCH
#define FOLLOW_WALK_STEP 4u
/* Renamed processes waiting for their walk; more than this, and the whole
 * of /proc is walked instead. */
#define FOLLOW_PENDING_MAX 64u

struct follow {
	sd_event *event;
	struct service *svc;
	struct procev *procev;          /* NULL: connector unavailable, rescans instead */
	int procev_error;               /* why it is unavailable */
	sd_event_source *rescan_timer;
	uint64_t scan_usec;             /* duration of the last full /proc scan */
	size_t scan_tasks;              /* tasks it looked at */
	struct rules_walk walk;         /* the rescan after lost events, FOLLOW_WALK_TASKS a turn */
	bool walking, walk_again;       /* it goes; events were lost during it: once more from the start */
	struct rules_walk pwalk;        /* a renamed process's tasks, the same way */
	bool pwalking;
	pid_t pending[FOLLOW_PENDING_MAX]; /* renamed processes whose tasks wait for their walk */
	size_t n_pending;
	sd_event_source *walk_src;      /* a timer due at once, armed while a walk goes or waits */
};

/* What a rule's grant goes through (rules.h). */
static struct rules_ctx rules_of(const struct follow *f)
{
	return (struct rules_ctx){ f->svc->registry, f->svc->config, f->svc->ratelimit };
}

/* Whether anything needs to hear of tasks: match rules, registered
 * processes (their new threads), threads whose exit no pidfd reports, a
 * user's registered thread (its process's exec: a set-user-ID program's
 * ends the grant, and a thread that is not the main thread takes the pid
 * with its grant), and isolation (what is not managed leaves isolated CPUs);
 * otherwise every fork on the machine would wake the daemon for nothing. */
static bool needed(const struct follow *f)
{
	struct service *s = f->svc;

	return s->config->n_auto_rules > 0 || registry_n_processes(s->registry) > 0 ||
	       registry_n_exec_watched(s->registry) > 0 ||
	       (!registry_thread_pidfds(s->registry) && registry_n_threads(s->registry) > 0) ||
	       isolate_active(s->isolate);
}

static void ev_fork(void *ud, pid_t tid, pid_t tgid)
{
	struct follow *f = ud;
	struct rules_ctx x = rules_of(f);

	if (tid != tgid)
		registry_on_new_thread(f->svc->registry, f->svc->config, tid, tgid);
	rules_on_task(&x, tid, tgid, NULL, false);
	/* what is not managed now leaves isolated CPUs */
	isolate_on_fork(f->svc->isolate, tid, tgid);
}

static void ev_exec(void *ud, pid_t tid, pid_t tgid)
{
	struct follow *f = ud;
	struct rules_ctx x = rules_of(f);

	registry_on_exec(f->svc->registry, tgid);
	rules_on_process(&x, tgid);
}

/* The walks' next turn, after whatever else is waiting: a timer due at
 * once, not a defer source, which sd-event keeps pending from when it was
 * first enabled and so runs before anything that became ready since: a
 * long walk would hold every request and event until it ended. */
static void walk_kick(struct follow *f)
{
	sd_event_source_set_enabled(f->walk_src, SD_EVENT_ONESHOT);
}

/* The full walk of /proc from the start at the next turns; one under way
 * starts over once it ends. */
static void walk_all(struct follow *f)
{
	if (f->walking)
		f->walk_again = true;
	f->walking = true;
	walk_kick(f);
}

/* A thread renamed itself; the main thread's name is the process name too,
 * and every thread of the process is looked at again: in the walk's turns,
 * once however often it renames meanwhile. */
static void ev_comm(void *ud, pid_t tid, pid_t tgid, const char *comm)
{
	struct follow *f = ud;
	struct rules_ctx x = rules_of(f);

	if (tid != tgid || !(f->svc->config->match_needs & MATCH_NEED_PROCESS_NAME)) {
		rules_on_task(&x, tid, tgid, comm, false);
		return;
	}
	for (size_t i = 0; i < f->n_pending; i++)
		if (f->pending[i] == tgid)
			return;
	if (f->n_pending == FOLLOW_PENDING_MAX)
		walk_all(f);
	else
		f->pending[f->n_pending++] = tgid;
	walk_kick(f);
}

static void ev_exit(void *ud, pid_t tid, pid_t tgid)
{
	struct follow *f = ud;

	registry_on_exit(f->svc->registry, tid);
	jitter_on_exit(f->svc->jitter, tid);
}

/* What events could have told, looked for again: the registered
 * processes' task lists now, and /proc for rule matches a few tasks a turn
 * (on_walk); a walk under way starts over once it ends. */
static void rescan(struct follow *f)
{
	registry_rescan(f->svc->registry, f->svc->config);
	if (f->svc->config->n_auto_rules)
		walk_all(f);
}

/* Some steps of the walks: a renamed process's first, then the full one.
 * False when there is nothing left to walk. */
static bool walk_steps(struct follow *f, const struct rules_ctx *x)
{
	if (!f->pwalking && f->n_pending) {
		pid_t pid = f->pending[0];

		memmove(f->pending, f->pending + 1, --f->n_pending * sizeof(*f->pending));
		f->pwalking = rules_walk_process(&f->pwalk, pid) == 0;
		return true;
	}
	if (f->pwalking) {
		f->pwalking = !rules_walk_step(x, &f->pwalk, FOLLOW_WALK_STEP, false);
		return true;
	}
	if (f->walking) {
		if (rules_walk_step(x, &f->walk, FOLLOW_WALK_STEP, false)) {
			f->walking = f->walk_again; /* once more from the start */
			f->walk_again = false;
		}
		return true;
	}
	return false;
}

static int on_walk(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct follow *f = userdata;
	struct rules_ctx x = rules_of(f);
	uint64_t end = clock_usec(CLOCK_MONOTONIC) + PROCEV_SLICE_US;
	bool more = true;

	(void)s;
	(void)usec;
	for (unsigned n = 0; more && n < FOLLOW_WALK_TASKS; n += FOLLOW_WALK_STEP) {
		more = walk_steps(f, &x);
		if (clock_usec(CLOCK_MONOTONIC) >= end)
			break;
	}
	if (more && (f->walking || f->pwalking || f->n_pending)) {
		walk_kick(f);
		return 0;
	}
	f->svc->hooks->changed(f->svc->ud);
	return 0;
}

static void ev_overrun(void *ud)
{
	struct follow *f = ud;

	rescan(f);
	isolate_thread_gone(f->svc->isolate); /* forks were lost too: sweep again */
}

/* Fallback for a kernel or a sandbox without the connector: rescan the task
 * lists of registered processes while there are any, and sleep otherwise. */
static int on_rescan(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct follow *f = userdata;

	rescan(f);
	f->svc->hooks->changed(f->svc->ud);
	return 0;
}

int follow_new(struct follow **ret, sd_event *e, struct service *svc)
{
	static const struct procev_handlers h = { .on_fork = ev_fork, .on_exec = ev_exec, .on_comm = ev_comm,
						  .on_exit = ev_exit, .on_overrun = ev_overrun };
	_cleanup_free_ struct follow *f = calloc(1, sizeof(*f));
	int r;

	if (!f)
		return -ENOMEM;
	*f = (struct follow){ .event = e, .svc = svc };
	r = svc->config->process_events ? procev_new(&f->procev, e, &h, f) : -ENOTSUP;
	if (r < 0) {
		f->procev_error = r;
		log_errno(LOG_LEVEL_NOTICE, r == -ENOTSUP ? 0 : r, "process events connector %s; new and renamed "
			  "threads are found by rescanning /proc every %u ms",
			  r == -ENOTSUP ? "off (process-events = no)" : "unavailable", svc->config->rescan_ms);
		r = sd_event_add_time(e, &f->rescan_timer, CLOCK_MONOTONIC, 0, 0, on_rescan, f);
		if (r < 0)
			return r;
		sd_event_source_set_enabled(f->rescan_timer, SD_EVENT_OFF);
	}
	r = sd_event_add_time(e, &f->walk_src, CLOCK_MONOTONIC, 0, 0, on_walk, f);
	if (r < 0) {
		procev_free(f->procev);
		sd_event_source_disable_unref(f->rescan_timer);
		return r;
	}
	sd_event_source_set_enabled(f->walk_src, SD_EVENT_OFF);
	*ret = TAKE_PTR(f);
	return 0;
}

void follow_scan(struct follow *f, bool force)
{
	const struct config *c = f->svc->config;
	struct rules_ctx x = rules_of(f);
	uint64_t t0 = clock_usec(CLOCK_MONOTONIC);
	size_t n;

	f->scan_tasks = rules_scan(&x, force);
	f->scan_usec = clock_usec(CLOCK_MONOTONIC) - t0;
	n = registry_n_threads(f->svc->registry);
	if (c->n_auto_rules)
		log_info("scanned %zu tasks for %zu matching rule%s in %.1f ms, %zu thread%s managed", f->scan_tasks,
			 c->n_auto_rules, c->n_auto_rules == 1 ? "" : "s", f->scan_usec / 1000.0, n, n == 1 ? "" : "s");
}

void follow_events(struct follow *f)
{
	bool events = needed(f);
	int r;

	if (!f->procev || events == procev_active(f->procev))
		return;
	r = procev_set_active(f->procev, events);
	if (r < 0)
		log_errno(LOG_LEVEL_WARNING, r, "process events connector: cannot %s the drop filter",
			  events ? "remove" : "set");
	else if (events) /* what happened while events were dropped */
		registry_rescan(f->svc->registry, f->svc->config);
}

void follow_arm_rescan(struct follow *f)
{
	uint64_t now;

	if (f->procev || !f->rescan_timer || !needed(f))
		return;
	if (sd_event_source_get_enabled(f->rescan_timer, NULL) > 0)
		return;
	sd_event_now(f->event, CLOCK_MONOTONIC, &now);
	sd_event_source_set_time(f->rescan_timer, now + (uint64_t)f->svc->config->rescan_ms * 1000u);
	sd_event_source_set_enabled(f->rescan_timer, SD_EVENT_ONESHOT);
}

bool follow_connected(const struct follow *f)
{
	return f && f->procev;
}

void follow_status(const struct follow *f, struct service_status *st)
{
	st->scan_tasks = f->scan_tasks;
	st->scan_usec = f->scan_usec;
	st->procev = f->procev != NULL;
	st->procev_active = f->procev && procev_active(f->procev);
	procev_stats(f->procev, &st->procev_events, &st->procev_overruns);
	st->procev_error = f->procev_error;
}

void follow_free(struct follow *f)
{
	if (!f)
		return;
	procev_free(f->procev);
	sd_event_source_disable_unref(f->rescan_timer);
	sd_event_source_disable_unref(f->walk_src);
	rules_walk_stop(&f->walk);
	rules_walk_stop(&f->pwalk);
	free(f);
}
