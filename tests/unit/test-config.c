/* test-config.c: every class of config error names file:line and the key;
 * drop-ins are read in lexical order and later files win. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/config/config.h"
#include "daemon/sys/cpulist.h"
#include "daemon/core/match.h"
#include "config-text.h"

static char dir[PATH_MAX];
static char main_path[PATH_MAX + 32];

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	fclose(f);
}

static void setup(void)
{
	char d[PATH_MAX + 16];

	snprintf(dir, sizeof(dir), "/tmp/rtschedd-test-config.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(main_path, sizeof(main_path), "%s/rtschedd.conf", dir);
	snprintf(d, sizeof(d), "%s/rtschedd.d", dir);
	ck_assert_int_eq(mkdir(d, 0755), 0);
}

static void teardown(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void dropin(const char *name, const char *text)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/rtschedd.d/%s", dir, name);
	write_file(p, text, strlen(text));
}

/* Load and validate; returns the error text (caller frees) and sets *r. */
static char *load(const char *text, struct config **c, int *r)
{
	char *err = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&err, &len);

	if (text)
		write_file(main_path, text, strlen(text));
	*c = NULL;
	*r = config_load_text(main_path, true, c, f);
	if (*r == 0) {
		*r = config_validate_text(*c, f, NULL);
		if (*r < 0) {
			config_free(*c);
			*c = NULL;
		}
	}
	fclose(f);
	return err;
}

/* The text must fail and its error must contain each of the needles. */
static void expect_error(const char *text, const char *n1, const char *n2)
{
	struct config *c;
	int r;
	char *err = load(text, &c, &r);

	ck_assert_msg(r < 0, "accepted: %s", text);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err, n1), "'%s' not in: %s", n1, err);
	if (n2)
		ck_assert_msg(strstr(err, n2), "'%s' not in: %s", n2, err);
	free(err);
}

static struct config *expect_ok(const char *text)
{
	struct config *c;
	int r;
	char *err = load(text, &c, &r);

	ck_assert_msg(r == 0, "rejected: %s", err);
	ck_assert_str_eq(err, "");
	free(err);
	return c;
}

/* The text loads (valid), and its warnings are exactly the needle's (NULL: none). */
static void expect_warning(const char *text, const char *needle)
{
	struct config *c;
	int r;
	char *err = load(text, &c, &r);

	ck_assert_msg(r == 0, "rejected: %s", err);
	if (needle)
		ck_assert_msg(strstr(err, needle) && strstr(err, ": warning: "), "'%s' not in: %s", needle, err);
	else
		ck_assert_msg(err[0] == '\0', "unexpected: %s", err);
	config_free(c);
	free(err);
}

/* thread-name/process-name against the kernel's 15-character cut of comm */
START_TEST(test_comm_patterns)
{
	static const struct {
		const char *pattern, *warning;
	} t[] = {
		{ "audiotestsrc0:s", NULL },                       /* exactly 15 */
		{ "audiotestsrc0:src", "use 'audiotestsrc0:s'" },  /* 17: never */
		{ "audiotestsrc*:src", "use 'audiotestsrc*'" },    /* at least 16: never */
		{ "[a-z]udiotestsrc0:src", "use '[a-z]udiotestsrc0:s'" }, /* a class is one character */
		{ "\\*udiotestsrc0:src", "use '\\*udiotestsrc0:s'" },   /* an escaped '*' too */
		{ "*:src", "misses names longer than 15" },       /* the end can be cut off */
		{ "queue?:src", NULL },
		{ "data-loop*", NULL },
		{ "*", NULL },
	};
	char text[256];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(text, sizeof(text), "[rule r]\nthread-name = %s\npolicy = fifo\npriority = 10\n", t[i].pattern);
		expect_warning(text, t[i].warning);
		snprintf(text, sizeof(text), "[rule r]\nprocess-name = %s\npolicy = fifo\npriority = 10\n", t[i].pattern);
		expect_warning(text, t[i].warning);
	}
}
END_TEST

