/* watch.c: the watchdog thread's starvation detection (see safety_int.h):
 * it judges each interval from two clocks (a suspend or a stopped daemon
 * restarts the windows), keeps a window of each canary's stall, and when
 * one reaches the threshold hands the starved CPUs to safety_trip(). */
#include "autoconfig.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/prctl.h>

#include "daemon/watchdog/safety_int.h"

/* --- the pure decisions (safety.h) --------------------------------------------- */

enum safety_clock_verdict safety_clock_check(const struct safety_clocks *prev, const struct safety_clocks *now,
					     uint64_t period_ns, bool canaries_ticked)
{
	uint64_t dm = now->mono - prev->mono, db = now->boot - prev->boot;
	uint64_t late_limit = period_ns > 100 * MSEC ? period_ns : 100 * MSEC;

	/* BOOTTIME counts a suspend, MONOTONIC does not: the canaries' waits
	 * then include the freeze before and the thaw after it. */
	if (db > dm && db - dm > SAFETY_SUSPEND_MARGIN_MS * MSEC)
		return SAFETY_CLOCK_SUSPENDED;
	/* Nothing a managed thread (priority <= 98) does can hold a FIFO 99
	 * thread this long: the whole daemon was stopped (SIGSTOP, freezer,
	 * a paused VM), and its canaries with it. Unless a canary ticked
	 * meanwhile: then only the watchdog was held, in the kernel (a look
	 * at /proc waits on a lookup of the same name by a task the runaway
	 * starves), and starting over would let the runaway be for ever. */
	if (dm > period_ns + late_limit && !canaries_ticked)
		return SAFETY_CLOCK_LATE;
	return SAFETY_CLOCK_OK;
}

uint64_t safety_stall_now(uint64_t stall_total, uint64_t deadline, uint64_t since, uint64_t now,
			  uint64_t floor_ns)
{
	uint64_t from = deadline > since ? deadline : since;

	if (now > from && now - from > floor_ns)
		return stall_total + (now - from);
	return stall_total;
}

uint64_t safety_canary_next(uint64_t now, uint64_t late, uint64_t tick, uint64_t window,
			    uint64_t *alert_until, uint64_t *rng)
{
	uint64_t x = *rng;

	if (late > SAFETY_FLOOR_MS * MSEC)
		*alert_until = now + window;
	if (now < *alert_until)
		return now + SAFETY_ALERT_TICK_MS * MSEC;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*rng = x;
	return now + tick / 2 + (tick ? (x * 0x2545F4914F6CDD1Dull) % tick : 0);
}

int safety_window_init(struct safety_window *w, size_t checks)
{
	w->size = checks + 1;   /* the baseline, then one sample per check */
	w->samples = calloc(w->size, sizeof(*w->samples));
	w->head = w->filled = 0;
	return w->samples ? 0 : -ENOMEM;
}

void safety_window_done(struct safety_window *w)
{
	free(w->samples);
	w->samples = NULL;
}

void safety_window_reset(struct safety_window *w)
{
	w->head = w->filled = 0;
}

uint64_t safety_window_push(struct safety_window *w, uint64_t stall_total)
{
	size_t oldest;

	w->samples[w->head] = stall_total;
	w->head = (w->head + 1) % w->size;
	if (w->filled < w->size)
		w->filled++;
	/* with the ring full, the slot after the newest holds the oldest */
	oldest = w->filled < w->size ? 0 : w->head;
	return stall_total > w->samples[oldest] ? stall_total - w->samples[oldest] : 0;
}

/* --- the watchdog thread ------------------------------------------------------ */

/* Whether a running canary ticked on time after `due`, when the watchdog
 * should have woken: then the daemon ran, and only the watchdog was held.
 * A tick from before a stop does not count (it came before `due`), nor
 * does the first after it (it is late: its deadline passed meanwhile). */
static bool canaries_ticked(struct safety *s, uint64_t due)
{
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		struct canary *c = atomic_load(&s->canary[cpu]);

		if (c && atomic_load(&c->w.want) == WANT_RUN && atomic_load(&c->ontime) > due)
			return true;
	}
	return false;
}

/* Restart every window: what happened before `mono` does not count. */
static void watchdog_restart(struct safety *s, uint64_t mono)
{
	atomic_store(&s->since, mono);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		struct canary *c = atomic_load(&s->canary[cpu]);
		if (c)
			c->seen_epoch = atomic_load(&c->epoch) - 1; /* reset at the next check */
	}
	safety_scan_end(s->scan);
}

/* CLOCK_BOOTTIME in the clock ticks /proc's starttime counts in. */
static uint64_t boot_ticks(const struct safety *s, uint64_t boot_ns)
{
	return clock_ticks_of(boot_ns, s->clk_tck);
}

