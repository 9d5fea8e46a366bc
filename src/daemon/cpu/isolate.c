/* isolate.c: what is isolated when, the journal of what it changed, the
 * kernel threads, the workqueue mask and the IRQ hook (see isolate.h); the
 * cgroup side is the backends' (isolate_v1.c, isolate_sd.c). */
#include "autoconfig.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "daemon/core/registry.h"
#include "daemon/core/state.h"
#include "daemon/cpu/isolate.h"
#include "daemon/cpu/isolate_int.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/kfile.h"
#include "daemon/sys/log.h"
#include "daemon/sys/proc.h"
#include "daemon/sys/clock.h"
#include "shared/protocol.h"

#define WQ_MASK "/sys/devices/virtual/workqueue/cpumask"

void iso_fail(struct isolate *m, const char *code, int err, const char *fmt, ...)
{
	char why[sizeof(m->why)];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (err && n >= 0 && (size_t)n < sizeof(why))
		snprintf(why + n, sizeof(why) - (size_t)n, ": %s", strerror(err < 0 ? -err : err));
	/* once, not at every retry */
	if (m->logged != code || strcmp(m->logged_why, why) != 0)
		log_warnx("isolation (%s): %s", code, why);
	m->code = m->logged = code;
	snprintf(m->why, sizeof(m->why), "%s", why);
	snprintf(m->logged_why, sizeof(m->logged_why), "%s", why);
}

/* --- the journal ----------------------------------------------------------------------- */

static void put_rec(FILE *f, const struct iso_rec *r)
{
	char cpus[4096];

	if (!r->has_cpus || cpulist_format(&r->cpus, cpus, sizeof(cpus)) < 0 || !cpus[0])
		snprintf(cpus, sizeof(cpus), "-");
	switch (r->kind) {
	case 'M': fprintf(f, "M %ld %" PRIu64 " %s\n", r->id, r->starttime, r->text); break;
	case 'A': fprintf(f, "A %ld %" PRIu64 " %s\n", r->id, r->starttime, cpus); break;
	case 'G': case 'U': fprintf(f, "%c %ld %s %s\n", r->kind, r->id, cpus, r->text); break;
	}
}

static void put_rec_line(FILE *f, const void *arg)
{
	put_rec(f, arg);
}

static const char *backend_name(enum iso_backend b)
{
	return b == ISO_V1 ? "v1" : b == ISO_SYSTEMD ? "systemd" : "none";
}

/* S and W: what is isolated, the workqueue mask before. */
static size_t put_setup(struct isolate *m, FILE *f)
{
	char cpus[4096];
	size_t n = 0;

	if (CPU_COUNT(&m->active) && cpulist_format(&m->active, cpus, sizeof(cpus)) == 0) {
		fprintf(f, "S 0 %s %s\n", backend_name(m->backend), cpus);
		n++;
	} else if (m->owned) {
		fprintf(f, "S 0 %s -\n", backend_name(m->backend));
		n++;
	}
	if (m->wq_written) {
		fprintf(f, "W 0 %s\n", m->wq_orig);
		n++;
	}
	if (m->lb_orig >= 0) {
		fprintf(f, "L 0 %d\n", m->lb_orig);
		n++;
	}
	return n;
}

static size_t journal_writer(void *ud, FILE *f)
{
	struct isolate *m = ud;
	size_t n = put_setup(m, f);

	for (struct iso_rec *r = m->recs; r; r = r->next, n++)
		put_rec(f, r);
	return n;
}

/* A line of the last run's isolation: what it changed becomes ours to put
 * back; "S" says CPUs are isolated (by the backend named). */
