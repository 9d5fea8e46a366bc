/* grant.h: who may have what. Resolves a request (a role plus optional
 * explicit settings) against the configuration into a sched_spec, checks it
 * against the requesting user's limits ([user]/[group] sections), and keeps
 * the per-uid token buckets that stop floods. Every refusal names the rule
 * that refused it. */
#ifndef RTSCHED_GRANT_H
#define RTSCHED_GRANT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "daemon/config/config.h"
#include "daemon/core/refusal.h"
#include "daemon/sys/proc.h"

/* What a registration asked for; kept so a reload can resolve it again. */
struct grant_request {
	char role[CONFIG_NAME_MAX];   /* "" = the [daemon] default */
	bool has_policy, has_priority, has_nice, has_cpus;
	int policy, priority, nice;
	cpu_set_t cpus;
};

/* Who asks: a client (SO_PEERCRED, the bus), or the owner of a thread a
 * rule matched, with its user and groups looked up. */
struct grant_subject {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	/* Whose limits, quota, rate bucket and connection slots these are: uid
	 * itself, or for a uid without a passwd entry that lies in a user's
	 * /etc/subuid range, that user (subid.h): a user's subordinate uids
	 * are limited together with it, never each on its own. */
	uid_t account;
	bool subordinate;             /* account is the owner of uid's subordinate range */
	bool privileged;              /* root or a member of admin-group (never a subordinate uid) */
	bool has_nice_floor;          /* the front end has a nice floor of its own ([rtkit] min-nice-level) */
	int nice_floor;
	char user[CONFIG_NAME_MAX];   /* the account's name, "" if it has none */
};

/* A user's effective limits, with where each came from. */
struct grant_limits {
	int max_priority;
	unsigned policies;
	int max_threads;
	bool has_cpus;
	cpu_set_t cpus;
	int min_nice;
	char nice_from[CONFIG_NAME_MAX + 16];
	char prio_from[CONFIG_NAME_MAX + 16];
	char policies_from[CONFIG_NAME_MAX + 16];
	char threads_from[CONFIG_NAME_MAX + 16];
	char cpus_from[CONFIG_NAME_MAX + 16];
	/* sections left out because they ask for a session the user has not
	 * ("[user *] (session = active)"), for the refusal's message */
	char skipped[160];
};

/* Whether the task runs as uid, both its real and its effective uid. The
 * kernel's own rule (check_same_owner of sched_setattr) accepts either; a
 * setuid program keeps its caller's real uid, so rtschedd, like rtkit
 * (which reads the owner of /proc/PID, root's for a setuid program), asks
 * for both. An unprivileged subject must pass it for every thread it names,
 * whatever process it speaks from. */
bool grant_owns(uid_t uid, const struct proc_status *target);
/* Fill a subject for uid/gid/pid (gid (gid_t)-1: the user's primary group
 * from its passwd entry); privileged for root and admin-group members. */
int grant_subject_init(struct grant_subject *s, const struct config *c, uid_t uid, gid_t gid, pid_t pid);
/* The account of uid (see struct grant_subject), without the rest. */
uid_t grant_account(uid_t uid);
/* Limits of a non-privileged subject: [user NAME] or else [user *], widened
 * by every [group NAME] the user is in (per key, the most generous); a
 * section with session = active counts only while the user has an active
 * session on a local seat (session.h). */
void grant_limits_get(const struct config *c, const struct grant_subject *s, struct grant_limits *l);
/* Resolve a request to a spec: 0, or REFUSE_UNKNOWN_ROLE (with msg) if the
 * role is gone. */
int grant_resolve(const struct config *c, const struct grant_request *req, struct sched_spec *out,
		  char *msg, size_t len);
/* The real-time ceiling of a non-privileged grant and where it came from
 * (rtprio-cap): the config alone, what limits.conf grants the user, or the
 * target process's own RLIMIT_RTPRIO. */
struct grant_cap {
	bool applies;       /* false: rtprio-cap = config, or a privileged client */
	long cap;           /* -1: unlimited */
	char from[640];
	bool clamped;
	int asked;          /* the priority before clamping */
};

/* Check a resolved spec against a subject's limits: 0 if allowed, else a
 * refusal (enum refusal) with msg naming the limit and where it is set, or
 * -errno (with msg) if the rtprio cap could not be read. `held` is how
 * many threads the subject's account already holds (registry_count_owner()),
 * `adding` how many more it asks for;
 * `target` is the process whose RLIMIT_RTPRIO counts for rtprio-cap = rlimit.
 * With over-cap = clamp, spec->priority may be lowered (said in *cap). */
int grant_check(const struct config *c, const struct grant_subject *s, const struct grant_request *req,
		struct sched_spec *spec, pid_t target, size_t held, size_t adding, struct grant_cap *cap,
		char *msg, size_t len);

/* Per-uid token buckets. */
struct ratelimit;
int ratelimit_new(struct ratelimit **ret);
/* Take one token for uid at time now_usec; false if the bucket is empty. */
bool ratelimit_take(struct ratelimit *rl, uid_t uid, uint64_t now_usec, unsigned rate, unsigned burst);
void ratelimit_free(struct ratelimit *rl);

#endif
