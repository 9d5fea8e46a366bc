/* test-bpfobs-hist.c: the histogram code the BPF programs run
 * (src/daemon/observe/bpf/bpfobs_hist.h), compiled here for the host, must
 * be hist.c: the same bucket index for every value class (all of 0..2^20,
 * both sides of every power of two and of 10 s, a million log-uniform
 * values), and the same bytes after recording the same samples. */
#ifdef HAVE_CONFIG_H
#include "autoconfig.h" /* absent when built by hand, without configure */
#endif

#include <check.h>
#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shared/hist.h"
#include "daemon/observe/bpf/bpfobs_hist.h"

/* splitmix64: a fixed seed makes every failure reproducible. */
static uint64_t rng_state = 0x5eed;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Spread over every magnitude: a random bit length, then random bits. */
static uint64_t rng_log(void)
{
	unsigned bits = (unsigned)(rng() % 64) + 1;

	return rng() >> (64 - bits);
}

/* ck_assert writes to check's pipe on every success: compare, and only
 * call into check on a mismatch (millions of values per test). */
static void same_index(uint64_t v)
{
	int64_t ns = v > INT64_MAX ? INT64_MAX : (int64_t)v;

	if ((int)bpfobs_bucket(v) != hist_bucket_index(ns))
		ck_abort_msg("value %llu: bpf %u, hist.c %d", (unsigned long long)v, bpfobs_bucket(v),
			     hist_bucket_index(ns));
}

START_TEST(test_constants)
{
	ck_assert_uint_eq(BPFOBS_HIST_MAGIC, HIST_MAGIC);
	ck_assert_uint_eq(BPFOBS_HIST_VERSION, HIST_VERSION);
	ck_assert_int_eq(BPFOBS_HIST_SUB_BITS, HIST_SUB_BITS);
	ck_assert_uint_eq(BPFOBS_HIST_MAX_NS, (uint64_t)HIST_MAX_NS);
	ck_assert_int_eq(BPFOBS_HIST_OVERFLOW, HIST_OVERFLOW);
	ck_assert_int_eq(BPFOBS_HIST_NBUCKETS, HIST_NBUCKETS);
	ck_assert_uint_eq(sizeof(struct bpfobs_hist), sizeof(struct hist));
	ck_assert_uint_eq(offsetof(struct bpfobs_hist, seq), offsetof(struct hist, seq));
	ck_assert_uint_eq(offsetof(struct bpfobs_hist, min), offsetof(struct hist, min));
	ck_assert_uint_eq(offsetof(struct bpfobs_hist, sumsq_hi), offsetof(struct hist, sumsq_hi));
	ck_assert_uint_eq(offsetof(struct bpfobs_hist, bucket), offsetof(struct hist, bucket));
}
END_TEST

START_TEST(test_msb)
{
	for (unsigned k = 0; k < 64; k++) {
		ck_assert_uint_eq(bpfobs_msb(UINT64_C(1) << k), k);
		ck_assert_uint_eq(bpfobs_msb((UINT64_C(1) << k) | 1), k);
		if (k)
			ck_assert_uint_eq(bpfobs_msb((UINT64_C(1) << k) - 1), k - 1);
	}
	ck_assert_uint_eq(bpfobs_msb(UINT64_MAX), 63);
}
END_TEST

START_TEST(test_index_dense)
{
	for (uint64_t v = 0; v <= (1u << 20); v++)
		same_index(v);
}
END_TEST

START_TEST(test_index_edges)
{
	for (unsigned k = 0; k < 64; k++)
		for (int d = -2; d <= 2; d++)
			same_index((UINT64_C(1) << k) + (uint64_t)(int64_t)d);
	for (int d = -3; d <= 3; d++)
		same_index((uint64_t)HIST_MAX_NS + (uint64_t)(int64_t)d);
	same_index((uint64_t)INT64_MAX);
	same_index(UINT64_MAX / 2 + 1);
	same_index(UINT64_MAX);
	/* every bucket's first and last value */
	for (int i = 0; i < HIST_OVERFLOW; i++) {
		ck_assert_int_eq((int)bpfobs_bucket((uint64_t)hist_bucket_lower(i)), i);
		ck_assert_int_eq((int)bpfobs_bucket((uint64_t)hist_bucket_upper(i)), i);
	}
}
END_TEST

START_TEST(test_index_random)
{
	for (int i = 0; i < 1000000; i++)
		same_index(rng_log());
}
END_TEST

/* hist_record and the BPF writer leave identical bytes: the daemon cannot
 * tell which one wrote a histogram. */
START_TEST(test_record_identical)
{
	static struct hist ref;
	static struct hist bpf_as_hist;
	struct bpfobs_hist *bpf = (struct bpfobs_hist *)(void *)&bpf_as_hist;

	hist_init(&ref);
	hist_init(&bpf_as_hist);
	for (int i = 0; i < 200000; i++) {
		int64_t ns;

		switch (i % 5) {
		case 0: ns = -(int64_t)(rng() % 1000000); break;       /* early */
		case 1: ns = (int64_t)(rng() % 200000); break;         /* typical */
		case 2: ns = (int64_t)(rng_log() >> 1); break;         /* any, overflow too */
		case 3: ns = (int64_t)(UINT64_C(1) << 32) + (int64_t)(rng() % 1000); break; /* 64-bit square */
		default: ns = (int64_t)(rng() % 128); break;           /* exact buckets */
		}
		hist_record(&ref, ns);
		if (bpfobs_hist_record(bpf, ns) != 0)
			ck_abort_msg("sample %d reported an overlap", i);
	}
	ck_assert_int_eq(memcmp(&ref, &bpf_as_hist, sizeof(ref)), 0);
	ck_assert_int_eq(hist_check(&bpf_as_hist), 0);
	ck_assert_uint_eq(hist_count(&bpf_as_hist), 200000);
}
END_TEST

/* A second writer inside an update (odd seq) is reported, not hidden. */
START_TEST(test_record_reports_overlap)
{
	static struct hist h;
	struct bpfobs_hist *b = (struct bpfobs_hist *)(void *)&h;

	hist_init(&h);
	ck_assert_int_eq(bpfobs_hist_record(b, 1000), 0);
	b->seq += 1; /* as if another writer were inside */
	ck_assert_int_eq(bpfobs_hist_record(b, 1000), 1);
	ck_assert_uint_eq(b->count, 2);
}
END_TEST

static Suite *bpfobs_hist_suite(void)
{
	Suite *s = suite_create("bpfobs_hist");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_constants);
	tcase_add_test(tc, test_msb);
	tcase_add_test(tc, test_index_dense);
	tcase_add_test(tc, test_index_edges);
	tcase_add_test(tc, test_index_random);
	tcase_add_test(tc, test_record_identical);
	tcase_add_test(tc, test_record_reports_overlap);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(bpfobs_hist_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