static void journal_take(void *ud, char *line)
{
	struct isolate *m = ud;
	char kind = line[0], *save = NULL, *tok[4] = { NULL };
	long id;

	strtok_r(line, " ", &save);
	for (int i = 0; i < 4; i++)
		tok[i] = strtok_r(NULL, " ", &save);
	if (!tok[0] || !tok[1] || proto_parse_long(tok[0], 0, INT32_MAX, &id) < 0)
		goto bad;
	if (kind == 'S') {
		/* "-": the group is still ours, nothing isolated (a release that could not finish) */
		if (!tok[2] || strcmp(tok[1], backend_name(m->backend)) != 0 ||
		    (strcmp(tok[2], "-") && cpulist_parse(tok[2], &m->active, NULL) < 0))
			goto bad;
		m->owned = true;
		m->dirty = true;
		return;
	}
	if (kind == 'L') {
		if (strcmp(tok[1], "0") && strcmp(tok[1], "1"))
			goto bad;
		m->lb_orig = tok[1][0] - '0';
		return;
	}
	if (kind == 'W') {
		if (strspn(tok[1], "0123456789abcdefABCDEF,") != strlen(tok[1]) || strlen(tok[1]) >= sizeof(m->wq_orig))
			goto bad;
		snprintf(m->wq_orig, sizeof(m->wq_orig), "%s", tok[1]);
		m->wq_written = true;
		return;
	}
	cpu_set_t cpus;
	uint64_t st = 0;
	bool has = true;
	const char *cs = kind == 'M' ? NULL : kind == 'A' ? tok[2] : tok[1];
	const char *text = kind == 'M' ? tok[2] : kind == 'A' ? NULL : tok[2];
	CPU_ZERO(&cpus);
	if (kind == 'M' || kind == 'A') {
		char *end;
		errno = 0;
		st = strtoull(tok[1], &end, 10);
		if (errno || *end)
			goto bad;
	}
	if (cs && strcmp(cs, "-") == 0 && kind == 'U')
		has = false;
	else if (cs && (!*cs || cpulist_parse(cs, &cpus, NULL) < 0))
		goto bad;
	if ((kind == 'M' || kind == 'G') && (!text || !cgroupfs_path_ok(text)))
		goto bad;
	if (kind == 'U' && (!text || !cgroupfs_path_ok(text) || strcmp(text, "/") == 0))
		goto bad;
	if (kind != 'M' && kind != 'A' && kind != 'G' && kind != 'U')
		goto bad;
	struct iso_rec *r = calloc(1, sizeof(*r));
	if (!r || (text && !(r->text = strdup(text)))) {
		free(r);
		return;
	}
	*r = (struct iso_rec){ .kind = kind, .id = id, .starttime = st, .has_cpus = has, .cpus = cpus,
			       .text = r->text, .next = m->recs };
	m->recs = r;
	if ((kind == 'G' || kind == 'U') && id >= m->next_id)
		m->next_id = id + 1;
	m->dirty = true;
	return;
bad:
	log_warnx("state journal: a malformed isolation entry (%c), dropped", kind);
}

struct iso_rec *iso_rec_add(struct isolate *m, char kind, long id, uint64_t starttime, const cpu_set_t *cpus,
			    const char *text)
{
	struct iso_rec *r = calloc(1, sizeof(*r));

	if (!r || (text && !(r->text = strdup(text)))) {
		free(r);
		log_warnx("isolation: out of memory; a change will not be put back");
		return NULL;
	}
	r->kind = kind;
	r->id = kind == 'G' || kind == 'U' ? m->next_id++ : id;
	r->starttime = starttime;
	r->has_cpus = cpus != NULL;
	if (cpus)
		r->cpus = *cpus;
	r->next = m->recs;
	m->recs = r;
	state_put_with(m->state, put_rec_line, r);
	return r;
}

struct iso_rec *iso_rec_find(struct isolate *m, char kind, long id)
{
	for (struct iso_rec *r = m->recs; r; r = r->next)
		if (r->kind == kind && r->id == id)
			return r;
	return NULL;
}

