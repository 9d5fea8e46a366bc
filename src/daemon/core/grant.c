/* grant.c: request resolution, per-user limits and rate limits (see grant.h). */
#include "autoconfig.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sys/accounts.h"
#include "daemon/sys/cpulist.h"
#include "daemon/sys/limits.h"
#include "daemon/sys/policy.h"
#include "daemon/sys/session.h"
#include "daemon/sys/subid.h"
#include "daemon/core/grant.h"
#include "daemon/sys/proc.h"

/* Whether s is in the group named group: its own gid, or the account's
 * primary or a supplementary group (accounts.h: looked up once per uid). */
static bool in_group(const struct grant_subject *s, const char *group, gid_t *gid)
{
	gid_t g;

	if (accounts_group_gid(group, &g) < 0)
		return false;
	if (gid)
		*gid = g;
	if (g == s->gid)
		return true;
	return s->user[0] && accounts_in_group(s->account, g) == 1;
}

bool grant_owns(uid_t uid, const struct proc_status *target)
{
	return uid == target->uid && uid == target->euid;
}

/* The user who owns uid's subordinate range in *out, or false if uid lies
 * in none (or in root's only: a root-owned range is the host's containers,
 * whose users are their own). */
static bool subordinate_owner(uid_t uid, struct account *out)
{
	uid_t owner;

	return subid_owner(uid, &owner) == 0 && accounts_by_uid(owner, out) == 0 && out->uid != 0 &&
	       out->uid != uid;
}

uid_t grant_account(uid_t uid)
{
	struct account a;

	if (uid == 0 || accounts_by_uid(uid, &a) == 0)
		return uid;
	return subordinate_owner(uid, &a) ? a.uid : uid;
}

/* s->user = name, or "" for a name too long for any section to name (cut
 * short, it could match another user's [user] section). */
static void subject_name(struct grant_subject *s, const char *name)
{
	size_t n = strlen(name);

	if (n < sizeof(s->user))
		memcpy(s->user, name, n + 1);
}

void grant_subject_init(struct grant_subject *s, const struct config *c, uid_t uid, gid_t gid, pid_t pid)
{
	struct account a;
	bool found;

	memset(s, 0, sizeof(*s));
	s->uid = uid;
	s->gid = gid;
	s->pid = pid;
	s->account = uid;
	s->admin_gid = (gid_t)-1;
	/* root needs no name: it is privileged whatever the groups say */
	if (uid == 0) {
		snprintf(s->user, sizeof(s->user), "root");
		s->privileged = true;
		return;
	}
	found = accounts_by_uid(uid, &a) == 0;
	if (!found && subordinate_owner(uid, &a)) {
		/* the owner's limits and groups; never its privilege (admin-group) */
		s->account = a.uid;
		s->subordinate = true;
		s->gid = a.gid;
		subject_name(s, a.name);
		return;
	}
	if (found) {
		subject_name(s, a.name);
		if (gid == (gid_t)-1)
			s->gid = a.gid;
	}
	s->privileged = c->admin_group[0] && in_group(s, c->admin_group, &s->admin_gid);
}

/* Copy one principal's keys into l where set; widen when `widen`. */
static void merge(struct grant_limits *l, const struct principal *p, bool widen)
{
	char from[CONFIG_NAME_MAX + 16];

	snprintf(from, sizeof(from), "[%s %s]", p->is_group ? "group" : "user", p->name);
	if (p->max_priority >= 0 && (!widen || p->max_priority > l->max_priority)) {
		l->max_priority = p->max_priority;
		snprintf(l->prio_from, sizeof(l->prio_from), "%s", from);
	}
	if (p->policies && (!widen || (p->policies & ~l->policies))) {
		l->policies = widen ? l->policies | p->policies : p->policies;
		snprintf(l->policies_from, sizeof(l->policies_from), "%s", from);
	}
	if (p->has_min_nice && (!widen || p->min_nice < l->min_nice)) {
		l->min_nice = p->min_nice;
		snprintf(l->nice_from, sizeof(l->nice_from), "%s", from);
	}
	if (p->max_threads >= 0 && (!widen || p->max_threads > l->max_threads)) {
		l->max_threads = p->max_threads;
		snprintf(l->threads_from, sizeof(l->threads_from), "%s", from);
	}
	/* a group widens: it can't restrict a user who had no CPU limit */
	if (p->has_cpus && (!widen || l->has_cpus)) {
		if (widen)
			CPU_OR(&l->cpus, &l->cpus, &p->cpus);
		else
			l->cpus = p->cpus;
		l->has_cpus = true;
		snprintf(l->cpus_from, sizeof(l->cpus_from), "%s", from);
	}
}

