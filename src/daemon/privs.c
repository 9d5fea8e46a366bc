/* privs.c: capability checks and dropping (see privs.h). */
#include "autoconfig.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "daemon/sys/caps.h"
#include "daemon/sys/log.h"
#include "daemon/sys/policy.h"
#include "daemon/privs.h"

bool privs_check_nice(const struct config *c)
{
	struct rlimit rl;
	struct passwd *pw = getpwuid(geteuid());
	const char *user = pw ? pw->pw_name : "USER";
	int prio = c->dflt.priority;

	if (caps_effective(CAP_SYS_NICE))
		return true;
	getrlimit(RLIMIT_RTPRIO, &rl);
	log_warnx("rtschedd has no CAP_SYS_NICE: it can only change threads of its own user (%s), and only "
		  "up to each thread's soft RLIMIT_RTPRIO (its own is %ld)", user,
		  rl.rlim_cur == RLIM_INFINITY ? -1L : (long)rl.rlim_cur);
	if (!policy_is_realtime(c->dflt.policy))
		return false;
	if (getenv("INVOCATION_ID"))
		log_warnx("fix: run 'systemctl edit rtschedd.service' and add under [Service]: "
			  "AmbientCapabilities=CAP_SYS_NICE (or, for threads of its own user only, LimitRTPRIO=%d)", prio);
	else
		log_warnx("fix: run rtschedd as root, or add the line '%s - rtprio %d' to "
			  "/etc/security/limits.d/rtschedd.conf and start it from a new login session", user, prio);
	return false;
}

/* Does the configuration set IRQ CPUs (writes under /proc/irq)? */
static bool irq_writes(const struct config *c)
{
	if (c->irq_avoid.mode != IRQ_AVOID_OFF)
		return true;
	for (size_t i = 0; i < c->n_irqs; i++)
		if (c->irqs[i].has_cpus)
			return true;
	return false;
}

/* Does a rule or probe have isolate = yes? */
static bool isolates(const struct config *c)
{
	for (size_t i = 0; i < c->n_rules; i++)
		if (c->rules[i].quiet.isolate)
			return true;
	for (size_t i = 0; i < c->n_probes; i++)
		if (c->probes[i].quiet.isolate)
			return true;
	return false;
}

/* The capabilities the configuration needs, each for a reason. */
static int wanted(const struct config *c, bool subscribed, bool switching, cap_value_t *v)
{
	int n = 0;

	v[n++] = CAP_SYS_NICE;          /* sched_setattr/sched_setaffinity on other users' threads */
	/* CAP_NET_ADMIN (the connector before Linux 6.6) is only needed to
	 * subscribe, which is done before this; it is never tried again */
	if (c->n_rlimit_rules)
		v[n++] = CAP_SYS_RESOURCE; /* prlimit(2) of another user's process, for grant-rlimit rules */
	if (c->match_needs & MATCH_NEED_EXE)
		v[n++] = CAP_SYS_PTRACE; /* readlink /proc/PID/exe of other users' processes, for exe = rules */
	/* /proc/irq/N/smp_affinity_list is root's, mode 0644: a non-root
	 * rtschedd writes it for [irq] cpus = and irq-avoid-cpus only with this */
	if ((irq_writes(c) && (geteuid() != 0 || switching)) ||
	    /* isolate = yes makes and removes its housekeeping group in the v1
	     * cpuset hierarchy's root directory, mode 0555 even for root (and
	     * moves IRQs as irq-avoid-cpus does) */
	    isolates(c))
		v[n++] = CAP_DAC_OVERRIDE;
	if (switching) {
		v[n++] = CAP_SETUID;    /* only until the switch to `user =` */
		v[n++] = CAP_SETGID;
		v[n++] = CAP_SETPCAP;
	}
	return n;
}

/* Set effective+permitted to exactly the wanted ones we have now. */
static int set_proc(const cap_value_t *v, int n)
{
	cap_t have = cap_get_proc(), c = cap_init();
	int r = 0;

	if (!have || !c) {
		r = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		cap_flag_value_t p = CAP_CLEAR;
		cap_get_flag(have, v[i], CAP_PERMITTED, &p);
		if (p == CAP_SET) {
			cap_set_flag(c, CAP_PERMITTED, 1, &v[i], CAP_SET);
			cap_set_flag(c, CAP_EFFECTIVE, 1, &v[i], CAP_SET);
		}
	}
	if (cap_set_proc(c) < 0)
		r = -errno;
out:
	cap_free(have);
	cap_free(c);
	return r;
}

/* Drop from the bounding set every capability but keep[0..n) (needs
 * CAP_SETPCAP in the effective set; without it nothing can be dropped and
 * nothing is, which only an unprivileged daemon sees). */
static void bound_keep_only(const cap_value_t *keep, int n)
{
	for (cap_value_t cap = 0; cap <= CAP_LAST_CAP && cap_get_bound(cap) >= 0; cap++) {
		bool k = false;
		for (int i = 0; i < n; i++)
			k |= keep[i] == cap;
		if (!k && cap_get_bound(cap) == 1 && cap_drop_bound(cap) < 0 && errno != EPERM)
			log_warn("cannot drop capability %d from the bounding set", (int)cap);
	}
}

int privs_drop(const struct config *c, bool subscribed)
{
	cap_value_t keep[9];
	struct passwd *pw = NULL;
	int n, r;

	if (c->run_user[0] && !(pw = getpwnam(c->run_user))) {
		log_err("user = %s: no such user", c->run_user);
		return -ENOENT;
	}
	bool switching = pw && pw->pw_uid != geteuid();
	n = wanted(c, subscribed, switching, keep);
	/* the bounding set first: it needs CAP_SETPCAP, which goes next */
	bound_keep_only(keep, n);
	cap_reset_ambient();
	if ((r = set_proc(keep, n)) < 0)
		return r;
	if (switching) {
		/* libcap keeps the permitted set across the uid change */
		if (cap_setgroups(pw->pw_gid, 0, NULL) < 0 || cap_setuid(pw->pw_uid) < 0) {
			r = -errno;
			log_errno(LOG_LEVEL_ERR, r, "cannot switch to user %s", c->run_user);
			return r;
		}
		/* the means of switching leave the bounding set too, while
		 * CAP_SETPCAP (still permitted) is effective to allow it */
		if ((r = set_proc(keep, n)) < 0)
			return r;
		n = wanted(c, subscribed, false, keep);
		bound_keep_only(keep, n);
		if ((r = set_proc(keep, n)) < 0)
			return r;
		log_info("running as user %s", c->run_user);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	char *text = privs_describe();
	log_info("capabilities: %s", text ? text : "?");
	free(text);
	return 0;
}

char *privs_describe(void)
{
	cap_t c = cap_get_proc();
	char *t, *dup;

	if (!c)
		return NULL;
	t = cap_to_text(c, NULL);
	cap_free(c);
	if (!t)
		return NULL;
	dup = strdup(t[0] ? t : "(none)");
	cap_free(t);
	return dup;
}
