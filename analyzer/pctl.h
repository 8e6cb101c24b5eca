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
    long double sum;
    uint64_t min, max;
    int sorted;
} hl_pctl_t;

/* A zero-initialised hl_pctl_t is empty. */
void hl_pctl_add(hl_pctl_t *p, uint64_t x);
/* Percentile q in [0, 1]; 0 when empty. May sort the exact samples in place. */
double hl_pctl_get(hl_pctl_t *p, double q);
double hl_pctl_mean(const hl_pctl_t *p);
void hl_pctl_free(hl_pctl_t *p);

/* Bucket index of x in the log-linear histogram and the [lo, hi] range of a bucket. */
unsigned hl_pctl_bucket(uint64_t x);
void hl_pctl_bucket_range(unsigned b, uint64_t *lo, uint64_t *hi);

#endif
