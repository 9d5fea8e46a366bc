/* safety.c: the starvation watchdog (see safety.h for what and why).
 *
 * Threads and what they share:
 *   canary (one per watched CPU, SCHED_OTHER nice -20, pinned): ticks every
 *     threshold/8 and adds each wait past a tick (over the floor) to `stall`.
 *   watchdog (SCHED_FIFO 99): samples every canary's total each tick, keeps a
 *     window per CPU, and on starvation demotes and writes `notify`.
 *   main loop: publishes threads, parks and wakes the others through their
 *     `kick` eventfd, logs, runs the cooldown and calls the ops.
 * Counters are C11 atomics written by one thread each. The thread list and
 * the trip record sit behind one priority-inheriting mutex: the main loop or
 * a canary holding it while a spinner preempts it must not stall the
 * watchdog, so the watchdog's priority is lent to whoever holds it. */
#include "autoconfig.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "daemon/sys/cpulist.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "daemon/sys/proc.h"
#include "daemon/watchdog/safety.h"

#define NSEC 1000000000ull
#define MSEC 1000000ull

enum { WANT_PARK, WANT_RUN, WANT_EXIT };

/* Run-time samples kept per thread: one per threshold across the window. */
#define RUN_SLOTS (SAFETY_WINDOW_FACTOR + 1)

/* A thread of this module and how the main loop steers it. */
struct worker {
	pthread_t th;
	bool started;
	int kick;             /* eventfd: re-read `want` */
	_Atomic int want;
};

struct canary {
	struct worker w;
	struct safety *s;
	int cpu;
	_Atomic uint64_t deadline;  /* CLOCK_MONOTONIC ns of the tick it waits for */
	_Atomic uint64_t stall;     /* ns it was kept waiting past its ticks, in total */
	_Atomic unsigned epoch;     /* bumped at each start: the watchdog restarts its window */
	/* the watchdog thread's own */
	struct safety_window win;
	unsigned seen_epoch;
};

struct safety {
	sd_event *event;
	struct safety_params params;
	struct safety_ops ops;
	void *ud;
	cpu_set_t allowed;                 /* CPUs this process may pin a canary to */
	_Atomic uint64_t threshold_ns;
	_Atomic uint64_t since;            /* CLOCK_MONOTONIC ns: waits before it don't count */
	_Atomic unsigned param_epoch;
	_Atomic unsigned long suspends;

	struct worker wd;
	struct canary *_Atomic canary[CPU_SETSIZE];
	cpu_set_t running;                 /* the main loop's view */

	pthread_mutex_t lock;              /* PI; guards the fields below */
	struct safety_thread *threads;
	uint64_t (*runs)[RUN_SLOTS];       /* each thread's run time (ns) at each sample, by slot */
	size_t n_threads;
	bool trip_pending;                 /* the watchdog waits for the main loop */
	struct safety_trip trip;
	struct safety_thread *trip_demoted;

	int notify;                        /* eventfd: watchdog -> main loop */
	sd_event_source *notify_src, *cooldown_src;
	uint64_t cooldown_until;           /* CLOCK_BOOTTIME usec; 0: no cooldown */
	unsigned long trips;
	char last_culprit[SAFETY_CULPRITS_MAX];

	/* the watchdog thread's own: when each slot of `runs` was sampled */
	uint64_t run_time[RUN_SLOTS];      /* CLOCK_MONOTONIC ns */
	unsigned run_head, run_filled, run_ticks;
	uint64_t run_since;                /* when sampling (re)started */
};

/* --- pure decisions ---------------------------------------------------------- */

