/* observer.c: the BPF observer kept in step with the registry and the
 * probes, and the late wake-ups it reports (observer.h). */
#include "autoconfig.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>

#include "daemon/sys/log.h"
#include "daemon/sys/proc.h"
#include "daemon/observe/observer.h"
#include "daemon/sys/clock.h"

/* The records are read at most every RATE_US, a burst of RATE_BURST
 * wake-ups within it aside: a storm of late wake-ups costs the daemon a
 * few wake-ups per second, not one per record (the ring buffer holds 200). */
#define RATE_US 50000
#define RATE_BURST 4
#define IRQ_CACHE 64

/* One watched thread, in the slot the kernel gave it. */
struct watched {
	pid_t tid;
	char comm[PROC_COMM_MAX + 1];
	char rule[CONFIG_NAME_MAX];
	struct observer_limits lim;
	struct hist *base;          /* `jitter --reset`: both histograms then; NULL: none */
	struct culprit_table *table; /* from its first late wake-up on */
	uint64_t log_us;            /* CLOCK_MONOTONIC of its last budget line */
	uint64_t log_misses, log_worst_ns; /* misses since that line, and the worst */
};

struct gone {
	pid_t tid;
	char comm[PROC_COMM_MAX + 1];
	uint64_t when_us;
};

struct irq_name {
	int irq;
	char name[64];
};

struct observer {
	struct bpfobs *bpf;
	bool culprits;
	unsigned watched, max;
	bool full_logged;           /* "no slot left" said once, not per thread */
	struct watched **slot;      /* by the kernel's slot number */
	struct culprit_window *scratch;
	sd_event_source *io;
	struct gone gone[OBSERVER_GONE_MAX];
	unsigned ngone;
	struct irq_name irqs[IRQ_CACHE];
	unsigned nirqs;
	observer_irq_section_fn irq_section;
	void *irq_section_ud;
};

int observer_new(struct observer **ret, unsigned max_threads, bool culprits, char *why, size_t len)
{
	struct observer *o = calloc(1, sizeof(*o));
	int r;

	if (!o)
		return -ENOMEM;
	o->slot = calloc(max_threads ? max_threads : 1, sizeof(*o->slot));
	o->scratch = malloc(sizeof(*o->scratch));
	if (!o->slot || !o->scratch) {
		observer_free(o);
		return -ENOMEM;
	}
	if ((r = bpfobs_new(&o->bpf, max_threads, culprits, why, len)) < 0) {
		observer_free(o);
		return r;
	}
	o->culprits = culprits;
	o->max = max_threads;
	*ret = o;
	return 0;
}

static void watched_free(struct watched *w)
{
	if (!w)
		return;
	free(w->base);
	free(w->table);
	free(w);
}

void observer_free(struct observer *o)
{
	if (!o)
		return;
	sd_event_source_disable_unref(o->io);
	for (unsigned i = 0; o->slot && i < o->max; i++)
		watched_free(o->slot[i]);
	free(o->slot);
	free(o->scratch);
	bpfobs_free(o->bpf);
	free(o);
}

/* The record of a watched thread, or NULL. */
static struct watched *find(struct observer *o, pid_t tid)
{
	int n;

	if (!o || (n = bpfobs_slot(o->bpf, tid)) < 0 || (unsigned)n >= o->max)
		return NULL;
	return o->slot[n] && o->slot[n]->tid == tid ? o->slot[n] : NULL;
}

void observer_limits_of(const struct config *c, const char *role, struct observer_limits *lim)
{
	const struct rule *r = role && *role ? config_find_rule(c, role) : NULL;

	lim->budget_ns = r ? (uint64_t)r->budget_us * 1000u : 0;
	lim->late_ns = lim->budget_ns ? lim->budget_ns : (uint64_t)c->late_threshold_us * 1000u;
	lim->rule = r ? r->name : NULL;
}

