/* liballoc/mid.c — TLSF arenas (see mid.h). */
#include "internal.h"

#include <errno.h>
#include <string.h>

/* Pages of a freed block go back to the OS only when the arena holds much more free memory
 * than it uses (hysteresis: a steady workload keeps its pages and takes no page faults). */
#define DECOMMIT_FREE_MIN (8u << 20) /* arena free bytes above this … */
#define DECOMMIT_BLOCK    (64u << 10) /* … and freed blocks at least this big */

int hl_mid_setup(hl_heap_t *h)
{
    hl_mid_t *m = &h->mid;
    m->narenas = h->arena_base ? 1 : h->opt.arenas;
    m->next_arena = 0;
    hl_lock_init(&m->spare_lock);
    m->spare = NULL;
    m->nspare = 0;
    m->spare_bytes = 0;
    for (unsigned i = 0; i < m->narenas; i++) {
        hl_lock_init(&m->arenas[i].lock);
        hl_tlsf_init(&m->arenas[i].tlsf, (uint8_t)i, (int)h->opt.rotate);
    }
    if (h->arena_base) {
        char *base = (char *)hl_align_up((uintptr_t)h->arena_base, 16);
        size_t len = h->arena_size - (size_t)(base - (char *)h->arena_base);
        if (hl_tlsf_add_pool(&m->arenas[0].tlsf, base, len) != 0)
            return -1;
    }
    return 0;
}

static inline hl_arena_t *thread_arena(hl_heap_t *h)
{
    hl_mid_t *m = &h->mid;
    if (m->narenas == 1)
        return &m->arenas[0];
    hl_tls_t *t = hl_tls_of(h);
    return &m->arenas[t->heap == h ? t->arena % m->narenas : 0];
}

/* ---- spare pools: empty pools kept for any arena while they decay (mid.h) ------------------ */

/* Take the smallest spare pool of at least `need` bytes, or NULL. Caller holds an arena lock
 * (lock order: arena, then spare_lock). */
static hl_tlsf_pool_t *spare_take(hl_mid_t *m, size_t need)
{
    if (!__atomic_load_n(&m->nspare, __ATOMIC_RELAXED))
        return NULL;
    hl_lock(&m->spare_lock);
    hl_tlsf_pool_t **best = NULL;
    for (hl_tlsf_pool_t **pp = &m->spare; *pp; pp = &(*pp)->next)
        if ((*pp)->bytes >= need && (!best || (*pp)->bytes < (*best)->bytes))
            best = pp;
    hl_tlsf_pool_t *p = NULL;
    if (best) {
        p = *best;
        *best = p->next;
        m->nspare--;
        m->spare_bytes -= p->bytes;
    }
    hl_unlock(&m->spare_lock);
    return p;
}

/* Move the spares idle for at least `decay` ms (every one when all) to *out; returns how
 * many stay. Caller holds spare_lock. */
static unsigned spare_expire(hl_mid_t *m, uint32_t now, uint32_t decay, int all,
                             hl_tlsf_pool_t **out)
{
    for (hl_tlsf_pool_t **pp = &m->spare; *pp;) {
        hl_tlsf_pool_t *p = *pp;
        if (all || (uint32_t)(now - p->empty_since) >= decay) {
            *pp = p->next;
            m->nspare--;
            m->spare_bytes -= p->bytes;
            p->next = *out;
            *out = p;
        } else {
            pp = &p->next;
        }
    }
    return m->nspare;
}

/* Keep an empty pool (already out of its arena) as a spare; the oldest spares beyond
 * HL_POOL_SPARES and those past their decay go to *out. Caller holds the arena lock. */
static void spare_put(hl_heap_t *h, hl_tlsf_pool_t *pool, hl_tlsf_pool_t **out)
{
    hl_mid_t *m = &h->mid;
    uint32_t now = hl_decay_now();
    pool->empty_since = now;
    hl_lock(&m->spare_lock);
    pool->next = m->spare; /* newest first: the oldest is the last */
    m->spare = pool;
    m->nspare++;
    m->spare_bytes += pool->bytes;
    while (m->nspare > (h->opt.decay_ms ? HL_POOL_SPARES : 0)) { /* decay=0: none */
        hl_tlsf_pool_t **pp = &m->spare;
        while ((*pp)->next)
            pp = &(*pp)->next;
        hl_tlsf_pool_t *old = *pp;
        *pp = NULL;
        m->nspare--;
        m->spare_bytes -= old->bytes;
        old->next = *out;
        *out = old;
    }
    if (m->nspare)
        __atomic_store_n(&h->decay_pending, 1, __ATOMIC_RELAXED);
    hl_unlock(&m->spare_lock);
}

