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
#include "daemon/sys/rttime.h"

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
	/* admin-group's gid as this look-up found it ((gid_t)-1: none): for a
	 * uid that is not privileged, the one peer gid that would make it so */
	gid_t admin_gid;
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
 * from its passwd entry); privileged for root and admin-group members. A
 * uid without a passwd entry is a subject too (no name: [user *] holds). */
void grant_subject_init(struct grant_subject *s, const struct config *c, uid_t uid, gid_t gid, pid_t pid);
/* The account of uid (see struct grant_subject), without the rest. */
uid_t grant_account(uid_t uid);
/* Limits of a non-privileged subject: [user NAME] or else [user *], widened
 * by every [group NAME] the user is in (per key, the most generous); a
 * section with session = active counts only while the user has an active
 * session on a local seat (session.h). */
void grant_limits_get(const struct config *c, const struct grant_subject *s, struct grant_limits *l);
/* Resolve a request to a spec: 0, or REFUSE_UNKNOWN_ROLE if the role is
 * gone (grant_decide() says so with the fix). */
int grant_resolve(const struct config *c, const struct grant_request *req, struct sched_spec *out);
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

/* Who asks for a grant. Every path decides through grant_decide(); the
 * path says only what the watchdog's cooldown does (grant_path_cooldown(),
 * doc/architecture.md "The grant decision"). */
enum grant_path {
	GRANT_PATH_NONE = 0,
	GRANT_PATH_REGISTER,   /* the control socket's register (rtschedctl, librtsched, `run`'s preload) */
	GRANT_PATH_RTKIT,      /* MakeThreadRealtime*, MakeThreadHighPriority* on the bus */
	GRANT_PATH_CAUGHT,     /* a refused sched_* call the BPF catcher saw */
	GRANT_PATH_RULE,       /* a [rule] matched a thread by its name */
	GRANT_PATH_PROCESS,    /* a new thread of a registered process */
	GRANT_PATH_REAPPLY,    /* reload: a managed thread against the new configuration */
	GRANT_PATH_ADOPT,      /* restart: an entry of the previous daemon's state journal */
	GRANT_PATH_CHECK,      /* check: what a register would meet, decided without effect */
	GRANT_PATH__MAX
};

/* What a cooldown does to a real-time grant on a path: a caller waiting
 * for the answer is refused (and told when to ask again); a grant rtschedd
 * makes on its own is held (SCHED_OTHER now, the grant when it ends). */
enum grant_cooldown {
	GRANT_COOLDOWN_REFUSE = 1,
	GRANT_COOLDOWN_HOLD,
};
enum grant_cooldown grant_path_cooldown(enum grant_path p);
/* "register", "rtkit", ... (the path's name in logs and tests). */
const char *grant_path_name(enum grant_path p);

/* One request for a grant: who, what, for which process, and the facts of
 * the moment the decision needs (registry_ask() fills held and cooldown). */
struct grant_ask {
	enum grant_path path;
	const struct grant_subject *subj;
	const struct grant_request *req;
	pid_t target;                       /* the process whose RLIMIT_RTPRIO and RLIMIT_RTTIME count */
	const struct proc_rlimits *limits;  /* the target's rlimits if just read; NULL: read when needed */
	size_t held;                        /* threads the subject's account holds */
	size_t adding;                      /* threads this grant adds to them (0: none; no quota check) */
	bool exempt;                        /* a [rule] naming the user or group: no [user] limits, no quota */
	bool cooldown;                      /* the watchdog's cooldown holds the subject back (registry_held()) */
	const char *cooldown_note;          /* the refusal's detail, after "...thread" (NULL: none) */
	long rttime_max;                    /* > 0: rtkit's contract, the hard RLIMIT_RTTIME at most this */
};

enum grant_verdict {
	GRANT_UNDECIDED = 0,  /* a zeroed decision: nothing was decided */
	GRANT_ALLOW,          /* apply spec */
	GRANT_HOLD,           /* allowed, held by the cooldown: SCHED_OTHER now, spec when it ends */
	GRANT_REFUSE,         /* code is the refusal (enum refusal) */
	GRANT_FAIL,           /* code is -errno: nothing could be decided */
};

/* What grant_decide() decided. msg says what and why, fix what to do;
 * both "" when allowed, except a note on an allowed grant (a clamp). */
struct grant_decision {
	enum grant_verdict verdict;
	int code;                      /* REFUSE: enum refusal; FAIL: -errno; else 0 */
	struct sched_spec spec;        /* ALLOW, HOLD: what the grant is */
	struct grant_cap cap;          /* the rtprio-cap that applied */
	struct rttime_judgement rttime; /* the target's RLIMIT_RTTIME, if it was judged */
	char msg[1536];
	char fix[768];
};

/* The one grant decision: the role resolved, rtkit's RLIMIT_RTTIME
 * contract, the watchdog's cooldown, the priority's range and [daemon]
 * max-priority, the subject's [user]/[group] limits (policies, min-nice
 * and the front end's nice floor, max-priority, cpus, rtprio-cap, the
 * quota), and a zero RLIMIT_RTTIME, in that order; the first refusal wins.
 * It changes nothing: `check` calls it as a register would. Returns
 * d->code: 0 (ALLOW, HOLD), a refusal, or -errno (FAIL). */
int grant_decide(const struct config *c, const struct grant_ask *a, struct grant_decision *d);
/* The decision's msg and fix as one line, "msg; fix" (the wire's ERR text
 * and the log's). */
const char *grant_decision_text(const struct grant_decision *d, char *buf, size_t len);

/* Per-uid token buckets. */
struct ratelimit;
int ratelimit_new(struct ratelimit **ret);
/* Take one token for uid at time now_usec; false if the bucket is empty. */
bool ratelimit_take(struct ratelimit *rl, uid_t uid, uint64_t now_usec, unsigned rate, unsigned burst);
/* The same, counting what it refuses: when it takes a token, *missed is how
 * many takes for uid it refused since the last one it allowed. */
bool ratelimit_take_counted(struct ratelimit *rl, uid_t uid, uint64_t now_usec, unsigned rate, unsigned burst,
			    unsigned long *missed);
/* Take n more tokens from uid's bucket, after the one a request took for
 * what turned out to be n tokens' work: the bucket may go below empty, and
 * uid's next take waits until it is paid back. Nothing if uid has no bucket
 * or rate is 0. */
void ratelimit_charge(struct ratelimit *rl, uid_t uid, uint64_t now_usec, unsigned rate, unsigned burst,
		      unsigned n);
/* Microseconds from now_usec until uid's bucket holds a token again (0: it
 * does, or uid has none yet, or rate is 0). */
uint64_t ratelimit_wait(const struct ratelimit *rl, uid_t uid, uint64_t now_usec, unsigned rate);
/* The buckets it keeps: one per uid seen, until it is full again and the
 * table needs room. */
size_t ratelimit_buckets(const struct ratelimit *rl);
void ratelimit_free(struct ratelimit *rl);

#endif
