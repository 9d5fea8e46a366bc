/* pmqos.c: /dev/cpu_dma_latency and the per-CPU resume latency (see pmqos.h). */
#include "autoconfig.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/core/registry.h"
#include "daemon/core/state.h"
#include "daemon/cpu/pmqos.h"
#include "daemon/sys/kfile.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"

/* The journal's kind letter for a CPU's original. */
#define JOURNAL_KIND 'Q'
/* What the kernel's text means, as a bound in µs: "n/a" is 0 (no idle
 * state), "0" is no bound at all. */
#define NO_LIMIT INT_MAX

/* One CPU's resume latency as rtschedd holds it. */
struct cpu_hold {
	bool held;           /* rtschedd wrote it: original comes back on release */
	char original[16];   /* the kernel's text before ("0", "n/a", "20") */
	int wrote;           /* the bound written (µs; 0 = "n/a") */
	int error;           /* the last write's -errno, 0 if it went through */
	bool warned;
};

struct pmqos {
	struct pmqos_env env;
	struct state *state;
	int dma_fd;                     /* /dev/cpu_dma_latency held open, or -1 */
	int dma_value;
	int dma_error;
	int n_present;                  /* CPUs 0..n_present-1 may exist (the highest with a file, + 1) */
	int n_cpus;                     /* cpu[] in use: 0..n_cpus-1 */
	struct cpu_hold cpu[CPU_SETSIZE];
};

/* "n/a", "0" or a number into a bound; -EINVAL for anything else. */
static int parse_value(const char *s, int *out)
{
	char *end;
	long v;

	if (strcmp(s, "n/a") == 0) {
		*out = 0;
		return 0;
	}
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > INT32_MAX)
		return -EINVAL;
	*out = v == 0 ? NO_LIMIT : (int)v;
	return 0;
}

/* A bound as the kernel takes it. */
static void format_value(int us, char *buf, size_t len)
{
	if (us == 0)
		snprintf(buf, len, "n/a");
	else if (us == NO_LIMIT)
		snprintf(buf, len, "0");
	else
		snprintf(buf, len, "%d", us);
}

static int cpu_path(const struct pmqos *q, int cpu, char *buf, size_t len)
{
	return kfile_path(buf, len, q->env.sys, "/sys/devices/system/cpu/cpu%d/power/pm_qos_resume_latency_us", cpu);
}

static int read_cpu(const struct pmqos *q, int cpu, char *buf, size_t len)
{
	char p[PATH_MAX];
	int r = cpu_path(q, cpu, p, sizeof(p));

	return r < 0 ? r : kfile_read(AT_FDCWD, p, buf, len);
}

static int write_cpu(const struct pmqos *q, int cpu, const char *text)
{
	char p[PATH_MAX];
	int r = cpu_path(q, cpu, p, sizeof(p));

	return r < 0 ? r : kfile_write(AT_FDCWD, p, text);
}

/* The journal's live lines: one per CPU held. */
static size_t journal_writer(void *ud, FILE *f)
{
	struct pmqos *q = ud;
	size_t n = 0;

	for (int c = 0; c < q->n_cpus; c++)
		if (q->cpu[c].held) {
			fprintf(f, "%c %d %s\n", JOURNAL_KIND, c, q->cpu[c].original);
			n++;
		}
	return n;
}

/* "Q CPU ORIGINAL" from the last run: held now, with that original. */
static void journal_take(void *ud, char *line)
{
	struct pmqos *q = ud;
	char orig[16], extra;
	int cpu, v;

	if (sscanf(line, "Q %d %15s %c", &cpu, orig, &extra) != 2 || cpu < 0 || cpu >= CPU_SETSIZE ||
	    parse_value(orig, &v) < 0) {
		log_warnx("state journal: a malformed resume latency entry, dropped");
		return;
	}
	struct cpu_hold *h = &q->cpu[cpu];
	char now[16];
	h->held = true;
	snprintf(h->original, sizeof(h->original), "%s", orig);
	/* what the last rtschedd wrote is what the CPU holds now */
	h->wrote = read_cpu(q, cpu, now, sizeof(now)) == 0 && parse_value(now, &v) == 0 ? v : -1;
	if (cpu >= q->n_cpus)
		q->n_cpus = cpu + 1;
}

/* The CPUs that have the file: the cpu directory's cpuN entries, not a
 * probe of every number a cpu_set_t holds (1024 sysfs lookups took about
 * 2.5 ms of rtschedd's start-up on a 2-CPU machine). */
