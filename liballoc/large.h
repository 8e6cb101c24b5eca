/* liballoc/large.h — the large tier: one mapping per block.
 *
 * Mapping layout (base page-aligned; off = 48 rounded up to the alignment):
 *
 *   base+0        hl_large_link_t {next, prev, off} (heaps that can be destroyed keep a list)
 *   user-16       mapping length (8 bytes)
 *   user-8        HL_TAG_LARGE << 56 | off       (byte user-1 is the tag)
 *   user = base+off   user data, usable = length - off
 *
 * realloc of a block with off == 48 uses mremap. A freed mapping (unaligned) is kept in a
 * small FIFO cache and handed out again to a request it fits without wasting more than a
 * quarter: steady large-block churn then costs neither mmap/munmap nor page faults. The
 * cache's byte budget adapts to its use: it starts at HL_LARGE_CACHE_MIN, doubles at every
 * reuse and halves whenever a mapping leaves it unused, within [HL_LARGE_CACHE_MIN,
 * HL_LARGE_CACHE_BYTES]; a mapping larger than the budget is not kept. So a program that
 * frees big buffers it never reallocates keeps at most about 1 MiB of them resident (RSS),
 * and one that churns large blocks keeps them. At most HL_LARGE_CACHE_SLOTS mappings;
 * malloc_trim empties it.
 */
#ifndef HL_LARGE_H
#define HL_LARGE_H

#include <stddef.h>

typedef struct hl_large_link_s {
    struct hl_large_link_s *next, *prev;
    size_t off; /* user pointer - base */
} hl_large_link_t;

#define HL_LARGE_CACHE_SLOTS 16u
#define HL_LARGE_CACHE_BYTES (32u << 20)
#define HL_LARGE_CACHE_MIN   (1u << 20)

typedef struct hl_large_cached_s {
    void *base;
    size_t len;
} hl_large_cached_t;

typedef struct hl_large_s {
    hl_lock_t lock; /* guards `list` (non-default heaps only) and the cache */
    hl_large_link_t *list;
    hl_large_cached_t cache[HL_LARGE_CACHE_SLOTS]; /* FIFO ring */
    unsigned cache_head, cache_count;
    size_t cache_bytes;
    size_t cache_budget; /* adaptive, see above (0: not yet set = HL_LARGE_CACHE_MIN) */
    size_t bytes;   /* mapped bytes (atomic) */
    size_t blocks;  /* live blocks (atomic) */
} hl_large_t;

struct hl_heap_s;
void hl_large_setup(struct hl_heap_s *h);
void *hl_large_alloc(struct hl_heap_s *h, size_t n, size_t align, hl_opinfo_t *info);
void hl_large_free(struct hl_heap_s *h, void *p, hl_opinfo_t *info);
/* Resize with mremap; NULL if not possible (block unchanged). */
void *hl_large_realloc(struct hl_heap_s *h, void *p, size_t n, hl_opinfo_t *info);
size_t hl_large_usable(const void *p);
/* Unmap every cached mapping; returns bytes released. */
size_t hl_large_trim(struct hl_heap_s *h);
void hl_large_destroy(struct hl_heap_s *h);

#endif
