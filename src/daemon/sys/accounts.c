/* accounts.c: NSS lookups of users and groups behind a bounded cache (see accounts.h). */
#include "autoconfig.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/sys/accounts.h"
#include "daemon/sys/clock.h"

#define GROUPS_MAX 65536 /* NGROUPS_MAX of the kernel */

struct uid_entry {
	bool used;
	int r;                  /* 0, or -ENOENT: no passwd entry (negative) */
	struct account a;
	bool has_groups;        /* groups looked up (lazily: only [group] checks need them) */
	gid_t *groups;
	size_t ngroups;
	uint64_t stamp;         /* when looked up */
	uint64_t tick;          /* when last used, for the LRU */
};

struct group_entry {
	bool used;
	int r;
	char name[ACCOUNTS_NAME_MAX];
	gid_t gid;
	uint64_t stamp, tick;
};

static struct uid_entry uids[ACCOUNTS_UIDS];
static struct group_entry grps[ACCOUNTS_GROUPS];
static uint64_t ticks;
static struct accounts_stats stats;

/* Copy a passwd entry out: -ENAMETOOLONG if its name does not fit. */
static int pw_copy(const struct passwd *pw, struct account *out)
{
	size_t n = strlen(pw->pw_name);

	if (n >= sizeof(out->name))
		return -ENAMETOOLONG;
	memcpy(out->name, pw->pw_name, n + 1);
	out->uid = pw->pw_uid;
	out->gid = pw->pw_gid;
	return 0;
}

/* getgrnam_r (gid set), getpwnam_r (name set) or getpwuid_r, with a
 * buffer grown on ERANGE: 0, -ENOENT or -errno. */
static int nss_get(const char *name, uid_t uid, struct account *out, gid_t *gid)
{
	struct passwd pw, *pres = NULL;
	struct group gr, *gres = NULL;
	char *buf = NULL;
	int r = ENOMEM;

	for (size_t len = 1024; len <= (64u << 20); len *= 2) {
		char *nbuf = realloc(buf, len);
		if (!nbuf)
			break;
		buf = nbuf;
		r = gid ? getgrnam_r(name, &gr, buf, len, &gres)
			: name ? getpwnam_r(name, &pw, buf, len, &pres) : getpwuid_r(uid, &pw, buf, len, &pres);
		if (r != ERANGE)
			break;
	}
	if (gres)
		*gid = gr.gr_gid;
	r = pres ? pw_copy(pres, out) : gres ? 0 : r ? -r : -ENOENT;
	free(buf);
	return r;
}

static int nss_by_uid(uid_t uid, struct account *out)
{
	return nss_get(NULL, uid, out, NULL);
}

static int nss_by_name(const char *name, struct account *out)
{
	return nss_get(name, 0, out, NULL);
}

/* getgrouplist(), which says the count it needs when the array is short. */
static int nss_groups(const struct account *a, gid_t **groups, size_t *n)
{
	gid_t *g = NULL, *ng;
	int have = 32, want = -1;

	for (int tries = 0; want < 0 && tries < 8 && have <= GROUPS_MAX; tries++) {
		if (!(ng = reallocarray(g, (size_t)have, sizeof(gid_t)))) {
			free(g);
			return -ENOMEM;
		}
		g = ng;
		want = have;
		if (getgrouplist(a->name, a->gid, g, &want) < 0) {
			have = want > have ? want : 2 * have;
			want = -1;
		}
	}
	if (want < 0) {
		free(g);
		return -E2BIG;
	}
	*groups = g;
	*n = (size_t)want;
	return 0;
}

static int nss_group_gid(const char *name, gid_t *gid)
{
	return nss_get(name, 0, NULL, gid);
}

static uint64_t mono_usec(void)
{
	return clock_usec(CLOCK_MONOTONIC);
}

static const struct accounts_source nss = {
	.by_uid = nss_by_uid,
	.by_name = nss_by_name,
	.groups = nss_groups,
	.group_gid = nss_group_gid,
	.now_usec = mono_usec,
};
static const struct accounts_source *src = &nss;

static bool fresh(uint64_t stamp, uint64_t now)
{
	return now - stamp < ACCOUNTS_MAX_AGE_USEC;
}

static void uid_entry_clear(struct uid_entry *e)
{
	free(e->groups);
	memset(e, 0, sizeof(*e));
}

/* The entry to (re)fill for uid: its own, else a free one, else the least
 * recently used (evicted). */
static struct uid_entry *uid_slot(uid_t uid)
{
	struct uid_entry *lru = &uids[0];

	for (size_t i = 0; i < ACCOUNTS_UIDS; i++) {
		if (uids[i].used && uids[i].a.uid == uid)
			return &uids[i];
		if (!uids[i].used)
			lru = &uids[i];
		else if (lru->used && uids[i].tick < lru->tick)
			lru = &uids[i];
	}
	if (lru->used)
		stats.evictions++;
	uid_entry_clear(lru);
	return lru;
}

/* Store a lookup's outcome for uid (0 or -ENOENT; other errors are not kept). */
static struct uid_entry *uid_store(uid_t uid, int r, const struct account *a, uint64_t now)
{
	struct uid_entry *e;

