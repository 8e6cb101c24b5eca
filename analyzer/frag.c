/* analyzer/frag.c — see frag.h. */
#include "frag.h"

#include <stdlib.h>
#include <string.h>

/* LSD radix sort of spans by lo, 11 bits a pass; passes whose digit is the same for every
 * span (the high bits of addresses) are skipped. O(n) where qsort's callbacks dominated the
 * analysis time. */
static void sort_spans(hl_span_t *a, size_t n)
{
    if (n < 2) return;
    hl_span_t *tmp = malloc(n * sizeof *tmp);
    if (!tmp) abort();
    hl_span_t *src = a, *dst = tmp;
    for (unsigned shift = 0; shift < 64; shift += 11) {
        size_t count[2048] = {0};
        for (size_t i = 0; i < n; i++)
            count[(src[i].lo >> shift) & 2047]++;
        if (count[(src[0].lo >> shift) & 2047] == n) continue;
        size_t sum = 0;
        for (size_t d = 0; d < 2048; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[count[(src[i].lo >> shift) & 2047]++] = src[i];
        hl_span_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
    free(tmp);
}

hl_frag_t hl_frag_compute(hl_span_t *regions, size_t nregions, hl_span_t *used, size_t nused)
{
    hl_frag_t f = {0, 0, 0, 0};
    sort_spans(regions, nregions);
    sort_spans(used, nused);
    size_t j = 0;
    for (size_t r = 0; r < nregions; r++) {
        uint64_t cur = regions[r].lo, end = regions[r].hi;
        /* Skip occupied ranges ending before this region. */
        while (j < nused && used[j].hi <= cur)
            j++;
        for (size_t k = j; k < nused && used[k].lo < end; k++) {
            if (used[k].hi <= cur) continue;
            if (used[k].lo > cur) {
                uint64_t len = used[k].lo - cur;
                f.free_bytes += len;
                f.spans++;
                if (len > f.largest) f.largest = len;
            }
            if (used[k].hi > cur) cur = used[k].hi;
        }
        if (cur < end) {
            uint64_t len = end - cur;
            f.free_bytes += len;
            f.spans++;
            if (len > f.largest) f.largest = len;
        }
    }
    f.external = f.free_bytes ? 1.0 - (double)f.largest / (double)f.free_bytes : 0.0;
    return f;
}
