/* diag.c: the diagnosis entry points, diag_run() and diag_explain(), and
 * the helpers the diag_*.c files share (see diag.h).  The checks live in
 * diag_proc.c (a process: its limits, unit, cgroups) and diag_kernel.c
 * (the machine: throttling, preemption, CPUs); the report in shared/report.c. */
#include "autoconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/sys/cpulist.h"
#include "daemon/sys/policy.h"
#include "daemon/sys/proc.h"
#include "daemon/diag/diag.h"
#include "daemon/diag/diag_int.h"

#define UNIT_PATH "/etc/systemd/system:/run/systemd/system:/lib/systemd/system:/usr/lib/systemd/system"

/* The checking process and the kernel's features, as diag_self_keep()
 * found them (event-loop thread only). */
static struct {
	bool valid;
	int err;                        /* diag_proc_load()'s, 0 if self is loaded */
	struct diag_proc self;
	struct kfeat feat[KFEAT_N];
} kept;

int diag_ctx_init(struct diag_ctx *c, const struct diag_env *env, const struct diag_target *t,
		  struct diag_report *r)
{
	static const struct diag_env none;
	int e;

	if (!env)
		env = &none;
	c->env = *env;
	c->real = !env->proc;
	if (!c->env.proc)
		c->env.proc = "/proc";
	if (!c->env.sys)
		c->env.sys = "/sys";
	if (!c->env.cgroup) {
		if ((e = diag_path(c->cgroup_buf, sizeof(c->cgroup_buf), "%s/fs/cgroup", c->env.sys)) < 0)
			return e;
		c->env.cgroup = c->cgroup_buf;
	}
	if (!c->env.cmdline) {
		if ((e = diag_path(c->cmdline_buf, sizeof(c->cmdline_buf), "%s/cmdline", c->env.proc)) < 0)
			return e;
		c->env.cmdline = c->cmdline_buf;
	}
	if (!c->env.limits_conf)
		c->env.limits_conf = "/etc/security/limits.conf";
	if (!c->env.limits_dir)
		c->env.limits_dir = "/etc/security/limits.d";
	if (!c->env.unit_path)
		c->env.unit_path = UNIT_PATH;
	if (!c->env.boot)
		c->env.boot = "/boot";
	c->r = r;
	c->t = t;
	c->rt_requested = t->policy >= 0 && policy_is_realtime(t->policy);
	c->need = c->rt_requested && t->priority > 0 ? t->priority : 1;
	c->fix_prio = c->rt_requested && t->priority > 0 ? t->priority : DIAG_DEFAULT_RTPRIO;
	c->grant = -1;
	return 0;
}

int diag_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 ? -EINVAL : (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int diag_read(char *buf, size_t len, const char *fmt, ...)
{
	char path[PATH_MAX];
	size_t used;
	va_list ap;
	int fd, n, r;

	va_start(ap, fmt);
	n = vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	if (len == 0)
		return -EFBIG;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	r = proc_read_fd(fd, buf, len, &used);
	close(fd);
	return r;
}

int diag_read_ll(long long *v, const char *fmt, ...)
{
	char path[PATH_MAX], buf[64], *end;
	va_list ap;
	int n, r;

	va_start(ap, fmt);
	n = vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -ENAMETOOLONG;
	if ((r = diag_read(buf, sizeof(buf), "%s", path)) < 0)
		return r;
	errno = 0;
	*v = strtoll(buf, &end, 10);
	if (end == buf || (*end && *end != '\n'))
		return -EINVAL;
	return errno ? -errno : 0;
}

/* vsnprintf at off, marking a cut with "...". */
__attribute__((format(printf, 4, 0)))
static void vcat(char *buf, size_t len, size_t off, const char *fmt, va_list ap)
{
	int n;

	if (off + 1 >= len)
		return;
	n = vsnprintf(buf + off, len - off, fmt, ap);
	if (n >= 0 && (size_t)n >= len - off && len >= 4)
		memcpy(buf + len - 4, "...", 4);
}

void diag_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (len == 0)
		return;
	buf[0] = '\0';
	va_start(ap, fmt);
	vcat(buf, len, 0, fmt, ap);
	va_end(ap);
}

void diag_cat(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcat(buf, len, strlen(buf), fmt, ap);
	va_end(ap);
}