	if (r != 0 && r != -ENOENT)
		return NULL;
	e = uid_slot(uid);
	uid_entry_clear(e);
	e->used = true;
	e->r = r;
	if (r == 0)
		e->a = *a;
	e->a.uid = uid;
	e->stamp = now;
	e->tick = ++ticks;
	return e;
}

/* uid's fresh entry, looked up if need be, with the lookup's outcome in *r
 * (0 or -ENOENT, both kept; any other error is not kept: NULL). */
static struct uid_entry *uid_get(uid_t uid, int *r)
{
	uint64_t now = src->now_usec();
	struct account a;
	struct uid_entry *e;

	for (size_t i = 0; i < ACCOUNTS_UIDS; i++)
		if (uids[i].used && uids[i].a.uid == uid && fresh(uids[i].stamp, now)) {
			stats.hits++;
			uids[i].tick = ++ticks;
			*r = uids[i].r;
			return &uids[i];
		}
	stats.misses++;
	stats.lookups++;
	*r = src->by_uid(uid, &a);
	e = uid_store(uid, *r, &a, now);
	return e;
}

int accounts_by_uid(uid_t uid, struct account *out)
{
	struct uid_entry *e;
	int r;

	e = uid_get(uid, &r);
	if (r == 0)
		*out = e->a;
	return r;
}

int accounts_by_name(const char *name, struct account *out)
{
	uint64_t now = src->now_usec();
	struct account a;
	int r;

	if (!name || !*name)
		return -ENOENT;
	for (size_t i = 0; i < ACCOUNTS_UIDS; i++)
		if (uids[i].used && uids[i].r == 0 && strcmp(uids[i].a.name, name) == 0 &&
		    fresh(uids[i].stamp, now)) {
			stats.hits++;
			uids[i].tick = ++ticks;
			*out = uids[i].a;
			return 0;
		}
	/* a name without an entry is not kept: one lookup per request, as before */
	stats.misses++;
	stats.lookups++;
	if ((r = src->by_name(name, &a)) < 0)
		return r;
	uid_store(a.uid, 0, &a, now);
	*out = a;
	return 0;
}

/* uid's entry with its groups looked up: NULL (with *r) if it has none. */
static struct uid_entry *uid_groups(uid_t uid, int *r)
{
	struct uid_entry *e = uid_get(uid, r);

	if (*r < 0)
		return NULL;
	if (!e->has_groups) {
		stats.lookups++;
		if ((*r = src->groups(&e->a, &e->groups, &e->ngroups)) < 0)
			return NULL;
		e->has_groups = true;
	}
	return e;
}

int accounts_in_group(uid_t uid, gid_t gid)
{
	struct uid_entry *e;
	int r;

	if (!(e = uid_groups(uid, &r)))
		return r;
	for (size_t i = 0; i < e->ngroups; i++)
		if (e->groups[i] == gid)
			return 1;
	return 0;
}

int accounts_groups(uid_t uid, gid_t **groups, size_t *n)
{
	struct uid_entry *e;
	int r;

	if (!(e = uid_groups(uid, &r)))
		return r;
	if (!(*groups = malloc((e->ngroups ? e->ngroups : 1) * sizeof(gid_t))))
		return -ENOMEM;
	memcpy(*groups, e->groups, e->ngroups * sizeof(gid_t));
	*n = e->ngroups;
	return 0;
}

int accounts_group_gid(const char *name, gid_t *gid)
{
	uint64_t now = src->now_usec();
	struct group_entry *lru = &grps[0];
	size_t n = name ? strlen(name) : 0;
	int r;

	if (!n)
		return -ENOENT;
	if (n >= ACCOUNTS_NAME_MAX) {
		stats.lookups++;
		return src->group_gid(name, gid);
	}
	for (size_t i = 0; i < ACCOUNTS_GROUPS; i++) {
		struct group_entry *g = &grps[i];
		if (g->used && strcmp(g->name, name) == 0) {
			if (fresh(g->stamp, now)) {
				stats.hits++;
				g->tick = ++ticks;
				if (g->r == 0)
					*gid = g->gid;
				return g->r;
			}
			lru = g;
			break;
		}
		if (!g->used || (lru->used && g->tick < lru->tick))
			lru = g;
	}
	stats.misses++;
	stats.lookups++;
	r = src->group_gid(name, gid);
	if (r != 0 && r != -ENOENT)
		return r;
	if (lru->used && strcmp(lru->name, name) != 0)
		stats.evictions++;
	memset(lru, 0, sizeof(*lru));
	lru->used = true;
	lru->r = r;
	memcpy(lru->name, name, n + 1);
	lru->gid = r == 0 ? *gid : 0;
	lru->stamp = now;
	lru->tick = ++ticks;
	return r;
}

void accounts_flush(void)
{
	for (size_t i = 0; i < ACCOUNTS_UIDS; i++)
		uid_entry_clear(&uids[i]);
	memset(grps, 0, sizeof(grps));
	stats.flushes++;
}

void accounts_source_set(const struct accounts_source *s)
{
	src = s ? s : &nss;
	accounts_flush();
	memset(&stats, 0, sizeof(stats));
}

void accounts_stats_get(struct accounts_stats *out)
{
	*out = stats;
}

void accounts_finish(void)
{
	accounts_flush();
}
