/*
 * test-limits.c - unit tests of the limits.conf reader against fixtures
 *
 * Each fixture in tests/fixtures/limits holds the lines for one rule of
 * pam_limits; the expected answers come from reading pam_limits.c of
 * Debian's Linux-PAM 1.5.2.  The users are synthetic; only the groups adm
 * (gid 4), daemon (1), sys (3) and root (0) must exist, as on any Debian.
 * The fixture directory is $LIMITS_FIXTURES, else FIXTURES_DIR, which
 * defaults to tests/fixtures/limits under TOP_SRCDIR (or the cwd).
 */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/sys/limits.h"

#ifndef FIXTURES_DIR
#ifdef TOP_SRCDIR
#define FIXTURES_DIR TOP_SRCDIR "/tests/fixtures/limits"
#else
#define FIXTURES_DIR "tests/fixtures/limits"
#endif
#endif

/* alice: primary gid 54321 has no group entry; adm is supplementary */
static const gid_t alice_groups[] = { 54321, 4 };
static const struct limits_who alice = { "alice", 51000, 54321, alice_groups, 2 };
/* bob: in daemon through his primary group only */
static const gid_t bob_groups[] = { 1 };
static const struct limits_who bob = { "bob", 51001, 1, bob_groups, 1 };
static const gid_t root_groups[] = { 0 };
static const struct limits_who root = { "root", 0, 0, root_groups, 1 };

#define MAX_WARN 32
struct warnings {
	unsigned n;
	unsigned line[MAX_WARN];
	char msg[MAX_WARN][256];
};

/* Return the path of a fixture in a static buffer. */
static const char *fx(const char *name)
{
	static char buf[2][PATH_MAX];
	static int i;
	const char *dir = getenv("LIMITS_FIXTURES");

	i = !i;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir ? dir : FIXTURES_DIR, name);
	return buf[i];
}

/* Collect warnings so tests can check their lines. */
static void collect(void *ud, const char *file, unsigned line, const char *msg)
{
	struct warnings *w = ud;

	(void)file;
	if (w->n < MAX_WARN) {
		w->line[w->n] = line;
		snprintf(w->msg[w->n], sizeof(w->msg[0]), "%s", msg);
	}
	w->n++;
}

/* Whether a warning containing text was given for line. */
static int warned(const struct warnings *w, unsigned line, const char *text)
{
	for (unsigned i = 0; i < w->n && i < MAX_WARN; i++)
		if (w->line[i] == line && strstr(w->msg[i], text))
			return 1;
	return 0;
}

/* Look up item in one fixture file (no drop-in dir), expecting success. */
static struct limits_answer ask(const char *conf, const char *item,
				const struct limits_who *who)
{
	struct limits_answer a;
	int r = limits_lookup(fx(conf), NULL, item, who, &a);

	ck_assert_int_eq(r, 0);
	return a;
}

/* Check one half of an answer: value, and file:line unless unset. */
static void expect(const struct limits_entry *e, long value, const char *conf,
		   unsigned line)
{
	ck_assert_int_eq(e->value, value);
	if (value == LIMITS_UNSET) {
		ck_assert_str_eq(e->file, "");
		ck_assert_uint_eq(e->line, 0);
	} else {
		ck_assert_str_eq(e->file, fx(conf));
		ck_assert_uint_eq(e->line, line);
	}
}

/* Check both halves when they come from the same line. */
static void expect_both(const struct limits_answer *a, long value,
			const char *conf, unsigned line)
{
	expect(&a->soft, value, conf, line);
	expect(&a->hard, value, conf, line);
	ck_assert(!a->exempt);
}

START_TEST(domain_user)
{
	struct limits_answer a = ask("d-user.conf", "rtprio", &alice);
	expect_both(&a, 10, "d-user.conf", 3);      /* not bob, not ALICE */
}
END_TEST

START_TEST(domain_group_supplementary)
{
	struct limits_answer a = ask("d-group.conf", "rtprio", &alice);
	expect(&a.soft, 20, "d-group.conf", 2);
	expect(&a.hard, LIMITS_UNSET, NULL, 0);     /* not in daemon */
}
END_TEST

START_TEST(domain_group_primary)
{
	struct limits_answer a = ask("d-group-primary.conf", "rtprio", &bob);
	expect_both(&a, 21, "d-group-primary.conf", 2);
}
END_TEST

START_TEST(domain_star)
{
	struct limits_answer a = ask("d-star.conf", "rtprio", &alice);
	expect_both(&a, 5, "d-star.conf", 1);
}
END_TEST

START_TEST(domain_uid_exact)
{
	struct limits_answer a = ask("d-uid-exact.conf", "rtprio", &alice);
	expect_both(&a, 11, "d-uid-exact.conf", 2);
}
END_TEST

