/* liballoc/tiny.h — the tiny tier: size classes, slabs, central per-class lists.
 *
 * Slab layout (slab_size bytes, aligned to slab_size; S = slot size of the class):
 *
 *   slab+0        hl_slab_t descriptor, then the per-slot state (hardened mode: a byte a slot)
 *   first-1       header byte of slot 0 (0xA0 | class)       first = align64(hdr_end + 1)
 *                 (align16 in a fixed arena; tiny.c, slab_first)
 *   first         slot 0 user bytes [first, first + S - 1)
 *   first+S-1     header byte of slot 1   <- the last byte of slot 0's S bytes
 *   first+S       slot 1 user bytes …
 *   first+i*S     user pointer of slot i: 16-aligned because S is a multiple of 16
 *
 * A slot's bytes are its S-1 usable bytes followed by the next slot's header byte, so a
 * one-byte overflow changes a neighbour's header and is caught when that block is freed.
 * Slots are carved lazily (bump) so untouched slots cost no RSS.
 *
 * Ownership of a slot: (ptr & ~(slab_size-1)) is its slab: a mask, no search.
 * Invariant per slab: used + |free list| + (nslots - bump) == nslots, where `used` counts
 * slots handed to thread caches or users, and slots waiting on the slab's remote list (below).
 * A slab is on its class's partial list iff it has a free or uncarved slot; on the all list
 * from carving until release.
 * Locking: each class has its own lock (refill, counts, checks); the slab source has another
 * (taken inside a class lock, never the other way round). No free path waits for a class
 * lock: returning slots try-locks it, and when another thread holds it pushes each run of
 * slots of one slab onto that slab's lock-free remote list (a compare-and-swap per run). The
 * first push onto an empty remote list also queues the slab on its class's pending list; the
 * next holder of the class lock takes both lists whole (atomic exchanges) and splices each
 * slab's chain into its free list. Every holder looks at the pending list again after it
 * unlocks, so remote slots wait at most for the current holder.
 */
#ifndef HL_TINY_H
#define HL_TINY_H

#include <stddef.h>
#include <stdint.h>

#define HL_SLAB_MAGIC 0x68536c62u /* "hSlb" */
/* A hardened heap's smallest tiny slot (the 48 bytes of HL_HARDEN_PAD and one header byte
 * round up to it): its slabs' state bytes cover slab_size / HL_HSTATE_SLOT_MIN slots. */
#define HL_HSTATE_SLOT_MIN 64u

typedef struct hl_segment_s hl_segment_t;

typedef struct hl_slab_s {
    uint32_t magic;
    uint8_t cls; /* class, 0xff while free in the source */
    uint8_t on_partial;
    uint8_t decommitted; /* pages given back while free in the source */
    uint32_t gen;        /* bumped at each slab_init: hardened trailers of older lives are stale */
    uint32_t nslots;
    uint32_t used; /* slots out of the slab (thread caches or users) */
    uint32_t bump; /* slots carved so far */
    uint32_t slot_size;
    void *free;                      /* returned slots, linked through their first word */
    char *first;                     /* user pointer of slot 0 */
    struct hl_slab_s *next, *prev;   /* partial list, or the source's free list */
    struct hl_slab_s *anext, *aprev; /* all slabs of the class */
    hl_segment_t *segment;           /* normal mode; NULL when carved from the arena */
    /* Remote list: slots returned while the class lock was busy, linked through their first
     * word; bit 0 set while the slab is queued on its class's pending list (atomic). */
    uintptr_t remote;
    struct hl_slab_s *rnext; /* pending list link (valid while bit 0 of remote is set) */
    /* Hardened mode: a byte per slot, 1 while allocated (harden.c; the allocation's store is
     * a plain one, the free's an exchange); otherwise an unused bitmap. */
    uint64_t state[];
} hl_slab_t;

struct hl_segment_s {
    hl_segment_t *next;
    size_t bytes;
    uint32_t nslabs;
    uint32_t carved;   /* slabs handed out so far (slab 0 is this record) */
    uint32_t reported; /* os_map emitted for this process's trace (hl_region_report) */
};

/* Batches a class keeps between thread caches and slabs (a transfer cache): a full thread
 * bin hands its older half over as one chain in O(1), and an empty bin takes one back in
 * O(1), so blocks that move between threads (freed by one, allocated by another) never go
 * back to their slabs one by one. Each batch records the thread cache that handed it over
 * (whose core last wrote its links), and a refill takes the newest batch of its own thread
 * when there is one, else the newest: a thread whose phases overflow its bins gets its own,
 * cache-warm blocks back instead of blocks another core wrote last (docs/allocator.md). */
