/* hist.c: the log-linear lateness histogram (see hist.h for the layout and
 * the one-writer, many-readers rules).
 *
 * Memory model. The fields are plain uint64_t so the layout is one fixed ABI
 * in both processes and private copies are read at full speed. C11's
 * atomic_load/store_explicit only take _Atomic objects, so the accesses that
 * can overlap (the writer's stores, the snapshot's loads) use GCC's __atomic
 * builtins, which are atomic accesses under the same C11 memory model, so
 * there is no data race; relaxed ones compile to plain moves. The seqlock is
 * the one from Boehm, "Can seqlocks get along with programming language
 * memory models?" (MSPC 2012):
 *   writer: seq = s+1 (relaxed); release fence; data (relaxed); seq = s+2 (release)
 *   reader: s1 = seq (acquire); data (relaxed); acquire fence; s2 = seq (relaxed)
 * If the reader saw any store of an update, its acquire fence synchronises
 * with the writer's release fence, so it must also see the odd seq and s2
 * differs from s1. On x86 all of this costs no instruction, only ordering. */
#ifdef HAVE_CONFIG_H
#include "autoconfig.h" /* absent when built by hand, without configure */
#endif

#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "shared/hist.h"

#define SUB HIST_SUB_COUNT
#define LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)

/* The offsets are a cross-process ABI: a change must bump HIST_VERSION. */
_Static_assert(offsetof(struct hist, seq) == 16, "hist header moved");
_Static_assert(offsetof(struct hist, bucket) == 88, "hist totals moved");
_Static_assert(sizeof(struct hist) == 88 + 8 * HIST_NBUCKETS, "hist padded");
_Static_assert(sizeof(struct hist) == 14520, "update the size in hist.h");
/* 10 s - 1 ns lies in the group [2^33, 2^34), whose bucket width is 2^27. */
_Static_assert((INT64_C(1) << 33) <= HIST_MAX_NS - 1 &&
	       HIST_MAX_NS - 1 < (INT64_C(1) << 34), "HIST_MAX_NS group");
_Static_assert(HIST_OVERFLOW == (33 - HIST_SUB_BITS) * SUB +
	       (int)((HIST_MAX_NS - 1) >> (33 - HIST_SUB_BITS)) + 1,
	       "HIST_OVERFLOW does not follow HIST_MAX_NS");

/* Values below 2 * SUB are their own index; above, the top HIST_SUB_BITS + 1
 * bits pick the bucket, so the index is monotonic in v. */
static inline int bucket_of(uint64_t v)
{
	int shift;

	if (v < 2 * SUB)
		return (int)v;
	if (v >= (uint64_t)HIST_MAX_NS)
		return HIST_OVERFLOW;
	shift = 63 - __builtin_clzll(v) - HIST_SUB_BITS;
	return shift * SUB + (int)(v >> shift);
}

/* 128-bit arithmetic on (hi, lo) pairs, because unsigned __int128 does not
 * exist on 32-bit targets such as armhf, where lighting rigs often run. */
struct u128 {
	uint64_t hi, lo;
};

/* a + b, wrapping at 2^128. */
static inline struct u128 u128_add(struct u128 a, struct u128 b)
{
	return (struct u128){ a.hi + b.hi + (a.lo + b.lo < a.lo), a.lo + b.lo };
}

/* a - b, wrapping at 2^128. */
static inline struct u128 u128_sub(struct u128 a, struct u128 b)
{
	return (struct u128){ a.hi - b.hi - (a.lo < b.lo), a.lo - b.lo };
}

/* a < b. */
static inline int u128_lt(struct u128 a, struct u128 b)
{
	return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}

/* The full product of two 64-bit numbers, from four 32 x 32 products. */
static inline struct u128 u128_mul(uint64_t a, uint64_t b)
{
	uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
	uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0;
	uint64_t mid = (p00 >> 32) + (uint32_t)p01 + (uint32_t)p10;

	return (struct u128){ a1 * b1 + (p01 >> 32) + (p10 >> 32) + (mid >> 32),
			      mid << 32 | (uint32_t)p00 };
}

