/* trip.c: what the watchdog does at a trip (see safety.h for why): in the
 * watchdog thread, the choice of the culprits from what the scan measured
 * and their demotion to SCHED_OTHER, into the trip record, without a lock,
 * an allocation or a line of output; in the main loop, the log lines, the
 * cooldown and the ops. */
#include "autoconfig.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/sys/cpulist.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "daemon/sys/proc.h"
#include "daemon/watchdog/safety_int.h"

/* --- the choices --------------------------------------------------------------- */

int safety_pick_culprit(const struct proc_stat *t, size_t n, int cpu)
{
	int best = -1;

	for (size_t i = 0; i < n; i++) {
		if (t[i].state != 'R' || t[i].processor != cpu ||
		    (t[i].policy != SCHED_FIFO && t[i].policy != SCHED_RR))
			continue;
		if (best < 0 || t[i].rt_priority > t[best].rt_priority ||
		    (t[i].rt_priority == t[best].rt_priority && t[i].cputime > t[best].cputime))
			best = (int)i;
	}
	return best;
}

size_t safety_pick_share(const uint64_t *ran, size_t n, uint64_t threshold_ns, bool *pick)
{
	uint64_t total = 0, rest;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		pick[i] = false;
		total += ran[i];
	}
	if (total < threshold_ns)
		return 0;
	/* the biggest first while what is left ran at least half of it all (a
	 * near half counts: two equal runaways, measured, differ by a little) */
	for (rest = total; k < n && rest && SAFETY_NEAR_HALF(rest, total); k++) {
		size_t top = n;
		for (size_t i = 0; i < n; i++)
			if (!pick[i] && (top == n || ran[i] > ran[top]))
				top = i;
		pick[top] = true;
		rest -= ran[top];
	}
	return k;
}

size_t safety_pick_duty(const uint64_t *ran, const uint64_t *span, size_t n, uint64_t threshold_ns, bool *pick)
{
	uint64_t sum = 0;
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (pick[i]) {
			sum += ran[i];
			k++;
		}
	for (;;) {
		size_t low = n;
		/* the lowest share (ran / span) of the picked ones that ran under
		 * 1/SAFETY_DUTY_MIN: compared as ran[i] * span[low] < ran[low] * span[i] */
		for (size_t i = 0; i < n; i++) {
			if (!pick[i] || SAFETY_DUTY_MIN * ran[i] >= span[i])
				continue;
			if (low == n || (unsigned __int128)ran[i] * span[low] < (unsigned __int128)ran[low] * span[i])
				low = i;
		}
		if (low == n || sum - ran[low] < threshold_ns)
			return k;
		pick[low] = false;
		sum -= ran[low];
		k--;
	}
}

/* --- the watchdog thread's side ---------------------------------------------- */

/* Who a runner is: a non-root user (its processes and threads together: a
 * fork or a new process does not dodge the blame), or one of root's
 * processes (root runs every service). */
static uint64_t unit_key(const struct track *t)
{
	return t->uid && t->uid != (uid_t)-1 ? (1ull << 63) | t->uid : (uint64_t)(uint32_t)t->pid;
}

/* The culprit entry for tracked thread tr, if the record has room; NULL if
 * it is there already or the record is full. */
static struct safety_culprit *culprit_add(struct safety *s, struct safety_trip *t, const struct track *tr,
					  int cpu, uint64_t ran)
{
	struct safety_culprit *c;

	for (size_t i = 0; i < t->n; i++)
		if (t->c[i].tid == tr->tid && t->c[i].starttime == tr->starttime)
			return NULL;
	if (t->n == SAFETY_TRIP_MAX)
		return NULL;
	c = &t->c[t->n++];
	memset(c, 0, sizeof(*c));
	c->tid = tr->tid;
	c->pid = tr->pid;
	c->starttime = tr->starttime;
	c->uid = tr->uid;
	c->cpu = cpu;
	c->policy = tr->policy;
	c->priority = tr->priority;
	c->ran_ns = ran;
	memcpy(c->comm, tr->comm, sizeof(c->comm));
	if (tr->pcomm[0])
		memcpy(c->pcomm, tr->pcomm, sizeof(c->pcomm));
	else
		safety_read_pcomm(s->scan, tr->pid, c->pcomm, sizeof(c->pcomm));
	return c;
}

