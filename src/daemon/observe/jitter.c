/* jitter.c: wake-up latency sources and their export (see jitter.h). */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "daemon/sys/cpulist.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "shared/cleanup.h"
#include "shared/escape.h"
#include "shared/waiter.h"
#include "daemon/observe/jitter.h"
#include "daemon/observe/culprit.h"
#include "daemon/observe/observer.h"
#include "daemon/observe/probe.h"
#include "daemon/sys/proc.h"
#include "daemon/core/registry.h"

/* A worker's update keeps the seqlock odd for a few ns: a histogram that
 * stays unreadable this many times running is being kept moving, and its
 * row is skipped rather than copied (14.5 KiB a try) on and on. */
#define SNAPSHOT_TRIES 16

struct source {
	enum jitter_kind kind;
	char name[64];
	pid_t tid, pid;
	uint64_t starttime;
	uid_t owner;
	int64_t period_ns;
	char strategy[16];
	const struct hist *shared;  /* timer: the worker's memfd, mapped read-only */
	struct probe *probe;
	struct hist *baseline;      /* `jitter --reset` point, or NULL */
	dev_t dev;                  /* timer: the memfd, one thread's only */
	ino_t ino;
	struct source *next;
};

struct jitter {
	struct registry *registry;
	struct observer *observer;  /* NULL: none */
	struct source *sources;
	size_t n;
};