START_TEST(domain_uid_range)
{
	struct limits_answer a = ask("d-uid-range.conf", "rtprio", &alice);
	expect(&a.soft, 12, "d-uid-range.conf", 2);
	expect(&a.hard, 13, "d-uid-range.conf", 3);
}
END_TEST

START_TEST(domain_uid_min)
{
	struct limits_answer a = ask("d-uid-min.conf", "rtprio", &alice);
	expect(&a.soft, 14, "d-uid-min.conf", 2);
	expect(&a.hard, 15, "d-uid-min.conf", 3);
}
END_TEST

START_TEST(domain_gid_range_primary_only)
{
	struct limits_answer a = ask("d-gid-range.conf", "rtprio", &alice);
	expect(&a.soft, 30, "d-gid-range.conf", 2);
	expect(&a.hard, 31, "d-gid-range.conf", 3);  /* @4:4 skipped: adm is supplementary */
}
END_TEST

START_TEST(domain_gid_exact_any_group)
{
	struct limits_answer a;

	ck_assert_msg(getgrgid(54321) == NULL, "fixture needs gid 54321 unused");
	a = ask("d-gid-exact.conf", "rtprio", &alice);
	expect(&a.soft, 32, "d-gid-exact.conf", 3);
	expect(&a.hard, LIMITS_UNSET, NULL, 0);
}
END_TEST

START_TEST(domain_percent_ignored)
{
	struct warnings w = { 0 };
	struct limits_answer a;

	ck_assert_int_eq(limits_lookup_warn(fx("d-percent.conf"), NULL, "rtprio",
					    &alice, collect, &w, &a), 0);
	expect(&a.soft, LIMITS_UNSET, NULL, 0);
	expect(&a.hard, LIMITS_UNSET, NULL, 0);
	ck_assert(warned(&w, 2, "maxlogins"));
	ck_assert(warned(&w, 5, "range unsupported"));
	ck_assert(!warned(&w, 6, ""));
}
END_TEST

START_TEST(types)
{
	struct warnings w = { 0 };
	struct limits_answer a = ask("t-types.conf", "nofile", &alice);

	expect(&a.soft, 100, "t-types.conf", 1);
	expect(&a.hard, 200, "t-types.conf", 2);
	a = ask("t-types.conf", "nproc", &alice);
	expect_both(&a, 300, "t-types.conf", 3);
	ck_assert_int_eq(limits_lookup_warn(fx("t-types.conf"), NULL, "locks",
					    &alice, collect, &w, &a), 0);
	expect(&a.soft, LIMITS_UNSET, NULL, 0);
	expect(&a.hard, 400, "t-types.conf", 4);    /* "Hard": type is lower-cased */
	ck_assert(warned(&w, 5, "unknown limit type"));
}
END_TEST

START_TEST(values)
{
	static const struct { const char *item; long value; unsigned line; } v[] = {
		{ "nproc", LIMITS_UNLIMITED, 4 },
		{ "locks", LIMITS_UNLIMITED, 5 },
		{ "sigpending", LIMITS_UNLIMITED, 6 },  /* -1 */
		{ "msgqueue", LIMITS_UNLIMITED, 7 },    /* - */
		{ "rss", LIMITS_UNLIMITED, 8 },         /* UNLIMITED */
		{ "memlock", 64 * 1024, 10 },           /* KiB to bytes */
		{ "cpu", 120, 11 },                     /* minutes to seconds */
		{ "core", 12 * 1024, 12 },              /* trailing junk ignored */
		{ "nice", 21, 14 },                     /* 20 - (-1); -1 is a number */
		{ "data", LIMITS_UNLIMITED, 16 },       /* -2 wraps, * 1024 overflows */
		{ "as", 0, 17 },
		{ "fsize", LIMITS_UNLIMITED, 18 },      /* strtoull overflow */
	};
	struct warnings w = { 0 };
	struct limits_answer a;
	long nr_open = LIMITS_UNLIMITED;
	FILE *f;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		a = ask("v-values.conf", v[i].item, &alice);
		ck_assert_msg(a.soft.value == v[i].value, "%s", v[i].item);
		expect_both(&a, v[i].value, "v-values.conf", v[i].line);
	}
	ck_assert_int_eq(limits_lookup_warn(fx("v-values.conf"), NULL, "rtprio",
					    &alice, collect, &w, &a), 0);
	expect(&a.soft, 50, "v-values.conf", 2);
	expect(&a.hard, LONG_MAX, "v-values.conf", 3);  /* -2 is 2^64 - 2 */
	ck_assert(warned(&w, 3, "does not fit"));
	ck_assert(warned(&w, 13, "wrong limit value"));
	ck_assert(warned(&w, 15, "wrong limit value"));
	a = ask("v-rtprio.conf", "rtprio", &alice);
	expect(&a.soft, LIMITS_UNLIMITED, "v-rtprio.conf", 2);
	expect(&a.hard, LIMITS_UNLIMITED, "v-rtprio.conf", 3);
	a = ask("v-values.conf", "stack", &alice);
	expect(&a.soft, LIMITS_UNSET, NULL, 0);
	/* pam_limits turns an unlimited nofile into fs.nr_open */
	f = fopen("/proc/sys/fs/nr_open", "r");
	if (f) {
		ck_assert_int_eq(fscanf(f, "%ld", &nr_open), 1);
		fclose(f);
	}
	a = ask("v-values.conf", "nofile", &alice);
	expect_both(&a, nr_open, "v-values.conf", 9);
}
END_TEST

