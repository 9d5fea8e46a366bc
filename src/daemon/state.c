/* state.c: the state journal (see state.h). Lines:
 *   T tid pid starttime owner source procpid REQ ORIG cpus_changed
 *   P pid starttime owner REQ
 *   -T tid      -P pid
 * REQ = role|- policy priority nice cpus (each '-' when not asked for)
 * ORIG = policy priority nice reset_on_fork cpus
 * The journal is rewritten (temporary file, then rename) when it holds more
 * than twice the live lines, so it stays O(managed threads). */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/cpulist.h"
#include "../common/log.h"
#include "registry.h"
#include "state.h"

struct state {
	struct daemon *d;
	char *path;
	FILE *f;
	size_t lines;
	size_t adopted_threads, adopted_procs;
	bool loading;
};

/* "-" or the CPU list, into a token without spaces. */
static void fmt_cpus(bool has, const cpu_set_t *set, char *buf, size_t len)
{
	if (!has || cpulist_format(set, buf, len) < 0 || !buf[0])
		snprintf(buf, len, "-");
}

static void put_req(FILE *f, const struct grant_request *q)
{
	char cpus[256];

	fmt_cpus(q->has_cpus, &q->cpus, cpus, sizeof(cpus));
	fprintf(f, " %s", q->role[0] ? q->role : "-");
	q->has_policy ? fprintf(f, " %d", q->policy) : fprintf(f, " -");
	q->has_priority ? fprintf(f, " %d", q->priority) : fprintf(f, " -");
	q->has_nice ? fprintf(f, " %d", q->nice) : fprintf(f, " -");
	fprintf(f, " %s", cpus);
}

static void put_thread(FILE *f, const struct reg_thread *t)
{
	char cpus[256];

	fprintf(f, "T %d %d %" PRIu64 " %u %d %d", (int)t->tid, (int)t->pid, t->starttime, (unsigned)t->owner,
		(int)t->source, t->proc ? (int)t->proc->pid : 0);
	put_req(f, &t->req);
	fmt_cpus(true, &t->original.cpus, cpus, sizeof(cpus));
	fprintf(f, " %d %d %d %d %s %d\n", t->original.policy, t->original.priority, t->original.nice,
		t->original.reset_on_fork, cpus, t->cpus_changed);
}

static void put_process(FILE *f, const struct reg_process *p)
{
	fprintf(f, "P %d %" PRIu64 " %u", (int)p->pid, p->starttime, (unsigned)p->owner);
	put_req(f, &p->req);
	fputc('\n', f);
}

/* Rewrite the journal from the registry: temporary file, then rename. */
static int compact(struct state *s)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.new", s->path);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	s->lines = 0;
	for (struct reg_process *p = registry_processes(s->d->registry); p; p = p->next, s->lines++)
		put_process(f, p);
	for (struct reg_thread *t = registry_threads(s->d->registry); t; t = t->next, s->lines++)
		put_thread(f, t);
	if (fclose(f) != 0 || rename(tmp, s->path) < 0) {
		int r = -errno;
		unlink(tmp);
		return r;
	}
	if (s->f)
		fclose(s->f);
	s->f = fopen(s->path, "ae");
	if (!s->f)
		return -errno;
	setvbuf(s->f, NULL, _IOLBF, 0);
	return 0;
}

