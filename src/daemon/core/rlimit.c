/* rlimit.c: a rule's grant of RLIMIT_RTPRIO and RLIMIT_RTTIME (see rlimit.h). */
#include "autoconfig.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "daemon/sys/caps.h"
#include "daemon/sys/log.h"
#include "daemon/sys/proc.h"
#include "daemon/core/rlimit.h"

/* The fix of rlimit-grant-no-cap and of its log line. */
#define RLIMIT_FIX                                                                                           \
	"run 'systemctl edit rtschedd.service', add under [Service] 'AmbientCapabilities=CAP_SYS_RESOURCE' and " \
	"'CapabilityBoundingSet=CAP_SYS_RESOURCE' (they add to the unit's own lists) and restart rtschedd; or "  \
	"start the program with 'rtschedctl run', which needs no raised limit and has no race"

bool rlimit_capable(void)
{
	return caps_effective(CAP_SYS_RESOURCE);
}

static rlim_t at_least(rlim_t cur, rlim_t want)
{
	return cur >= want ? cur : want; /* RLIM_INFINITY is the largest rlim_t */
}

/* prlimit(2) of one resource; -errno. */
static int set_limit(pid_t pid, int resource, rlim_t soft, rlim_t hard)
{
	struct rlimit rl = { .rlim_cur = soft, .rlim_max = hard };

	return prlimit(pid, resource, &rl, NULL) < 0 ? -errno : 0;
}

/* Does the pinned process run as owner, real and effective uid alike?
 * -EACCES if its real uid differs (a set-user-ID program: the limit would
 * outlive its drop back to whoever started it, and be theirs), -ESRCH if
 * it no longer runs as owner or is gone. */
static int runs_as(const struct proc_pin *pin, uid_t owner)
{
	struct proc_status ps;
	int r;

	if ((r = proc_pin_read_status(pin, &ps)) < 0)
		return r;
	if (ps.euid != owner)
		return -ESRCH;
	return ps.uid == owner ? 0 : -EACCES;
}

int rlimit_grant(pid_t pid, uid_t owner, int prio, int rttime_us, struct rlimit_change *ch)
{
	struct proc_pin pin = PROC_PIN_NONE;
	struct proc_rlimits before, after;
	uid_t who;
	int r;

	memset(ch, 0, sizeof(*ch));
	if (prio < 1)
		return -EINVAL;
	if ((r = proc_pin_open(&pin, pid)) < 0)
		return r;
	if ((r = proc_pin_read_limits(&pin, pid, &before, &who, NULL)) < 0)
		goto out;
	if (who != owner) {
		r = -ESRCH;
		goto out;
	}
	if ((r = runs_as(&pin, owner)) < 0)
		goto out;
	ch->rtprio_soft = before.rtprio_soft;
	ch->rtprio_hard = before.rtprio_hard;
	ch->rttime_soft = before.rttime_soft;
	ch->rttime_hard = before.rttime_hard;
	/* the hard limit first, in the same call: soft never passes hard */
	ch->rtprio_hard_new = at_least(before.rtprio_hard, (rlim_t)prio);
	ch->rtprio_soft_new = at_least(before.rtprio_soft, (rlim_t)prio);
	ch->rttime_soft_new = before.rttime_soft;
	ch->rttime_hard_new = before.rttime_hard;
	if (rttime_us >= 0) {
		ch->rttime_hard_new = at_least(before.rttime_hard, (rlim_t)rttime_us);
		ch->rttime_soft_new = at_least(before.rttime_soft, (rlim_t)rttime_us);
	}
	if (ch->rtprio_soft_new != before.rtprio_soft || ch->rtprio_hard_new != before.rtprio_hard) {
		if ((r = set_limit(pid, RLIMIT_RTPRIO, ch->rtprio_soft_new, ch->rtprio_hard_new)) < 0)
			goto out;
		ch->raised = true;
	}
	if (ch->rttime_soft_new != before.rttime_soft || ch->rttime_hard_new != before.rttime_hard) {
		if ((r = set_limit(pid, RLIMIT_RTTIME, ch->rttime_soft_new, ch->rttime_hard_new)) < 0)
			goto undo;
		ch->raised = true;
	}
	/* still the same process (the pin is alive, so the pid named it all
	 * along) and still owner's: else what was raised goes back */
	if ((r = proc_pin_read_limits(&pin, pid, &after, &who, NULL)) < 0)
		goto out;
	if (who == owner && (r = runs_as(&pin, owner)) == 0)
		goto out;
	if (who != owner)
		r = -ESRCH;
undo:
	set_limit(pid, RLIMIT_RTPRIO, before.rtprio_soft, before.rtprio_hard);
	set_limit(pid, RLIMIT_RTTIME, before.rttime_soft, before.rttime_hard);
	ch->raised = false;
out:
	proc_pin_close(&pin);
	return r;
}