void diag_add(struct diag_ctx *c, const char *code, enum diag_severity sev, const char *fix,
	      const char *fmt, ...)
{
	char msg[DIAG_TEXT_MAX * 2];
	va_list ap;
	int e;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if ((e = diag_report_add(c->r, code, sev, msg, fix)) < 0 && !c->err)
		c->err = e;
}

void diag_failed(struct diag_ctx *c, const char *what, int err)
{
	diag_add(c, "check-failed", DIAG_INFO, NULL, "could not check %s: %s; this report is partial",
		 what, strerror(err < 0 ? -err : err));
}

/* The user whose limits.conf grant counts: t->user, or the target's owner. */
static int target_user(struct diag_ctx *c, char *user, size_t len)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	int e;

	user[0] = '\0';
	if (c->t->user)
		return diag_path(user, len, "%s", c->t->user);
	if (!c->target.loaded)
		return 0;
	e = getpwuid_r(c->target.st.uid, &pw, buf, sizeof(buf), &res);
	if (!res) {
		diag_add(c, "check-failed", DIAG_INFO, NULL,
			 "uid %u of pid %d has no user entry, so no limits.conf line can name it",
			 (unsigned)c->target.st.uid, (int)c->target.pid);
		return e ? -e : 0;
	}
	return diag_path(user, len, "%s", pw.pw_name);
}

void diag_self_keep(void)
{
	static const struct diag_target none = { .policy = -1 };
	struct diag_report scratch;
	struct diag_ctx *c = calloc(1, sizeof(*c));

	if (!c) {
		kept.valid = false;
		return;   /* each diagnosis looks for itself */
	}
	diag_report_init(&scratch);
	if (diag_ctx_init(c, NULL, &none, &scratch) == 0) {
		/* its unit's RestrictRealtime= is asked of systemd once (the
		 * first time, waiting for the bus), then kept with it: c->self
		 * takes it from kept.self, which stays as it was until here */
		diag_bus_may_wait(!kept.valid);
		int err = diag_proc_load(c, &c->self, 0);
		diag_bus_may_wait(false);
		kept.self = c->self;
		kept.err = err;
		kfeat_probe(kept.feat);
		kept.valid = true;
	} else {
		kept.valid = false;
	}
	diag_report_free(&scratch);
	free(c);
}

bool diag_kept_unit(struct diag_proc *p)
{
	if (!kept.valid || kept.err || p->id != 0 || strcmp(kept.self.unit, p->unit) != 0 ||
	    kept.self.user_unit != p->user_unit)
		return false;
	p->restrict_rt = kept.self.restrict_rt;
	p->transient = kept.self.transient;
	memcpy(p->restrict_src, kept.self.restrict_src, sizeof(p->restrict_src));
	return true;
}

void diag_self_forget(void)
{
	kept.valid = false;
}

const struct kfeat *diag_kept_features(void)
{
	return kept.valid ? kept.feat : NULL;
}

/* The checking process into c->self: as kept on the live system, else
 * read now. 0 or -errno. */
static int self_load(struct diag_ctx *c)
{
	if (!c->real || !kept.valid)
		return diag_proc_load(c, &c->self, 0);
	if (kept.err == 0)
		c->self = kept.self;
	return kept.err;
}

int diag_run(const struct diag_env *env, const struct diag_target *t, struct diag_report *out)
{
	struct diag_ctx *c;
	char user[64];
	int r;

	diag_report_init(out);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if ((r = diag_ctx_init(c, env, t, out)) < 0)
		goto done;
	if ((r = self_load(c)) < 0)
		diag_failed(c, "the checking process in /proc/self", r);
	if (t->pid > 0) {
		if ((r = diag_proc_load(c, &c->target, t->pid)) < 0)
			goto done;
		c->target_is_self = c->self.loaded && c->self.pid == c->target.pid;
		out->pid = c->target.pid;
		snprintf(out->comm, sizeof(out->comm), "%s", c->target.st.name);
		snprintf(out->unit, sizeof(out->unit), "%s", c->target.unit);
	}
	if ((r = target_user(c, user, sizeof(user))) < 0)
		goto done;
	if (user[0]) {
		struct passwd *pw = getpwnam(user);

		if (!pw) {
			r = -ENOENT;
			goto done;
		}
		snprintf(out->user, sizeof(out->user), "%s", user);
		diag_check_limits(c, user);
	}
	diag_check_self(c);
	diag_check_kernel(c);           /* first: the target's checks use what it found */
	if (c->target.loaded)
		diag_check_target(c);
	diag_check_cpus(c);
	diag_report_sort(out);
	r = c->err;
done:
	free(c);
	return r;
}

