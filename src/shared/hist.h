/* hist.h: the wake-up lateness histogram a real-time worker thread records
 * into and the daemon reads from another process, through shared memory.
 *
 * Layout (version 1). Values are nanoseconds of lateness, clamped to >= 0.
 * Buckets are log-linear, as in HdrHistogram, with 64 linear sub-buckets per
 * power of two:
 *   - 0..127 ns: one bucket per nanosecond (index = value), exact;
 *   - [2^m, 2^(m+1)) for m = 7..33: 64 buckets of width 2^(m-6);
 *     index = (m - 6) * 64 + (value >> (m - 6));
 *   - the group of 2^33 is cut at HIST_MAX_NS (10 s): its last bucket, index
 *     1802, ends at 10 s - 1 ns; index 1803 (HIST_OVERFLOW) holds every value
 *     >= 10 s. That makes HIST_NBUCKETS = 1804.
 * A bucket's representative value is its midpoint, lower + width / 2. A
 * bucket starts at >= 64 widths, so the midpoint is off by at most half a
 * width: 1/128 = 0.78% relative error, under the 1% we promise from 100 ns
 * (in fact from 0) to 10 s. The highest value in the bucket would only give
 * 1/64 = 1.6% with 64 sub-buckets; midpoints let us halve the size instead.
 *
 * sizeof(struct hist) = 14520 bytes (16 of header, 9 x 8 of totals, 1804 x 8
 * of buckets), the same on every Linux ABI: every uint64_t sits at a
 * multiple of 8 so even i386's 4-byte alignment of uint64_t changes nothing.
 * Counters are uint64_t: one bucket can take most samples (sleep-then-spin
 * puts over half of them at 0), and a uint32_t would wrap after 5 days at
 * 10 kHz; uint64_t never wraps. sum is uint64_t ns: it wraps after 584 years
 * of accumulated lateness. The sum of squares is an unsigned 128-bit integer
 * kept as two uint64_t halves: exact, so the variance needs no cancelling
 * subtraction of big doubles, and a 64-bit ns^2 sum would wrap after 1.8e5
 * samples of 10 ms. It wraps only after 3.4e18 samples of 10 s.
 *
 * Concurrency. Exactly one thread writes (hist_record, hist_add_overruns),
 * without locks or syscalls. Any number of readers, in any process, call
 * hist_snapshot to get a consistent private copy; a seqlock (seq is odd while
 * an update is in flight) tells them to retry. Everything else (queries,
 * merge, sub) works on a private copy, never on the live shared histogram.
 *
 * Reset. Readers never write to the shared histogram, so no one can zero it
 * under the writer. A reader that wants "since now" keeps a snapshot as a
 * baseline and later reports hist_sub(now, baseline). Each reader has its own
 * baseline, so the CLI can reset its view while the Prometheus export stays
 * a monotonic counter, as Prometheus requires.
 *
 * Early wake-ups (negative lateness) are recorded as 0 ns, so percentiles
 * still cover every period, and are also counted in `early`: a clock or
 * deadline bug shows up there instead of vanishing. Missed periods are not
 * samples; the worker reports them with hist_add_overruns. */
#ifndef RTSCHED_HIST_H
#define RTSCHED_HIST_H

#include <stdint.h>

#define HIST_MAGIC 0x48534c52u /* "RLSH" in little-endian memory */
#define HIST_VERSION 1u
#define HIST_SUB_BITS 6
#define HIST_SUB_COUNT (1 << HIST_SUB_BITS)
#define HIST_MAX_NS INT64_C(10000000000) /* 10 s: the start of overflow */
#define HIST_OVERFLOW 1803
#define HIST_NBUCKETS (HIST_OVERFLOW + 1)

/* Every field is a fixed-width integer at a fixed offset, so two processes
 * (even a 32-bit and a 64-bit one) agree on the layout; no pointers. */
struct hist {
	uint32_t magic;   /* HIST_MAGIC */
	uint32_t version; /* HIST_VERSION */
	uint32_t size;    /* sizeof(struct hist) */
	uint32_t nbuckets;
	uint64_t seq;     /* seqlock: odd while the writer is inside an update */
	uint64_t count;   /* samples, including early ones and overflow */
	uint64_t early;   /* samples that were negative, recorded as 0 */
	uint64_t overruns; /* missed periods, reported by the worker */
	uint64_t min;     /* UINT64_MAX while count == 0 */
	uint64_t max;
	uint64_t sum;     /* ns */
	uint64_t sumsq_lo; /* ns^2, low and high halves of 128 bits */
	uint64_t sumsq_hi;
	uint64_t bucket[HIST_NBUCKETS];
};

