/* liballoc/suggest.c — see suggest.h. */
#include "suggest.h"

#include <string.h>

size_t hl_edit_distance(const char *a, size_t alen, const char *b, size_t blen)
{
    if (alen > HL_SUGGEST_MAX || blen > HL_SUGGEST_MAX) return HL_SUGGEST_FAR;
    /* Three rows of the distance matrix: i-2, i-1, i (transpositions look two rows back). */
    size_t row[3][HL_SUGGEST_MAX + 1];
    for (size_t j = 0; j <= blen; j++)
        row[0][j] = j;
    for (size_t i = 1; i <= alen; i++) {
        size_t *cur = row[i % 3], *prev = row[(i - 1) % 3], *prev2 = row[(i + 1) % 3];
        cur[0] = i;
        for (size_t j = 1; j <= blen; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t d = prev[j - 1] + cost;              /* substitution (or match) */
            if (prev[j] + 1 < d) d = prev[j] + 1;       /* deletion */
            if (cur[j - 1] + 1 < d) d = cur[j - 1] + 1; /* insertion */
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                prev2[j - 2] + 1 < d)
                d = prev2[j - 2] + 1; /* transposition */
            cur[j] = d;
        }
    }
    return row[alen % 3][blen];
}

const char *hl_suggest(const char *word, size_t len, const void *base, size_t n, size_t stride)
{
    size_t limit = len <= 4 ? 1 : 2, best_d = HL_SUGGEST_FAR;
    const char *best = NULL;
    for (size_t i = 0; i < n; i++) {
        const char *name;
        memcpy(&name, (const char *)base + i * stride, sizeof name);
        if (!name) break;
        size_t d = hl_edit_distance(word, len, name, strlen(name));
        if (d <= limit && d < len && d < best_d) {
            best_d = d;
            best = name;
        }
    }
    return best;
}
