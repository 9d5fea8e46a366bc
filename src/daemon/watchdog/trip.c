/* trip.c: what the watchdog does at a trip (see safety.h for why): the
 * run time of each published thread sampled once per threshold, the
 * choice of the culprits, their demotion to SCHED_OTHER in the watchdog
 * thread, and in the main loop the log lines, the cooldown and the ops. */
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

size_t safety_pick_runners(const uint64_t *ran, size_t n, uint64_t threshold_ns, bool *pick)
{
	uint64_t rest = 0;
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		pick[i] = false;
		rest += ran[i];
	}
	if (rest < threshold_ns)
		return 0;
	while (rest >= threshold_ns && k < n) {
		size_t top = n;
		for (size_t i = 0; i < n; i++)
			if (!pick[i] && (top == n || ran[i] > ran[top]))
				top = i;
		pick[top] = true;
		rest -= ran[top];
		k++;
	}
	return k;
}

/* --- the watchdog thread's side ---------------------------------------------- */

/* A thread's time on a CPU so far (ns), 0 if it is gone. */
uint64_t safety_run_ns(pid_t pid, pid_t tid)
{
	uint64_t run, delay, count;

	return proc_read_schedstat(pid, tid, &run, &delay, &count) == 0 ? run : 0;
}

/* Demote tid if it is still the thread started at starttime (safety.h). */
int safety_demote_tid(pid_t tid, uint64_t starttime)
{
	struct sched_param sp = { .sched_priority = 0 };
	struct proc_stat st;
	int pol;

	if (proc_read_stat(tid, &st) < 0 || st.starttime != starttime)
		return -ESRCH;
	pol = sched_getscheduler(tid);
	if (pol < 0)
		return -errno;
	if ((pol & ~SCHED_RESET_ON_FORK) != SCHED_FIFO && (pol & ~SCHED_RESET_ON_FORK) != SCHED_RR)
		return 0;
	/* sched_setscheduler keeps the nice value; keep reset-on-fork too */
	if (sched_setscheduler(tid, SCHED_OTHER | (pol & SCHED_RESET_ON_FORK), &sp) < 0)
		return -errno;
	return 0;
}

/* Append to the culprit text, cutting rather than failing. */
static void culprit_add(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void culprit_add(char *buf, const char *fmt, ...)
{
	size_t off = strlen(buf);
	va_list ap;

	if (off + 1 >= SAFETY_CULPRITS_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + off, SAFETY_CULPRITS_MAX - off, fmt, ap);
	va_end(ap);
}

/* A process's name, "?" if unreadable. */
static void read_comm(pid_t pid, char *buf, size_t len)
{
	if (proc_read_comm(pid, 0, buf, len) < 0)
		snprintf(buf, len, "?");
}

/* Sample every published thread's run time into the next slot. */
void safety_run_sample(struct safety *s, uint64_t mono)
{
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n_threads; i++)
		s->runs[i][s->run_head] = safety_run_ns(s->threads[i].pid, s->threads[i].tid);
	pthread_mutex_unlock(&s->lock);
	s->run_time[s->run_head] = mono;
	s->run_head = (s->run_head + 1) % RUN_SLOTS;
	if (s->run_filled < RUN_SLOTS)
		s->run_filled++;
}

/* The oldest run-time slot: its values are the baseline of the window. */
static unsigned run_oldest(const struct safety *s)
{
	return s->run_filled < RUN_SLOTS ? 0 : s->run_head;
}

/* Whether a thread is still the published one and real-time, and where it
 * may run now (its own sched_setaffinity may have widened what was published). */
static bool rt_thread_on(const struct safety *s, const struct safety_entry *th, const struct proc_stat *st,
			 cpu_set_t *cpus)
{
	int pol;

	if (st->state == 'X')
		return false;
	if (sched_getaffinity(th->tid, sizeof(*cpus), cpus) < 0)
		*cpus = s->cpusets[th->cpus];
	pol = sched_getscheduler(th->tid);
	return pol >= 0 && ((pol & ~SCHED_RESET_ON_FORK) == SCHED_FIFO || (pol & ~SCHED_RESET_ON_FORK) == SCHED_RR);
}

/* Demote thread i (once per trip) and add it to the trip's list. */
static void trip_demote(struct safety *s, size_t i, bool *done)
{
	const struct safety_entry *th = &s->threads[i];

	if (done[i])
		return;
	done[i] = true;
	if (safety_demote_tid(th->tid, th->starttime) == 0) {
		if (s->trip_demoted)
			s->trip_demoted[s->trip.n_demoted] = (struct safety_thread){ th->tid, th->pid, th->starttime,
										      s->cpusets[th->cpus] };
		s->trip.n_demoted++;
	} else {
		s->trip.n_failed++;
	}
}

