/* diag_kernel.c: the diagnosis of the machine: RT throttling, the
 * preemption model (its one detector, for check and for jitter's reply),
 * and the CPUs (online, cpuset, isolcpus, nohz_full) a target uses (see
 * diag.h for the finding codes). */
#include "autoconfig.h"

#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "daemon/sys/cpulist.h"
#include "daemon/diag/diag_int.h"
#include "daemon/sys/kfeat.h"

/* kernel.sched_rt_runtime_us against kernel.sched_rt_period_us. */
static void check_throttling(struct diag_ctx *c)
{
	long long rt, per;
	char fix[DIAG_TEXT_MAX];
	int r;

	if ((r = diag_read_ll(&rt, "%s/sys/kernel/sched_rt_runtime_us", c->env.proc)) < 0 ||
	    (r = diag_read_ll(&per, "%s/sys/kernel/sched_rt_period_us", c->env.proc)) < 0) {
		diag_failed(c, "kernel.sched_rt_runtime_us", r);
		return;
	}
	diag_fmt(fix, sizeof(fix), "sysctl -w kernel.sched_rt_runtime_us=%lld (and "
		 "kernel.sched_rt_runtime_us = %lld in /etc/sysctl.d/90-rt.conf to keep it)",
		 per * 95 / 100, per * 95 / 100);
	if (rt < 0 || rt >= per) {
		c->rt_unthrottled = true;
		diag_add(c, "rt-throttling-disabled", DIAG_WARNING, fix, "RT throttling is off "
			 "(kernel.sched_rt_runtime_us %lld, period %lld): a real-time thread that never blocks "
			 "keeps its CPU from everything else, the shell included", rt, per);
	} else if (rt == 0) {
		diag_add(c, "rt-runtime-zero", DIAG_ERROR, fix, "kernel.sched_rt_runtime_us is 0: real-time "
			 "threads get no CPU time at all (with RT group scheduling every real-time policy "
			 "fails with EPERM)");
	} else {
		diag_fmt(fix, sizeof(fix), "nothing, unless a real-time thread must run longer: then "
			 "sysctl -w kernel.sched_rt_runtime_us=-1 (a runaway thread can then hang its CPU)");
		diag_add(c, "rt-throttling", DIAG_INFO, fix, "RT throttling: real-time threads may use "
			 "%lld of every %lld µs of a CPU (%lld%%); one that runs longer waits for the rest of "
			 "the period", rt, per, rt * 100 / per);
	}
}

/* The model from debugfs's sched/preempt: the word in parentheses. */
static int preempt_debugfs(struct diag_ctx *c, char *mode, size_t len)
{
	char buf[256], *open, *close;
	int r;

	if ((r = diag_read(buf, sizeof(buf), "%s/kernel/debug/sched/preempt", c->env.sys)) < 0)
		return r;
	open = strchr(buf, '(');
	close = open ? strchr(open, ')') : NULL;
	if (!close || (size_t)(close - open) >= len)
		return -EINVAL;
	snprintf(mode, len, "%.*s", (int)(close - open - 1), open + 1);
	return 0;
}

/* The build's preemption model from its configuration: /boot/config-RELEASE
 * (Debian, Ubuntu and Fedora install it) or /proc/config.gz
 * (CONFIG_IKCONFIG_PROC); zlib reads either, compressed or not. For a
 * PREEMPT_DYNAMIC kernel it is the mode the kernel boots in without preempt=. */
static int preempt_config(struct diag_ctx *c, char *mode, size_t len, char *src, size_t srclen)
{
	static const struct {
		const char *opt, *mode;
	} m[] = { { "CONFIG_PREEMPT_NONE=y", "none" }, { "CONFIG_PREEMPT_VOLUNTARY=y", "voluntary" },
		  { "CONFIG_PREEMPT=y", "full" }, { "CONFIG_PREEMPT_LAZY=y", "lazy" } };
	char rel[128], line[256];
	gzFile f = NULL;
	int r = -ENOENT;

	if (diag_read(rel, sizeof(rel), "%s/sys/kernel/osrelease", c->env.proc) == 0) {
		rel[strcspn(rel, "\n")] = '\0';
		if (diag_path(src, srclen, "%s/config-%s", c->env.boot, rel) == 0)
			f = gzopen(src, "rbe");
	}
	if (!f && diag_path(src, srclen, "%s/config.gz", c->env.proc) == 0)
		f = gzopen(src, "rbe");
	if (!f)
		return -ENOENT;
	while (r < 0 && gzgets(f, line, sizeof(line)))
		for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
			if (strcmp(line, m[i].opt) == 0 || (strncmp(line, m[i].opt, strlen(m[i].opt)) == 0 &&
							   line[strlen(m[i].opt)] == '\n')) {
				snprintf(mode, len, "%s", m[i].mode);
				r = 0;
			}
	gzclose(f);
	return r;
}