void observer_watch(struct observer *o, pid_t tid, const struct observer_limits *lim)
{
	struct watched *w;
	unsigned n;
	int r;

	if (!o)
		return;
	r = bpfobs_watch(o->bpf, tid, &n);
	if (r < 0 && r != -EEXIST) {
		if (r == -ENOSPC && o->full_logged)
			return;
		o->full_logged |= r == -ENOSPC;
		log_errno(LOG_LEVEL_NOTICE, r, "tid %d: not observed by BPF%s", (int)tid,
			  r == -ENOSPC ? " (every observe-threads slot is in use; raise observe-threads =)" : "");
		return;
	}
	if (n >= o->max)
		return;
	/* already watched: a thread re-applied (a rule matched again after a
	 * rename or reload) keeps its slot, its histograms and its culprits */
	w = o->slot[n];
	if (!w || w->tid != tid) {
		watched_free(w);
		if (!(w = o->slot[n] = calloc(1, sizeof(*w)))) {
			bpfobs_unwatch(o->bpf, tid);
			return;
		}
		w->tid = tid;
		o->watched++;
		/* its name when it came, for `why` once it is gone: the comm
		 * file, not stat, which the kernel formats 52 fields of; once,
		 * not at every registration of it (before the reply) */
		proc_read_comm(tid, tid, w->comm, sizeof(w->comm));
	}
	w->lim = *lim;
	snprintf(w->rule, sizeof(w->rule), "%s", lim->rule ? lim->rule : "");
	w->lim.rule = w->rule[0] ? w->rule : NULL;
	bpfobs_set_late(o->bpf, tid, lim->late_ns);
}

void observer_watch_thread(struct observer *o, const struct config *c, const struct reg_thread *t)
{
	struct observer_limits lim;

	if (!o)
		return;
	observer_limits_of(c, t->req.role, &lim);
	observer_watch(o, t->tid, &lim);
}

void observer_unwatch(struct observer *o, pid_t tid)
{
	struct watched *w = find(o, tid);
	int n;

	if (!w || (n = bpfobs_slot(o->bpf, tid)) < 0 || bpfobs_unwatch(o->bpf, tid) < 0)
		return;
	o->gone[o->ngone % OBSERVER_GONE_MAX] = (struct gone){ .tid = tid, .when_us = clock_usec(CLOCK_REALTIME) };
	memcpy(o->gone[o->ngone % OBSERVER_GONE_MAX].comm, w->comm, sizeof(w->comm));
	o->ngone++;
	watched_free(w);
	o->slot[n] = NULL;
	o->watched--;
	o->full_logged = false;
}

int observer_gone(const struct observer *o, pid_t tid, char *comm, size_t len, uint64_t *when_us)
{
	if (!o)
		return -ENOENT;
	/* the newest first: a tid reused since says when it last went */
	for (unsigned i = 0; i < OBSERVER_GONE_MAX && i < o->ngone; i++) {
		const struct gone *g = &o->gone[(o->ngone - 1 - i) % OBSERVER_GONE_MAX];
		if (g->tid == tid) {
			snprintf(comm, len, "%s", g->comm);
			*when_us = g->when_us;
			return 0;
		}
	}
	return -ENOENT;
}

int observer_read(struct observer *o, pid_t tid, enum bpfobs_kind kind, bool since_reset, struct hist *out)
{
	struct watched *w;
	int r;

	if (!o)
		return -ENOENT;
	if ((r = bpfobs_read(o->bpf, tid, kind, out)) < 0 || !since_reset)
		return r;
	if ((w = find(o, tid)) && w->base)
		return hist_sub(out, out, &w->base[kind]);
	return 0;
}

void observer_reset(struct observer *o, pid_t tid)
{
	struct watched *w = find(o, tid);

	if (!w)
		return;
	if (!w->base && !(w->base = calloc(2, sizeof(*w->base))))
		return;
	if (bpfobs_read(o->bpf, tid, BPFOBS_TIMER, &w->base[BPFOBS_TIMER]) < 0 ||
	    bpfobs_read(o->bpf, tid, BPFOBS_WAKEUP, &w->base[BPFOBS_WAKEUP]) < 0) {
		free(w->base);
		w->base = NULL;
	}
}

unsigned observer_watched(const struct observer *o, unsigned *max)
{
	if (max)
		*max = o ? o->max : 0;
	return o ? o->watched : 0;
}

bool observer_culprits(const struct observer *o)
{
	return o && o->culprits;
}

int observer_late(struct observer *o, pid_t tid, struct observer_late *out)
{
	struct watched *w = find(o, tid);
	int r;

	if (!w)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	if ((r = bpfobs_late(o->bpf, tid, out->late, &out->dropped)) < 0)
		return r;
	out->lim = w->lim;
	snprintf(out->rule, sizeof(out->rule), "%s", w->rule);
	out->lim.rule = out->rule[0] ? out->rule : NULL;
	out->culprits = o->culprits;
	return 0;
}

const char *observer_irq_name(struct observer *o, int irq)
{
	struct irq_name *e;

	if (!o)
		return "";
	for (unsigned i = 0; i < o->nirqs; i++)
		if (o->irqs[i].irq == irq)
			return o->irqs[i].name;
	/* a miss reads /proc/interrupts once; an irq without a line stays "" */
	e = &o->irqs[o->nirqs < IRQ_CACHE ? o->nirqs++ : (unsigned)irq % IRQ_CACHE];
	e->irq = irq;
	if (proc_read_irq_name(irq, e->name, sizeof(e->name)) < 0)
		e->name[0] = '\0';
	return e->name;
}