/* Demote the culprit if rtschedd manages it (granted it real-time). */
static void culprit_demote(struct safety *s, const struct snapshot *snap, struct safety_trip *t,
			   struct safety_culprit *c, bool alive)
{
	c->managed = safety_is_managed(s, snap, c->tid, c->starttime);
	if (!c->managed || !alive)
		return;
	if (safety_scan_demote(s->scan, c->tid, c->pid, c->starttime) == 0) {
		c->demoted = true;
		t->n_demoted++;
	} else {
		t->n_failed++;
	}
}

/* The blamed runners of one starved CPU (watchdog-demote = culprit): by
 * what each user (root: each process) ran there, then within each by
 * thread (safety_pick_share() both times). */
static void blame_cpu(struct safety *s, const struct snapshot *snap, struct safety_trip *t, int cpu,
		      uint64_t threshold)
{
	struct scan *sc = s->scan;
	size_t m = 0, nu = 0;
	uint64_t total = 0;
	pid_t loop = atomic_load(&s->loop_tid), self = getpid(), me = gettid();

	for (size_t i = 0; i < sc->n; i++) {
		const struct track *tr = &sc->t[i];
		uint64_t key, ran, span;
		size_t k;

		if (!tr->tid)
			continue;
		/* what ran there, wherever it may run now (one that moved off
		 * does not dodge the blame, one that ran elsewhere is not
		 * blamed); and what may run there now, its twins waiting */
		ran = safety_track_ran_on(tr, cpu);
		if (!ran && !(tr->alive && safety_track_on(tr, cpu)))
			continue;
		/* the daemon's own loop: its budget bounds what it runs at
		 * real-time priority, below what any canary's wait counts; and the
		 * watchdog itself (the caller), whose looks measured the others */
		if (tr->pid == self && ((loop && tr->tid == loop) || tr->tid == me))
			continue;
		sc->cand[m] = i;
		sc->ran[m] = ran;
		total += sc->ran[m];
		key = unit_key(tr);
		for (k = 0; k < nu && sc->ukey[k] != key; k++)
			;
		if (k == nu) {
			sc->ukey[nu] = key;
			sc->uspan[nu] = 0;
			sc->uran[nu++] = 0;
		}
		sc->uran[k] += sc->ran[m++];
		/* the user was there as long as its longest-seen thread */
		span = safety_track_span(tr, ran);
		if (span > sc->uspan[k])
			sc->uspan[k] = span;
	}
	if (t->n_cpu_sum < SAFETY_TRIP_CPUS)
		t->cpu_sum[t->n_cpu_sum++] = (struct safety_cpu_sum){ cpu, total };
	/* measured, a thread that lived between two scans is missed, one that
	 * exited is counted up to the last scan: half the threshold is the bar */
	if (!safety_pick_share(sc->uran, nu, threshold / 2, sc->upick))
		return;   /* the real-time threads there ran too little to starve it */
	/* a user whose threads ran a small share of the time they were there
	 * is let off while the others picked account for the stall */
	safety_pick_duty(sc->uran, sc->uspan, nu, threshold / 2, sc->upick);
	for (size_t u = 0; u < nu; u++) {
		uint64_t rest = sc->uran[u];
		size_t best_dead = SIZE_MAX;

		if (!sc->upick[u])
			continue;
		/* its live threads, the biggest first, while the rest of what the
		 * user ran is at least half of it (what exited threads ran stays) */
		for (size_t j = 0; j < m; j++)
			sc->pick[j] = false;
		while (rest && SAFETY_NEAR_HALF(rest, sc->uran[u])) {
			size_t top = SIZE_MAX;
			for (size_t j = 0; j < m; j++) {
				const struct track *tr = &sc->t[sc->cand[j]];
				if (sc->pick[j] || unit_key(tr) != sc->ukey[u])
					continue;
				if (!tr->alive) {
					if (best_dead == SIZE_MAX || sc->ran[j] > sc->ran[best_dead])
						best_dead = j;
					continue;
				}
				if (top == SIZE_MAX || sc->ran[j] > sc->ran[top])
					top = j;
			}
			if (top == SIZE_MAX)
				break;
			sc->pick[top] = true;
			rest -= sc->ran[top] < rest ? sc->ran[top] : rest;
			struct safety_culprit *c = culprit_add(s, t, &sc->t[sc->cand[top]], cpu, sc->ran[top]);
			if (c)
				culprit_demote(s, snap, t, c, true);
		}
		/* and its real-time threads that wait there to run: behind one
		 * runaway, its equal-priority twins have run nothing yet, and
		 * each would take a trip of its own (32 of them, a minute of a
		 * starved CPU) */
		for (size_t j = 0; j < m; j++) {
			const struct track *tr = &sc->t[sc->cand[j]];
			struct safety_culprit *c;

			if (sc->pick[j] || !tr->alive || tr->state != 'R' || tr->processor != cpu ||
			    unit_key(tr) != sc->ukey[u] ||
			    !safety_is_managed(s, snap, tr->tid, tr->starttime))
				continue;
			if ((c = culprit_add(s, t, tr, cpu, sc->ran[j]))) {
				c->waiting = true;
				culprit_demote(s, snap, t, c, true);
			}
		}
		/* nothing of it lives on: name its biggest, gone */
		if (best_dead != SIZE_MAX && rest == sc->uran[u]) {
			const struct track *tr = &sc->t[sc->cand[best_dead]];
			struct safety_culprit *c = culprit_add(s, t, tr, cpu, sc->ran[best_dead]);
			if (c)
				c->managed = safety_is_managed(s, snap, tr->tid, tr->starttime);
		}
	}
}

