/* liballoc/large.c — one mapping per block (see large.h). */
#include "internal.h"
#include "pagemap.h"

#include <errno.h>
#include <string.h>

#define LARGE_OFF 48u /* link (24 B) + header (16 B), rounded to 16 */

static inline uint64_t *hdr(const void *p)
{
    return (uint64_t *)((char *)p - 16);
}
static inline size_t map_len(const void *p)
{
    return hdr(p)[0];
}
static inline size_t map_off(const void *p)
{
    return hdr(p)[1] & 0x00ffffffffffffffull;
}
/* The kernel mapping a block's range lies in, as an id (large.h), in the 8 bytes between the
 * link and the header. */
static inline uint32_t *origin_of(char *base)
{
    return (uint32_t *)(base + 24);
}
/* Pages of the mapping beyond the block's own length (a cached mapping handed out whole). */
static inline uint32_t *excess_of(char *base)
{
    return (uint32_t *)(base + 28);
}
/* The whole mapping of a block: its length plus the excess. */
static inline size_t mapping_len(const void *p, size_t off)
{
    return map_len(p) + (size_t)*excess_of((char *)p - off) * hl_page_size;
}
static uint32_t new_origin(hl_heap_t *h)
{
    uint32_t o;
    do
        o = __atomic_add_fetch(&h->large.origins, 1, __ATOMIC_RELAXED) & ~HL_LARGE_MIXED;
    while (!o);
    return o;
}
static inline int is_mixed(uint32_t origin)
{
    return (origin & HL_LARGE_MIXED) != 0;
}

size_t hl_large_usable(const void *p)
{
    return map_len(p) - map_off(p);
}

void hl_large_setup(hl_heap_t *h)
{
    hl_lock_init(&h->large.lock);
    h->large.list = NULL;
}

static void link_add(hl_heap_t *h, hl_large_link_t *l)
{
    if (h->is_default) return;
    hl_lock(&h->large.lock);
    l->prev = NULL;
    l->next = h->large.list;
    if (l->next) l->next->prev = l;
    h->large.list = l;
    hl_unlock(&h->large.lock);
}

static void link_del(hl_heap_t *h, hl_large_link_t *l)
{
    if (h->is_default) return;
    hl_lock(&h->large.lock);
    if (l->prev)
        l->prev->next = l->next;
    else
        h->large.list = l->next;
    if (l->next) l->next->prev = l->prev;
    hl_unlock(&h->large.lock);
}

static void *finish(hl_heap_t *h, char *base, size_t len, size_t whole, size_t off)
{
    char *p = base + off;
    hdr(p)[0] = len;
    hdr(p)[1] = ((uint64_t)HL_TAG_LARGE << 56) | off;
    ((hl_large_link_t *)base)->off = off;
    link_add(h, (hl_large_link_t *)base);
    size_t live = __atomic_add_fetch(&h->large.bytes, whole, __ATOMIC_RELAXED);
    if (live > __atomic_load_n(&h->large.live_hw, __ATOMIC_RELAXED)) /* racy max: a hint */
        __atomic_store_n(&h->large.live_hw, live, __ATOMIC_RELAXED);
    __atomic_add_fetch(&h->large.blocks, 1, __ATOMIC_RELAXED);
    return p;
}

/* ---- the cache of freed mappings (see large.h for the policy) ------------------------------ */

/* Remove entry i (order does not matter: the oldest is found by its stamp). Caller holds the
 * lock. */
static void cache_remove(hl_large_t *l, unsigned i)
{
    l->cache_bytes -= l->cache[i].len;
    l->cache[i] = l->cache[--l->cache_count];
}

/* The budget: the large bytes the program had live recently (the high-water mark of the
 * current decay period or of the previous one, the larger), within [HL_LARGE_CACHE_MIN,
 * HL_LARGE_CACHE_BYTES]. Caller holds the lock. */
static size_t cache_budget(const hl_large_t *l)
{
    size_t b = l->live_hw > l->prev_hw ? l->live_hw : l->prev_hw;
    if (b < HL_LARGE_CACHE_MIN) b = HL_LARGE_CACHE_MIN;
    return b > HL_LARGE_CACHE_BYTES ? HL_LARGE_CACHE_BYTES : b;
}

