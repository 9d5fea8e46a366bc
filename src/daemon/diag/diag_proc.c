/* diag_proc.c: the diagnosis of processes: the checking process's
 * CAP_SYS_NICE and seccomp filter, what limits.conf grants a user, and a
 * target's RLIMIT_RTPRIO, RLIMIT_RTTIME, unit, seccomp filter, cgroup RT
 * budget and timer slack (see diag.h for the finding codes). */
#include "autoconfig.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <unistd.h>

#include "daemon/sys/kfeat.h"
#include "daemon/sys/limits.h"
#include "daemon/diag/diag_int.h"
#include "daemon/sys/rttime.h"

#define CAP_BIT_SYS_NICE 23      /* CAP_SYS_NICE, for the CapEff mask of a fake tree */
#define CAP_BIT_SYS_RESOURCE 24  /* CAP_SYS_RESOURCE, for pid 1's CapBnd mask */
#define BW_SHIFT 20              /* the kernel's to_ratio() fixed point */
#define DEFAULT_SLACK_NS 50000   /* SCHED_OTHER timer slack unless changed */

/* CAP_SYS_NICE in the effective set: from the kernel through libcap for the
 * live system, from the CapEff line of a fake tree.  1, 0 or -errno. */
static int proc_cap_sys_nice(const struct diag_ctx *c, const struct diag_proc *p, pid_t pid)
{
	cap_flag_value_t v = CAP_CLEAR;
	cap_t caps;
	int r;

	if (!c->real)
		return p->st.have_capeff ? (int)((p->st.capeff >> CAP_BIT_SYS_NICE) & 1) : -ENODATA;
	caps = pid ? cap_get_pid(pid) : cap_get_proc();
	if (!caps)
		return -errno;
	r = cap_get_flag(caps, CAP_SYS_NICE, CAP_EFFECTIVE, &v) < 0 ? -errno : v == CAP_SET;
	cap_free(caps);
	return r;
}

/* True if p runs in a systemd service (not a scope: scopes have no unit file). */
static bool in_service(const struct diag_proc *p)
{
	size_t n = strlen(p->unit);

	return n > 8 && strcmp(p->unit + n - 8, ".service") == 0;
}

int diag_proc_load(struct diag_ctx *c, struct diag_proc *p, pid_t pid)
{
	int r;

	memset(p, 0, sizeof(*p));
	p->id = pid;
	if (pid)
		r = diag_path(p->dir, sizeof(p->dir), "%s/%d", c->env.proc, (int)pid);
	else
		r = diag_path(p->dir, sizeof(p->dir), "%s/self", c->env.proc);
	if (r < 0)
		return r;
	if ((r = proc_read_status_at(c->env.proc, pid, &p->st)) < 0)
		return r;
	p->pid = p->st.pid;
	p->have_limits = proc_read_limits_at(c->env.proc, pid, &p->lim) == 0;
	p->cap_sys_nice = proc_cap_sys_nice(c, p, pid);
	p->have_cgroup = proc_read_cgroup_at(c->env.proc, pid, &p->cg) == 0;
	p->restrict_rt = -ENOENT;
	if (p->have_cgroup &&
	    ((p->cg.has_unified && proc_unit_from_cgroup(p->cg.unified, p->unit, sizeof(p->unit), &p->user_unit) == 0) ||
	     (p->cg.has_systemd && proc_unit_from_cgroup(p->cg.systemd, p->unit, sizeof(p->unit), &p->user_unit) == 0)) &&
	    in_service(p) && !(c->real && diag_kept_unit(p)))
		p->restrict_rt = diag_unit_restrict_rt(c, p->unit, p->user_unit, &p->transient, p->restrict_src,
						       sizeof(p->restrict_src));
	/* what the kernel allows the checking process, asked of it (a fixture
	 * tree has only the unit's word) */
	p->rt_allowed = c->real && !pid && p->cap_sys_nice == 1 ? kfeat_rt_allowed() : -ENOSYS;
	p->loaded = true;
	return 0;
}

/* "systemctl edit U, add ... then restart" for a [Service] setting. */
static void fix_unit(const struct diag_proc *p, const char *setting, char *fix, size_t len)
{
	const char *u = p->user_unit ? "--user " : "";

	diag_fmt(fix, len, "systemctl %sedit %s, add the lines [Service] and %s, then systemctl %srestart %s",
		 u, p->unit, setting, u, p->unit);
}

void diag_fix_restrict(const struct diag_proc *p, char *fix, size_t len)
{
	const char *u = p->user_unit ? "--user " : "";

	/* systemctl edit refuses a transient unit: it has no file to edit */
	if (p->transient)
		diag_fmt(fix, len, "%s is a transient unit (systemd-run): systemctl %sstop %s and start it again "
			 "without -p RestrictRealtime=yes (or with -p RestrictRealtime=no)", p->unit, u, p->unit);
	else
		fix_unit(p, "RestrictRealtime=no", fix, len);
}