void iso_rec_drop(struct isolate *m, struct iso_rec *rec)
{
	for (struct iso_rec **p = &m->recs; *p; p = &(*p)->next)
		if (*p == rec) {
			*p = rec->next;
			state_put_gone(m->state, rec->kind, rec->id);
			free(rec->text);
			free(rec);
			return;
		}
}

/* --- tasks --------------------------------------------------------------------------------- */

bool iso_same_task(pid_t tid, uint64_t starttime)
{
	struct proc_stat st;

	return proc_read_stat(tid, &st) == 0 && st.starttime == starttime;
}

bool iso_keeps(struct isolate *m, pid_t tid)
{
	char p[64];

	if (registry_find(m->registry, tid))
		return true;
	/* rtschedd's own threads: the main thread's affinity is narrowed
	 * instead (own_threads()), the pinned ones stay */
	snprintf(p, sizeof(p), "/proc/self/task/%d", (int)tid);
	return access(p, F_OK) == 0;
}

void iso_stay(struct isolate *m, const char *comm)
{
	size_t n = strlen(m->stay), k = strlen(comm);

	/* once each: a sweep passes several times */
	for (const char *p = m->stay; (p = strstr(p, comm)); p += k)
		if ((p == m->stay || p[-1] == ' ') && (p[k] == ',' || p[k] == '\0'))
			return;
	if (n + k + 6 >= sizeof(m->stay)) {
		if (!strstr(m->stay, "..."))
			snprintf(m->stay + n, sizeof(m->stay) - n, ", ...");
		return;
	}
	snprintf(m->stay + n, sizeof(m->stay) - n, "%s%s", n ? ", " : "", comm);
}

void iso_kthread(struct isolate *m, pid_t tid, const char *comm, unsigned fl, uint64_t starttime, const cpu_set_t *cpus)
{
	cpu_set_t aff, rest;

	if (sched_getaffinity(tid, sizeof(aff), &aff) < 0)
		return;
	CPU_AND(&rest, &aff, cpus);
	if (CPU_COUNT(&rest) == 0)
		return; /* not on the isolated CPUs (or moved off already) */
	CPU_XOR(&rest, &aff, &rest); /* aff without cpus */
	if ((fl & PROC_PF_NO_SETAFFINITY) || CPU_COUNT(&rest) == 0) {
		iso_stay(m, comm); /* the kernel's own per-CPU thread */
		return;
	}
	if (iso_rec_find(m, 'A', tid))
		return; /* moved already (and narrowed() widens or narrows it with the CPUs) */
	if (sched_setaffinity(tid, sizeof(rest), &rest) < 0) {
		iso_stay(m, comm);
		return;
	}
	iso_rec_add(m, 'A', tid, starttime, &aff, NULL);
	m->kthreads++;
}

/* The CPUs isolated changed: every affinity isolation narrowed is its
 * original without them. */
static void renarrow(struct isolate *m, const cpu_set_t *cpus)
{
	for (struct iso_rec *r = m->recs; r; r = r->next) {
		cpu_set_t want, now;

		if (r->kind != 'A')
			continue;
		CPU_AND(&want, &r->cpus, cpus);
		CPU_XOR(&want, &r->cpus, &want);
		if (CPU_COUNT(&want) && sched_getaffinity((pid_t)r->id, sizeof(now), &now) == 0 && !CPU_EQUAL(&now, &want) &&
		    iso_same_task((pid_t)r->id, r->starttime))
			sched_setaffinity((pid_t)r->id, sizeof(want), &want);
	}
}

/* rtschedd's own threads that are not pinned to the isolated CPUs (the
 * main thread) leave them by their affinity. */