/* Whether a section counts for s now: session = active asks that the user
 * sit at the machine (asked of logind once per lookup); one that does not is
 * named in l->skipped. */
static bool section_counts(const struct principal *p, const struct grant_subject *s, int *active,
			   struct grant_limits *l)
{
	size_t off = strlen(l->skipped);

	if (!p->session_active)
		return true;
	if (*active < 0)
		*active = session_active_local(s->account);
	if (*active)
		return true;
	snprintf(l->skipped + off, sizeof(l->skipped) - off, "%s[%s %s]", off ? ", " : "",
		 p->is_group ? "group" : "user", p->name);
	return false;
}

void grant_limits_get(const struct config *c, const struct grant_subject *s, struct grant_limits *l)
{
	const struct principal *u = s->user[0] ? config_find_principal(c, s->user, false) : NULL;
	int active = -1;

	/* Built in: nothing real-time for non-root users unless configured. */
	memset(l, 0, sizeof(*l));
	l->max_priority = 0;
	l->policies = 1u << SCHED_OTHER | 1u << SCHED_BATCH | 1u << SCHED_IDLE;
	l->max_threads = 32;
	l->min_nice = 0; /* a weight above everyone else's is a privilege too */
	snprintf(l->nice_from, sizeof(l->nice_from), "built-in default");
	snprintf(l->prio_from, sizeof(l->prio_from), "built-in default");
	snprintf(l->policies_from, sizeof(l->policies_from), "built-in default");
	snprintf(l->threads_from, sizeof(l->threads_from), "built-in default");
	/* [user NAME] replaces [user *]; one that does not count leaves [user *] */
	if (u && !section_counts(u, s, &active, l))
		u = NULL;
	if (!u && (u = config_find_principal(c, "*", false)) && !section_counts(u, s, &active, l))
		u = NULL;
	if (u)
		merge(l, u, false);
	for (size_t i = 0; i < c->n_principals; i++)
		if (c->principals[i].is_group && in_group(s, c->principals[i].name, NULL) &&
		    section_counts(&c->principals[i], s, &active, l))
			merge(l, &c->principals[i], true);
}

/* Whom a message names: "user alice", or "uid 4243" for a uid without a
 * passwd entry (no name to give). */
static const char *subject_who(const struct grant_subject *s, char *buf, size_t len)
{
	if (s->user[0])
		snprintf(buf, len, "user %s", s->user);
	else
		snprintf(buf, len, "uid %u", (unsigned)s->uid);
	return buf;
}

/* " ([user *] does not apply: session = active, and USER has no active local
 * session)", or "" */
static const char *skipped_note(const struct grant_limits *l, const struct grant_subject *s, char *buf, size_t len)
{
	char who[CONFIG_NAME_MAX + 8];

	if (!l->skipped[0])
		return "";
	snprintf(buf, len, " (%s not counted: session = active there, and %s has no active session on a "
		 "local seat)", l->skipped, subject_who(s, who, sizeof(who)));
	return buf;
}

