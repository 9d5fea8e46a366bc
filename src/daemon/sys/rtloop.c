/* rtloop.c: the event loop's real-time policy and its CPU budget (see
 * rtloop.h for why and how). */
#include "autoconfig.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/sys/log.h"
#include "daemon/sys/rtloop.h"
#include "daemon/sys/clock.h"

#define NSEC_PER_MS 1000000ull

struct rtloop {
	sd_event *event;
	pid_t tid;
	struct rtloop_params p;
	bool realtime;              /* SCHED_FIFO now */
	bool stepped;               /* stepped down for the rest of this period */
	int error;
	uint64_t period_end;        /* CLOCK_MONOTONIC ns; 0: no period running */
	uint64_t period_cpu;        /* the loop's CPU time at the period's start */
	unsigned long stepdowns;
	uint64_t over_max;          /* the most CPU time a period ran beyond its budget */
	sd_event_source *post, *restore;
};

/* Set the calling thread (the loop) to SCHED_FIFO p->priority or back to
 * SCHED_OTHER, reset-on-fork both ways: threads the loop starts begin
 * SCHED_OTHER. 0 or -errno. */
static int set_policy(bool rt, int priority)
{
	struct sched_param sp = { .sched_priority = rt ? priority : 0 };

	if (sched_setscheduler(0, (rt ? SCHED_FIFO : SCHED_OTHER) | SCHED_RESET_ON_FORK, &sp) < 0)
		return -errno;
	return 0;
}

/* A new period from now. */
static void period_start(struct rtloop *l)
{
	l->period_end = clock_nsec(CLOCK_MONOTONIC) + RTLOOP_PERIOD_MS * NSEC_PER_MS;
	l->period_cpu = clock_nsec(CLOCK_THREAD_CPUTIME_ID);
}

/* The period is over: real-time again. */
static int on_restore(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct rtloop *l = userdata;
	int r;

	(void)s;
	(void)usec;
	if (!l->stepped)
		return 0;
	l->stepped = false;
	r = set_policy(true, l->p.priority);
	if (r < 0) {
		/* a cgroup move or a seccomp filter since: stay as we are */
		l->error = r;
		l->realtime = false;
		log_errno(LOG_LEVEL_WARNING, r, "event loop: cannot get SCHED_FIFO %d back; it stays SCHED_OTHER",
			  l->p.priority);
		return 0;
	}
	l->realtime = true;
	period_start(l);
	return 0;
}

/* After every event the loop dispatched: step down once the period's budget
 * is spent. */
static int on_post(sd_event_source *s, void *userdata)
{
	struct rtloop *l = userdata;
	uint64_t now, cpu, budget;
	int r;

	(void)s;
	if (!l->realtime || l->stepped || l->p.budget_pct < 0)
		return 0;
	now = clock_nsec(CLOCK_MONOTONIC);
	cpu = clock_nsec(CLOCK_THREAD_CPUTIME_ID);
	budget = RTLOOP_PERIOD_MS * NSEC_PER_MS * (uint64_t)l->p.budget_pct / 100u;
	/* what the period ran beyond its budget: the part of the last event
	 * after the budget ran out, also when that event outlasted the period
	 * (an upper bound: an event that began after the period's end counts
	 * whole, as if it had begun in it) */
	if (l->period_end && cpu - l->period_cpu > budget && cpu - l->period_cpu - budget > l->over_max)
		l->over_max = cpu - l->period_cpu - budget;
	if (now >= l->period_end) {
		period_start(l);
		return 0;
	}
	if (cpu - l->period_cpu < budget)
		return 0;
	r = set_policy(false, 0);
	if (r < 0) {
		log_errno(LOG_LEVEL_ERR, r, "event loop: cannot step down to SCHED_OTHER after its budget");
		return 0;
	}
	l->stepped = true;
	if (l->stepdowns++ == 0)
		log_notice("event loop: used its budget of %d%% of a CPU per %u ms; it runs SCHED_OTHER for the rest "
			   "of each such period (counted in `rtschedctl status`, loop_stepdowns)",
			   l->p.budget_pct, RTLOOP_PERIOD_MS);
	r = sd_event_source_set_time(l->restore, l->period_end / 1000u);
	if (r >= 0)
		r = sd_event_source_set_enabled(l->restore, SD_EVENT_ONESHOT);
	if (r < 0) {
		/* no timer, no way back: real-time again now rather than never */
		log_errno(LOG_LEVEL_ERR, r, "event loop: cannot arm its budget timer");
		on_restore(l->restore, 0, l);
	}
	return 0;
}