/* EPERM for a real-time policy: the causes in the order the kernel meets
 * them for a caller that rtschedd is: the cgroup budget (checked even with
 * CAP_SYS_NICE), a seccomp filter on the caller, then the rlimit and owner
 * rules that apply without CAP_SYS_NICE. */
static int explain_rt_eperm(struct diag_ctx *c, char *buf, size_t len, const char **code)
{
	const struct diag_proc *s = &c->self, *p = &c->target;
	struct diag_budget b;
	int tid = (int)c->t->pid;

	*code = "";
	if (p->loaded && diag_rt_budget(c, p, &b) == 1) {
		*code = "rt-group-budget-zero";
		return diag_path(buf, len, "tid %d is in cpu cgroup %s whose cpu.rt_runtime_us is 0 "
				 "(RT group scheduling), so the kernel refuses real-time policies there; fix: %s",
				 tid, b.group, b.fix);
	}
	/* blamed only if the kernel refuses it to rtschedd itself too (or that
	 * could not be asked): systemd 252's filter lets sched_setattr through */
	if (s->loaded && s->restrict_rt == 1 && s->rt_allowed != 1) {
		char fix[DIAG_TEXT_MAX];
		*code = "self-restrict-realtime";
		diag_fix_restrict(s, fix, sizeof(fix));
		return diag_path(buf, len, "%s runs with RestrictRealtime=yes (%s), a seccomp filter that "
				 "refuses its real-time calls; fix: %s", s->st.name, s->restrict_src, fix);
	}
	if (s->loaded && s->st.seccomp == 2 && s->restrict_rt < 0) {
		*code = "self-seccomp-filter";
		return diag_path(buf, len, "%s runs under a seccomp filter of unknown origin (Seccomp: 2 in "
				 "/proc/%d/status), which may refuse real-time calls; fix: start it without the "
				 "filter, or with one that allows sched_setattr", s->st.name, (int)s->pid);
	}
	if (s->cap_sys_nice == 0) {
		char cap[DIAG_TEXT_MAX];

		*code = "no-cap-sys-nice";
		cap[0] = '\0';
		diag_fix_cap(s, cap, sizeof(cap));
		if (p->loaded && s->st.euid != p->st.uid && s->st.euid != p->st.euid)
			return diag_path(buf, len, "%s has no CAP_SYS_NICE and tid %d belongs to uid %u, "
					 "not to its uid %u; fix: %s", s->st.name, tid,
					 (unsigned)p->st.uid, (unsigned)s->st.euid, cap);
		if (p->have_limits && p->lim.rtprio_soft < (rlim_t)c->need) {
			*code = p->lim.rtprio_soft == 0 ? "rtprio-zero" : "rtprio-low";
			return diag_path(buf, len, "%s has no CAP_SYS_NICE, so the kernel allows tid %d "
					 "only priorities up to its RLIMIT_RTPRIO %llu (hard %llu), below %d; "
					 "fix: %s, or raise the limit: prlimit --pid %d --rtprio=%d:%d (needs CAP_SYS_RESOURCE)",
					 s->st.name, tid, (unsigned long long)p->lim.rtprio_soft,
					 (unsigned long long)p->lim.rtprio_hard, c->need, cap,
					 (int)p->st.pid, c->need, c->need);
		}
		return diag_path(buf, len, "%s has no CAP_SYS_NICE; fix: %s", s->st.name, cap);
	}
	if (s->loaded && s->st.seccomp == 2)
		diag_path(buf, len, "no known cause: %s has CAP_SYS_NICE and tid %d's cgroup has an RT "
			  "budget; check that SystemCallFilter= of %s allows sched_setattr (@resources), "
			  "else a security module (SELinux, AppArmor) refused it: see the audit log",
			  s->st.name, tid, s->unit);
	else
		diag_path(buf, len, "no known cause: %s has CAP_SYS_NICE, tid %d's cgroup has an RT budget "
			  "and no seccomp filter applies; a security module (SELinux, AppArmor) may have "
			  "refused it: see the audit log", s->loaded ? s->st.name : "this process", tid);
	return -ENOENT;
}

