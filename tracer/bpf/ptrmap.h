/* tracer/bpf/ptrmap.h — open-addressing hash map from a 64-bit key (a pointer) to a 32-bit
 * value (an index), used by attach mode to find the live block of a freed pointer.
 * Linear probing with backward-shift deletion; key 0 is reserved (empty slot). */
#ifndef HL_PTRMAP_H
#define HL_PTRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct hl_ptrmap_s {
    uint64_t *keys;
    uint32_t *vals;
    size_t cap; /* power of two */
    size_t count;
} hl_ptrmap_t;

void hl_ptrmap_init(hl_ptrmap_t *m);
void hl_ptrmap_fini(hl_ptrmap_t *m);
/* Insert or replace. Returns 0, -1 when out of memory. key must not be 0. */
int hl_ptrmap_put(hl_ptrmap_t *m, uint64_t key, uint32_t val);
/* Returns 1 and the value in *val when found. */
int hl_ptrmap_get(const hl_ptrmap_t *m, uint64_t key, uint32_t *val);
/* Remove; returns 1 when the key was present (its value in *val when val is not NULL). */
int hl_ptrmap_del(hl_ptrmap_t *m, uint64_t key, uint32_t *val);

#endif
