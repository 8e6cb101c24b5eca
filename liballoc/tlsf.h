/* liballoc/tlsf.h — two-level segregated fit (TLSF) allocator over caller-provided pools.
 *
 * O(1) good fit: a free block of size s lives in list (fl, sl), fl = floor(log2 s) class,
 * sl = one of 16 linear subdivisions of it; two bitmaps find the first non-empty list at or
 * above a request's rounded-up (fl, sl) with two find-first-set instructions. Sizes below
 * 256 B have fl 0 and 16 linear lists of 16 B. Worked example: a 1000 B request needs a
 * 1024 B block (1000 plus the 8 B header word, rounded up to 16). The search rounds 1024 up to
 * the next subdivision boundary of [1024, 2048) (step 64): 1024 + 63 = 1087 maps to
 * (fl = 10 - 7 = 3, sl = (1087 >> 6) ^ 16 = 0), and every block in list (3, 0) or above is
 * at least 1024 B, so the first block found fits without a scan.
 *
 * Block layout (b = block address, 16-aligned; user pointer = b + 16):
 *
 *   b+0   prev_size  size of the previous physical block; valid only when PREV_FREE is set.
 *                    While the previous block is used these 8 bytes are the last 8 of its
 *                    payload: a used block costs 8 B (its word), usable = size - 8
 *   b+8   word       bits 0..3 flags (FREE, PREV_FREE, STORE, FIRST)
 *                    bits 4..47 block size (header included, multiple of 16, >= 32)
 *                    bits 48..55 owner (arena index), bits 56..63 tag:
 *                    HL_TAG_MID used / HL_TAG_MID_FREE free — the byte at user-1
 *   b+16  payload    used: user data up to b+size+8 (the successor's prev_size slot)
 *                    free: next_free, prev_free (the segregated list links)
 *
 * Pool layout: [hl_tlsf_pool_t 32 B][block][block]…[sentinel: 16 B header, size 0, used].
 * Invariants (checked by hl_tlsf_check): no two physically adjacent free blocks (immediate
 * coalescing); a block's PREV_FREE equals its predecessor's FREE; a free block's successor
 * holds its size in prev_size; every free block is in exactly the list its size maps to, in
 * the store its STORE flag names, except the block of a parked pool (the whole pool, in no
 * list: hl_tlsf_park_pool); a list is non-empty iff its bitmap bits are set.
 *
 * Rotation (rotate=1): two free stores. Frees go to the inactive store; allocation searches
 * the active one and swaps stores when it cannot serve, or, once HL_TLSF_ROTATE_MIN frees
 * have gone to the inactive store since the last swap, when that store's good fit is a
 * smaller block. Memory freed since the last swap is not handed out (malloc, memalign,
 * in-place growth) before the next swap (use-after-free mitigation; docs/allocator.md).
 * Without rotation store 0 is the only one.
 *
 * Thread safety: none; callers hold their arena lock. Nothing here calls the OS.
 */
#ifndef HL_TLSF_H
#define HL_TLSF_H

#include "hl_schema.h"

#include <stddef.h>
#include <stdint.h>

#define HL_TLSF_SL_LOG2       4
#define HL_TLSF_SL_COUNT      (1u << HL_TLSF_SL_LOG2)
#define HL_TLSF_FL_SHIFT      (HL_TLSF_SL_LOG2 + 4) /* sizes below 256 B: linear lists */
#define HL_TLSF_FL_COUNT      40u                   /* blocks up to 2^47 B */
#define HL_TLSF_HDR           16u                   /* block start to user pointer */
#define HL_TLSF_USED_OVERHEAD 8u                    /* block size - usable size of a used block */
#define HL_TLSF_MIN           32u
#define HL_TLSF_POOL_HDR      32u
/* Bytes of pool overhead: pool header + sentinel. */
#define HL_TLSF_POOL_OVERHEAD (HL_TLSF_POOL_HDR + HL_TLSF_HDR)
/* Rotation: frees into the inactive store before it may be swapped in for a tighter fit. */
#define HL_TLSF_ROTATE_MIN 4u

typedef struct hl_tblock_s hl_tblock_t;

typedef struct hl_tlsf_pool_s {
    struct hl_tlsf_pool_s *next, *prev;
    size_t bytes;         /* whole pool, headers included */
    uint32_t owner_flags; /* the pool owner's (mid.c: reported to the tracer) */
    uint32_t empty_since; /* the owner's (mid.c: when the pool last became empty, decay.h) */
} hl_tlsf_pool_t;

typedef struct hl_tlsf_store_s {
    uint64_t fl_bitmap;
    uint16_t sl_bitmap[HL_TLSF_FL_COUNT];
    hl_tblock_t *heads[HL_TLSF_FL_COUNT][HL_TLSF_SL_COUNT];
    size_t free_bytes; /* block sizes of the free blocks in this store */
    size_t free_blocks;
} hl_tlsf_store_t;

/* The scalars come first, next to whatever precedes the instance (an arena's lock): an
 * instance nobody allocates from touches one page; its two stores (10 KiB of list heads) are
 * written only where lists are used (hl_tlsf_init writes no word that is already zero). */
