/* analyzer/pctl.c — see pctl.h. */
#include "pctl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "radixsort.h"

void hl_pctl_bucket_range(unsigned b, uint64_t *lo, uint64_t *hi)
{
    if (b < 64) {
        *lo = *hi = b;
        return;
    }
    unsigned e = (b - 64) / HL_PCTL_SUB + 6, sub = (b - 64) % HL_PCTL_SUB;
    uint64_t width = 1ull << (e - 5);
    *lo = (1ull << e) + sub * width;
    *hi = *lo + width - 1;
}

static void spill(hl_pctl_t *p)
{
    p->hist = calloc(HL_PCTL_BUCKETS, sizeof *p->hist);
    if (!p->hist) abort();
    for (size_t i = 0; i < p->n; i++)
        p->hist[hl_pctl_bucket(p->v[i])]++;
    free(p->v);
    p->v = NULL;
    p->n = p->cap = 0;
}

void hl_pctl_add_slow(hl_pctl_t *p, uint64_t x)
{
    if (!p->count || x < p->min) p->min = x;
    if (!p->count || x > p->max) p->max = x;
    p->count++;
    if (p->big) {
        p->lsum += x;
    } else if (__builtin_add_overflow(p->isum, x, &p->isum)) {
        p->isum -= x;
        p->big = 1;
        p->lsum = (long double)p->isum + (long double)x;
    }
    if (p->hist) {
        p->hist[hl_pctl_bucket(x)]++;
        return;
    }
    *HL_VEC_PUSH(p->v, p->n, p->cap) = x;
    p->sorted = 0;
    if (p->n > HL_PCTL_EXACT_MAX) spill(p);
}

/* Samples by value (radixsort.h); cycle counts rarely need more than two passes. */
#define SAMPLE(x) (x)
HL_RADIX_SORT(sort_u64, uint64_t, SAMPLE)

double hl_pctl_get(hl_pctl_t *p, double q)
{
    if (!p->count) return 0;
    uint64_t k = (uint64_t)ceil(q * (double)p->count - 1e-9);
    if (k < 1) k = 1;
    if (k > p->count) k = p->count;
    if (!p->hist) {
        if (!p->sorted) {
            sort_u64(p->v, p->n);
            p->sorted = 1;
        }
        return (double)p->v[k - 1];
    }
    uint64_t seen = 0;
    for (unsigned b = 0; b < HL_PCTL_BUCKETS; b++) {
        seen += p->hist[b];
        if (seen >= k) {
            uint64_t lo, hi;
            hl_pctl_bucket_range(b, &lo, &hi);
            double mid = ((double)lo + (double)hi) / 2;
            if (mid < (double)p->min) mid = (double)p->min;
            if (mid > (double)p->max) mid = (double)p->max;
            return mid;
        }
    }
    return (double)p->max;
}

double hl_pctl_mean(const hl_pctl_t *p)
{
    return p->count ? (double)(hl_pctl_sum(p) / p->count) : 0;
}

void hl_pctl_free(hl_pctl_t *p)
{
    free(p->v);
    free(p->hist);
    memset(p, 0, sizeof *p);
}
