/* rules.c: automatic matching of threads by name, executable, user, group,
 * unit or cgroup (see rules.h). Only what some rule needs is read from /proc. */
#include "autoconfig.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/sys/log.h"
#include "daemon/sys/proc.h"
#include "daemon/core/registry.h"
#include "daemon/core/rules.h"

#define MAX_GROUPS 64

struct subject_buf {
	struct match_subject s;
	char comm[PROC_COMM_MAX + 1];
	char pcomm[PROC_COMM_MAX + 1];
	char exe[PATH_MAX];
	char cgroup[512];
	char unit[256];
	gid_t groups[MAX_GROUPS];
};

/* Read a one-line /proc file into buf without its newline. */
static int read_line(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* The cgroup v2 path of a process ("0::/system.slice/x.service") and the
 * unit it names: the last path component ending in .service or .scope. */
static void load_cgroup(pid_t pid, struct subject_buf *b)
{
	char path[64], line[sizeof(b->cgroup) + 8];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "::");
		if (strncmp(line, "0::", 3) != 0 || !p)
			continue;
		p += 2;
		p[strcspn(p, "\n")] = '\0';
		snprintf(b->cgroup, sizeof(b->cgroup), "%s", p);
		b->s.cgroup = b->cgroup;
		for (char *c = strtok(p, "/"); c; c = strtok(NULL, "/")) {
			size_t n = strlen(c);
			if ((n > 8 && strcmp(c + n - 8, ".service") == 0) || (n > 6 && strcmp(c + n - 6, ".scope") == 0)) {
				snprintf(b->unit, sizeof(b->unit), "%s", c);
				b->s.unit = b->unit;
			}
		}
		break;
	}
	fclose(f);
}

/* uid, gid and supplementary groups from /proc/PID/status. */
static int load_ids(pid_t tid, struct subject_buf *b)
{
	char path[64], line[1024];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned id;
		if (sscanf(line, "Uid: %u", &id) == 1)
			b->s.uid = id;
		else if (sscanf(line, "Gid: %u", &id) == 1)
			b->s.gid = id;
		else if (strncmp(line, "Groups:", 7) == 0) {
			char *save = NULL;
			for (char *t = strtok_r(line + 7, " \t\n", &save); t && b->s.n_groups < MAX_GROUPS;
			     t = strtok_r(NULL, " \t\n", &save))
				b->groups[b->s.n_groups++] = (gid_t)strtoul(t, NULL, 10);
		}
	}
	fclose(f);
	b->s.groups = b->groups;
	return 0;
}

/* Fill what the configured rules need to know about tid; -ESRCH if gone. */
static int load_subject(const struct config *c, pid_t tid, pid_t pid, struct subject_buf *b)
{
	char path[64];
	ssize_t n;
	int r;

	memset(&b->s, 0, sizeof(b->s));
	b->s.uid = (uid_t)-1;
	b->s.gid = (gid_t)-1;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	if ((r = read_line(path, b->comm, sizeof(b->comm))) < 0)
		return r == -ENOENT ? -ESRCH : r;
	b->s.thread_name = b->comm;
	if (c->match_needs & MATCH_NEED_PROCESS_NAME) {
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		if (read_line(path, b->pcomm, sizeof(b->pcomm)) == 0)
			b->s.process_name = b->pcomm;
	}
	if (c->match_needs & MATCH_NEED_EXE) {
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
		n = readlink(path, b->exe, sizeof(b->exe) - 1);
		if (n > 0) {
			b->exe[n] = '\0';
			b->s.exe = b->exe;
		}
	}
	if (c->match_needs & MATCH_NEED_CGROUP)
		load_cgroup(pid, b);
	if (c->match_needs & MATCH_NEED_IDS)
		load_ids(tid, b);
	return 0;
}

void rules_on_task(struct daemon *d, pid_t tid, pid_t pid, bool force)
{
	const struct config *c = d->config;
	struct reg_thread *t = registry_find(d->registry, tid);
	const struct rule *rl = NULL;
	struct subject_buf b;
	struct grant_request req;
	struct sched_spec spec;
	char msg[512];
	int e;

	if (t && t->source != REG_SOURCE_RULE)
		return; /* an explicit registration wins over any rule */
	if ((!c->n_auto_rules && !t) || pid == getpid())
		return;
	if (c->n_auto_rules && load_subject(c, tid, pid, &b) == 0)
		rl = config_match(c, &b.s);
	if (!rl) {
		if (t) {
			log_info("tid %d (%s) no longer matches rule %s; restoring it", (int)tid, b.comm, t->req.role);
			registry_remove_thread(d->registry, t, true);
		}
		return;
	}
	if (t && !force && strcmp(t->req.role, rl->name) == 0)
		return;
	memset(&req, 0, sizeof(req));
	snprintf(req.role, sizeof(req.role), "%s", rl->name);
	spec = rl->spec;
	e = registry_add_thread(d->registry, tid, pid, 0, REG_SOURCE_RULE, &req, &spec, NULL, &t, msg, sizeof(msg));
	if (e >= 0) {
		if (e != PE_NO_SUCH_THREAD && e != PE_STALE_THREAD) {
			log_warnx("rule %s matched tid %d (%s) but could not apply: %s", rl->name, (int)tid, b.comm, msg);
			registry_note_refused(d->registry, tid, pid, 0, REG_SOURCE_RULE, rl->name, e, msg);
		}
		return;
	}
	log_debug("rule %s matched tid %d (%s) of pid %d", rl->name, (int)tid, b.comm, (int)pid);
}

void rules_on_process(struct daemon *d, pid_t pid)
{
	pid_t *tids;
	size_t n;

	if (!d->config->n_auto_rules && !registry_n_threads(d->registry))
		return;
	if (proc_list_tasks(pid, &tids, &n) < 0)
		return;
	for (size_t i = 0; i < n; i++)
		rules_on_task(d, tids[i], pid, false);
	free(tids);
}

size_t rules_scan(struct daemon *d, bool force)
{
	struct reg_thread *t, *tn;
	struct dirent *de;
	size_t seen = 0;
	DIR *proc;

	/* rule-managed threads whose rule is gone or changed are looked at in the walk */
	if (d->config->n_auto_rules) {
		proc = opendir("/proc");
		if (!proc)
			return 0;
		while ((de = readdir(proc))) {
			char *end;
			long pid = strtol(de->d_name, &end, 10);
			pid_t *tids;
			size_t n;

			if (*end || pid <= 0 || proc_list_tasks((pid_t)pid, &tids, &n) < 0)
				continue;
			for (size_t i = 0; i < n; i++)
				rules_on_task(d, tids[i], (pid_t)pid, force);
			seen += n;
			free(tids);
		}
		closedir(proc);
	}
	/* with no rules left, what rules managed goes back */
	for (t = registry_threads(d->registry); t; t = tn) {
		tn = t->next;
		if (t->source == REG_SOURCE_RULE && !config_find_rule(d->config, t->req.role))
			registry_remove_thread(d->registry, t, true);
		else if (t->source == REG_SOURCE_RULE && !d->config->n_auto_rules)
			registry_remove_thread(d->registry, t, true);
	}
	return seen;
}