/* Move the entries idle for at least `decay` ms (all of them when all) to out[]; returns how
 * many. Caller holds the lock and unmaps them after dropping it. */
static unsigned cache_expire(hl_large_t *l, uint32_t now, uint32_t decay, int all,
                             hl_large_cached_t *out)
{
    unsigned n = 0;
    for (unsigned i = 0; i < l->cache_count;) {
        if (all || (uint32_t)(now - l->cache[i].stamp) >= decay) {
            out[n++] = l->cache[i];
            cache_remove(l, i);
        } else {
            i++;
        }
    }
    if ((uint32_t)(now - l->hw_stamp) >= decay) { /* a new period: forget the older peak */
        l->prev_hw = l->live_hw;
        l->live_hw = __atomic_load_n(&l->bytes, __ATOMIC_RELAXED);
        l->hw_stamp = now;
    }
    return n;
}

/* The trace pairs os_map and os_unmap events by address: a split or a merge is told as the old
 * ranges unmapped and the new ones mapped (nothing is emitted when tracing is off). */
static void retrace(char *a, size_t alen, char *b, size_t blen, char *m, size_t mlen)
{
    hl_trace_emit_os(0, a, alen, "large");
    if (blen) hl_trace_emit_os(0, b, blen, "large");
    hl_trace_emit_os(1, m, mlen, "large");
}

static void unmap_all(hl_large_cached_t *v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        hl_os_unmap(v[i].base, v[i].len, "large");
}

/* A cached piece on its way into a gathered block (cache_take). */
typedef struct piece_s {
    char *src;
    size_t len;
    uint32_t origin;
} piece_t;

/* Gathers split kernel mappings (VMAs), and a process has at most vm.max_map_count of them:
 * every HL_LARGE_MOVES_CHECK moves the process's mappings are counted (/proc/self/maps), and
 * gathers stop while there are HL_LARGE_MAX_VMAS or more, or when they cannot be counted.
 * The count is taken before the cache's lock (reading the file is several system calls, and
 * milliseconds in a process with many mappings): cache_take calls gather_recount first, so a
 * process that takes from the cache counts once at its first take and then once per
 * HL_LARGE_MOVES_CHECK moves. Two threads may count at once; either result is right. */
static void gather_recount(hl_heap_t *h)
{
    hl_large_t *l = &h->large;
    uint32_t moves = __atomic_load_n(&l->moves, __ATOMIC_RELAXED);
    if (__atomic_load_n(&l->vmas_checked, __ATOMIC_ACQUIRE) &&
        moves - __atomic_load_n(&l->moves_checked, __ATOMIC_RELAXED) < HL_LARGE_MOVES_CHECK)
        return;
    size_t n = hl_os_map_count();
    __atomic_store_n(&l->gather_ok, (uint8_t)(n && n < HL_LARGE_MAX_VMAS), __ATOMIC_RELAXED);
    __atomic_store_n(&l->moves_checked, moves, __ATOMIC_RELAXED);
    __atomic_store_n(&l->vmas_checked, 1, __ATOMIC_RELEASE);
}

/* Whether the last count left room for more mappings. */
static int gather_allowed(hl_heap_t *h)
{
    hl_large_t *l = &h->large;
    return __atomic_load_n(&l->vmas_checked, __ATOMIC_ACQUIRE) &&
           __atomic_load_n(&l->gather_ok, __ATOMIC_RELAXED);
}

/* Take pieces of the cached ranges, the largest first, to fill up to `hole` bytes: a piece
 * longer than what is left gives its tail (its head stays cached, at least HL_LARGE_PIECE_MIN
 * long). Gathered ranges are pieces too while the kernel moves ranges that span several
 * mappings (Linux 6.17 and later; l->no_multi_move once a move said it cannot). Each piece is
 * told to the trace as a range of its own. Caller holds the lock; returns how many pieces. */
