/* duty.c: the watchdog's second test, which does not depend on the
 * canaries (watchdog audit I1). A canary counts only waits past
 * SAFETY_FLOOR_MS, and whether it is runnable can be read in /proc: a
 * runaway that steps aside whenever its CPU's canary becomes runnable keeps
 * every wait under the floor, and the CPU for itself, for as long as it
 * likes (only the kernel's RT throttling, where it is on, leaves the rest
 * 5%). So while managed threads exist and no canary is late, the watchdog
 * also runs duty windows, one after another: a window (SAFETY_WINDOW_FACTOR
 * thresholds) of looks at every real-time thread's run time, one per check
 * (an episode of scan.c's, through the task iterators only: through /proc
 * it would cost a CPU's share for good on a big machine), and at its end
 * what the managed threads ran on each CPU. A CPU they kept duty_pct of the
 * window or more trips as a starved one does, with the same blame: the
 * share tells a runaway from an audio thread, whose share stays small
 * however often it wakes. */
#include "autoconfig.h"

#include <string.h>

#include "daemon/watchdog/safety_int.h"

unsigned safety_duty_busy(const uint64_t *ran, size_t n, uint64_t span_ns, unsigned pct, cpu_set_t *busy,
			  uint64_t *worst)
{
	CPU_ZERO(busy);
	*worst = 0;
	if (!span_ns || !pct)
		return 0;
	for (size_t cpu = 0; cpu < n && cpu < CPU_SETSIZE; cpu++) {
		if (ran[cpu] < span_ns / 100 * pct)
			continue;
		CPU_SET(cpu, busy);
		if (ran[cpu] > *worst)
			*worst = ran[cpu];
	}
	return (unsigned)CPU_COUNT(busy);
}

/* A new window from now, its first look taken: what ran before it does
 * not count. */
static void duty_begin(struct safety *s, uint64_t now, uint64_t boot_ticks)
{
	struct scan *sc = s->scan;

	safety_scan_begin(sc, now, boot_ticks);
	sc->duty = true;
	sc->duty_end = now + atomic_load(&s->threshold_ns) * SAFETY_WINDOW_FACTOR;
	safety_scan_run(sc);
}

bool safety_duty_check(struct safety *s, bool late, uint64_t now, uint64_t boot_ticks)
{
	struct scan *sc = s->scan;
	unsigned pct = atomic_load(&s->duty_pct);
	const struct snapshot *snap;
	uint64_t worst;
	cpu_set_t busy;

	if (late || !pct || !sc->tasks) {
		sc->duty = false;   /* a canary's episode began afresh, or no windows: the next check ends them */
		return false;
	}
	if (!sc->on) {
		duty_begin(s, now, boot_ticks);
		return false;
	}
	if (!sc->duty || now < sc->duty_end)
		return false;
	/* the window is over (this check's look was its last): what the
	 * managed threads ran on each CPU, by the CPU each look saw them on */
	memset(sc->duty_ran, 0, sizeof(sc->duty_ran));
	snap = safety_snap_get(s);
	for (size_t i = 0; i < sc->n; i++) {
		const struct track *tr = &sc->t[i];

		if (!tr->tid || !safety_is_managed(s, snap, tr->tid, tr->starttime))
			continue;
		for (size_t k = 0; k < TRACK_CPUS; k++)
			if (tr->on[k].ns && tr->on[k].cpu >= 0 && tr->on[k].cpu < CPU_SETSIZE)
				sc->duty_ran[tr->on[k].cpu] += tr->on[k].ns;
	}
	safety_snap_put(s);
	if (!safety_duty_busy(sc->duty_ran, CPU_SETSIZE, now - sc->since_mono, pct, &busy, &worst)) {
		duty_begin(s, now, boot_ticks);
		return false;
	}
	safety_trip(s, &busy, worst, now, pct);
	return true;
}