/* watchdog-demote = all: every managed real-time thread that may run on a
 * starved CPU where a managed one was running. */
static void blame_all(struct safety *s, const struct snapshot *snap, struct safety_trip *t, const cpu_set_t *starved)
{
	struct scan *sc = s->scan;
	cpu_set_t guilty;

	CPU_ZERO(&guilty);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, starved))
			continue;
		for (size_t i = 0; i < sc->n; i++) {
			const struct track *tr = &sc->t[i];
			if (tr->tid && tr->alive && tr->processor == cpu &&
			    safety_is_managed(s, snap, tr->tid, tr->starttime))
				CPU_SET(cpu, &guilty);
		}
		if (t->n_cpu_sum < SAFETY_TRIP_CPUS)
			t->cpu_sum[t->n_cpu_sum++] = (struct safety_cpu_sum){ cpu, 0 };
	}
	for (size_t i = 0; CPU_COUNT(&guilty) && i < sc->n; i++) {
		const struct track *tr = &sc->t[i];
		struct safety_culprit *c;
		int cpu;

		if (!tr->tid || !tr->alive)
			continue;
		for (cpu = 0; cpu < CPU_SETSIZE && !(CPU_ISSET(cpu, &guilty) && safety_track_on(tr, cpu)); cpu++)
			;
		if (cpu == CPU_SETSIZE || !safety_is_managed(s, snap, tr->tid, tr->starttime))
			continue;
		if ((c = culprit_add(s, t, tr, cpu, safety_track_ran(tr))))
			culprit_demote(s, snap, t, c, true);
	}
}

/* Starvation on `starved`: demote here, in the FIFO 99 thread, because the
 * main loop may be starved by the very thread to demote, or stopped inside
 * a lock; then hand the record over (if the main loop took the last one)
 * and tell it. */
