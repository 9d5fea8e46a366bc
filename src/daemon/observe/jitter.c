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
#include <unistd.h>

#include "daemon/sys/cpulist.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "shared/escape.h"
#include "shared/waiter.h"
#include "daemon/observe/jitter.h"
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

int jitter_attach(struct jitter *j, pid_t tid, pid_t pid, uid_t owner, size_t max, int64_t period_ns,
		  const char *strategy, int *fd, char *msg, size_t len)
{
	struct proc_stat st;
	struct source *s;
	struct stat sb;
	size_t mine = 0;
	void *map;
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
		munmap(map, sizeof(struct hist));
		snprintf(msg, len, "the memfd holds no histogram of this layout (%s); librtsched and rtschedd differ",
			 strerror(-r));
		return REFUSE_HISTOGRAM_LAYOUT;
	}
	if (proc_read_stat(tid, &st) < 0) {
		munmap(map, sizeof(struct hist));
		snprintf(msg, len, "tid %d: no such thread", (int)tid);
		return REFUSE_NO_SUCH_THREAD;
	}
	drop(j, JITTER_TIMER, tid); /* a new timer on the same thread replaces the old */
	s = calloc(1, sizeof(*s));
	if (!s) {
		munmap(map, sizeof(struct hist));
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
	s->shared = map;
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
	for (struct reg_thread *t = registry_threads(j->registry); t; t = t->next) {
		uint64_t run, delay, count;
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
		row->samples = count - t->ss_count0;
		row->mean_ns = row->samples ? (int64_t)((delay - t->ss_delay0) / row->samples) : -1;
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
	for (struct reg_thread *t = registry_threads(j->registry); t; t = t->next) {
		uint64_t run;
		proc_read_schedstat(t->pid, t->tid, &run, &t->ss_delay0, &t->ss_count0);
		observer_reset(j->observer, t->tid);
	}
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

int jitter_prometheus(struct jitter *j, FILE *f, unsigned long grants, unsigned long refusals)
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
	for (struct reg_thread *t = registry_threads(j->registry); t; t = t->next) {
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
	for (struct reg_thread *t = registry_threads(j->registry); t; t = t->next) {
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
	fprintf(f, "# HELP rtschedd_managed_threads Threads whose scheduling rtschedd manages.\n"
		   "# TYPE rtschedd_managed_threads gauge\n"
		   "rtschedd_managed_threads %zu\n"
		   "# HELP rtschedd_grants_total Registrations granted.\n"
		   "# TYPE rtschedd_grants_total counter\n"
		   "rtschedd_grants_total %lu\n"
		   "# HELP rtschedd_refusals_total Requests refused.\n"
		   "# TYPE rtschedd_refusals_total counter\n"
		   "rtschedd_refusals_total %lu\n",
		registry_n_threads(j->registry), grants, refusals);
	return ferror(f) ? -EIO : 0;
}