enum safety_clock_verdict safety_clock_check(const struct safety_clocks *prev, const struct safety_clocks *now,
					     uint64_t period_ns)
{
	uint64_t dm = now->mono - prev->mono, db = now->boot - prev->boot;
	uint64_t late_limit = period_ns > 100 * MSEC ? period_ns : 100 * MSEC;

	/* BOOTTIME counts a suspend, MONOTONIC does not: the canaries' waits
	 * then include the freeze before and the thaw after it. */
	if (db > dm && db - dm > SAFETY_SUSPEND_MARGIN_MS * MSEC)
		return SAFETY_CLOCK_SUSPENDED;
	/* Nothing a managed thread (priority <= 98) does can hold a FIFO 99
	 * thread this long: the whole daemon was stopped (SIGSTOP, freezer,
	 * a paused VM), and its canaries with it. */
	if (dm > period_ns + late_limit)
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

/* --- helpers ----------------------------------------------------------------- */

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC + (uint64_t)ts.tv_nsec;
}

static void clocks_now(struct safety_clocks *c)
{
	c->mono = now_ns(CLOCK_MONOTONIC);
	c->boot = now_ns(CLOCK_BOOTTIME);
}

static uint64_t tick_ns(struct safety *s)
{
	return atomic_load(&s->threshold_ns) / SAFETY_TICKS_PER_THRESHOLD;
}

/* Wait for a kick or timeout_ns (UINT64_MAX: none). True if kicked or
 * interrupted, so the caller re-reads what it should do. */
static bool wait_kick(struct worker *w, uint64_t timeout_ns)
{
	struct pollfd p = { .fd = w->kick, .events = POLLIN };
	struct timespec ts = { (time_t)(timeout_ns / NSEC), (long)(timeout_ns % NSEC) };
	uint64_t v;
	int r = ppoll(&p, 1, timeout_ns == UINT64_MAX ? NULL : &ts, NULL);

	if (r > 0) {
		if (read(w->kick, &v, sizeof(v)) < 0) {
			/* another wake-up already drained it */
		}
		return true;
	}
	return r < 0;
}

/* Tell a worker to run, park or exit. */
static void steer(struct worker *w, int want)
{
	uint64_t one = 1;

	atomic_store(&w->want, want);
	if (write(w->kick, &one, sizeof(one)) < 0) {
		/* the counter is full: it is awake anyway */
	}
}

/* Start a thread with every signal blocked (the main loop takes signals
 * through signalfd) and the given scheduling, affinity and small stack. */
static int start_thread(struct worker *w, void *(*fn)(void *), void *arg, int policy, int prio,
			const cpu_set_t *cpus, size_t stack)
{
	struct sched_param sp = { .sched_priority = prio };
	pthread_attr_t a;
	sigset_t all, old;
	int r;

	w->kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->kick < 0)
		return -errno;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, stack);
	pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&a, policy);
	pthread_attr_setschedparam(&a, &sp);
	if (cpus)
		pthread_attr_setaffinity_np(&a, sizeof(*cpus), cpus);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	r = pthread_create(&w->th, &a, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&a);
	if (r) {
		close(w->kick);
		w->kick = -1;
		return -r;
	}
	w->started = true;
	return 0;
}

/* Ask a thread to exit and join it, for at most a second: a canary starved
 * by a thread nobody demoted would hold the daemon's exit forever. False if
 * it is still running (its memory must then stay). */
static bool stop_thread(struct worker *w)
{
	struct timespec ts;

	if (!w->started)
		return true;
	steer(w, WANT_EXIT);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 1;
	if (pthread_timedjoin_np(w->th, NULL, &ts) != 0)
		return false;
	close(w->kick);
	w->started = false;
	return true;
}

/* A thread's time on a CPU so far (ns), 0 if it is gone. */
static uint64_t run_ns(const struct safety_thread *th)
{
	uint64_t run, delay, count;

	return proc_read_schedstat(th->pid, th->tid, &run, &delay, &count) == 0 ? run : 0;
}

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

/* --- the canary -------------------------------------------------------------- */

static void *canary_main(void *arg)
{
	struct canary *c = arg;
	struct safety *s = c->s;
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
			wait_kick(&c->w, UINT64_MAX);
			continue;
		}
		dl = atomic_load(&c->deadline);
		clocks_now(&before);
		if (before.mono < dl) {
			if (wait_kick(&c->w, dl - before.mono))
				continue;
			clocks_now(&now);
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
		atomic_store(&c->deadline, now.mono + tick_ns(s));
		if (late > SAFETY_FLOOR_MS * MSEC)
			atomic_fetch_add(&c->stall, late);
	}
	return NULL;
}