typedef struct hl_tlsf_s {
    unsigned active; /* store allocations come from */
    unsigned rotate; /* 1: frees go to the other store */
    uint8_t owner;   /* written into every block header */
    hl_tlsf_pool_t *pools;
    size_t pool_bytes;      /* sum of pool sizes (parked pools included) */
    hl_tlsf_pool_t *parked; /* parked pools (hl_tlsf_park_pool), linked through their block */
    size_t parked_bytes;    /* sum of their sizes */
    size_t parked_pools;
    size_t used_bytes; /* sum of used block sizes (headers included) */
    size_t used_blocks;
    uint64_t swaps; /* store rotations */
    uint64_t frees_since_swap;
    hl_tlsf_store_t store[2];
} hl_tlsf_t;

/* What a free did, for the caller's bookkeeping. */
typedef struct hl_tlsf_freed_s {
    void *span;                 /* the resulting free block (its address) */
    size_t span_len;            /* its size */
    int coalesced;              /* merged with a neighbour */
    hl_tlsf_pool_t *empty_pool; /* set when the whole pool is now one free block */
} hl_tlsf_freed_t;

void hl_tlsf_init(hl_tlsf_t *t, uint8_t owner, int rotate);
/* Add [mem, mem+bytes) as a pool; mem 16-aligned; bytes >= 128. Returns 0 or -1. */
int hl_tlsf_add_pool(hl_tlsf_t *t, void *mem, size_t bytes);
/* Remove an entirely free pool (from hl_tlsf_freed_t.empty_pool), parked or not; the caller
 * unmaps it. */
void hl_tlsf_remove_pool(hl_tlsf_t *t, hl_tlsf_pool_t *pool);
/* Park an entirely free pool: its one free block leaves the free lists, so nothing is allocated
 * from it until hl_tlsf_unpark_pool puts it back (into the store it left: rotation's delay holds).
 * A parked pool stays in t->pools: walks, the checker and hl_tlsf_remove_pool see it, and its block
 * keeps its header (free, the whole pool); the block's list links chain the parked pools instead.
 * hl_tlsf_free_bytes and hl_tlsf_largest_free count the free lists only. The owner decides
 * which empty pools serve (mid.c: the pools a busy arena does not need decay instead of
 * taking a share of its blocks). */
void hl_tlsf_park_pool(hl_tlsf_t *t, hl_tlsf_pool_t *pool);
void hl_tlsf_unpark_pool(hl_tlsf_t *t, hl_tlsf_pool_t *pool);
/* The parked pools: the first (NULL if none), and the one after pool. */
hl_tlsf_pool_t *hl_tlsf_parked_next(const hl_tlsf_t *t, const hl_tlsf_pool_t *pool);

/* Allocate n bytes (16-aligned). *split tells whether a block was split. NULL if no fit. */
void *hl_tlsf_malloc(hl_tlsf_t *t, size_t n, int *split);
/* Allocate n bytes aligned to align (power of two). */
void *hl_tlsf_memalign(hl_tlsf_t *t, size_t align, size_t n, int *split);
/* Free a block of this instance; coalesces immediately. */
void hl_tlsf_free(hl_tlsf_t *t, void *ptr, hl_tlsf_freed_t *out);
/* Set by the calling thread around a free whose block was delayed already (a hardened fixed
 * arena's quarantine, harden.c): with rotation it goes to the active store. */
extern __thread int hl_tlsf_free_active;
/* Move used block ptr into a newly allocated n-byte block (n at most its usable size: the
 * first n bytes are copied), then free ptr; NULL (ptr unchanged) when no free block fits. */
void *hl_tlsf_move(hl_tlsf_t *t, void *ptr, size_t n);
/* Grow or shrink in place to n bytes; returns 1 on success, 0 if it cannot (unchanged). */
int hl_tlsf_resize(hl_tlsf_t *t, void *ptr, size_t n);

/* Header accessors, valid on a pointer the caller has classified as a TLSF block. */
size_t hl_tlsf_usable(const void *ptr);
unsigned hl_tlsf_owner(const void *ptr);
/* Block size needed for an n-byte request (0 on overflow). */
size_t hl_tlsf_block_size(size_t n);
/* Largest free block size in either store. */
size_t hl_tlsf_largest_free(const hl_tlsf_t *t);
size_t hl_tlsf_free_bytes(const hl_tlsf_t *t);

/* Visit every block of every pool: cb(block user pointer, size - HL_TLSF_HDR, is_free, arg)
 * (for a used block its usable size is 8 B more: hl_tlsf_usable). */
typedef void (*hl_tlsf_walker_t)(void *ptr, size_t usable, int is_free, void *arg);
void hl_tlsf_walk(const hl_tlsf_t *t, hl_tlsf_walker_t cb, void *arg);
/* Count broken invariants; describe each on stderr when verbose. */
size_t hl_tlsf_check(const hl_tlsf_t *t, int verbose);

#endif