/* watchdog-demote = all: every managed real-time thread that may run on a
 * starved CPU where one of them was running at the trip. */
static void trip_all(struct safety *s, const cpu_set_t *starved, const struct proc_stat *st, bool *done)
{
	struct safety_trip *t = &s->trip;
	cpu_set_t guilty;
	size_t n = s->n_threads;

	CPU_ZERO(&guilty);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		int k;
		if (!CPU_ISSET(cpu, starved))
			continue;
		k = safety_pick_culprit(st, n, cpu);
		if (k >= 0) {
			char pcomm[32];
			CPU_SET(cpu, &guilty);
			read_comm(s->threads[k].pid, pcomm, sizeof(pcomm));
			culprit_add(t->culprits, "%sCPU %d: tid %d (%s) of pid %d (%s), %s/%d, running", t->culprits[0] ? "; " : "",
				    cpu, (int)st[k].tid, st[k].comm, (int)s->threads[k].pid, pcomm,
				    policy_to_string(st[k].policy), st[k].rt_priority);
		} else {
			culprit_add(t->culprits, "%sCPU %d: no managed thread was running there (a task rtschedd "
				    "does not manage may be the cause)", t->culprits[0] ? "; " : "", cpu);
		}
	}
	for (size_t i = 0; CPU_COUNT(&guilty) && i < n; i++) {
		cpu_set_t cur, both;
		if (!rt_thread_on(s, &s->threads[i], &st[i], &cur))
			continue;
		CPU_AND(&both, &cur, &guilty);
		if (CPU_COUNT(&both))
			trip_demote(s, i, done);
	}
}

/* watchdog-demote = culprit: per starved CPU, the threads that used its time
 * in the window, by what each ran since the oldest run-time sample. */
static void trip_culprits(struct safety *s, const cpu_set_t *starved, const struct proc_stat *st, bool *done,
			  uint64_t now_mono)
{
	struct safety_trip *t = &s->trip;
	size_t n = s->n_threads, *cand = calloc(n ? n : 1, sizeof(*cand));
	uint64_t *ran = calloc(n ? n : 1, sizeof(*ran)), *ran_c = calloc(n ? n : 1, sizeof(*ran_c));
	bool *pick = calloc(n ? n : 1, sizeof(*pick)), *rt = calloc(n ? n : 1, sizeof(*rt));
	cpu_set_t *cur = calloc(n ? n : 1, sizeof(*cur));
	unsigned old = run_oldest(s);
	uint64_t from = s->run_filled ? s->run_time[old] : s->run_since;
	double span = now_mono > from ? (double)(now_mono - from) / NSEC : 0;
	uint64_t threshold = atomic_load(&s->threshold_ns);

	if (!cand || !ran || !ran_c || !pick || !rt || !cur) {
		culprit_add(t->culprits, "out of memory: nothing demoted");
		goto out;
	}
	/* once per thread, whatever the number of starved CPUs */
	for (size_t i = 0; i < n; i++) {
		uint64_t now = st[i].state == 'X' ? 0 : safety_run_ns(s->threads[i].pid, s->threads[i].tid);
		uint64_t base = s->runs[i][old];
		ran[i] = now > base ? now - base : 0;
		rt[i] = rt_thread_on(s, &s->threads[i], &st[i], &cur[i]);
	}
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		size_t m = 0, k;
		uint64_t total = 0;
		if (!CPU_ISSET(cpu, starved))
			continue;
		for (size_t i = 0; i < n; i++) {
			if (rt[i] && CPU_ISSET(cpu, &cur[i])) {
				cand[m] = i;
				ran_c[m++] = ran[i];
				total += ran[i];
			}
		}
		k = safety_pick_runners(ran_c, m, threshold, pick);
		if (!k) {
			culprit_add(t->culprits, "%sCPU %d: the managed real-time threads that may run there ran %.1f s "
				    "of the last %.1f s in all, too little to starve it (a task rtschedd does not manage "
				    "may be the cause)", t->culprits[0] ? "; " : "", cpu, (double)total / NSEC, span);
			continue;
		}
		for (size_t j = 0; j < m; j++) {
			size_t i = cand[j];
			char pcomm[32];
			if (!pick[j] || done[i])
				continue;
			read_comm(s->threads[i].pid, pcomm, sizeof(pcomm));
			culprit_add(t->culprits, "%sCPU %d: tid %d (%s) of pid %d (%s), %s/%d, ran %.1f s of the last %.1f s",
				    t->culprits[0] ? "; " : "", cpu, (int)st[i].tid, st[i].comm, (int)s->threads[i].pid,
				    pcomm, policy_to_string(st[i].policy), st[i].rt_priority, (double)ran[i] / NSEC, span);
			trip_demote(s, i, done);
		}
	}
