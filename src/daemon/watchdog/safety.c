/* safety.c: the starvation watchdog's object (see safety.h for what and
 * why, safety_int.h for its threads): creating and freeing it, the clocks
 * and threads its other files share, publishing the managed threads (which
 * starts and parks the canaries), its parameters and its status. The
 * canaries are in canary.c, the watchdog thread's detection in watch.c, and
 * what a trip does in trip.c. */
#include "autoconfig.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "daemon/sys/log.h"
#include "daemon/watchdog/safety_int.h"

/* --- clocks and the module's threads ------------------------------------------ */

void safety_clocks_now(struct safety_clocks *c)
{
	c->mono = clock_nsec(CLOCK_MONOTONIC);
	c->boot = clock_nsec(CLOCK_BOOTTIME);
}

uint64_t safety_tick_ns(struct safety *s)
{
	return atomic_load(&s->threshold_ns) / SAFETY_TICKS_PER_THRESHOLD;
}

/* Wait for a kick or timeout_ns (UINT64_MAX: none). True if kicked or
 * interrupted, so the caller re-reads what it should do. */
bool safety_worker_wait(struct worker *w, uint64_t timeout_ns)
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
void safety_worker_steer(struct worker *w, int want)
{
	uint64_t one = 1;

	atomic_store(&w->want, want);
	if (write(w->kick, &one, sizeof(one)) < 0) {
		/* the counter is full: it is awake anyway */
	}
}

/* Start a thread with every signal blocked (the main loop takes signals
 * through signalfd) and the given scheduling, affinity and small stack. */
int safety_worker_start(struct worker *w, void *(*fn)(void *), void *arg, int policy, int prio,
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
bool safety_worker_stop(struct worker *w)
{
	struct timespec ts;

	if (!w->started)
		return true;
	safety_worker_steer(w, WANT_EXIT);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 1;
	if (pthread_timedjoin_np(w->th, NULL, &ts) != 0)
		return false;
	close(w->kick);
	w->started = false;
	return true;
}

/* --- what the main loop publishes, and the watchdog reads without a lock ---- */

const struct snapshot *safety_snap_get(struct safety *s)
{
	struct snapshot *p;

	/* announce it, then make sure it is still the published one: the main
	 * loop frees a replaced snapshot only if it is not announced */
	do {
		p = atomic_load(&s->snap);
		atomic_store(&s->hazard, p);
	} while (atomic_load(&s->snap) != p);
	return p;
}

void safety_snap_put(struct safety *s)
{
	atomic_store(&s->hazard, NULL);
}

/* Free the replaced snapshots the watchdog does not read now. */
static void snap_reclaim(struct safety *s)
{
	struct snapshot **pp = &s->retired, *p;

	while ((p = *pp)) {
		if (atomic_load(&s->hazard) == p) {
			pp = &p->retired_next;
			continue;
		}
		*pp = p->retired_next;
		free(p->threads);
		free(p);
	}
}

bool safety_is_managed(struct safety *s, const struct snapshot *snap, pid_t tid, uint64_t starttime)
{
	uint64_t next = atomic_load(&s->ring_next);

	if (snap) {
		size_t lo = 0, hi = snap->n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			const struct safety_entry *e = &snap->threads[mid];
			if (e->tid < tid)
				lo = mid + 1;
			else if (e->tid > tid)
				hi = mid;
			else if (e->starttime == starttime)
				return true;
			else
				break;
		}
	}
	/* granted since the last publication: the latest RING_SIZE grants */
	for (uint64_t k = next > RING_SIZE ? next - RING_SIZE : 0; k < next; k++) {
		struct ring_slot *r = &s->ring[k % RING_SIZE];
		uint64_t seq = atomic_load(&r->seq);
		pid_t t = atomic_load(&r->tid);
		uint64_t st = atomic_load(&r->starttime);

		if (seq == 2 * k + 2 && atomic_load(&r->seq) == seq && t == tid && st == starttime)
			return true;
	}
	return false;
}

static void canaries_update(struct safety *s);

void safety_arm(struct safety *s, pid_t tid, pid_t pid, uint64_t starttime)
{
	uint64_t k, now;
	struct ring_slot *r;

	if (!s || !s->params.enabled)
		return;
	k = atomic_load(&s->ring_next);
	r = &s->ring[k % RING_SIZE];
	atomic_store(&r->seq, 2 * k + 1);
	atomic_store(&r->tid, tid);
	atomic_store(&r->starttime, starttime);
	atomic_store(&r->seq, 2 * k + 2);
	atomic_store(&s->ring_next, k + 1);
	if (CPU_EQUAL(&s->running, &s->allowed) && atomic_load(&s->wd.want) == WANT_RUN)
		return;
	/* the canaries and the watchdog run before the thread is real-time:
	 * a thread that spins from its grant on can starve the main loop
	 * before any later publication would start them */
	now = clock_nsec(CLOCK_MONOTONIC);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
		if (CPU_ISSET(cpu, &s->allowed))
			s->wanted_at[cpu] = now;
	canaries_update(s);
}