const char *jitter_kind_name(enum jitter_kind k)
{
	static const char *const names[] = { "timer", "probe", "schedstat", "bpf-timer", "bpf-wakeup" };

	return (unsigned)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

int jitter_new(struct jitter **ret, struct registry *r)
{
	struct jitter *j = calloc(1, sizeof(*j));

	if (!j)
		return -ENOMEM;
	j->registry = r;
	*ret = j;
	return 0;
}

void jitter_set_observer(struct jitter *j, struct observer *o)
{
	j->observer = o;
}

static void source_free(struct source *s)
{
	if (s->shared)
		munmap((void *)s->shared, sizeof(struct hist));
	if (s->probe)
		probe_stop(s->probe);
	free(s->baseline);
	free(s);
}

/* Unlink and free every source matching kind (and tid, when tid > 0). */
static void drop(struct jitter *j, enum jitter_kind kind, pid_t tid)
{
	struct source **pp = &j->sources;

	while (*pp) {
		struct source *s = *pp;
		if (s->kind == kind && (tid <= 0 || s->tid == tid)) {
			*pp = s->next;
			if (s->kind == JITTER_PROBE)
				observer_unwatch(j->observer, s->tid);
			source_free(s);
			j->n--;
		} else {
			pp = &s->next;
		}
	}
}

void jitter_free(struct jitter *j)
{
	if (!j)
		return;
	drop(j, JITTER_TIMER, 0);
	drop(j, JITTER_PROBE, 0);
	free(j);
}

static void add(struct jitter *j, struct source *s)
{
	s->next = j->sources;
	j->sources = s;
	j->n++;
}

int jitter_fd_check(int fd, char *msg, size_t len)
{
	const int need = F_SEAL_SHRINK | F_SEAL_GROW;
	int seals = fcntl(fd, F_GET_SEALS);
	struct stat sb;

	/* F_GET_SEALS answers for memfds only (EINVAL for anything else, without
	 * asking a file system): a worker could shrink an unsealed one under our
	 * mapping (SIGBUS for the daemon) */
	if (seals < 0 || (seals & need) != need || fstat(fd, &sb) < 0 || sb.st_size != (off_t)sizeof(struct hist)) {
		snprintf(msg, len, "the descriptor must be a memfd of %zu bytes sealed with F_SEAL_SHRINK and "
			 "F_SEAL_GROW (use rtsched_timer_attach)", sizeof(struct hist));
		return REFUSE_BAD_HISTOGRAM;
	}
	return 0;
}

/* Unmap a timer's histogram that was not handed to a source. */
static void hist_unmapp(void **map)
{
	if (*map && *map != MAP_FAILED)
		munmap(*map, sizeof(struct hist));
}

int jitter_attach(struct jitter *j, pid_t tid, pid_t pid, uid_t owner, size_t max, int64_t period_ns,
		  const char *strategy, int *fd, char *msg, size_t len)
{
	_cleanup_(hist_unmapp) void *map = NULL;
	struct proc_stat st;
	struct source *s;
	struct stat sb;
	size_t mine = 0;
	int r;

	if ((r = jitter_fd_check(*fd, msg, len)) != 0)
		return r;
	if (fstat(*fd, &sb) < 0)
		return -errno;
	for (s = j->sources; s; s = s->next) {
		if (s->kind != JITTER_TIMER || s->tid == tid)
			continue;   /* a new timer on the same thread replaces the old */
		if (s->dev == sb.st_dev && s->ino == sb.st_ino) {
			snprintf(msg, len, "this memfd is the histogram of tid %d already; each thread's timer has a "
				 "memfd of its own", (int)s->tid);
			return REFUSE_BAD_HISTOGRAM;
		}
		mine += s->owner == owner;
	}
	if (mine >= max || j->n >= JITTER_SOURCES_MAX) {
		snprintf(msg, len, "%s has %zu timer histograms attached and may have %zu (its max-threads)",
			 mine >= max ? "this user" : "the daemon", mine >= max ? mine : j->n,
			 mine >= max ? max : (size_t)JITTER_SOURCES_MAX);
		return REFUSE_QUOTA;
	}
	/* a memfd now: its close cannot block */
	map = mmap(NULL, sizeof(struct hist), PROT_READ, MAP_SHARED, *fd, 0);
	r = map == MAP_FAILED ? -errno : 0;
	close(*fd);
	*fd = -1;
	if (r < 0) {
		snprintf(msg, len, "mmap: %s", strerror(-r));
		return r;
	}
	if ((r = hist_check(map)) < 0) {
		snprintf(msg, len, "the memfd holds no histogram of this layout (%s); librtsched and rtschedd differ",
			 strerror(-r));
		return REFUSE_HISTOGRAM_LAYOUT;
	}
	if (proc_read_stat(tid, &st) < 0) {
		snprintf(msg, len, "tid %d: no such thread", (int)tid);
		return REFUSE_NO_SUCH_THREAD;
	}
	drop(j, JITTER_TIMER, tid); /* a new timer on the same thread replaces the old */
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(msg, len, "out of memory");
		return -ENOMEM;
	}
	s->kind = JITTER_TIMER;
	s->tid = tid;
	s->pid = pid;
	s->starttime = st.starttime;
	s->owner = owner;
	s->dev = sb.st_dev;
	s->ino = sb.st_ino;
	s->period_ns = period_ns;
	snprintf(s->strategy, sizeof(s->strategy), "%s", strategy);
	snprintf(s->name, sizeof(s->name), "%s", st.comm);
	s->shared = TAKE_PTR(map);
	add(j, s);
	return 0;
}

void jitter_apply_config(struct jitter *j, const struct config *c)
{
	drop(j, JITTER_PROBE, 0);
	for (size_t i = 0; i < c->n_probes; i++) {
		const struct probe_conf *pc = &c->probes[i];
		struct probe_params pp = { .cpu = pc->cpu, .policy = pc->policy, .priority = pc->priority,
					   .period_ns = (int64_t)pc->period_us * 1000, .noise = pc->noise };
		struct source *s;
		int r;

		snprintf(pp.name, sizeof(pp.name), "%s", pc->name);
		r = waiter_strategy_from_string(pc->strategy);
		pp.strategy = r < 0 ? WAIT_SLEEP : (enum waiter_strategy)r;
		s = calloc(1, sizeof(*s));
		if (!s)
			return;
		r = probe_start(&s->probe, &pp);
		if (r < 0) {
			log_errno(LOG_LEVEL_WARNING, r, "probe %s: cannot start", pc->name);
			free(s);
			continue;
		}
		s->kind = JITTER_PROBE;
		snprintf(s->name, sizeof(s->name), "%s", pc->name);
		s->tid = probe_tid(s->probe);
		/* the observer watches the probe like a managed thread: its
		 * budget, its late wake-ups' culprits */
		struct observer_limits lim;
		observer_limits_of(c, NULL, &lim);
		if (pc->budget_us)
			lim.late_ns = lim.budget_ns = (uint64_t)pc->budget_us * 1000u;
		lim.rule = pc->name;
		observer_watch(j->observer, s->tid, &lim);
		s->pid = getpid();
		s->period_ns = pc->noise ? 0 : pp.period_ns;
		snprintf(s->strategy, sizeof(s->strategy), "%s", pc->noise ? "noise" : pc->strategy);
		add(j, s);
		log_info("probe %s: %s on CPU %d, %s/%d%s%s", pc->name, pc->noise ? "noise" : "latency", pc->cpu,
			 policy_to_string(pc->policy), pc->priority, pc->noise ? "" : ", strategy ",
			 pc->noise ? "" : pc->strategy);
	}
}