START_TEST(test_shipped_config)
{
	struct config *c;
	char *err = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&err, &len);

	ck_assert_int_eq(config_load_text(TOP_SRCDIR "/conf/rtschedd.conf", true, &c, f), 0);
	ck_assert_int_eq(config_validate_text(c, f, NULL), 0);
	fclose(f);
	ck_assert_str_eq(err, "");
	ck_assert_int_eq(c->dflt.policy, SCHED_FIFO);
	ck_assert_int_eq(c->dflt.priority, 10);
	ck_assert_ptr_nonnull(config_find_rule(c, "audio"));
	ck_assert_ptr_nonnull(config_find_principal(c, "*", false));
	free(err);
	config_free(c);
}
END_TEST

/* The shipped file cut at every byte: each prefix is either valid or
 * refused with only "FILE:LINE: " errors, never anything else. In-process,
 * so every one of its thousands of cuts costs microseconds, not an exec. */
START_TEST(test_every_truncation)
{
	FILE *in = fopen(TOP_SRCDIR "/conf/rtschedd.conf", "r");
	char *text = NULL, prefix[PATH_MAX + 40];
	size_t size = 0, refused = 0;

	ck_assert_ptr_nonnull(in);
	text = malloc(1 << 20);
	ck_assert_ptr_nonnull(text);
	size = fread(text, 1, (1 << 20) - 1, in);
	fclose(in);
	ck_assert_uint_gt(size, 100);
	snprintf(prefix, sizeof(prefix), "%s:", main_path);
	for (size_t off = 0; off < size; off++) {
		struct config *c;
		int r;
		char *err;

		write_file(main_path, text, off);
		err = load(NULL, &c, &r);
		ck_assert_msg(r == 0 || r == -EINVAL, "cut at byte %zu: %d (%s)", off, r, err);
		if (r < 0) {
			refused++;
			for (char *l = err; *l; l = strchr(l, '\n') + 1) {
				const char *p = l + strlen(prefix);
				ck_assert_msg(strncmp(l, prefix, strlen(prefix)) == 0 && *p >= '0' && *p <= '9',
					      "cut at byte %zu: an error without file:line: %.*s", off,
					      (int)strcspn(l, "\n"), l);
				if (!strchr(l, '\n'))
					break;
			}
		}
		config_free(c);
		free(err);
	}
	ck_assert_uint_gt(refused, 0);
	free(text);
}
END_TEST

START_TEST(test_unknown_key)
{
	char want[PATH_MAX + 64];

	snprintf(want, sizeof(want), "%s:3: prority: unknown key", main_path);
	expect_error("[daemon]\npolicy = fifo\nprority = 5\n", want, "valid keys are");
	snprintf(want, sizeof(want), "%s:2: cpu: unknown key", main_path);
	expect_error("[rule a]\ncpu = 1\npolicy = rr\npriority = 3\n", want, NULL);
}
END_TEST

START_TEST(test_duplicates)
{
	expect_error("[daemon]\npriority = 5\npriority = 6\n", ":3: priority: duplicate key",
		     "first set at line 2");
	expect_error("[rule a]\npolicy = rr\npriority = 1\n[daemon]\n[rule a]\n",
		     ":5: duplicate section [rule a]", "first at line 1");
}
END_TEST

