/* state.c: the state journal (see state.h). Lines:
 *   T tid pid starttime owner source procpid REQ ORIG cpus_changed
 *   P pid starttime owner REQ
 *   -T tid      -P pid
 * REQ = role|- policy priority nice cpus (each '-' when not asked for)
 * ORIG = policy priority nice reset_on_fork cpus
 * The journal is rewritten (temporary file, then rename) when it holds more
 * than twice the live lines, so it stays O(managed threads).
 *
 * It is trusted only as far as it deserves: it is read only from a directory
 * nobody else can write (safefile_dir, strict), every file is opened
 * relative to that directory without following symlinks, and each entry is
 * re-admitted through the checks a new request passes, against the current
 * configuration and the target's current owner. */
#include "autoconfig.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/sys/accounts.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "shared/protocol.h"
#include "daemon/core/refusal.h"
#include "daemon/core/registry.h"
#include "daemon/sys/safefile.h"
#include "daemon/core/state.h"

struct state {
	struct registry *registry;
	const struct config *config;  /* only while state_open() re-adopts */
	char *path;
	int dirfd;            /* the journal's directory; every name is relative to it */
	char base[256];
	FILE *f;
	size_t lines;
	size_t compacted;        /* the lines the last compaction wrote: every module's live ones */
	size_t adopted_threads, adopted_procs;
	bool loading;
	char **extra;         /* other modules' lines from the last run, until taken */
	size_t n_extra;
	struct {              /* other modules' live lines at compaction */
		state_writer fn;
		void *ud;
	} writers[STATE_WRITERS_MAX];
};

/* Room for any cpu_set_t as a CPU list: every other CPU of CPU_SETSIZE
 * (1024) takes about 2,000 characters. A shorter buffer wrote "-" for a
 * long list, and the line then failed to parse at the next start. */
#define CPUS_TEXT_MAX 4096
/* " role policy priority nice cpus": fmt_req() never truncates */
#define REQ_TEXT_MAX (1 + CONFIG_NAME_MAX + 3 * 12 + 4 + CPUS_TEXT_MAX)

/* "-" or the CPU list, into a token without spaces. */
static void fmt_cpus(bool has, const cpu_set_t *set, char *buf, size_t len)
{
	if (!has || cpulist_format(set, buf, len) < 0 || !buf[0])
		snprintf(buf, len, "-");
}

/* "-" or v, in b (of 12 characters at least). */
static const char *opt_int(bool has, int v, char *b, size_t len)
{
	if (!has)
		return "-";
	snprintf(b, len, "%d", v);
	return b;
}

/* A request's fields, each after a space: role policy priority nice cpus. */
static void fmt_req(const struct grant_request *q, char *buf, size_t len)
{
	char cpus[CPUS_TEXT_MAX], pol[12], prio[12], nice[12];

	fmt_cpus(q->has_cpus, &q->cpus, cpus, sizeof(cpus));
	snprintf(buf, len, " %s %s %s %s %s", q->role[0] ? q->role : "-",
		 opt_int(q->has_policy, q->policy, pol, sizeof(pol)),
		 opt_int(q->has_priority, q->priority, prio, sizeof(prio)),
		 opt_int(q->has_nice, q->nice, nice, sizeof(nice)), cpus);
}

/* One line, one stdio call: a grant writes a thread's line before its
 * reply, so the line's cost is the grant's */
static void put_thread(FILE *f, const struct reg_thread *t)
{
	char req[REQ_TEXT_MAX], cpus[CPUS_TEXT_MAX];

	fmt_req(&t->req, req, sizeof(req));
	fmt_cpus(true, &t->original.cpus, cpus, sizeof(cpus));
	fprintf(f, "T %d %d %" PRIu64 " %u %d %d%s %d %d %d %d %s %d\n", (int)t->tid, (int)t->pid, t->starttime,
		(unsigned)t->owner, (int)t->source, t->proc ? (int)t->proc->pid : 0, req, t->original.policy,
		t->original.priority, t->original.nice, t->original.reset_on_fork, cpus, t->cpus_changed);
}

static void put_process(FILE *f, const struct reg_process *p)
{
	char req[REQ_TEXT_MAX];

	fmt_req(&p->req, req, sizeof(req));
	fprintf(f, "P %d %" PRIu64 " %u%s\n", (int)p->pid, p->starttime, (unsigned)p->owner, req);
}