/* --- the watchdog ------------------------------------------------------------ */

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
static void run_sample(struct safety *s, uint64_t mono)
{
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n_threads; i++)
		s->runs[i][s->run_head] = run_ns(&s->threads[i]);
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
static bool rt_thread_on(const struct safety_thread *th, const struct proc_stat *st, cpu_set_t *cpus)
{
	int pol;

	if (st->state == 'X')
		return false;
	if (sched_getaffinity(th->tid, sizeof(*cpus), cpus) < 0)
		*cpus = th->cpus;
	pol = sched_getscheduler(th->tid);
	return pol >= 0 && ((pol & ~SCHED_RESET_ON_FORK) == SCHED_FIFO || (pol & ~SCHED_RESET_ON_FORK) == SCHED_RR);
}

/* Demote thread i (once per trip) and add it to the trip's list. */
static void trip_demote(struct safety *s, size_t i, bool *done)
{
	const struct safety_thread *th = &s->threads[i];

	if (done[i])
		return;
	done[i] = true;
	if (safety_demote_tid(th->tid, th->starttime) == 0) {
		if (s->trip_demoted)
			s->trip_demoted[s->trip.n_demoted] = *th;
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
		if (!rt_thread_on(&s->threads[i], &st[i], &cur))
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
		uint64_t now = st[i].state == 'X' ? 0 : run_ns(&s->threads[i]), base = s->runs[i][old];
		ran[i] = now > base ? now - base : 0;
		rt[i] = rt_thread_on(&s->threads[i], &st[i], &cur[i]);
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
static void watchdog_trip(struct safety *s, const cpu_set_t *starved, uint64_t worst_ns, uint64_t now_mono)
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
		const struct safety_thread *th = &s->threads[i];
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

/* Restart every window: what happened before `mono` does not count. */
static void watchdog_restart(struct safety *s, uint64_t mono)
{
	atomic_store(&s->since, mono);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		struct canary *c = atomic_load(&s->canary[cpu]);
		if (c)
			c->seen_epoch = atomic_load(&c->epoch) - 1; /* reset at the next check */
	}
}

/* One check: sample each running canary; true if one starved (it tripped). */
static bool watchdog_check(struct safety *s, uint64_t now_mono)
{
	uint64_t threshold = atomic_load(&s->threshold_ns), since = atomic_load(&s->since), worst = 0;
	cpu_set_t starved;
	bool pending;

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
		w = safety_window_push(&c->win, safety_stall_now(total, dl, since, now_mono, SAFETY_FLOOR_MS * MSEC));
		if (w >= threshold) {
			CPU_SET(cpu, &starved);
			if (w > worst)
				worst = w;
		}
	}
	if (!CPU_COUNT(&starved))
		return false;
	pthread_mutex_lock(&s->lock);
	pending = s->trip_pending;
	pthread_mutex_unlock(&s->lock);
	if (pending)
		return false;   /* the main loop has not taken the last one yet */
	watchdog_trip(s, &starved, worst, now_mono);
	return true;
}

