/* analyzer/pctl.h — percentiles of non-negative integer samples (cycle counts).
 *
 * Exact while small: samples are kept in an array (up to HL_PCTL_EXACT_MAX of them) and a
 * query sorts them. Past that the samples move into a fixed log-linear histogram: values
 * below 64 have a bucket each; above, each power of two is cut into 32 equal buckets. A
 * query returns the middle of the bucket holding the rank, so the relative error is at most
 * 1/64 (1.6 %) of the true value. Memory: at most 512 KiB (exact) or 16 KiB (histogram).
 *
 * Percentile definition (nearest rank): pq of n sorted samples x[1..n] is x[k] with
 * k = ceil(q * n), clamped to [1, n]. The mean is exact in both modes.
 */
#ifndef HL_PCTL_H
#define HL_PCTL_H

#include <stddef.h>
#include <stdint.h>

#define HL_PCTL_EXACT_MAX 65536
#define HL_PCTL_SUB       32             /* buckets per power of two */
#define HL_PCTL_BUCKETS   (64 + 58 * 32) /* 0..63 exact, then octaves 2^6 .. 2^63 */

typedef struct hl_pctl_s {
    uint64_t *v;    /* exact samples (NULL once spilled or before the first) */
    size_t n, cap;  /* samples held in v */
    uint64_t *hist; /* HL_PCTL_BUCKETS counters once spilled, else NULL */
    uint64_t count; /* all samples */
    /* The sum: an integer while it fits in 64 bits, then a long double from the first sum
     * that does not (lsum, big set). A long double holds every integer below 2^64 exactly,
     * so this is the same number as summing in long double from the start. */
    uint64_t isum;
    long double lsum;
    int big;
    uint64_t min, max;
    int sorted;
} hl_pctl_t;

/* A zero-initialised hl_pctl_t is empty. */
void hl_pctl_add_slow(hl_pctl_t *p, uint64_t x);

/* Bucket index of x in the log-linear histogram. */
static inline unsigned hl_pctl_bucket(uint64_t x)
{
    if (x < 64) return (unsigned)x;
    unsigned e = 63u - (unsigned)__builtin_clzll(x); /* 6..63 */
    unsigned sub = (unsigned)(x >> (e - 5)) & (HL_PCTL_SUB - 1);
    return 64 + (e - 6) * HL_PCTL_SUB + sub;
}

/* Add one sample: inline once the samples are in the histogram (the common case on a long
 * run: a few compares, one add, one counter). */
static inline void hl_pctl_add(hl_pctl_t *p, uint64_t x)
{
    if (__builtin_expect(!p->hist || p->big, 0)) {
        hl_pctl_add_slow(p, x);
        return;
    }
    if (x < p->min) p->min = x;
    if (x > p->max) p->max = x;
    p->count++;
    if (__builtin_add_overflow(p->isum, x, &p->isum)) {
        p->isum -= x; /* back to the sum before x: the long double takes over */
        p->big = 1;
        p->lsum = (long double)p->isum + (long double)x;
    }
    p->hist[hl_pctl_bucket(x)]++;
}

/* The sum of the samples. */
static inline long double hl_pctl_sum(const hl_pctl_t *p)
{
    return p->big ? p->lsum : (long double)p->isum;
}
/* Percentile q in [0, 1]; 0 when empty. May sort the exact samples in place. */
double hl_pctl_get(hl_pctl_t *p, double q);
double hl_pctl_mean(const hl_pctl_t *p);
void hl_pctl_free(hl_pctl_t *p);

/* The [lo, hi] range of a bucket of the log-linear histogram (hl_pctl_bucket: x's bucket). */
void hl_pctl_bucket_range(unsigned b, uint64_t *lo, uint64_t *hi);

#endif
