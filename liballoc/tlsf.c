/* liballoc/tlsf.c — two-level segregated fit; see tlsf.h for the layout and invariants. */
#include "internal.h"

#include <string.h>
#include <unistd.h>

#define F_FREE      1u
#define F_PREV_FREE 2u
#define F_STORE     4u
#define F_FIRST     8u
#define F_MASK      15u
#define SIZE_MASK   0x0000fffffffffff0ull
#define SMALL_LIMIT (1u << HL_TLSF_FL_SHIFT)

struct hl_tblock_s {
    size_t prev_size;
    uint64_t word;
    hl_tblock_t *next_free; /* only while free */
    hl_tblock_t *prev_free;
};

_Static_assert(sizeof(hl_tlsf_pool_t) == HL_TLSF_POOL_HDR, "pool header size");
_Static_assert(offsetof(hl_tblock_t, next_free) == HL_TLSF_HDR, "block header size");
_Static_assert(HL_TLSF_SL_COUNT <= 16, "sl bitmap is 16 bits");
_Static_assert(HL_TLSF_FL_COUNT <= 64, "fl bitmap is 64 bits");

/* ---- block helpers ------------------------------------------------------------------- */

static inline size_t block_size(const hl_tblock_t *b)
{
    return b->word & SIZE_MASK;
}
static inline unsigned block_flags(const hl_tblock_t *b)
{
    return b->word & F_MASK;
}
static inline int block_is_free(const hl_tblock_t *b)
{
    return (b->word & F_FREE) != 0;
}
static inline unsigned block_store(const hl_tblock_t *b)
{
    return (b->word & F_STORE) ? 1 : 0;
}
static inline hl_tblock_t *block_next(const hl_tblock_t *b)
{
    return (hl_tblock_t *)((char *)b + block_size(b));
}
static inline hl_tblock_t *block_prev(const hl_tblock_t *b)
{
    return (hl_tblock_t *)((char *)b - b->prev_size);
}
static inline void *block_user(hl_tblock_t *b)
{
    return (char *)b + HL_TLSF_HDR;
}
static inline hl_tblock_t *block_of(const void *p)
{
    return (hl_tblock_t *)((char *)p - HL_TLSF_HDR);
}
static inline void block_set(hl_tblock_t *b, size_t size, unsigned flags, unsigned owner)
{
    unsigned tag = (flags & F_FREE) ? HL_TAG_MID_FREE : HL_TAG_MID;
    b->word = ((uint64_t)tag << 56) | ((uint64_t)owner << 48) | (size & SIZE_MASK) | flags;
}
static inline void block_set_flag(hl_tblock_t *b, unsigned f, int on)
{
    if (on)
        b->word |= f;
    else
        b->word &= ~(uint64_t)f;
}
/* Tell the successor of free block b about it. */
static inline void block_link_next(hl_tblock_t *b)
{
    hl_tblock_t *n = block_next(b);
    n->prev_size = block_size(b);
    block_set_flag(n, F_PREV_FREE, 1);
}

/* ---- size mapping -------------------------------------------------------------------- */

static inline unsigned fls_sz(size_t x)
{
    return 63u - (unsigned)__builtin_clzll(x);
}

static inline void mapping_insert(size_t size, unsigned *fl, unsigned *sl)
{
    if (size < SMALL_LIMIT) {
        *fl = 0;
        *sl = (unsigned)(size >> 4);
    } else {
        unsigned f = fls_sz(size);
        *sl = (unsigned)(size >> (f - HL_TLSF_SL_LOG2)) ^ HL_TLSF_SL_COUNT;
        *fl = f - (HL_TLSF_FL_SHIFT - 1);
    }
}

/* Round size up to the next list boundary so that any block found there fits. */
static inline void mapping_search(size_t size, unsigned *fl, unsigned *sl)
{
    if (size >= SMALL_LIMIT) size += ((size_t)1 << (fls_sz(size) - HL_TLSF_SL_LOG2)) - 1;
    mapping_insert(size, fl, sl);
}

/* ---- free lists ---------------------------------------------------------------------- */

