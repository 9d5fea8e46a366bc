/* timer.c: librtsched's periodic timer, rtsched_timer_* (see rtsched.h).
 * A struct waiter does the waiting; its histogram lives in a sealed memfd
 * so rtschedd can map it and read it while the worker runs. */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shared/client.h"
#include "shared/hist.h"
#include "shared/protocol.h"
#include "shared/waiter.h"
#include "lib/internal.h"
#include "rtsched.h"

#define EXPORT __attribute__((visibility("default")))
/* A snapshot copies 14.5 KB while the worker writes a few words per period:
 * at 10 kHz it overlaps about one try in a hundred. */
#define SNAPSHOT_TRIES 1000

struct rtsched_timer {
	struct waiter w;   /* owned by the waiting thread */
	struct hist *hist; /* MAP_SHARED view of memfd */
	int memfd;
};

/* The histogram's memfd, sized, mapped, initialised and sealed. The seals
 * (no shrink, no grow, no more seals) let rtschedd map it without SIGBUS
 * risk; it is not write-sealed because this process keeps writing it. */
static int hist_memfd(struct hist **out)
{
	struct hist *h;
	int fd, r;

	fd = memfd_create("rtsched-hist", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, sizeof(struct hist)) < 0) {
		r = -errno;
		goto fail;
	}
	h = mmap(NULL, sizeof(struct hist), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		r = -errno;
		goto fail;
	}
	hist_init(h); /* also faults every page in before the first period */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		r = -errno;
		munmap(h, sizeof(struct hist));
		goto fail;
	}
	*out = h;
	return fd;
fail:
	close(fd);
	return r;
}

EXPORT int rtsched_timer_create(struct rtsched_timer **tp, uint64_t period_ns, const char *strategy)
{
	struct rtsched_timer *t;
	int s, r;

	if (!tp)
		return -EINVAL;
	*tp = NULL;
	s = waiter_strategy_from_string(strategy ? strategy : "sleep");
	if (s < 0 || period_ns < 1000 || period_ns > (uint64_t)WAITER_MAX_PERIOD_NS)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	r = hist_memfd(&t->hist);
	if (r < 0) {
		free(t);
		return r;
	}
	t->memfd = r;
	r = waiter_init(&t->w, (enum waiter_strategy)s, (int64_t)period_ns, t->hist);
	if (r < 0) {
		rtsched_timer_free(t);
		return r;
	}
	*tp = t;
	return 0;
}

EXPORT int rtsched_timer_set_hybrid(struct rtsched_timer *t, uint64_t guard_ns, uint64_t threshold_ns)
{
	if (!t || guard_ns > INT64_MAX || threshold_ns > INT64_MAX)
		return -EINVAL;
	return waiter_set_hybrid(&t->w, (int64_t)guard_ns, (int64_t)threshold_ns);
}

/* One request on the kept connection, the memfd riding along (SCM_RIGHTS).
 * period_ns goes as text: it can exceed a 32-bit long. */
EXPORT int rtsched_timer_attach(struct rtsched_timer *t, const char *socket)
{
	struct proto_buf b;
	char period[24];

	if (!t)
		return -EINVAL;
	snprintf(period, sizeof(period), "%" PRId64, t->w.period_ns);
	proto_begin(&b, PROTO_REQUEST_HEAD);
	proto_add(&b, "op", "jitter-attach");
	proto_add_long(&b, "tid", gettid());
	proto_add(&b, "period_ns", period);
	proto_add(&b, "strategy", waiter_strategy_name(t->w.strategy));
	return lib_call(socket, &b, t->memfd, NULL);
}

EXPORT int rtsched_timer_wait(struct rtsched_timer *t)
{
	if (!t)
		return -EINVAL;
	return waiter_wait(&t->w);
}

/* A percentile, or 0 if there is no sample. */
static int64_t pct(const struct hist *h, double q)
{
	int64_t v;

	return hist_percentile(h, q, &v) < 0 ? 0 : v;
}

/* The snapshot is a private heap copy, so any number of threads may ask at
 * once; 14.5 KB would be a lot for a real-time thread's stack. */
EXPORT int rtsched_timer_stats(struct rtsched_timer *t, struct rtsched_timer_stats *out)
{
	struct hist *s;
	double mean;
	int r;

	if (!t || !out)
		return -EINVAL;
	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	r = hist_snapshot(t->hist, s, SNAPSHOT_TRIES);
	if (r == 0) {
		memset(out, 0, sizeof(*out));
		out->count = hist_count(s);
		out->overruns = hist_overruns(s);
		out->min_ns = hist_min(s);
		out->max_ns = hist_max(s);
		out->mean_ns = hist_mean(s, &mean) == 0 ? mean : 0;
		out->p50_ns = pct(s, 50);
		out->p90_ns = pct(s, 90);
		out->p99_ns = pct(s, 99);
		out->p999_ns = pct(s, 99.9);
	}
	free(s);
	return r;
}

EXPORT void rtsched_timer_free(struct rtsched_timer *t)
{
	if (!t)
		return;
	munmap(t->hist, sizeof(struct hist));
	close(t->memfd);
	free(t);
}