int grant_resolve(const struct config *c, const struct grant_request *req, struct sched_spec *out)
{
	const struct rule *rl = NULL;

	if (req->role[0] && !(rl = config_find_rule(c, req->role)))
		return REFUSE_UNKNOWN_ROLE;
	*out = rl ? rl->spec : c->dflt;
	if (req->has_policy) {
		out->policy = req->policy;
		/* switching class: a real-time policy needs a priority, others have 0 */
		if (!policy_is_realtime(out->policy))
			out->priority = 0;
		else if (out->priority == 0)
			out->priority = c->dflt.priority;
	}
	if (req->has_priority)
		out->priority = req->priority;
	if (req->has_nice)
		out->nice = req->nice;
	if (req->has_cpus) {
		out->cpus = req->cpus;
		out->has_cpus = true;
	}
	return 0;
}

/* The ceiling from limits.conf or the process's RLIMIT_RTPRIO; the soft
 * value, which is what pam_limits and the kernel enforce. */
static int cap_lookup(const struct config *c, const struct grant_subject *s, pid_t target, struct grant_cap *cap)
{
	if (c->rtprio_cap == CAP_RLIMIT) {
		/* /proc/PID/limits is world-readable, unlike prlimit(2) on another
		 * user's process */
		struct proc_rlimits l;
		int r = proc_read_limits(target, &l);
		if (r < 0)
			return r;
		long soft = l.rtprio_soft == RLIM_INFINITY ? -1 : (long)l.rtprio_soft;
		long hard = l.rtprio_hard == RLIM_INFINITY ? -1 : (long)l.rtprio_hard;
		cap->cap = soft;
		snprintf(cap->from, sizeof(cap->from), "RLIMIT_RTPRIO of pid %d (soft %ld, hard %ld)", (int)target,
			 soft, hard);
		return 0;
	}
	struct limits_who who;
	struct limits_answer a;
	char name[CONFIG_NAME_MAX + 8];
	int r = limits_who_from_user(s->user, &who);

	if (r < 0)
		return r;
	r = limits_lookup(c->limits_conf, c->limits_dir, "rtprio", &who, &a);
	limits_who_free(&who);
	if (r < 0)
		return r;
	if (a.soft.value == LIMITS_UNSET) {
		cap->cap = 0;
		snprintf(cap->from, sizeof(cap->from), "limits.conf (%s, %s/*.conf): no rtprio line for %s",
			 c->limits_conf, c->limits_dir, subject_who(s, name, sizeof(name)));
	} else {
		cap->cap = a.soft.value;
		snprintf(cap->from, sizeof(cap->from), "limits.conf soft rtprio at %s:%u", a.soft.file, a.soft.line);
	}
	return 0;
}

/* rtprio-cap for a real-time spec: 0 (d->spec.priority maybe clamped,
 * said in d->cap), a refusal, or -errno if the cap could not be read. */
static int check_cap(const struct config *c, const struct grant_ask *a, struct grant_decision *d)
{
	const struct grant_subject *s = a->subj;
	struct sched_spec *spec = &d->spec;
	struct grant_cap *cap = &d->cap;

	if (c->rtprio_cap == CAP_CONFIG || !policy_is_realtime(spec->policy))
		return 0;
	int r = cap_lookup(c, s, a->target, cap);

	if (r < 0) {
		snprintf(d->msg, sizeof(d->msg), "cannot read the rtprio cap (rtprio-cap): %s", strerror(-r));
		return r;
	}
	cap->applies = true;
	if (cap->cap < 0 || spec->priority <= cap->cap)
		return 0;
	if (c->clamp && cap->cap >= 1) {
		spec->priority = (int)cap->cap;
		cap->clamped = true;
		return 0;
	}
	snprintf(d->msg, sizeof(d->msg), "priority %d is above the cap %ld from %s", spec->priority, cap->cap,
		 cap->from);
	if (c->rtprio_cap == CAP_RLIMIT)
		snprintf(d->fix, sizeof(d->fix), "raise the process's RLIMIT_RTPRIO to %d (LimitRTPRIO=%d in its unit, "
			 "or prlimit --pid %d --rtprio=%d), or ask for %ld", spec->priority, spec->priority,
			 (int)a->target, spec->priority, cap->cap);
	else
		/* the limits-dir this daemon reads, not always /etc/security/limits.d */
		snprintf(d->fix, sizeof(d->fix), "add the line '%s - rtprio %d' to %s/rtschedd.conf and log in again, "
			 "or ask for %ld", s->user, spec->priority, c->limits_dir, cap->cap);
	return REFUSE_RTPRIO_CAP;
}

