/*
 * limits.h - answers "what would pam_limits set for this user and item?"
 *
 * A reader of /etc/security/limits.conf and the *.conf files in
 * /etc/security/limits.d that follows pam_limits as shipped in Debian 12 (Linux-PAM 1.5.2 with
 * Debian's patches) line for line, so the daemon can explain why a login
 * session has the RLIMIT_RTPRIO it has.  The rules it copies are listed at
 * the top of limits.c.
 *
 * Functions return 0 or a negative errno; they never print and never exit.
 */
#ifndef RTSCHEDD_LIMITS_H
#define RTSCHEDD_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define LIMITS_UNSET (-2L)      /* no line matched */
#define LIMITS_UNLIMITED (-1L)  /* RLIM_INFINITY */

/*
 * One resolved value and the line it came from.  The value is in the
 * rlimit's own unit, as pam_limits hands it to setrlimit(): cpu in seconds
 * (the file says minutes), data/stack/core/rss/memlock/as/fsize in bytes
 * (the file says KiB), nice as 20 - n.  A "nofile" of unlimited reads as
 * /proc/sys/fs/nr_open, as pam_limits does.
 */
struct limits_entry {
	long value;             /* LIMITS_UNSET, LIMITS_UNLIMITED or >= 0 */
	char file[256];         /* empty when unset */
	unsigned line;          /* 1-based; 0 when unset */
};

struct limits_answer {
	struct limits_entry soft, hard;
	/*
	 * A two-field "<domain> -" line matched: pam_limits stops reading and
	 * sets no limit at all, so the session keeps what it inherited.  soft
	 * and hard are then LIMITS_UNSET.
	 */
	bool exempt;
	char exempt_file[256];
	unsigned exempt_line;
};

/* The user as pam_limits sees it; groups is the getgrouplist() result. */
struct limits_who {
	const char *user;
	uid_t uid;
	gid_t gid;              /* primary group */
	const gid_t *groups;    /* may include gid; may be NULL if ngroups is 0 */
	size_t ngroups;
};

/* Called once per line pam_limits would reject or ignore with a log line. */
typedef void limits_warn_fn(void *userdata, const char *file, unsigned line,
			    const char *msg);

/*
 * Look up item ("rtprio", "nofile", ...) for who.  conf_path is read first,
 * then the *.conf files in dir_path in C order; pass NULL to leave either out.  Returns
 * 0, -EINVAL for an item pam_limits 1.5.2 cannot set (it has no "rttime"),
 * or the -errno of a file that cannot be opened: pam_limits then fails the
 * whole session, so that is an answer too.
 */
int limits_lookup(const char *conf_path, const char *dir_path,
		  const char *item, const struct limits_who *who,
		  struct limits_answer *out);

/* limits_lookup() that also reports each bad or ignored line to warn. */
int limits_lookup_warn(const char *conf_path, const char *dir_path,
		       const char *item, const struct limits_who *who,
		       limits_warn_fn *warn, void *userdata,
		       struct limits_answer *out);

/* Fill who from the user database; -ENOENT if there is no such user. */
int limits_who_from_user(const char *user, struct limits_who *who);

/* Free what limits_who_from_user() allocated; who may be zeroed. */
void limits_who_free(struct limits_who *who);

#endif