void jitter_on_exit(struct jitter *j, pid_t tid)
{
	for (struct source *s = j->sources; s; s = s->next)
		if (s->kind == JITTER_TIMER && s->tid == tid) {
			drop(j, JITTER_TIMER, tid);
			return;
		}
}

/* A consistent copy of a source's histogram, cumulative or since the reset. */
static int source_hist(const struct source *s, struct hist *out, bool since_reset)
{
	const struct hist *src = s->shared ? s->shared : probe_hist(s->probe);
	int r = hist_snapshot(src, out, SNAPSHOT_TRIES);

	if (r == 0 && since_reset && s->baseline)
		r = hist_sub(out, out, s->baseline);
	return r;
}

/* Drop timers whose thread is gone (or whose tid now names another thread). */
static void prune(struct jitter *j)
{
	struct source *s = j->sources, *next;
	struct proc_stat st;

	for (; s; s = next) {
		next = s->next;
		if (s->kind == JITTER_TIMER && (proc_read_stat(s->tid, &st) < 0 || st.starttime != s->starttime))
			drop(j, JITTER_TIMER, s->tid);
	}
}

void jitter_foreach(struct jitter *j, void (*fn)(void *ud, const struct jitter_row *r), void *ud)
{
	struct jitter_row *row = malloc(sizeof(*row));

	if (!row)
		return;
	prune(j);
	for (struct source *s = j->sources; s; s = s->next) {
		memset(row, 0, sizeof(*row));
		row->kind = s->kind;
		snprintf(row->name, sizeof(row->name), "%s", s->name);
		row->tid = s->tid;
		row->pid = s->pid;
		row->period_ns = s->period_ns;
		snprintf(row->strategy, sizeof(row->strategy), "%s", s->strategy);
		struct reg_thread *t = registry_find(j->registry, s->tid);
		snprintf(row->rule, sizeof(row->rule), "%s", t ? (t->req.role[0] ? t->req.role : "default") : "-");
		if (source_hist(s, &row->h, true) < 0)
			hist_init(&row->h);
		row->samples = hist_count(&row->h);
		double mean = 0;
		/* sum and count are the worker's to write: a mean past INT64_MAX
		 * must not reach the (undefined) conversion */
		row->mean_ns = hist_mean(&row->h, &mean) < 0 ? -1 : mean < 0x1p63 ? (int64_t)mean : INT64_MAX;
		fn(ud, row);
	}
	/* every managed thread: what the BPF observer saw of its wake-ups, or
	 * without it its run-queue wait since it was registered (schedstat) */
	REGISTRY_FOREACH_THREAD(t, j->registry) {
		uint64_t run, delay, count, delay0, count0;
		struct proc_stat st;
		const char *comm = proc_read_stat(t->tid, &st) == 0 ? st.comm : "?";
		bool observed = false;

		for (int k = BPFOBS_TIMER; k <= BPFOBS_WAKEUP; k++) {
			double mean = 0;

			memset(row, 0, sizeof(*row));
			if (observer_read(j->observer, t->tid, (enum bpfobs_kind)k, true, &row->h) < 0)
				break;
			observed = true;
			row->kind = k == BPFOBS_TIMER ? JITTER_BPF_TIMER : JITTER_BPF_WAKEUP;
			snprintf(row->name, sizeof(row->name), "%s", comm);
			row->tid = t->tid;
			row->pid = t->pid;
			snprintf(row->rule, sizeof(row->rule), "%s", t->req.role[0] ? t->req.role : "default");
			snprintf(row->strategy, sizeof(row->strategy), "-");
			row->samples = hist_count(&row->h);
			row->mean_ns = hist_mean(&row->h, &mean) < 0 ? -1 : mean < 0x1p63 ? (int64_t)mean : INT64_MAX;
			fn(ud, row);
		}
		if (observed || proc_read_schedstat(t->pid, t->tid, &run, &delay, &count) < 0)
			continue;
		memset(row, 0, sizeof(*row));
		row->kind = JITTER_SCHEDSTAT;
		snprintf(row->name, sizeof(row->name), "%s", comm);
		row->tid = t->tid;
		row->pid = t->pid;
		snprintf(row->rule, sizeof(row->rule), "%s", t->req.role[0] ? t->req.role : "default");
		snprintf(row->strategy, sizeof(row->strategy), "-");
		registry_schedstat_base(t, &delay0, &count0);
		row->samples = count - count0;
		row->mean_ns = row->samples ? (int64_t)((delay - delay0) / row->samples) : -1;
		fn(ud, row);
	}
	free(row);
}