/* Rewrite the journal from the registry: temporary file, then rename. */
static int compact(struct state *s)
{
	char tmp[300];
	FILE *f;
	int fd, r;

	fd = safefile_create_tmp(s->dirfd, s->base, 0600, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		unlinkat(s->dirfd, tmp, 0);
		return r;
	}
	s->lines = 0;
	REGISTRY_FOREACH_PROCESS(p, s->registry) {
		put_process(f, p);
		s->lines++;
	}
	REGISTRY_FOREACH_THREAD(t, s->registry) {
		put_thread(f, t);
		s->lines++;
	}
	for (size_t i = 0; i < s->n_extra; i++, s->lines++)
		fputs(s->extra[i], f);
	for (size_t i = 0; i < STATE_WRITERS_MAX; i++)
		if (s->writers[i].fn)
			s->lines += s->writers[i].fn(s->writers[i].ud, f);
	if (fclose(f) != 0) {
		r = -errno;
		unlinkat(s->dirfd, tmp, 0);
		return r;
	}
	if ((r = safefile_commit(s->dirfd, tmp, s->base)) < 0)
		return r;
	if (s->f)
		fclose(s->f);
	s->f = NULL;
	fd = openat(s->dirfd, s->base, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(s->f = fdopen(fd, "a"))) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		return r;
	}
	setvbuf(s->f, NULL, _IOLBF, 0);
	s->compacted = s->lines;
	return 0;
}

static void maybe_compact(struct state *s);

void state_observe(struct state *s, int ev, struct reg_thread *t, struct reg_process *p)
{
	if (!s || !s->f || s->loading)
		return;
	switch (ev) {
	case REG_EV_THREAD_SET: put_thread(s->f, t); break;
	case REG_EV_THREAD_GONE: fprintf(s->f, "-T %d\n", (int)t->tid); break;
	case REG_EV_PROC_SET: put_process(s->f, p); break;
	case REG_EV_PROC_GONE: fprintf(s->f, "-P %d\n", (int)p->pid); break;
	}
	maybe_compact(s);
}

/* Compact when the journal holds more than twice the live lines: the
 * registry's now, or every module's at the last compaction (other modules'
 * lines, isolation's or the IRQ manager's, may be most of them: counting
 * the registry's alone would compact at every line). */
static void maybe_compact(struct state *s)
{
	size_t live = registry_n_threads(s->registry) + registry_n_processes(s->registry);

	if (s->compacted > live)
		live = s->compacted;

	if (++s->lines > 2 * live + 1024 && compact(s) < 0)
		log_warn("compacting %s", s->path);
}

void state_put(struct state *s, const char *fmt, ...)
{
	va_list ap;

	if (!s || !s->f)
		return;
	va_start(ap, fmt);
	vfprintf(s->f, fmt, ap);
	va_end(ap);
	fputc('\n', s->f);
	maybe_compact(s);
}

void state_put_with(struct state *s, void (*fn)(FILE *f, const void *arg), const void *arg)
{
	if (!s || !s->f)
		return;
	fn(s->f, arg);
	maybe_compact(s);
}

void state_put_gone(struct state *s, char kind, long id)
{
	state_put(s, "-%c %ld", kind, id);
}

int state_add_writer(struct state *s, state_writer fn, void *ud)
{
	if (!s)
		return 0;
	for (size_t i = 0; i < STATE_WRITERS_MAX; i++)
		if (!s->writers[i].fn) {
			s->writers[i].fn = fn;
			s->writers[i].ud = ud;
			return 0;
		}
	return -ENOSPC;
}

void state_remove_writer(struct state *s, state_writer fn, void *ud)
{
	for (size_t i = 0; s && i < STATE_WRITERS_MAX; i++)
		if (s->writers[i].fn == fn && s->writers[i].ud == ud)
			s->writers[i].fn = NULL;
}

void state_take(struct state *s, const char *kinds, void (*fn)(void *ud, char *line), void *ud)
{
	size_t k = 0;

	if (!s)
		return;
	for (size_t i = 0; i < s->n_extra; i++) {
		if (strchr(kinds, s->extra[i][0])) {
			s->extra[i][strcspn(s->extra[i], "\n")] = '\0';
			fn(ud, s->extra[i]);
			free(s->extra[i]);
		} else {
			s->extra[k++] = s->extra[i];
		}
	}
	s->n_extra = k;
}