START_TEST(test_ranges_and_types)
{
	expect_error("[daemon]\nmax-priority = 100\n", ":2: max-priority: 100 is out of range", "1..99");
	expect_error("[daemon]\nmax-priority = 0\n", "out of range", NULL);
	expect_error("[daemon]\nmax-priority = 99999999999999999999\n", "out of range", NULL);
	expect_error("[daemon]\nmax-priority = ten\n", "'ten' is not a whole number", NULL);
	expect_error("[daemon]\nmax-priority = 5x\n", "not a whole number", NULL);
	expect_error("[rule a]\npolicy = fifo\npriority = 5\nnice = -21\n", ":4: nice:", "-20..19");
	expect_error("[daemon]\npolicy = deadline\n", ":2: policy: unknown policy 'deadline'", NULL);
	expect_error("[daemon]\nreset-on-fork = maybe\n", "not a boolean", NULL);
	expect_error("[daemon]\nlog-level = loud\n", ":2: log-level: unknown level", NULL);
	expect_error("[daemon]\nsocket = relative/path\n", "not an absolute path", NULL);
	expect_error("[daemon]\nrate-burst = 0\n", ":2: rate-burst:", NULL);
	expect_error("[user bob]\npolicies = fifo,warp\n", ":2: policies: bad policy list", NULL);
	expect_error("[daemon]\nwatchdog-demote = everyone\n", ":2: watchdog-demote: 'everyone' is not valid",
		     "use culprit");
	struct config *c = expect_ok("[daemon]\n");
	ck_assert(!c->watchdog_demote_all);   /* the default: only the culprits */
	config_free(c);
	c = expect_ok("[daemon]\nwatchdog-demote = all\n");
	ck_assert(c->watchdog_demote_all);
	config_free(c);
}
END_TEST

START_TEST(test_cpus)
{
	expect_error("[daemon]\ncpus = 0-\n", ":2: cpus: bad CPU list", NULL);
	expect_error("[daemon]\ncpus = 1000\n", ":2: cpus: CPU 1000 does not exist", "present CPUs");
	expect_error("[daemon]\ncpus = 5000\n", "bad CPU list", NULL);
	struct config *c = expect_ok("[daemon]\ncpus = 0\n");
	ck_assert(c->dflt.has_cpus);
	ck_assert(CPU_ISSET(0, &c->dflt.cpus));
	ck_assert_int_eq(CPU_COUNT(&c->dflt.cpus), 1);
	config_free(c);
}
END_TEST

START_TEST(test_structure)
{
	expect_error("policy = fifo\n", ":1: policy: key outside any section", NULL);
	expect_error("[daemon]\njust words\n", ":2: expected 'key = value'", NULL);
	expect_error("[daemon\npolicy = rr\n", ":1: section header '[daemon' has no closing", NULL);
	expect_error("[rules a]\n", ":1: unknown section [rules a]", NULL);
	expect_error("[rule]\n", "unknown section [rule]", NULL);
	expect_error("[rule a b]\n", "unknown section", NULL);
	expect_error("[rule a/b]\npolicy = rr\n", "bad name 'a/b'", NULL);
	expect_error("[user *]\nmax-threads = -1\n", ":2: max-threads:", NULL);
}
END_TEST

START_TEST(test_binary_and_long)
{
	struct config *c;
	char *err;
	int r;
	char longline[400];

	write_file(main_path, "[daemon]\npolicy = fi\0fo\n", 24);
	err = load(NULL, &c, &r);
	ck_assert_int_lt(r, 0);
	ck_assert_msg(strstr(err, ":2: binary data"), "%s", err);
	free(err);

	memset(longline, 'x', sizeof(longline));
	memcpy(longline, "[daemon]\nsocket = /", 19);
	longline[sizeof(longline) - 1] = '\0';
	expect_error(longline, ":2: line longer than", NULL);
}
END_TEST

START_TEST(test_cross_key_rules)
{
	expect_error("[rule a]\npriority = 5\n", ":1: [rule a]: no policy", NULL);
	expect_error("[rule a]\npolicy = fifo\n", ":2: [rule a]: policy fifo needs a priority", "1..99");
	expect_error("[rule a]\npolicy = other\npriority = 5\n", ":3: [rule a]: priority 5 is out of range for other",
		     "use nice instead");
	expect_error("[daemon]\nmax-priority = 40\n[rule a]\npolicy = rr\npriority = 50\n",
		     ":5: [rule a]: priority 50 is above max-priority 40", NULL);
	expect_error("[rule a]\npolicy = fifo\npriority = 5\nnice = 3\n", ":4: [rule a]: nice has no effect", NULL);
	/* the default priority is checked against max-priority too */
	expect_error("[daemon]\npriority = 90\n", ":2: [daemon]: priority 90 is above max-priority 80", NULL);
	/* other takes priority 0 when none is given */
	struct config *c = expect_ok("[daemon]\npolicy = other\nnice = -5\n");
	ck_assert_int_eq(c->dflt.priority, 0);
	ck_assert_int_eq(c->dflt.nice, -5);
	config_free(c);
}
END_TEST