static void find_present(struct pmqos *q)
{
	char dir[PATH_MAX], p[PATH_MAX];
	struct dirent *e;
	DIR *d;

	if (kfile_path(dir, sizeof(dir), q->env.sys, "/sys/devices/system/cpu") < 0 || !(d = opendir(dir)))
		return;
	while ((e = readdir(d))) {
		char tail;
		int cpu;

		if (sscanf(e->d_name, "cpu%d%c", &cpu, &tail) == 1 && cpu >= q->n_present && cpu < CPU_SETSIZE &&
		    cpu_path(q, cpu, p, sizeof(p)) == 0 && access(p, F_OK) == 0)
			q->n_present = cpu + 1;
	}
	closedir(d);
}

int pmqos_new(struct pmqos **ret, const struct pmqos_env *env, struct state *st)
{
	struct pmqos *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	if (env)
		q->env = *env;
	q->state = st;
	q->dma_fd = -1;
	find_present(q);
	state_take(st, "Q", journal_take, q);
	int r = state_add_writer(st, journal_writer, q);
	if (r < 0) {
		free(q);
		return r;
	}
	*ret = q;
	return 0;
}

/* Hold /dev/cpu_dma_latency at cpu-dma-latency while real-time threads are
 * managed (the kernel keeps the request while the file is open). */