/* Parse "role pol prio nice cpus" starting at *p. */
static int get_req(char **save, struct grant_request *q)
{
	char *tok[5];

	memset(q, 0, sizeof(*q));
	for (int i = 0; i < 5; i++)
		if (!(tok[i] = strtok_r(NULL, " \n", save)))
			return -EINVAL;
	if (strcmp(tok[0], "-") && strlen(tok[0]) < sizeof(q->role))
		strcpy(q->role, tok[0]);
	long n[3];
	bool *has[3] = { &q->has_policy, &q->has_priority, &q->has_nice };
	for (int i = 0; i < 3; i++)
		if ((*has[i] = strcmp(tok[i + 1], "-") != 0) && proto_parse_long(tok[i + 1], -20, 99, &n[i]) < 0)
			return -EINVAL;
	q->policy = q->has_policy ? (int)n[0] : 0;
	q->priority = q->has_priority ? (int)n[1] : 0;
	q->nice = q->has_nice ? (int)n[2] : 0;
	if ((q->has_cpus = strcmp(tok[4], "-") != 0) && cpulist_parse(tok[4], &q->cpus, NULL) < 0)
		return -EINVAL;
	return 0;
}

/* Where each live entry's last line is, by replaying the journal. */
struct entry {
	char kind;
	int id;
	char *line;
};

static void replay(struct state *s, FILE *f, struct entry **ents, size_t *n)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	while ((len = getline(&line, &cap, f)) > 0) {
		/* A last line without its newline is a write a crash cut short:
		 * ignored, so an entry's last whole line still counts (a cut "T"
		 * or update would otherwise replace it and drop the entry). */
		if (line[len - 1] != '\n')
			break;
		/* "T ID ..." / "-T ID": a shorter line names no entry (reading
		 * the id past its end read what an earlier line left in the buffer) */
		size_t at = line[0] == '-' ? 3 : 2;
		if ((size_t)len <= at)
			continue;
		char kind = line[0] == '-' ? line[1] : line[0];
		int id = atoi(line + at);
		size_t i;

		for (i = 0; i < *n; i++)
			if ((*ents)[i].kind == kind && (*ents)[i].id == id)
				break;
		if (line[0] == '-') {
			if (i < *n) {
				free((*ents)[i].line);
				(*ents)[i] = (*ents)[--*n];
			}
			continue;
		}
		if (i == *n) {
			struct entry *ne = realloc(*ents, (*n + 1) * sizeof(**ents));
			if (!ne)
				break;
			*ents = ne;
			(*ents)[(*n)++] = (struct entry){ kind, id, NULL };
		}
		free((*ents)[i].line);
		(*ents)[i].line = strdup(line);
	}
	free(line);
}

/* The decision a previous daemon's entry gets now (GRANT_PATH_ADOPT),
 * against the current configuration and the task's current owner: the
 * recorded owner may act on it (or is privileged now), and the request
 * passes its limits. 0 if admitted (*spec filled), else a refusal (or
 * -errno) with msg. */
static int vet(struct state *s, uid_t owner, pid_t tid, pid_t pid, const struct grant_request *q,
	       struct sched_spec *spec, size_t adding, char *msg, size_t len)
{
	const struct config *c = s->config;
	struct grant_subject subj;
	struct grant_decision d;
	struct proc_status ps;
	struct account a;
	bool found = accounts_by_uid(owner, &a) == 0;
	int e;

	if (proc_read_status(tid, &ps) < 0 || ps.tgid != pid) {
		snprintf(msg, len, "gone");
		return REFUSE_NO_SUCH_THREAD;
	}
	grant_subject_init(&subj, c, owner, found ? a.gid : (gid_t)-1, pid);
	if (!subj.privileged && !grant_owns(owner, &ps)) {
		snprintf(msg, len, "it runs as uid %u (effective %u), not as its recorded owner uid %u", (unsigned)ps.uid,
			 (unsigned)ps.euid, (unsigned)owner);
		return REFUSE_NOT_OWN_THREAD;
	}
	struct grant_ask ask = { .path = GRANT_PATH_ADOPT, .subj = &subj, .req = q, .target = pid, .adding = adding };
	registry_ask(s->registry, &ask);
	if ((e = grant_decide(c, &ask, &d)) != 0)
		grant_decision_text(&d, msg, len);
	*spec = d.spec;
	return e;
}

/* A recorded original is restored only if rtschedd could have granted it:
 * a known policy, a priority valid for it and within max-priority, a nice
 * in range. Anything else becomes SCHED_OTHER nice 0, and says so. */