static void list_insert(hl_tlsf_t *t, hl_tblock_t *b, unsigned store)
{
    hl_tlsf_store_t *s = &t->store[store];
    unsigned fl, sl;
    mapping_insert(block_size(b), &fl, &sl);
    hl_tblock_t *head = s->heads[fl][sl];
    b->next_free = head;
    b->prev_free = NULL;
    if (head) head->prev_free = b;
    s->heads[fl][sl] = b;
    s->fl_bitmap |= 1ull << fl;
    s->sl_bitmap[fl] |= (uint16_t)(1u << sl);
    s->free_bytes += block_size(b);
    s->free_blocks++;
    block_set_flag(b, F_STORE, store);
}

static void list_remove(hl_tlsf_t *t, hl_tblock_t *b)
{
    hl_tlsf_store_t *s = &t->store[block_store(b)];
    unsigned fl, sl;
    mapping_insert(block_size(b), &fl, &sl);
    if (b->prev_free)
        b->prev_free->next_free = b->next_free;
    else
        s->heads[fl][sl] = b->next_free;
    if (b->next_free) b->next_free->prev_free = b->prev_free;
    if (!s->heads[fl][sl]) {
        s->sl_bitmap[fl] &= (uint16_t) ~(1u << sl);
        if (!s->sl_bitmap[fl]) s->fl_bitmap &= ~(1ull << fl);
    }
    s->free_bytes -= block_size(b);
    s->free_blocks--;
}

static hl_tblock_t *store_find(hl_tlsf_store_t *s, size_t size)
{
    unsigned fl, sl;
    mapping_search(size, &fl, &sl);
    if (fl >= HL_TLSF_FL_COUNT) return NULL;
    unsigned sl_map = s->sl_bitmap[fl] & (~0u << sl);
    if (!sl_map) {
        uint64_t fl_map = fl + 1 < 64 ? s->fl_bitmap & (~0ull << (fl + 1)) : 0;
        if (!fl_map) return NULL;
        fl = (unsigned)__builtin_ctzll(fl_map);
        sl_map = s->sl_bitmap[fl];
    }
    sl = (unsigned)__builtin_ctz(sl_map);
    return s->heads[fl][sl];
}

/* First fit inside the list a size maps to (its blocks straddle the size). */
static hl_tblock_t *list_fit(hl_tlsf_store_t *s, size_t size)
{
    unsigned fl, sl;
    mapping_insert(size, &fl, &sl);
    if (fl >= HL_TLSF_FL_COUNT) return NULL;
    for (hl_tblock_t *b = s->heads[fl][sl]; b; b = b->next_free)
        if (block_size(b) >= size) return b;
    return NULL;
}

/* Find a free block of at least size bytes, rotating stores when allowed. The O(1) search
 * looks only at lists whose every block fits; when it finds none, the request's own list may
 * still hold a block large enough: scan it (first fit) before giving up, so that a nearly
 * full fixed arena serves what it can (peak utilisation before exhaustion). */
static inline void swap_stores(hl_tlsf_t *t)
{
    t->active ^= 1;
    t->swaps++;
    t->frees_since_swap = 0;
}

static hl_tblock_t *find_block(hl_tlsf_t *t, size_t size)
{
    hl_tblock_t *b = store_find(&t->store[t->active], size);
    /* Rotation: the other store is searched when the active one cannot serve, or, once
     * HL_TLSF_ROTATE_MIN frees have gone to it since the last swap, for a tighter fit (a
     * smaller block): then the stores swap rather than split a bigger block of the active
     * one (small requests would otherwise cut up its large blocks while tight holes wait). */
    if (t->rotate && (!b || t->frees_since_swap >= HL_TLSF_ROTATE_MIN)) {
        hl_tblock_t *c = store_find(&t->store[t->active ^ 1], size);
        if (c && (!b || block_size(c) < block_size(b))) {
            swap_stores(t);
            b = c;
        }
    }
    if (!b) b = list_fit(&t->store[t->active], size);
    if (!b && t->rotate) {
        b = list_fit(&t->store[t->active ^ 1], size);
        if (b) swap_stores(t);
    }
    return b;
}

