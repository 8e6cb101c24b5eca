/* analyzer/omap.h — an ordered map of address ranges per process (a treap), for the kernel
 * view: live blocks, allocator regions and resident pages, each keyed by (pid, start).
 *
 * Entries of one map never overlap within a process (the callers keep them disjoint), so
 * "what overlaps [a, b)" is: the entry at or before a, then its successors while they start
 * before b. Every operation is O(log n) expected; memory is one 48-byte node per entry, so a
 * map of live blocks stays bounded by the live set.
 */
#ifndef HL_OMAP_H
#define HL_OMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct hl_onode_s {
    int64_t pid;
    uint64_t start, end; /* [start, end) */
    uint64_t aux;        /* the caller's value (a counter) */
    int32_t a, b;        /* the caller's small values (path, class, purpose...) */
    uint32_t prio, left, right;
} hl_onode_t;

typedef struct hl_omap_s {
    hl_onode_t *node; /* node[0] is the nil sentinel */
    size_t n, cap;
    uint32_t root, free_list;
    uint32_t seed;
    size_t len; /* entries */
} hl_omap_t;

/* A zero-initialised map is empty. */
void hl_omap_free(hl_omap_t *m);
/* Insert (or replace) the entry starting at (pid, start); returns it (valid until the next
 * insert). */
hl_onode_t *hl_omap_put(hl_omap_t *m, int64_t pid, uint64_t start, uint64_t end);
/* Remove the entry starting at (pid, start); copies it to *out when given. 1 if found. */
int hl_omap_del(hl_omap_t *m, int64_t pid, uint64_t start, hl_onode_t *out);
/* The entry with the largest start <= addr in pid, or NULL. */
hl_onode_t *hl_omap_floor(const hl_omap_t *m, int64_t pid, uint64_t addr);
/* The entry with the smallest start > addr in pid, or NULL. */
hl_onode_t *hl_omap_next(const hl_omap_t *m, int64_t pid, uint64_t addr);
/* First entry of pid overlapping [a, b), or NULL; continue with hl_omap_next(m, pid,
 * e->start) while the result starts before b. */
hl_onode_t *hl_omap_first_overlap(const hl_omap_t *m, int64_t pid, uint64_t a, uint64_t b);

#endif