void diag_fix_cap(const struct diag_proc *p, char *fix, size_t len)
{
	char link[PATH_MAX], exe[PATH_MAX];
	ssize_t n;

	if (in_service(p) && !p->user_unit) {
		fix_unit(p, "AmbientCapabilities=CAP_SYS_NICE (and CAP_SYS_NICE in CapabilityBoundingSet= "
			 "if the unit sets one)", fix, len);
		return;
	}
	/* Gone from the bounding set, the capability cannot come back in this
	 * process tree: not for root, not through a file capability (setcap). */
	if (p->st.have_capbnd && !((p->st.capbnd >> CAP_BIT_SYS_NICE) & 1)) {
		diag_fmt(fix, len, "CAP_SYS_NICE is not in its bounding set (CapBnd %016llx), so neither root nor "
			 "setcap can give it back: start it where the capability is allowed (a container with "
			 "--cap-add=SYS_NICE or systemd-nspawn --capability=CAP_SYS_NICE; a unit with CAP_SYS_NICE "
			 "in CapabilityBoundingSet=; not under setpriv --bounding-set=-sys_nice or capsh --drop)",
			 (unsigned long long)p->st.capbnd);
		return;
	}
	if (diag_path(link, sizeof(link), "%s/exe", p->dir) == 0 &&
	    (n = readlink(link, exe, sizeof(exe) - 1)) > 0) {
		exe[n] = '\0';
		diag_fmt(fix, len, "run it as root, or give the binary the capability: setcap cap_sys_nice+ep %s",
			 exe);
		return;
	}
	diag_fmt(fix, len, "run it as root, or give its binary the capability: setcap cap_sys_nice+ep BINARY");
}

/* The checking process's own cgroup-v1 RT budget against what its own
 * real-time threads may take (c->t->self_rt_pct: the loop's budget and the
 * watchdog's scans). The kernel throttles a group whose budget is spent
 * until the next period, every thread in it: the FIFO 99 watchdog too,
 * which then misses the starvation it is there for. */
static void check_self_budget(struct diag_ctx *c)
{
	const struct diag_proc *s = &c->self;
	int pct = c->t->self_rt_pct, r;
	struct diag_budget b;
	char fix[DIAG_TEXT_MAX];
	long long need;

	if (pct <= 0 || (r = diag_rt_budget(c, s, &b)) == -ENOENT)
		return;   /* nothing of its own real-time, or no RT budget per group */
	if (r < 0) {
		diag_failed(c, "the RT budget of the checking process's own cpu cgroup", r);
		return;
	}
	/* zero: every real-time policy refused (self-rt-refused); the root
	 * group's budget is kernel.sched_rt_runtime_us (rt-throttling) */
	if (r == 1 || strcmp(b.group, "/") == 0 || b.runtime < 0 || b.period <= 0)
		return;
	need = (b.period * pct + 99) / 100;
	if (b.runtime >= need) {
		diag_add(c, "self-rt-group-budget", DIAG_OK, NULL, "%s (pid %d) is in cpu cgroup %s with an RT "
			 "budget of %lld of every %lld µs, at least the %d%% its own real-time threads may take",
			 s->st.name, (int)s->pid, b.group, b.runtime, b.period, pct);
		return;
	}
	if (need % 1000)
		need += 1000 - need % 1000;
	diag_fmt(fix, sizeof(fix), "echo %lld > %s (its parent groups' budgets first, where they hold less)",
		 need, b.file);
	diag_add(c, "self-rt-group-budget-small", DIAG_WARNING, fix, "%s (pid %d) is in cpu cgroup %s, whose RT "
		 "budget of %lld of every %lld µs is less than the %d%% of a CPU its own real-time threads may "
		 "take (its loop's loop-budget, and the watchdog's scans during an episode): once the group has "
		 "spent it, the kernel throttles them all until the next period, the FIFO 99 watchdog too, "
		 "which then misses the starvation it watches for", s->st.name, (int)s->pid, b.group, b.runtime,
		 b.period, pct);
}

