/* analyzer/radixq.c — see radixq.h. */
#include "radixq.h"

#include <stdlib.h>

#include "hmap.h"

static inline int bucket(uint64_t key, uint64_t last)
{
    return key == last ? 0 : 64 - __builtin_clzll(key ^ last);
}

void hl_radixq_push(hl_radixq_t *q, uint64_t key, uint32_t slot)
{
    if (key < q->last) key = q->last;
    int b = bucket(key, q->last);
    *HL_VEC_PUSH(q->b[b], q->n[b], q->cap[b]) = (hl_radixq_ent_t){key, slot};
    q->size++;
    /* The cached minimum is over buckets 1..64 (bucket 0 is looked at first). */
    if (b > 0 && q->min_b >= 0 && (b < q->min_b || key < q->b[q->min_b][q->min_i].key)) {
        q->min_b = b;
        q->min_i = q->n[b] - 1;
    }
}

/* Find the smallest entry when bucket 0 is empty: scan the lowest non-empty bucket. */
static void find_min(hl_radixq_t *q)
{
    int b = 1;
    while (!q->n[b])
        b++;
    const hl_radixq_ent_t *e = q->b[b];
    size_t best = 0;
    for (size_t i = 1; i < q->n[b]; i++)
        if (e[i].key < e[best].key) best = i;
    q->min_b = b;
    q->min_i = best;
}

const hl_radixq_ent_t *hl_radixq_top(hl_radixq_t *q)
{
    if (!q->size) return NULL;
    if (q->n[0]) return &q->b[0][q->n[0] - 1];
    if (q->min_b < 0) find_min(q);
    return &q->b[q->min_b][q->min_i];
}

hl_radixq_ent_t hl_radixq_pop(hl_radixq_t *q)
{
    if (!q->n[0]) {
        if (q->min_b < 0) find_min(q);
        int b = q->min_b;
        uint64_t m = q->b[b][q->min_i].key;
        q->last = m;
        /* Every entry of bucket b shares the bits above b-1 with m: each lands lower. */
        const hl_radixq_ent_t *e = q->b[b];
        for (size_t i = 0; i < q->n[b]; i++) {
            int d = bucket(e[i].key, m);
            *HL_VEC_PUSH(q->b[d], q->n[d], q->cap[d]) = e[i];
        }
        q->n[b] = 0;
        q->min_b = -1;
    }
    q->size--;
    return q->b[0][--q->n[0]];
}

void hl_radixq_free(hl_radixq_t *q)
{
    for (int b = 0; b < 65; b++)
        free(q->b[b]);
}