static unsigned gather_pieces(hl_heap_t *h, size_t hole, piece_t *pc)
{
    hl_large_t *l = &h->large;
    unsigned np = 0;
    int mixed_ok = !__atomic_load_n(&l->no_multi_move, __ATOMIC_RELAXED);
    while (np < HL_LARGE_GATHER_MAX && hole >= HL_LARGE_PIECE_MIN) {
        unsigned best = HL_LARGE_CACHE_SLOTS;
        for (unsigned i = 0; i < l->cache_count; i++)
            if ((mixed_ok || !is_mixed(l->cache[i].origin)) &&
                (best == HL_LARGE_CACHE_SLOTS || l->cache[i].len > l->cache[best].len))
                best = i;
        if (best == HL_LARGE_CACHE_SLOTS) break;
        hl_large_cached_t *e = &l->cache[best];
        size_t m = e->len < hole ? e->len : hole;
        if (m < e->len && e->len - m < HL_LARGE_PIECE_MIN) m = e->len - HL_LARGE_PIECE_MIN;
        if (m < HL_LARGE_PIECE_MIN || m > e->len) break; /* the largest is too short: all are */
        char *src = e->base + e->len - m;
        pc[np].origin = e->origin;
        if (m == e->len) {
            cache_remove(l, best);
        } else {
            retrace(e->base, e->len, NULL, 0, e->base, e->len - m);
            hl_trace_emit_os(1, src, m, "large");
            e->len -= m;
            l->cache_bytes -= m;
        }
        pc[np].src = src;
        pc[np++].len = m;
        hole -= m;
    }
    return np;
}

/* The smallest cached mapping of at least len bytes, split when it is larger (its tail stays
 * cached); else a gathered block (large.h): the largest smaller single-mapping range grown with
 * mremap (or a new mapping when there is none), its growth filled from the end with cached
 * pieces moved there. NULL when the cache has nothing to give or the mapping fails. */
static void *cache_take(hl_heap_t *h, size_t len, size_t *got, uint32_t *origin)
{
    hl_large_t *l = &h->large;
    if (!__atomic_load_n(&l->cache_count, __ATOMIC_RELAXED)) return NULL;
    gather_recount(h);
    hl_lock(&l->lock);
    unsigned fit = HL_LARGE_CACHE_SLOTS, below = HL_LARGE_CACHE_SLOTS;
    for (unsigned i = 0; i < l->cache_count; i++) {
        size_t c = l->cache[i].len;
        if (c >= len) {
            if (fit == HL_LARGE_CACHE_SLOTS || c < l->cache[fit].len) fit = i;
        } else if (!is_mixed(l->cache[i].origin) &&
                   (below == HL_LARGE_CACHE_SLOTS || c > l->cache[below].len)) {
            below = i;
        }
    }
    char *base = NULL;
    if (fit != HL_LARGE_CACHE_SLOTS) {
        hl_large_cached_t *e = &l->cache[fit];
        base = e->base;
        *origin = e->origin;
        if (e->len - len > len / 4 && e->len - len >= HL_LARGE_SPLIT_MIN) {
            /* Split: the tail keeps its place (and its age) in the cache. */
            retrace(base, e->len, NULL, 0, base, len);
            hl_trace_emit_os(1, base + len, e->len - len, "large");
            e->base = base + len;
            e->len -= len;
            l->cache_bytes -= len;
            hl_pagemap_set(e->base, hl_page_size, HL_PAGE_LARGE_HEAD, HL_PAGE_LARGE_HEAD);
            *got = len;
        } else {
            *got = e->len;
            cache_remove(l, fit);
        }
        hl_unlock(&l->lock);
        return base;
    }
    hl_large_cached_t grow = {0};
    if (below != HL_LARGE_CACHE_SLOTS) {
        grow = l->cache[below];
        cache_remove(l, below);
    }
    piece_t pc[HL_LARGE_GATHER_MAX];
    unsigned np = 0;
    if (gather_allowed(h)) np = gather_pieces(h, len - grow.len, pc);
    hl_unlock(&l->lock);
    if (!grow.len && !np) return NULL; /* emptied meanwhile, or nothing can serve */
    char *nb;
    if (grow.len) {
        nb = hl_os_remap(grow.base, grow.len, len, "large");
        if (!nb) /* cannot happen for one kernel mapping (large.h); give it up */
            hl_os_unmap(grow.base, grow.len, "large");
    } else {
        nb = hl_os_map(len, hl_page_size, "large");
    }
    if (!nb) {
        for (unsigned i = 0; i < np; i++)
            hl_os_unmap(pc[i].src, pc[i].len, "large");
        return NULL;
    }
    size_t at = len;
    unsigned moved = 0;
    for (unsigned i = 0; i < np; i++) {
        at -= pc[i].len;
        if (hl_os_move(pc[i].src, pc[i].len, nb + at) == 0) {
            hl_trace_emit_os(0, pc[i].src, pc[i].len, "large"); /* now part of nb's range */
            moved++;
        } else {                        /* its place in nb stays fresh (faults in) */
            if (is_mixed(pc[i].origin)) /* an older kernel: single mappings only */
                __atomic_store_n(&h->large.no_multi_move, 1, __ATOMIC_RELAXED);
            hl_os_unmap(pc[i].src, pc[i].len, "large");
        }
    }
    *got = len;
    if (moved) {
        *origin = HL_LARGE_MIXED;
        __atomic_add_fetch(&h->large.moves, moved, __ATOMIC_RELAXED);
    } else {
        *origin = new_origin(h); /* the kernel made it a mapping of its own */
    }
    return nb;
}