/* Make *h an empty histogram of this layout; do it before sharing it. */
void hist_init(struct hist *h);
/* 0 if *h has this build's magic and layout, -EBADMSG if it isn't a
 * histogram at all, -EPROTO if it is one of another layout version. */
int hist_check(const struct hist *h);

/* Writer side: only the one recording thread may call these. */
/* Record one lateness sample in ns; negative means early (see above). */
void hist_record(struct hist *h, int64_t ns);
/* Count n missed periods. */
void hist_add_overruns(struct hist *h, uint64_t n);

/* Reader side. */
/* Copy the live *src into the private *dst once no update overlaps the copy
 * (dst->seq tells which update it is); -EAGAIN after `tries` overlapping
 * attempts, and for good if the writer died inside an update; -EBADMSG or
 * -EPROTO as hist_check. */
int hist_snapshot(const struct hist *src, struct hist *dst, unsigned int tries);
/* Add *src into *dst, as if dst's writer had also recorded src's samples. */
int hist_merge(struct hist *dst, const struct hist *src);
/* *dst = *a - *b, where *b is an earlier snapshot of the same histogram (the
 * reset baseline); -EINVAL if it is not. dst may alias a or b. */
int hist_sub(struct hist *dst, const struct hist *a, const struct hist *b);

/* Queries on a private copy. The getters only read a field: inline. */
/* Samples recorded, early and overflow ones included. */
static inline uint64_t hist_count(const struct hist *h) { return h->count; }
/* Early wake-ups: a clock or deadline bug whenever it is not 0. */
static inline uint64_t hist_early(const struct hist *h) { return h->early; }
/* Missed periods, which have no lateness sample of their own. */
static inline uint64_t hist_overruns(const struct hist *h) { return h->overruns; }
/* Exact sum of the samples in ns (early ones count as 0), for `_sum`. */
static inline uint64_t hist_sum(const struct hist *h) { return h->sum; }
/* Smallest sample in ns; 0, not the UINT64_MAX sentinel, if there is none. */
static inline int64_t hist_min(const struct hist *h)
{
	return h->count ? (int64_t)h->min : 0;
}
/* Largest sample in ns, 0 if there is none; samples are clamped int64_t. */
static inline int64_t hist_max(const struct hist *h)
{
	return h->count ? (int64_t)h->max : 0;
}
/* Mean in ns; -ENODATA if empty. */
int hist_mean(const struct hist *h, double *mean);
/* Population standard deviation in ns; -ENODATA if empty. */
int hist_stddev(const struct hist *h, double *stddev);
/* The q-th percentile (q in [0, 100]) in ns by nearest rank: the smallest
 * sample with at least q% of all at or below it (q = 0 is the min). Given as
 * the bucket's midpoint clamped to [min, max], so within 0.78% of the exact
 * sample below 10 s; in the overflow bucket, the max. -EINVAL for a bad q or
 * NaN, -ENODATA if empty, -EIO if the buckets don't add up to count. */
int hist_percentile(const struct hist *h, double q, int64_t *ns);

/* Buckets, for Prometheus `le` buckets and terminal drawings. */
/* Index of the bucket that holds ns (negative ns: bucket 0). */
int hist_bucket_index(int64_t ns);
/* Smallest ns in bucket idx; -EINVAL for a bad idx. */
int64_t hist_bucket_lower(int idx);
/* Largest ns in bucket idx (a Prometheus `le`; INT64_MAX for HIST_OVERFLOW,
 * i.e. +Inf); -EINVAL for a bad idx. */
int64_t hist_bucket_upper(int idx);
/* The value that stands for bucket idx: its midpoint (HIST_MAX_NS for
 * HIST_OVERFLOW; percentiles use the max there); -EINVAL for a bad idx. */
int64_t hist_bucket_value(int idx);
/* Samples in bucket idx; 0 for a bad idx. */
uint64_t hist_bucket_count(const struct hist *h, int idx);
/* The first non-empty bucket at or after idx, or -ENOENT: iterate with
 * for (i = hist_bucket_next(h, 0); i >= 0; i = hist_bucket_next(h, i + 1)). */
int hist_bucket_next(const struct hist *h, int idx);

#endif
