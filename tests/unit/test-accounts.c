/* test-accounts.c: the user and group cache (sys/accounts.h) on a fake
 * directory whose answers, calls and clock the tests control: a hit asks
 * the directory nothing, uids without an entry are kept too, a flood of
 * distinct uids keeps ACCOUNTS_UIDS entries and evicts the least recently
 * used, a flush (a reload) and the entry's age make a changed directory
 * seen, and the grant decision's [group] check goes through the cache. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon/core/grant.h"
#include "daemon/sys/accounts.h"
#include "unit-util.h"

/* The fake directory: uids 1000..1000+N-1 exist ("uN", primary gid = uid),
 * the rest have no entry; uid 1000 is in fake_extra_gid if it is set. */
#define FAKE_FIRST 1000u
#define FAKE_USERS 2000u
static unsigned calls_uid, calls_name, calls_groups, calls_group;
static uint64_t now_usec = 1000000;
static gid_t fake_extra_gid;        /* 0: none */
static gid_t fake_group_gid = 5000; /* what "media" resolves to */

static int fake_by_uid(uid_t uid, struct account *out)
{
	calls_uid++;
	if (uid < FAKE_FIRST || uid >= FAKE_FIRST + FAKE_USERS)
		return -ENOENT;
	out->uid = uid;
	out->gid = uid;
	snprintf(out->name, sizeof(out->name), "u%u", (unsigned)uid);
	return 0;
}

static int fake_by_name(const char *name, struct account *out)
{
	unsigned long n;

	calls_name++;
	if (name[0] != 'u' || (n = strtoul(name + 1, NULL, 10)) < FAKE_FIRST)
		return -ENOENT;
	calls_uid--; /* not a by-uid call */
	return fake_by_uid((uid_t)n, out);
}

static int fake_groups(const struct account *a, gid_t **groups, size_t *n)
{
	calls_groups++;
	if (!(*groups = calloc(2, sizeof(gid_t))))
		return -ENOMEM;
	(*groups)[0] = a->gid;
	*n = 1;
	if (a->uid == FAKE_FIRST && fake_extra_gid)
		(*groups)[(*n)++] = fake_extra_gid;
	return 0;
}

static int fake_gid_of(const char *name, gid_t *gid)
{
	calls_group++;
	if (strcmp(name, "media") != 0)
		return -ENOENT;
	*gid = fake_group_gid;
	return 0;
}

static uint64_t fake_now(void)
{
	return now_usec;
}

static const struct accounts_source fake = {
	.by_uid = fake_by_uid,
	.by_name = fake_by_name,
	.groups = fake_groups,
	.group_gid = fake_gid_of,
	.now_usec = fake_now,
};

static void setup(void)
{
	calls_uid = calls_name = calls_groups = calls_group = 0;
	now_usec = 1000000;
	fake_extra_gid = 0;
	fake_group_gid = 5000;
	accounts_source_set(&fake);
}

static void teardown(void)
{
	accounts_source_set(NULL);
	accounts_finish();
}

/* A second lookup of a uid, by uid or by name, asks the directory nothing. */
START_TEST(test_hit)
{
	struct account a;
	struct accounts_stats st;

	ck_assert_int_eq(accounts_by_uid(1001, &a), 0);
	ck_assert_str_eq(a.name, "u1001");
	ck_assert_uint_eq(a.gid, 1001);
	ck_assert_int_eq(accounts_by_uid(1001, &a), 0);
	ck_assert_int_eq(accounts_by_name("u1001", &a), 0);
	ck_assert_uint_eq(a.uid, 1001);
	ck_assert_uint_eq(calls_uid, 1);
	ck_assert_uint_eq(calls_name, 0);
	accounts_stats_get(&st);
	ck_assert_uint_eq(st.hits, 2);
	ck_assert_uint_eq(st.lookups, 1);
	/* a name looked up first is then known by uid */
	ck_assert_int_eq(accounts_by_name("u1002", &a), 0);
	ck_assert_int_eq(accounts_by_uid(1002, &a), 0);
	ck_assert_uint_eq(calls_name, 1);
	ck_assert_uint_eq(calls_uid, 1);
}
END_TEST

/* A uid without a passwd entry is kept as such: asked once. */
START_TEST(test_negative)
{
	struct account a;
	gid_t g;

	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(accounts_by_uid(100000, &a), -ENOENT);
	ck_assert_uint_eq(calls_uid, 1);
	ck_assert_int_eq(accounts_in_group(100000, 5000), -ENOENT);
	ck_assert_uint_eq(calls_uid, 1);
	ck_assert_uint_eq(calls_groups, 0);
	/* and a group that does not exist */
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(accounts_group_gid("nosuchgroup", &g), -ENOENT);
	ck_assert_uint_eq(calls_group, 1);
}
END_TEST

/* A flood of distinct uids (a client cycling through its subordinate uids)
 * costs one lookup each and never more than ACCOUNTS_UIDS entries; a uid
 * in use between them stays (least recently used goes first). */