/* Report a known mode: full and lazy preempt kernel code for a woken
 * real-time thread; none and voluntary make it wait, which is a warning. */
static void preempt_report(struct diag_ctx *c, const char *mode, bool dynamic, const char *how)
{
	char fix[DIAG_TEXT_MAX];

	if (strcmp(mode, "full") == 0 || strcmp(mode, "lazy") == 0) {
		diag_add(c, "preempt-model", DIAG_INFO, NULL, "preemption model %s (%s): a woken real-time "
			 "thread preempts kernel code at once", mode, how);
		return;
	}
	if (dynamic)
		diag_fmt(fix, sizeof(fix), "boot with preempt=full (this PREEMPT_DYNAMIC kernel has it built in); "
			 "until the next boot, where the kernel lets root write debugfs: mount -t debugfs none "
			 "%s/kernel/debug; echo full > %s/kernel/debug/sched/preempt", c->env.sys, c->env.sys);
	else
		diag_fmt(fix, sizeof(fix), "install a kernel with full preemption: PREEMPT_RT (Debian: "
			 "linux-image-rt-amd64) or one built with PREEMPT_DYNAMIC, then boot with preempt=full");
	diag_add(c, "preempt-model", DIAG_WARNING, fix, "preemption model %s (%s): a woken real-time thread "
		 "waits for the kernel to reach a preemption point (up to milliseconds)", mode, how);
}

/* What the one preemption-model detector found, and where. */
struct preempt {
	enum {
		PREEMPT_FROM_REALTIME,  /* /sys/kernel/realtime is 1 */
		PREEMPT_FROM_VERSION_RT, /* PREEMPT_RT in the version string */
		PREEMPT_FROM_DEBUGFS,   /* mode from debugfs's sched/preempt */
		PREEMPT_FROM_CMDLINE,   /* mode from preempt= (PREEMPT_DYNAMIC only) */
		PREEMPT_FROM_CONFIG,    /* mode from the build's configuration, in src */
		PREEMPT_DYNAMIC_UNKNOWN, /* PREEMPT_DYNAMIC, and nothing tells its mode */
		PREEMPT_FROM_VERSION,   /* " PREEMPT " in the version string: CONFIG_PREEMPT */
		PREEMPT_NONE_OR_VOLUNTARY, /* none of these */
	} from;
	bool dynamic;               /* PREEMPT_DYNAMIC in the version string */
	char ver[512];              /* the version string, "" if unreadable */
	char mode[32];              /* none, voluntary, full, lazy (the FROM_ ones with a mode) */
	char src[PATH_MAX];         /* PREEMPT_FROM_CONFIG: the file */
};

/* The preemption model, told from what is readable: /sys/kernel/realtime,
 * the kernel's version string, debugfs, preempt= on the command line and
 * the build's configuration, in that order. */
static void preempt_detect(struct diag_ctx *c, struct preempt *p)
{
	char cmd[4096];
	long long rt = 0;

	p->dynamic = false;
	p->ver[0] = p->mode[0] = p->src[0] = '\0';
	if (diag_read_ll(&rt, "%s/kernel/realtime", c->env.sys) == 0 && rt == 1) {
		p->from = PREEMPT_FROM_REALTIME;
		return;
	}
	if (diag_read(p->ver, sizeof(p->ver), "%s/sys/kernel/version", c->env.proc) < 0)
		p->ver[0] = '\0';
	p->ver[strcspn(p->ver, "\n")] = '\0';
	if (strstr(p->ver, "PREEMPT_RT")) {
		p->from = PREEMPT_FROM_VERSION_RT;
		return;
	}
	p->dynamic = strstr(p->ver, "PREEMPT_DYNAMIC") != NULL;
	if (preempt_debugfs(c, p->mode, sizeof(p->mode)) == 0)
		p->from = PREEMPT_FROM_DEBUGFS;
	else if (p->dynamic && diag_read(cmd, sizeof(cmd), "%s", c->env.cmdline) == 0 &&
		 diag_cmdline_param(cmd, "preempt", p->mode, sizeof(p->mode)) == 0)
		p->from = PREEMPT_FROM_CMDLINE;
	else if (preempt_config(c, p->mode, sizeof(p->mode), p->src, sizeof(p->src)) == 0)
		p->from = PREEMPT_FROM_CONFIG;
	else if (p->dynamic)
		p->from = PREEMPT_DYNAMIC_UNKNOWN;
	else if (strstr(p->ver, " PREEMPT "))
		p->from = PREEMPT_FROM_VERSION;
	else
		p->from = PREEMPT_NONE_OR_VOLUNTARY;
}