static void global_update(struct pmqos *q, const struct config *c, struct registry *r)
{
	int want = c->cpu_dma_latency_us;
	bool rt = false;

	REGISTRY_FOREACH_THREAD(t, r)
		if ((rt = policy_is_realtime(t->applied.policy)))
			break;
	if (want < 0 || !rt) {
		if (q->dma_fd >= 0) {
			close(q->dma_fd);
			q->dma_fd = -1;
			log_info("released /dev/cpu_dma_latency");
		}
		return;
	}
	if (q->dma_fd >= 0 && q->dma_value == want)
		return;
	if (q->dma_fd < 0)
		q->dma_fd = open(q->env.dma_latency ? q->env.dma_latency : "/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
	int32_t v = want;
	if (q->dma_fd < 0 || write(q->dma_fd, &v, sizeof(v)) != sizeof(v)) {
		q->dma_error = errno;
		if (q->dma_fd >= 0)
			close(q->dma_fd);
		q->dma_fd = -1;
		log_warn("cannot hold /dev/cpu_dma_latency at %d us", want);
		return;
	}
	q->dma_value = want;
	q->dma_error = 0;
	log_info("holding /dev/cpu_dma_latency at %d us while real-time threads are managed", want);
}

/* The strictest bound each CPU is asked for (-1: none): rules' managed
 * threads on the CPUs they may run on, probes on theirs. */
static void wanted(const struct config *c, struct registry *r, int *want, int n)
{
	for (int i = 0; i < n; i++)
		want[i] = -1;
	if (!c->n_quiet)
		return;
#define ASK(cpu, v) \
	do { if ((cpu) < n && (want[cpu] < 0 || (v) < want[cpu])) want[cpu] = (v); } while (0)
	for (size_t i = 0; i < c->n_probes; i++)
		if (c->probes[i].quiet.resume_latency_us >= 0)
			ASK(c->probes[i].cpu, c->probes[i].quiet.resume_latency_us);
	REGISTRY_FOREACH_THREAD(t, r) {
		const struct rule *rl = t->req.role[0] ? config_find_rule(c, t->req.role) : NULL;

		if (!rl || rl->quiet.resume_latency_us < 0)
			continue;
		for (int cpu = 0; cpu < n; cpu++)
			if (CPU_ISSET(cpu, &t->applied.cpus))
				ASK(cpu, rl->quiet.resume_latency_us);
	}
#undef ASK
}

/* Give CPU c back what it had, unless someone changed it meanwhile. */
static void cpu_release(struct pmqos *q, int cpu)
{
	struct cpu_hold *h = &q->cpu[cpu];
	char now[16];
	int v, r;

	if (read_cpu(q, cpu, now, sizeof(now)) == 0 && parse_value(now, &v) == 0 && h->wrote >= 0 && v != h->wrote) {
		log_notice("CPU %d: pm_qos_resume_latency_us is %s, not what rtschedd wrote; left as it is", cpu, now);
	} else if ((r = write_cpu(q, cpu, h->original)) < 0) {
		log_errno(LOG_LEVEL_WARNING, r, "CPU %d: cannot put pm_qos_resume_latency_us back to %s", cpu, h->original);
		return; /* still ours: the journal keeps its original for another try */
	} else {
		log_info("CPU %d: pm_qos_resume_latency_us back to %s", cpu, h->original);
	}
	h->held = false;
	h->wrote = -1;
	state_put_gone(q->state, JOURNAL_KIND, cpu);
}

/* Bound CPU cpu to want µs (0: no idle state), unless it already is. */
static void cpu_hold(struct pmqos *q, int cpu, int want)
{
	struct cpu_hold *h = &q->cpu[cpu];
	char now[16], text[16];
	int v, r;

	if (h->held && h->wrote == want)
		return;
	if (!h->held) {
		if ((r = read_cpu(q, cpu, now, sizeof(now))) < 0 || (r = parse_value(now, &v)) < 0) {
			if (!h->warned)
				log_errno(LOG_LEVEL_WARNING, r, "CPU %d: cannot read pm_qos_resume_latency_us", cpu);
			h->warned = true;
			h->error = r;
			return;
		}
		if (v <= want) { /* as strict already: nothing to take */
			h->error = 0;
			return;
		}
		snprintf(h->original, sizeof(h->original), "%s", now);
	}
	format_value(want, text, sizeof(text));
	if ((r = write_cpu(q, cpu, text)) < 0) {
		if (!h->warned)
			log_errno(LOG_LEVEL_WARNING, r, "CPU %d: cannot set pm_qos_resume_latency_us to %s%s", cpu, text,
				  r == -EACCES || r == -EROFS || r == -EPERM ?
				  " (rtschedd needs write access to it: root, or under rtschedd.service the tmpfiles.d "
				  "entry and ReadWritePaths= of rtschedd.conf(5))" : "");
		h->warned = true;
		h->error = r;
		return;
	}
	if (!h->held)
		state_put(q->state, "%c %d %s", JOURNAL_KIND, cpu, h->original);
	h->held = true;
	h->wrote = want;
	h->error = 0;
	h->warned = false;
	log_info("CPU %d: pm_qos_resume_latency_us %s (was %s) while its managed threads want it", cpu, text,
		 h->original);
}

void pmqos_update(struct pmqos *q, const struct config *c, struct registry *r)
{
	int want[CPU_SETSIZE], n = q->n_present > q->n_cpus ? q->n_present : q->n_cpus;

	global_update(q, c, r);
	wanted(c, r, want, n);
	for (int cpu = 0; cpu < n; cpu++) {
		if (want[cpu] >= 0)
			cpu_hold(q, cpu, want[cpu]);
		else if (q->cpu[cpu].held)
			cpu_release(q, cpu);
		else
			q->cpu[cpu].error = 0;
		if (want[cpu] >= 0 && cpu >= q->n_cpus)
			q->n_cpus = cpu + 1;
	}
}

const char *pmqos_global_state(const struct pmqos *q, const struct config *c, char *buf, size_t len)
{
	if (c->cpu_dma_latency_us < 0)
		snprintf(buf, len, "off");
	else if (q && q->dma_fd >= 0)
		snprintf(buf, len, "held at %d us", q->dma_value);
	else if (q && q->dma_error)
		snprintf(buf, len, "configured %d us, not held: %s", c->cpu_dma_latency_us, strerror(q->dma_error));
	else
		snprintf(buf, len, "configured %d us, released (no real-time threads)", c->cpu_dma_latency_us);
	return buf;
}

void pmqos_cpus_state(const struct pmqos *q, char *buf, size_t len)
{
	size_t off = 0;
	int n;

	buf[0] = '\0';
	for (int cpu = 0; q && cpu < q->n_cpus && off < len; cpu++) {
		const struct cpu_hold *h = &q->cpu[cpu];
		char v[16];

		if (h->held) {
			format_value(h->wrote, v, sizeof(v));
			n = snprintf(buf + off, len - off, "%scpu %d at %s%s (was %s)", off ? ", " : "", cpu, v,
				     strcmp(v, "n/a") ? " us" : ": no idle state", h->original);
		} else if (h->error) {
			n = snprintf(buf + off, len - off, "%scpu %d not held: %s", off ? ", " : "", cpu,
				     strerror(-h->error));
		} else {
			continue;
		}
		if (n < 0)
			break;
		off += (size_t)n;
	}
	if (!buf[0])
		snprintf(buf, len, "off");
}

void pmqos_free(struct pmqos *q, bool restore)
{
	if (!q)
		return;
	if (restore)
		for (int cpu = 0; cpu < q->n_cpus; cpu++)
			if (q->cpu[cpu].held)
				cpu_release(q, cpu);
	state_remove_writer(q->state, journal_writer, q);
	if (q->dma_fd >= 0)
		close(q->dma_fd);
	free(q);
}
