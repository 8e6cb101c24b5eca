/* liballoc/large.h — the large tier: one mapping per block.
 *
 * Mapping layout (base page-aligned; off = 48 rounded up to the alignment):
 *
 *   base+0        hl_large_link_t {next, prev, off} (heaps that can be destroyed keep a list)
 *   base+24       origin (32 bits): the kernel mapping the block lies in (cache, below)
 *   base+28       excess (32 bits): pages of the mapping beyond the block's length
 *   user-16       mapping length (8 bytes)
 *   user-8        HL_TAG_LARGE << 56 | off       (byte user-1 is the tag)
 *   user = base+off   user data, usable = length - off
 *
 * realloc of a block with off == 48 uses mremap (of a gathered block, below: a copy).
 *
 * The cache of freed mappings (blocks with off == 48; hardened blocks are never cached). A
 * freed mapping is kept, merged with a cached neighbour of the same origin (below), and handed out
 * again to a later request: the smallest cached mapping that holds it — split when it is more than
 * a quarter (and HL_LARGE_SPLIT_MIN) larger, the tail staying cached, else handed out whole with
 * the extra pages counted as the block's excess (its usable size stays that of a fresh mapping,
 * so what-if replays reproduce it) — or else the largest
 * smaller one, grown with mremap (its pages stay resident; only the growth faults in). mremap
 * needs a range inside one kernel mapping (VMA), so every range carries an *origin*: a new id
 * for each mmap and each successful mremap (the kernel then splits it off), inherited by the
 * pieces of a split (base+24, between the link and the header, for live blocks); only
 * neighbours of one origin merge — adjacent ranges of two mmaps do not.
 * Gathering: when no cached mapping holds a request, the largest smaller one is grown and the
 * growth is filled with up to HL_LARGE_GATHER_MAX other cached pieces, moved there with
 * mremap(MREMAP_FIXED) — page tables move, the pages stay resident, nothing faults in or is
 * copied; a piece longer than the rest of the hole gives its tail and stays cached (pieces and
 * what they leave are at least HL_LARGE_PIECE_MIN: smaller ones cost the 4-thread churn more
 * system time and evictions than they saved, docs/PERFORMANCE.md). Only the
 * part no piece covers faults in. The gathered block spans several kernel mappings: its origin
 * is HL_LARGE_MIXED, it is handed out again whole or split like any cached range,
 * but never merged or resized by mremap (realloc copies it); it is a piece of a later gather
 * itself where the kernel moves ranges over several mappings (Linux 6.17 on; older kernels
 * refuse with EFAULT, the piece is unmapped and later gathers use single-mapping pieces only).
 * Gathers stop while the process has HL_LARGE_MAX_VMAS mappings (counted every HL_LARGE_MOVES_CHECK
 * moves). So steady large-block churn of any size mix costs few system calls and few page faults:
 * what the program filled once is reused as long as the cache keeps it. Keeping memory honest:
 *   - budget: the cache holds at most the large bytes the program had live in the current
 *     or the previous decay period (the larger high-water mark), within [HL_LARGE_CACHE_MIN,
 *     HL_LARGE_CACHE_BYTES]; the oldest entries make room, and a mapping beyond the budget is
 *     unmapped at once. (The current period's mark alone starts each period at the bytes live
 *     at that moment: a pass that ran between two generations of short-lived threads left a
 *     budget of a few MiB, and the next frees evicted the working set the next generation
 *     then faulted in again; docs/PERFORMANCE.md, "The large cache's budget across a
 *     decay period");
 *   - decay: an entry unused for `decay` ms (option decay=MS, default 100) is unmapped by a
 *     decay pass on a later allocator slow path (decay.h) — memory goes back to the OS
 *     after a burst without a background thread; decay=0 turns the cache off;
 *   - malloc_trim empties it. At most HL_LARGE_CACHE_SLOTS mappings.
 */
#ifndef HL_LARGE_H
#define HL_LARGE_H

#include <stddef.h>
#include <stdint.h>

typedef struct hl_large_link_s {
    struct hl_large_link_s *next, *prev;
    size_t off; /* user pointer - base */
} hl_large_link_t;

#define HL_LARGE_CACHE_SLOTS 64u
#define HL_LARGE_CACHE_BYTES (64u << 20)
#define HL_LARGE_CACHE_MIN   (1u << 20)
#define HL_LARGE_SPLIT_MIN   (256u << 10)
/* Cached pieces moved into one block by a gather (below); the process's kernel mappings are
 * counted every HL_LARGE_MOVES_CHECK moves, and gathers stop at HL_LARGE_MAX_VMAS of them (an
 * eighth of the usual vm.max_map_count). */
#define HL_LARGE_GATHER_MAX 4u
#ifndef HL_LARGE_PIECE_MIN /* -D for measurements */
#define HL_LARGE_PIECE_MIN (1u << 20)
#endif
#define HL_LARGE_MOVES_CHECK 256u
#define HL_LARGE_MAX_VMAS    8192u
/* The origin of a range that spans several kernel mappings (a gathered block): it is never
 * resized by mremap, and moved only by kernels that move such ranges. */
#define HL_LARGE_MIXED 0x80000000u

typedef struct hl_large_cached_s {
    char *base;
    size_t len;
    uint32_t origin; /* kernel mapping it lies in (see above) */
    uint32_t stamp;  /* hl_decay_now() when it was freed (or merged) */
} hl_large_cached_t;

typedef struct hl_large_s {
    hl_lock_t lock; /* guards `list` (non-default heaps only) and the cache */
    hl_large_link_t *list;
    hl_large_cached_t cache[HL_LARGE_CACHE_SLOTS]; /* unordered; the oldest by stamp */
    unsigned cache_count;
    size_t cache_bytes;
    size_t live_hw;                  /* high-water mark of `bytes` in this decay period … */
    size_t prev_hw;                  /* … and in the one before: the larger is the cache budget */
    uint32_t hw_stamp;               /* start of this period */
    uint32_t origins;                /* last origin id handed out (atomic) */
    uint32_t moves;                  /* pieces moved by gathers (atomic) */
    uint32_t moves_checked;          /* `moves` when the mappings were last counted */
    uint8_t vmas_checked, gather_ok; /* counted once; room for more mappings */
    uint32_t no_multi_move;          /* the kernel refused to move a range over several mappings */
    size_t bytes;                    /* mapped bytes of live blocks (atomic) */
    size_t blocks;                   /* live blocks (atomic) */
} hl_large_t;

struct hl_heap_s;
void hl_large_setup(struct hl_heap_s *h);
void *hl_large_alloc(struct hl_heap_s *h, size_t n, size_t align, hl_opinfo_t *info);
void hl_large_free(struct hl_heap_s *h, void *p, hl_opinfo_t *info);
/* Resize with mremap; NULL if not possible (block unchanged). */
void *hl_large_realloc(struct hl_heap_s *h, void *p, size_t n, hl_opinfo_t *info);
size_t hl_large_usable(const void *p);
/* Unmap the cached mappings idle for the decay time; returns 1 while some remain cached
 * (another tick is due). Skips the work when the cache is busy. */
int hl_large_decay(struct hl_heap_s *h, uint32_t now);
/* Unmap every cached mapping; returns bytes released. */
size_t hl_large_trim(struct hl_heap_s *h);
void hl_large_destroy(struct hl_heap_s *h);

#endif
