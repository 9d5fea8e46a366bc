/* probe.c: the daemon's latency and noise probes (see probe.h). */
#include "autoconfig.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/observe/probe.h"

struct probe {
	struct probe_params p;
	pthread_t thread;
	pid_t tid;          /* written by the thread before it posts `ready` */
	sem_t ready;
	atomic_bool stop;
	atomic_int err;
	struct hist hist;   /* the thread is its only writer */
	struct waiter w;    /* latency probes: owned by the thread */
};

static int64_t gcd64(int64_t a, int64_t b)
{
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* The phase of a latency probe's deadlines: multiples of the period plus
 * half of gcd(period, 1 ms), in CLOCK_MONOTONIC, so that no deadline falls
 * on a whole millisecond. The kernel aligns its periodic tick to multiples
 * of TICK_NSEC (4 ms here, HZ 250; 1 or 10 ms elsewhere), and a deadline on
 * a tick waits for the tick's own work: measured here under stress-ng, such
 * wake-ups were 6-8 µs later at p50 and 10-13 µs at p90 than the rest. A
 * probe started at whatever phase it happened to start at measured that
 * for 1 in 4 samples, or not at all, run by run; now it never does, as a
 * thread at an arbitrary phase mostly doesn't, and a comparison can wake
 * at the same phase (for 1 ms: cyclictest --secaligned=500). */
static int64_t probe_phase_start(int64_t now, int64_t period)
{
	return now / period * period + gcd64(period, 1000000) / 2;
}

/* cyclictest's loop: the waiter records lateness and counts overruns. */
static void run_latency(struct probe *pr)
{
	int64_t now = waiter_now();

	if (now < 0) {
		atomic_store(&pr->err, (int)now);
		return;
	}
	/* the first deadline, start + period, is after now */
	waiter_start(&pr->w, probe_phase_start(now, pr->p.period_ns));
	while (!atomic_load_explicit(&pr->stop, memory_order_relaxed)) {
		int r = waiter_wait(&pr->w);

		if (r < 0) {
			atomic_store(&pr->err, r);
			return;
		}
	}
}

/* oslat's loop, one sample per window (probe.h says why). The stop flag is a
 * relaxed load: a plain move on every architecture we run on, next to a
 * 20-50 ns clock read. */
static void run_noise(struct probe *pr)
{
	const int64_t win = pr->p.period_ns;
	int64_t prev = waiter_now(), end, worst = 0;

	if (prev < 0) {
		atomic_store(&pr->err, (int)prev);
		return;
	}
	end = prev + win;
	while (!atomic_load_explicit(&pr->stop, memory_order_relaxed)) {
		int64_t now = waiter_now();

		if (now < 0) {
			atomic_store(&pr->err, (int)now);
			return;
		}
		if (now - prev > worst)
			worst = now - prev;
		prev = now;
		if (now < end)
			continue;
		hist_record(&pr->hist, worst);
		worst = 0;
		end += win;
		if (now >= end) { /* the last gap covered whole windows: no sample there */
			uint64_t missed = (uint64_t)((now - end) / win) + 1;

			hist_add_overruns(&pr->hist, missed);
			end += (int64_t)missed * win;
		}
	}
}

/* The thread already runs with its CPU, policy and priority (attributes). */
static void *probe_main(void *arg)
{
	struct probe *pr = arg;

	pr->tid = gettid();
	sem_post(&pr->ready);
	if (pr->p.noise)
		run_noise(pr);
	else
		run_latency(pr);
	return NULL;
}

/* Ranges checked here so the caller gets -EINVAL, not the kernel's guess. */
static int check_params(const struct probe_params *p)
{
	int lo, hi;

	switch (p->policy) {
	case SCHED_OTHER: case SCHED_BATCH: case SCHED_IDLE: case SCHED_FIFO: case SCHED_RR:
		break;
	default:
		return -EINVAL;
	}
	lo = sched_get_priority_min(p->policy);
	hi = sched_get_priority_max(p->policy);
	if (p->priority < lo || p->priority > hi)
		return -EINVAL;
	if (p->cpu < -1 || p->cpu >= CPU_SETSIZE)
		return -EINVAL;
	if (p->period_ns < 1000 || p->period_ns > WAITER_MAX_PERIOD_NS)
		return -EINVAL;
	if (!p->noise && waiter_strategy_name(p->strategy) == NULL)
		return -EINVAL;
	return 0;
}

/* CPU, policy and priority as creation attributes: the thread never runs a
 * single instruction unpinned or at the wrong priority. */
static int make_attr(pthread_attr_t *a, const struct probe_params *p)
{
	struct sched_param sp = { .sched_priority = p->priority };
	int r;

	if ((r = pthread_attr_init(a)))
		return -r;
	if (p->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(p->cpu, &set);
		if ((r = pthread_attr_setaffinity_np(a, sizeof(set), &set)))
			goto fail;
	}
	if ((r = pthread_attr_setinheritsched(a, PTHREAD_EXPLICIT_SCHED)) ||
	    (r = pthread_attr_setschedpolicy(a, p->policy)) ||
	    (r = pthread_attr_setschedparam(a, &sp)))
		goto fail;
	return 0;
fail:
	pthread_attr_destroy(a);
	return -r;
}

int probe_start(struct probe **ret, const struct probe_params *p)
{
	struct probe *pr;
	pthread_attr_t attr;
	char comm[16] = "probe-";
	size_t n;
	int r;

	*ret = NULL;
	if ((r = check_params(p)) < 0)
		return r;
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return -ENOMEM;
	pr->p = *p;
	pr->p.name[sizeof(pr->p.name) - 1] = '\0';
	hist_init(&pr->hist);
	if (!p->noise && (r = waiter_init(&pr->w, p->strategy, p->period_ns, &pr->hist)) < 0)
		goto fail;
	if (sem_init(&pr->ready, 0, 0) < 0) {
		r = -errno;
		goto fail;
	}
	if ((r = make_attr(&attr, p)) < 0)
		goto fail_sem;
	r = -pthread_create(&pr->thread, &attr, probe_main, pr);
	pthread_attr_destroy(&attr);
	if (r < 0)
		goto fail_sem;
	while (sem_wait(&pr->ready) < 0 && errno == EINTR)
		;
	/* "probe-NAME" in ps and top, cut to the kernel's 15 characters */
	n = strnlen(pr->p.name, sizeof(comm) - 7);
	memcpy(comm + 6, pr->p.name, n);
	comm[6 + n] = '\0';
	pthread_setname_np(pr->thread, comm);
	*ret = pr;
	return 0;
fail_sem:
	sem_destroy(&pr->ready);
fail:
	free(pr);
	return r;
}

void probe_stop(struct probe *pr)
{
	if (!pr)
		return;
	atomic_store(&pr->stop, true);
	pthread_join(pr->thread, NULL);
	sem_destroy(&pr->ready);
	free(pr);
}

const struct hist *probe_hist(const struct probe *pr)
{
	return &pr->hist;
}

pid_t probe_tid(const struct probe *pr)
{
	return pr->tid;
}

const struct probe_params *probe_params(const struct probe *pr)
{
	return &pr->p;
}

int probe_error(const struct probe *pr)
{
	return atomic_load(&pr->err);
}