__thread int hl_tlsf_free_active __attribute__((tls_model("initial-exec")));

/* Store a newly freed (or split-off) block goes to. */
static inline unsigned free_store(const hl_tlsf_t *t)
{
    return t->rotate ? t->active ^ 1 : 0;
}

/* Split the tail off used-to-be block b (removed from lists, marked used) so that b keeps
 * `size` bytes; the tail becomes free in store `store`, merged with a free successor.
 * Returns 1 if a split happened. */
static int split_tail(hl_tlsf_t *t, hl_tblock_t *b, size_t size, unsigned store)
{
    size_t total = block_size(b);
    if (total - size < HL_TLSF_MIN) return 0;
    hl_tblock_t *r = (hl_tblock_t *)((char *)b + size);
    size_t rsize = total - size;
    hl_tblock_t *n = (hl_tblock_t *)((char *)b + total);
    unsigned bflags = block_flags(b) & (F_PREV_FREE | F_FIRST);
    block_set(b, size, bflags, t->owner);
    if (block_is_free(n)) {
        list_remove(t, n);
        rsize += block_size(n);
    }
    block_set(r, rsize, F_FREE, t->owner);
    block_link_next(r);
    list_insert(t, r, store);
    return 1;
}

/* Take free block b (already found) for a block of `size` bytes. */
static void *use_block(hl_tlsf_t *t, hl_tblock_t *b, size_t size, int *split)
{
    unsigned store = block_store(b);
    list_remove(t, b);
    unsigned keep = block_flags(b) & F_FIRST; /* prev of a free block is never free */
    block_set(b, block_size(b), keep, t->owner);
    int s = split_tail(t, b, size, store);
    if (!s) block_set_flag(block_next(b), F_PREV_FREE, 0);
    if (split) *split = s;
    t->used_bytes += block_size(b);
    t->used_blocks++;
    return block_user(b);
}

/* ---- public ---------------------------------------------------------------------------- */

/* Zero [p, p + n) (n a multiple of 8) without writing the words already zero: the pages of a
 * fresh mapping or of .bss that nothing used stay the shared zero page, out of the RSS. */
static void zero_lazily(void *p, size_t n)
{
    uint64_t *w = p;
    for (size_t i = 0; i < n / 8; i++)
        if (w[i]) w[i] = 0;
}

void hl_tlsf_init(hl_tlsf_t *t, uint8_t owner, int rotate)
{
    _Static_assert(sizeof *t % 8 == 0, "hl_tlsf_t is whole words");
    zero_lazily(t, sizeof *t);
    t->owner = owner;
    t->rotate = rotate ? 1 : 0;
}

int hl_tlsf_add_pool(hl_tlsf_t *t, void *mem, size_t bytes)
{
    if (((uintptr_t)mem & 15) || bytes < 128) return -1;
    bytes &= ~(size_t)15;
    if (bytes - HL_TLSF_POOL_OVERHEAD > SIZE_MASK) return -1;
    hl_tlsf_pool_t *pool = mem;
    pool->bytes = bytes;
    pool->owner_flags = 0;
    pool->empty_since = 0;
    pool->prev = NULL;
    pool->next = t->pools;
    if (t->pools) t->pools->prev = pool;
    t->pools = pool;
    t->pool_bytes += bytes;

    hl_tblock_t *b = (hl_tblock_t *)((char *)mem + HL_TLSF_POOL_HDR);
    size_t size = bytes - HL_TLSF_POOL_OVERHEAD;
    b->prev_size = 0;
    block_set(b, size, F_FREE | F_FIRST, t->owner);
    hl_tblock_t *sentinel = block_next(b);
    block_set(sentinel, 0, 0, t->owner);
    block_link_next(b);
    list_insert(t, b, t->active);
    return 0;
}

/* ---- parked pools (tlsf.h) ------------------------------------------------------------------ */