START_TEST(test_every_error_reported)
{
	struct config *c;
	int r;
	char *err = load("[daemon]\nprority = 1\nmax-priority = 200\n[bogus]\nx = 1\n", &c, &r);

	ck_assert_int_lt(r, 0);
	ck_assert_msg(strstr(err, ":2: prority") && strstr(err, ":3: max-priority") &&
		      strstr(err, ":4: unknown section"), "%s", err);
	/* a key in an unknown section is not reported twice */
	ck_assert_msg(!strstr(err, ":5:"), "%s", err);
	free(err);
}
END_TEST

START_TEST(test_dropin_order)
{
	struct config *c;
	const struct rule *rl;

	/* "10-..." sorts before "9-...": the 9 file is read last and wins. */
	dropin("9-late.conf", "[daemon]\npriority = 30\n[rule a]\npriority = 7\n");
	dropin("10-early.conf", "[daemon]\npriority = 20\nmax-priority = 60\n");
	dropin("ignored.conf.bak", "[daemon]\npriority = 99\n");
	dropin("README", "not a config\n");
	c = expect_ok("[daemon]\npriority = 10\n[rule a]\npolicy = rr\npriority = 5\nnice = 0\n");
	ck_assert_int_eq(c->dflt.priority, 30);
	ck_assert_int_eq(c->max_priority, 60);
	ck_assert_uint_eq(c->n_files, 3);
	ck_assert_msg(strstr(c->files[1], "10-early.conf"), "%s", c->files[1]);
	ck_assert_msg(strstr(c->files[2], "9-late.conf"), "%s", c->files[2]);
	rl = config_find_rule(c, "a");
	ck_assert_ptr_nonnull(rl);
	ck_assert_int_eq(rl->spec.policy, SCHED_RR); /* merged from the main file */
	ck_assert_int_eq(rl->spec.priority, 7);      /* overridden by the drop-in */
	config_free(c);
}
END_TEST

START_TEST(test_dropin_error_names_dropin)
{
	char want[PATH_MAX + 64];

	dropin("50-bad.conf", "[daemon]\n\nmax-priority = 0\n");
	snprintf(want, sizeof(want), "%s/rtschedd.d/50-bad.conf:3: max-priority", dir);
	expect_error("[daemon]\n", want, NULL);
}
END_TEST

START_TEST(test_missing_file)
{
	struct config *c = NULL;
	char *err = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&err, &len);
	char p[PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/nope.conf", dir);
	ck_assert_int_eq(config_load_text(p, true, &c, f), -ENOENT);
	ck_assert_int_eq(config_load_text(p, false, &c, f), 0);
	fclose(f);
	ck_assert_int_eq(config_validate_text(c, stderr, NULL), 0);
	ck_assert_uint_eq(c->n_files, 0);
	ck_assert_int_eq(c->dflt.policy, SCHED_FIFO);
	config_free(c);
	free(err);
}
END_TEST