void diag_check_self(struct diag_ctx *c)
{
	const struct diag_proc *s = &c->self;
	char fix[DIAG_TEXT_MAX], u[300];

	if (!s->loaded)
		return;
	if (s->cap_sys_nice == 1) {
		diag_add(c, "cap-sys-nice", DIAG_OK, NULL, "%s (pid %d) has CAP_SYS_NICE: it may set any "
			 "policy and priority on any thread", s->st.name, (int)s->pid);
	} else if (s->cap_sys_nice == 0) {
		diag_fix_cap(s, fix, sizeof(fix));
		diag_add(c, "no-cap-sys-nice", DIAG_ERROR, fix, "%s (pid %d) has no CAP_SYS_NICE: it can make "
			 "real-time only threads of its own user (uid %u), and only up to their RLIMIT_RTPRIO",
			 s->st.name, (int)s->pid, (unsigned)s->st.euid);
	} else {
		diag_failed(c, "CAP_SYS_NICE of the checking process", s->cap_sys_nice);
	}
	diag_fmt(u, sizeof(u), "%s", s->unit[0] ? s->unit : "its unit");
	if (s->rt_allowed == 0) {
		/* the kernel refused it on a thread of its own: every apply fails */
		if (s->restrict_rt == 1)
			diag_fix_restrict(s, fix, sizeof(fix));
		else
			diag_fmt(fix, sizeof(fix), "start it without the seccomp filter (SystemCallFilter=, "
				 "RestrictRealtime= of %s, the container's profile) and in a cpu cgroup with a "
				 "real-time budget", u);
		diag_add(c, s->restrict_rt == 1 ? "self-restrict-realtime" : "self-rt-refused", DIAG_ERROR, fix,
			 "%s (pid %d) was refused a real-time policy on a thread of its own (sched_setattr: EPERM), "
			 "so its every apply fails%s%s%s", s->st.name, (int)s->pid,
			 s->restrict_rt == 1 ? "; its unit sets RestrictRealtime=yes (" : "",
			 s->restrict_rt == 1 ? s->restrict_src : "", s->restrict_rt == 1 ? ")" : "");
	} else if (s->rt_allowed == 1 && s->restrict_rt == 1) {
		/* systemd 252's filter covers sched_setscheduler, not the
		 * sched_setattr rtschedd applies with: it works, for now */
		diag_fix_restrict(s, fix, sizeof(fix));
		diag_add(c, "self-restrict-realtime", DIAG_WARNING, fix, "%s (pid %d) runs in %s, which sets "
			 "RestrictRealtime=yes (%s), yet the kernel let it set a real-time policy on a thread of its "
			 "own (this systemd's filter does not cover sched_setattr, which rtschedd applies with); a "
			 "systemd whose filter does would make every apply fail", s->st.name, (int)s->pid, u,
			 s->restrict_src);
	} else if (s->rt_allowed < 0 && s->restrict_rt == 1) {
		diag_fix_restrict(s, fix, sizeof(fix));
		diag_add(c, "self-restrict-realtime", DIAG_ERROR, fix, "%s (pid %d) runs in %s, which sets "
			 "RestrictRealtime=yes (%s): its every call to set a real-time policy fails with EPERM",
			 s->st.name, (int)s->pid, u, s->restrict_src);
	} else if (s->st.seccomp == 2 && s->restrict_rt == 0) {
		/* rtschedd's own unit filters system calls (SystemCallFilter=
		 * @system-service), which keeps sched_setattr: worth a line only. */
		diag_fmt(fix, sizeof(fix), "if applying fails with EPERM, check that SystemCallFilter= of %s "
			 "allows sched_setattr and sched_setaffinity (@resources, part of @system-service)", u);
		diag_add(c, "self-seccomp-filter", DIAG_INFO, fix, "%s (pid %d) runs under a seccomp filter "
			 "(Seccomp: 2), which %s does not make refuse real-time policies (no RestrictRealtime=yes)",
			 s->st.name, (int)s->pid, u);
	} else if (s->st.seccomp == 2) {
		diag_fmt(fix, sizeof(fix), "start it without the filter, or with one that allows sched_setattr "
			 "and sched_setaffinity (check the SystemCallFilter= and RestrictRealtime= of %s, or the "
			 "container's seccomp profile)", u);
		diag_add(c, "self-seccomp-filter", DIAG_WARNING, fix, "%s (pid %d) runs under a seccomp filter "
			 "(Seccomp: 2) of unknown origin; if it refuses sched_setattr or real-time policies, every "
			 "apply fails with EPERM", s->st.name, (int)s->pid);
	}
	check_self_budget(c);
}

/* A limits.conf value as text. */
static void limit_text(long v, char *buf, size_t len)
{
	if (v == LIMITS_UNSET)
		snprintf(buf, len, "unset");
	else if (v == LIMITS_UNLIMITED)
		snprintf(buf, len, "unlimited");
	else
		snprintf(buf, len, "%ld", v);
}

/* "file:line" of an entry, "" when unset. */
static void entry_src(const struct limits_entry *e, char *buf, size_t len)
{
	if (e->file[0])
		snprintf(buf, len, "%s:%u", e->file, e->line);
	else
		buf[0] = '\0';
}

/* True if the user is in group name (primary or supplementary). */
static bool who_in_group(const struct limits_who *who, const char *name)
{
	struct group *g = getgrnam(name);

	if (!g)
		return false;
	if (who->gid == g->gr_gid)
		return true;
	for (size_t i = 0; i < who->ngroups; i++)
		if (who->groups[i] == g->gr_gid)
			return true;
	return false;
}

/* Severity of "the process cannot do it itself": a warning while the
 * checking process (rtschedd) can do it for it, an error otherwise. */
static enum diag_severity self_rescues(const struct diag_ctx *c)
{
	return c->self.cap_sys_nice == 1 && !c->target_is_self ? DIAG_WARNING : DIAG_ERROR;
}