START_TEST(comments_and_blanks)
{
	struct warnings w = { 0 };
	struct limits_answer a;

	ck_assert_int_eq(limits_lookup_warn(fx("c-comments.conf"), NULL, "rtprio",
					    &alice, collect, &w, &a), 0);
	expect(&a.soft, 6, "c-comments.conf", 10);  /* SOFT RTPRIO: lower-cased */
	expect(&a.hard, 8, "c-comments.conf", 6);
	ck_assert(warned(&w, 9, "invalid line"));
	ck_assert_uint_eq(w.n, 1);
	a = ask("c-comments.conf", "nice", &alice);
	expect_both(&a, 15, "c-comments.conf", 7);
	a = ask("c-comments.conf", "nproc", &alice);
	expect(&a.hard, 3, "c-comments.conf", 11);
}
END_TEST

START_TEST(file_order)
{
	struct limits_answer a;

	ck_assert_int_eq(limits_lookup(fx("order.conf"), fx("order.d"), "rtprio",
				       &alice, &a), 0);
	expect(&a.soft, 97, "order.d/a.conf", 1);   /* 10-a < 9-b < A < B < a */
	expect(&a.hard, 9, "order.d/9-b.conf", 1);
	ck_assert_int_eq(limits_lookup(fx("order.conf"), fx("order.d"), "nproc",
				       &alice, &a), 0);
	expect(&a.soft, 5, "order.conf", 2);        /* limits.conf comes first */
	expect(&a.hard, 9, "order.d/9-b.conf", 2);
}
END_TEST

START_TEST(precedence_levels)
{
	struct limits_answer a = ask("p-levels.conf", "nproc", &alice);
	expect_both(&a, 10, "p-levels.conf", 4);
	a = ask("p-levels.conf", "rtprio", &alice);
	expect_both(&a, 41, "p-levels.conf", 9);
}
END_TEST

START_TEST(precedence_last_equal_wins)
{
	struct limits_answer a = ask("p-last-equal.conf", "nproc", &alice);
	expect_both(&a, 23, "p-last-equal.conf", 3);
	a = ask("p-last-equal.conf", "rtprio", &alice);
	expect(&a.soft, 2, "p-last-equal.conf", 5);
	expect(&a.hard, 3, "p-last-equal.conf", 6);
}
END_TEST

START_TEST(precedence_star_after_user)
{
	struct limits_answer a = ask("p-star-after-user.conf", "locks", &alice);
	expect(&a.soft, 500, "p-star-after-user.conf", 4);
	expect(&a.hard, 100, "p-star-after-user.conf", 3);
	a = ask("p-star-after-user.conf", "sigpending", &alice);
	expect(&a.soft, 100, "p-star-after-user.conf", 5);
	expect(&a.hard, LIMITS_UNSET, NULL, 0);     /* pam_limits' early return */
}
END_TEST

START_TEST(exempt_stops_reading)
{
	struct limits_answer a;

	ck_assert_int_eq(limits_lookup(fx("e-exempt.conf"), fx("exempt.d"),
				       "rtprio", &alice, &a), 0);
	ck_assert(a.exempt);
	ck_assert_str_eq(a.exempt_file, fx("exempt.d/50-x.conf"));
	ck_assert_uint_eq(a.exempt_line, 1);
	expect(&a.soft, LIMITS_UNSET, NULL, 0);
	expect(&a.hard, LIMITS_UNSET, NULL, 0);
	ck_assert_int_eq(limits_lookup(fx("e-exempt.conf"), fx("exempt.d"),
				       "rtprio", &bob, &a), 0);
	ck_assert(!a.exempt);
}
END_TEST

START_TEST(exempt_by_group)
{
	struct limits_answer a = ask("e-group.conf", "rtprio", &alice);

	ck_assert(a.exempt);                        /* "* -" does not count */
	ck_assert_uint_eq(a.exempt_line, 4);
	expect(&a.soft, LIMITS_UNSET, NULL, 0);
	a = ask("e-group.conf", "rtprio", &bob);
	ck_assert(a.exempt);
	ck_assert_uint_eq(a.exempt_line, 2);
}
END_TEST