/* Rounded to long double's precision, which only matters past 2^64. */
static long double u128_ld(struct u128 a)
{
	return ldexpl((long double)a.hi, 64) + (long double)a.lo;
}

/* The sum of squares, split over two fields to keep the layout fixed. */
static inline struct u128 sumsq_get(const struct hist *h)
{
	return (struct u128){ h->sumsq_hi, h->sumsq_lo };
}

/* Set the sum of squares of a private copy. */
static void sumsq_set(struct hist *h, struct u128 v)
{
	h->sumsq_hi = v.hi;
	h->sumsq_lo = v.lo;
}

/* Readers in other processes may be mid-copy: the release fence keeps the
 * data stores of this update from becoming visible before seq turns odd. */
static inline uint64_t write_begin(struct hist *h)
{
	uint64_t s = h->seq; /* only this thread writes seq: no race to read it */

	STORE(&h->seq, s + 1);
	atomic_thread_fence(memory_order_release);
	return s;
}

/* The release store publishes the update before seq turns even again. */
static inline void write_end(struct hist *h, uint64_t s)
{
	__atomic_store_n(&h->seq, s + 2, __ATOMIC_RELEASE);
}

/* Stamp a private copy with this build's layout, which it now has. */
static void set_header(struct hist *h, uint64_t seq)
{
	h->magic = HIST_MAGIC;
	h->version = HIST_VERSION;
	h->size = sizeof(*h);
	h->nbuckets = HIST_NBUCKETS;
	h->seq = seq;
}

/* min starts at UINT64_MAX so that recording needs no "is it the first" test. */
void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	set_header(h, 0);
	h->min = UINT64_MAX;
}

/* The header is written once before sharing, but read it atomically anyway:
 * it may be the live shared copy. */
int hist_check(const struct hist *h)
{
	if (LOAD(&h->magic) != HIST_MAGIC)
		return -EBADMSG;
	if (LOAD(&h->version) != HIST_VERSION || LOAD(&h->size) != sizeof(*h) ||
	    LOAD(&h->nbuckets) != HIST_NBUCKETS)
		return -EPROTO;
	return 0;
}

/* The hot path of the real-time thread: no branches beyond min/max/early, no
 * locks, no syscalls; the writer reads its own fields with plain loads since
 * nobody else writes them. Everything is computed before the update opens to
 * keep the window in which readers must retry short. */
void hist_record(struct hist *h, int64_t ns)
{
	uint64_t v = ns > 0 ? (uint64_t)ns : 0;
	struct u128 sq = { 0, v * v }; /* exact below 2^32 ns, i.e. 4.29 s */
	int idx = bucket_of(v);
	uint64_t s;

	if (v >> 32)
		sq = u128_mul(v, v);
	sq = u128_add(sumsq_get(h), sq);
	s = write_begin(h);
	STORE(&h->bucket[idx], h->bucket[idx] + 1);
	STORE(&h->count, h->count + 1);
	if (ns < 0)
		STORE(&h->early, h->early + 1);
	if (v < h->min)
		STORE(&h->min, v);
	if (v > h->max)
		STORE(&h->max, v);
	STORE(&h->sum, h->sum + v);
	STORE(&h->sumsq_lo, sq.lo);
	STORE(&h->sumsq_hi, sq.hi);
	write_end(h, s);
}

/* Inside the seqlock too, so a snapshot's overruns match its samples. */
void hist_add_overruns(struct hist *h, uint64_t n)
{
	uint64_t s = write_begin(h);

	STORE(&h->overruns, h->overruns + n);
	write_end(h, s);
}

/* Retries are bounded because the writer may be preempted or dead inside an
 * update; the caller decides when to try again. */