/* Scan, and say when to next: a thread that lives shorter than the gap
 * between two scans is missed, so during an episode they come four times
 * per check, but never oftener than SAFETY_SCAN_SHARE_PCT of the time
 * allows (a machine with many tasks is scanned less often, not at the
 * cost of a CPU at priority 99). */
static void scan_now(struct safety *s)
{
	struct scan *sc = s->scan;
	uint64_t t0 = clock_nsec(CLOCK_MONOTONIC), took, gap = safety_tick_ns(s) / 4;

	safety_scan_run(sc);
	took = (clock_nsec(CLOCK_MONOTONIC) - t0) * (100 / SAFETY_SCAN_SHARE_PCT);
	sc->next_scan = t0 + (gap > took ? gap : took);
}

/* One check: sample each running canary; true if one starved (it tripped).
 * From the first late canary on, until the windows are quiet again, every
 * real-time thread's run time is read each check (an episode, scan.c). */
static bool watchdog_check(struct safety *s, const struct safety_clocks *now)
{
	uint64_t threshold = atomic_load(&s->threshold_ns), since = atomic_load(&s->since), worst = 0;
	struct scan *sc = s->scan;
	bool late = false;
	cpu_set_t starved;

	CPU_ZERO(&starved);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		struct canary *c = atomic_load(&s->canary[cpu]);
		unsigned ep;
		uint64_t total, dl, w;

		if (!c || atomic_load(&c->w.want) != WANT_RUN)
			continue;
		ep = atomic_load(&c->epoch);
		if (ep != c->seen_epoch) {
			c->seen_epoch = ep;
			safety_window_reset(&c->win);
		}
		total = atomic_load(&c->stall);    /* stall first: see canary_main */
		dl = atomic_load(&c->deadline);
		w = safety_window_push(&c->win, safety_stall_now(total, dl, since, now->mono, SAFETY_FLOOR_MS * MSEC));
		late |= w > 0;
		if (w >= threshold) {
			CPU_SET(cpu, &starved);
			if (w > worst)
				worst = w;
		}
	}
	/* a canary's episode starts afresh, a duty window's looks too: what
	 * ran before the first late canary is not what starved it (a steady
	 * thread's seconds before a runaway came) */
	if (late && (!sc->on || sc->duty))
		safety_scan_begin(sc, now->mono, boot_ticks(s, now->boot));
	else if (!late && sc->on && !sc->duty)
		safety_scan_end(sc);
	if (sc->on)
		scan_now(s);
	if (CPU_COUNT(&starved)) {
		safety_trip(s, &starved, worst, now->mono, 0);
		return true;
	}
	/* no canary starved: did managed threads keep a CPU all the same? */
	return safety_duty_check(s, late, now->mono, boot_ticks(s, now->boot));
}

/* Check every tick while something is published; park otherwise. */
void *safety_watch_main(void *arg)
{
	struct safety *s = arg;
	struct safety_clocks prev = { 0, 0 }, now;
	uint64_t next = 0;   /* CLOCK_MONOTONIC ns of the next check; 0: start afresh */
	unsigned pe = atomic_load(&s->param_epoch);

	/* no pthread_setname_np (it may open /proc/self/task/.../comm through
	 * stdio on some libcs): the name is given with prctl, a system call */
	prctl(PR_SET_NAME, "rtsd-watchdog");
	for (;;) {
		int want = atomic_load(&s->wd.want);
		uint64_t period = safety_tick_ns(s), t;

		if (want == WANT_EXIT)
			break;
		if (want == WANT_PARK) {
			safety_scan_end(s->scan);
			safety_worker_wait(&s->wd, UINT64_MAX);
			next = 0;
			continue;
		}
		if (pe != atomic_load(&s->param_epoch)) {
			pe = atomic_load(&s->param_epoch);
			next = 0;
		}
		if (next == 0) {
			safety_clocks_now(&prev);
			watchdog_restart(s, prev.mono);
			next = prev.mono + period;
		}
		t = clock_nsec(CLOCK_MONOTONIC);
		/* between two checks during a canary's episode; a duty window
		 * looks once a check */
		bool between = s->scan->on && !s->scan->duty;

		if (t < next && between && t >= s->scan->next_scan) {
			scan_now(s);
			continue;
		}
		if (t < next) {
			uint64_t until = between && s->scan->next_scan < next ? s->scan->next_scan : next;
			safety_worker_wait(&s->wd, until - t);
			continue;   /* kicked or not: re-read what to do */
		}
		safety_clocks_now(&now);
		if (safety_clock_check(&prev, &now, next - prev.mono, canaries_ticked(s, next)) != SAFETY_CLOCK_OK) {
			atomic_fetch_add(&s->suspends, 1);
			next = 0;
			continue;
		}
		prev = now;
		next = now.mono + period;
		if (watchdog_check(s, &now))
			next = 0;   /* fresh windows, or it trips again on the same waits */
	}
	return NULL;
}
