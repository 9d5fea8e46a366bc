/* test-hist.c: unit tests of the lateness histogram (src/shared/hist.c):
 * the 1% bound of every bucket, percentiles against sorted samples, exact
 * totals, merge and baseline subtraction, edge values, layout rejection and
 * seqlock snapshots against a live writer thread and a writer process. */
#ifdef HAVE_CONFIG_H
#include "autoconfig.h" /* absent when built by hand, without configure */
#endif

#include <check.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "shared/hist.h"

#define NSAMPLES 100000
#define SNAP_TRIES 1000

static const double qs[] = { 0, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100 };

/* splitmix64: a fixed seed makes every failure reproducible. */
static uint64_t rng_state;

static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double rng_unit(void)
{
	return (double)(rng() >> 11) / 9007199254740992.0;
}

/* qsort comparator for int64_t. */
static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The same nearest-rank definition hist_percentile documents, on sorted data. */
static int64_t exact_percentile(const int64_t *sorted, size_t n, double q)
{
	double r = q / 100 * (double)n;
	size_t rank;

	r = ceil(r - r * 1e-12);
	rank = r < 1 ? 1 : r > (double)n ? n : (size_t)r;
	return sorted[rank - 1];
}

/* Samples as the histogram sees them: negative lateness counts as 0. */
static int64_t clamp0(int64_t v)
{
	return v > 0 ? v : 0;
}

/* Compare everything but seq, which only orders snapshots of one writer. */
static void assert_same(const struct hist *a, const struct hist *b)
{
	ck_assert_uint_eq(a->count, b->count);
	ck_assert_uint_eq(a->early, b->early);
	ck_assert_uint_eq(a->overruns, b->overruns);
	ck_assert_uint_eq(a->min, b->min);
	ck_assert_uint_eq(a->max, b->max);
	ck_assert_uint_eq(a->sum, b->sum);
	ck_assert_uint_eq(a->sumsq_lo, b->sumsq_lo);
	ck_assert_uint_eq(a->sumsq_hi, b->sumsq_hi);
	ck_assert_int_eq(memcmp(a->bucket, b->bucket, sizeof(a->bucket)), 0);
}

/* Totals, mean and stddev against a direct two-pass computation. */
static void check_totals(const struct hist *h, const int64_t *v, size_t n)
{
	long double sum = 0, m2 = 0, mean, sd;
	uint64_t isum = 0;
	int64_t mn = INT64_MAX, mx = 0;
	double got;

	for (size_t i = 0; i < n; i++) {
		int64_t x = clamp0(v[i]);

		isum += (uint64_t)x;
		sum += x;
		mn = x < mn ? x : mn;
		mx = x > mx ? x : mx;
	}
	mean = sum / n;
	for (size_t i = 0; i < n; i++)
		m2 += (clamp0(v[i]) - mean) * (clamp0(v[i]) - mean);
	sd = sqrtl(m2 / n);

	ck_assert_uint_eq(hist_count(h), n);
	ck_assert_uint_eq(hist_sum(h), isum);
	ck_assert_int_eq(hist_min(h), mn);
	ck_assert_int_eq(hist_max(h), mx);
	ck_assert_int_eq(hist_mean(h, &got), 0);
	ck_assert_msg(fabsl(got - mean) <= 1e-9 * fabsl(mean), "mean %.17g want %.17Lg", got, mean);
	ck_assert_int_eq(hist_stddev(h, &got), 0);
	ck_assert_msg(fabsl(got - sd) <= 1e-9 * sd + 1e-9, "stddev %.17g want %.17Lg", got, sd);
}

/* Record v[], then hold every percentile to 1% of the exact one (exact
 * below 100 ns, where the buckets are 1 ns wide). */
static void check_distribution(const char *name, int64_t *v, size_t n)
{
	struct hist h;

	hist_init(&h);
	for (size_t i = 0; i < n; i++)
		hist_record(&h, v[i]);
	check_totals(&h, v, n);
	for (size_t i = 0; i < n; i++)
		v[i] = clamp0(v[i]);
	qsort(v, n, sizeof(*v), cmp_i64);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		int64_t want = exact_percentile(v, n, qs[i]), got = -1;

		ck_assert_int_eq(hist_percentile(&h, qs[i], &got), 0);
		if (want < 100)
			ck_assert_msg(got == want, "%s p%g: %jd, want %jd", name,
				      qs[i], (intmax_t)got, (intmax_t)want);
		else
			ck_assert_msg(fabs((double)(got - want)) <= 0.01 * (double)want,
				      "%s p%g: %jd, want %jd", name, qs[i],
				      (intmax_t)got, (intmax_t)want);
	}
}