static void unmap_pools(hl_tlsf_pool_t *p)
{
    while (p) {
        hl_tlsf_pool_t *n = p->next;
        hl_region_unreport(p, p->bytes, "tlsf_pool", &p->owner_flags);
        hl_os_unmap_quiet(p, p->bytes, "tlsf_pool");
        p = n;
    }
}

int hl_mid_decay(hl_heap_t *h, uint32_t now)
{
    hl_mid_t *m = &h->mid;
    hl_tlsf_pool_t *release = NULL;
    if (!__atomic_load_n(&m->nspare, __ATOMIC_RELAXED))
        return 0;
    if (pthread_mutex_trylock(&m->spare_lock) != 0)
        return 1; /* busy: the next tick looks again */
    int left = spare_expire(m, now, h->opt.decay_ms, 0, &release) != 0;
    hl_unlock(&m->spare_lock);
    unmap_pools(release);
    return left;
}

/* ---- arenas --------------------------------------------------------------------------------- */

/* Add a pool able to hold an aligned block of n bytes: a spare one, else a new mapping.
 * Caller holds a->lock. */
static int arena_grow(hl_heap_t *h, hl_arena_t *a, size_t n, size_t align)
{
    size_t need = hl_tlsf_block_size(n) + (align > 16 ? align + HL_TLSF_MIN : 0) +
                  HL_TLSF_POOL_OVERHEAD;
    hl_tlsf_pool_t *spare = spare_take(&h->mid, need);
    if (spare) {
        uint32_t reported = spare->owner_flags; /* its os_map was emitted once: keep that */
        hl_tlsf_add_pool(&a->tlsf, spare, spare->bytes);
        spare->owner_flags = reported;
        return 0;
    }
    size_t grow = HL_POOL_SIZE_MIN;
    for (hl_tlsf_pool_t *p = a->tlsf.pools; p && grow < HL_POOL_SIZE; p = p->next)
        grow *= 2;
    size_t bytes = need < grow ? grow : hl_align_up(need, hl_page_size);
    void *mem = hl_os_map_quiet(bytes, hl_page_size, "tlsf_pool");
    if (!mem)
        return -1;
    hl_tlsf_add_pool(&a->tlsf, mem, bytes);
    hl_tlsf_pool_t *pool = mem;
    hl_region_report(pool, bytes, "tlsf_pool", &pool->owner_flags);
    return 0;
}

void *hl_mid_alloc(hl_heap_t *h, size_t n, size_t align, hl_opinfo_t *info)
{
    hl_arena_t *a = thread_arena(h);
    int split = 0;
    hl_path_t path;
    hl_lock(&a->lock);
    void *p = hl_tlsf_memalign(&a->tlsf, align, n, &split);
    path = split ? HL_PATH_TLSF_SPLIT : HL_PATH_TLSF;
    if (!p && !h->arena_base && arena_grow(h, a, n, align) == 0) {
        p = hl_tlsf_memalign(&a->tlsf, align, n, &split);
        path = HL_PATH_TLSF_GROW;
    }
    size_t usable = p ? hl_tlsf_usable(p) : 0;
    hl_unlock(&a->lock);
    if (!p)
        return NULL;
    hl_count(h, path);
    hl_info(info, HL_TIER_MID, 0xff, path, usable);
    return p;
}

void hl_mid_free(hl_heap_t *h, void *p, hl_opinfo_t *info)
{
    hl_mid_t *m = &h->mid;
    unsigned owner = hl_tlsf_owner(p);
    if (owner >= m->narenas)
        hl_fatal("invalid-free", p, "mid block header names no arena of this heap");
    hl_arena_t *a = &m->arenas[owner];
    hl_tlsf_freed_t fr;
    hl_tlsf_pool_t *release = NULL;
    size_t usable = hl_tlsf_usable(p);
    hl_lock(&a->lock);
    hl_tlsf_free(&a->tlsf, p, &fr);
    if (!h->arena_base) {
        if (fr.empty_pool && a->tlsf.pools && a->tlsf.pools->next) {
            /* Not unmapped at once: a spare for the next arena that grows (decay.h). */
            hl_tlsf_remove_pool(&a->tlsf, fr.empty_pool);
            spare_put(h, fr.empty_pool, &release);
        } else if (usable >= DECOMMIT_BLOCK && hl_tlsf_free_bytes(&a->tlsf) > DECOMMIT_FREE_MIN &&
                   hl_tlsf_free_bytes(&a->tlsf) > 2 * a->tlsf.used_bytes) {
            /* Under the lock: nobody may allocate these pages while they are dropped. */
            hl_os_decommit((char *)p + 16, usable - 16); /* keep the list links */
        }
    }
    hl_unlock(&a->lock);
    unmap_pools(release);
    hl_path_t path = fr.coalesced ? HL_PATH_TLSF_COALESCE : HL_PATH_TLSF_FREE;
    hl_count(h, path);
    hl_info(info, HL_TIER_MID, 0xff, path, usable);
}