void safety_trip(struct safety *s, const cpu_set_t *starved, uint64_t worst_ns, uint64_t now_mono, unsigned duty_pct)
{
	struct scan *sc = s->scan;
	struct safety_trip *t = &sc->trip;
	const struct snapshot *snap;
	uint64_t one = 1;
	size_t slot;

	if (!sc->on)   /* late at the very first check: measure what runs now */
		safety_scan_begin(sc, now_mono, 0);
	/* as things stand now: the thread running at this instant may have
	 * been born since the last scan (a dodge's next spinner) */
	safety_scan_run(sc);
	memset(t, 0, sizeof(*t));
	t->starved = *starved;
	t->stall_ms = worst_ns / MSEC;
	t->span_ns = now_mono > sc->since_mono ? now_mono - sc->since_mono : 0;
	t->demote_all = atomic_load(&s->demote_all);
	t->duty_pct = duty_pct;
	snap = safety_snap_get(s);
	if (t->demote_all) {
		blame_all(s, snap, t, starved);
	} else {
		for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, starved))
				blame_cpu(s, snap, t, cpu, atomic_load(&s->threshold_ns));
	}
	safety_snap_put(s);
	safety_scan_end(sc);
	for (slot = 0; slot < TRIP_SLOTS && atomic_load(&s->trip_state[slot]) != TRIP_FREE; slot++)
		;
	if (slot == TRIP_SLOTS) {
		/* the main loop has taken none of the last ones: the CPU is rescued
		 * all the same; it will say how many it could not log */
		atomic_fetch_add(&s->unlogged, 1);
		return;
	}
	memcpy(&s->trip[slot], t, sizeof(*t));
	s->trip_seq[slot] = ++s->trips_made;
	atomic_store(&s->trip_state[slot], TRIP_READY);
	if (write(s->notify, &one, sizeof(one)) < 0) {
		/* the counter is full: the main loop has it already */
	}
}

/* --- the main loop's side ---------------------------------------------------- */

