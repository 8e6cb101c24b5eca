/* analyzer/radixq.h — a monotone priority queue (radix heap) of (key, slot) pairs.
 *
 * The stream's pending free ends are popped in key order and every key pushed is at least
 * the last key popped (a free comes after its allocation, which is the event being
 * emitted). That allows a radix heap: bucket b holds keys whose highest bit differing from
 * the last popped key is bit b-1; a pop empties the lowest non-empty bucket into lower ones.
 * Entries move a few times each, through arrays read and appended in order, where a binary
 * heap of a million entries walks 20 levels of cache misses per pop.
 * A key below the last popped (a corrupt row) is queued as the last popped key.
 */
#ifndef HL_RADIXQ_H
#define HL_RADIXQ_H

#include <stddef.h>
#include <stdint.h>

typedef struct hl_radixq_ent_s {
    uint64_t key;
    uint32_t slot;
} hl_radixq_ent_t;

typedef struct hl_radixq_s {
    hl_radixq_ent_t *b[65];
    size_t n[65], cap[65];
    uint64_t last; /* the last key popped */
    size_t size;
    int min_b; /* when >= 0: the smallest entry is b[min_b][min_i] (bucket 0 empty) */
    size_t min_i;
} hl_radixq_t;

#define HL_RADIXQ_INIT                                                                             \
    {                                                                                              \
        .min_b = -1                                                                                \
    }

void hl_radixq_push(hl_radixq_t *q, uint64_t key, uint32_t slot);
/* The smallest entry, NULL when q is empty. Peeking changes nothing a later push relies on. */
const hl_radixq_ent_t *hl_radixq_top(hl_radixq_t *q);
/* Remove and return a smallest entry (q not empty). Among equal keys, which one is unsaid. */
hl_radixq_ent_t hl_radixq_pop(hl_radixq_t *q);
void hl_radixq_free(hl_radixq_t *q);

#endif
