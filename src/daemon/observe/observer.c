/* observer.c: the BPF observer kept in step with the registry (observer.h). */
#include "autoconfig.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sys/log.h"
#include "daemon/observe/observer.h"

/* `jitter --reset` for one thread: what its histograms held then. */
struct baseline {
	pid_t tid;
	struct hist h[2];
	struct baseline *next;
};

struct observer {
	struct bpfobs *bpf;
	unsigned watched, max;
	bool full_logged;           /* "no slot left" said once, not per thread */
	struct baseline *bases;
};

int observer_new(struct observer **ret, unsigned max_threads, char *why, size_t len)
{
	struct observer *o = calloc(1, sizeof(*o));
	int r;

	if (!o)
		return -ENOMEM;
	if ((r = bpfobs_new(&o->bpf, max_threads, false, why, len)) < 0) {
		free(o);
		return r;
	}
	o->max = max_threads;
	*ret = o;
	return 0;
}

/* Unlink and free tid's baseline, if any. */
static void base_drop(struct observer *o, pid_t tid)
{
	for (struct baseline **pp = &o->bases; *pp; pp = &(*pp)->next)
		if ((*pp)->tid == tid) {
			struct baseline *b = *pp;
			*pp = b->next;
			free(b);
			return;
		}
}

void observer_free(struct observer *o)
{
	if (!o)
		return;
	while (o->bases)
		base_drop(o, o->bases->tid);
	bpfobs_free(o->bpf);
	free(o);
}

void observer_watch(struct observer *o, pid_t tid)
{
	int r;

	if (!o)
		return;
	r = bpfobs_watch(o->bpf, tid, NULL);
	if (r == 0) {
		o->watched++;
		return;
	}
	/* already watched: a thread re-applied (a rule matched again after a
	 * rename or reload) keeps its slot and its histograms */
	if (r == -EEXIST)
		return;
	if (r == -ENOSPC && o->full_logged)
		return;
	o->full_logged |= r == -ENOSPC;
	log_errno(LOG_LEVEL_NOTICE, r, "tid %d: not observed by BPF%s", (int)tid,
		  r == -ENOSPC ? " (every observe-threads slot is in use; raise observe-threads =)" : "");
}

void observer_unwatch(struct observer *o, pid_t tid)
{
	if (!o || bpfobs_unwatch(o->bpf, tid) < 0)
		return;
	o->watched--;
	o->full_logged = false;
	base_drop(o, tid);
}

int observer_read(struct observer *o, pid_t tid, enum bpfobs_kind kind, bool since_reset, struct hist *out)
{
	int r;

	if (!o)
		return -ENOENT;
	if ((r = bpfobs_read(o->bpf, tid, kind, out)) < 0 || !since_reset)
		return r;
	for (struct baseline *b = o->bases; b; b = b->next)
		if (b->tid == tid)
			return hist_sub(out, out, &b->h[kind]);
	return 0;
}

void observer_reset(struct observer *o, pid_t tid)
{
	struct baseline *b;

	if (!o)
		return;
	base_drop(o, tid);
	if (!(b = calloc(1, sizeof(*b))))
		return;
	b->tid = tid;
	if (bpfobs_read(o->bpf, tid, BPFOBS_TIMER, &b->h[BPFOBS_TIMER]) < 0 ||
	    bpfobs_read(o->bpf, tid, BPFOBS_WAKEUP, &b->h[BPFOBS_WAKEUP]) < 0) {
		free(b);
		return;
	}
	b->next = o->bases;
	o->bases = b;
}

unsigned observer_watched(const struct observer *o, unsigned *max)
{
	if (max)
		*max = o ? o->max : 0;
	return o ? o->watched : 0;
}