/* The preempt-model finding, from what preempt_detect() found. */
static void check_preempt(struct diag_ctx *c)
{
	char how[PATH_MAX + 128], fix[DIAG_TEXT_MAX];
	struct preempt p;

	preempt_detect(c, &p);
	switch (p.from) {
	case PREEMPT_FROM_REALTIME:
		diag_add(c, "preempt-model", DIAG_INFO, NULL, "PREEMPT_RT kernel: fully preemptible, "
			 "interrupts in threads");
		break;
	case PREEMPT_FROM_VERSION_RT:
		diag_add(c, "preempt-model", DIAG_INFO, NULL, "PREEMPT_RT kernel (%s)", p.ver);
		break;
	case PREEMPT_FROM_DEBUGFS:
		preempt_report(c, p.mode, p.dynamic, "debugfs sched/preempt");
		break;
	case PREEMPT_FROM_CMDLINE:
		diag_fmt(how, sizeof(how), "PREEMPT_DYNAMIC kernel booted with preempt=%s", p.mode);
		preempt_report(c, p.mode, p.dynamic, how);
		break;
	case PREEMPT_FROM_CONFIG:
		if (p.dynamic)
			diag_fmt(how, sizeof(how), "the default of this PREEMPT_DYNAMIC kernel, from %s; debugfs's "
				 "sched/preempt, not readable here, would show a change made since boot", p.src);
		else
			diag_fmt(how, sizeof(how), "built in, from %s", p.src);
		preempt_report(c, p.mode, p.dynamic, how);
		break;
	case PREEMPT_DYNAMIC_UNKNOWN:
		diag_fmt(fix, sizeof(fix), "see the mode with: mount -t debugfs none %s/kernel/debug; "
			 "cat %s/kernel/debug/sched/preempt; for the lowest latency boot with preempt=full",
			 c->env.sys, c->env.sys);
		diag_add(c, "preempt-model", DIAG_INFO, fix, "PREEMPT_DYNAMIC kernel (%s): its mode is the "
			 "build's default, which debugfs or the kernel's config would tell", p.ver);
		break;
	case PREEMPT_FROM_VERSION:
		diag_add(c, "preempt-model", DIAG_INFO, NULL, "preemptible kernel (CONFIG_PREEMPT: %s)", p.ver);
		break;
	case PREEMPT_NONE_OR_VOLUNTARY:
		preempt_report(c, "voluntary or none", false, p.ver[0] ? p.ver : "version unknown");
		break;
	}
}

/* The preemption model in one word, from preempt_detect() (see diag.h). */
int diag_preempt_model(const struct diag_env *env, char *mode, size_t len)
{
	static const struct diag_target none = { .policy = -1 };
	struct diag_report rep;
	struct diag_ctx *c;
	struct preempt *p;
	const char *word = "unknown";
	int r = 0;

	c = calloc(1, sizeof(*c));
	p = malloc(sizeof(*p));
	diag_report_init(&rep);
	if (!c || !p) {
		r = -ENOMEM;
	} else if ((r = diag_ctx_init(c, env, &none, &rep)) == 0) {
		preempt_detect(c, p);
		switch (p->from) {
		case PREEMPT_FROM_REALTIME:
		case PREEMPT_FROM_VERSION_RT:
			word = "rt";
			break;
		case PREEMPT_FROM_DEBUGFS:
		case PREEMPT_FROM_CMDLINE:
		case PREEMPT_FROM_CONFIG:
			word = p->mode;
			break;
		case PREEMPT_FROM_VERSION:
			word = "full";
			break;
		case PREEMPT_DYNAMIC_UNKNOWN:
			word = "dynamic";
			r = -ENOENT;
			break;
		case PREEMPT_NONE_OR_VOLUNTARY:
			word = "voluntary or none";
			r = -ENOENT;
			break;
		}
	}
	if (len > 0 && (size_t)snprintf(mode, len, "%s", word) >= len && r == 0)
		r = -ENOSPC;
	diag_report_free(&rep);
	free(p);
	free(c);
	return r;
}