START_TEST(test_layout)
{
	ck_assert_uint_eq(sizeof(struct hist), 14520);
	ck_assert_int_eq(hist_bucket_index(-1), 0);
	ck_assert_int_eq(hist_bucket_index(0), 0);
	ck_assert_int_eq(hist_bucket_index(127), 127);
	ck_assert_int_eq(hist_bucket_index(HIST_MAX_NS - 1), HIST_OVERFLOW - 1);
	ck_assert_int_eq(hist_bucket_index(HIST_MAX_NS), HIST_OVERFLOW);
	ck_assert_int_eq(hist_bucket_index(INT64_MAX), HIST_OVERFLOW);
	ck_assert_int_eq(hist_bucket_lower(0), 0);
	ck_assert_int_eq(hist_bucket_upper(HIST_OVERFLOW - 1), HIST_MAX_NS - 1);
	ck_assert_int_eq(hist_bucket_lower(HIST_OVERFLOW), HIST_MAX_NS);
	ck_assert_int_eq(hist_bucket_upper(HIST_OVERFLOW), INT64_MAX);
	ck_assert_int_eq(hist_bucket_lower(-1), -EINVAL);
	ck_assert_int_eq(hist_bucket_upper(HIST_NBUCKETS), -EINVAL);
	ck_assert_int_eq(hist_bucket_value(HIST_NBUCKETS), -EINVAL);
	/* The buckets tile [0, INT64_MAX] without gap or overlap. */
	for (int i = 0; i < HIST_NBUCKETS; i++) {
		int64_t lo = hist_bucket_lower(i), hi = hist_bucket_upper(i);

		ck_assert_int_le(lo, hi);
		ck_assert_int_eq(hist_bucket_index(lo), i);
		ck_assert_int_eq(hist_bucket_index(hi), i);
		if (i + 1 < HIST_NBUCKETS)
			ck_assert_int_eq(hist_bucket_lower(i + 1), hi + 1);
	}
}
END_TEST

/* Relative error of the representative of v's bucket. */
static double bucket_error(int64_t v)
{
	int64_t rep = hist_bucket_value(hist_bucket_index(v));

	return fabs((double)(rep - v)) / (double)v;
}

START_TEST(test_bucket_error_sweep)
{
	double worst = 0, e;

	/* Every value up to 1 ms, then steps of 0.01%, then every bucket edge. */
	for (int64_t v = 100; v < 1000000; v++)
		if ((e = bucket_error(v)) > worst)
			worst = e;
	for (double x = 1e6; x < (double)HIST_MAX_NS; x *= 1.0001)
		if ((e = bucket_error((int64_t)x)) > worst)
			worst = e;
	for (int i = hist_bucket_index(100); i < HIST_OVERFLOW; i++) {
		if ((e = bucket_error(hist_bucket_lower(i))) > worst)
			worst = e;
		if ((e = bucket_error(hist_bucket_upper(i))) > worst)
			worst = e;
	}
	ck_assert_msg(worst <= 1.0 / 128, "worst bucket error %g", worst);
	ck_assert_msg(worst > 1.0 / 129, "worst bucket error %g: sweep too coarse", worst);
	for (int64_t v = 0; v < 128; v++)
		ck_assert_int_eq(hist_bucket_value(hist_bucket_index(v)), v);
}
END_TEST