/* The limits of a non-privileged, non-exempt subject: 0, or a refusal
 * (-errno if the rtprio cap could not be read) in d. With over-cap = clamp,
 * d->spec.priority may be lowered (check_cap()). */
static int check_limits(const struct config *c, const struct grant_ask *a, struct grant_decision *d)
{
	const struct grant_subject *s = a->subj;
	const struct grant_request *req = a->req;
	const char *what = req->role[0] ? req->role : "the [daemon] default";
	struct sched_spec *spec = &d->spec;
	struct grant_limits l;
	char note[512], who[CONFIG_NAME_MAX + 8];
	int e;

	grant_limits_get(c, s, &l);
	if (!(l.policies & (1u << spec->policy))) {
		char allowed[64];
		policy_mask_to_string(l.policies, allowed, sizeof(allowed));
		snprintf(d->msg, sizeof(d->msg), "policy %s (%s) is not allowed for %s by %s (policies = %s)%s",
			 policy_to_string(spec->policy), req->has_policy ? "requested" : what,
			 subject_who(s, who, sizeof(who)),
			 l.policies_from, allowed, skipped_note(&l, s, note, sizeof(note)));
		snprintf(d->fix, sizeof(d->fix), "ask for one of those, or add %s to policies in a [user] or [group] "
			 "section for this user", policy_to_string(spec->policy));
		return REFUSE_POLICY;
	}
	if (s->has_nice_floor && s->nice_floor > l.min_nice) {
		/* rtkit's MinNiceLevel narrows what [user]/[group] allow, never
		 * widens it: a bus caller gets no more than a socket client */
		l.min_nice = s->nice_floor;
		snprintf(l.nice_from, sizeof(l.nice_from), "[rtkit] min-nice-level");
	}
	if (spec->nice < l.min_nice) {
		snprintf(d->msg, sizeof(d->msg), "nice %d (%s) is below min-nice %d for %s set by %s%s", spec->nice,
			 req->has_nice ? "requested" : what, l.min_nice,
			 subject_who(s, who, sizeof(who)), l.nice_from,
			 skipped_note(&l, s, note, sizeof(note)));
		snprintf(d->fix, sizeof(d->fix), "ask for %d or more, or lower min-nice there", l.min_nice);
		return REFUSE_NICE;
	}
	if (spec->priority > l.max_priority) {
		snprintf(d->msg, sizeof(d->msg), "priority %d (%s) is above max-priority %d for %s set by %s%s",
			 spec->priority, req->has_priority ? "requested" : what, l.max_priority,
			 subject_who(s, who, sizeof(who)), l.prio_from,
			 skipped_note(&l, s, note, sizeof(note)));
		snprintf(d->fix, sizeof(d->fix), "ask for %d or less, or raise max-priority there (or in a [group] "
			 "section of one of the user's groups)", l.max_priority);
		return REFUSE_PRIORITY;
	}
	if (spec->has_cpus && l.has_cpus) {
		cpu_set_t extra;
		char ex[128], allowed[128];

		CPU_XOR(&extra, &spec->cpus, &l.cpus);
		CPU_AND(&extra, &extra, &spec->cpus);
		if (CPU_COUNT(&extra) > 0) {
			cpulist_format(&extra, ex, sizeof(ex));
			cpulist_format(&l.cpus, allowed, sizeof(allowed));
			snprintf(d->msg, sizeof(d->msg), "CPU %s (%s) is outside the CPUs %s allowed for %s by %s",
				 ex, req->has_cpus ? "requested" : what, allowed,
				 subject_who(s, who, sizeof(who)), l.cpus_from);
			snprintf(d->fix, sizeof(d->fix), "ask for CPUs among %s, or widen cpus in %s", allowed,
				 l.cpus_from);
			return REFUSE_CPUS;
		}
	}
	if ((e = check_cap(c, a, d)) != 0)
		return e;
	/* the quota counts what a grant adds: a shrunk max-threads is met as
	 * threads go, never by taking back what was granted (a reload, a
	 * registration again, an adoption add nothing) */
	if (a->adding > 0 && a->held + a->adding > (size_t)l.max_threads) {
		snprintf(d->msg, sizeof(d->msg), "%s holds %zu thread%s and may hold %d (max-threads in %s)%s",
			 subject_who(s, who, sizeof(who)), a->held, a->held == 1 ? "" : "s", l.max_threads, l.threads_from,
			 s->subordinate ? "; its subordinate uids count as the user" : "");
		snprintf(d->fix, sizeof(d->fix), "unregister one first, or raise max-threads in %s", l.threads_from);
		return REFUSE_QUOTA;
	}
	return 0;
}

