/* bpfobs_hist.h: src/shared/hist.h's struct hist and hist_record(), written
 * once in C that both `clang -target bpf` (bpfobs.bpf.c, the writer) and the
 * host compiler (tests/unit/test-bpfobs-hist.c, which compares it with
 * hist.c byte for byte) build. The daemon reads what the BPF programs write
 * with hist.c's own hist_snapshot(): same layout, same seqlock.
 *
 * It includes nothing: the includer provides __u32, __u64 and __s64 (the
 * BPF side from vmlinux.h, the host from <linux/types.h>). Everything is
 * integer-only and loop-free, as the verifier wants; the constants repeat
 * hist.h's, and bpfobs.c and the unit test check that they agree. */
#ifndef BPFOBS_HIST_H
#define BPFOBS_HIST_H

#define BPFOBS_HIST_MAGIC 0x48534c52u /* HIST_MAGIC */
#define BPFOBS_HIST_VERSION 1u
#define BPFOBS_HIST_SUB_BITS 6
#define BPFOBS_HIST_SUB_COUNT (1 << BPFOBS_HIST_SUB_BITS)
#define BPFOBS_HIST_MAX_NS 10000000000ULL
#define BPFOBS_HIST_OVERFLOW 1803
#define BPFOBS_HIST_NBUCKETS (BPFOBS_HIST_OVERFLOW + 1)

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
/* Hide a value's range from the optimiser, so a bounds check the verifier
 * needs is not folded away (libbpf's bpf_helpers.h defines the same). */
#ifndef barrier_var
#define barrier_var(var) __asm__ __volatile__("" : "=r"(var) : "0"(var))
#endif

/* struct hist, field for field (hist.h explains each). */
struct bpfobs_hist {
	__u32 magic;
	__u32 version;
	__u32 size;
	__u32 nbuckets;
	__u64 seq;
	__u64 count;
	__u64 early;
	__u64 overruns;
	__u64 min;
	__u64 max;
	__u64 sum;
	__u64 sumsq_lo;
	__u64 sumsq_hi;
	__u64 bucket[BPFOBS_HIST_NBUCKETS];
};

/* Index of the highest set bit of v != 0, by binary search: BPF has no
 * count-leading-zeros instruction, and this needs no loop. */
static __always_inline __u32 bpfobs_msb(__u64 v)
{
	__u32 n = 0;

	if (v >> 32) {
		n += 32;
		v >>= 32;
	}
	if (v >> 16) {
		n += 16;
		v >>= 16;
	}
	if (v >> 8) {
		n += 8;
		v >>= 8;
	}
	if (v >> 4) {
		n += 4;
		v >>= 4;
	}
	if (v >> 2) {
		n += 2;
		v >>= 2;
	}
	if (v >> 1)
		n += 1;
	return n;
}

/* hist.c's bucket_of(): values below 128 are their own bucket, above it the
 * top HIST_SUB_BITS + 1 bits pick one; 10 s and more overflow. */
static __always_inline __u32 bpfobs_bucket(__u64 v)
{
	__u32 shift;

	if (v < 2 * BPFOBS_HIST_SUB_COUNT)
		return (__u32)v;
	if (v >= BPFOBS_HIST_MAX_NS)
		return BPFOBS_HIST_OVERFLOW;
	shift = bpfobs_msb(v) - BPFOBS_HIST_SUB_BITS;
	return shift * BPFOBS_HIST_SUB_COUNT + (__u32)(v >> shift);
}

/* The full 128-bit product a * b as (*hi, *lo), from 32 x 32 products. */
static __always_inline void bpfobs_mul64(__u64 a, __u64 b, __u64 *hi, __u64 *lo)
{
	__u64 a0 = (__u32)a, a1 = a >> 32, b0 = (__u32)b, b1 = b >> 32;
	__u64 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0;
	__u64 mid = (p00 >> 32) + (__u32)p01 + (__u32)p10;

	*hi = a1 * b1 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
	*lo = mid << 32 | (__u32)p00;
}

/* hist_record(): one sample of ns nanoseconds (negative: early, kept as 0).
 * Same seqlock as hist.c, but each seq step is an atomic fetch-and-add,
 * which BPF JITs emit fully ordered on every architecture (lock xadd on
 * x86, LDADDAL or a barriered LL/SC loop on arm64): the data stores can
 * neither precede the odd seq nor follow the even one, which is what the
 * readers' hist_snapshot() relies on. BPF has no standalone fence.
 * Exactly one writer per histogram: the switch-in of its thread, which runs
 * on one CPU at a time. Returns 1 if another writer overlapped (seq was
 * odd on entry or moved meanwhile), else 0; the sample is recorded anyway. */
static __always_inline int bpfobs_hist_record(struct bpfobs_hist *h, __s64 ns)
{
	__u64 v = ns > 0 ? (__u64)ns : 0;
	__u64 sqhi = 0, sqlo = v * v, lo, s, e;
	__u32 idx = bpfobs_bucket(v);

	if (v >> 32)
		bpfobs_mul64(v, v, &sqhi, &sqlo);
	lo = h->sumsq_lo + sqlo;
	sqhi += h->sumsq_hi + (lo < sqlo);
	barrier_var(idx);
	if (idx > BPFOBS_HIST_OVERFLOW) /* cannot happen; the verifier wants it */
		idx = BPFOBS_HIST_OVERFLOW;

	s = __sync_fetch_and_add(&h->seq, 1);
	h->bucket[idx] += 1;
	h->count += 1;
	if (ns < 0)
		h->early += 1;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->sum += v;
	h->sumsq_lo = lo;
	h->sumsq_hi = sqhi;
	e = __sync_fetch_and_add(&h->seq, 1);
	return (s & 1) || e != s + 1;
}

#endif