static void *watchdog_main(void *arg)
{
	struct safety *s = arg;
	struct safety_clocks prev = { 0, 0 }, now;
	uint64_t next = 0;   /* CLOCK_MONOTONIC ns of the next check; 0: start afresh */
	unsigned pe = atomic_load(&s->param_epoch);

	pthread_setname_np(pthread_self(), "rtsd-watchdog");
	for (;;) {
		int want = atomic_load(&s->wd.want);
		uint64_t period = tick_ns(s), t;

		if (want == WANT_EXIT)
			break;
		if (want == WANT_PARK) {
			/* nothing published: the run-time history starts again */
			s->run_filled = s->run_head = s->run_ticks = 0;
			s->run_since = 0;
			wait_kick(&s->wd, UINT64_MAX);
			next = 0;
			continue;
		}
		if (pe != atomic_load(&s->param_epoch)) {
			pe = atomic_load(&s->param_epoch);
			next = 0;
		}
		if (next == 0) {
			clocks_now(&prev);
			watchdog_restart(s, prev.mono);
			next = prev.mono + period;
		}
		t = now_ns(CLOCK_MONOTONIC);
		if (t < next) {
			wait_kick(&s->wd, next - t);
			continue;   /* kicked or not: re-read what to do */
		}
		clocks_now(&now);
		if (safety_clock_check(&prev, &now, next - prev.mono) != SAFETY_CLOCK_OK) {
			atomic_fetch_add(&s->suspends, 1);
			next = 0;
			continue;
		}
		prev = now;
		next = now.mono + period;
		if (!s->run_since)
			s->run_since = now.mono;
		if (watchdog_check(s, now.mono))
			next = 0;   /* fresh windows, or it trips again on the same waits */
		else if (++s->run_ticks % SAFETY_TICKS_PER_THRESHOLD == 0)
			run_sample(s, now.mono);
	}
	return NULL;
}

/* --- the main loop's side ---------------------------------------------------- */

static int on_cooldown(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct safety *s = userdata;

	s->cooldown_until = 0;
	log_notice("watchdog: cooldown over; real-time grants allowed again and demoted threads promoted");
	if (s->ops.promote)
		s->ops.promote(s->ud);
	return 0;
}

/* The watchdog tripped: log, start the cooldown, let the daemon record it. */
static int on_notify(sd_event_source *src, int fd, uint32_t revents, void *userdata)
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

/* The canary for `cpu`, created parked on first use. */
static int canary_get(struct safety *s, int cpu, struct canary **ret)
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
	r = start_thread(&c->w, canary_main, c, SCHED_OTHER, 0, &one, 64 * 1024);
	if (r < 0) {
		safety_window_done(&c->win);
		free(c);
		return r;
	}
	atomic_store(&s->canary[cpu], c);
	*ret = c;
	return 0;
}

static int cmp_tid_index(const void *a, const void *b, void *arg)
{
	const struct safety_thread *t = arg;
	pid_t x = t[*(const size_t *)a].tid, y = t[*(const size_t *)b].tid;

	return (x > y) - (x < y);
}

/* The index in old[] (sorted through by_tid) of the same thread as th, or n. */
static size_t find_old(const struct safety_thread *old, const size_t *by_tid, size_t n, const struct safety_thread *th)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct safety_thread *o = &old[by_tid[mid]];
		if (o->tid < th->tid)
			lo = mid + 1;
		else if (o->tid > th->tid)
			hi = mid;
		else
			return o->starttime == th->starttime ? by_tid[mid] : n;
	}
	return n;
}