static void own_threads(struct isolate *m, const cpu_set_t *cpus)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		struct proc_stat st;
		cpu_set_t aff, in;

		if (tid <= 0 || iso_rec_find(m, 'A', tid) || sched_getaffinity(tid, sizeof(aff), &aff) < 0 ||
		    proc_read_stat(tid, &st) < 0)
			continue;
		CPU_AND(&in, &aff, cpus);
		if (CPU_COUNT(&in) == 0 || CPU_EQUAL(&in, &aff))
			continue; /* off them, or pinned there (a probe, a canary) */
		CPU_XOR(&in, &aff, &in);
		if (sched_setaffinity(tid, sizeof(in), &in) == 0)
			iso_rec_add(m, 'A', tid, st.starttime, &aff, NULL);
	}
	closedir(d);
}

/* Every affinity put back, where the task is still the one recorded and
 * was not given another meanwhile. */
static void affinities_back(struct isolate *m)
{
	struct iso_rec *r, *next;

	for (r = m->recs; r; r = next) {
		next = r->next;
		if (r->kind != 'A')
			continue;
		if (iso_same_task((pid_t)r->id, r->starttime) &&
		    sched_setaffinity((pid_t)r->id, sizeof(r->cpus), &r->cpus) < 0 && errno != ESRCH)
			log_warn("isolation: giving tid %ld its CPUs back", r->id);
		iso_rec_drop(m, r);
	}
}

/* --- the unbound workqueues' mask ------------------------------------------------------ */

/* cpus as the kernel's hex bitmap: 32-bit words, most significant first. */
static void mask_format(const cpu_set_t *cpus, char *buf, size_t len)
{
	int words = 1, off = 0;

	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, cpus))
			words = c / 32 + 1;
	buf[0] = '\0';
	for (int w = words - 1; w >= 0; w--) {
		uint32_t v = 0;
		for (int b = 0; b < 32; b++)
			if (CPU_ISSET(w * 32 + b, cpus))
				v |= 1u << b;
		off += snprintf(buf + off, len - (size_t)off, w == words - 1 ? "%x" : ",%08x", v);
		if ((size_t)off >= len)
			return;
	}
}

static int mask_parse(const char *s, cpu_set_t *cpus)
{
	int nwords = 1, w;

	CPU_ZERO(cpus);
	for (const char *p = s; *p; p++)
		nwords += *p == ',';
	w = nwords - 1;
	for (const char *p = s; *p; w--) {
		char *end;
		unsigned long v = strtoul(p, &end, 16);

		if (end == p || (*end && *end != ',') || v > 0xffffffffUL)
			return -EINVAL;
		for (int b = 0; b < 32; b++)
			if ((v >> b & 1) && w * 32 + b < CPU_SETSIZE)
				CPU_SET(w * 32 + b, cpus);
		p = *end ? end + 1 : end;
	}
	return 0;
}

static int wq_path(struct isolate *m, char *buf, size_t len)
{
	return kfile_path(buf, len, m->env.sys, "%s", WQ_MASK);
}

/* Unbound work runs on the housekeeping CPUs (of those it was allowed). */
static void wq_apply(struct isolate *m, const cpu_set_t *hk)
{
	char p[PATH_MAX], now[64], text[64];
	cpu_set_t orig, want;
	int r;

	if (wq_path(m, p, sizeof(p)) < 0 || kfile_read(AT_FDCWD, p, now, sizeof(now)) < 0)
		return; /* a kernel without it (before 4.2) */
	if (mask_parse(m->wq_written ? m->wq_orig : now, &orig) < 0)
		return;
	CPU_AND(&want, &orig, hk);
	if (CPU_COUNT(&want) == 0)
		want = *hk;
	mask_format(&want, text, sizeof(text));
	if (m->wq_written && strcmp(now, m->wq_wrote) == 0 && strcmp(now, text) == 0)
		return;
	if ((r = kfile_write(AT_FDCWD, p, text)) < 0) {
		iso_fail(m, ISOLATE_CODE_REFUSED, r, "the unbound workqueues' mask %s to %s", p, text);
		return;
	}
	if (!m->wq_written) {
		snprintf(m->wq_orig, sizeof(m->wq_orig), "%s", now);
		m->wq_written = true;
		state_put(m->state, "W 0 %s", now);
	}
	/* the kernel may print it in its own width: keep what it reads back */
	if (kfile_read(AT_FDCWD, p, m->wq_wrote, sizeof(m->wq_wrote)) < 0)
		snprintf(m->wq_wrote, sizeof(m->wq_wrote), "%s", text);
}