/* The kernel features rtschedd's own paths depend on, probed live (so
 * only against the real /proc): each available (used where the
 * configuration turns its path on), or missing and what stands in. */
static void check_features(struct diag_ctx *c)
{
	struct kfeat probed[KFEAT_N];
	const struct kfeat *f = diag_kept_features();

	if (!c->real)
		return;
	if (!f) {
		kfeat_probe(probed);
		f = probed;
	}
	for (int i = 0; i < KFEAT_N; i++) {
		if (f[i].present > 0)
			diag_add(c, "kernel-feature", DIAG_INFO, NULL, "available: %s (%s): %s", f[i].name,
				 f[i].since, f[i].use);
		else if (f[i].present == 0)
			diag_add(c, "kernel-feature-missing", DIAG_INFO, NULL, "missing: %s (%s): %s instead",
				 f[i].name, f[i].since, f[i].fallback);
		else
			diag_failed(c, f[i].name, f[i].present);
	}
}

void diag_check_kernel(struct diag_ctx *c)
{
	check_throttling(c);
	check_preempt(c);
	check_features(c);
}

/* Parse a sysfs CPU list file; an empty file (or "(null)") is an empty set. */
static int read_cpu_file(struct diag_ctx *c, cpu_set_t *set, const char *name)
{
	char buf[4096];
	int r;

	if ((r = diag_read(buf, sizeof(buf), "%s/devices/system/cpu/%s", c->env.sys, name)) < 0)
		return r;
	buf[strcspn(buf, "\n")] = '\0';
	if (buf[0] == '\0' || strcmp(buf, "(null)") == 0) {
		CPU_ZERO(set);
		return 0;
	}
	return cpulist_parse(buf, set, NULL);
}

int diag_online_cpus(struct diag_ctx *c, cpu_set_t *set)
{
	return read_cpu_file(c, set, "online");
}

/* Walk up a cgroup-v2 path to the first group with cpuset.cpus.effective. */
static int cpuset_v2(const char *root, const char *path, char *src, size_t len)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s", path);
	for (;;) {
		char *slash;

		if (diag_path(src, len, "%s%s/cpuset.cpus.effective", root, strcmp(p, "/") ? p : "") == 0 &&
		    access(src, R_OK) == 0)
			return 0;
		slash = strrchr(p, '/');
		if (!slash || slash == p) {
			if (strcmp(p, "/") == 0)
				return -ENOENT;
			snprintf(p, sizeof(p), "/");
			continue;
		}
		*slash = '\0';
	}
}

int diag_cpuset(struct diag_ctx *c, const struct diag_proc *p, cpu_set_t *set, char *src, size_t len)
{
	char buf[4096], root[PATH_MAX];
	int r = -ENOENT;

	if (!p->have_cgroup)
		return -ENOENT;
	if (p->cg.has_cpuset_v1) {
		const char *g = strcmp(p->cg.cpuset_v1, "/") ? p->cg.cpuset_v1 : "";

		r = diag_path(src, len, "%s/cpuset%s/cpuset.effective_cpus", c->env.cgroup, g);
		if (r == 0 && access(src, R_OK) != 0)
			r = diag_path(src, len, "%s/cpuset%s/cpuset.cpus", c->env.cgroup, g);
		if (r == 0 && access(src, R_OK) != 0)
			r = -ENOENT;
	} else if (p->cg.has_unified) {
		/* cgroup2 at the cgroup root, or at unified/ in the hybrid layout. */
		if (diag_path(root, sizeof(root), "%s/cgroup.controllers", c->env.cgroup) == 0 &&
		    access(root, F_OK) == 0)
			r = diag_path(root, sizeof(root), "%s", c->env.cgroup);
		else
			r = diag_path(root, sizeof(root), "%s/unified", c->env.cgroup);
		if (r == 0)
			r = cpuset_v2(root, p->cg.unified, src, len);
	}
	if (r < 0)
		return r;
	if ((r = diag_read(buf, sizeof(buf), "%s", src)) < 0)
		return r;
	buf[strcspn(buf, "\n")] = '\0';
	if (buf[0] == '\0')
		return -ENOENT;   /* an empty v1 cpuset means "not set up", not "no CPU" */
	return cpulist_parse(buf, set, NULL);
}