/* EINVAL from sched_setaffinity: no requested CPU is both online and in
 * the thread's cpuset. */
static int explain_affinity(struct diag_ctx *c, char *buf, size_t len, const char **code)
{
	cpu_set_t online, set, both;
	char want[256], on[256], cs[256], src[PATH_MAX + 32];
	int tid = (int)c->t->pid;

	*code = "";
	if (!c->t->cpus || cpulist_format(c->t->cpus, want, sizeof(want)) < 0)
		return -ENOENT;
	if (diag_online_cpus(c, &online) == 0) {
		CPU_AND(&both, c->t->cpus, &online);
		if (CPU_COUNT(&both) == 0) {
			cpulist_format(&online, on, sizeof(on));
			*code = "cpu-offline";
			return diag_path(buf, len, "none of CPUs %s is online (online: %s); fix: choose CPUs "
					 "from %s, or bring one online: echo 1 > %s/devices/system/cpu/cpuN/online",
					 want, on, on, c->env.sys);
		}
	} else {
		online = *c->t->cpus;
	}
	if (c->target.loaded && diag_cpuset(c, &c->target, &set, src, sizeof(src)) == 0) {
		CPU_AND(&both, c->t->cpus, &online);
		CPU_AND(&both, &both, &set);
		if (CPU_COUNT(&both) == 0) {
			char knob[PATH_MAX + 32], wides[256];
			cpu_set_t wide;

			/* the same fix as the cpu-outside-cpuset finding: the
			 * effective list is read-only; widen cpuset.cpus beside it */
			CPU_AND(&wide, c->t->cpus, &online);
			CPU_OR(&wide, &wide, &set);
			cpulist_format(&wide, wides, sizeof(wides));
			diag_cpuset_knob(src, knob, sizeof(knob));
			cpulist_format(&set, cs, sizeof(cs));
			*code = "cpu-outside-cpuset";
			return diag_path(buf, len, "CPUs %s are all outside tid %d's cpuset %s (%s); fix: choose "
					 "CPUs from %s, or widen the cpuset (its parents' first): echo %s > %s "
					 "(for a container its --cpuset-cpus, for a unit AllowedCPUs=)", want, tid,
					 cs, src, cs, wides, knob);
		}
	}
	diag_path(buf, len, "no known cause: CPUs %s include online CPUs of tid %d's cpuset", want, tid);
	return -ENOENT;
}

int diag_explain(const struct diag_env *env, const struct diag_target *t, const char *what,
		 int err, char *buf, size_t len, char *code)
{
	struct diag_report scratch;
	struct diag_ctx *c;
	const char *found = "";
	int r;

	code[0] = '\0';
	if (len == 0)
		return -ENOSPC;
	buf[0] = '\0';
	if (err < 0)
		err = -err;
	diag_report_init(&scratch);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	if ((r = diag_ctx_init(c, env, t, &scratch)) < 0)
		goto done;
	self_load(c);
	if (t->pid > 0 && (r = diag_proc_load(c, &c->target, t->pid)) == -ESRCH) {
		r = diag_path(buf, len, "tid %d has exited", (int)t->pid);
		goto done;
	}
	if (err == EINVAL && what && strcmp(what, "sched_setaffinity") == 0) {
		r = explain_affinity(c, buf, len, &found);
	} else if (err == EPERM && c->rt_requested) {
		r = explain_rt_eperm(c, buf, len, &found);
	} else if (err == EPERM) {
		found = "no-cap-sys-nice";
		r = diag_path(buf, len, "lowering nice or leaving SCHED_IDLE needs CAP_SYS_NICE or a "
			      "high enough RLIMIT_NICE; fix: give %s CAP_SYS_NICE",
			      c->self.loaded ? c->self.st.name : "the caller");
	} else {
		r = -ENOENT;
	}
	snprintf(code, DIAG_CODE_MAX, "%s", found);
	if (r == -ENAMETOOLONG)
		r = -ENOSPC;
done:
	diag_report_free(&scratch);
	free(c);
	return r;
}
