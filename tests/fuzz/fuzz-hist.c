/* fuzz-hist.c: libFuzzer target for the reader side of the shared latency
 * histogram (hist.h): hist_check, hist_snapshot, hist_sub, hist_merge and
 * every query.
 *
 * A worker shares its struct hist with the daemon as a memfd it keeps
 * writing (jitter-attach), so every byte the daemon reads there is the
 * client's. The input describes two such images, the live histogram and a
 * reset baseline, compactly, so mutations stay meaningful:
 *
 *   88 bytes      header and totals, raw (magic ... sumsq_hi)
 *   1 byte        n
 *   n x 10 bytes  bucket index (u16, taken modulo HIST_NBUCKETS), count (u64)
 *
 * repeated for the baseline; missing bytes are zeros. Each image is
 * snapshotted as the daemon does, queried, subtracted and merged; results
 * must keep hist.h's promises (a percentile lies within [min, max] when
 * those are sane, buckets outside the index range are empty). */
#include "autoconfig.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/hist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                             \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "fuzz-hist: check failed: %s (%s:%d)\n", \
				#cond, __FILE__, __LINE__);                     \
			abort();                                                \
		}                                                               \
	} while (0)

#define HEAD offsetof(struct hist, bucket)

/* Fill *h from the input at *p (advancing it); zeros where the input ends. */
static void decode(struct hist *h, const uint8_t **p, const uint8_t *end)
{
	size_t n;

	memset(h, 0, sizeof(*h));
	n = (size_t)(end - *p) < HEAD ? (size_t)(end - *p) : HEAD;
	memcpy(h, *p, n);
	*p += n;
	if (*p >= end)
		return;
	n = *(*p)++;
	for (size_t i = 0; i < n && end - *p >= 10; i++, *p += 10) {
		uint16_t idx;
		uint64_t cnt;

		memcpy(&idx, *p, sizeof(idx));
		memcpy(&cnt, *p + 2, sizeof(cnt));
		h->bucket[idx % HIST_NBUCKETS] = cnt;
	}
}

/* Everything the daemon asks of a private copy. */
static void query(const struct hist *h)
{
	static const double qs[] = { 0, 1, 50, 90, 99, 99.9, 99.99, 100, -1, 101, NAN };
	double mean, sd;
	int64_t ns;
	int r;

	r = hist_mean(h, &mean);
	CHECK(r == 0 || r == -ENODATA);
	if (r == 0)
		CHECK(mean >= 0 && !isnan(mean));
	r = hist_stddev(h, &sd);
	CHECK(r == 0 || r == -ENODATA);
	if (r == 0)
		CHECK(sd >= 0 && !isnan(sd));
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		r = hist_percentile(h, qs[i], &ns);
		CHECK(r == 0 || r == -EINVAL || r == -ENODATA || r == -EIO);
		if (!(qs[i] >= 0 && qs[i] <= 100))
			CHECK(r == -EINVAL);
		if (r == 0 && h->min <= h->max && h->max <= INT64_MAX)
			CHECK(ns >= (int64_t)h->min && ns <= (int64_t)h->max);
	}
	(void)hist_min(h);
	(void)hist_max(h);
	for (int i = hist_bucket_next(h, 0), last = -1; i >= 0; last = i, i = hist_bucket_next(h, i + 1)) {
		CHECK(i > last && i < HIST_NBUCKETS);
		CHECK(hist_bucket_count(h, i) != 0);
		CHECK(hist_bucket_lower(i) <= hist_bucket_upper(i));
		(void)hist_bucket_value(i);
	}
	CHECK(hist_bucket_count(h, -1) == 0 && hist_bucket_count(h, HIST_NBUCKETS) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hist live, base, snap, bsnap, diff;
	const uint8_t *p = data, *end = data + size;
	int r, rb;

	decode(&live, &p, end);
	decode(&base, &p, end);

	r = hist_snapshot(&live, &snap, 3);
	CHECK(r == 0 || r == -EBADMSG || r == -EPROTO || r == -EAGAIN);
	if (r < 0)
		return 0;
	CHECK(hist_check(&snap) == 0);
	query(&snap);
	/* the values the daemon derives from a row (jitter.c) */
	(void)hist_count(&snap);
	(void)hist_early(&snap);
	(void)hist_overruns(&snap);
	(void)hist_sum(&snap);

	rb = hist_snapshot(&base, &bsnap, 3);
	if (rb < 0)
		return 0;
	/* since the reset: as `rtschedctl jitter` after jitter-reset */
	r = hist_sub(&diff, &snap, &bsnap);
	CHECK(r == 0 || r == -EINVAL);
	if (r == 0) {
		CHECK(hist_check(&diff) == 0);
		query(&diff);
	}
	/* in place, as jitter.c calls it */
	r = hist_sub(&snap, &snap, &bsnap);
	CHECK(r == 0 || r == -EINVAL);
	r = hist_merge(&snap, &bsnap);
	CHECK(r == 0);
	query(&snap);
	return 0;
}
