/* analyzer/hmap.h — growable open-addressing hash map from uint64 keys to uint64 values.
 *
 * Linear probing with backward-shift deletion (no tombstones), load factor at most 1/2, so a
 * lookup touches a couple of slots. Every key is allowed: HL_HMAP_EMPTY (UINT64_MAX) marks
 * unused slots, so that key is kept apart, in one extra slot (ids and pointers read from a
 * damaged database can be anything, -1 included). Memory is
 * 16 bytes per slot, capacity a power of two: the analyzer's live-set maps stay bounded by
 * the live set, not by the trace.
 */
#ifndef HL_HMAP_H
#define HL_HMAP_H

#include <stddef.h>
#include <stdint.h>

#define HL_HMAP_EMPTY UINT64_MAX

typedef struct hl_hmap_slot_s {
    uint64_t key;
    uint64_t val;
} hl_hmap_slot_t;

typedef struct hl_hmap_s {
    hl_hmap_slot_t *slots; /* capacity slots, key HL_HMAP_EMPTY when unused */
    size_t cap;            /* power of two, 0 before the first insert */
    size_t len;            /* used slots; invariant: 2 * len <= cap */
    hl_hmap_slot_t top;    /* the entry of key HL_HMAP_EMPTY, when has_top */
    int has_top;
} hl_hmap_t;

/* A zero-initialised hl_hmap_t is an empty map. */
void hl_hmap_free(hl_hmap_t *m);
/* Pointer to the value of key, or NULL. Valid until the next insert or delete. */
uint64_t *hl_hmap_get(const hl_hmap_t *m, uint64_t key);
/* Pointer to the value of key, inserting it with value def when absent (*fresh tells which).
 * Aborts on out-of-memory (the analyzer cannot continue without its maps). */
uint64_t *hl_hmap_put(hl_hmap_t *m, uint64_t key, uint64_t def, int *fresh);
/* Remove key; returns 1 if it was there (its value in *old when old is not NULL). */
int hl_hmap_del(hl_hmap_t *m, uint64_t key, uint64_t *old);

/* Iterate: for (size_t i = 0; hl_hmap_iter(m, &i, &slot);) ... */
int hl_hmap_iter(const hl_hmap_t *m, size_t *i, const hl_hmap_slot_t **slot);

/* Growable array helper: make room for n more elements of size sz in *buf (cap in *cap). */
void hl_vec_reserve(void **buf, size_t *cap, size_t len, size_t n, size_t sz);
/* Pointer to a new last element of buf (len grows by one); the call only when full. */
#define HL_VEC_PUSH(buf, len, cap)                                                                 \
    ((len) < (cap) ? (void)0 : hl_vec_reserve((void **)&(buf), &(cap), (len), 1, sizeof *(buf)),   \
     &(buf)[(len)++])

#endif
