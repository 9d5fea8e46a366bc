/* test-escape.c: one escaping function per sink (shared/escape.h): what a
 * thread may call itself must not become a line, a terminal command, a
 * systemd assignment, broken JSON or a Prometheus scrape error (issue 23). */
#include "autoconfig.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/escape.h"

/* What f(FILE *, in) wrote, in a static buffer. */
static const char *to_string(void (*f)(FILE *, const char *), const char *in)
{
	static char *buf;
	size_t len;
	FILE *m;

	free(buf);
	buf = NULL;
	m = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(m);
	f(m, in);
	fclose(m);
	return buf;
}

START_TEST(test_text)
{
	char b[256];

	/* a forged systemd assignment, a journal line, a terminal escape */
	ck_assert_str_eq(escape_text(b, sizeof(b), "\nSTOPPING=1\n"), "\\x0aSTOPPING=1\\x0a");
	ck_assert_str_eq(escape_text(b, sizeof(b), "\x1b[31mRED\x7f"), "\\x1b[31mRED\\x7f");
	/* bytes that are not UTF-8, one at a time, and a C1 CSI (U+009B) */
	ck_assert_str_eq(escape_text(b, sizeof(b), "bad\xff\xfe"), "bad\\xff\\xfe");
	ck_assert_str_eq(escape_text(b, sizeof(b), "\xc2\x9b" "2J"), "\\xc2\\x9b2J");
	ck_assert_str_eq(escape_text(b, sizeof(b), "\xe2\x82"), "\\xe2\\x82");          /* cut short */
	ck_assert_str_eq(escape_text(b, sizeof(b), "\xc0\xaf"), "\\xc0\\xaf");          /* overlong "/" */
	ck_assert_str_eq(escape_text(b, sizeof(b), "\xed\xa0\x80"), "\\xed\\xa0\\x80");  /* a surrogate */
	/* UTF-8 and plain text pass */
	ck_assert_str_eq(escape_text(b, sizeof(b), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8e\xb5"),
			 "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x8e\xb5");
	ck_assert_str_eq(escape_text(b, sizeof(b), "olad-1 /usr/bin/olad"), "olad-1 /usr/bin/olad");
	/* cut to fit, never a half escape, always terminated */
	ck_assert_str_eq(escape_text(b, 6, "a\nbcdef"), "a\\x0a");
	ck_assert_str_eq(escape_text(b, 5, "a\nbcdef"), "a");
	ck_assert_str_eq(escape_text(b, 1, "abc"), "");
}
END_TEST

START_TEST(test_json)
{
	ck_assert_str_eq(to_string(escape_json, "a\"b\\c\n\x1b"), "\"a\\\"b\\\\c\\u000a\\u001b\"");
	ck_assert_str_eq(to_string(escape_json, "bad\xff\xfe" "ok"), "\"bad\\ufffd\\ufffdok\"");
	ck_assert_str_eq(to_string(escape_json, "caf\xc3\xa9"), "\"caf\xc3\xa9\"");
}
END_TEST

START_TEST(test_prom)
{
	ck_assert_str_eq(to_string(escape_prom, "a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
	/* other controls and what is not UTF-8: U+FFFD, one per byte */
	ck_assert_str_eq(to_string(escape_prom, "x\x1b\xff" "y"), "x\xef\xbf\xbd\xef\xbf\xbdy");
	ck_assert_str_eq(to_string(escape_prom, "\xc2\x9b"), "\xef\xbf\xbd");
	ck_assert_str_eq(to_string(escape_prom, "caf\xc3\xa9"), "caf\xc3\xa9");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("escape");
	TCase *tc = tcase_create("sinks");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_text);
	tcase_add_test(tc, test_json);
	tcase_add_test(tc, test_prom);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