void observer_set_irq_section(struct observer *o, observer_irq_section_fn fn, void *ud)
{
	if (!o)
		return;
	o->irq_section = fn;
	o->irq_section_ud = ud;
}

const char *observer_irq_section(struct observer *o, int irq)
{
	return o && o->irq_section ? o->irq_section(o->irq_section_ud, irq) : NULL;
}

void observer_label(struct observer *o, const struct culprit_key *k, char *buf, size_t len)
{
	bool irq = k->kind == CULPRIT_HARDIRQ;

	culprit_label(k, irq ? observer_irq_name(o, k->id) : NULL, irq ? observer_irq_section(o, k->id) : NULL,
		      buf, len);
}

/* A budget missed: a log line now if the thread had none for
 * OBSERVER_LOG_EVERY_S seconds, counting the misses since the last one. */
static void budget_log(struct observer *o, struct watched *w, const struct culprit_window *win)
{
	const struct culprit_entry *top = NULL;
	uint64_t now = clock_usec(CLOCK_MONOTONIC);
	char label[200] = "not known (culprits = no)", comm[PROC_COMM_MAX + 1];
	struct proc_stat st;

	w->log_misses++;
	if (win->delay_ns > w->log_worst_ns)
		w->log_worst_ns = win->delay_ns;
	if (w->log_us && now - w->log_us < OBSERVER_LOG_EVERY_S * 1000000u)
		return;
	snprintf(comm, sizeof(comm), "%s", proc_read_stat(w->tid, &st) == 0 ? st.comm : w->comm);
	if (w->table && culprit_table_sorted(w->table, &top, 1) == 1) {
		char name[128];
		observer_label(o, &top->key, name, sizeof(name));
		snprintf(label, sizeof(label), "%s (%d%% of the delay)", name, /* rounded down, as the verdict */
			 (int)(100.0 * (double)top->total_ns / (double)(w->table->delay_ns ? w->table->delay_ns : 1) + 1e-9));
	}
	log_notice("budget: %s (tid %d%s%s) missed its %.0f us budget %llu time%s%s, the worst by %.0f us late; "
		   "top culprit: %s; rtschedctl why %d says more", comm, (int)w->tid, w->rule[0] ? ", " : "",
		   w->rule, (double)w->lim.budget_ns / 1e3, (unsigned long long)w->log_misses,
		   w->log_misses == 1 ? "" : "s", w->log_us ? " since the last report" : "",
		   (double)w->log_worst_ns / 1e3, label, (int)w->tid);
	w->log_us = now;
	w->log_misses = 0;
	w->log_worst_ns = 0;
}

/* One late wake-up's record. */
static void on_record(void *ud, const struct bpfobs_late *ev)
{
	struct observer *o = ud;
	struct watched *w = ev->slot < o->max ? o->slot[ev->slot] : NULL;
	uint64_t mono = clock_usec(CLOCK_MONOTONIC), real = clock_usec(CLOCK_REALTIME), at;

	if (!w || w->tid != ev->tid || culprit_window(ev, o->scratch) < 0)
		return;
	if (!w->table && !(w->table = calloc(1, sizeof(*w->table))))
		return;
	/* when it happened, on the wall clock */
	at = ev->run_ns / 1000u;
	culprit_table_add(w->table, o->scratch, mono >= at ? real - (mono - at) : real);
	if (w->lim.budget_ns)
		budget_log(o, w, o->scratch);
}

/* The records waiting, up to RB_BATCH (the rest on the loop's next turns):
 * now, whatever else the caller wants. */
static void read_records(struct observer *o)
{
	int r = bpfobs_events_read(o->bpf, on_record, o);

	if (r < 0)
		log_errno(LOG_LEVEL_WARNING, r, "reading the late wake-ups' ring buffer");
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *ud)
{
	read_records(ud);
	return 0;
}

int observer_attach(struct observer *o, sd_event *e)
{
	int fd, r;

	if (!o || (fd = bpfobs_events_fd(o->bpf)) < 0)
		return 0;
	if ((r = sd_event_add_io(e, &o->io, fd, EPOLLIN, on_io, o)) < 0)
		return r;
	return sd_event_source_set_ratelimit(o->io, RATE_US, RATE_BURST);
}

const struct culprit_table *observer_table(struct observer *o, pid_t tid)
{
	struct watched *w = find(o, tid);

	if (!w)
		return NULL;
	read_records(o);
	return w->table;
}