START_TEST(test_percentiles)
{
	int64_t *v = malloc(NSAMPLES * sizeof(*v));
	size_t n;

	ck_assert_ptr_nonnull(v);
	rng_state = 42;

	for (size_t i = 0; i < NSAMPLES; i++)
		v[i] = 100 + (int64_t)(rng() % 10000000); /* 100 ns .. 10 ms */
	check_distribution("uniform", v, NSAMPLES);

	for (size_t i = 0; i < NSAMPLES; i++) {
		int64_t x = llround(exp(log(100) + rng_unit() * (log(1e10) - log(100))));

		v[i] = x < HIST_MAX_NS ? x : HIST_MAX_NS - 1;
	}
	check_distribution("log-uniform", v, NSAMPLES);

	/* 90% around 20 us, 10% around 2 ms, like a loaded machine's tail. */
	for (size_t i = 0; i < NSAMPLES; i++)
		v[i] = rng() % 10 ? 15000 + (int64_t)(rng() % 10000)
				  : 1500000 + (int64_t)(rng() % 1000000);
	check_distribution("bimodal", v, NSAMPLES);

	/* Early, exact and just-late wake-ups, where buckets are exact. */
	for (size_t i = 0; i < NSAMPLES; i++)
		v[i] = (int64_t)(rng() % 400) - 200;
	check_distribution("small", v, NSAMPLES);

	for (n = 1; n <= 1000; n *= 1000) {
		for (size_t i = 0; i < n; i++)
			v[i] = 12345;
		check_distribution("single", v, n);
	}

	for (n = 2; n <= 1000; n *= 500) {
		for (size_t i = 0; i < n; i++)
			v[i] = i < n / 2 ? 150 : 7000000;
		check_distribution("two values", v, n);
	}
	for (size_t i = 0; i < 1000; i++) /* 99.9% of one, 0.1% of the other */
		v[i] = i < 999 ? 23000 : 4000000;
	check_distribution("two values, rare", v, 1000);
	free(v);
}
END_TEST

START_TEST(test_edges)
{
	static const int64_t v[] = { -5, 0, HIST_MAX_NS - 1, HIST_MAX_NS,
				     HIST_MAX_NS + 12345, INT64_MAX };
	struct hist h;
	int64_t p;
	double d;

	hist_init(&h);
	ck_assert_int_eq(hist_min(&h), 0);
	ck_assert_int_eq(hist_max(&h), 0);
	ck_assert_int_eq(hist_percentile(&h, 50, &p), -ENODATA);
	ck_assert_int_eq(hist_mean(&h, &d), -ENODATA);
	ck_assert_int_eq(hist_stddev(&h, &d), -ENODATA);
	ck_assert_int_eq(hist_bucket_next(&h, 0), -ENOENT);

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		hist_record(&h, v[i]);
	check_totals(&h, v, sizeof(v) / sizeof(v[0]));
	ck_assert_uint_eq(hist_early(&h), 1);
	ck_assert_uint_eq(hist_bucket_count(&h, 0), 2);
	ck_assert_uint_eq(hist_bucket_count(&h, HIST_OVERFLOW - 1), 1);
	ck_assert_uint_eq(hist_bucket_count(&h, HIST_OVERFLOW), 3);
	ck_assert_uint_eq(hist_bucket_count(&h, -1), 0);
	/* In the overflow bucket a percentile can only say the max. */
	ck_assert_int_eq(hist_percentile(&h, 100, &p), 0);
	ck_assert_int_eq(p, INT64_MAX);
	ck_assert_int_eq(hist_percentile(&h, 60, &p), 0);
	ck_assert_int_eq(p, INT64_MAX);
	ck_assert_int_eq(hist_percentile(&h, 0, &p), 0);
	ck_assert_int_eq(p, 0);
	ck_assert_int_eq(hist_percentile(&h, -0.1, &p), -EINVAL);
	ck_assert_int_eq(hist_percentile(&h, 100.1, &p), -EINVAL);
	ck_assert_int_eq(hist_percentile(&h, NAN, &p), -EINVAL);

	hist_add_overruns(&h, 3);
	hist_add_overruns(&h, 4);
	ck_assert_uint_eq(hist_overruns(&h), 7);
	ck_assert_uint_eq(hist_count(&h), 6);
}
END_TEST