void jitter_reset(struct jitter *j)
{
	for (struct source *s = j->sources; s; s = s->next) {
		if (!s->baseline && !(s->baseline = malloc(sizeof(*s->baseline))))
			continue;
		if (source_hist(s, s->baseline, false) < 0) {
			free(s->baseline);
			s->baseline = NULL;
		}
	}
	registry_schedstat_rebase(j->registry);
	REGISTRY_FOREACH_THREAD(t, j->registry)
		observer_reset(j->observer, t->tid);
}

pid_t jitter_probe_tid(struct jitter *j, const char *name)
{
	for (struct source *s = j->sources; s; s = s->next)
		if (s->kind == JITTER_PROBE && strcmp(s->name, name) == 0)
			return s->tid;
	return 0;
}

const char *jitter_probe_name(struct jitter *j, pid_t tid)
{
	for (struct source *s = j->sources; s; s = s->next)
		if (s->kind == JITTER_PROBE && s->tid == tid)
			return s->name;
	return NULL;
}

size_t jitter_n_sources(const struct jitter *j)
{
	return j ? j->n : 0;
}

int64_t jitter_worst_p99(struct jitter *j, char *who, size_t len)
{
	struct hist *h = malloc(sizeof(*h));
	int64_t worst = -1, p;

	if (!h)
		return -1;
	for (struct source *s = j->sources; s; s = s->next)
		if (source_hist(s, h, false) == 0 && hist_percentile(h, 99, &p) == 0 && p > worst) {
			worst = p;
			snprintf(who, len, "%s", s->name);
		}
	free(h);
	return worst;
}

/* A label: its value may be a thread's name, any bytes (escape.h). */
static void label(FILE *f, const char *key, const char *v, bool last)
{
	fprintf(f, "%s=\"", key);
	escape_prom(f, v);
	fprintf(f, "\"%s", last ? "" : ",");
}

/* The labels of a series: thread, tid, rule, cpu, and source, which says
 * how it was measured (timer: librtsched in the thread; probe: rtschedd's
 * own thread; bpf-timer, bpf-wakeup: the BPF observer, from outside). */
static void labels(FILE *f, struct jitter *j, const char *name, pid_t tid_, enum jitter_kind kind)
{
	struct task_sched ts;
	char cpus[128] = "?", tid[16];
	struct reg_thread *t = registry_find(j->registry, tid_);

	if (task_sched_read(tid_, &ts) == 0)
		cpulist_format(&ts.cpus, cpus, sizeof(cpus));
	snprintf(tid, sizeof(tid), "%d", (int)tid_);
	label(f, "thread", name, false);
	label(f, "tid", tid, false);
	label(f, "rule", t ? (t->req.role[0] ? t->req.role : "default") : "-", false);
	label(f, "cpu", cpus, false);
	label(f, "source", jitter_kind_name(kind), true);
}

