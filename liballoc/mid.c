/* liballoc/mid.c — TLSF arenas (see mid.h). */
#include "internal.h"

#include <errno.h>
#include <string.h>

/* Pages of a freed block go back to the OS only when the arena holds much more free memory
 * than it uses (hysteresis: a steady workload keeps its pages and takes no page faults). */
#define DECOMMIT_FREE_MIN (8u << 20)  /* arena free bytes above this … */
#define DECOMMIT_BLOCK    (64u << 10) /* … and freed blocks at least this big */

int hl_mid_setup(hl_heap_t *h)
{
    hl_mid_t *m = &h->mid;
    m->narenas = h->arena_base ? 1 : h->opt.arenas;
    memset(m->users, 0, sizeof m->users);
    for (unsigned i = 0; i < m->narenas; i++) {
        hl_lock_init(&m->arenas[i].lock);
        hl_tlsf_init(&m->arenas[i].tlsf, (uint8_t)i, (int)h->opt.rotate);
    }
    if (h->arena_base) {
        char *base = (char *)hl_align_up((uintptr_t)h->arena_base, 16);
        size_t len = h->arena_size - (size_t)(base - (char *)h->arena_base);
        if (hl_tlsf_add_pool(&m->arenas[0].tlsf, base, len) != 0) return -1;
    }
    return 0;
}

/* Threads come and go: the kept pools are their working set for the decay time (decay.h). */
static void churn_stamp(hl_mid_t *m)
{
    __atomic_store_n(&m->grow_stamp, hl_decay_now(), __ATOMIC_RELAXED);
}

