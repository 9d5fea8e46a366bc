/* accounts.h: what a uid resolves to (user name, primary group,
 * supplementary groups) and what a group name resolves to, looked up once
 * in NSS and kept in a small bounded cache. With sssd or LDAP a passwd or
 * group lookup can stall for as long as the directory takes; the grant path
 * runs on the event loop and asks for the same few users again and again.
 *
 * Bounds: ACCOUNTS_UIDS uids and ACCOUNTS_GROUPS group names, least
 * recently used evicted first; uids without a passwd entry are kept too
 * (negative entries), so a client cycling through its subordinate uids
 * costs at most one passwd lookup per request and never more memory. An
 * entry is trusted for ACCOUNTS_MAX_AGE_USEC, so a user added to a group is
 * seen within that time without a reload; accounts_flush() (called on
 * every reload) forgets everything at once. Event-loop thread only. */
#ifndef RTSCHED_ACCOUNTS_H
#define RTSCHED_ACCOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ACCOUNTS_UIDS 256
#define ACCOUNTS_GROUPS 64
#define ACCOUNTS_MAX_AGE_USEC (60ull * 1000000ull)
#define ACCOUNTS_NAME_MAX 256     /* LOGIN_NAME_MAX; a longer name is looked up, never kept */

/* A uid's passwd entry, copied out of the cache. */
struct account {
	uid_t uid;
	gid_t gid;                     /* primary group */
	char name[ACCOUNTS_NAME_MAX];
};

/* Where lookups go: NSS by default; unit tests put their own in. Each
 * returns 0, -ENOENT if there is no such entry, or -errno. */
struct accounts_source {
	int (*by_uid)(uid_t uid, struct account *out);
	int (*by_name)(const char *name, struct account *out);
	/* uid's groups (primary first) in a malloc'ed array */
	int (*groups)(const struct account *a, gid_t **groups, size_t *n);
	int (*group_gid)(const char *name, gid_t *gid);
	uint64_t (*now_usec)(void);    /* a monotonic clock */
};

/* What the cache did, for tests and `status`. */
struct accounts_stats {
	uint64_t hits, misses, lookups, evictions, flushes;
};

/* uid's passwd entry in *out: 0, -ENOENT if it has none, or -errno. */
int accounts_by_uid(uid_t uid, struct account *out);
/* name's passwd entry in *out: 0, -ENOENT if there is none, or -errno. */
int accounts_by_name(const char *name, struct account *out);
/* Whether uid (with primary group gid, which may differ from its passwd
 * entry's) is in group gid by its primary or a supplementary group: 1, 0,
 * or -errno (-ENOENT: uid has no passwd entry). */
int accounts_in_group(uid_t uid, gid_t gid);
/* uid's groups (primary first), copied into a malloc'ed *groups: 0 or -errno. */
int accounts_groups(uid_t uid, gid_t **groups, size_t *n);
/* A group's gid by name: 0, -ENOENT if there is none, or -errno. */
int accounts_group_gid(const char *name, gid_t *gid);
/* Forget every entry (a reload: users and groups may have changed). */
void accounts_flush(void);
/* Look up in src from now on (NULL: NSS again); flushes. For unit tests. */
void accounts_source_set(const struct accounts_source *src);
void accounts_stats_get(struct accounts_stats *out);
/* Free the cache's memory (at exit). */
void accounts_finish(void);

#endif