/* One histogram series: cumulative buckets at the le bounds, +Inf, sum, count. */
static void put_hist(FILE *f, struct jitter *j, const char *name, pid_t tid, enum jitter_kind kind,
		     const struct hist *h)
{
	static const double le[] = { 1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3,
				     2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2, 0.1, 0.25, 0.5, 1.0 };
	uint64_t cum = 0;
	int idx = 0;

	for (size_t i = 0; i < sizeof(le) / sizeof(le[0]); i++) {
		int64_t bound = (int64_t)(le[i] * 1e9 + 0.5);
		while ((idx = hist_bucket_next(h, idx)) >= 0 && hist_bucket_upper(idx) <= bound) {
			cum += hist_bucket_count(h, idx);
			idx++;
		}
		if (idx < 0)
			idx = HIST_NBUCKETS;
		fprintf(f, "rtschedd_wakeup_latency_seconds_bucket{");
		labels(f, j, name, tid, kind);
		fprintf(f, ",le=\"%g\"} %" PRIu64 "\n", le[i], cum);
	}
	fprintf(f, "rtschedd_wakeup_latency_seconds_bucket{");
	labels(f, j, name, tid, kind);
	fprintf(f, ",le=\"+Inf\"} %" PRIu64 "\n", hist_count(h));
	fprintf(f, "rtschedd_wakeup_latency_seconds_sum{");
	labels(f, j, name, tid, kind);
	fprintf(f, "} %.9f\n", hist_sum(h) / 1e9);
	fprintf(f, "rtschedd_wakeup_latency_seconds_count{");
	labels(f, j, name, tid, kind);
	fprintf(f, "} %" PRIu64 "\n", hist_count(h));
}

/* The labels of a thread's late wake-ups: thread, tid, rule (a probe's is "-"). */
static void late_labels(FILE *f, const char *name, const char *tid, const char *rule, bool last)
{
	label(f, "thread", name, false);
	label(f, "tid", tid, false);
	label(f, "rule", rule, last);
}

/* Every watched thread (managed ones, then probes) through fn. */
static void foreach_watched(struct jitter *j, void (*fn)(struct jitter *j, FILE *f, pid_t tid, const char *name,
							   const char *rule), FILE *f)
{
	struct proc_stat st;

	REGISTRY_FOREACH_THREAD(t, j->registry)
		fn(j, f, t->tid, proc_read_stat(t->tid, &st) == 0 ? st.comm : "?",
		   t->req.role[0] ? t->req.role : "default");
	for (struct source *s = j->sources; s; s = s->next)
		if (s->kind == JITTER_PROBE)
			fn(j, f, s->tid, s->name, "-");
}

static void put_late(struct jitter *j, FILE *f, pid_t tid, const char *name, const char *rule)
{
	struct observer_late ol;
	char t[16];

	if (observer_late(j->observer, tid, &ol) < 0)
		return;
	snprintf(t, sizeof(t), "%d", (int)tid);
	for (int k = BPFOBS_TIMER; k <= BPFOBS_WAKEUP; k++) {
		fprintf(f, "rtschedd_late_wakeups_total{");
		late_labels(f, name, t, rule, false);
		label(f, "from", k == BPFOBS_TIMER ? "timer" : "wakeup", true);
		fprintf(f, "} %" PRIu64 "\n", ol.late[k]);
	}
}

static void put_budget(struct jitter *j, FILE *f, pid_t tid, const char *name, const char *rule)
{
	struct observer_late ol;
	char t[16];

	if (observer_late(j->observer, tid, &ol) < 0 || !ol.lim.budget_ns)
		return;
	snprintf(t, sizeof(t), "%d", (int)tid);
	fprintf(f, "rtschedd_budget_seconds{");
	late_labels(f, name, t, rule, true);
	fprintf(f, "} %.9f\n", (double)ol.lim.budget_ns / 1e9);
}

static void put_misses(struct jitter *j, FILE *f, pid_t tid, const char *name, const char *rule)
{
	struct observer_late ol;
	char t[16];

	if (observer_late(j->observer, tid, &ol) < 0 || !ol.lim.budget_ns)
		return;
	snprintf(t, sizeof(t), "%d", (int)tid);
	fprintf(f, "rtschedd_budget_misses_total{");
	late_labels(f, name, t, rule, true);
	fprintf(f, "} %" PRIu64 "\n", ol.late[BPFOBS_TIMER] + ol.late[BPFOBS_WAKEUP]);
}