enum grant_cooldown grant_path_cooldown(enum grant_path p)
{
	switch (p) {
	case GRANT_PATH_RULE:
	case GRANT_PATH_PROCESS:
	case GRANT_PATH_REAPPLY:
	case GRANT_PATH_ADOPT:
		return GRANT_COOLDOWN_HOLD;
	default:
		/* register, rtkit, caught and check (which says what a register meets) */
		return GRANT_COOLDOWN_REFUSE;
	}
}

const char *grant_path_name(enum grant_path p)
{
	static const char *const names[GRANT_PATH__MAX] = {
		[GRANT_PATH_NONE] = "none", [GRANT_PATH_REGISTER] = "register", [GRANT_PATH_RTKIT] = "rtkit",
		[GRANT_PATH_CAUGHT] = "caught", [GRANT_PATH_RULE] = "rule", [GRANT_PATH_PROCESS] = "process",
		[GRANT_PATH_REAPPLY] = "reapply", [GRANT_PATH_ADOPT] = "adopt", [GRANT_PATH_CHECK] = "check",
	};

	return p < GRANT_PATH__MAX ? names[p] : "none";
}

/* The target's RLIMIT_RTTIME against rtkit's contract and the kernel's
 * SIGKILL at zero: 0, or a refusal in d. Limits that cannot be read are
 * no refusal (the apply reads the kernel's answer), except under rtkit's
 * contract, which must be shown to hold. */
static int check_rttime(const struct grant_ask *a, struct grant_decision *d)
{
	const struct proc_rlimits *l = a->limits;
	struct proc_rlimits read;
	int r;

	if (!l) {
		if ((r = proc_read_limits(a->target, &read)) < 0) {
			if (a->rttime_max <= 0)
				return 0;
			snprintf(d->msg, sizeof(d->msg), "cannot read the RLIMIT_RTTIME of pid %d: %s", (int)a->target,
				 strerror(-r));
			return r == -ESRCH || r == -ENOENT ? REFUSE_NO_SUCH_THREAD : r;
		}
		l = &read;
	}
	rttime_judge(l, a->rttime_max, &d->rttime);
	if (d->rttime.verdict == RTTIME_OVER_MAX) {
		snprintf(d->msg, sizeof(d->msg), "pid %d (the thread's process) has RLIMIT_RTTIME hard limit %s%s, "
			 "above RTTimeUSecMax %ld us", (int)a->target, d->rttime.hard,
			 l->rttime_hard == RLIM_INFINITY ? "" : " us", a->rttime_max);
		snprintf(d->fix, sizeof(d->fix), "lower it first (setrlimit(RLIMIT_RTTIME) to at most %ld, "
			 "LimitRTTIME=%ld in its unit, or prlimit --rttime=%ld --pid PID), or raise rttime-usec-max in "
			 "[rtkit]", a->rttime_max, a->rttime_max, a->rttime_max);
		return REFUSE_RTTIME_OVER_MAX;
	}
	if (d->rttime.verdict != RTTIME_ZERO)
		return 0;
	if (d->rttime.suggest_soft > 0) {
		snprintf(d->msg, sizeof(d->msg), "RLIMIT_RTTIME of pid %d is 0: the kernel would kill it with SIGKILL as "
			 "soon as it runs real-time", (int)a->target);
		snprintf(d->fix, sizeof(d->fix), "raise it: prlimit --pid %d --rttime=%llu:%s (for good: LimitRTTIME= "
			 "in its unit), or ask for policy other", (int)a->target,
			 (unsigned long long)d->rttime.suggest_soft, d->rttime.hard);
	} else {
		snprintf(d->msg, sizeof(d->msg), "RLIMIT_RTTIME of pid %d is 0 (soft and hard): the kernel would kill "
			 "it with SIGKILL as soon as it runs real-time", (int)a->target);
		snprintf(d->fix, sizeof(d->fix), "start it with a higher limit (LimitRTTIME=200ms in its unit), or ask "
			 "for policy other");
	}
	return REFUSE_RTTIME_ZERO;
}