unsigned hl_mid_pick_arena(hl_heap_t *h)
{
    hl_mid_t *m = &h->mid;
    churn_stamp(m);
    hl_tls_t *t = hl_tls_of(h);
    unsigned hint = t->arena_hint;
    t->arena_hint = 0;
    unsigned best = 0;
    for (int tries = 0; tries < 8; tries++) {
        uint32_t least = UINT32_MAX;
        for (unsigned i = 0; i < m->narenas; i++) {
            uint32_t u = __atomic_load_n(&m->users[i], __ATOMIC_RELAXED);
            if (u < least) least = u, best = i;
        }
        /* The arena of the blocks this thread freed before it first allocated (a successor
         * taking over its predecessor's blocks), unless it has more than one thread above the
         * least-used arena: the thread then works where those blocks' free space is. */
        if (hint && hint <= m->narenas) {
            uint32_t u = __atomic_load_n(&m->users[hint - 1], __ATOMIC_RELAXED);
            if (u <= least + 1) least = u, best = hint - 1;
        }
        /* Threads binding at the same moment: only one takes a count it saw; the others look
         * again, so a burst of new threads still spreads over the arenas. */
        if (__atomic_compare_exchange_n(&m->users[best], &least, least + 1, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return best;
    }
    __atomic_add_fetch(&m->users[best], 1, __ATOMIC_RELAXED);
    return best;
}

void hl_mid_leave_arena(hl_heap_t *h, unsigned arena)
{
    hl_mid_t *m = &h->mid;
    churn_stamp(m);
    if (arena < m->narenas && __atomic_load_n(&m->users[arena], __ATOMIC_RELAXED))
        __atomic_sub_fetch(&m->users[arena], 1, __ATOMIC_RELAXED);
}

void hl_mid_fork_child(hl_heap_t *h)
{
    hl_mid_t *m = &h->mid;
    memset(m->users, 0, sizeof m->users);
    hl_tls_t *t = hl_tls_of(h);
    if (t->state == HL_TLS_BOUND && t->heap == h && t->arena < m->narenas) m->users[t->arena] = 1;
}

static inline hl_arena_t *thread_arena(hl_heap_t *h)
{
    hl_mid_t *m = &h->mid;
    if (m->narenas == 1) return &m->arenas[0];
    hl_tls_t *t = hl_tls_of(h);
    return &m->arenas[t->heap == h ? t->arena % m->narenas : 0];
}

/* ---- empty pools: kept while they decay, reused by any arena (mid.h) ------------------------ */

/* Is the pool one free block? Caller holds its arena's lock. */
static int pool_empty(const hl_tlsf_pool_t *p)
{
    const uint8_t *first = (const uint8_t *)p + HL_TLSF_POOL_HDR;
    return first[HL_TLSF_HDR - 1] == HL_TAG_MID_FREE &&
           hl_tlsf_usable(first + HL_TLSF_HDR) + HL_TLSF_USED_OVERHEAD + HL_TLSF_POOL_OVERHEAD ==
               p->bytes; /* usable = block size - the 8-byte word (tlsf.h) */
}

/* Take out of arena a the empty pools idle for at least `decay` ms (every empty one when all),
 * chained on *out by `next` for the caller to unmap after dropping the lock. Returns how many
 * empty pools stay. Caller holds a->lock. */
static unsigned arena_expire(hl_arena_t *a, uint32_t now, uint32_t decay, int all,
                             hl_tlsf_pool_t **out)
{
    unsigned kept = 0;
    for (hl_tlsf_pool_t *p = a->tlsf.pools, *n; p; p = n) {
        n = p->next;
        if (!pool_empty(p)) continue;
        if (all || (uint32_t)(now - p->empty_since) >= decay) {
            hl_tlsf_remove_pool(&a->tlsf, p);
            p->next = *out;
            *out = p;
        } else {
            kept++;
        }
    }
    return kept;
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

/* The smallest empty pool of at least `need` bytes of another arena than `self`, taken out of
 * it; NULL if none. Busy arenas are skipped (trylock: the caller holds its own arena's lock). */
static hl_tlsf_pool_t *steal_empty_pool(hl_mid_t *m, hl_arena_t *self, size_t need)
{
    for (unsigned i = 0; i < m->narenas; i++) {
        hl_arena_t *a = &m->arenas[i];
        if (a == self || !__atomic_load_n(&a->tlsf.pools, __ATOMIC_RELAXED) ||
            pthread_mutex_trylock(&a->lock) != 0)
            continue;
        hl_tlsf_pool_t *best = NULL;
        for (hl_tlsf_pool_t *p = a->tlsf.pools; p; p = p->next)
            if (p->bytes >= need && (!best || p->bytes < best->bytes) && pool_empty(p)) best = p;
        if (best) hl_tlsf_remove_pool(&a->tlsf, best);
        hl_unlock(&a->lock);
        if (best) return best;
    }
    return NULL;
}

/* The pages of a's parked pools (those not yet expired) go back to the OS; the pools stay
 * mapped and parked, and fault in only what a later use touches. A pool the arena takes back
 * now and then for a moment (a working set slightly larger than the pools that serve) is
 * parked again within the decay time each time, so it would never expire with its pages
 * resident. Passes do this only while no arena grew and no thread bound to or left an arena
 * during the decay time (hl_mid_decay): while threads come and go, each takes the parked pools
 * its predecessors left, whole, and dropping their pages cost the 4-thread churn 45 % more
 * page faults. The first and last pages (the pool and block headers, the sentinel) stay.
 * Caller holds a->lock: nobody may allocate from a pool while its pages are dropped. */
static void purge_parked(hl_arena_t *a)
{
    for (hl_tlsf_pool_t *p = hl_tlsf_parked_next(&a->tlsf, NULL); p;
         p = hl_tlsf_parked_next(&a->tlsf, p))
        hl_os_decommit((char *)p + hl_page_size, p->bytes - 2 * hl_page_size);
}

int hl_mid_decay(hl_heap_t *h, uint32_t now)
{
    int left = 0;
    if (h->arena_base) return 0;
    /* An arena grew, or a thread bound to or left one, within the decay time: the empty pools
     * are the working set of a churn (short-lived threads take them in turn), not memory left
     * over after a burst. */
    if ((uint32_t)(now - __atomic_load_n(&h->mid.grow_stamp, __ATOMIC_RELAXED)) < h->opt.decay_ms)
        return 1;
    for (unsigned i = 0; i < h->mid.narenas; i++) {
        hl_arena_t *a = &h->mid.arenas[i];
        if (!__atomic_load_n(&a->tlsf.pools, __ATOMIC_RELAXED)) continue;
        if (pthread_mutex_trylock(&a->lock) != 0) {
            left = 1; /* busy: the next pass looks again */
            continue;
        }
        hl_tlsf_pool_t *release = NULL;
        left |= arena_expire(a, now, h->opt.decay_ms, 0, &release) != 0;
        purge_parked(a);
        hl_unlock(&a->lock);
        unmap_pools(release);
    }
    return left;
}

/* ---- arenas --------------------------------------------------------------------------------- */

/* The smallest parked pool of a (mid.h) of at least need bytes (any when need is 0), or NULL.
 * Caller holds a->lock. */
static hl_tlsf_pool_t *smallest_parked(hl_arena_t *a, size_t need)
{
    hl_tlsf_pool_t *best = NULL;
    for (hl_tlsf_pool_t *p = hl_tlsf_parked_next(&a->tlsf, NULL); p;
         p = hl_tlsf_parked_next(&a->tlsf, p))
        if (p->bytes >= need && (!best || p->bytes < best->bytes)) best = p;
    return best;
}

/* Pool of a that became entirely free (decay on): parked while the arena has another pool
 * that serves, so that the arena's blocks gather in the pools it uses and this one decays
 * (mid.h); else it serves on — unless a smaller one is parked, which serves instead. Caller
 * holds a->lock. */
static void pool_emptied(hl_arena_t *a, hl_tlsf_pool_t *pool)
{
    if (a->tlsf.pool_bytes - a->tlsf.parked_bytes > pool->bytes) {
        hl_tlsf_park_pool(&a->tlsf, pool);
        return;
    }
    hl_tlsf_pool_t *small = smallest_parked(a, 0);
    if (small && small->bytes < pool->bytes) {
        hl_tlsf_park_pool(&a->tlsf, pool);
        hl_tlsf_unpark_pool(&a->tlsf, small);
    }
}

/* Add a pool able to hold an aligned block of n bytes: the arena's own parked pool, else another
 * arena's empty pool, else a new mapping. Only the last two count as growth for the decay
 * (mid.h). Caller holds a->lock. */
static int arena_grow(hl_heap_t *h, hl_arena_t *a, size_t n, size_t align)
{
    size_t need =
        hl_tlsf_block_size(n) + (align > 16 ? align + HL_TLSF_MIN : 0) + HL_TLSF_POOL_OVERHEAD;
    hl_tlsf_pool_t *own = smallest_parked(a, need);
    if (own) {
        hl_tlsf_unpark_pool(&a->tlsf, own);
        return 0;
    }
    __atomic_store_n(&h->mid.grow_stamp, hl_decay_now(), __ATOMIC_RELAXED);
    hl_tlsf_pool_t *reuse = steal_empty_pool(&h->mid, a, need);
    if (reuse) {
        uint32_t reported = reuse->owner_flags; /* its os_map was emitted once: keep that */
        hl_tlsf_add_pool(&a->tlsf, reuse, reuse->bytes);
        reuse->owner_flags = reported;
        return 0;
    }
    size_t grow = HL_POOL_SIZE_MIN;
    for (hl_tlsf_pool_t *p = a->tlsf.pools; p && grow < HL_POOL_SIZE; p = p->next)
        grow *= 2;
    size_t bytes = need < grow ? grow : hl_align_up(need, hl_page_size);
    void *mem = hl_os_map_quiet(bytes, hl_page_size, "tlsf_pool");
    if (!mem) return -1;
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
    if (!p) return NULL;
    hl_count(h, path);
    hl_info(info, HL_TIER_MID, 0xff, path, usable);
    return p;
}

void hl_mid_free(hl_heap_t *h, void *p, hl_opinfo_t *info)
{
    hl_mid_t *m = &h->mid;
    unsigned owner = hl_tlsf_owner(p);
    if (owner >= m->narenas) {
        if (owner == HL_SIDE_OWNER && hl_side_owns(p)) { /* the tracer's block (sideheap.c) */
            hl_info(info, HL_TIER_MID, 0xff, HL_PATH_TLSF_FREE, hl_side_usable(p));
            hl_side_free(p);
            return;
        }
        hl_fatal("invalid-free", p, "mid block header names no arena of this heap");
    }
    hl_arena_t *a = &m->arenas[owner];
    hl_tlsf_freed_t fr;
    hl_tlsf_pool_t *release = NULL;
    size_t usable = hl_tlsf_usable(p);
    hl_tls_t *t = hl_tls_of(h);
    if (!t->heap) t->arena_hint = owner + 1; /* a new thread freeing its predecessor's blocks */
    hl_lock(&a->lock);
    hl_tlsf_free(&a->tlsf, p, &fr);
    if (!h->arena_base) {
        if (fr.empty_pool && h->opt.decay_ms) {
            /* Kept for decay ms (decay.h), parked unless the arena needs it to serve; another
             * arena may take it. */
            fr.empty_pool->empty_since = hl_decay_now();
            pool_emptied(a, fr.empty_pool);
            __atomic_store_n(&h->decay_pending, 1, __ATOMIC_RELAXED);
        } else if (fr.empty_pool && a->tlsf.pools->next) { /* decay=0: at once */
            hl_tlsf_remove_pool(&a->tlsf, fr.empty_pool);
            fr.empty_pool->next = NULL;
            release = fr.empty_pool;
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
    if (owner >= h->mid.narenas) {
        if (owner == HL_SIDE_OWNER && hl_side_owns(p)) /* the tracer's block: the caller moves it */
            return 0;
        hl_fatal("invalid-realloc", p, "mid block header names no arena of this heap");
    }
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
    if (h->arena_base) return 0;
    for (unsigned i = 0; i < h->mid.narenas; i++) {
        hl_arena_t *a = &h->mid.arenas[i];
        hl_tlsf_pool_t *release = NULL;
        hl_lock(&a->lock);
        arena_expire(a, 0, 0, 1, &release);
        hl_tlsf_walk(&a->tlsf, decommit_free, &n);
        hl_unlock(&a->lock);
        for (hl_tlsf_pool_t *p = release; p; p = p->next)
            n += p->bytes;
        unmap_pools(release);
    }
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
        ub += a->tlsf.used_bytes - a->tlsf.used_blocks * HL_TLSF_USED_OVERHEAD;
        fb += hl_tlsf_free_bytes(&a->tlsf) + a->tlsf.parked_bytes -
              a->tlsf.parked_pools * HL_TLSF_POOL_OVERHEAD;
        size_t l = hl_tlsf_largest_free(&a->tlsf);
        hl_tlsf_pool_t *big = NULL; /* the largest parked pool is one free block */
        for (hl_tlsf_pool_t *p = hl_tlsf_parked_next(&a->tlsf, NULL); p;
             p = hl_tlsf_parked_next(&a->tlsf, p))
            if (!big || p->bytes > big->bytes) big = p;
        if (big && big->bytes - HL_TLSF_POOL_OVERHEAD > l) l = big->bytes - HL_TLSF_POOL_OVERHEAD;
        lf = l > lf ? l : lf;
        for (hl_tlsf_pool_t *p = a->tlsf.pools; p; p = p->next)
            np++;
        hl_unlock(&a->lock);
    }
    *pool_bytes = pb;
    *used_bytes = ub;
    *free_bytes = fb;
    *largest_free = lf;
    *pools = np;
}

void hl_mid_destroy(hl_heap_t *h)
{
    if (h->arena_base) return;
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
}