/* One culprit series of a thread's: delay, or (first) late wake-ups it led. */
static void put_culprit(struct jitter *j, FILE *f, const char *metric, const char *name, const char *tid,
			const char *rule, const struct culprit_entry *e, bool first)
{
	char who[160];

	observer_label(j->observer, &e->key, who, sizeof(who));
	fprintf(f, "%s{", metric);
	late_labels(f, name, tid, rule, false);
	label(f, "culprit", who, false);
	label(f, "kind", culprit_kind_name(e->key.kind), true);
	if (first)
		fprintf(f, "} %" PRIu64 "\n", e->first);
	else
		fprintf(f, "} %.9f\n", (double)e->total_ns / 1e9);
}

static void put_culprits(struct jitter *j, FILE *f, pid_t tid, const char *name, const char *rule, bool first)
{
	const struct culprit_table *t = observer_table(j->observer, tid);
	const char *metric = first ? "rtschedd_late_first_total" : "rtschedd_late_delay_seconds_total";
	const struct culprit_entry *e[CULPRIT_TOP];
	struct culprit_entry other;
	char ts[16];
	size_t n;

	if (!t)
		return;
	snprintf(ts, sizeof(ts), "%d", (int)tid);
	n = culprit_table_sorted(t, e, CULPRIT_TOP);
	for (size_t i = 0; i < n; i++)
		put_culprit(j, f, metric, name, ts, rule, e[i], first);
	/* other from the first fold on, so its series never vanishes again */
	culprit_table_other(t, &other);
	if (other.total_ns || other.first)
		put_culprit(j, f, metric, name, ts, rule, &other, first);
}

static void put_delay(struct jitter *j, FILE *f, pid_t tid, const char *name, const char *rule)
{
	put_culprits(j, f, tid, name, rule, false);
}

static void put_first(struct jitter *j, FILE *f, pid_t tid, const char *name, const char *rule)
{
	put_culprits(j, f, tid, name, rule, true);
}

