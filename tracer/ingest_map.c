/* tracer/ingest_map.c — open-addressing hash map, u64 → u64, linear probing.
 *
 * Used for the live-block table (key = process index << 48 | pointer), stack ids and
 * threads. Deletion shifts the following cluster back (no tombstones), so a table whose
 * live set stays small stays fast however many keys went through it. Invariant:
 * count <= cap / 2; empty slots hold HL_MAP_EMPTY.
 */
#include "ingest_internal.h"

#include <stdlib.h>
#include <string.h>

#define HL_MAP_EMPTY UINT64_MAX

static inline size_t slot_of(const hl_map_t *m, uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (m->cap - 1);
}

int hl_map_init(hl_map_t *m, size_t cap)
{
    size_t c = 16;
    while (c < cap)
        c <<= 1;
    m->keys = malloc(c * sizeof *m->keys);
    m->vals = malloc(c * sizeof *m->vals);
    if (!m->keys || !m->vals) {
        free(m->keys);
        free(m->vals);
        return -1;
    }
    memset(m->keys, 0xff, c * sizeof *m->keys);
    m->cap = c;
    m->count = 0;
    return 0;
}

void hl_map_destroy(hl_map_t *m)
{
    free(m->keys);
    free(m->vals);
    m->keys = m->vals = NULL;
    m->cap = m->count = 0;
}

uint64_t *hl_map_find(const hl_map_t *m, uint64_t key)
{
    for (size_t i = slot_of(m, key);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == key) return &m->vals[i];
        if (m->keys[i] == HL_MAP_EMPTY) return NULL;
    }
}

static int grow(hl_map_t *m)
{
    hl_map_t n;
    if (hl_map_init(&n, m->cap * 2) != 0) return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i] != HL_MAP_EMPTY) hl_map_put(&n, m->keys[i], m->vals[i]);
    hl_map_destroy(m);
    *m = n;
    return 0;
}

int hl_map_put(hl_map_t *m, uint64_t key, uint64_t val)
{
    if ((m->count + 1) * 2 > m->cap && grow(m) != 0) return -1;
    size_t i = slot_of(m, key);
    while (m->keys[i] != HL_MAP_EMPTY && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (m->keys[i] == HL_MAP_EMPTY) m->count++;
    m->keys[i] = key;
    m->vals[i] = val;
    return 0;
}

int hl_map_del(hl_map_t *m, uint64_t key, uint64_t *val)
{
    size_t mask = m->cap - 1, i = slot_of(m, key);
    while (m->keys[i] != key) {
        if (m->keys[i] == HL_MAP_EMPTY) return 0;
        i = (i + 1) & mask;
    }
    if (val) *val = m->vals[i];
    /* Backward-shift: move later members of the cluster into the hole when their home slot
     * does not lie (cyclically) between the hole and their position. */
    for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
        if (m->keys[j] == HL_MAP_EMPTY) break;
        size_t home = slot_of(m, m->keys[j]);
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            i = j;
        }
    }
    m->keys[i] = HL_MAP_EMPTY;
    m->count--;
    return 1;
}