int hist_snapshot(const struct hist *src, struct hist *dst, unsigned int tries)
{
	int r = hist_check(src);

	if (r < 0)
		return r;
	for (; tries > 0; tries--) {
		uint64_t s1 = __atomic_load_n(&src->seq, __ATOMIC_ACQUIRE);

		if (s1 & 1)
			continue;
		dst->count = LOAD(&src->count);
		dst->early = LOAD(&src->early);
		dst->overruns = LOAD(&src->overruns);
		dst->min = LOAD(&src->min);
		dst->max = LOAD(&src->max);
		dst->sum = LOAD(&src->sum);
		dst->sumsq_lo = LOAD(&src->sumsq_lo);
		dst->sumsq_hi = LOAD(&src->sumsq_hi);
		for (int i = 0; i < HIST_NBUCKETS; i++)
			dst->bucket[i] = LOAD(&src->bucket[i]);
		atomic_thread_fence(memory_order_acquire);
		if (LOAD(&src->seq) == s1) {
			set_header(dst, s1);
			return 0;
		}
	}
	return -EAGAIN;
}

/* Merging is exact: every field is a sum, a min or a max. */
int hist_merge(struct hist *dst, const struct hist *src)
{
	int r;

	if ((r = hist_check(dst)) < 0 || (r = hist_check(src)) < 0)
		return r;
	for (int i = 0; i < HIST_NBUCKETS; i++)
		dst->bucket[i] += src->bucket[i];
	dst->count += src->count;
	dst->early += src->early;
	dst->overruns += src->overruns;
	dst->sum += src->sum;
	sumsq_set(dst, u128_add(sumsq_get(dst), sumsq_get(src)));
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	return 0;
}

/* What stands for a sample of bucket idx, given that all samples lie in
 * [lo, hi]: clamping only moves the midpoint towards the true value. Overflow
 * has no midpoint; hi is the one overflow sample we know. */
static uint64_t rep_in(int idx, uint64_t lo, uint64_t hi)
{
	uint64_t v;

	if (idx == HIST_OVERFLOW)
		return hi;
	v = (uint64_t)hist_bucket_value(idx);
	return v < lo ? lo : v > hi ? hi : v;
}

/* Counts subtract exactly. The min and max since the baseline are exact when
 * they were set after it; otherwise they are the midpoints of the lowest and
 * highest non-empty buckets of the difference, within the 1% bound. */
int hist_sub(struct hist *dst, const struct hist *a, const struct hist *b)
{
	uint64_t amin = a->min, amax = a->max, bmin = b->min, bmax = b->max;
	int r, lo, hi;

	if ((r = hist_check(a)) < 0 || (r = hist_check(b)) < 0)
		return r;
	if (b->count > a->count || b->early > a->early ||
	    b->overruns > a->overruns || u128_lt(sumsq_get(a), sumsq_get(b)) ||
	    bmin < amin || bmax > amax)
		return -EINVAL;
	for (int i = 0; i < HIST_NBUCKETS; i++)
		if (b->bucket[i] > a->bucket[i])
			return -EINVAL;

	dst->count = a->count - b->count;
	dst->early = a->early - b->early;
	dst->overruns = a->overruns - b->overruns;
	dst->sum = a->sum - b->sum; /* modular: right even if sum ever wrapped */
	sumsq_set(dst, u128_sub(sumsq_get(a), sumsq_get(b)));
	for (int i = 0; i < HIST_NBUCKETS; i++)
		dst->bucket[i] = a->bucket[i] - b->bucket[i];
	set_header(dst, a->seq);

	lo = hist_bucket_next(dst, 0);
	if (lo < 0) {
		dst->min = UINT64_MAX;
		dst->max = 0;
		return 0;
	}
	for (hi = HIST_NBUCKETS - 1; dst->bucket[hi] == 0; hi--)
		;
	dst->min = amin < bmin ? amin : rep_in(lo, amin, amax);
	dst->max = amax > bmax ? amax : rep_in(hi, amin, amax);
	return 0;
}

/* Exact sum over exact count: no bucket error in the mean. */
int hist_mean(const struct hist *h, double *mean)
{
	if (!h->count)
		return -ENODATA;
	*mean = (double)h->sum / (double)h->count;
	return 0;
}