START_TEST(test_iterate)
{
	struct hist h;
	uint64_t cum = 0;
	int last = -1, n = 0;

	hist_init(&h);
	for (int64_t v = 1; v < HIST_MAX_NS * 2; v *= 3)
		hist_record(&h, v);
	/* Cumulative `le` buckets as Prometheus wants them, ending at count. */
	for (int i = hist_bucket_next(&h, 0); i >= 0; i = hist_bucket_next(&h, i + 1)) {
		ck_assert_int_gt(i, last);
		ck_assert_uint_gt(hist_bucket_count(&h, i), 0);
		cum += hist_bucket_count(&h, i);
		last = i;
		n++;
	}
	ck_assert_uint_eq(cum, hist_count(&h));
	ck_assert_int_eq(n, 22); /* 3^0 .. 3^21, no two in one bucket */
	ck_assert_int_eq(last, HIST_OVERFLOW);
}
END_TEST

/* n samples of a fixed-seed log-uniform-ish mix into h and into all. */
static void fill(struct hist *h, struct hist *all, uint64_t seed, int n, int64_t base)
{
	rng_state = seed;
	for (int i = 0; i < n; i++) {
		int64_t v = base + (int64_t)(rng() % 5000000) - 1000;

		hist_record(h, v);
		hist_record(all, v);
	}
}

START_TEST(test_merge)
{
	struct hist a, b, all, empty;

	hist_init(&a);
	hist_init(&b);
	hist_init(&all);
	hist_init(&empty);
	fill(&a, &all, 1, 5000, 0);
	fill(&b, &all, 2, 7000, 300000);
	hist_add_overruns(&a, 2);
	hist_add_overruns(&b, 5);
	hist_add_overruns(&all, 7);
	ck_assert_int_eq(hist_merge(&a, &b), 0);
	assert_same(&a, &all);
	ck_assert_int_eq(hist_merge(&a, &empty), 0);
	assert_same(&a, &all);
	ck_assert_int_eq(hist_merge(&empty, &all), 0);
	assert_same(&empty, &all);
}
END_TEST

START_TEST(test_sub)
{
	struct hist live, base, d, only;
	int64_t p;

	/* Samples after the baseline reach past both ends: min/max exact. */
	hist_init(&live);
	hist_init(&only);
	fill(&live, &only, 1, 5000, 100000);
	hist_init(&only);
	memcpy(&base, &live, sizeof(base));
	fill(&live, &only, 2, 5000, 0);
	hist_record(&live, 9000000);
	hist_record(&only, 9000000);
	hist_add_overruns(&live, 3);
	hist_add_overruns(&only, 3);
	ck_assert_int_eq(hist_sub(&d, &live, &base), 0);
	assert_same(&d, &only);
	ck_assert_int_eq(hist_sub(&d, &base, &live), -EINVAL);

	/* dst may alias a: reset the view in place. */
	memcpy(&d, &live, sizeof(d));
	ck_assert_int_eq(hist_sub(&d, &d, &base), 0);
	assert_same(&d, &only);

	/* Nothing new: an empty difference. */
	ck_assert_int_eq(hist_sub(&d, &live, &live), 0);
	ck_assert_uint_eq(hist_count(&d), 0);
	ck_assert_int_eq(hist_max(&d), 0);
	ck_assert_int_eq(hist_percentile(&d, 50, &p), -ENODATA);

	/* New samples inside the old range: min/max within 1%. */
	memcpy(&base, &live, sizeof(base));
	hist_record(&live, 20000);
	hist_record(&live, 30000);
	hist_record(&live, 700000);
	ck_assert_int_eq(hist_sub(&d, &live, &base), 0);
	ck_assert_uint_eq(hist_count(&d), 3);
	ck_assert_uint_eq(hist_sum(&d), 750000);
	ck_assert_int_le(llabs(hist_min(&d) - 20000), 200);
	ck_assert_int_le(llabs(hist_max(&d) - 700000), 7000);
	ck_assert_int_eq(hist_percentile(&d, 50, &p), 0);
	ck_assert_int_le(llabs(p - 30000), 300);
}
END_TEST

