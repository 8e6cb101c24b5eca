/* liballoc/quarantine.h — FIFO of freed blocks, bounded in bytes (hardened mode).
 *
 * A ring of (pointer, bytes) entries mapped once (no allocation); pushing beyond the byte
 * budget or the entry capacity pops the oldest entries, which the caller then verifies
 * (poison) and really releases — outside the quarantine lock. The lock is a plain mutex taken
 * for a few stores; fork handling: hl_quarantine_lock/unlock around fork (harden.c).
 */
#ifndef HL_QUARANTINE_H
#define HL_QUARANTINE_H

#include "internal.h"

typedef struct hl_qentry_s {
    void *p;
    size_t bytes;
} hl_qentry_t;

typedef struct hl_quarantine_s {
    hl_lock_t lock;
    hl_qentry_t *ring; /* cap entries, mmap'ed */
    size_t cap;
    size_t lcap; /* entries in use: the ring wraps here (<= cap; touched pages follow it) */
    size_t want; /* lcap asked for by hl_quarantine_set_budget (atomic) */
    size_t head; /* oldest entry */
    size_t count;
    size_t bytes;  /* sum of entry bytes */
    size_t budget; /* bytes held at most (atomic: hl_quarantine_set_budget may change it) */
} hl_quarantine_t;

/* Map a ring of cap entries for a budget of `budget` bytes. 0 or -1. */
int hl_quarantine_init(hl_quarantine_t *q, size_t budget, size_t cap);
void hl_quarantine_fini(hl_quarantine_t *q);
/* Add p (bytes); moves the entries that must leave (oldest first) into out[0..max) and
 * returns their count. An entry bigger than the budget is not kept: returned at once. */
size_t hl_quarantine_push(hl_quarantine_t *q, void *p, size_t bytes, void **out, size_t max);
/* The same for n blocks under one lock (bytes of each below 4 GiB); out must hold max >= n
 * entries: the blocks that must leave and those that could not be kept. */
size_t hl_quarantine_push_batch(hl_quarantine_t *q, void *const *p, const uint32_t *bytes, size_t n,
                                void **out, size_t max);
/* Change the byte budget and the entry capacity (<= the mapped cap) (any thread, no lock):
 * the next pushes evict down to them, at most their `max` blocks each, so that a lower budget
 * is reached over a few batches; the ring's wrap point moves when its entries allow. */
void hl_quarantine_set_budget(hl_quarantine_t *q, size_t budget, size_t entries);
/* Take up to max of the oldest entries out (all of them when called until it returns 0). */
size_t hl_quarantine_drain(hl_quarantine_t *q, void **out, size_t max);
/* The same with each entry's bytes (below 4 GiB, as hl_quarantine_push_batch takes them). */
size_t hl_quarantine_take(hl_quarantine_t *q, void **out, uint32_t *bytes, size_t max);
/* Visit every entry, oldest first, under the lock. */
void hl_quarantine_walk(hl_quarantine_t *q, void (*cb)(void *p, void *arg), void *arg);

#endif