/* Append to the culprit text, cutting rather than failing. */
static void text_add(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(char *buf, const char *fmt, ...)
{
	size_t off = strlen(buf);
	va_list ap;

	if (off + 1 >= SAFETY_CULPRITS_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + off, SAFETY_CULPRITS_MAX - off, fmt, ap);
	va_end(ap);
}

/* "CPU 0: tid 12 (spin) of pid 10 (app), fifo/50, ran 3.8 s of the last 4.1 s; ..." */
static void trip_text(const struct safety_trip *t, char *buf)
{
	double span = (double)t->span_ns / NSEC;

	buf[0] = '\0';
	for (size_t i = 0; i < t->n; i++) {
		const struct safety_culprit *c = &t->c[i];

		text_add(buf, "%sCPU %d: tid %d (%s) of pid %d (%s), %s/%d, ran %.1f s of the last %.1f s (uid %u)%s",
			 buf[0] ? "; " : "", c->cpu, (int)c->tid, c->comm, (int)c->pid, c->pcomm,
			 policy_to_string(c->policy), c->priority, (double)c->ran_ns / NSEC, span, (unsigned)c->uid,
			 c->demoted ? (c->waiting ? ", waiting there to run" : "") :
			 !c->managed ? ", not a thread rtschedd manages: left alone" :
			 ", gone or not demoted");
	}
	for (size_t i = 0; i < t->n_cpu_sum; i++) {
		bool named = false;

		for (size_t k = 0; k < t->n && !named; k++)
			named = t->c[k].cpu == t->cpu_sum[i].cpu;
		if (named)
			continue;
		if (t->demote_all)
			text_add(buf, "%sCPU %d: no managed thread was running there (a task rtschedd does not manage "
				 "may be the cause)", buf[0] ? "; " : "", t->cpu_sum[i].cpu);
		else
			text_add(buf, "%sCPU %d: the real-time threads that may run there ran %.1f s of the last %.1f s "
				 "in all, too little to have starved it (a task that is not real-time, or interrupts, may be "
				 "the cause)", buf[0] ? "; " : "", t->cpu_sum[i].cpu,
				 (double)t->cpu_sum[i].total_ns / NSEC, span);
	}
}

/* The cooldown is over: grants again, and the demoted threads back. */
int safety_on_cooldown(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct safety *s = userdata;

	s->cooldown_until = 0;
	log_notice("watchdog: cooldown over; real-time grants allowed again and demoted threads promoted");
	if (s->ops.promote)
		s->ops.promote(s->ud);
	return 0;
}

/* One trip, its record in slot: log, start the cooldown, let the daemon
 * record it. */
static void trip_take(struct safety *s, size_t slot)
{
	struct safety_trip *t;
	unsigned long unlogged;
	size_t managed = 0;
	char cpus[128];
	uint64_t now;

	t = malloc(sizeof(*t));
	if (!t) {
		atomic_store(&s->trip_state[slot], TRIP_FREE);
		log_warnx("watchdog: tripped; out of memory for its record");
		return;
	}
	memcpy(t, &s->trip[slot], sizeof(*t));
	atomic_store(&s->trip_state[slot], TRIP_FREE);
	unlogged = atomic_exchange(&s->unlogged, 0);
	t->unlogged = unlogged;
	trip_text(t, t->culprits);
	cpulist_format(&t->starved, cpus, sizeof(cpus));   /* cut if it does not fit */
	if (unlogged)
		log_warnx("watchdog: %lu more trip%s while the daemon was not answering; what they demoted is "
			  "SCHED_OTHER, not listed as demoted", unlogged, unlogged == 1 ? "" : "s");
	for (size_t i = 0; i < t->n; i++)
		managed += t->c[i].managed;
	if (!managed) {
		/* nothing to blame among the managed threads: demoting them would
		 * not help the starved CPU and would punish the innocent */
		log_warnx("watchdog: CPU %s starved; %s; nothing demoted", cpus, t->culprits);
		free(t);
		return;
	}
	sd_event_now(s->event, CLOCK_BOOTTIME, &now);
	t->cooldown_until_usec = now + (uint64_t)s->params.cooldown_s * 1000000u;
	s->cooldown_until = t->cooldown_until_usec;
	s->trips++;
	snprintf(s->last_culprit, sizeof(s->last_culprit), "%s", t->culprits);
	if (t->duty_pct)
		log_warnx("watchdog: CPU %s: managed real-time threads kept up to %.1f s of the last %.1f s there "
			  "(watchdog-duty = %u%%), however often they let its canary run; demoted %zu managed real-time "
			  "thread%s to SCHED_OTHER (watchdog-demote = %s), real-time grants held back for %u s", cpus,
			  t->stall_ms / 1000.0, (double)t->span_ns / NSEC, t->duty_pct, t->n_demoted,
			  t->n_demoted == 1 ? "" : "s", t->demote_all ? "all" : "culprit", s->params.cooldown_s);
	else
		log_warnx("watchdog: CPU %s: SCHED_OTHER tasks were kept waiting %.1f s of the last %.1f s by real-time "
			  "threads; demoted %zu managed real-time thread%s to SCHED_OTHER (watchdog-demote = %s), "
			  "real-time grants held back for %u s", cpus, t->stall_ms / 1000.0,
			  atomic_load(&s->threshold_ns) * SAFETY_WINDOW_FACTOR / 1e9, t->n_demoted,
			  t->n_demoted == 1 ? "" : "s", t->demote_all ? "all" : "culprit", s->params.cooldown_s);
	log_warnx("watchdog: %s", t->culprits);
	if (t->n_failed)
		log_warnx("watchdog: %zu real-time thread%s could not be demoted", t->n_failed, t->n_failed == 1 ? "" : "s");
	if (s->ops.demoted)
		s->ops.demoted(s->ud, t);
	free(t);
	sd_event_source_set_time(s->cooldown_src, s->cooldown_until);
	sd_event_source_set_enabled(s->cooldown_src, SD_EVENT_ONESHOT);
}

/* The watchdog tripped: every record it made, oldest first. */
int safety_on_notify(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct safety *s = userdata;
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0)
		return 0;
	for (;;) {
		size_t first = TRIP_SLOTS;

		for (size_t i = 0; i < TRIP_SLOTS; i++)
			if (atomic_load(&s->trip_state[i]) == TRIP_READY &&
			    (first == TRIP_SLOTS || s->trip_seq[i] < s->trip_seq[first]))
				first = i;
		if (first == TRIP_SLOTS)
			return 0;
		trip_take(s, first);
	}
}