int safety_set_threads(struct safety *s, const struct safety_thread *t, size_t n)
{
	struct safety_thread *copy = NULL, *old;
	uint64_t (*runs)[RUN_SLOTS] = NULL, (*old_runs)[RUN_SLOTS];
	size_t *from = NULL, *by_tid = NULL, n_old;
	cpu_set_t want;
	int r = 0;

	if (!s || !s->params.enabled)
		return 0;
	/* only the main loop replaces the list, so it may read it unlocked; the
	 * run-time samples are the watchdog's and are copied under the lock */
	n_old = s->n_threads;
	if (n) {
		copy = malloc(n * sizeof(*copy));
		runs = calloc(n, sizeof(*runs));
		from = malloc(n * sizeof(*from));
		by_tid = malloc((n_old ? n_old : 1) * sizeof(*by_tid));
		if (!copy || !runs || !from || !by_tid) {
			free(copy);
			free(runs);
			free(from);
			free(by_tid);
			return -ENOMEM;
		}
		memcpy(copy, t, n * sizeof(*copy));
		for (size_t i = 0; i < n_old; i++)
			by_tid[i] = i;
		qsort_r(by_tid, n_old, sizeof(*by_tid), cmp_tid_index, s->threads);
		for (size_t i = 0; i < n; i++) {
			from[i] = find_old(s->threads, by_tid, n_old, &t[i]);
			if (from[i] == n_old) {
				/* new here: what it ran before does not count */
				uint64_t now = run_ns(&t[i]);
				for (unsigned k = 0; k < RUN_SLOTS; k++)
					runs[i][k] = now;
			}
		}
	}
	CPU_ZERO(&want);
	for (size_t i = 0; i < n; i++)
		CPU_OR(&want, &want, &t[i].cpus);
	CPU_AND(&want, &want, &s->allowed);

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < n; i++)
		if (from[i] < n_old)
			memcpy(runs[i], s->runs[from[i]], sizeof(runs[i]));
	old = s->threads;
	old_runs = s->runs;
	s->threads = copy;
	s->runs = runs;
	s->n_threads = n;
	pthread_mutex_unlock(&s->lock);
	free(old);
	free(old_runs);
	free(from);
	free(by_tid);

	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		struct canary *c;
		bool on = CPU_ISSET(cpu, &want), was = CPU_ISSET(cpu, &s->running);
		if (on == was)
			continue;
		if (!on) {
			c = atomic_load(&s->canary[cpu]);
			atomic_store(&c->deadline, UINT64_MAX);
			steer(&c->w, WANT_PARK);
			CPU_CLR(cpu, &s->running);
			continue;
		}
		int e = canary_get(s, cpu, &c);
		if (e < 0) {
			log_errno(LOG_LEVEL_WARNING, e, "watchdog: cannot start the canary for CPU %d", cpu);
			r = e;
			continue;
		}
		/* the first tick is due now + tick even if the canary cannot run
		 * to set it: a canary starved from the start still counts */
		atomic_store(&c->deadline, now_ns(CLOCK_MONOTONIC) + tick_ns(s));
		atomic_fetch_add(&c->epoch, 1);
		steer(&c->w, WANT_RUN);
		CPU_SET(cpu, &s->running);
	}
	if (CPU_COUNT(&s->running) && atomic_load(&s->wd.want) != WANT_RUN) {
		log_debug("watchdog: watching %d CPU%s with %zu real-time thread%s", CPU_COUNT(&s->running),
			  CPU_COUNT(&s->running) == 1 ? "" : "s",
			  n, n == 1 ? "" : "s");
		steer(&s->wd, WANT_RUN);
	} else if (!CPU_COUNT(&s->running) && atomic_load(&s->wd.want) == WANT_RUN) {
		steer(&s->wd, WANT_PARK);
	}
	return r;
}

void safety_set_params(struct safety *s, const struct safety_params *p)
{
	if (!s)
		return;
	s->params.threshold_ms = p->threshold_ms;
	s->params.cooldown_s = p->cooldown_s;
	pthread_mutex_lock(&s->lock);   /* the watchdog thread reads it at a trip */
	s->params.demote_all = p->demote_all;
	pthread_mutex_unlock(&s->lock);
	if (atomic_load(&s->threshold_ns) != (uint64_t)p->threshold_ms * MSEC) {
		atomic_store(&s->threshold_ns, (uint64_t)p->threshold_ms * MSEC);
		atomic_fetch_add(&s->param_epoch, 1);
		if (s->params.enabled)
			steer(&s->wd, atomic_load(&s->wd.want));
	}
}

bool safety_in_cooldown(const struct safety *s)
{
	return s && s->cooldown_until != 0;
}

void safety_get_status(const struct safety *s, struct safety_status *out)
{
	uint64_t now;

	memset(out, 0, sizeof(*out));
	if (!s)
		return;
	out->enabled = s->params.enabled;
	out->threshold_ms = s->params.threshold_ms;
	out->window_ms = s->params.threshold_ms * SAFETY_WINDOW_FACTOR;
	out->cooldown_s = s->params.cooldown_s;
	out->n_cpus = CPU_COUNT(&s->running);
	out->watching = out->n_cpus > 0;
	out->cooldown = s->cooldown_until != 0;
	if (out->cooldown) {
		sd_event_now(s->event, CLOCK_BOOTTIME, &now);
		out->cooldown_left_s = s->cooldown_until > now ? (s->cooldown_until - now + 999999) / 1000000 : 0;
	}
	out->trips = s->trips;
	out->suspends = atomic_load(&s->suspends);
	snprintf(out->last_culprit, sizeof(out->last_culprit), "%s", s->last_culprit);
}