START_TEST(test_overrides)
{
	struct config *c = expect_ok("[daemon]\nmax-priority = 40\n");
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	config_override_default(c, SCHED_RR, 50);
	bool cmdline = false;
	f = open_memstream(&out, &len);
	/* the command line's fault is a typed mark of the note, not an errno */
	ck_assert_int_eq(config_validate_text(c, f, &cmdline), -EINVAL);
	fclose(f);
	ck_assert(cmdline);
	ck_assert_msg(strstr(out, "command line: [daemon]: priority 50 is above max-priority 40"), "%s", out);
	free(out);
	/* an error found after it (a rule's) leaves the command line at
	 * fault: -EDOM was overwritten by that error's -EINVAL */
	config_free(c);
	c = expect_ok("[daemon]\nmax-priority = 40\n[rule a]\npolicy = fifo\npriority = 5\n");
	c->rules[0].spec.priority = 45;
	config_override_default(c, SCHED_RR, 50);
	cmdline = false;
	f = open_memstream(&out, &len);
	ck_assert_int_eq(config_validate_text(c, f, &cmdline), -EINVAL);
	fclose(f);
	ck_assert(cmdline);
	ck_assert_msg(strstr(out, "[rule a]: priority 45 is above max-priority 40"), "%s", out);
	free(out);
	c->rules[0].spec.priority = 5;
	config_override_default(c, SCHED_RR, 20);
	ck_assert_int_eq(config_validate_text(c, stderr, NULL), 0);
	f = open_memstream(&out, &len);
	config_print(c, f);
	fclose(f);
	ck_assert_msg(strstr(out, "rr") && strstr(out, "# command line"), "%s", out);
	free(out);
	config_free(c);
}
END_TEST

START_TEST(test_match_keys)
{
	expect_error("[rule a]\npolicy = rr\npriority = 1\nthread-name =\n", ":4: thread-name: empty pattern", NULL);
	expect_error("[rule a]\npolicy = rr\npriority = 1\nuser = no-such-user-xyz\n", ":4: user: no user 'no-such-user-xyz'", NULL);
	expect_error("[rule a]\npolicy = rr\npriority = 1\ngroup = no-such-group-xyz\n", ":4: group: no group", NULL);
	struct config *c = expect_ok("[rule loose]\nthread-name = w-*\npolicy = fifo\npriority = 5\n"
				     "[rule tight]\nthread-name = w-*\nprocess-name = app\npolicy = rr\npriority = 6\n"
				     "[rule first]\nthread-name = x-*\npolicy = fifo\npriority = 7\n"
				     "[rule second]\nthread-name = x-?\npolicy = fifo\npriority = 8\n"
				     "[rule byuser]\nuser = root\nthread-name = u-*\npolicy = fifo\npriority = 9\n"
				     "[rule role-only]\npolicy = fifo\npriority = 3\n"
				     /* a budget is a setting, not a match key: still a role only */
				     "[rule budget-only]\npolicy = fifo\npriority = 4\nbudget-us = 500\n");
	struct match_subject s = { .thread_name = "w-1", .process_name = "app", .uid = 1000 };
	ck_assert_uint_eq(c->n_auto_rules, 5);
	ck_assert_uint_eq(config_find_rule(c, "budget-only")->budget_us, 500);
	ck_assert_str_eq(config_match(c, &s)->name, "tight");      /* two keys beat one */
	s.process_name = "other";
	ck_assert_str_eq(config_match(c, &s)->name, "loose");
	s.thread_name = "x-1";
	ck_assert_str_eq(config_match(c, &s)->name, "first");      /* tie: file order */
	s.thread_name = "u-1";
	ck_assert_ptr_null(config_match(c, &s));                    /* uid 1000 is not root */
	s.uid = 0;
	ck_assert_str_eq(config_match(c, &s)->name, "byuser");
	s.thread_name = "none";
	ck_assert_ptr_null(config_match(c, &s));                    /* role-only rules never match */
	config_free(c);
}
END_TEST

/* isolate and resume-latency-us (src/daemon/cpu): settings, not match keys;
 * isolate needs CPUs that leave one for the rest. */