/* sumsq/n - mean^2 in floating point cancels badly when the spread is small
 * next to the mean. With s = k*n + r, the squared deviations sum to
 * M2 = (sumsq - s*k - k*r) - r*r/n, where the bracket is an exact integer
 * and 0 <= r*r/n < n: the variance M2/n only suffers roundings relative to
 * itself and to 1, never to mean^2. */
int hist_stddev(const struct hist *h, double *stddev)
{
	uint64_t n = h->count, k, r;
	struct u128 q = sumsq_get(h), sub;
	long double m2 = 0;

	if (!n)
		return -ENODATA;
	k = h->sum / n;
	r = h->sum % n;
	sub = u128_add(u128_mul(h->sum, k), u128_mul(k, r));
	if (!u128_lt(q, sub)) /* else the sum wrapped: give 0, not garbage */
		m2 = u128_ld(u128_sub(q, sub)) - (long double)r * r / n;
	*stddev = m2 > 0 ? (double)sqrtl(m2 / n) : 0;
	return 0;
}

/* Nearest rank, ceil(q/100 * n) clamped to [1, n]. The relative slack keeps
 * 99.9 (really 99.900000000000006) from rounding a whole rank up; it is below
 * one rank up to 1e12 samples. */
int hist_percentile(const struct hist *h, double q, int64_t *ns)
{
	uint64_t rank, cum = 0;
	double r;

	if (!(q >= 0 && q <= 100))
		return -EINVAL;
	if (!h->count)
		return -ENODATA;
	r = q / 100 * (double)h->count;
	r = ceil(r - r * 1e-12);
	rank = r < 1 ? 1 : r > (double)h->count ? h->count : (uint64_t)r;
	for (int i = 0; i < HIST_NBUCKETS; i++) {
		cum += h->bucket[i];
		if (cum >= rank) {
			*ns = (int64_t)rep_in(i, h->min, h->max);
			return 0;
		}
	}
	return -EIO; /* buckets short of count: not a snapshot or merge of one */
}

/* Negative lateness is recorded as 0, so it lands where 0 does. */
int hist_bucket_index(int64_t ns)
{
	return bucket_of(ns > 0 ? (uint64_t)ns : 0);
}

/* The inverse of bucket_of: index = shift * SUB + (lower >> shift). */
int64_t hist_bucket_lower(int idx)
{
	int shift;

	if (idx < 0 || idx >= HIST_NBUCKETS)
		return -EINVAL;
	if (idx == HIST_OVERFLOW)
		return HIST_MAX_NS;
	if (idx < 2 * SUB)
		return idx;
	shift = idx / SUB - 1;
	return (int64_t)(idx % SUB + SUB) << shift;
}

/* One below the next bucket's start; the last finite bucket is cut at 10 s. */
int64_t hist_bucket_upper(int idx)
{
	if (idx < 0 || idx >= HIST_NBUCKETS)
		return -EINVAL;
	if (idx == HIST_OVERFLOW)
		return INT64_MAX;
	return hist_bucket_lower(idx + 1) - 1;
}

/* The midpoint: at most half a width, 1/128 of the value, from any member. */
int64_t hist_bucket_value(int idx)
{
	int64_t lo = hist_bucket_lower(idx);

	if (lo < 0 || idx == HIST_OVERFLOW)
		return lo;
	return lo + (hist_bucket_upper(idx) - lo + 1) / 2;
}

/* Out-of-range reads as empty, which suits drawing loops. */
uint64_t hist_bucket_count(const struct hist *h, int idx)
{
	return idx >= 0 && idx < HIST_NBUCKETS ? h->bucket[idx] : 0;
}

/* A linear scan: 1804 words, cheap next to formatting what it finds. */
int hist_bucket_next(const struct hist *h, int idx)
{
	for (idx = idx < 0 ? 0 : idx; idx < HIST_NBUCKETS; idx++)
		if (h->bucket[idx])
			return idx;
	return -ENOENT;
}