/* Findings about a grant that is nothing, 0, or below the request. */
static void limits_short(struct diag_ctx *c, const char *user, const struct limits_who *who,
			 const struct limits_answer *a, long g)
{
	char fix[DIAG_TEXT_MAX], src[DIAG_SRC_MAX];
	enum diag_severity sev = self_rescues(c);

	if (who->uid == 0)
		return;          /* root has CAP_SYS_NICE: its rtprio grant does not matter */
	entry_src(a->hard.file[0] ? &a->hard : &a->soft, src, sizeof(src));
	if (g > 0) {
		diag_fmt(fix, sizeof(fix), "raise the rtprio value on %s to %d, then log in again", src, c->need);
		diag_add(c, "limits-grant-low", DIAG_WARNING, fix, "limits.conf grants %s rtprio %ld (%s), below "
			 "the requested priority %d", user, g, src, c->need);
		return;
	}
	if (src[0]) {
		diag_fmt(fix, sizeof(fix), "change the line %s to grant rtprio %d (e.g. `%s - rtprio %d`), then "
			 "log in again", src, c->fix_prio, user, c->fix_prio);
		diag_add(c, "limits-grant-none", sev, fix, "limits.conf grants %s rtprio 0 (%s): its login "
			 "sessions cannot make their own threads real-time", user, src);
		return;
	}
	if (who_in_group(who, "audio"))
		diag_fmt(fix, sizeof(fix), "echo '@audio - rtprio %d' >> %s/95-realtime.conf (%s is in group "
			 "audio), then log in again", c->fix_prio, c->env.limits_dir, user);
	else
		diag_fmt(fix, sizeof(fix), "echo '%s - rtprio %d' >> %s/95-realtime.conf, then log in again",
			 user, c->fix_prio, c->env.limits_dir);
	diag_add(c, "limits-grant-none", sev, fix, "no line of %s or %s/*.conf grants %s an rtprio: its "
		 "login sessions start with RLIMIT_RTPRIO 0 and cannot make their own threads real-time",
		 c->env.limits_conf, c->env.limits_dir, user);
}

/* pam_limits raises the hard limit with setrlimit(), which needs
 * CAP_SYS_RESOURCE.  Without it in pid 1's bounding set no process below
 * pid 1 can have it (container runtimes drop it), so the call fails with
 * EPERM and a session keeps the hard limit it inherited (Debian's pam
 * patch 032), whatever limits.conf says. */
static void check_grant_blocked(struct diag_ctx *c, const char *user, long g)
{
	char fix[DIAG_TEXT_MAX];
	struct proc_status st;
	struct proc_rlimits l;

	if (proc_read_status_at(c->env.proc, 1, &st) < 0 || !st.have_capbnd ||
	    ((st.capbnd >> CAP_BIT_SYS_RESOURCE) & 1))
		return;
	if (proc_read_limits_at(c->env.proc, 1, &l) < 0 || l.rtprio_hard >= (rlim_t)g)
		return;
	c->grant_blocked = true;
	diag_fmt(fix, sizeof(fix), "start this system's pid 1 (%s) with CAP_SYS_RESOURCE in its bounding set, "
		 "or with RLIMIT_RTPRIO %ld already (for a container: docker run --ulimit rtprio=%ld:%ld or "
		 "--cap-add=SYS_RESOURCE)", st.name, g, g, g);
	diag_add(c, "limits-grant-blocked", self_rescues(c), fix, "limits.conf grants %s rtprio %ld, but "
		 "pam_limits cannot raise the hard limit to it: CAP_SYS_RESOURCE is not in the bounding set of "
		 "pid 1 (%s), so no process here has it, setrlimit() fails with EPERM and sessions keep the "
		 "hard limit %llu they inherit", user, g, st.name, (unsigned long long)l.rtprio_hard);
}

void diag_check_limits(struct diag_ctx *c, const char *user)
{
	struct limits_who who;
	struct limits_answer a;
	struct diag_report *r = c->r;
	char s[32], h[32], note[200];
	long g;
	int e;

	if ((e = limits_who_from_user(user, &who)) < 0) {
		diag_failed(c, "the user database", e);
		return;
	}
	if ((e = limits_lookup(c->env.limits_conf, c->env.limits_dir, "rtprio", &who, &a)) < 0) {
		char fix[DIAG_TEXT_MAX];

		diag_fmt(fix, sizeof(fix), "make %s and every %s/*.conf exist and readable (ls -l %s %s)",
			 c->env.limits_conf, c->env.limits_dir, c->env.limits_conf, c->env.limits_dir);
		diag_add(c, "limits-unreadable", DIAG_ERROR, fix, "reading %s or %s/*.conf fails (%s): "
			 "pam_limits then fails every login session", c->env.limits_conf, c->env.limits_dir,
			 strerror(-e));
		limits_who_free(&who);
		return;
	}
	if (a.exempt) {
		diag_add(c, "limits-exempt", DIAG_INFO, NULL, "%s:%u exempts %s (a \"<domain> -\" line): "
			 "pam_limits sets no limit at all, so its sessions keep the RLIMIT_RTPRIO they inherit",
			 a.exempt_file, a.exempt_line, user);
		limits_who_free(&who);
		return;
	}
	r->has_limits = true;
	r->rtprio_soft = a.soft.value;
	r->rtprio_hard = a.hard.value;
	entry_src(&a.soft, r->soft_src, sizeof(r->soft_src));
	entry_src(&a.hard, r->hard_src, sizeof(r->hard_src));
	/* What a session can reach: the hard limit (it may raise its soft
	 * limit up to that itself), else the soft one. */
	g = a.hard.value != LIMITS_UNSET ? a.hard.value : a.soft.value != LIMITS_UNSET ? a.soft.value : 0;
	if (g == LIMITS_UNLIMITED || g > 99)
		g = 99;
	c->grant = g;
	snprintf(c->grant_src, sizeof(c->grant_src), "%s", a.hard.value != LIMITS_UNSET ? r->hard_src : r->soft_src);
	note[0] = '\0';
	if (who.uid == 0)
		diag_fmt(note, sizeof(note), "; root has CAP_SYS_NICE, so RLIMIT_RTPRIO does not bind it");
	else if (a.soft.value == LIMITS_UNSET && g > 0)
		diag_fmt(note, sizeof(note), "; with the soft limit unset a session starts with the soft "
			 "limit it inherits (usually 0) and must raise it itself with setrlimit()");
	if (g > 0 || a.soft.file[0] || a.hard.file[0]) {
		limit_text(a.soft.value, s, sizeof(s));
		limit_text(a.hard.value, h, sizeof(h));
		diag_add(c, "limits-grant", DIAG_INFO, NULL, "limits.conf grants %s rtprio soft %s%s%s%s, hard %s%s%s%s%s",
			 user, s, r->soft_src[0] ? " (" : "", r->soft_src, r->soft_src[0] ? ")" : "",
			 h, r->hard_src[0] ? " (" : "", r->hard_src, r->hard_src[0] ? ")" : "", note);
	}
	if (g > 0 && who.uid != 0)
		check_grant_blocked(c, user, g);
	if (g == 0 || (c->rt_requested && g < c->need))
		limits_short(c, user, &who, &a, g);
	limits_who_free(&who);
}