/* The steps of grant_decide() up to the verdict: 0 or the first refusal. */
static int decide_steps(const struct config *c, const struct grant_ask *a, struct grant_decision *d)
{
	const struct grant_request *req = a->req;
	const char *what = req->role[0] ? req->role : "the [daemon] default";
	struct sched_spec *spec = &d->spec;
	bool rt;
	int lo, hi, e;

	if ((e = grant_resolve(c, req, spec)) != 0) {
		snprintf(d->msg, sizeof(d->msg), "no rule '%s' in the configuration", req->role);
		snprintf(d->fix, sizeof(d->fix), "add [rule %s] or use one of the configured roles", req->role);
		return e;
	}
	rt = policy_is_realtime(spec->policy);
	/* rtkit's contract first (its refusal, not the zero one, which comes
	 * last for every path) */
	if (rt && a->rttime_max > 0 && (e = check_rttime(a, d)) != 0 && e != REFUSE_RTTIME_ZERO)
		return e;
	d->msg[0] = d->fix[0] = '\0';
	/* during a cooldown, a caller waiting for the answer is told; what
	 * rtschedd grants on its own is held (see grant_path_cooldown()) */
	if (rt && a->cooldown && grant_path_cooldown(a->path) == GRANT_COOLDOWN_REFUSE) {
		snprintf(d->msg, sizeof(d->msg), "the watchdog demoted a runaway real-time thread%s",
			 a->cooldown_note ? a->cooldown_note : "");
		snprintf(d->fix, sizeof(d->fix), "ask again when the cooldown ends (rtschedctl status: "
			 "watchdog_cooldown_left_s), or ask for policy other");
		return REFUSE_WATCHDOG_COOLDOWN;
	}
	if (policy_priority_range(spec->policy, &lo, &hi) < 0 || spec->priority < lo || spec->priority > hi) {
		snprintf(d->msg, sizeof(d->msg), "priority %d is not valid for %s", spec->priority,
			 policy_to_string(spec->policy));
		snprintf(d->fix, sizeof(d->fix), "use %d..%d", lo, hi);
		return REFUSE_BAD_PRIORITY;
	}
	if (spec->priority > c->max_priority) {
		snprintf(d->msg, sizeof(d->msg), "priority %d (%s) is above max-priority %d in [daemon]", spec->priority,
			 req->has_priority ? "requested" : what, c->max_priority);
		snprintf(d->fix, sizeof(d->fix), "ask for %d or less, or raise max-priority in [daemon] of the "
			 "configuration", c->max_priority);
		return REFUSE_ABOVE_MAX;
	}
	d->cap.asked = spec->priority;
	if (!a->subj->privileged && !a->exempt && (e = check_limits(c, a, d)) != 0)
		return e;
	if (rt && (e = check_rttime(a, d)) != 0)
		return e;
	return 0;
}

int grant_decide(const struct config *c, const struct grant_ask *a, struct grant_decision *d)
{
	int e;

	memset(d, 0, sizeof(*d));
	e = decide_steps(c, a, d);
	d->code = e;
	if (e > 0) {
		d->verdict = GRANT_REFUSE;
	} else if (e < 0) {
		d->verdict = GRANT_FAIL;
	} else {
		d->msg[0] = d->fix[0] = '\0';
		d->verdict = a->cooldown && policy_is_realtime(d->spec.policy) ? GRANT_HOLD : GRANT_ALLOW;
	}
	return e;
}

