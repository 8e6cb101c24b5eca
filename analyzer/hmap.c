/* analyzer/hmap.c — see hmap.h. */
#include "hmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(void)
{
    fputs("heapledger: out of memory\n", stderr);
    abort();
}

/* Fibonacci hashing: keys are pointers and ids, often with low bits all zero. */
static inline size_t slot_of(uint64_t key, size_t cap)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

void hl_hmap_free(hl_hmap_t *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

uint64_t *hl_hmap_get(const hl_hmap_t *m, uint64_t key)
{
    if (key == HL_HMAP_EMPTY) return m->has_top ? (uint64_t *)&m->top.val : NULL;
    if (!m->cap) return NULL;
    for (size_t i = slot_of(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->slots[i].key == key) return &m->slots[i].val;
        if (m->slots[i].key == HL_HMAP_EMPTY) return NULL;
    }
}

static void grow(hl_hmap_t *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    hl_hmap_slot_t *ns = malloc(ncap * sizeof *ns);
    if (!ns) oom();
    for (size_t i = 0; i < ncap; i++)
        ns[i].key = HL_HMAP_EMPTY;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].key == HL_HMAP_EMPTY) continue;
        size_t j = slot_of(m->slots[i].key, ncap);
        while (ns[j].key != HL_HMAP_EMPTY)
            j = (j + 1) & (ncap - 1);
        ns[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = ns;
    m->cap = ncap;
}

uint64_t *hl_hmap_put(hl_hmap_t *m, uint64_t key, uint64_t def, int *fresh)
{
    if (key == HL_HMAP_EMPTY) {
        if (fresh) *fresh = !m->has_top;
        if (!m->has_top) m->top = (hl_hmap_slot_t){key, def};
        m->has_top = 1;
        return &m->top.val;
    }
    if (2 * (m->len + 1) > m->cap) grow(m);
    size_t i = slot_of(key, m->cap);
    for (;; i = (i + 1) & (m->cap - 1)) {
        if (m->slots[i].key == key) {
            if (fresh) *fresh = 0;
            return &m->slots[i].val;
        }
        if (m->slots[i].key == HL_HMAP_EMPTY) break;
    }
    m->slots[i].key = key;
    m->slots[i].val = def;
    m->len++;
    if (fresh) *fresh = 1;
    return &m->slots[i].val;
}

int hl_hmap_del(hl_hmap_t *m, uint64_t key, uint64_t *old)
{
    if (key == HL_HMAP_EMPTY) {
        if (!m->has_top) return 0;
        if (old) *old = m->top.val;
        m->has_top = 0;
        return 1;
    }
    if (!m->cap) return 0;
    size_t mask = m->cap - 1, i = slot_of(key, m->cap);
    for (;; i = (i + 1) & mask) {
        if (m->slots[i].key == HL_HMAP_EMPTY) return 0;
        if (m->slots[i].key == key) break;
    }
    if (old) *old = m->slots[i].val;
    /* Backward shift: move later members of the probe run into the hole when their home
     * slot does not lie cyclically in (hole, j]. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->slots[j].key != HL_HMAP_EMPTY; j = (j + 1) & mask) {
        size_t home = slot_of(m->slots[j].key, m->cap);
        int in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!in_range) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].key = HL_HMAP_EMPTY;
    m->len--;
    return 1;
}

int hl_hmap_iter(const hl_hmap_t *m, size_t *i, const hl_hmap_slot_t **slot)
{
    for (; *i < m->cap; (*i)++) {
        if (m->slots[*i].key != HL_HMAP_EMPTY) {
            *slot = &m->slots[(*i)++];
            return 1;
        }
    }
    if (*i == m->cap && m->has_top) { /* the kept-apart key comes last */
        (*i)++;
        *slot = &m->top;
        return 1;
    }
    return 0;
}

void hl_vec_reserve(void **buf, size_t *cap, size_t len, size_t n, size_t sz)
{
    if (len + n <= *cap) return;
    size_t ncap = *cap ? *cap : 16;
    while (ncap < len + n)
        ncap *= 2;
    void *nb = realloc(*buf, ncap * sz);
    if (!nb) oom();
    *buf = nb;
    *cap = ncap;
}
