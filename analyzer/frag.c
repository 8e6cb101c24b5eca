/* analyzer/frag.c — see frag.h. */
#include "frag.h"

#include <stdlib.h>
#include <string.h>

#include "radixsort.h"

/* Spans by start address (radixsort.h). */
#define SPAN_LO(x) ((x).lo)
HL_RADIX_SORT(sort_spans, hl_span_t, SPAN_LO)

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
