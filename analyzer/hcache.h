/* analyzer/hcache.h — a small direct-mapped cache of uint64 key -> value pairs in front of a
 * hash map (hmap.h).
 *
 * The analysis looks up the same few keys event after event (a program's hot allocation
 * stacks, its threads): one compare in a 256-slot table instead of a hash probe, a bounds
 * check and a call. Two ways to use it:
 *   - read cache: the map is the truth, the cache holds copies of entries that never change
 *     (hl_hcache_get, then hl_hcache_fill after a map lookup);
 *   - write-back: the cache holds the newest value of its keys and the map the others
 *     (hl_hcache_store writes an evicted entry back to the map; read through hl_hcache_get,
 *     then the map; hl_hcache_flush before reading the map alone).
 * Memory: 4 KiB + 256 bytes.
 */
#ifndef HL_HCACHE_H
#define HL_HCACHE_H

#include <stdint.h>

#include "hmap.h"

#define HL_HCACHE_SLOTS 256

typedef struct hl_hcache_s {
    uint64_t key[HL_HCACHE_SLOTS], val[HL_HCACHE_SLOTS];
    uint8_t used[HL_HCACHE_SLOTS];
} hl_hcache_t;

static inline unsigned hl_hcache_slot(uint64_t key)
{
    return (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 56);
}

/* 1 with *val when key is cached, else 0. */
static inline int hl_hcache_get(const hl_hcache_t *c, uint64_t key, uint64_t *val)
{
    unsigned i = hl_hcache_slot(key);
    if (!c->used[i] || c->key[i] != key) return 0;
    *val = c->val[i];
    return 1;
}

/* Read cache: remember key -> val (an entry of the map), replacing the slot's entry. */
static inline void hl_hcache_fill(hl_hcache_t *c, uint64_t key, uint64_t val)
{
    unsigned i = hl_hcache_slot(key);
    c->key[i] = key;
    c->val[i] = val;
    c->used[i] = 1;
}

/* Write-back: key's value is now val; the slot's other key, if any, goes back to m. */
static inline void hl_hcache_store(hl_hcache_t *c, hl_hmap_t *m, uint64_t key, uint64_t val)
{
    unsigned i = hl_hcache_slot(key);
    if (c->used[i] && c->key[i] != key) *hl_hmap_put(m, c->key[i], 0, NULL) = c->val[i];
    c->key[i] = key;
    c->val[i] = val;
    c->used[i] = 1;
}

#endif