out:
	free(cand);
	free(ran);
	free(ran_c);
	free(pick);
	free(rt);
	free(cur);
}

/* Starvation on `starved`: demote here, in the FIFO 99 thread, because the
 * main loop may be starved by the very thread to demote; then tell it. The
 * lock is held throughout so the list cannot change under us; trips are rare
 * and the main loop waits a few ms at most. */
void safety_trip(struct safety *s, const cpu_set_t *starved, uint64_t worst_ns, uint64_t now_mono)
{
	struct safety_trip *t = &s->trip;
	struct proc_stat *st;
	uint64_t one = 1;
	bool *done;
	size_t n;

	pthread_mutex_lock(&s->lock);
	n = s->n_threads;
	memset(t, 0, sizeof(*t));
	t->starved = *starved;
	t->stall_ms = worst_ns / MSEC;
	t->demote_all = s->params.demote_all;
	st = calloc(n ? n : 1, sizeof(*st));
	done = calloc(n ? n : 1, sizeof(*done));
	s->trip_demoted = calloc(n ? n : 1, sizeof(*s->trip_demoted));
	for (size_t i = 0; st && i < n; i++) {
		const struct safety_entry *th = &s->threads[i];
		if (proc_read_stat_at(NULL, th->pid, th->tid, &st[i]) < 0 || st[i].starttime != th->starttime)
			st[i].state = 'X';  /* gone, or the tid names another thread */
	}
	if (!st || !done)
		culprit_add(t->culprits, "out of memory: nothing demoted");
	else if (t->demote_all)
		trip_all(s, starved, st, done);
	else
		trip_culprits(s, starved, st, done, now_mono);
	free(st);
	free(done);
	/* nothing to blame among the managed threads: demoting them would not
	 * help the starved CPU and would punish the innocent */
	if (!t->n_demoted && !t->n_failed) {
		free(s->trip_demoted);
		s->trip_demoted = NULL;
		pthread_mutex_unlock(&s->lock);
		log_warnx("watchdog: %s; nothing demoted", t->culprits);
		return;
	}
	s->trip_pending = true;
	pthread_mutex_unlock(&s->lock);
	if (write(s->notify, &one, sizeof(one)) < 0) {
		/* the counter is full: the main loop has it already */
	}
}

/* --- the main loop's side ---------------------------------------------------- */

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

/* The watchdog tripped: log, start the cooldown, let the daemon record it. */
int safety_on_notify(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	struct safety *s = userdata;
	struct safety_trip t;
	struct safety_thread *demoted;
	char cpus[128];
	uint64_t v, now;

	if (read(fd, &v, sizeof(v)) < 0)
		return 0;
	pthread_mutex_lock(&s->lock);
	if (!s->trip_pending) {
		pthread_mutex_unlock(&s->lock);
		return 0;
	}
	t = s->trip;
	demoted = s->trip_demoted;
	s->trip_demoted = NULL;
	pthread_mutex_unlock(&s->lock);

	t.demoted = demoted;
	sd_event_now(s->event, CLOCK_BOOTTIME, &now);
	t.cooldown_until_usec = now + (uint64_t)s->params.cooldown_s * 1000000u;
	s->cooldown_until = t.cooldown_until_usec;
	s->trips++;
	snprintf(s->last_culprit, sizeof(s->last_culprit), "%s", t.culprits);
	cpulist_format(&t.starved, cpus, sizeof(cpus));   /* cut if it does not fit */
	log_warnx("watchdog: CPU %s: SCHED_OTHER tasks were kept waiting %.1f s of the last %.1f s by real-time "
		  "threads; demoted %zu managed real-time thread%s to SCHED_OTHER (watchdog-demote = %s), real-time "
		  "grants held back for %u s", cpus, t.stall_ms / 1000.0,
		  atomic_load(&s->threshold_ns) * SAFETY_WINDOW_FACTOR / 1e9, t.n_demoted, t.n_demoted == 1 ? "" : "s",
		  t.demote_all ? "all" : "culprit", s->params.cooldown_s);
	log_warnx("watchdog: %s", t.culprits);
	if (t.n_failed)
		log_warnx("watchdog: %zu real-time thread%s could not be demoted", t.n_failed, t.n_failed == 1 ? "" : "s");
	if (!demoted)
		t.n_demoted = 0;   /* no memory for the list: the daemon demotes by CPU */
	if (s->ops.demoted)
		s->ops.demoted(s->ud, &t);
	free(demoted);
	sd_event_source_set_time(s->cooldown_src, s->cooldown_until);
	sd_event_source_set_enabled(s->cooldown_src, SD_EVENT_ONESHOT);

	pthread_mutex_lock(&s->lock);
	s->trip_pending = false;
	pthread_mutex_unlock(&s->lock);
	return 0;
}