#ifndef HL_XFER_SLOTS /* -D at build time for measurements (docs/PERFORMANCE.md) */
#define HL_XFER_SLOTS 8u
#endif

/* A thread bin's base cap: about HL_TINY_CAP_BYTES of slots, 16 to 128 slots (tiny.c); with the
 * bin's second chain (tcap.h) a thread holds up to twice that per class. */
#ifndef HL_TINY_CAP_BYTES /* -D at build time for measurements (docs/PERFORMANCE.md) */
#define HL_TINY_CAP_BYTES (8u << 10)
#endif

typedef struct hl_tiny_class_s {
    hl_lock_t lock;
    hl_slab_t *pending; /* slabs with remote slots, linked through rnext (atomic, lock-free) */
    hl_slab_t *partial;
    hl_slab_t *all;
    size_t slabs;
    unsigned nxfer;                     /* batches held */
    uint32_t xfer_n[HL_XFER_SLOTS];     /* slots in each batch */
    void *xfer[HL_XFER_SLOTS];          /* chains linked through their first word */
    const void *xfer_by[HL_XFER_SLOTS]; /* thread cache that handed each batch over */
} hl_tiny_class_t;

typedef struct hl_tiny_s {
    hl_tiny_class_t cls[HL_CLASS_COUNT];
    hl_lock_t src_lock;    /* slab source */
    hl_slab_t *free_slabs; /* empty slabs kept for reuse */
    size_t nfree_slabs;
    hl_segment_t *segments;
    size_t slab_size;
    size_t slab_extent;          /* bytes a slab may use: slab_size, or slab_size - 16 in arena
                                    mode, where the next slab's TLSF header takes the last 16 */
    uintptr_t slab_mask;         /* ~(slab_size - 1) */
    size_t hdr_size;             /* descriptor + slot state (bits; bytes when hardened) */
    size_t slabs_carved;         /* slabs in use by a class */
    uint32_t caps[HL_CLASS_MAX]; /* thread-cache cap per class (0: no caching) */
} hl_tiny_t;

struct hl_heap_s;
struct hl_tls_s;

void hl_tiny_setup(struct hl_heap_s *h);
/* Allocate one slot of class cls for the calling thread (refill its bin, or a single slot
 * when it caches nothing). Caller: t bound to h, bin cls empty. NULL when out of memory. */
void *hl_tiny_alloc_slow(struct hl_heap_s *h, struct hl_tls_s *t, unsigned cls, hl_opinfo_t *info);
/* Return slots linked through their first word (ends at NULL) of class cls to their slabs:
 * whole runs of one slab at a time, under the class lock if it is free at once, else onto
 * the slabs' remote lists. Never waits for a lock other than the slab source's. */
void hl_tiny_return_chain(struct hl_heap_s *h, unsigned cls, void *chain);
/* A full bin of the calling thread's cache hands over its chain of n slots of class cls: it
 * becomes the bin's second chain (tcap.h), and the second chain it replaces, if any, goes to
 * the transfer cache (or to the slabs when that is full or its lock is busy). */
void hl_tiny_flush_batch(struct hl_heap_s *h, unsigned cls, void *chain, uint32_t n);
/* Free one slot without any cache. */
void hl_tiny_free_direct(struct hl_heap_s *h, void *p, unsigned cls);
/* Give empty slabs back (to the OS or the arena); returns bytes released. */
size_t hl_tiny_trim(struct hl_heap_s *h, int all);
/* Slab of a tiny pointer. */
static inline hl_slab_t *hl_tiny_slab_of(const hl_tiny_t *t, const void *p)
{
    return (hl_slab_t *)((uintptr_t)p & t->slab_mask);
}
size_t hl_tiny_check(struct hl_heap_s *h, int verbose);
/* In a forked child: take back remote slots whose push the fork interrupted. */
void hl_tiny_fork_child(struct hl_heap_s *h);
/* Release every segment of h to the OS (heap destruction). */
void hl_tiny_destroy(struct hl_heap_s *h);
/* Per-class used/held slot counts. */
void hl_tiny_class_counts(struct hl_heap_s *h, unsigned cls, size_t *slabs, size_t *used,
                          size_t *held);

#endif