/* RLIMIT_RTPRIO of the target against the request and limits.conf. */
static void check_rtprio(struct diag_ctx *c)
{
	const struct diag_proc *p = &c->target;
	unsigned long long s = p->lim.rtprio_soft, h = p->lim.rtprio_hard;
	enum diag_severity sev = self_rescues(c);
	char fix[DIAG_TEXT_MAX], why[DIAG_TEXT_MAX], rescue[200];
	const char *user = c->r->user[0] ? c->r->user : "its user";
	const char *code;
	bool not_pam;
	int pid = (int)p->pid;
	long n = c->grant >= c->need ? c->grant : c->fix_prio;

	if (!p->have_limits) {
		diag_failed(c, "RLIMIT_RTPRIO and RLIMIT_RTTIME in /proc/PID/limits", -ENODATA);
		return;
	}
	if (p->cap_sys_nice == 1) {
		diag_add(c, "rtprio", DIAG_OK, NULL, "pid %d has CAP_SYS_NICE: its RLIMIT_RTPRIO (soft %llu, "
			 "hard %llu) does not bind it", pid, s, h);
		return;
	}
	if (s >= (unsigned long long)c->need) {
		diag_add(c, "rtprio", DIAG_OK, NULL, "pid %d has RLIMIT_RTPRIO soft %llu, hard %llu: it may use "
			 "real-time priorities up to %llu itself", pid, s, h, s);
		return;
	}
	rescue[0] = '\0';
	if (sev == DIAG_WARNING)
		diag_fmt(rescue, sizeof(rescue), "; %s (with CAP_SYS_NICE) can still make its threads "
			 "real-time, but the process cannot do it itself", c->self.st.name);
	if (h >= (unsigned long long)c->need) {
		diag_fmt(fix, sizeof(fix), "call setrlimit(RLIMIT_RTPRIO, {%llu, %llu}) in the program, or "
			 "prlimit --pid %d --rtprio=%llu:%llu", h, h, pid, h, h);
		diag_add(c, "rtprio-soft-low", DIAG_WARNING, fix, "pid %d has RLIMIT_RTPRIO soft %llu, below %d, "
			 "but hard %llu: it can raise its soft limit itself", pid, s, c->need, h);
		return;
	}
	not_pam = s == 0 && c->grant >= c->need && c->grant > 0;
	code = not_pam ? "rtprio-zero-not-pam" : s == 0 ? "rtprio-zero" : "rtprio-low";
	if (in_service(p)) {
		diag_fmt(why, sizeof(why), "LimitRTPRIO=%ld", n);
		fix_unit(p, why, fix, sizeof(fix));
	} else if (not_pam && c->grant_blocked) {
		diag_fmt(fix, sizeof(fix), "no process here can raise the hard limit (see limits-grant-blocked): "
			 "give pid 1 CAP_SYS_RESOURCE or RLIMIT_RTPRIO %ld, then start it from a PAM login session "
			 "(runuser -l %s -c CMD, su -l, ssh)", n, user);
	} else if (not_pam) {
		diag_fmt(fix, sizeof(fix), "raise it now: prlimit --pid %d --rtprio=%ld:%ld (as root, which needs "
			 "CAP_SYS_RESOURCE); for good, start it from a PAM login session (runuser -l %s -c CMD, su -l, "
			 "ssh)", pid, n, n, user);
	} else {
		diag_fmt(fix, sizeof(fix), "raise it now: prlimit --pid %d --rtprio=%ld:%ld (as root, which needs "
			 "CAP_SYS_RESOURCE); for good, "
			 "grant it in limits.conf (`%s - rtprio %ld` in %s/95-realtime.conf) and start it from a "
			 "login session", pid, n, n, user, n, c->env.limits_dir);
	}
	if (not_pam) {
		if (in_service(p))
			diag_fmt(why, sizeof(why), "it runs in the systemd service %s, and services never get "
				 "limits.conf (pam_limits runs at login only)", p->unit);
		else if (strncmp(p->unit, "session-", 8) == 0)
			diag_fmt(why, sizeof(why), "it runs in login session %s, so limits.conf changed after "
				 "that login", p->unit);
		else
			diag_fmt(why, sizeof(why), "it was not started through a PAM login session (login, ssh, "
				 "su -l, a display manager), so pam_limits never applied the grant");
		if (c->grant_blocked)
			diag_cat(why, sizeof(why), " (and here a PAM session could not apply it either: see "
				 "limits-grant-blocked)");
		diag_add(c, code, sev, fix, "pid %d (%s) has RLIMIT_RTPRIO 0 (hard %llu) although limits.conf "
			 "grants %s rtprio %ld (%s): %s%s", pid, p->st.name, h, user, c->grant, c->grant_src,
			 why, rescue);
		return;
	}
	why[0] = '\0';
	if (c->grant >= 0)
		diag_fmt(why, sizeof(why), "; limits.conf grants %s rtprio %ld", user, c->grant);
	if (in_service(p))
		diag_cat(why, sizeof(why), "; it runs in the systemd service %s, and services never get "
			 "limits.conf", p->unit);
	diag_add(c, code, sev, fix, "pid %d (%s) has RLIMIT_RTPRIO soft %llu, hard %llu%s: without "
		 "CAP_SYS_NICE it cannot use real-time priority %d itself%s%s", pid, p->st.name, s, h,
		 c->rt_requested ? ", below the requested priority" : "", c->need, why, rescue);
}