START_TEST(root_only_by_name)
{
	struct limits_answer a = ask("r-root.conf", "rtprio", &root);

	expect(&a.soft, LIMITS_UNSET, NULL, 0);     /* Debian skips *, @ for root */
	expect(&a.hard, LIMITS_UNSET, NULL, 0);
	a = ask("r-root.conf", "nproc", &root);
	expect(&a.soft, 8, "r-root.conf", 5);       /* @0:0 read as uid 0:0 */
	expect(&a.hard, 7, "r-root.conf", 4);
	a = ask("r-root.conf", "locks", &root);
	expect_both(&a, 9, "r-root.conf", 6);       /* %:0 likewise */
	a = ask("r-root.conf", "rtprio", &alice);
	expect_both(&a, 5, "r-root.conf", 2);
}
END_TEST

START_TEST(malformed_lines)
{
	static const char *const why[] = {
		"invalid line", "invalid line", "invalid uid range",
		"invalid uid range", "invalid uid range", "unknown limit item",
		"unknown limit type", "wrong limit value",
	};
	struct warnings w = { 0 };
	struct limits_answer a;

	ck_assert_int_eq(limits_lookup_warn(fx("m-bad.conf"), NULL, "rtprio",
					    &alice, collect, &w, &a), 0);
	expect_both(&a, 42, "m-bad.conf", 9);
	ck_assert_uint_eq(w.n, 8);
	for (unsigned i = 0; i < 8; i++)
		ck_assert_msg(warned(&w, i + 1, why[i]), "line %u", i + 1);
}
END_TEST

START_TEST(missing_files_and_bad_items)
{
	struct limits_answer a;

	ck_assert_int_eq(limits_lookup(fx("no-such.conf"), fx("order.d"), "rtprio",
				       &alice, &a), -ENOENT);
	ck_assert_int_eq(limits_lookup(NULL, fx("no-such.d"), "rtprio", &alice, &a), 0);
	expect(&a.soft, LIMITS_UNSET, NULL, 0);
	ck_assert_int_eq(limits_lookup(fx("d-star.conf"), fx("no-such.d"), "rtprio",
				       &alice, &a), 0);
	expect_both(&a, 5, "d-star.conf", 1);
	ck_assert_int_eq(limits_lookup(fx("d-star.conf"), NULL, "rttime", &alice, &a),
			 -EINVAL);
	ck_assert_int_eq(limits_lookup(fx("d-star.conf"), NULL, "maxlogins", &alice, &a),
			 -EINVAL);
	ck_assert_int_eq(limits_lookup(fx("d-star.conf"), NULL, "RTPRIO", &alice, &a),
			 -EINVAL);
}
END_TEST

START_TEST(who_from_user)
{
	struct limits_who w;
	int has0 = 0;

	ck_assert_int_eq(limits_who_from_user("root", &w), 0);
	ck_assert_str_eq(w.user, "root");
	ck_assert_uint_eq(w.uid, 0);
	for (size_t i = 0; i < w.ngroups; i++)
		has0 |= w.groups[i] == 0;
	ck_assert(has0);
	limits_who_free(&w);
	ck_assert_ptr_null(w.user);
	ck_assert_int_eq(limits_who_from_user("no-such-user-rtsd", &w), -ENOENT);
}
END_TEST

/* Gather the test cases into one suite. */
static Suite *limits_suite(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = tcase_create("pam_limits");

	tcase_add_test(tc, domain_user);
	tcase_add_test(tc, domain_group_supplementary);
	tcase_add_test(tc, domain_group_primary);
	tcase_add_test(tc, domain_star);
	tcase_add_test(tc, domain_uid_exact);
	tcase_add_test(tc, domain_uid_range);
	tcase_add_test(tc, domain_uid_min);
	tcase_add_test(tc, domain_gid_range_primary_only);
	tcase_add_test(tc, domain_gid_exact_any_group);
	tcase_add_test(tc, domain_percent_ignored);
	tcase_add_test(tc, types);
	tcase_add_test(tc, values);
	tcase_add_test(tc, comments_and_blanks);
	tcase_add_test(tc, file_order);
	tcase_add_test(tc, precedence_levels);
	tcase_add_test(tc, precedence_last_equal_wins);
	tcase_add_test(tc, precedence_star_after_user);
	tcase_add_test(tc, exempt_stops_reading);
	tcase_add_test(tc, exempt_by_group);
	tcase_add_test(tc, root_only_by_name);
	tcase_add_test(tc, malformed_lines);
	tcase_add_test(tc, missing_files_and_bad_items);
	tcase_add_test(tc, who_from_user);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(limits_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