START_TEST(test_bad_layout)
{
	struct hist h, d;

	hist_init(&h);
	hist_init(&d);
	ck_assert_int_eq(hist_check(&h), 0);
	ck_assert_int_eq(hist_snapshot(&h, &d, 1), 0);

	h.magic = 0x12345678;
	ck_assert_int_eq(hist_check(&h), -EBADMSG);
	ck_assert_int_eq(hist_snapshot(&h, &d, SNAP_TRIES), -EBADMSG);
	ck_assert_int_eq(hist_merge(&d, &h), -EBADMSG);
	ck_assert_int_eq(hist_sub(&d, &d, &h), -EBADMSG);

	hist_init(&h);
	h.version = HIST_VERSION + 1;
	ck_assert_int_eq(hist_snapshot(&h, &d, SNAP_TRIES), -EPROTO);
	ck_assert_int_eq(hist_merge(&h, &d), -EPROTO);
	hist_init(&h);
	h.size -= 8;
	ck_assert_int_eq(hist_check(&h), -EPROTO);
	hist_init(&h);
	h.nbuckets++;
	ck_assert_int_eq(hist_check(&h), -EPROTO);
	memset(&h, 0, sizeof(h)); /* a fresh, never initialised memfd */
	ck_assert_int_eq(hist_snapshot(&h, &d, SNAP_TRIES), -EBADMSG);
}
END_TEST

START_TEST(test_snapshot_stuck)
{
	struct hist h, d;

	/* A writer that died (or sleeps) inside an update leaves seq odd. */
	hist_init(&h);
	hist_record(&h, 1000);
	h.seq++;
	ck_assert_int_eq(hist_snapshot(&h, &d, SNAP_TRIES), -EAGAIN);
	h.seq++;
	ck_assert_int_eq(hist_snapshot(&h, &d, 0), -EAGAIN);
	ck_assert_int_eq(hist_snapshot(&h, &d, 1), 0);
	assert_same(&d, &h);
	ck_assert_uint_eq(d.seq, h.seq);
}
END_TEST

/* The writer's deterministic stream: sample i is 100 + 1000 * (i % 1000) ns,
 * so a snapshot's count alone fixes its sum, min and max. */
static int64_t stream_value(uint64_t i)
{
	return 100 + 1000 * (int64_t)(i % 1000);
}

/* The sum of the first c stream values. */
static uint64_t stream_sum(uint64_t c)
{
	uint64_t r = c % 1000;

	return 100 * c + 1000 * ((c / 1000) * 499500 + r * (r - 1) / 2);
}

/* A snapshot must be one the writer could have left between two records. */
static void check_snapshot(const struct hist *s, uint64_t *last_count)
{
	uint64_t total = 0;

	for (int i = 0; i < HIST_NBUCKETS; i++)
		total += s->bucket[i];
	ck_assert_uint_eq(total, s->count);
	ck_assert_uint_ge(s->count, *last_count);
	ck_assert_uint_eq(s->sum, stream_sum(s->count));
	if (s->count) {
		ck_assert_int_le(hist_min(s), hist_max(s));
		ck_assert_int_eq(hist_min(s), 100);
		ck_assert_int_eq(hist_max(s), stream_value(s->count < 1000 ? s->count - 1 : 999));
	}
	/* The overrun after every 64th sample is an update of its own. */
	ck_assert(s->overruns == s->count / 64 ||
		  (s->count % 64 == 0 && s->overruns + 1 == s->count / 64));
	*last_count = s->count;
}

/* What the writer and the reader share besides the histogram: the reader's
 * attempt count lets the writer leave gaps tied to the reader's progress
 * rather than to time, so the test passes the same on an idle machine, a
 * loaded one and under valgrind. */
struct race {
	struct hist h;
	uint64_t reads;   /* snapshot attempts the reader has finished */
	uint64_t bursts;  /* bursts the writer has finished, each followed by a quiet read */
	int reader_done;  /* stop waiting for the reader */
	int writer_done;  /* the whole stream is written */
	int stop;         /* stop writing */
};

/* Record the stream, an overrun every 64 samples, in bursts of 4096. After a
 * burst, wait for two more snapshot attempts: the second one starts after
 * the burst ended, so it cannot overlap an update and must succeed, while
 * the attempts during bursts race with the writer. */