/* RLIMIT_RTTIME: 0 kills the process as soon as it runs real-time;
 * unlimited leaves a runaway thread to RT throttling alone. */
static void check_rttime(struct diag_ctx *c)
{
	const struct diag_proc *p = &c->target;
	struct rttime_judgement j;
	char fix[DIAG_TEXT_MAX];
	int pid = (int)p->pid;

	if (!p->have_limits)
		return;
	/* the grant decision's reading of the same limits (sys/rttime.h) */
	rttime_judge(&p->lim, 0, &j);
	if (j.verdict == RTTIME_ZERO) {
		if (in_service(p))
			fix_unit(p, "LimitRTTIME=infinity (or a watchdog such as LimitRTTIME=200000)", fix, sizeof(fix));
		else if (j.suggest_soft > 0)
			diag_fmt(fix, sizeof(fix), "prlimit --pid %d --rttime=%llu:%s (the soft limit may go up to the "
				 "hard one without privilege), and find what set it to 0 (a parent's setrlimit() or "
				 "prlimit)", pid, (unsigned long long)j.suggest_soft, j.hard);
		else
			diag_fmt(fix, sizeof(fix), "prlimit --pid %d --rttime=unlimited:unlimited (as root, which needs CAP_SYS_RESOURCE), and find "
				 "what set it to 0 (a parent's setrlimit() or prlimit)", pid);
		diag_add(c, "rttime-zero", DIAG_ERROR, fix, "pid %d has RLIMIT_RTTIME 0: the kernel kills it "
			 "(SIGXCPU, or SIGKILL at the hard limit) as soon as it runs a tick real-time without "
			 "blocking", pid);
	} else if (j.verdict == RTTIME_UNLIMITED) {
		if (in_service(p))
			fix_unit(p, "LimitRTTIME=200000:250000", fix, sizeof(fix));
		else
			diag_fmt(fix, sizeof(fix), "optional watchdog: prlimit --pid %d --rttime=200000:250000 "
				 "(µs of CPU a real-time thread may use without blocking; SIGXCPU, then SIGKILL)", pid);
		diag_add(c, "rttime-unlimited", c->rt_unthrottled ? DIAG_WARNING : DIAG_INFO, fix,
			 "pid %d has no RLIMIT_RTTIME: a real-time thread that never blocks is stopped only by "
			 "RT throttling%s", pid, c->rt_unthrottled ? ", which is disabled here" : "");
	} else {
		diag_add(c, "rttime", DIAG_OK, NULL, "pid %d has RLIMIT_RTTIME soft %llu µs, hard %s: a real-time "
			 "thread that runs that long without blocking gets SIGXCPU", pid,
			 (unsigned long long)p->lim.rttime_soft, j.hard);
	}
}