START_TEST(test_quiet_keys)
{
	cpu_set_t online;
	char last[16], all[32];

	ck_assert_int_eq(cpulist_online(&online), 0);
	if (CPU_COUNT(&online) < 2)
		return; /* a one-CPU machine: nothing to leave out */
	int hi = -1;
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &online))
			hi = i;
	snprintf(last, sizeof(last), "%d", hi);
	cpulist_format(&online, all, sizeof(all));
	expect_error("[rule a]\npolicy = fifo\npriority = 5\nisolate = yes\n",
		     ":4: [rule a]: isolate = yes needs the CPUs to empty for it; add 'cpus = N'", NULL);
	char text[256], want[256];
	snprintf(text, sizeof(text), "[rule a]\npolicy = fifo\npriority = 5\nisolate = yes\ncpus = %s\n", all);
	snprintf(want, sizeof(want), ":5: [rule a]: isolate = yes with cpus = %s empties every online CPU", all);
	expect_error(text, want, "leave at least one out");
	expect_error("[probe p]\nisolate = yes\n", ":2: [probe p]: isolate = yes needs the CPUs to empty for it; "
		     "add 'cpu = N'", NULL);
	expect_error("[rule a]\npolicy = fifo\npriority = 5\nresume-latency-us = -1\n", ":4: resume-latency-us:",
		     "0..1000000");
	expect_error("[rule a]\npolicy = fifo\npriority = 5\nisolate = sometimes\n", ":4: isolate: 'sometimes' is "
		     "not a boolean", NULL);
	expect_warning("[rule a]\npolicy = fifo\npriority = 5\nresume-latency-us = 0\n",
		       "[rule a]: resume-latency-us without cpus: every CPU its threads may run on keeps out of its idle states");
	snprintf(text, sizeof(text), "[rule a]\npolicy = fifo\npriority = 5\ncpus = %s\nisolate = yes\n"
		 "resume-latency-us = 0\n[rule b]\npolicy = fifo\npriority = 6\n[probe p]\ncpu = %s\n"
		 "isolate = yes\nresume-latency-us = off\n", last, last);
	struct config *c = expect_ok(text);
	const struct rule *a = config_find_rule(c, "a"), *b = config_find_rule(c, "b");
	ck_assert(a->quiet.isolate);
	ck_assert_int_eq(a->quiet.resume_latency_us, 0);
	ck_assert(!b->quiet.isolate);
	ck_assert_int_eq(b->quiet.resume_latency_us, -1);
	ck_assert_int_eq(a->match.n_keys, 0);       /* a role, not a match rule */
	ck_assert_uint_eq(c->n_auto_rules, 0);
	ck_assert_uint_eq(c->n_quiet, 2);           /* rule a and probe p */
	ck_assert(c->probes[0].quiet.isolate);
	ck_assert_int_eq(c->probes[0].quiet.resume_latency_us, -1);
	/* printed only where set, and the print loads back */
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	config_print(c, f);
	fclose(f);
	ck_assert_msg(strstr(out, "\nisolate        = yes ") && strstr(out, "\nresume-latency-us = 0 "), "%s", out);
	ck_assert_msg(!strstr(out, "resume-latency-us = off"), "%s", out);
	config_free(c);
	c = expect_ok(out);
	ck_assert(config_find_rule(c, "a")->quiet.isolate);
	config_free(c);
	free(out);
}
END_TEST

START_TEST(test_dropin_dir_name)
{
	char buf[64];

	ck_assert_int_eq(config_dropin_dir("/etc/rtschedd.conf", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/etc/rtschedd.d");
	ck_assert_int_eq(config_dropin_dir("/tmp/x", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "/tmp/x.d");
	ck_assert_int_eq(config_dropin_dir("/a/very/long/path/that/does/not/fit/in/the/buffer.conf", buf, 8),
			 -ENAMETOOLONG);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_shipped_config);
	tcase_add_test(tc, test_every_truncation);
	tcase_add_test(tc, test_unknown_key);
	tcase_add_test(tc, test_duplicates);
	tcase_add_test(tc, test_ranges_and_types);
	tcase_add_test(tc, test_cpus);
	tcase_add_test(tc, test_structure);
	tcase_add_test(tc, test_binary_and_long);
	tcase_add_test(tc, test_cross_key_rules);
	tcase_add_test(tc, test_every_error_reported);
	tcase_add_test(tc, test_dropin_order);
	tcase_add_test(tc, test_dropin_error_names_dropin);
	tcase_add_test(tc, test_missing_file);
	tcase_add_test(tc, test_overrides);
	tcase_add_test(tc, test_dropin_dir_name);
	tcase_add_test(tc, test_match_keys);
	tcase_add_test(tc, test_quiet_keys);
	tcase_add_test(tc, test_comm_patterns);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