static void write_stream(struct race *x, uint64_t n)
{
	for (uint64_t i = 0; i < n && !__atomic_load_n(&x->stop, __ATOMIC_SEQ_CST); i++) {
		hist_record(&x->h, stream_value(i));
		if ((i + 1) % 64 == 0)
			hist_add_overruns(&x->h, 1);
		if ((i + 1) % 4096 == 0) {
			uint64_t until = __atomic_load_n(&x->reads, __ATOMIC_SEQ_CST) + 2;

			while (__atomic_load_n(&x->reads, __ATOMIC_SEQ_CST) < until &&
			       !__atomic_load_n(&x->reader_done, __ATOMIC_SEQ_CST))
				sched_yield(); /* lets a serialised valgrind run the reader */
			__atomic_add_fetch(&x->bursts, 1, __ATOMIC_SEQ_CST);
		}
	}
	__atomic_store_n(&x->writer_done, 1, __ATOMIC_SEQ_CST);
}

/* The thread body for the in-process writer. */
static void *writer_thread(void *p)
{
	write_stream(p, UINT64_MAX);
	return NULL;
}

/* Take snapshots of a live histogram until the writer has finished `bursts`
 * bursts (or its whole stream), checking every one that succeeds; returns
 * how many did. Bounded by the writer's progress, not by a count of
 * attempts: a writer preempted in the middle of an update (odd sequence) on
 * a loaded machine would otherwise let every attempt of a fixed count fail.
 * Each finished burst was followed by an attempt no write overlapped, so at
 * least `bursts` succeed. */
static unsigned read_snapshots(struct race *x, uint64_t bursts)
{
	static struct hist s; /* 14 KiB: keep it off a small thread stack */
	uint64_t last = 0;
	unsigned ok = 0;

	while (__atomic_load_n(&x->bursts, __ATOMIC_SEQ_CST) < bursts &&
	       !__atomic_load_n(&x->writer_done, __ATOMIC_SEQ_CST)) {
		int r = hist_snapshot(&x->h, &s, 4);

		__atomic_add_fetch(&x->reads, 1, __ATOMIC_SEQ_CST);
		if (r == -EAGAIN) {
			sched_yield();
			continue;
		}
		ck_assert_int_eq(r, 0);
		check_snapshot(&s, &last);
		ok++;
	}
	__atomic_store_n(&x->reader_done, 1, __ATOMIC_SEQ_CST);
	return ok;
}

START_TEST(test_seqlock_thread)
{
	struct race *x = calloc(1, sizeof(*x));
	pthread_t t;
	unsigned ok;

	ck_assert_ptr_nonnull(x);
	hist_init(&x->h);
	ck_assert_int_eq(pthread_create(&t, NULL, writer_thread, x), 0);
	ok = read_snapshots(x, 5);
	__atomic_store_n(&x->stop, 1, __ATOMIC_SEQ_CST);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert_uint_ge(ok, 5);
	free(x);
}
END_TEST

START_TEST(test_seqlock_process)
{
	/* The daemon's situation: the writer is another process, the memory a
	 * shared mapping. */
	struct race *x = mmap(NULL, sizeof(*x), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct hist s;
	uint64_t last = 0;
	int status;
	pid_t pid;

	ck_assert_ptr_ne(x, MAP_FAILED);
	hist_init(&x->h);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		write_stream(x, 2000000);
		_exit(0);
	}
	ck_assert_uint_ge(read_snapshots(x, UINT64_MAX), 2000000 / 4096);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_int_eq(hist_snapshot(&x->h, &s, 1), 0);
	check_snapshot(&s, &last);
	ck_assert_uint_eq(hist_count(&s), 2000000);
	munmap(x, sizeof(*x));
}
END_TEST

/* All tests in one suite; the timeout allows for valgrind and sanitizers. */
static Suite *hist_suite(void)
{
	Suite *s = suite_create("hist");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_layout);
	tcase_add_test(tc, test_bucket_error_sweep);
	tcase_add_test(tc, test_percentiles);
	tcase_add_test(tc, test_edges);
	tcase_add_test(tc, test_iterate);
	tcase_add_test(tc, test_merge);
	tcase_add_test(tc, test_sub);
	tcase_add_test(tc, test_bad_layout);
	tcase_add_test(tc, test_snapshot_stuck);
	tcase_add_test(tc, test_seqlock_thread);
	tcase_add_test(tc, test_seqlock_process);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(hist_suite());
	int failed;

	srunner_run_all(sr, CK_ENV);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