static void wq_release(struct isolate *m)
{
	char p[PATH_MAX], now[64];
	int r;

	if (!m->wq_written)
		return;
	if (wq_path(m, p, sizeof(p)) == 0 && kfile_read(AT_FDCWD, p, now, sizeof(now)) == 0 && m->wq_wrote[0] &&
	    strcmp(now, m->wq_wrote) != 0)
		log_notice("isolation: the unbound workqueues' mask is %s, not what rtschedd wrote; left as it is", now);
	else if ((r = kfile_write(AT_FDCWD, p, m->wq_orig)) < 0)
		log_errno(LOG_LEVEL_WARNING, r, "isolation: cannot put the unbound workqueues' mask back to %s",
			  m->wq_orig);
	m->wq_written = false;
	m->wq_wrote[0] = '\0';
	state_put_gone(m->state, 'W', 0);
}

/* --- what is wanted ------------------------------------------------------------------------ */

/* The CPUs c isolates for the threads managed now and its probes, and
 * who wants them (into m->who). */
static void wanted(struct isolate *m, const struct config *c, cpu_set_t *want)
{
	const struct rule *seen[8];
	size_t n_seen = 0, off = 0;

	CPU_ZERO(want);
	m->who[0] = '\0';
	if (!c->n_quiet)
		return;
	for (size_t i = 0; i < c->n_probes; i++)
		if (c->probes[i].quiet.isolate) {
			CPU_SET(c->probes[i].cpu, want);
			off += (size_t)snprintf(m->who + off, off < sizeof(m->who) ? sizeof(m->who) - off : 0, "%sprobe %s",
						off ? ", " : "", c->probes[i].name);
		}
	REGISTRY_FOREACH_THREAD(t, m->registry) {
		const struct rule *rl = t->req.role[0] ? config_find_rule(c, t->req.role) : NULL;
		bool dup = false;

		if (!rl || !rl->quiet.isolate)
			continue;
		CPU_OR(want, want, &rl->spec.cpus);
		for (size_t i = 0; i < n_seen; i++)
			dup |= seen[i] == rl;
		if (dup)
			continue;
		if (n_seen < sizeof(seen) / sizeof(seen[0]))
			seen[n_seen++] = rl;
		off += (size_t)snprintf(m->who + off, off < sizeof(m->who) ? sizeof(m->who) - off : 0, "%srule %s",
					off ? ", " : "", rl->name);
	}
}

/* --- the cycle ---------------------------------------------------------------------------- */

/* Anything isolated, or changed and not yet put back (a journal's)? */
static bool leftovers(const struct isolate *m)
{
	return CPU_COUNT(&m->active) || m->recs || m->wq_written || m->owned || m->lb_orig >= 0;
}

static void release(struct isolate *m)
{
	uint64_t t0 = clock_usec(CLOCK_MONOTONIC);
	bool was = CPU_COUNT(&m->active) > 0;
	char cpus[256];

	if (m->irq_fn) {
		cpu_set_t none;
		CPU_ZERO(&none);
		m->irq_fn(m->irq_ud, &none);
	}
	wq_release(m);
	if (m->backend == ISO_V1)
		iso_v1_release(m);
	else if (m->backend == ISO_SYSTEMD)
		iso_sd_release(m);
	affinities_back(m);
	cpulist_format(&m->active, cpus, sizeof(cpus));
	CPU_ZERO(&m->active);
	if (m->owned)
		state_put(m->state, "S 0 %s -", backend_name(m->backend));
	else
		state_put_gone(m->state, 'S', 0);
	m->moved = m->kthreads = m->groups = 0;
	m->stay[0] = '\0';
	if (!was)
		return;
	m->release_usec = clock_usec(CLOCK_MONOTONIC) - t0;
	log_info("isolation of CPU %s released in %.1f ms", cpus, m->release_usec / 1000.0);
}

