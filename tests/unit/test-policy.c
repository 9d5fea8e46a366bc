/* test-policy.c: policy names and priority ranges as the kernel reports them. */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <sched.h>

#include "daemon/sys/policy.h"

START_TEST(test_names)
{
	static const struct { const char *s; int p; } t[] = {
		{ "fifo", SCHED_FIFO }, { "FIFO", SCHED_FIFO }, { "Fifo", SCHED_FIFO },
		{ "SCHED_FIFO", SCHED_FIFO }, { "rr", SCHED_RR }, { "RR", SCHED_RR },
		{ "other", SCHED_OTHER }, { "normal", SCHED_OTHER }, { "batch", SCHED_BATCH },
		{ "idle", SCHED_IDLE }, { "sched_idle", SCHED_IDLE },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ck_assert_int_eq(policy_from_string(t[i].s), t[i].p);
	ck_assert_int_eq(policy_from_string("deadline"), -EINVAL);
	ck_assert_int_eq(policy_from_string(""), -EINVAL);
	ck_assert_int_eq(policy_from_string("fifo "), -EINVAL);
	ck_assert_str_eq(policy_to_string(SCHED_RR), "rr");
	ck_assert_str_eq(policy_to_string(SCHED_FIFO | 0x40000000), "fifo");
	ck_assert(policy_is_realtime(SCHED_RR | 0x40000000));
	ck_assert(!policy_is_realtime(SCHED_BATCH));
}
END_TEST

START_TEST(test_ranges)
{
	int lo, hi;

	ck_assert_int_eq(policy_priority_range(SCHED_FIFO, &lo, &hi), 0);
	ck_assert_int_eq(lo, 1);
	ck_assert_int_eq(hi, 99);
	ck_assert_int_eq(policy_priority_range(SCHED_RR, &lo, &hi), 0);
	ck_assert_int_eq(lo, 1);
	ck_assert_int_eq(hi, 99);
	for (int p = SCHED_OTHER; p <= SCHED_IDLE; p++) {
		if (p == SCHED_FIFO || p == SCHED_RR || p == 4)
			continue;
		ck_assert_int_eq(policy_priority_range(p, &lo, &hi), 0);
		ck_assert_int_eq(lo, 0);
		ck_assert_int_eq(hi, 0);
	}
	ck_assert_int_lt(policy_priority_range(1234, &lo, &hi), 0);
}
END_TEST

START_TEST(test_masks)
{
	unsigned m = 0;
	char buf[64];

	ck_assert_int_eq(policy_mask_from_string("fifo, RR", &m), 0);
	ck_assert_uint_eq(m, (1u << SCHED_FIFO) | (1u << SCHED_RR));
	ck_assert_int_eq(policy_mask_to_string(m, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "fifo,rr");
	ck_assert_int_eq(policy_mask_from_string("fifo,bogus", &m), -EINVAL);
	ck_assert_int_eq(policy_mask_from_string(" , ", &m), -EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("policy");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_ranges);
	tcase_add_test(tc, test_masks);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