int rtloop_new(struct rtloop **ret, sd_event *e)
{
	struct rtloop *l = calloc(1, sizeof(*l));
	int r;

	*ret = NULL;
	if (!l)
		return -ENOMEM;
	l->event = sd_event_ref(e);
	l->tid = gettid();
	l->p.budget_pct = -1;
	if ((r = sd_event_add_post(e, &l->post, on_post, l)) < 0 ||
	    (r = sd_event_add_time(e, &l->restore, CLOCK_MONOTONIC, 0, 0, on_restore, l)) < 0) {
		rtloop_free(l);
		return r;
	}
	sd_event_source_set_enabled(l->post, SD_EVENT_OFF);
	sd_event_source_set_enabled(l->restore, SD_EVENT_OFF);
	/* the restore is what lets the loop be real-time again: before the
	 * requests; and the check right after each event, before any other
	 * that was pending at the same priority (sd-event dispatches one
	 * source per iteration, so a post source of the default priority
	 * waits behind them, and the budget would be checked only after
	 * several events) */
	sd_event_source_set_priority(l->restore, SD_EVENT_PRIORITY_IMPORTANT);
	sd_event_source_set_priority(l->post, SD_EVENT_PRIORITY_IMPORTANT);
	*ret = l;
	return 0;
}

int rtloop_apply(struct rtloop *l, const struct rtloop_params *p)
{
	bool was = l->realtime;
	int r;

	l->p = *p;
	l->stepped = false;
	l->period_end = 0;
	sd_event_source_set_enabled(l->restore, SD_EVENT_OFF);
	r = set_policy(p->priority > 0, p->priority);
	if (r < 0 && p->priority > 0) {
		if (r != l->error)
			log_errno(LOG_LEVEL_WARNING, r, "event loop: the kernel refused SCHED_FIFO %d; it runs "
				  "SCHED_OTHER (new threads' policies may then wait on a busy machine). Give rtschedd "
				  "CAP_SYS_NICE and a cgroup with real-time budget, or set loop-priority = 0", p->priority);
		l->error = r;
		l->realtime = false;
	} else if (r < 0) {
		log_errno(LOG_LEVEL_WARNING, r, "event loop: cannot set SCHED_OTHER");
	} else {
		l->error = 0;
		l->realtime = p->priority > 0;
		if (l->realtime && !was)
			log_info("event loop: SCHED_FIFO %d, budget %s", p->priority,
				 p->budget_pct < 0 ? "none" : "on");
	}
	return sd_event_source_set_enabled(l->post, l->realtime && p->budget_pct >= 0 ? SD_EVENT_ON : SD_EVENT_OFF);
}

pid_t rtloop_bounded_tid(const struct rtloop *l)
{
	return l && l->p.priority > 0 && l->p.budget_pct >= 0 ? l->tid : 0;
}

void rtloop_get_status(const struct rtloop *l, struct rtloop_status *out)
{
	memset(out, 0, sizeof(*out));
	out->budget_pct = -1;
	if (!l)
		return;
	out->priority = l->p.priority;
	out->budget_pct = l->p.budget_pct;
	out->realtime = l->realtime && !l->stepped;
	out->error = l->error;
	out->stepdowns = l->stepdowns;
	out->over_max_ns = l->over_max;
	out->cpu_ns = l->tid == gettid() ? clock_nsec(CLOCK_THREAD_CPUTIME_ID) : 0;
}

void rtloop_free(struct rtloop *l)
{
	if (!l)
		return;
	if (l->realtime && !l->stepped)
		set_policy(false, 0);
	sd_event_source_disable_unref(l->post);
	sd_event_source_disable_unref(l->restore);
	sd_event_unref(l->event);
	free(l);
}