/* The link of a parked pool: the first word of its block's payload (next_free while listed). */
static hl_tlsf_pool_t **parked_link(const hl_tlsf_pool_t *pool)
{
    return (hl_tlsf_pool_t **)((char *)pool + HL_TLSF_POOL_HDR + HL_TLSF_HDR);
}

/* Take pool off the parked chain; 0 if it is not parked. A few pools at most: a walk. */
static int parked_unlink(hl_tlsf_t *t, hl_tlsf_pool_t *pool)
{
    for (hl_tlsf_pool_t **pp = &t->parked; *pp; pp = parked_link(*pp)) {
        if (*pp != pool) continue;
        *pp = *parked_link(pool);
        t->parked_bytes -= pool->bytes;
        t->parked_pools--;
        return 1;
    }
    return 0;
}

void hl_tlsf_park_pool(hl_tlsf_t *t, hl_tlsf_pool_t *pool)
{
    list_remove(t, (hl_tblock_t *)((char *)pool + HL_TLSF_POOL_HDR));
    *parked_link(pool) = t->parked;
    t->parked = pool;
    t->parked_bytes += pool->bytes;
    t->parked_pools++;
}

void hl_tlsf_unpark_pool(hl_tlsf_t *t, hl_tlsf_pool_t *pool)
{
    /* Back into the store it was parked from (its STORE flag): with rotation, memory freed
     * into the inactive store since the last swap stays out of reach until the next one. */
    hl_tblock_t *b = (hl_tblock_t *)((char *)pool + HL_TLSF_POOL_HDR);
    if (parked_unlink(t, pool)) list_insert(t, b, block_store(b));
}

hl_tlsf_pool_t *hl_tlsf_parked_next(const hl_tlsf_t *t, const hl_tlsf_pool_t *pool)
{
    return pool ? *parked_link(pool) : t->parked;
}

void hl_tlsf_remove_pool(hl_tlsf_t *t, hl_tlsf_pool_t *pool)
{
    hl_tblock_t *b = (hl_tblock_t *)((char *)pool + HL_TLSF_POOL_HDR);
    if (!parked_unlink(t, pool)) list_remove(t, b);
    if (pool->prev)
        pool->prev->next = pool->next;
    else
        t->pools = pool->next;
    if (pool->next) pool->next->prev = pool->prev;
    t->pool_bytes -= pool->bytes;
}

size_t hl_tlsf_block_size(size_t n)
{
    if (n > SIZE_MASK - 64) return 0;
    size_t s = hl_align_up(n + HL_TLSF_USED_OVERHEAD, 16);
    return s < HL_TLSF_MIN ? HL_TLSF_MIN : s;
}

void *hl_tlsf_malloc(hl_tlsf_t *t, size_t n, int *split)
{
    size_t size = hl_tlsf_block_size(n);
    if (!size) return NULL;
    hl_tblock_t *b = find_block(t, size);
    return b ? use_block(t, b, size, split) : NULL;
}

void *hl_tlsf_move(hl_tlsf_t *t, void *ptr, size_t n)
{
    size_t size = hl_tlsf_block_size(n);
    hl_tblock_t *b = size ? find_block(t, size) : NULL;
    if (!b) return NULL;
    void *q = use_block(t, b, size, NULL);
    memcpy(q, ptr, n);
    hl_tlsf_free(t, ptr, NULL);
    return q;
}

/* Bytes between b's user pointer and the first align-aligned user pointer inside it that
 * leaves room for a free block in front (0, or at least HL_TLSF_MIN). */
static size_t aligned_gap(const hl_tblock_t *b, size_t align)
{
    uintptr_t user = (uintptr_t)b + HL_TLSF_HDR;
    size_t gap = hl_align_up(user, align) - user;
    if (gap && gap < HL_TLSF_MIN) gap += align;
    return gap;
}

/* The O(1) search for an aligned block asks for size + align + HL_TLSF_MIN bytes, which
 * refuses free blocks that do hold an aligned fit; when it fails, scan the free blocks of at
 * least `size` bytes for one that does (arena mode: slabs are slab-aligned blocks, and a
 * fragmented fixed arena must still find room for them). O(free blocks), rare. */
