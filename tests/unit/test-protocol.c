/* test-protocol.c: the wire protocol's limits (the parsers themselves are
 * fuzzed by tests/fuzz/fuzz-protocol.c). */
#include "autoconfig.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "shared/protocol.h"

/* "HEAD k0=0 k1=1 ..." with n fields. */
static size_t fields(char *buf, size_t len, const char *head, size_t n)
{
	size_t off = (size_t)snprintf(buf, len, "%s", head);

	for (size_t i = 0; i < n; i++)
		off += (size_t)snprintf(buf + off, len - off, "%sk%zu=%zu", off ? " " : "", i, i);
	return off;
}

START_TEST(test_field_limits)
{
	static struct proto_msg m;
	char buf[PROTO_MSG_MAX];
	size_t n;

	n = fields(buf, sizeof(buf), "", PROTO_FIELDS_MAX);
	ck_assert_int_eq(proto_parse_request(&m, buf, n), 0);
	ck_assert_uint_eq(m.n, PROTO_FIELDS_MAX);
	n = fields(buf, sizeof(buf), "", PROTO_FIELDS_MAX + 1);
	ck_assert_int_eq(proto_parse_request(&m, buf, n), -E2BIG);
	/* a reply may be longer: status has about 40 fields */
	n = fields(buf, sizeof(buf), "OK", 40);
	ck_assert_int_eq(proto_parse_reply(&m, buf, n), 0);
	ck_assert_uint_eq(m.n, 40);
	ck_assert_str_eq(proto_get(&m, "k39"), "39");
	n = fields(buf, sizeof(buf), "OK", PROTO_REPLY_FIELDS_MAX);
	ck_assert_int_eq(proto_parse_reply(&m, buf, n), 0);
	n = fields(buf, sizeof(buf), "OK", PROTO_REPLY_FIELDS_MAX + 1);
	ck_assert_int_eq(proto_parse_reply(&m, buf, n), -E2BIG);
}
END_TEST

START_TEST(test_error_diag)
{
	static struct proto_msg m;
	struct proto_buf b;

	/* the diagnosis is a field; rest stays "CODE MESSAGE" for old readers */
	proto_error_diag(&b, PE_APPLY_FAILED, "rtprio-zero", "sched_setattr failed: %s", "EPERM; fix: x");
	ck_assert_str_eq(b.data, "ERR apply-failed diag=rtprio-zero sched_setattr failed: EPERM; fix: x");
	ck_assert_int_eq(proto_parse_reply(&m, b.data, b.len), 0);
	ck_assert_str_eq(m.head, "ERR");
	ck_assert_str_eq(m.rest, "apply-failed sched_setattr failed: EPERM; fix: x");
	ck_assert_str_eq(proto_get(&m, "diag"), "rtprio-zero");
	/* none, or one that is not a code: the plain form */
	proto_error_diag(&b, PE_APPLY_FAILED, "", "m");
	ck_assert_str_eq(b.data, "ERR apply-failed m");
	proto_error_diag(&b, PE_APPLY_FAILED, "Bad Code", "m");
	ck_assert_str_eq(b.data, "ERR apply-failed m");
	ck_assert_int_eq(proto_parse_reply(&m, b.data, b.len), 0);
	ck_assert_ptr_null(proto_get(&m, "diag"));
	ck_assert_str_eq(m.rest, "apply-failed m");
	/* a message that only looks like one is left alone */
	ck_assert_int_eq(proto_parse_reply(&m, "ERR internal diag=%20x y", 24), 0);
	ck_assert_ptr_null(proto_get(&m, "diag"));
	ck_assert_str_eq(m.rest, "internal diag=%20x y");
	ck_assert_int_eq(proto_parse_reply(&m, "ERR apply-failed diag=cpu-offline", 33), 0);
	ck_assert_str_eq(proto_get(&m, "diag"), "cpu-offline");
	ck_assert_str_eq(m.rest, "apply-failed");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("protocol");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_field_limits);
	tcase_add_test(tc, test_error_diag);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