/* The tasks moved (M) or narrowed by affinity (A) that are gone: nothing
 * to put back, and their tids may be another task's now. Bounds the
 * records (and journal lines) by the tasks alive. */
void iso_prune_gone(struct isolate *m)
{
	struct iso_rec *r, *next;

	for (r = m->recs; r; r = next) {
		next = r->next;
		if ((r->kind == 'A' || r->kind == 'M') && !iso_same_task((pid_t)r->id, r->starttime))
			iso_rec_drop(m, r);
	}
}

void isolate_update(struct isolate *m, const struct config *c)
{
	cpu_set_t want, online, hk;
	char cpus[256];
	int r;

	wanted(m, c, &want);
	/* after every change: the online CPUs only when there is something to
	 * isolate (none readable: no housekeeping CPU, below) */
	CPU_ZERO(&online);
	if (CPU_COUNT(&want) > 0 && cpulist_online(&online) == 0)
		CPU_AND(&want, &want, &online);
	if (CPU_COUNT(&want) == 0) {
		if (leftovers(m))
			release(m);
		m->code = NULL;
		m->why[0] = '\0';
		return;
	}
	CPU_XOR(&hk, &online, &want);
	CPU_AND(&hk, &hk, &online);
	cpulist_format(&want, cpus, sizeof(cpus));
	if (m->backend == ISO_NONE) {
		iso_fail(m, ISOLATE_CODE_UNAVAILABLE, 0, "CPU %s for %s: no cpuset controller rtschedd can use (neither "
			 "the v1 cpuset hierarchy nor cgroup2 with the cpuset controller under systemd)", cpus, m->who);
		return;
	}
	if (CPU_COUNT(&hk) == 0) {
		iso_fail(m, ISOLATE_CODE_NO_HOUSEKEEPING, 0, "CPU %s for %s is every online CPU: the rest of the system "
			 "needs one; the threads stay managed, nothing is isolated", cpus, m->who);
		if (leftovers(m))
			release(m);
		return;
	}
	if (CPU_EQUAL(&want, &m->active) && !m->dirty)
		return;
	uint64_t t0 = clock_usec(CLOCK_MONOTONIC);
	bool first = CPU_COUNT(&m->active) == 0;
	iso_prune_gone(m);
	m->stay[0] = '\0';
	m->code = NULL;
	r = m->backend == ISO_V1 ? iso_v1_apply(m, &hk) : iso_sd_apply(m, &hk);
	if (r < 0) {
		if (leftovers(m))
			release(m);
		return;
	}
	if (!CPU_EQUAL(&want, &m->active)) {
		if (!first)
			renarrow(m, &want);
		m->active = want;
		state_put(m->state, "S 0 %s %s", backend_name(m->backend), cpus);
	}
	own_threads(m, &want);
	wq_apply(m, &hk);
	if (m->irq_fn)
		m->irq_fn(m->irq_ud, &want);
	m->dirty = false;
	if (first || m->code) {
		m->apply_usec = clock_usec(CLOCK_MONOTONIC) - t0;
		log_info("CPU %s isolated for %s in %.1f ms: %zu tasks in the housekeeping CPUs, %zu kernel threads "
			 "moved by affinity, %zu other groups narrowed%s%s", cpus, m->who, m->apply_usec / 1000.0,
			 m->moved, m->kthreads, m->groups, m->stay[0] ? "; staying (per-CPU kernel threads): " : "",
			 m->stay);
	}
}

void isolate_thread_gone(struct isolate *m)
{
	if (m && CPU_COUNT(&m->active))
		m->dirty = true;
}