static void vet_original(const struct config *c, pid_t tid, struct task_sched *o)
{
	int lo = 0, hi = 0;
	bool ok = (o->policy == SCHED_OTHER || o->policy == SCHED_BATCH || o->policy == SCHED_IDLE ||
		   o->policy == SCHED_FIFO || o->policy == SCHED_RR) &&
		  policy_priority_range(o->policy, &lo, &hi) == 0 && o->priority >= lo && o->priority <= hi &&
		  o->priority <= c->max_priority && o->nice >= -20 && o->nice <= 19 &&
		  (o->reset_on_fork == 0 || o->reset_on_fork == 1);

	if (ok)
		return;
	log_warnx("state journal: tid %d: recorded original policy %d priority %d nice %d is not one rtschedd "
		  "restores (above max-priority %d, or invalid); it gets other 0 nice 0 instead", (int)tid, o->policy,
		  o->priority, o->nice, c->max_priority);
	o->policy = SCHED_OTHER;
	o->priority = 0;
	o->nice = 0;
	o->reset_on_fork = 0;
}

/* The next token as an integer in [min, max] (the protocol's strict rule). */
static bool num(char **save, long min, long max, long *out)
{
	const char *t = strtok_r(NULL, " \n", save);

	return t && proto_parse_long(t, min, max, out) == 0;
}

/* Re-adopt one process ("P ...") line. */
static void adopt_process(struct state *s, char *line)
{
	struct grant_request q;
	char *save = NULL, msg[512];
	struct sched_spec spec;
	struct reg_process *p;
	long pid, st, owner;
	int e;

	strtok_r(line, " ", &save);
	if (!num(&save, 1, INT32_MAX, &pid) || !num(&save, 0, LONG_MAX, &st) || !num(&save, 0, UINT32_MAX, &owner) ||
	    get_req(&save, &q) < 0) {
		log_warnx("state journal: a malformed process entry, dropped");
		return;
	}
	e = vet(s, (uid_t)owner, (pid_t)pid, (pid_t)pid, &q, &spec, 0, msg, sizeof(msg));
	if (e != 0) {
		if (e != REFUSE_NO_SUCH_THREAD)
			log_warnx("state journal: not re-adopting process %ld for uid %ld: %s", pid, owner, msg);
		return;
	}
	if (registry_adopt_process(s->registry, (pid_t)pid, (uint64_t)st, (uid_t)owner, &q, &p) == 0) {
		registry_set_process_account(p, grant_account((uid_t)owner));
		s->adopted_procs++;
	}
}

/* Re-adopt one thread ("T ...") line. */
static void adopt_thread(struct state *s, char *line)
{
	/* T tid pid starttime owner source procpid, then REQ, then ORIG */
	static const long lo[6] = { 1, 1, 0, 0, 0, 0 };
	static const long hi[6] = { INT32_MAX, INT32_MAX, LONG_MAX, UINT32_MAX, 16, INT32_MAX };
	struct grant_request q;
	struct reg_saved saved;
	struct sched_spec spec;
	char *save = NULL, *cpus, msg[512];
	long v[6], pol, prio, nice, rof, changed;
	int e;

	strtok_r(line, " ", &save);
	for (int i = 0; i < 6; i++)
		if (!num(&save, lo[i], hi[i], &v[i]))
			goto bad;
	/* the original's ranges are vet_original()'s to judge */
	if (get_req(&save, &q) < 0 || !num(&save, 0, INT32_MAX, &pol) || !num(&save, 0, INT32_MAX, &prio) ||
	    !num(&save, INT32_MIN, INT32_MAX, &nice) || !num(&save, 0, INT32_MAX, &rof) ||
	    !(cpus = strtok_r(NULL, " \n", &save)) || !num(&save, 0, 1, &changed))
		goto bad;
	memset(&saved, 0, sizeof(saved));
	saved.starttime = (uint64_t)v[2];
	saved.original.policy = (int)pol;
	saved.original.priority = (int)prio;
	saved.original.nice = (int)nice;
	saved.original.reset_on_fork = (int)rof;
	if (cpulist_parse(cpus, &saved.original.cpus, NULL) < 0)
		goto bad;
	saved.cpus_changed = changed != 0;
	pid_t tid = (pid_t)v[0], pid = (pid_t)v[1], ppid = (pid_t)v[5];
	uid_t owner = (uid_t)v[3];
	struct reg_process *proc = ppid ? registry_find_process(s->registry, ppid) : NULL;
	int source = (int)v[4];

	vet_original(s->config, tid, &saved.original);
	e = vet(s, owner, tid, pid, &q, &spec, 1, msg, sizeof(msg));
	if (e == REFUSE_NO_SUCH_THREAD)
		return;
	if (e == REFUSE_NOT_OWN_THREAD) {
		/* not the owner's to give back either: leave it alone */
		log_warnx("state journal: not re-adopting tid %d for uid %u: %s", (int)tid, (unsigned)owner, msg);
		return;
	}
	if ((ppid && !proc) || e != 0) {
		/* its process registration or its role is gone, or the current
		 * limits refuse it: give the thread back what it had */
		if (e != 0)
			log_notice("state journal: tid %d goes back to what it had: %s", (int)tid, msg);
		registry_restore_saved(tid, &saved);
		return;
	}
	e = registry_adopt_thread(s->registry, tid, pid, owner, (enum reg_source)source, &q, &spec, proc, &saved,
				  msg, sizeof(msg));
	if (e == 0) {
		/* a subordinate uid's thread counts against its owner, as before */
		struct reg_thread *t = registry_find(s->registry, tid);
		if (t && !proc)
			registry_set_account(t, grant_account(owner), false);
		s->adopted_threads++;
	}
	else if (e != REFUSE_NO_SUCH_THREAD && e != REFUSE_STALE_THREAD)
		log_warnx("re-adopting tid %d: %s", (int)tid, msg);
	return;
bad:
	log_warnx("state journal: a malformed thread entry, dropped");
}

