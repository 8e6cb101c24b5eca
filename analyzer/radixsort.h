/* analyzer/radixsort.h — an LSD radix sort on a 64-bit key, for arrays of any element type.
 *
 * HL_RADIX_SORT(name, type, KEY) defines `static void name(type *a, size_t n)`, sorting a by
 * KEY(element), a uint64_t. 11 bits a pass; a pass whose digit is the same for every element
 * is skipped, found by one scan before any pass (the high bits of addresses, of cycle
 * counts: most sorts of cycle samples take one or two passes), so it is O(n) where qsort's
 * callbacks dominated the analysis. Stable; one scratch array of n elements, abort() when it
 * cannot be allocated. Below HL_RADIX_SMALL elements an insertion sort (stable too) runs
 * instead: each pass clears a 16 KiB count array, far more than sorting a few elements costs
 * (the per-site cycle samples are mostly such small arrays).
 */
#ifndef HL_RADIXSORT_H
#define HL_RADIXSORT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HL_RADIX_SMALL 64

#define HL_RADIX_SORT(name, type, KEY)                                                             \
    static void name(type *a, size_t n)                                                            \
    {                                                                                              \
        if (n < 2) return;                                                                         \
        if (n < HL_RADIX_SMALL) {                                                                  \
            for (size_t i = 1; i < n; i++) {                                                       \
                type x = a[i];                                                                     \
                size_t j = i;                                                                      \
                for (; j > 0 && (uint64_t)KEY(a[j - 1]) > (uint64_t)KEY(x); j--)                   \
                    a[j] = a[j - 1];                                                               \
                a[j] = x;                                                                          \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        /* The bits in which some key differs from the first: a pass over a digit without any      \
         * is skipped before its count array is even cleared. */                                   \
        uint64_t vary = 0, k0 = (uint64_t)KEY(a[0]);                                               \
        for (size_t i = 1; i < n; i++)                                                             \
            vary |= (uint64_t)KEY(a[i]) ^ k0;                                                      \
        if (!vary) return;                                                                         \
        type *tmp = malloc(n * sizeof *tmp), *src = a, *dst = tmp;                                 \
        if (!tmp) abort();                                                                         \
        for (unsigned shift = 0; shift < 64; shift += 11) {                                        \
            if (!((vary >> shift) & 2047)) continue;                                               \
            size_t count[2048] = {0};                                                              \
            for (size_t i = 0; i < n; i++)                                                         \
                count[((uint64_t)KEY(src[i]) >> shift) & 2047]++;                                  \
            if (count[((uint64_t)KEY(src[0]) >> shift) & 2047] == n) continue;                     \
            size_t sum = 0;                                                                        \
            for (size_t d = 0; d < 2048; d++) {                                                    \
                size_t c = count[d];                                                               \
                count[d] = sum;                                                                    \
                sum += c;                                                                          \
            }                                                                                      \
            for (size_t i = 0; i < n; i++)                                                         \
                dst[count[((uint64_t)KEY(src[i]) >> shift) & 2047]++] = src[i];                    \
            type *t = src;                                                                         \
            src = dst;                                                                             \
            dst = t;                                                                               \
        }                                                                                          \
        if (src != a) memcpy(a, src, n * sizeof *a);                                               \
        free(tmp);                                                                                 \
    }

#endif