/* Keep a freed mapping; returns 1 if it was cached. It merges with a cached neighbour (the
 * tail of a split, for instance); the oldest entries make room when the cache is full or over
 * its budget and are unmapped after the lock is dropped (expiry is the decay pass's job). */
static int cache_put(hl_heap_t *h, char *base, size_t len, uint32_t origin)
{
    hl_large_t *l = &h->large;
    hl_large_cached_t evict[HL_LARGE_CACHE_SLOTS + 1];
    unsigned nevict = 0;
    uint32_t now = hl_decay_now();
    hl_lock(&l->lock);
    size_t budget = cache_budget(l);
    if (len > budget || !h->opt.decay_ms) {
        hl_unlock(&l->lock);
        return 0;
    }
    for (unsigned i = 0; i < l->cache_count;) {
        hl_large_cached_t *e = &l->cache[i];
        if (len + e->len > budget || e->origin != origin || is_mixed(origin)) { /* apart */
            i++;
            continue;
        }
        if (e->base + e->len == base) { /* e, then the block */
            retrace(e->base, e->len, base, len, e->base, e->len + len);
            hl_pagemap_set(base, hl_page_size, HL_PAGE_LARGE, HL_PAGE_LARGE);
            base = e->base;
            len += e->len;
        } else if (base + len == e->base) { /* the block, then e */
            retrace(base, len, e->base, e->len, base, len + e->len);
            hl_pagemap_set(e->base, hl_page_size, HL_PAGE_LARGE, HL_PAGE_LARGE);
            len += e->len;
        } else {
            i++;
            continue;
        }
        cache_remove(l, i);
        i = 0; /* the merged range may now touch another entry */
    }
    while (l->cache_count &&
           (l->cache_count == HL_LARGE_CACHE_SLOTS || l->cache_bytes + len > budget)) {
        unsigned old = 0;
        for (unsigned i = 1; i < l->cache_count; i++)
            if ((int32_t)(l->cache[i].stamp - l->cache[old].stamp) < 0) old = i;
        evict[nevict++] = l->cache[old];
        cache_remove(l, old);
    }
    hl_large_cached_t *e = &l->cache[l->cache_count++];
    e->base = base;
    e->len = len;
    e->stamp = now;
    e->origin = origin;
    l->cache_bytes += len;
    __atomic_store_n(&h->decay_pending, 1, __ATOMIC_RELAXED);
    hl_unlock(&l->lock);
    unmap_all(evict, nevict);
    return 1;
}

int hl_large_decay(hl_heap_t *h, uint32_t now)
{
    hl_large_t *l = &h->large;
    hl_large_cached_t out[HL_LARGE_CACHE_SLOTS];
    if (pthread_mutex_trylock(&l->lock) != 0) return 1; /* busy: try again at the next tick */
    unsigned n = cache_expire(l, now, h->opt.decay_ms, 0, out);
    int left = l->cache_count != 0;
    hl_unlock(&l->lock);
    unmap_all(out, n);
    return left;
}

size_t hl_large_trim(hl_heap_t *h)
{
    hl_large_t *l = &h->large;
    hl_large_cached_t all[HL_LARGE_CACHE_SLOTS];
    size_t bytes = 0;
    hl_lock(&l->lock);
    unsigned n = cache_expire(l, hl_decay_now(), h->opt.decay_ms, 1, all);
    hl_unlock(&l->lock);
    for (unsigned i = 0; i < n; i++)
        bytes += all[i].len;
    unmap_all(all, n);
    return bytes;
}