void isolate_on_fork(struct isolate *m, pid_t tid, pid_t tgid)
{
	if (!m || !CPU_COUNT(&m->active) || iso_keeps(m, tid))
		return;
	if (m->backend == ISO_V1)
		iso_v1_fork(m, tid);
	else if (m->backend == ISO_SYSTEMD)
		iso_sd_fork(m, tid);
	(void)tgid;
}

int isolate_admit(void *ud, pid_t tid)
{
	struct isolate *m = ud;
	struct iso_rec *a;
	int r;

	if (!m || !CPU_COUNT(&m->active))
		return 0;
	r = m->backend == ISO_V1 ? iso_v1_admit(m, tid) : m->backend == ISO_SYSTEMD ? iso_sd_admit(m, tid) : 0;
	/* its own affinity back, before the registry records it as the original;
	 * from now on its affinity is the registry's */
	if ((a = iso_rec_find(m, 'A', tid))) {
		if (iso_same_task(tid, a->starttime))
			sched_setaffinity(tid, sizeof(a->cpus), &a->cpus);
		iso_rec_drop(m, a);
	}
	return r;
}

bool isolate_active(const struct isolate *m)
{
	return m && CPU_COUNT(&m->active) > 0;
}

void isolate_cpus(const struct isolate *m, cpu_set_t *out)
{
	CPU_ZERO(out);
	if (m)
		*out = m->active;
}

void isolate_set_irq_hook(struct isolate *m, isolate_irq_fn fn, void *ud)
{
	m->irq_fn = fn;
	m->irq_ud = ud;
	if (fn && CPU_COUNT(&m->active))
		fn(ud, &m->active);
}

void isolate_status(const struct isolate *m, struct isolate_status *st)
{
	memset(st, 0, sizeof(*st));
	st->backend = !m ? "none" : m->backend == ISO_V1 ? "cpuset v1" : m->backend == ISO_SYSTEMD ? "systemd" : "none";
	if (!m)
		return;
	if (CPU_COUNT(&m->active))
		cpulist_format(&m->active, st->cpus, sizeof(st->cpus));
	snprintf(st->who, sizeof(st->who), "%s", m->who);
	st->code = m->code;
	snprintf(st->why, sizeof(st->why), "%s", m->why);
	st->moved = m->moved;
	st->kthreads = m->kthreads;
	st->groups = m->groups;
	snprintf(st->stay, sizeof(st->stay), "%s", m->stay);
	if (m->wq_written)
		snprintf(st->workqueue, sizeof(st->workqueue), "%s (was %s)", m->wq_wrote, m->wq_orig);
	st->apply_usec = m->apply_usec;
	st->release_usec = m->release_usec;
}

int isolate_new(struct isolate **ret, const struct isolate_env *env, struct state *st, struct registry *r)
{
	struct isolate *m = calloc(1, sizeof(*m));
	int e;

	if (!m)
		return -ENOMEM;
	if (env)
		m->env = *env;
	m->state = st;
	m->registry = r;
	cgroupfs_find(m->env.cgroup, &m->fs);
	if (m->fs.version == CGROUPFS_V1)
		m->backend = ISO_V1;
	else if (m->fs.version == CGROUPFS_V2 && iso_sd_owns())
		m->backend = ISO_SYSTEMD;
	m->lb_orig = -1;
	state_take(st, "SWLMAGU", journal_take, m);
	if ((e = state_add_writer(st, journal_writer, m)) < 0) {
		free(m);
		return e;
	}
	*ret = m;
	return 0;
}

void isolate_free(struct isolate *m, bool restore)
{
	if (!m)
		return;
	if (restore && leftovers(m))
		release(m);
	state_remove_writer(m->state, journal_writer, m);
	strmap_clear(&m->sd_seen);
	while (m->recs) {
		struct iso_rec *r = m->recs;
		m->recs = r->next;
		free(r->text);
		free(r);
	}
	free(m);
}