/* Requested CPUs that are offline or absent. */
static void check_online(struct diag_ctx *c, const cpu_set_t *online)
{
	cpu_set_t off, on_req;
	char want[256], offs[256], ons[256], fix[DIAG_TEXT_MAX];

	cpulist_missing(c->t->cpus, online, &off);
	if (CPU_COUNT(&off) == 0)
		return;
	CPU_AND(&on_req, c->t->cpus, online);
	cpulist_format(c->t->cpus, want, sizeof(want));
	cpulist_format(&off, offs, sizeof(offs));
	cpulist_format(online, ons, sizeof(ons));
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &off)) {
			diag_fmt(fix, sizeof(fix), "choose CPUs from %s, or bring CPU %d online: echo 1 > "
				 "%s/devices/system/cpu/cpu%d/online (if the CPU exists)", ons, i, c->env.sys, i);
			break;
		}
	if (CPU_COUNT(&on_req) == 0)
		diag_add(c, "cpu-offline", DIAG_ERROR, fix, "none of the requested CPUs %s is online (online: "
			 "%s): sched_setaffinity fails with EINVAL", want, ons);
	else
		diag_add(c, "cpu-offline", DIAG_WARNING, fix, "requested CPUs %s are not online (online: %s): "
			 "the thread runs only on the others", offs, ons);
}

void diag_cpuset_knob(const char *src, char *knob, size_t len)
{
	char *slash;

	snprintf(knob, len, "%s", src);
	slash = strrchr(knob, '/');
	if (slash)
		snprintf(slash + 1, len - (size_t)(slash + 1 - knob), "cpuset.cpus");
}

/* Requested CPUs outside the target's cpuset. */
static void check_cpuset(struct diag_ctx *c, const cpu_set_t *online)
{
	cpu_set_t set, out, in, req, wide;
	char src[PATH_MAX + 64], knob[PATH_MAX + 64], want[256], outs[256], cs[256], wides[256];
	char fix[DIAG_TEXT_MAX];
	int r;

	if (!c->target.loaded)
		return;
	if ((r = diag_cpuset(c, &c->target, &set, src, sizeof(src))) < 0) {
		if (r != -ENOENT)
			diag_failed(c, "the target's cpuset", r);
		return;
	}
	/* Offline CPUs are check_online()'s business. */
	CPU_AND(&req, c->t->cpus, online);
	cpulist_missing(&req, &set, &out);
	if (CPU_COUNT(&out) == 0)
		return;
	CPU_AND(&in, &req, &set);
	/* The effective list is read-only; cpuset.cpus beside it is the knob,
	 * and widening means adding the missing CPUs to what it has. */
	diag_cpuset_knob(src, knob, sizeof(knob));
	CPU_OR(&wide, &set, &req);
	cpulist_format(&wide, wides, sizeof(wides));
	cpulist_format(c->t->cpus, want, sizeof(want));
	cpulist_format(&out, outs, sizeof(outs));
	cpulist_format(&set, cs, sizeof(cs));
	diag_fmt(fix, sizeof(fix), "choose CPUs from %s, or widen the cpuset (its parents' first): echo %s > "
		 "%s (for a container its --cpuset-cpus, for a unit AllowedCPUs=)", cs, wides, knob);
	if (CPU_COUNT(&in) == 0)
		diag_add(c, "cpu-outside-cpuset", DIAG_ERROR, fix, "requested CPUs %s are all outside pid %d's "
			 "cpuset %s (%s): sched_setaffinity fails with EINVAL", want, (int)c->target.pid, cs, src);
	else
		diag_add(c, "cpu-outside-cpuset", DIAG_WARNING, fix, "requested CPUs %s are outside pid %d's "
			 "cpuset %s (%s): the kernel silently drops them", outs, (int)c->target.pid, cs, src);
}