void *hl_large_alloc(hl_heap_t *h, size_t n, size_t align, hl_opinfo_t *info)
{
    size_t off = hl_align_up(LARGE_OFF, align > 16 ? align : 16);
    if (h->opt.harden && off < hl_page_size) /* hardening hook: trailer in a header page */
        off = hl_page_size;
    if (n > PTRDIFF_MAX - off - hl_page_size) return NULL;
    size_t len = hl_align_up(n + off, hl_page_size);
    hl_path_t path = HL_PATH_LARGE_REUSE;
    size_t got = 0;
    uint32_t origin = 0;
    char *base = off == LARGE_OFF ? cache_take(h, len, &got, &origin) : NULL;
    if (base) /* a split piece or a grown one: its first page is a block head again */
        hl_pagemap_set(base, hl_page_size, HL_PAGE_LARGE_HEAD, HL_PAGE_LARGE_HEAD);
    size_t whole = len;
    if (base) {
        whole = got; /* its usable size stays that of a fresh mapping of len (replays) */
    } else {
        /* An alignment above a page maps at that alignment; the block starts one alignment
         * in. */
        base = hl_os_map(len, off > hl_page_size ? off : hl_page_size, "large");
        if (!base) return NULL;
        path = HL_PATH_LARGE_MMAP;
    }
    *origin_of(base) = origin ? (uint32_t)origin : new_origin(h);
    *excess_of(base) = (uint32_t)((whole - len) / hl_page_size);
    void *p = finish(h, base, len, whole, off);
    hl_count(h, path);
    hl_info(info, HL_TIER_LARGE, 0xff, path, len - off);
    return p;
}

void hl_large_free(hl_heap_t *h, void *p, hl_opinfo_t *info)
{
    size_t len = map_len(p), off = map_off(p);
    if (off < LARGE_OFF || (off & 15) || len < off)
        hl_fatal("invalid-free", p, "large block header is corrupt");
    char *base = (char *)p - off;
    size_t usable = len - off;
    len = mapping_len(p, off);
    link_del(h, (hl_large_link_t *)base);
    __atomic_sub_fetch(&h->large.bytes, len, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&h->large.blocks, 1, __ATOMIC_RELAXED);
    hl_path_t path = HL_PATH_LARGE_CACHE;
    uint32_t origin = *origin_of(base);
    if (off != LARGE_OFF || !cache_put(h, base, len, origin)) {
        hl_os_unmap(base, len, "large");
        path = HL_PATH_LARGE_MUNMAP;
    }
    hl_count(h, path);
    hl_info(info, HL_TIER_LARGE, 0xff, path, usable);
}

void *hl_large_realloc(hl_heap_t *h, void *p, size_t n, hl_opinfo_t *info)
{
    size_t len = map_len(p), off = map_off(p);
    if (off != LARGE_OFF || n > PTRDIFF_MAX - off - hl_page_size) return NULL;
    size_t nlen = hl_align_up(n + off, hl_page_size);
    char *base = (char *)p - off;
    if (nlen != len && is_mixed(*origin_of(base))) return NULL; /* several mappings: copied */
    hl_path_t path = HL_PATH_REALLOC_INPLACE;
    if (nlen != len) {
        len = mapping_len(p, off);
        link_del(h, (hl_large_link_t *)base);
        char *nb = hl_os_remap(base, len, nlen, "large");
        if (!nb) {
            link_add(h, (hl_large_link_t *)base);
            return NULL;
        }
        base = nb;
        link_add(h, (hl_large_link_t *)base);
        hdr(base + off)[0] = nlen;
        *origin_of(base) = new_origin(h);
        *excess_of(base) = 0;
        __atomic_add_fetch(&h->large.bytes, nlen - len, __ATOMIC_RELAXED);
        path = HL_PATH_LARGE_MREMAP;
    }
    hl_count(h, path);
    hl_info(info, HL_TIER_LARGE, 0xff, path, nlen - off);
    return base + off;
}

void hl_large_destroy(hl_heap_t *h)
{
    hl_large_trim(h);
    hl_large_link_t *l = h->large.list;
    while (l) {
        hl_large_link_t *n = l->next;
        hl_os_unmap(l, mapping_len((char *)l + l->off, l->off), "large");
        l = n;
    }
    h->large.list = NULL;
}
