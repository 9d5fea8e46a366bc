/* canary.c: the per-CPU SCHED_OTHER canaries of the watchdog (see
 * safety_int.h): each is pinned to one CPU, ticks every threshold/8 on
 * average and adds each wait past a tick to its `stall`, which the
 * watchdog thread samples.
 *
 * When it ticks matters as much as how often. A canary that re-armed at
 * exactly its wake-up + tick would lock onto a periodic load's phase: it
 * wakes as a burst ends, so its next tick falls at the same point of the
 * next burst, every time. With 150 ms bursts and 10 ms gaps it would wait
 * 35 ms at each tick, under the floor, and never count the CPU taken 94%
 * of the time; 95 ms bursts with 20-30 ms gaps put every tick in a gap. So
 * its ticks are spread at random over half to one and a half ticks, which
 * no load can follow, and once a wait has counted it ticks every
 * SAFETY_ALERT_TICK_MS until a window passes with none: then each burst
 * longer than the floor is counted nearly whole, however the bursts and
 * gaps are timed. */
#include "autoconfig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "daemon/watchdog/safety_int.h"

/* A canary's loop: sleep to the next tick, count how late it woke. */
static void *canary_main(void *arg)
{
	struct canary *c = arg;
	struct safety *s = c->s;
	uint64_t alert_until = 0;   /* CLOCK_MONOTONIC ns: tick fast until then */
	char name[16];

	snprintf(name, sizeof(name), "rtsd-canary/%d", c->cpu);
	pthread_setname_np(pthread_self(), name);
	/* SCHED_OTHER load must not look like real-time starvation: the
	 * heaviest weight gets a canary through any crowd of nice-0 tasks,
	 * while real-time threads still preempt it. Without the privilege the
	 * floor still covers ordinary latencies. */
	setpriority(PRIO_PROCESS, (id_t)gettid(), -20);
	for (;;) {
		struct safety_clocks before, now;
		uint64_t dl, from, late;
		int want = atomic_load(&c->w.want);

		if (want == WANT_EXIT)
			break;
		if (want == WANT_PARK) {
			safety_worker_wait(&c->w, UINT64_MAX);
			continue;
		}
		dl = atomic_load(&c->deadline);
		safety_clocks_now(&before);
		if (before.mono < dl) {
			if (safety_worker_wait(&c->w, dl - before.mono))
				continue;
			safety_clocks_now(&now);
		} else {
			now = before;   /* late before it could even sleep */
		}
		/* slept through a suspend: the watchdog restarts the windows
		 * too, this covers the canary waking first */
		if (now.boot - before.boot > now.mono - before.mono + SAFETY_SUSPEND_MARGIN_MS * MSEC)
			late = 0;
		else {
			from = dl > atomic_load(&s->since) ? dl : atomic_load(&s->since);
			late = now.mono > from ? now.mono - from : 0;
		}
		/* deadline before stall: the watchdog reads stall first, so it
		 * may briefly miss this wait but never count it twice */
		atomic_store(&c->deadline, safety_canary_next(now.mono, late, safety_tick_ns(s),
							      atomic_load(&s->threshold_ns) * SAFETY_WINDOW_FACTOR,
							      &alert_until, &c->rng));
		if (late > SAFETY_FLOOR_MS * MSEC) {
			atomic_fetch_add(&c->stall, late);
			atomic_fetch_add(&c->late, 1);
		} else {
			atomic_store(&c->ontime, now.mono);   /* the daemon runs (canaries_ticked()) */
		}
	}
	return NULL;
}

/* The canary for `cpu`, created parked on first use. */
int safety_canary_get(struct safety *s, int cpu, struct canary **ret)
{
	struct canary *c = atomic_load(&s->canary[cpu]);
	cpu_set_t one;
	int r;

	if (c) {
		*ret = c;
		return 0;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->s = s;
	c->cpu = cpu;
	/* any non-zero seed: the ticks need only be unforeseeable by a load */
	c->rng = (clock_nsec(CLOCK_MONOTONIC) ^ ((uint64_t)cpu + 1) * 0x9E3779B97F4A7C15ull) | 1;
	c->w.kick = -1;
	atomic_store(&c->w.want, WANT_PARK);
	atomic_store(&c->deadline, UINT64_MAX);
	/* one sample per tick over the window, whatever the threshold */
	r = safety_window_init(&c->win, SAFETY_WINDOW_FACTOR * SAFETY_TICKS_PER_THRESHOLD);
	if (r < 0) {
		free(c);
		return r;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	r = safety_worker_start(&c->w, canary_main, c, SCHED_OTHER, 0, &one, 64 * 1024);
	if (r < 0) {
		safety_window_done(&c->win);
		free(c);
		return r;
	}
	atomic_store(&s->canary[cpu], c);
	*ret = c;
	return 0;
}