/* isolcpus: isolated CPUs get no load balancing. */
static void check_isolated(struct diag_ctx *c, const cpu_set_t *use, const char *uses, const char *cmd)
{
	cpu_set_t iso, both;
	char isos[256], arg[256], note[300];
	int r;

	if ((r = read_cpu_file(c, &iso, "isolated")) < 0) {
		diag_failed(c, "the isolated CPUs", r);
		return;
	}
	note[0] = '\0';
	if (diag_cmdline_param(cmd, "isolcpus", arg, sizeof(arg)) == 0)
		diag_fmt(note, sizeof(note), " (isolcpus=%s)", arg);
	if (CPU_COUNT(&iso) == 0) {
		cpu_set_t nohz;
		/* nohz_full= only where the kernel has it (CONFIG_NO_HZ_FULL makes the file) */
		bool has_nohz = read_cpu_file(c, &nohz, "nohz_full") != -ENOENT;

		diag_add(c, "cpu-isolated", DIAG_INFO, has_nohz ? "optional, for the lowest jitter: boot with "
			 "isolcpus=domain,managed_irq,N nohz_full=N and pin the real-time threads to CPU N" :
			 "optional, for the lowest jitter: boot with isolcpus=domain,managed_irq,N and pin the "
			 "real-time threads to CPU N (this kernel has no CONFIG_NO_HZ_FULL, so no nohz_full=)",
			 "no CPU is isolated%s: real-time threads share CPUs %s with everything else", note, uses);
		return;
	}
	cpulist_format(&iso, isos, sizeof(isos));
	CPU_AND(&both, use, &iso);
	if (CPU_COUNT(&both) > 1)
		diag_add(c, "cpu-isolated", DIAG_WARNING, "pin each real-time thread to a single isolated CPU",
			 "CPUs %s in use include several isolated CPUs (%s%s): the scheduler does not balance "
			 "between them, so a thread allowed on all of them stays on the one it started on",
			 uses, isos, note);
	else if (CPU_COUNT(&both) == 1)
		diag_add(c, "cpu-isolated", DIAG_INFO, NULL, "CPUs %s in use include isolated CPU(s) %s%s: no "
			 "other task is balanced there", uses, isos, note);
	else
		diag_add(c, "cpu-isolated", DIAG_INFO, "pin the real-time threads to the isolated CPUs",
			 "CPUs %s are isolated%s, but the CPUs in use (%s) are not", isos, note, uses);
}

/* nohz_full: the tick stops on a CPU that runs a single task. */
static void check_nohz(struct diag_ctx *c, const cpu_set_t *use, const char *uses, const char *cmd)
{
	cpu_set_t nohz, both;
	char ns[256], arg[256];
	int r = read_cpu_file(c, &nohz, "nohz_full");
	bool on_cmdline = diag_cmdline_param(cmd, "nohz_full", arg, sizeof(arg)) == 0;

	if (r == -ENOENT) {
		if (on_cmdline)
			diag_add(c, "cpu-nohz-full", DIAG_WARNING, "use a kernel built with CONFIG_NO_HZ_FULL",
				 "the command line has nohz_full=%s, but this kernel has no CONFIG_NO_HZ_FULL: the "
				 "tick interrupts every CPU", arg);
		else
			diag_add(c, "cpu-nohz-full", DIAG_INFO, NULL, "no nohz_full support in this kernel: the "
				 "tick interrupts real-time threads on CPUs %s", uses);
		return;
	}
	if (r < 0) {
		diag_failed(c, "the nohz_full CPUs", r);
		return;
	}
	CPU_AND(&both, use, &nohz);
	cpulist_format(&nohz, ns, sizeof(ns));
	if (CPU_COUNT(&nohz) == 0)
		diag_add(c, "cpu-nohz-full", DIAG_INFO, NULL, "no CPU is nohz_full: the tick interrupts "
			 "real-time threads on CPUs %s", uses);
	else if (CPU_COUNT(&both) > 0)
		diag_add(c, "cpu-nohz-full", DIAG_INFO, NULL, "CPUs %s in use include nohz_full CPUs %s: the "
			 "tick stops there while one task runs", uses, ns);
	else
		diag_add(c, "cpu-nohz-full", DIAG_INFO, "pin the real-time threads to the nohz_full CPUs",
			 "CPUs %s are nohz_full, but the CPUs in use (%s) are not", ns, uses);
}

void diag_check_cpus(struct diag_ctx *c)
{
	cpu_set_t online, use;
	char uses[256], cmd[8192];
	int r;

	if ((r = diag_online_cpus(c, &online)) < 0) {
		diag_failed(c, "the online CPUs", r);
		return;
	}
	if (c->t->cpus) {
		const cpu_set_t *online_p = &online;

		check_online(c, &online);
		check_cpuset(c, online_p);
	}
	/* The CPUs in use: the requested ones, else the target's affinity,
	 * else every online CPU. */
	if (c->t->cpus)
		use = *c->t->cpus;
	else if (c->target.loaded && c->target.st.have_cpus)
		use = c->target.st.cpus_allowed;
	else
		use = online;
	if (cpulist_format(&use, uses, sizeof(uses)) < 0)
		snprintf(uses, sizeof(uses), "(many)");
	if (diag_read(cmd, sizeof(cmd), "%s", c->env.cmdline) < 0)
		cmd[0] = '\0';
	check_isolated(c, &use, uses, cmd);
	check_nohz(c, &use, uses, cmd);
}
