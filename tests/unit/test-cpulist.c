/* test-cpulist.c: the kernel's CPU list syntax, good and bad. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <string.h>

#include "daemon/sys/cpulist.h"

/* Parse then format: the canonical text comes back. */
static void roundtrip(const char *in, const char *want)
{
	cpu_set_t set;
	char buf[256];

	ck_assert_int_eq(cpulist_parse(in, &set, NULL), 0);
	ck_assert_int_eq(cpulist_format(&set, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, want);
}

START_TEST(test_good)
{
	roundtrip("0", "0");
	roundtrip("0-3,6", "0-3,6");
	roundtrip("6,0-3", "0-3,6");
	roundtrip(" 1 , 2 ", "1-2");
	roundtrip("0-7:2/4", "0-1,4-5");
	roundtrip("3,3,3", "3");
	roundtrip("1023", "1023");
	roundtrip("1020-1023,0,5-6", "0,5-6,1020-1023");
}
END_TEST

START_TEST(test_bad)
{
	static const char *const bad[] = { "", "a", "-1", "1-", "3-1", "1,,2", "1;2",
					   "0-7:0/4", "0-7:5/4", "0-7:2", "1 2", "0x1" };
	cpu_set_t set;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(cpulist_parse(bad[i], &set, NULL) == -EINVAL, "accepted '%s'", bad[i]);
	ck_assert_int_eq(cpulist_parse("1024", &set, NULL), -ERANGE);
	ck_assert_int_eq(cpulist_parse("99999999999999999999", &set, NULL), -ERANGE);
}
END_TEST

START_TEST(test_bad_points_at_item)
{
	const char *in = "0-1,x", *bad = NULL;
	cpu_set_t set;

	ck_assert_int_lt(cpulist_parse(in, &set, &bad), 0);
	ck_assert_ptr_eq(bad, in + 4);
}
END_TEST

START_TEST(test_format_nospace)
{
	cpu_set_t set;
	char buf[4];

	cpulist_parse("0-3,6,8", &set, NULL);
	ck_assert_int_eq(cpulist_format(&set, buf, sizeof(buf)), -ENOSPC);
}
END_TEST

START_TEST(test_present_and_missing)
{
	cpu_set_t present, want, missing;

	ck_assert_int_eq(cpulist_present(&present), 0);
	ck_assert_int_gt(CPU_COUNT(&present), 0);
	ck_assert_int_eq(cpulist_missing(&present, &present, NULL), 0);
	cpulist_parse("1000-1002", &want, NULL);
	ck_assert_int_eq(cpulist_missing(&want, &present, &missing), 3);
	ck_assert(CPU_ISSET(1001, &missing));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cpulist");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_good);
	tcase_add_test(tc, test_bad);
	tcase_add_test(tc, test_bad_points_at_item);
	tcase_add_test(tc, test_format_nospace);
	tcase_add_test(tc, test_present_and_missing);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