static hl_tblock_t *scan_aligned(hl_tlsf_t *t, size_t align, size_t size)
{
    unsigned fl0, sl0;
    mapping_insert(size, &fl0, &sl0);
    for (unsigned k = 0; k < 2; k++) {
        unsigned store = k ? t->active ^ 1 : t->active;
        if (k && !t->rotate) break;
        hl_tlsf_store_t *st = &t->store[store];
        for (unsigned fl = fl0; fl < HL_TLSF_FL_COUNT; fl++) {
            if (!(st->fl_bitmap & (1ull << fl))) continue;
            for (unsigned sl = fl == fl0 ? sl0 : 0; sl < HL_TLSF_SL_COUNT; sl++)
                for (hl_tblock_t *b = st->heads[fl][sl]; b; b = b->next_free)
                    if (aligned_gap(b, align) + size <= block_size(b)) {
                        if (store != t->active) swap_stores(t);
                        return b;
                    }
        }
    }
    return NULL;
}

void *hl_tlsf_memalign(hl_tlsf_t *t, size_t align, size_t n, int *split)
{
    if (align <= 16) return hl_tlsf_malloc(t, n, split);
    size_t size = hl_tlsf_block_size(n);
    if (!size || align > SIZE_MASK / 4) return NULL;
    hl_tblock_t *b = find_block(t, size + align + HL_TLSF_MIN);
    if (!b) b = scan_aligned(t, align, size);
    if (!b) return NULL;
    size_t gap = aligned_gap(b, align);
    if (gap) {
        /* Leading gap stays a free block; its predecessor is used (coalescing invariant). */
        unsigned store = block_store(b);
        list_remove(t, b);
        size_t total = block_size(b);
        unsigned first = block_flags(b) & F_FIRST;
        block_set(b, gap, F_FREE | first, t->owner);
        hl_tblock_t *nb = (hl_tblock_t *)((char *)b + gap);
        block_set(nb, total - gap, F_FREE, t->owner);
        block_link_next(b);
        block_link_next(nb);
        list_insert(t, b, store);
        list_insert(t, nb, store);
        b = nb;
    }
    void *p = use_block(t, b, size, split);
    /* use_block cleared nothing about our predecessor: it is the free gap block. */
    if (gap) block_set_flag(block_of(p), F_PREV_FREE, 1);
    return p;
}

void hl_tlsf_free(hl_tlsf_t *t, void *ptr, hl_tlsf_freed_t *out)
{
    hl_tblock_t *b = block_of(ptr);
    size_t size = block_size(b);
    int merged = 0;
    t->used_bytes -= size;
    t->used_blocks--;
    unsigned first = block_flags(b) & F_FIRST;
    if (b->word & F_PREV_FREE) {
        hl_tblock_t *p = block_prev(b);
        list_remove(t, p);
        first = block_flags(p) & F_FIRST;
        size += block_size(p);
        b = p;
        merged = 1;
    }
    hl_tblock_t *n = (hl_tblock_t *)((char *)b + size);
    if (block_is_free(n)) {
        list_remove(t, n);
        size += block_size(n);
        merged = 1;
    }
    block_set(b, size, F_FREE | first, t->owner);
    block_link_next(b);
    if (t->rotate && hl_tlsf_free_active) { /* delayed already (hardened arena quarantine) */
        list_insert(t, b, t->active);
    } else {
        list_insert(t, b, free_store(t));
        t->frees_since_swap++;
    }
    if (out) {
        out->span = b;
        out->span_len = size;
        out->coalesced = merged;
        out->empty_pool = NULL;
        if (first && block_size(block_next(b)) == 0)
            out->empty_pool = (hl_tlsf_pool_t *)((char *)b - HL_TLSF_POOL_HDR);
    }
}

