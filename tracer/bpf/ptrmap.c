/* tracer/bpf/ptrmap.c — see ptrmap.h. Load factor kept at or below 1/2. */
#include "ptrmap.h"

#include <stdlib.h>

static size_t slot_of(const hl_ptrmap_t *m, uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (m->cap - 1);
}

void hl_ptrmap_init(hl_ptrmap_t *m)
{
    m->keys = NULL;
    m->vals = NULL;
    m->cap = 0;
    m->count = 0;
}

void hl_ptrmap_fini(hl_ptrmap_t *m)
{
    free(m->keys);
    free(m->vals);
    hl_ptrmap_init(m);
}

static int grow(hl_ptrmap_t *m)
{
    hl_ptrmap_t n = {.cap = m->cap ? m->cap * 2 : 1024};
    n.keys = calloc(n.cap, sizeof *n.keys);
    n.vals = calloc(n.cap, sizeof *n.vals);
    if (!n.keys || !n.vals) {
        free(n.keys);
        free(n.vals);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i]) {
            size_t s = slot_of(&n, m->keys[i]);
            while (n.keys[s])
                s = (s + 1) & (n.cap - 1);
            n.keys[s] = m->keys[i];
            n.vals[s] = m->vals[i];
            n.count++;
        }
    free(m->keys);
    free(m->vals);
    *m = n;
    return 0;
}

int hl_ptrmap_put(hl_ptrmap_t *m, uint64_t key, uint32_t val)
{
    if ((m->count + 1) * 2 > m->cap && grow(m) < 0) return -1;
    size_t s = slot_of(m, key);
    while (m->keys[s] && m->keys[s] != key)
        s = (s + 1) & (m->cap - 1);
    if (!m->keys[s]) m->count++;
    m->keys[s] = key;
    m->vals[s] = val;
    return 0;
}

int hl_ptrmap_get(const hl_ptrmap_t *m, uint64_t key, uint32_t *val)
{
    if (!m->cap) return 0;
    for (size_t s = slot_of(m, key); m->keys[s]; s = (s + 1) & (m->cap - 1))
        if (m->keys[s] == key) {
            *val = m->vals[s];
            return 1;
        }
    return 0;
}

int hl_ptrmap_del(hl_ptrmap_t *m, uint64_t key, uint32_t *val)
{
    if (!m->cap) return 0;
    size_t mask = m->cap - 1, s = slot_of(m, key);
    while (m->keys[s] && m->keys[s] != key)
        s = (s + 1) & mask;
    if (!m->keys[s]) return 0;
    if (val) *val = m->vals[s];
    /* Backward shift: move later members of the probe run into the hole when their home
     * slot does not lie cyclically in (hole, their slot]. */
    size_t hole = s;
    for (size_t j = (s + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
        size_t home = slot_of(m, m->keys[j]);
        int stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (!stays) {
            m->keys[hole] = m->keys[j];
            m->vals[hole] = m->vals[j];
            hole = j;
        }
    }
    m->keys[hole] = 0;
    m->count--;
    return 1;
}