int safety_status(const struct safety *s, char *buf, size_t len)
{
	struct safety_status st;
	char state[64];
	int n;

	safety_get_status(s, &st);
	if (!st.enabled)
		n = snprintf(buf, len, "watchdog off");
	else {
		if (st.cooldown)
			snprintf(state, sizeof(state), "cooldown, %" PRIu64 " s left", st.cooldown_left_s);
		else if (st.watching)
			snprintf(state, sizeof(state), "ok, watching %d CPU%s", st.n_cpus, st.n_cpus == 1 ? "" : "s");
		else
			snprintf(state, sizeof(state), "ok, idle");
		n = snprintf(buf, len, "watchdog %s; threshold %u ms in %u ms, cooldown %u s; %lu trip%s, %lu restart%s "
			     "after suspend or stop%s%s", state, st.threshold_ms, st.window_ms, st.cooldown_s, st.trips,
			     st.trips == 1 ? "" : "s", st.suspends, st.suspends == 1 ? "" : "s",
			     st.last_culprit[0] ? "; last: " : "", st.last_culprit);
	}
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

int safety_new(struct safety **ret, sd_event *e, const struct safety_params *p, const struct safety_ops *ops,
	       void *ud)
{
	pthread_mutexattr_t ma;
	struct safety *s;
	int r;

	if (p->enabled && (p->threshold_ms < SAFETY_THRESHOLD_MS_MIN || p->threshold_ms > SAFETY_THRESHOLD_MS_MAX ||
			   p->cooldown_s < 1 || p->cooldown_s > SAFETY_COOLDOWN_S_MAX))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->event = sd_event_ref(e);
	s->params = *p;
	if (ops)
		s->ops = *ops;
	s->ud = ud;
	s->notify = -1;
	s->wd.kick = -1;
	atomic_store(&s->threshold_ns, (uint64_t)p->threshold_ms * MSEC);
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	pthread_mutex_init(&s->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	*ret = s;
	if (!p->enabled)
		return 0;
	if (sched_getaffinity(0, sizeof(s->allowed), &s->allowed) < 0)
		return -errno;
	s->notify = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->notify < 0)
		return -errno;
	if ((r = sd_event_add_io(e, &s->notify_src, s->notify, EPOLLIN, on_notify, s)) < 0 ||
	    (r = sd_event_add_time(e, &s->cooldown_src, CLOCK_BOOTTIME, 0, 0, on_cooldown, s)) < 0)
		return r;
	sd_event_source_set_enabled(s->cooldown_src, SD_EVENT_OFF);
	/* before the main loop's sources, so a starved main loop still learns it */
	sd_event_source_set_priority(s->notify_src, SD_EVENT_PRIORITY_IMPORTANT);
	atomic_store(&s->wd.want, WANT_PARK);
	r = start_thread(&s->wd, watchdog_main, s, SCHED_FIFO, SAFETY_WATCHDOG_PRIORITY, NULL, 128 * 1024);
	if (r < 0)
		return r;
	return 0;
}

void safety_free(struct safety *s)
{
	bool leak = false;

	if (!s)
		return;
	if (!stop_thread(&s->wd))
		leak = true;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		struct canary *c = atomic_load(&s->canary[cpu]);
		if (!c)
			continue;
		if (!stop_thread(&c->w)) {
			leak = true;   /* still starved: let the process exit take it */
			continue;
		}
		safety_window_done(&c->win);
		free(c);
	}
	sd_event_source_disable_unref(s->notify_src);
	sd_event_source_disable_unref(s->cooldown_src);
	sd_event_unref(s->event);
	if (leak)
		return;
	if (s->notify >= 0)
		close(s->notify);
	pthread_mutex_destroy(&s->lock);
	free(s->threads);
	free(s->runs);
	free(s->trip_demoted);
	free(s);
}