static int cmp_entry_tid(const void *a, const void *b)
{
	pid_t x = ((const struct safety_entry *)a)->tid, y = ((const struct safety_entry *)b)->tid;

	return (x > y) - (x < y);
}

int safety_set_threads(struct safety *s, const struct safety_thread *t, size_t n)
{
	struct snapshot *snap, *old;

	if (!s || !s->params.enabled)
		return 0;
	snap = calloc(1, sizeof(*snap));
	if (!snap)
		return -ENOMEM;
	if (n) {
		snap->threads = malloc(n * sizeof(*snap->threads));
		if (!snap->threads) {
			free(snap);
			return -ENOMEM;
		}
		for (size_t i = 0; i < n; i++)
			snap->threads[i] = (struct safety_entry){ t[i].tid, t[i].pid, t[i].starttime };
		qsort(snap->threads, n, sizeof(*snap->threads), cmp_entry_tid);
		snap->n = n;
	}
	old = atomic_exchange(&s->snap, snap);
	if (old) {
		old->retired_next = s->retired;
		s->retired = old;
	}
	snap_reclaim(s);

	/* every CPU the daemon may use, not only the threads' CPUs at their
	 * grant: a thread may move itself to any CPU it likes afterwards */
	if (n)
		s->wanted = s->allowed;
	else
		CPU_ZERO(&s->wanted);
	canaries_update(s);
	return s->canary_error;
}

/* Start the canaries of the CPUs managed real-time threads may use, and
 * park those no such thread wanted for a whole window: a CPU whose
 * real-time threads come and go (a spinner after another, each exiting
 * before the next publication) keeps its canary and its window, which a
 * restart would empty. A timer parks the rest when their window is over. */
static void canaries_update(struct safety *s)
{
	uint64_t now = clock_nsec(CLOCK_MONOTONIC), keep = atomic_load(&s->threshold_ns) * SAFETY_WINDOW_FACTOR;
	uint64_t park_at = UINT64_MAX;

	s->canary_error = 0;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		struct canary *c;
		bool on, was = CPU_ISSET(cpu, &s->running);

		if (CPU_ISSET(cpu, &s->wanted))
			s->wanted_at[cpu] = now;
		on = s->wanted_at[cpu] && now - s->wanted_at[cpu] < keep;
		if (on && !CPU_ISSET(cpu, &s->wanted) && s->wanted_at[cpu] + keep < park_at)
			park_at = s->wanted_at[cpu] + keep;
		if (on == was)
			continue;
		if (!on) {
			c = atomic_load(&s->canary[cpu]);
			atomic_store(&c->deadline, UINT64_MAX);
			safety_worker_steer(&c->w, WANT_PARK);
			CPU_CLR(cpu, &s->running);
			continue;
		}
		int e = safety_canary_get(s, cpu, &c);
		if (e < 0) {
			log_errno(LOG_LEVEL_WARNING, e, "watchdog: cannot start the canary for CPU %d", cpu);
			s->canary_error = e;
			continue;
		}
		/* the first tick is due now + tick even if the canary cannot run
		 * to set it: a canary starved from the start still counts */
		atomic_store(&c->deadline, clock_nsec(CLOCK_MONOTONIC) + safety_tick_ns(s));
		atomic_fetch_add(&c->epoch, 1);
		safety_worker_steer(&c->w, WANT_RUN);
		CPU_SET(cpu, &s->running);
	}
	if (park_at != UINT64_MAX && s->park_src) {
		sd_event_source_set_time(s->park_src, park_at / 1000 + 1);
		sd_event_source_set_enabled(s->park_src, SD_EVENT_ONESHOT);
	}
	if (CPU_COUNT(&s->running) && atomic_load(&s->wd.want) != WANT_RUN) {
		log_debug("watchdog: watching %d CPU%s", CPU_COUNT(&s->running), CPU_COUNT(&s->running) == 1 ? "" : "s");
		safety_worker_steer(&s->wd, WANT_RUN);
	} else if (!CPU_COUNT(&s->running) && atomic_load(&s->wd.want) == WANT_RUN) {
		safety_worker_steer(&s->wd, WANT_PARK);
	}
}

static int on_park(sd_event_source *src, uint64_t usec, void *userdata)
{
	canaries_update(userdata);
	return 0;
}