/* RestrictRealtime= of the target's unit, or a seccomp filter of unknown origin. */
static void check_seccomp(struct diag_ctx *c)
{
	const struct diag_proc *p = &c->target;
	char fix[DIAG_TEXT_MAX];
	int pid = (int)p->pid;

	if (c->target_is_self)
		return;          /* diag_check_self() spoke about it */
	if (p->restrict_rt == 1) {
		diag_fix_restrict(p, fix, sizeof(fix));
		diag_add(c, "restrict-realtime", DIAG_WARNING, fix, "pid %d runs in %s, which sets "
			 "RestrictRealtime=yes (%s): its own calls to set a real-time policy fail with EPERM; "
			 "%s can still make its threads real-time, as a seccomp filter binds only the filtered "
			 "process's own calls", pid, p->unit, p->restrict_src,
			 c->self.loaded ? c->self.st.name : "rtschedd");
	} else if (p->st.seccomp == 2) {
		if (p->unit[0])
			diag_fmt(fix, sizeof(fix), "see `systemctl show -p RestrictRealtime -p SystemCallFilter %s`",
				 p->unit);
		else
			diag_fmt(fix, sizeof(fix), "see the seccomp profile of what started it (a container runtime, "
				 "a sandbox)");
		diag_add(c, "seccomp-filter", DIAG_INFO, fix, "pid %d runs under a seccomp filter (Seccomp: 2)%s%s%s; "
			 "if it refuses real-time policies the process cannot make its own threads real-time "
			 "(others still can)", pid, p->unit[0] ? " and the unit files of " : "", p->unit,
			 p->unit[0] ? (p->restrict_rt < 0 ? " were not found" : " do not set RestrictRealtime=yes") : "");
	}
}

/* The directory of the cgroup-v1 hierarchy with the cpu controller. */
static int cpu_v1_mount(const struct diag_ctx *c, char *dir, size_t len)
{
	static const char *const names[] = { "cpu", "cpu,cpuacct", "cpuacct,cpu" };
	char f[PATH_MAX];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (diag_path(f, sizeof(f), "%s/%s/cpu.rt_runtime_us", c->env.cgroup, names[i]) == 0 &&
		    access(f, F_OK) == 0)
			return diag_path(dir, len, "%s/%s", c->env.cgroup, names[i]);
	return -ENOENT;
}

/* The kernel's to_ratio(): a budget as a fraction of 1 << BW_SHIFT. */
static unsigned long long to_ratio(long long period, long long runtime)
{
	if (runtime < 0)
		return 1ull << BW_SHIFT;    /* RUNTIME_INF */
	if (period <= 0)
		return 0;
	return ((unsigned long long)runtime << BW_SHIFT) / (unsigned long long)period;
}

/* Budget of group dir, and its period. */
static int group_budget(const char *dir, long long *runtime, long long *period)
{
	int r = diag_read_ll(runtime, "%s/cpu.rt_runtime_us", dir);

	return r < 0 ? r : diag_read_ll(period, "%s/cpu.rt_period_us", dir);
}

/* The writes that give the zero-budget group at mount+group a budget: from
 * its topmost zero ancestor down, each gets what that ancestor's parent has
 * not given to its other children, the kernel's own sum rule. */
static void budget_fix(const char *mount, const char *group, char *fix, size_t len)
{
	char prefix[1024], dir[PATH_MAX], parent[PATH_MAX], child[1024];
	long long rt, per, prt, pper;
	unsigned long long used = 0, free, v;
	size_t top = 0;        /* length of the topmost zero prefix */
	DIR *d;
	struct dirent *de;

	for (size_t i = 1; group[i - 1]; i++) {
		if (group[i] != '/' && group[i] != '\0')
			continue;
		snprintf(prefix, sizeof(prefix), "%.*s", (int)i, group);
		if (diag_path(dir, sizeof(dir), "%s%s", mount, prefix) == 0 &&
		    group_budget(dir, &rt, &per) == 0 && rt == 0) {
			top = i;
			break;
		}
	}
	if (top == 0) {
		diag_fmt(fix, len, "give %s%s a budget in cpu.rt_runtime_us, parents first", mount, group);
		return;
	}
	/* The parent of the topmost zero group and its other children. */
	{
		size_t slash = top;

		while (slash > 0 && group[slash - 1] != '/')
			slash--;
		snprintf(child, sizeof(child), "%.*s", (int)(top - slash), group + slash);
		snprintf(prefix, sizeof(prefix), "%.*s", (int)(slash > 1 ? slash - 1 : 0), group);
	}
	if (diag_path(parent, sizeof(parent), "%s%s", mount, prefix) < 0 ||
	    group_budget(parent, &prt, &pper) < 0 || !(d = opendir(parent))) {
		diag_fmt(fix, len, "give %s%s a budget in cpu.rt_runtime_us, parents first", mount, group);
		return;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, child) == 0 ||
		    diag_path(dir, sizeof(dir), "%s/%s", parent, de->d_name) < 0 ||
		    group_budget(dir, &rt, &per) < 0)
			continue;
		used += to_ratio(per, rt);
	}
	closedir(d);
	free = to_ratio(pper, prt) > used ? to_ratio(pper, prt) - used : 0;
	if (diag_read_ll(&per, "%s%.*s/cpu.rt_period_us", mount, (int)top, group) < 0)
		per = 1000000;
	if (((free * (unsigned long long)(per > 0 ? per : 0)) >> BW_SHIFT) == 0) {
		diag_fmt(fix, len, "the RT budget of %s (%lld of %lld µs) is all given to its other child "
			 "groups: lower one of their cpu.rt_runtime_us, then run this check again",
			 parent, prt, pper);
		return;
	}
	fix[0] = '\0';
	for (size_t i = top; ; i++) {
		if (group[i] != '/' && group[i] != '\0')
			continue;
		snprintf(prefix, sizeof(prefix), "%.*s", (int)i, group);
		if (diag_path(dir, sizeof(dir), "%s%s", mount, prefix) < 0 ||
		    diag_read_ll(&per, "%s/cpu.rt_period_us", dir) < 0)
			per = 1000000;
		v = (free * (unsigned long long)per) >> BW_SHIFT;
		if (v >= 1000)
			v -= v % 1000;    /* a round number, still within the rule */
		diag_cat(fix, len, "%secho %llu > %s/cpu.rt_runtime_us", fix[0] ? " && " : "", v, dir);
		if (!group[i])
			break;
	}
}