int hl_tlsf_resize(hl_tlsf_t *t, void *ptr, size_t n)
{
    hl_tblock_t *b = block_of(ptr);
    size_t want = hl_tlsf_block_size(n);
    size_t cur = block_size(b);
    if (!want) return 0;
    if (want <= cur) {
        if (split_tail(t, b, want, free_store(t))) t->used_bytes -= cur - want;
        return 1;
    }
    hl_tblock_t *nx = block_next(b);
    /* Rotation: growing into memory freed since the last swap would hand it out early. */
    if (!block_is_free(nx) || cur + block_size(nx) < want ||
        (t->rotate && block_store(nx) != t->active))
        return 0;
    unsigned store = block_store(nx);
    list_remove(t, nx);
    size_t total = cur + block_size(nx);
    block_set(b, total, block_flags(b) & (F_PREV_FREE | F_FIRST), t->owner);
    if (!split_tail(t, b, want, store)) block_set_flag(block_next(b), F_PREV_FREE, 0);
    t->used_bytes += block_size(b) - cur;
    return 1;
}

size_t hl_tlsf_usable(const void *ptr)
{
    return block_size(block_of(ptr)) - HL_TLSF_USED_OVERHEAD;
}

unsigned hl_tlsf_owner(const void *ptr)
{
    return (unsigned)(block_of(ptr)->word >> 48) & 0xff;
}

size_t hl_tlsf_free_bytes(const hl_tlsf_t *t)
{
    return t->store[0].free_bytes + t->store[1].free_bytes;
}

size_t hl_tlsf_largest_free(const hl_tlsf_t *t)
{
    size_t best = 0;
    for (unsigned s = 0; s < 2; s++) {
        const hl_tlsf_store_t *st = &t->store[s];
        if (!st->fl_bitmap) continue;
        unsigned fl = 63u - (unsigned)__builtin_clzll(st->fl_bitmap);
        unsigned sl = 31u - (unsigned)__builtin_clz(st->sl_bitmap[fl]);
        for (hl_tblock_t *b = st->heads[fl][sl]; b; b = b->next_free)
            if (block_size(b) > best) best = block_size(b);
    }
    return best;
}

void hl_tlsf_walk(const hl_tlsf_t *t, hl_tlsf_walker_t cb, void *arg)
{
    for (hl_tlsf_pool_t *pool = t->pools; pool; pool = pool->next) {
        hl_tblock_t *b = (hl_tblock_t *)((char *)pool + HL_TLSF_POOL_HDR);
        while (block_size(b)) {
            hl_tblock_t *n = block_next(b); /* read before cb may free b */
            cb(block_user(b), block_size(b) - HL_TLSF_HDR, block_is_free(b), arg);
            b = n;
        }
    }
}

/* ---- checker ----------------------------------------------------------------------------- */

static size_t bad(int verbose, const char *what, const void *where)
{
    return hl_check_fail(verbose, "tlsf", what, where);
}