int state_open(struct state **ret, struct registry *reg, const struct config *c, const char *path)
{
	struct state *s = calloc(1, sizeof(*s));
	struct entry *ents = NULL;
	char why[1024];
	size_t n = 0;
	FILE *f = NULL;
	int fd, r;

	if (!s || !(s->path = strdup(path))) {
		free(s);
		return -ENOMEM;
	}
	s->registry = reg;
	s->config = c;
	*ret = s;
	/* the journal's directory (the socket's, under /run) may not exist yet;
	 * one that others can write is refused: they could plant a journal */
	s->dirfd = safefile_dir(path, true, true, s->base, sizeof(s->base), why, sizeof(why));
	if (s->dirfd < 0) {
		log_errno(LOG_LEVEL_WARNING, s->dirfd, "state file %s; registrations will not survive a restart",
			  why[0] ? why : path);
		return 0;
	}
	fd = safefile_open_trusted(s->dirfd, s->base, why, sizeof(why));
	if (fd == -EPERM)
		log_warnx("state file %s: %s; not reading it (it is replaced)", path, why);
	else if (fd < 0 && fd != -ENOENT)
		log_errno(LOG_LEVEL_WARNING, fd, "state file %s", path);
	if (fd >= 0 && !(f = fdopen(fd, "r")))
		close(fd);
	if (f) {
		replay(s, f, &ents, &n);
		fclose(f);
		s->loading = true;
		for (size_t i = 0; i < n; i++)
			if (ents[i].kind == 'P')
				adopt_process(s, ents[i].line);
		for (size_t i = 0; i < n; i++)
			if (ents[i].kind == 'T')
				adopt_thread(s, ents[i].line);
		s->loading = false;
		s->config = NULL; /* the daemon's to replace from here on */
		/* other modules' entries wait for them (state_take) */
		s->extra = calloc(n ? n : 1, sizeof(*s->extra));
		for (size_t i = 0; i < n; i++) {
			if (ents[i].kind != 'T' && ents[i].kind != 'P' && s->extra && ents[i].line &&
			    isalpha((unsigned char)ents[i].kind))
				s->extra[s->n_extra++] = ents[i].line;
			else
				free(ents[i].line);
		}
		free(ents);
		if (s->adopted_threads || s->adopted_procs)
			log_info("re-adopted %zu thread%s and %zu process%s from %s", s->adopted_threads,
				 s->adopted_threads == 1 ? "" : "s", s->adopted_procs,
				 s->adopted_procs == 1 ? "" : "es", path);
	}
	r = compact(s);
	if (r < 0)
		log_errno(LOG_LEVEL_WARNING, r, "state file %s: registrations will not survive a restart", path);
	return 0;
}

void state_discard(struct state *s)
{
	if (!s)
		return;
	if (s->f)
		fclose(s->f);
	s->f = NULL;
	if (s->dirfd >= 0)
		unlinkat(s->dirfd, s->base, 0);
}

void state_adopted(const struct state *s, size_t *threads, size_t *processes)
{
	*threads = s ? s->adopted_threads : 0;
	*processes = s ? s->adopted_procs : 0;
}

void state_free(struct state *s)
{
	if (!s)
		return;
	if (s->f)
		fclose(s->f);
	if (s->dirfd >= 0)
		close(s->dirfd);
	for (size_t i = 0; i < s->n_extra; i++)
		free(s->extra[i]);
	free(s->extra);
	free(s->path);
	free(s);
}