int diag_rt_budget(struct diag_ctx *c, const struct diag_proc *p, struct diag_budget *b)
{
	char mount[PATH_MAX], dir[PATH_MAX + 1024];
	int r;

	memset(b, 0, sizeof(*b));
	if (!p->have_cgroup || !p->cg.has_cpu_v1)
		return -ENOENT;
	if ((r = cpu_v1_mount(c, mount, sizeof(mount))) < 0)
		return r;
	snprintf(b->group, sizeof(b->group), "%s", p->cg.cpu_v1);
	/* The root group's budget is kernel.sched_rt_runtime_us: see diag_kernel.c. */
	if ((r = diag_path(dir, sizeof(dir), "%s%s", mount, strcmp(b->group, "/") ? b->group : "")) < 0 ||
	    (r = diag_path(b->file, sizeof(b->file), "%s/cpu.rt_runtime_us", dir)) < 0 ||
	    (r = group_budget(dir, &b->runtime, &b->period)) < 0)
		return r;
	if (b->runtime != 0 || strcmp(b->group, "/") == 0)
		return 0;
	budget_fix(mount, b->group, b->fix, sizeof(b->fix));
	return 1;
}

/* The target's RT group budget (cgroup v1 with RT group scheduling). */
static void check_budget(struct diag_ctx *c)
{
	const struct diag_proc *p = &c->target;
	struct diag_budget b;
	char fix[DIAG_TEXT_MAX];
	int r = diag_rt_budget(c, p, &b);

	if (r == -ENOENT)
		return;          /* cgroup v2 or no cpu controller: no RT budget per group */
	if (r < 0) {
		diag_failed(c, "the RT budget of the target's cpu cgroup", r);
		return;
	}
	if (r == 0) {
		diag_add(c, "rt-group-budget", DIAG_OK, NULL, "pid %d is in cpu cgroup %s with an RT budget of "
			 "%lld of every %lld µs", (int)p->pid, b.group, b.runtime, b.period);
		return;
	}
	diag_fmt(fix, sizeof(fix), "%s%s", b.fix, in_service(p) ? " (systemd recreates the group when the "
		 "unit restarts: repeat it then, e.g. from ExecStartPre=)" : " (a container runtime sets it "
		 "with e.g. docker run --cpu-rt-runtime=N)");
	diag_add(c, "rt-group-budget-zero", DIAG_ERROR, fix, "pid %d is in cpu cgroup %s (cgroup v1 with RT "
		 "group scheduling) whose cpu.rt_runtime_us is 0: the kernel refuses any real-time policy "
		 "there with EPERM, even to CAP_SYS_NICE", (int)p->pid, b.group);
}

/* SCHED_OTHER sleeps end up to the timer slack late; RT threads get none. */
static void check_timer_slack(struct diag_ctx *c)
{
	const struct diag_proc *p = &c->target;
	char fix[DIAG_TEXT_MAX];
	struct proc_stat st;
	long long slack;
	int r;
	int pid = (int)p->pid;

	if (c->rt_requested)
		return;
	if (proc_read_stat_at(c->env.proc, p->id, 0, &st) == 0 &&
	    (st.policy == SCHED_FIFO || st.policy == SCHED_RR) && c->t->policy < 0)
		return;
	if ((r = proc_read_timerslack_at(c->env.proc, p->id, &slack)) < 0) {
		diag_failed(c, "the timer slack of the target", r);
		return;
	}
	diag_fmt(fix, sizeof(fix), "give it a real-time policy (real-time threads get no slack), or a smaller "
		 "slack: prctl(PR_SET_TIMERSLACK, 1) in the thread, or echo 1 > %s/timerslack_ns (needs "
		 "CAP_SYS_NICE)", p->dir);
	if (slack > DEFAULT_SLACK_NS)
		diag_add(c, "timer-slack", DIAG_WARNING, fix, "pid %d's timer slack is %lld ns, above the default "
			 "%d: its SCHED_OTHER sleeps may end %lld µs late", pid, slack, DEFAULT_SLACK_NS,
			 slack / 1000);
	else if (slack == DEFAULT_SLACK_NS)
		diag_add(c, "timer-slack", DIAG_INFO, fix, "pid %d runs SCHED_OTHER with the default timer slack "
			 "of %d ns: its sleeps may end up to %d µs late", pid, DEFAULT_SLACK_NS,
			 DEFAULT_SLACK_NS / 1000);
	else
		diag_add(c, "timer-slack", DIAG_OK, NULL, "pid %d's timer slack is %lld ns", pid, slack);
}

void diag_check_target(struct diag_ctx *c)
{
	check_rtprio(c);
	check_rttime(c);
	check_seccomp(c);
	check_budget(c);
	check_timer_slack(c);
}