size_t hl_tlsf_check(const hl_tlsf_t *t, int verbose)
{
    size_t errors = 0, walk_free = 0, walk_free_bytes = 0, pool_bytes = 0, used = 0;
    for (hl_tlsf_pool_t *pool = t->pools; pool; pool = pool->next) {
        char *end = (char *)pool + pool->bytes - HL_TLSF_HDR;
        hl_tblock_t *b = (hl_tblock_t *)((char *)pool + HL_TLSF_POOL_HDR);
        int prev_free = 0, first = 1;
        pool_bytes += pool->bytes;
        if (pool->next && pool->next->prev != pool)
            errors += bad(verbose, "pool list broken", pool);
        while ((char *)b < end) {
            size_t size = block_size(b);
            unsigned tag = (unsigned)(b->word >> 56);
            if (size < HL_TLSF_MIN || (char *)b + size > end) {
                errors += bad(verbose, "block size out of pool", b);
                break;
            }
            if (((b->word >> 48) & 0xff) != t->owner) errors += bad(verbose, "block owner", b);
            if (tag != (block_is_free(b) ? HL_TAG_MID_FREE : HL_TAG_MID))
                errors += bad(verbose, "block tag", b);
            if (!!(b->word & F_FIRST) != first) errors += bad(verbose, "FIRST flag", b);
            if (!!(b->word & F_PREV_FREE) != prev_free)
                errors += bad(verbose, "PREV_FREE flag disagrees with predecessor", b);
            if (prev_free && block_is_free(b))
                errors += bad(verbose, "two adjacent free blocks", b);
            if (block_is_free(b)) {
                walk_free++;
                walk_free_bytes += size;
                if (block_next(b)->prev_size != size)
                    errors += bad(verbose, "successor prev_size", b);
                if (!t->rotate && block_store(b) != 0)
                    errors += bad(verbose, "store flag without rotation", b);
            } else {
                used += size;
            }
            prev_free = block_is_free(b);
            first = 0;
            b = block_next(b);
        }
        if ((char *)b != end || block_size(b) != 0)
            errors += bad(verbose, "pool does not end at its sentinel", b);
        else if (!!(b->word & F_PREV_FREE) != prev_free)
            errors += bad(verbose, "sentinel PREV_FREE flag", b);
    }
    size_t list_free = 0, list_bytes = 0;
    for (unsigned s = 0; s < 2; s++) {
        const hl_tlsf_store_t *st = &t->store[s];
        size_t sb = 0, sn = 0;
        for (unsigned fl = 0; fl < HL_TLSF_FL_COUNT; fl++) {
            if (!!(st->fl_bitmap & (1ull << fl)) != !!st->sl_bitmap[fl])
                errors += bad(verbose, "fl bitmap disagrees with sl bitmap", st);
            for (unsigned sl = 0; sl < HL_TLSF_SL_COUNT; sl++) {
                const hl_tblock_t *head = st->heads[fl][sl];
                if (!!(st->sl_bitmap[fl] & (1u << sl)) != (head != NULL))
                    errors += bad(verbose, "sl bitmap disagrees with list", st);
                const hl_tblock_t *prev = NULL;
                for (const hl_tblock_t *b = head; b; prev = b, b = b->next_free) {
                    unsigned f, l;
                    mapping_insert(block_size(b), &f, &l);
                    if (!block_is_free(b)) errors += bad(verbose, "used block in a free list", b);
                    if (f != fl || l != sl) errors += bad(verbose, "block in the wrong list", b);
                    if (block_store(b) != s) errors += bad(verbose, "block in the wrong store", b);
                    if (b->prev_free != prev) errors += bad(verbose, "free list back link", b);
                    sb += block_size(b);
                    sn++;
                    if (sn > (size_t)1 << 40) {
                        errors += bad(verbose, "free list cycle", b);
                        break;
                    }
                }
            }
        }
        if (sb != st->free_bytes || sn != st->free_blocks)
            errors += bad(verbose, "store byte/block counters", st);
        list_free += sn;
        list_bytes += sb;
    }
    /* A parked pool is one free block (the whole pool) outside the lists, and in t->pools. */
    size_t parked = 0, parked_bytes = 0;
    for (const hl_tlsf_pool_t *p = t->parked; p; p = *parked_link(p)) {
        const hl_tblock_t *b = (const hl_tblock_t *)((const char *)p + HL_TLSF_POOL_HDR);
        const hl_tlsf_pool_t *q = t->pools;
        while (q && q != p)
            q = q->next;
        if (!q) errors += bad(verbose, "parked pool not in the pool list", p);
        if (!block_is_free(b) || block_size(b) != p->bytes - HL_TLSF_POOL_OVERHEAD)
            errors += bad(verbose, "parked pool is not one free block", p);
        parked_bytes += block_size(b);
        if (++parked > t->parked_pools) {
            errors += bad(verbose, "parked pool chain longer than its count", t);
            break;
        }
    }
    if (parked != t->parked_pools) errors += bad(verbose, "parked pool count", t);
    if (list_free + parked != walk_free || list_bytes + parked_bytes != walk_free_bytes)
        errors += bad(verbose, "free blocks in pools differ from free lists", t);
    if (pool_bytes != t->pool_bytes) errors += bad(verbose, "pool byte counter", t);
    if (used != t->used_bytes) errors += bad(verbose, "used byte counter", t);
    return errors;
}