START_TEST(test_eviction_bound)
{
	struct account a;
	struct accounts_stats st;
	unsigned flood = 4 * ACCOUNTS_UIDS;

	ck_assert_int_eq(accounts_by_uid(1000, &a), 0);
	for (unsigned i = 0; i < flood; i++) {
		ck_assert_int_eq(accounts_by_uid(200000 + i, &a), -ENOENT);
		ck_assert_int_eq(accounts_by_uid(1000, &a), 0);
	}
	ck_assert_uint_eq(calls_uid, 1 + flood);      /* one lookup per new uid, none for 1000 */
	accounts_stats_get(&st);
	ck_assert_uint_eq(st.evictions, flood + 1 - ACCOUNTS_UIDS);
	/* the last ACCOUNTS_UIDS - 1 flood uids are still there, older ones not */
	calls_uid = 0;
	ck_assert_int_eq(accounts_by_uid(200000 + flood - 1, &a), -ENOENT);
	ck_assert_int_eq(accounts_by_uid(200000 + flood - (ACCOUNTS_UIDS - 1), &a), -ENOENT);
	ck_assert_uint_eq(calls_uid, 0);
	ck_assert_int_eq(accounts_by_uid(200000, &a), -ENOENT);
	ck_assert_uint_eq(calls_uid, 1);
}
END_TEST

/* A flush (what a reload does) makes a changed directory seen at once. */
START_TEST(test_flush)
{
	gid_t g;

	ck_assert_int_eq(accounts_group_gid("media", &g), 0);
	ck_assert_int_eq(accounts_in_group(1000, g), 0);
	fake_extra_gid = g;                         /* usermod -aG media u1000 */
	fake_group_gid = 5001;                      /* and media renumbered */
	ck_assert_int_eq(accounts_in_group(1000, g), 0);
	ck_assert_int_eq(accounts_group_gid("media", &g), 0);
	ck_assert_uint_eq(g, 5000);
	ck_assert_uint_eq(calls_groups, 1);
	accounts_flush();
	ck_assert_int_eq(accounts_in_group(1000, 5000), 1);
	ck_assert_int_eq(accounts_group_gid("media", &g), 0);
	ck_assert_uint_eq(g, 5001);
	ck_assert_uint_eq(calls_groups, 2);
}
END_TEST

/* An entry is trusted for ACCOUNTS_MAX_AGE_USEC, then looked up again. */
START_TEST(test_age)
{
	struct account a;
	gid_t g;

	ck_assert_int_eq(accounts_by_uid(100000, &a), -ENOENT);
	ck_assert_int_eq(accounts_in_group(1000, 5000), 0);
	ck_assert_int_eq(accounts_group_gid("media", &g), 0);
	fake_extra_gid = 5000;
	fake_group_gid = 5001;
	now_usec += ACCOUNTS_MAX_AGE_USEC - 1;
	ck_assert_int_eq(accounts_in_group(1000, 5000), 0);
	ck_assert_int_eq(accounts_by_uid(100000, &a), -ENOENT);
	ck_assert_int_eq(accounts_group_gid("media", &g), 0);
	ck_assert_uint_eq(g, 5000);
	ck_assert_uint_eq(calls_uid, 2);
	now_usec += 1;
	ck_assert_int_eq(accounts_in_group(1000, 5000), 1);
	ck_assert_int_eq(accounts_by_uid(100000, &a), -ENOENT);
	ck_assert_int_eq(accounts_group_gid("media", &g), 0);
	ck_assert_uint_eq(g, 5001);
	ck_assert_uint_eq(calls_uid, 4);
	ck_assert_uint_eq(calls_groups, 2);
	ck_assert_uint_eq(calls_group, 2);
}
END_TEST

/* The grant decision's [group] sections and admin-group go through the
 * cache: a user added to a group counts after a flush, not before, and
 * many requests cost one lookup. */
START_TEST(test_grant_uses_cache)
{
	char dir[PATH_MAX];
	struct config *c;
	struct grant_subject s;
	struct grant_limits l;

	unit_tmpdir(dir, "test-accounts");
	c = unit_config(dir, "[user *]\nmax-priority = 0\n[group media]\nmax-priority = 40\npolicies = fifo\n");
	for (int i = 0; i < 10; i++) {
		grant_subject_init(&s, c, 1000, (gid_t)-1, 1);
		ck_assert_str_eq(s.user, "u1000");
		grant_limits_get(c, &s, &l);
		ck_assert_int_eq(l.max_priority, 0);
	}
	ck_assert_uint_eq(calls_uid, 1);
	ck_assert_uint_eq(calls_groups, 1);
	ck_assert_uint_eq(calls_group, 1);
	fake_extra_gid = 5000;
	grant_subject_init(&s, c, 1000, (gid_t)-1, 1);
	grant_limits_get(c, &s, &l);
	ck_assert_int_eq(l.max_priority, 0);
	accounts_flush();
	grant_subject_init(&s, c, 1000, (gid_t)-1, 1);
	grant_limits_get(c, &s, &l);
	ck_assert_int_eq(l.max_priority, 40);
	ck_assert_str_eq(l.prio_from, "[group media]");
	config_free(c);
	unit_rmdir(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("accounts");
	TCase *tc = tcase_create("cache");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_hit);
	tcase_add_test(tc, test_negative);
	tcase_add_test(tc, test_eviction_bound);
	tcase_add_test(tc, test_flush);
	tcase_add_test(tc, test_age);
	tcase_add_test(tc, test_grant_uses_cache);
	suite_add_tcase(s, tc);
	return unit_run(s);
}