/* A limit as prlimit(1) writes it. */
static const char *lim(rlim_t v, char *buf, size_t len)
{
	if (v == RLIM_INFINITY)
		return "unlimited";
	snprintf(buf, len, "%llu", (unsigned long long)v);
	return buf;
}

void rlimit_change_text(const struct rlimit_change *ch, char *buf, size_t len)
{
	char a[24], b[24], c[24], d[24];
	int n;

	n = snprintf(buf, len, "RLIMIT_RTPRIO %s:%s -> %s:%s", lim(ch->rtprio_soft, a, sizeof(a)),
		     lim(ch->rtprio_hard, b, sizeof(b)), lim(ch->rtprio_soft_new, c, sizeof(c)),
		     lim(ch->rtprio_hard_new, d, sizeof(d)));
	if (n < 0 || (size_t)n >= len ||
	    (ch->rttime_soft == ch->rttime_soft_new && ch->rttime_hard == ch->rttime_hard_new))
		return;
	snprintf(buf + n, len - (size_t)n, ", RLIMIT_RTTIME %s:%s -> %s:%s us", lim(ch->rttime_soft, a, sizeof(a)),
		 lim(ch->rttime_hard, b, sizeof(b)), lim(ch->rttime_soft_new, c, sizeof(c)),
		 lim(ch->rttime_hard_new, d, sizeof(d)));
}

/* "[rule a], [rule b]" of the rules with grant-rlimit = yes, cut to len. */
static void rule_names(const struct config *c, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < c->n_rules && used < len; i++) {
		if (!c->rules[i].grant_rlimit)
			continue;
		int n = snprintf(buf + used, len - used, "%s[rule %s]", used ? ", " : "", c->rules[i].name);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

int rlimit_check_add(struct diag_report *rep, const struct config *c, bool capable, bool daemon)
{
	char names[256], msg[DIAG_TEXT_MAX];

	if (!c->n_rlimit_rules)
		return 0;
	rule_names(c, names, sizeof(names));
	if (capable) {
		snprintf(msg, sizeof(msg), "%s raise%s RLIMIT_RTPRIO of the processes %s at exec (grant-rlimit = yes), "
			 "and %s holds CAP_SYS_RESOURCE; a program's own call made before that still fails: "
			 "rtschedctl run has no such race", names, c->n_rlimit_rules == 1 ? "s" : "",
			 c->n_rlimit_rules == 1 ? "it matches" : "they match",
			 daemon ? "the running rtschedd" : "this process");
		return diag_report_add(rep, "rlimit-grant", DIAG_OK, msg, NULL);
	}
	snprintf(msg, sizeof(msg), "%s ha%s grant-rlimit = yes, but %s has no CAP_SYS_RESOURCE: no process's "
		 "RLIMIT_RTPRIO is raised (the rule%s still set%s scheduling)", names,
		 c->n_rlimit_rules == 1 ? "s" : "ve", daemon ? "the running rtschedd" : "this process",
		 c->n_rlimit_rules == 1 ? "" : "s", c->n_rlimit_rules == 1 ? "s" : "");
	return diag_report_add(rep, "rlimit-grant-no-cap", DIAG_ERROR, msg, RLIMIT_FIX);
}

void rlimit_warn_incapable(const struct config *c)
{
	char names[256];

	if (!c->n_rlimit_rules || rlimit_capable())
		return;
	rule_names(c, names, sizeof(names));
	log_warnx("%s: grant-rlimit = yes, but rtschedd has no CAP_SYS_RESOURCE: no RLIMIT_RTPRIO is raised "
		  "(rlimit-grant-no-cap); fix: %s", names, RLIMIT_FIX);
}