int hl_mid_resize(hl_heap_t *h, void *p, size_t n)
{
    unsigned owner = hl_tlsf_owner(p);
    if (owner >= h->mid.narenas)
        hl_fatal("invalid-realloc", p, "mid block header names no arena of this heap");
    hl_arena_t *a = &h->mid.arenas[owner];
    hl_lock(&a->lock);
    int ok = hl_tlsf_resize(&a->tlsf, p, n);
    hl_unlock(&a->lock);
    return ok;
}

hl_slab_t *hl_mid_alloc_slab(hl_heap_t *h)
{
    hl_arena_t *a = &h->mid.arenas[0];
    hl_lock(&a->lock);
    void *p = hl_tlsf_memalign(&a->tlsf, h->tiny.slab_size, h->tiny.slab_extent, NULL);
    hl_unlock(&a->lock);
    return p;
}

void hl_mid_free_slab(hl_heap_t *h, hl_slab_t *s)
{
    hl_arena_t *a = &h->mid.arenas[0];
    hl_lock(&a->lock);
    hl_tlsf_free(&a->tlsf, s, NULL);
    hl_unlock(&a->lock);
}

static void decommit_free(void *p, size_t usable, int is_free, void *arg)
{
    size_t *n = arg;
    if (is_free && usable >= 2 * hl_page_size) {
        /* Keep the free-list links (first 16 bytes) intact. */
        hl_os_decommit((char *)p + 16, usable - 16);
        *n += usable;
    }
}

size_t hl_mid_trim(hl_heap_t *h)
{
    size_t n = 0;
    if (h->arena_base)
        return 0;
    for (unsigned i = 0; i < h->mid.narenas; i++) {
        hl_arena_t *a = &h->mid.arenas[i];
        hl_lock(&a->lock);
        hl_tlsf_walk(&a->tlsf, decommit_free, &n);
        hl_unlock(&a->lock);
    }
    hl_tlsf_pool_t *release = NULL;
    hl_lock(&h->mid.spare_lock);
    n += h->mid.spare_bytes;
    spare_expire(&h->mid, 0, 0, 1, &release);
    hl_unlock(&h->mid.spare_lock);
    unmap_pools(release);
    return n;
}

size_t hl_mid_check(hl_heap_t *h, int verbose)
{
    size_t errors = 0;
    for (unsigned i = 0; i < h->mid.narenas; i++) {
        hl_arena_t *a = &h->mid.arenas[i];
        hl_lock(&a->lock);
        errors += hl_tlsf_check(&a->tlsf, verbose);
        hl_unlock(&a->lock);
    }
    return errors;
}

void hl_mid_totals(hl_heap_t *h, size_t *pool_bytes, size_t *used_bytes, size_t *free_bytes,
                   size_t *largest_free, size_t *pools)
{
    size_t pb = 0, ub = 0, fb = 0, lf = 0, np = 0;
    for (unsigned i = 0; i < h->mid.narenas; i++) {
        hl_arena_t *a = &h->mid.arenas[i];
        hl_lock(&a->lock);
        pb += a->tlsf.pool_bytes;
        ub += a->tlsf.used_bytes - a->tlsf.used_blocks * HL_TLSF_HDR;
        fb += hl_tlsf_free_bytes(&a->tlsf);
        size_t l = hl_tlsf_largest_free(&a->tlsf);
        lf = l > lf ? l : lf;
        for (hl_tlsf_pool_t *p = a->tlsf.pools; p; p = p->next)
            np++;
        hl_unlock(&a->lock);
    }
    *pool_bytes = pb + __atomic_load_n(&h->mid.spare_bytes, __ATOMIC_RELAXED); /* held too */
    *used_bytes = ub;
    *free_bytes = fb;
    *largest_free = lf;
    *pools = np;
}

void hl_mid_destroy(hl_heap_t *h)
{
    if (h->arena_base)
        return;
    for (unsigned i = 0; i < h->mid.narenas; i++) {
        hl_tlsf_pool_t *p = h->mid.arenas[i].tlsf.pools;
        while (p) {
            hl_tlsf_pool_t *n = p->next;
            hl_region_unreport(p, p->bytes, "tlsf_pool", &p->owner_flags);
            hl_os_unmap_quiet(p, p->bytes, "tlsf_pool");
            p = n;
        }
        h->mid.arenas[i].tlsf.pools = NULL;
    }
    hl_tlsf_pool_t *release = NULL;
    spare_expire(&h->mid, 0, 0, 1, &release);
    unmap_pools(release);
}