int jitter_prometheus(struct jitter *j, FILE *f, const struct jitter_counters *c)
{
	struct hist *h = malloc(sizeof(*h));

	if (!h)
		return -ENOMEM;
	prune(j);
	fprintf(f, "# HELP rtschedd_wakeup_latency_seconds Wake-up latency of managed threads and probes; source says "
		   "how it was measured: timer, probe (lateness measured by the thread), bpf-timer (timer expiry to "
		   "running), bpf-wakeup (wake-up to running), both observed by BPF.\n"
		   "# TYPE rtschedd_wakeup_latency_seconds histogram\n");
	for (struct source *s = j->sources; s; s = s->next)
		if (source_hist(s, h, false) == 0)
			put_hist(f, j, s->name, s->tid, s->kind, h);
	REGISTRY_FOREACH_THREAD(t, j->registry) {
		struct proc_stat st;

		for (int k = BPFOBS_TIMER; k <= BPFOBS_WAKEUP; k++)
			if (observer_read(j->observer, t->tid, (enum bpfobs_kind)k, false, h) == 0)
				put_hist(f, j, proc_read_stat(t->tid, &st) == 0 ? st.comm : "?", t->tid,
					 k == BPFOBS_TIMER ? JITTER_BPF_TIMER : JITTER_BPF_WAKEUP, h);
	}
	fprintf(f, "# HELP rtschedd_overruns_total Periods missed by periodic threads and probes.\n"
		   "# TYPE rtschedd_overruns_total counter\n");
	for (struct source *s = j->sources; s; s = s->next) {
		if (source_hist(s, h, false) < 0)
			continue;
		fprintf(f, "rtschedd_overruns_total{");
		labels(f, j, s->name, s->tid, s->kind);
		fprintf(f, "} %" PRIu64 "\n", hist_overruns(h));
	}
	free(h);
	fprintf(f, "# HELP rtschedd_runqueue_wait_seconds_total Time managed threads waited to run (schedstat run_delay).\n"
		   "# TYPE rtschedd_runqueue_wait_seconds_total counter\n");
	REGISTRY_FOREACH_THREAD(t, j->registry) {
		uint64_t run, delay, count;
		struct proc_stat st;
		char tid[16];

		if (proc_read_schedstat(t->pid, t->tid, &run, &delay, &count) < 0 || proc_read_stat(t->tid, &st) < 0)
			continue;
		snprintf(tid, sizeof(tid), "%d", (int)t->tid);
		fprintf(f, "rtschedd_runqueue_wait_seconds_total{");
		label(f, "thread", st.comm, false);
		label(f, "tid", tid, false);
		label(f, "rule", t->req.role[0] ? t->req.role : "default", true);
		fprintf(f, "} %.9f\n", delay / 1e9);
	}
	fprintf(f, "# HELP rtschedd_late_wakeups_total Wake-ups of a managed thread or probe later than its threshold "
		   "(its budget-us, else late-threshold-us), seen by the BPF observer; from says what the lateness was "
		   "measured from: timer (the expiry of the timer that woke it) or wakeup.\n"
		   "# TYPE rtschedd_late_wakeups_total counter\n");
	foreach_watched(j, put_late, f);
	fprintf(f, "# HELP rtschedd_budget_seconds The latency budget (budget-us) of a managed thread or probe.\n"
		   "# TYPE rtschedd_budget_seconds gauge\n");
	foreach_watched(j, put_budget, f);
	fprintf(f, "# HELP rtschedd_budget_misses_total Wake-ups of a thread with a budget later than it.\n"
		   "# TYPE rtschedd_budget_misses_total counter\n");
	foreach_watched(j, put_misses, f);
	fprintf(f, "# HELP rtschedd_late_delay_seconds_total Delay of late wake-ups by culprit (what ran on the "
		   "thread's CPU meanwhile): the top %d culprits per thread, the rest as culprit=\"other\".\n"
		   "# TYPE rtschedd_late_delay_seconds_total counter\n", CULPRIT_TOP);
	foreach_watched(j, put_delay, f);
	fprintf(f, "# HELP rtschedd_late_first_total Late wake-ups in which a culprit had the largest part of the "
		   "delay (the top %d per thread, the rest as culprit=\"other\").\n"
		   "# TYPE rtschedd_late_first_total counter\n", CULPRIT_TOP);
	foreach_watched(j, put_first, f);
	fprintf(f, "# HELP rtschedd_managed_threads Threads whose scheduling rtschedd manages.\n"
		   "# TYPE rtschedd_managed_threads gauge\n"
		   "rtschedd_managed_threads %zu\n"
		   "# HELP rtschedd_grants_total Registrations granted.\n"
		   "# TYPE rtschedd_grants_total counter\n"
		   "rtschedd_grants_total %lu\n"
		   "# HELP rtschedd_refusals_total Requests refused.\n"
		   "# TYPE rtschedd_refusals_total counter\n"
		   "rtschedd_refusals_total %lu\n",
		registry_n_threads(j->registry), c->grants, c->refusals);
	if (c->watchdog_trips >= 0)
		fprintf(f, "# HELP rtschedd_watchdog_trips_total Times the watchdog demoted real-time threads that "
			   "starved a CPU.\n"
			   "# TYPE rtschedd_watchdog_trips_total counter\n"
			   "rtschedd_watchdog_trips_total %ld\n", c->watchdog_trips);
	fprintf(f, "# HELP rtschedd_metrics_interval_seconds How often rtschedd writes its metrics file "
		   "(metrics-interval).\n"
		   "# TYPE rtschedd_metrics_interval_seconds gauge\n"
		   "rtschedd_metrics_interval_seconds %u\n", c->interval_s);
	if (c->timestamp)
		fprintf(f, "# HELP rtschedd_metrics_written_timestamp_seconds When rtschedd wrote this file: a file that "
			   "stops being rewritten means rtschedd is down.\n"
			   "# TYPE rtschedd_metrics_written_timestamp_seconds gauge\n"
			   "rtschedd_metrics_written_timestamp_seconds %lld\n", (long long)time(NULL));
	return ferror(f) ? -EIO : 0;
}