const char *grant_decision_text(const struct grant_decision *d, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", d->msg, d->msg[0] && d->fix[0] ? "; " : "", d->fix);
	return buf;
}

struct bucket {
	uid_t uid;
	double tokens;
	uint64_t last;
	unsigned long missed;  /* takes refused since the last that was not */
};

struct ratelimit {
	struct bucket *b;
	size_t n, cap;
};

int ratelimit_new(struct ratelimit **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

bool ratelimit_take_counted(struct ratelimit *rl, uid_t uid, uint64_t now, unsigned rate, unsigned burst,
			    unsigned long *missed)
{
	struct bucket *b = NULL;

	if (missed)
		*missed = 0;
	if (rate == 0)
		return true;
	for (size_t i = 0; i < rl->n; i++)
		if (rl->b[i].uid == uid) {
			b = &rl->b[i];
			break;
		}
	if (!b && rl->n == rl->cap) {
		/* a bucket full again is what a new one would be: let those go
		 * before growing (or every uid ever seen, 65,536 subordinate ones
		 * included, would stay, and be looked through at every take) */
		size_t k = 0;
		for (size_t i = 0; i < rl->n; i++) {
			const struct bucket *o = &rl->b[i];
			if (o->missed || o->tokens + (double)(now - o->last) * rate / 1e6 < burst)
				rl->b[k++] = *o;
		}
		rl->n = k;
	}
	if (!b) {
		if (rl->n == rl->cap) {
			size_t cap = rl->cap ? rl->cap * 2 : 16;
			struct bucket *nb = realloc(rl->b, cap * sizeof(*nb));
			if (!nb)
				return false;
			rl->b = nb;
			rl->cap = cap;
		}
		b = &rl->b[rl->n++];
		*b = (struct bucket){ .uid = uid, .tokens = burst, .last = now };
	}
	b->tokens += (double)(now - b->last) * rate / 1e6;
	if (b->tokens > burst)
		b->tokens = burst;
	b->last = now;
	if (b->tokens < 1.0) {
		b->missed++;
		return false;
	}
	b->tokens -= 1.0;
	if (missed)
		*missed = b->missed;
	b->missed = 0;
	return true;
}

bool ratelimit_take(struct ratelimit *rl, uid_t uid, uint64_t now, unsigned rate, unsigned burst)
{
	return ratelimit_take_counted(rl, uid, now, rate, burst, NULL);
}

void ratelimit_charge(struct ratelimit *rl, uid_t uid, uint64_t now, unsigned rate, unsigned burst, unsigned n)
{
	if (rate == 0)
		return;
	for (size_t i = 0; i < rl->n; i++)
		if (rl->b[i].uid == uid) {
			struct bucket *b = &rl->b[i];

			b->tokens += (double)(now - b->last) * rate / 1e6;
			if (b->tokens > burst)
				b->tokens = burst;
			b->last = now;
			b->tokens -= n;
			return;
		}
}

uint64_t ratelimit_wait(const struct ratelimit *rl, uid_t uid, uint64_t now, unsigned rate)
{
	if (rate == 0)
		return 0;
	for (size_t i = 0; i < rl->n; i++)
		if (rl->b[i].uid == uid) {
			const struct bucket *b = &rl->b[i];
			double have = b->tokens + (double)(now - b->last) * rate / 1e6;
			/* rounded up: at that time the token is there */
			return have >= 1.0 ? 0 : (uint64_t)((1.0 - have) * 1e6 / rate) + 1;
		}
	return 0;
}

size_t ratelimit_buckets(const struct ratelimit *rl)
{
	return rl->n;
}

void ratelimit_free(struct ratelimit *rl)
{
	if (!rl)
		return;
	free(rl->b);
	free(rl);
}