void state_observe(struct state *s, int ev, struct reg_thread *t, struct reg_process *p)
{
	size_t live;

	if (!s || !s->f || s->loading)
		return;
	switch (ev) {
	case REG_EV_THREAD_SET: put_thread(s->f, t); break;
	case REG_EV_THREAD_GONE: fprintf(s->f, "-T %d\n", (int)t->tid); break;
	case REG_EV_PROC_SET: put_process(s->f, p); break;
	case REG_EV_PROC_GONE: fprintf(s->f, "-P %d\n", (int)p->pid); break;
	}
	live = registry_n_threads(s->d->registry) + registry_n_processes(s->d->registry);
	if (++s->lines > 2 * live + 1024 && compact(s) < 0)
		log_warn("compacting %s", s->path);
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
	if ((q->has_policy = strcmp(tok[1], "-") != 0))
		q->policy = atoi(tok[1]);
	if ((q->has_priority = strcmp(tok[2], "-") != 0))
		q->priority = atoi(tok[2]);
	if ((q->has_nice = strcmp(tok[3], "-") != 0))
		q->nice = atoi(tok[3]);
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

	while (getline(&line, &cap, f) > 0) {
		char kind = line[0] == '-' ? line[1] : line[0];
		int id = atoi(line + (line[0] == '-' ? 3 : 2));
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

/* Re-adopt one process ("P ...") line. */
static void adopt_process(struct state *s, char *line)
{
	struct grant_request q;
	char *save = NULL, msg[512];
	struct sched_spec spec;
	struct reg_process *p;
	int pid;
	uint64_t st;
	unsigned owner;

	strtok_r(line, " ", &save);
	pid = atoi(strtok_r(NULL, " ", &save) ?: "0");
	st = strtoull(strtok_r(NULL, " ", &save) ?: "0", NULL, 10);
	owner = (unsigned)strtoul(strtok_r(NULL, " ", &save) ?: "0", NULL, 10);
	if (pid <= 0 || get_req(&save, &q) < 0 || grant_resolve(s->d->config, &q, &spec, msg, sizeof(msg)) >= 0)
		return;
	if (registry_adopt_process(s->d->registry, pid, st, owner, &q, &p) == 0)
		s->adopted_procs++;
}

/* Re-adopt one thread ("T ...") line. */
static void adopt_thread(struct state *s, char *line)
{
	struct grant_request q;
	struct reg_saved saved;
	struct sched_spec spec;
	char *save = NULL, *tok[6], msg[512];
	int e;

	strtok_r(line, " ", &save);
	for (int i = 0; i < 6; i++)
		if (!(tok[i] = strtok_r(NULL, " \n", &save)))
			return;
	if (get_req(&save, &q) < 0)
		return;
	char *o[6];
	for (int i = 0; i < 6; i++)
		if (!(o[i] = strtok_r(NULL, " \n", &save)))
			return;
	memset(&saved, 0, sizeof(saved));
	saved.starttime = strtoull(tok[2], NULL, 10);
	saved.original.policy = atoi(o[0]);
	saved.original.priority = atoi(o[1]);
	saved.original.nice = atoi(o[2]);
	saved.original.reset_on_fork = atoi(o[3]);
	if (cpulist_parse(o[4], &saved.original.cpus, NULL) < 0)
		return;
	saved.cpus_changed = atoi(o[5]);
	pid_t tid = atoi(tok[0]), pid = atoi(tok[1]), ppid = atoi(tok[5]);
	struct reg_process *proc = ppid ? registry_find_process(s->d->registry, ppid) : NULL;
	int source = atoi(tok[4]);
	if (ppid && !proc) {
		/* its process registration is gone (its role was removed): give back */
		registry_restore_saved(tid, &saved);
		return;
	}
	if (grant_resolve(s->d->config, &q, &spec, msg, sizeof(msg)) >= 0) {
		/* its role is gone from the config: give the thread back what it had */
		registry_restore_saved(tid, &saved);
		return;
	}
	e = registry_adopt_thread(s->d->registry, tid, pid, (uid_t)strtoul(tok[3], NULL, 10),
				  (enum reg_source)source, &q, &spec, proc, &saved, msg, sizeof(msg));
	if (e < 0)
		s->adopted_threads++;
	else if (e != PE_NO_SUCH_THREAD && e != PE_STALE_THREAD)
		log_warnx("re-adopting tid %d: %s", (int)tid, msg);
}

int state_open(struct state **ret, struct daemon *d, const char *path)
{
	struct state *s = calloc(1, sizeof(*s));
	struct entry *ents = NULL;
	size_t n = 0;
	FILE *f;
	int r;

	if (!s || !(s->path = strdup(path))) {
		free(s);
		return -ENOMEM;
	}
	s->d = d;
	/* the journal's directory (the socket's, under /run) may not exist yet */
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		for (char *p = dir + 1; *p; p++)
			if (*p == '/') {
				*p = '\0';
				mkdir(dir, 0755);
				*p = '/';
			}
		mkdir(dir, 0755);
	}
	f = fopen(path, "re");
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
		for (size_t i = 0; i < n; i++)
			free(ents[i].line);
		free(ents);
		if (s->adopted_threads || s->adopted_procs)
			log_info("re-adopted %zu thread%s and %zu process%s from %s", s->adopted_threads,
				 s->adopted_threads == 1 ? "" : "s", s->adopted_procs,
				 s->adopted_procs == 1 ? "" : "es", path);
	}
	r = compact(s);
	if (r < 0)
		log_errno(LOG_LEVEL_WARNING, r, "state file %s: registrations will not survive a restart", path);
	*ret = s;
	return 0;
}

void state_discard(struct state *s)
{
	if (!s)
		return;
	if (s->f)
		fclose(s->f);
	s->f = NULL;
	unlink(s->path);
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
	free(s->path);
	free(s);
}