void safety_set_params(struct safety *s, const struct safety_params *p)
{
	if (!s)
		return;
	s->params.threshold_ms = p->threshold_ms;
	s->params.cooldown_s = p->cooldown_s;
	s->params.demote_all = p->demote_all;
	atomic_store(&s->demote_all, p->demote_all);   /* the watchdog thread reads it at a trip */
	s->params.duty_pct = p->duty_pct;
	atomic_store(&s->duty_pct, p->duty_pct);
	s->params.loop_tid = p->loop_tid;
	atomic_store(&s->loop_tid, p->loop_tid);
	if (atomic_load(&s->threshold_ns) != (uint64_t)p->threshold_ms * MSEC) {
		atomic_store(&s->threshold_ns, (uint64_t)p->threshold_ms * MSEC);
		atomic_fetch_add(&s->param_epoch, 1);
		if (s->params.enabled)
			safety_worker_steer(&s->wd, atomic_load(&s->wd.want));
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
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		struct canary *c = atomic_load(&s->canary[cpu]);
		if (c) {
			out->canary_late += atomic_load(&c->late);
			out->canary_stall_ms += atomic_load(&c->stall) / MSEC;
		}
	}
	snprintf(out->last_culprit, sizeof(out->last_culprit), "%s", s->last_culprit);
	out->duty_pct = s->params.duty_pct;
	if (s->scan) {
		out->tasks_iter = s->scan->tasks != NULL;
		out->iter_failed = s->scan->iter_failed;
	}
}

int safety_new(struct safety **ret, sd_event *e, const struct safety_params *p, const struct safety_ops *ops,
	       void *ud)
{
	struct safety *s;
	const char *test;
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
	atomic_store(&s->demote_all, p->demote_all);
	atomic_store(&s->duty_pct, p->duty_pct);
	atomic_store(&s->loop_tid, p->loop_tid);
	*ret = s;
	if (!p->enabled)
		return 0;
	/* the watchdog thread's memory, before it starts: it allocates nothing */
	s->clk_tck = sysconf(_SC_CLK_TCK);
	if (s->clk_tck <= 0)
		s->clk_tck = 100;
	s->scan = calloc(1, sizeof(*s->scan));
	if (!s->scan)
		return -ENOMEM;
	s->scan->proc = -1;
	/* the tests' stand-in for a look held in the kernel (testhook.h) */
	if ((test = getenv("RTSCHEDD_TEST_WATCHDOG_STALL_MS")))
		s->scan->test_stall_ns = strtoull(test, NULL, 10) * MSEC;
	if ((r = safety_scan_init(s->scan)) < 0)
		return r;
	s->scan->tasks = p->tasks;
	if (sched_getaffinity(0, sizeof(s->allowed), &s->allowed) < 0)
		return -errno;
	s->notify = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->notify < 0)
		return -errno;
	if ((r = sd_event_add_io(e, &s->notify_src, s->notify, EPOLLIN, safety_on_notify, s)) < 0 ||
	    (r = sd_event_add_time(e, &s->cooldown_src, CLOCK_BOOTTIME, 0, 0, safety_on_cooldown, s)) < 0 ||
	    (r = sd_event_add_time(e, &s->park_src, CLOCK_MONOTONIC, 0, 0, on_park, s)) < 0)
		return r;
	sd_event_source_set_enabled(s->cooldown_src, SD_EVENT_OFF);
	sd_event_source_set_enabled(s->park_src, SD_EVENT_OFF);
	/* before the main loop's sources, so a starved main loop still learns it */
	sd_event_source_set_priority(s->notify_src, SD_EVENT_PRIORITY_IMPORTANT);
	atomic_store(&s->wd.want, WANT_PARK);
	r = safety_worker_start(&s->wd, safety_watch_main, s, SCHED_FIFO, SAFETY_WATCHDOG_PRIORITY, NULL, 128 * 1024);
	if (r < 0)
		return r;
	return 0;
}

bool safety_free(struct safety *s)
{
	bool leak = false;

	if (!s)
		return true;
	if (!safety_worker_stop(&s->wd))
		leak = true;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		struct canary *c = atomic_load(&s->canary[cpu]);
		if (!c)
			continue;
		if (!safety_worker_stop(&c->w)) {
			leak = true;   /* still starved: let the process exit take it */
			continue;
		}
		safety_window_done(&c->win);
		free(c);
	}
	sd_event_source_disable_unref(s->notify_src);
	sd_event_source_disable_unref(s->cooldown_src);
	sd_event_source_disable_unref(s->park_src);
	sd_event_unref(s->event);
	if (leak)
		return false;
	if (s->notify >= 0)
		close(s->notify);
	if (s->scan && s->scan->proc >= 0)
		close(s->scan->proc);
	free(s->scan);
	atomic_store(&s->hazard, NULL);   /* the watchdog thread has stopped */
	if (atomic_load(&s->snap)) {
		struct snapshot *p = atomic_exchange(&s->snap, NULL);
		p->retired_next = s->retired;
		s->retired = p;
	}
	snap_reclaim(s);
	free(s);
	return true;
}

int safety_self_share(int loop_priority, int loop_budget, bool watchdog)
{
	int pct = 0;

	if (loop_priority > 0)
		pct += loop_budget > 0 ? loop_budget : 100;
	if (watchdog)
		pct += (int)SAFETY_SCAN_SHARE_PCT;
	return pct > 100 ? 100 : pct;
}
