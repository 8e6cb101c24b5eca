/* liballoc/tiny.c — tiny tier: slabs and central per-class lists (see tiny.h). */
#include "internal.h"
#include "classmap.h"

#include <errno.h>
#include <string.h>

_Static_assert(HL_CLASS_SLOT_27 >= HL_TINY_MAX + 1, "last class serves HL_TINY_MAX");

#define HL_SLOT_LINE 64 /* cache line: slot 0's alignment outside fixed arenas (slab_first) */

static void drain_xfer(hl_heap_t *h);
static void collect_all(hl_heap_t *h);

void hl_tiny_setup(hl_heap_t *h)
{
    hl_tiny_t *t = &h->tiny;
    for (unsigned c = 0; c < HL_CLASS_COUNT; c++)
        hl_lock_init(&t->cls[c].lock);
    hl_lock_init(&t->src_lock);
    t->slab_size = h->opt.slab_size;
    /* Arena mode: a slab is a TLSF block aligned to slab_size whose 16-byte header sits in the
     * previous slab_size window; using slab_size - 16 bytes lets slabs pack edge to edge. */
    t->slab_extent = h->arena_base ? t->slab_size - HL_TLSF_HDR : t->slab_size;
    t->slab_mask = ~(uintptr_t)(t->slab_size - 1);
    size_t max_slots = t->slab_size / 16;
    t->hdr_size = sizeof(hl_slab_t) + (max_slots + 63) / 64 * 8;
    /* hardening hook: a byte of state per slot (harden.c), slots of 64 bytes and more */
    if (h->opt.harden) t->hdr_size = sizeof(hl_slab_t) + t->slab_size / HL_HSTATE_SLOT_MIN;
    /* Cache caps: about HL_TINY_CAP_BYTES of slots per class, between 16 and 128 slots, scaled. */
    for (unsigned c = 0; c < HL_CLASS_MAX; c++) {
        uint32_t cap = 0;
        if (c < HL_CLASS_COUNT && h->opt.tcache) {
            cap = (uint32_t)(HL_TINY_CAP_BYTES / hl_class_slot(c));
            cap = cap < 16 ? 16 : cap > 128 ? 128 : cap;
            cap *= h->opt.tcache;
        }
        t->caps[c] = h->opt.harden ? 0 : cap; /* hardening hook: every op takes the slow path */
    }
}

/* Are h's slabs in the class map (classmap.h)? The default heap's in normal mode, when a
 * slab covers whole windows of the map. */
static inline int in_cmap(const hl_heap_t *h)
{
    return h == &hl_main_heap && !h->arena_base &&
           h->tiny.slab_size >= ((size_t)1 << HL_CMAP_SHIFT);
}

/* ---- slab source -------------------------------------------------------------------------- */

/* A fresh empty slab (descriptor not yet initialised), or NULL. Caller holds no tiny lock
 * other than possibly one class lock. */
static hl_slab_t *source_get(hl_heap_t *h)
{
    hl_tiny_t *t = &h->tiny;
    hl_slab_t *s = NULL;
    hl_lock(&t->src_lock);
    if (t->free_slabs) {
        s = t->free_slabs;
        t->free_slabs = s->next;
        t->nfree_slabs--;
    } else if (!h->arena_base) {
        hl_segment_t *seg = t->segments;
        if (!seg || seg->carved == seg->nslabs) {
            unsigned nslabs = seg ? seg->nslabs * 2 : HL_SEGMENT_SLABS_MIN;
            if (nslabs > HL_SEGMENT_SLABS) nslabs = HL_SEGMENT_SLABS;
            size_t bytes = t->slab_size * nslabs;
            seg = hl_os_map_quiet(bytes, t->slab_size, "slab_segment");
            if (seg) {
                seg->bytes = bytes;
                seg->nslabs = nslabs;
                seg->carved = 1; /* slab 0 holds this record */
                seg->reported = 0;
                seg->next = t->segments;
                t->segments = seg;
                hl_region_report(seg, bytes, "slab_segment", &seg->reported);
            }
        }
        if (seg) {
            s = (hl_slab_t *)((char *)seg + (size_t)seg->carved * t->slab_size);
            seg->carved++;
            s->segment = seg;
            s->decommitted = 0;
        }
    }
    if (s) t->slabs_carved++;
    hl_unlock(&t->src_lock);
    if (!s && h->arena_base) {
        s = hl_mid_alloc_slab(h);
        if (s) {
            s->segment = NULL;
            s->decommitted = 0;
            hl_lock(&t->src_lock);
            t->slabs_carved++;
            hl_unlock(&t->src_lock);
        }
    }
    return s;
}

/* Take an empty slab back. Beyond trim_keep kept slabs, pages go back to the OS (normal
 * mode) or the slab goes back to the arena. */
static void source_put(hl_heap_t *h, hl_slab_t *s)
{
    hl_tiny_t *t = &h->tiny;
    s->cls = 0xff;
    if (in_cmap(h)) hl_cmap_set(s, t->slab_size, 0); /* no class while in the source */
    hl_lock(&t->src_lock);
    t->slabs_carved--;
    if (h->arena_base && t->nfree_slabs >= h->opt.trim_keep) {
        hl_unlock(&t->src_lock);
        hl_mid_free_slab(h, s);
        return;
    }
    if (!h->arena_base && t->nfree_slabs >= h->opt.trim_keep && !s->decommitted) {
        hl_os_decommit((char *)s + hl_page_size, t->slab_size - hl_page_size);
        s->decommitted = 1;
    }
    s->next = t->free_slabs;
    t->free_slabs = s;
    t->nfree_slabs++;
    hl_unlock(&t->src_lock);
}

size_t hl_tiny_trim(hl_heap_t *h, int all)
{
    hl_tiny_t *t = &h->tiny;
    size_t released = 0;
    drain_xfer(h);
    collect_all(h);
    hl_lock(&t->src_lock);
    hl_slab_t *list = NULL;
    if (h->arena_base) {
        /* Give every kept slab back to the arena (after dropping the lock). */
        list = t->free_slabs;
        t->free_slabs = NULL;
        t->nfree_slabs = 0;
    } else {
        for (hl_slab_t *s = t->free_slabs; s; s = s->next) {
            if (!s->decommitted || all) {
                hl_os_decommit((char *)s + hl_page_size, t->slab_size - hl_page_size);
                released += s->decommitted ? 0 : t->slab_size - hl_page_size;
                s->decommitted = 1;
            }
        }
    }
    hl_unlock(&t->src_lock);
    while (list) {
        hl_slab_t *n = list->next;
        hl_mid_free_slab(h, list);
        released += t->slab_size;
        list = n;
    }
    return released;
}

/* ---- slabs -------------------------------------------------------------------------------- */

/* Where slot 0's user bytes start: on a cache line (64 B) outside fixed arenas, so that the
 * slots of a class whose size is a multiple of 64 (64, 128, 192, 256, 320 … 896 B) cover
 * whole lines and two neighbours never share one: their blocks move between threads
 * (larson frees every block on another thread than the one that allocated it), and a line
 * shared by blocks two cores write bounces between them (false sharing). At 16 B, the
 * first slot started 48 B into a line and every such slot straddled two neighbours' lines
 * (docs/PERFORMANCE.md, "Issue 14, sixth round"). A fixed arena's 4 KiB slabs keep 16 B:
 * up to 48 B more per slab is a slot of the small classes out of an arena judged by its
 * utilisation. */
static inline char *slab_first(const hl_tiny_t *t, hl_slab_t *s)
{
    uintptr_t align = t->slab_extent == t->slab_size ? HL_SLOT_LINE : 16;
    return (char *)hl_align_up((uintptr_t)s + t->hdr_size + 1, align);
}

static void slab_init(hl_tiny_t *t, hl_slab_t *s, unsigned cls)
{
    uint32_t S = hl_class_slot(cls);
    s->magic = HL_SLAB_MAGIC;
    s->gen++; /* slab generation: hardened trailers of earlier lives become stale (harden.c) */
    s->cls = (uint8_t)cls;
    s->on_partial = 0;
    s->slot_size = S;
    s->first = slab_first(t, s);
    s->nslots = (uint32_t)(((char *)s + t->slab_extent - s->first + 1) / S);
    s->used = 0;
    s->bump = 0;
    s->free = NULL;
    s->remote = 0; /* a released slab had every slot back, remote ones collected */
    s->rnext = NULL;
    memset(s->state, 0, t->hdr_size - sizeof(hl_slab_t));
}

static inline void partial_push(hl_tiny_class_t *c, hl_slab_t *s)
{
    s->prev = NULL;
    s->next = c->partial;
    if (c->partial) c->partial->prev = s;
    c->partial = s;
    s->on_partial = 1;
}

static inline void partial_remove(hl_tiny_class_t *c, hl_slab_t *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        c->partial = s->next;
    if (s->next) s->next->prev = s->prev;
    s->on_partial = 0;
}

static inline void all_push(hl_tiny_class_t *c, hl_slab_t *s)
{
    s->aprev = NULL;
    s->anext = c->all;
    if (c->all) c->all->aprev = s;
    c->all = s;
    c->slabs++;
}

static inline void all_remove(hl_tiny_class_t *c, hl_slab_t *s)
{
    if (s->aprev)
        s->aprev->anext = s->anext;
    else
        c->all = s->anext;
    if (s->anext) s->anext->aprev = s->aprev;
    c->slabs--;
}

/* Next slot of slab s, or NULL when it has none. Caller holds the class lock. */
static inline void *slab_take(hl_slab_t *s)
{
    void *p = s->free;
    if (p) {
        s->free = *(void **)p;
    } else if (s->bump < s->nslots) {
        char *q = s->first + (size_t)s->bump * s->slot_size;
        q[-1] = (char)(HL_TAG_TINY | s->cls);
        s->bump++;
        p = q;
    } else {
        return NULL;
    }
    s->used++;
    return p;
}

static inline int slab_full(const hl_slab_t *s)
{
    return !s->free && s->bump == s->nslots;
}

/* Return the run first..last (n slots of slab s, linked through their first words; last's
 * link is overwritten) to s as one splice. A slab that became empty is removed from both
 * lists and pushed onto *empty, to be released by the caller after dropping the lock.
 * Caller holds the class lock. */
static inline void slab_put_run(hl_tiny_class_t *c, hl_slab_t *s, void *first, void *last,
                                uint32_t n, hl_slab_t **empty)
{
    *(void **)last = s->free;
    s->free = first;
    s->used -= n;
    if (s->used == 0) {
        if (s->on_partial) partial_remove(c, s);
        all_remove(c, s);
        s->next = *empty;
        *empty = s;
        return;
    }
    if (!s->on_partial) partial_push(c, s);
}

/* ---- remote lists (see tiny.h) ------------------------------------------------------------ */

#define REMOTE_QUEUED ((uintptr_t)1)

/* Push the run first..last of slab s onto s's remote list without any lock; the push that
 * finds the list unqueued queues s on the class's pending list. The run's slots stay counted
 * in s->used until collected, so s cannot be released (nor reused) meanwhile. */
static void remote_push(hl_tiny_class_t *c, hl_slab_t *s, void *first, void *last)
{
    uintptr_t old = __atomic_load_n(&s->remote, __ATOMIC_RELAXED);
    do {
        *(void **)last = (void *)(old & ~REMOTE_QUEUED);
    } while (!__atomic_compare_exchange_n(&s->remote, &old, (uintptr_t)first | REMOTE_QUEUED, 1,
                                          __ATOMIC_RELEASE, __ATOMIC_RELAXED));
    if (old & REMOTE_QUEUED)
        return; /* queued already (or being queued by the push that set the bit) */
    hl_slab_t *head = __atomic_load_n(&c->pending, __ATOMIC_RELAXED);
    do {
        s->rnext = head;
    } while (
        !__atomic_compare_exchange_n(&c->pending, &head, s, 1, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
}

/* Take every queued slab's remote chain back into its free list (a walk to count each chain,
 * one splice per slab). Caller holds the class lock; emptied slabs go onto *empty. Only the
 * lock holder takes slabs off the pending list, so each queued slab is collected once. */
static void remote_collect(hl_tiny_class_t *c, hl_slab_t **empty)
{
    if (!__atomic_load_n(&c->pending, __ATOMIC_RELAXED)) return;
    hl_slab_t *s = __atomic_exchange_n(&c->pending, NULL, __ATOMIC_ACQUIRE);
    while (s) {
        hl_slab_t *next = s->rnext; /* read before the exchange lets pushers queue s again */
        void *chain =
            (void *)(__atomic_exchange_n(&s->remote, 0, __ATOMIC_ACQUIRE) & ~REMOTE_QUEUED);
        if (chain) {
            void *last = chain;
            uint32_t n = 1;
            for (void *q; (q = *(void **)last) != NULL; last = q)
                n++;
            slab_put_run(c, s, chain, last, n, empty);
        }
        s = next;
    }
}

static void release_empty(hl_heap_t *h, hl_slab_t *empty)
{
    while (empty) {
        hl_slab_t *n = empty->next;
        source_put(h, empty);
        empty = n;
    }
}

/* Drop the class lock, release the slabs that became empty, and collect the remote slots
 * pushed while the lock was held (their pushers found it busy), as long as the lock is free. */
static void class_unlock(hl_heap_t *h, hl_tiny_class_t *c, hl_slab_t *empty)
{
    for (;;) {
        hl_unlock(&c->lock);
        release_empty(h, empty);
        if (!__atomic_load_n(&c->pending, __ATOMIC_SEQ_CST) || pthread_mutex_trylock(&c->lock))
            return;
        empty = NULL;
        remote_collect(c, &empty);
    }
}

/* Return a chain under the class lock: one splice per run of slots of the same slab. */
static void return_locked(hl_tiny_t *t, hl_tiny_class_t *c, void *chain, hl_slab_t **empty)
{
    while (chain) {
        hl_slab_t *s = hl_tiny_slab_of(t, chain);
        void *last = chain, *next;
        uint32_t n = 1;
        while ((next = *(void **)last) != NULL && hl_tiny_slab_of(t, next) == s) {
            last = next;
            n++;
        }
        slab_put_run(c, s, chain, last, n, empty);
        chain = next;
    }
}

/* The class lock is busy: each run of slots of the same slab goes onto that slab's remote
 * list. */
static void return_remote(hl_tiny_t *t, hl_tiny_class_t *c, void *chain)
{
    while (chain) {
        hl_slab_t *s = hl_tiny_slab_of(t, chain);
        void *last = chain, *next;
        while ((next = *(void **)last) != NULL && hl_tiny_slab_of(t, next) == s)
            last = next;
        remote_push(c, s, chain, last);
        chain = next;
    }
}

/* Index of the batch a refill by thread cache tl takes: tl's newest, else the newest.
 * Caller holds the class lock; c->nxfer > 0. */
static inline unsigned xfer_pick(const hl_tiny_class_t *c, const hl_tls_t *tl)
{
    for (unsigned k = c->nxfer; k-- > 0;)
        if (c->xfer_by[k] == tl) return k;
    return c->nxfer - 1;
}

/* Drop batch k, keeping the others in the order they were handed over. */
static inline void xfer_remove(hl_tiny_class_t *c, unsigned k)
{
    for (unsigned i = k + 1; i < c->nxfer; i++) {
        c->xfer[i - 1] = c->xfer[i];
        c->xfer_n[i - 1] = c->xfer_n[i];
        c->xfer_by[i - 1] = c->xfer_by[i];
    }
    c->nxfer--;
}

void *hl_tiny_alloc_slow(hl_heap_t *h, hl_tls_t *tl, unsigned cls, hl_opinfo_t *info)
{
    hl_tiny_t *t = &h->tiny;
    hl_tiny_class_t *c = &t->cls[cls];
    hl_tbin_t *b = &tl->bins[HL_BIN_TINY | cls];
    void *head = tl->tcap.spare[cls];
    if (head && b->cap) {
        /* The bin's second chain (tcap.h): taken back whole, no lock, nothing shared; a hit
         * of the thread cache in the statistics (tiny_refill counts refills from the class). */
        uint32_t got = tl->tcap.spare_n[cls];
        tl->tcap.spare[cls] = NULL;
        tl->tcap.spare_n[cls] = 0;
        tl->tcap.busy[cls] = 1; /* in use beyond its cap: not idle (tcap.h) */
        b->head = *(void **)head;
        b->avail = (int32_t)b->cap - (int32_t)(got - 1);
        tl->paths[HL_PATH_TINY_CACHE_HIT]++;
        hl_info(info, HL_TIER_TINY, cls, HL_PATH_TINY_CACHE_HIT, hl_class_slot(cls) - 1);
        return head;
    }
    hl_path_t path = HL_PATH_TINY_REFILL;
    head = NULL;
    unsigned prev = HL_TCAP_NONE;
    if (b->cap) prev = hl_tcap_event(h, &tl->tcap, cls, HL_TCAP_REFILL); /* may grow (tcap.h) */
    unsigned want = b->cap ? hl_tcap_warm(&tl->tcap, cls, hl_class_slot(cls), (b->cap + 1) / 2) : 1;
    unsigned got = 0;

    hl_slab_t *empty = NULL;
    hl_lock(&c->lock);
    if (c->nxfer && b->cap) {
        /* A batch a bin handed over: taken whole, no slab touched; this thread's own newest
         * one if it has one (its lines are in this core's cache), else the newest. */
        unsigned k = xfer_pick(c, tl);
        head = c->xfer[k];
        got = c->xfer_n[k];
        if (got > b->cap) {
            /* A batch of a bin whose cap grew larger (tcap.h): take what fits, the rest stays. */
            void *cut = head;
            for (unsigned i = 1; i < want; i++)
                cut = *(void **)cut;
            c->xfer[k] = *(void **)cut;
            c->xfer_n[k] = got - want;
            *(void **)cut = NULL;
            got = want;
        } else {
            xfer_remove(c, k);
            /* One-way traffic (a refill after a refill: a thread that allocates more than it
             * frees, a producer): a second batch becomes the bin's second chain, so such a
             * thread comes to the class once per two bins, as a consumer hands over (below). */
            if (prev == HL_TCAP_REFILL && c->nxfer) {
                unsigned k2 = xfer_pick(c, tl);
                if (c->xfer_n[k2] <= b->cap) {
                    tl->tcap.spare[cls] = c->xfer[k2];
                    tl->tcap.spare_n[cls] = c->xfer_n[k2];
                    xfer_remove(c, k2);
                }
            }
        }
        want = 0;
    }
    if (got < want) remote_collect(c, &empty);
    while (got < want) {
        hl_slab_t *s = c->partial;
        if (!s) {
            /* The source lock nests inside the class lock; the arena lock (arena mode)
             * nests inside both and never takes either. */
            s = source_get(h);
            if (!s) break;
            slab_init(t, s, cls);
            if (in_cmap(h)) hl_cmap_set(s, t->slab_size, (uint8_t)(HL_BIN_TINY | cls));
            all_push(c, s);
            partial_push(c, s);
            path = HL_PATH_TINY_NEW_SLAB;
        }
        while (got < want) {
            void *p = slab_take(s);
            if (!p) break;
            *(void **)p = head;
            head = p;
            got++;
        }
        if (slab_full(s)) partial_remove(c, s);
    }
    class_unlock(h, c, empty);

    if (!got) return NULL;
    void *p = head;
    b->head = *(void **)head;
    b->avail = (int32_t)b->cap - (int32_t)(got - 1);
    tl->paths[path]++;
    hl_info(info, HL_TIER_TINY, cls, path, hl_class_slot(cls) - 1);
    return p;
}

/* Put the chain of n slots into the transfer cache, or return it to the slabs when the cache
 * is full. Caller holds the class lock. */
static void xfer_put(hl_heap_t *h, hl_tiny_class_t *c, void *chain, uint32_t n, const void *by,
                     hl_slab_t **empty)
{
    if (c->nxfer < HL_XFER_SLOTS) {
        c->xfer[c->nxfer] = chain;
        c->xfer_n[c->nxfer] = n;
        c->xfer_by[c->nxfer] = by;
        c->nxfer++;
    } else {
        return_locked(&h->tiny, c, chain, empty);
    }
}

void hl_tiny_flush_batch(hl_heap_t *h, unsigned cls, void *chain, uint32_t n)
{
    hl_tiny_class_t *c = &h->tiny.cls[cls];
    hl_tls_t *tl = hl_tls_of(h);
    void *second = NULL;
    uint32_t second_n = 0;
    if (tl->heap == h && tl->bins[HL_BIN_TINY | cls].cap) {
        /* The chain becomes the bin's second chain (tcap.h); the one it held, if any, goes to
         * the class. One-way traffic (this flush's event came after another flush: a thread
         * that frees more than it allocates, a consumer) hands over both: nothing waits in a
         * thread that will not allocate it, and the class sees one flush per two bins. */
        void *old = tl->tcap.spare[cls];
        uint32_t old_n = tl->tcap.spare_n[cls];
        if (!old) {
            tl->tcap.spare[cls] = chain;
            tl->tcap.spare_n[cls] = n;
            return;
        }
        if (tl->tcap.before[cls] == HL_TCAP_FLUSH) {
            second = chain;
            second_n = n;
            tl->tcap.spare[cls] = NULL;
            tl->tcap.spare_n[cls] = 0;
        } else {
            tl->tcap.spare[cls] = chain;
            tl->tcap.spare_n[cls] = n;
        }
        chain = old;
        n = old_n;
    }
    if (pthread_mutex_trylock(&c->lock)) {
        return_remote(&h->tiny, c, chain); /* busy: never wait on a free path */
        if (second) return_remote(&h->tiny, c, second);
        return;
    }
    hl_slab_t *empty = NULL;
    xfer_put(h, c, chain, n, tl, &empty);
    if (second) xfer_put(h, c, second, second_n, tl, &empty);
    if (empty || c->nxfer == HL_XFER_SLOTS) remote_collect(c, &empty);
    class_unlock(h, c, empty);
}

/* Give every batch of the transfer caches back to the slabs (trim, fixed-arena reclaim). */
static void drain_xfer(hl_heap_t *h)
{
    for (unsigned cls = 0; cls < HL_CLASS_COUNT; cls++) {
        hl_tiny_class_t *c = &h->tiny.cls[cls];
        hl_slab_t *empty = NULL;
        hl_lock(&c->lock);
        while (c->nxfer) {
            c->nxfer--;
            return_locked(&h->tiny, c, c->xfer[c->nxfer], &empty);
        }
        remote_collect(c, &empty);
        class_unlock(h, c, empty);
    }
}

void hl_tiny_return_chain(hl_heap_t *h, unsigned cls, void *chain)
{
    hl_tiny_t *t = &h->tiny;
    hl_tiny_class_t *c = &t->cls[cls];
    if (pthread_mutex_trylock(&c->lock)) {
        return_remote(t, c, chain);
        return;
    }
    hl_slab_t *empty = NULL;
    return_locked(t, c, chain, &empty);
    remote_collect(c, &empty);
    class_unlock(h, c, empty);
}

void hl_tiny_fork_child(hl_heap_t *h)
{
    /* A push interrupted by the fork between its two compare-and-swaps left a slab queued
     * (bit 0) but not on the pending list: only this thread is left, so sweep every slab. */
    for (unsigned cls = 0; cls < HL_CLASS_COUNT; cls++) {
        hl_tiny_class_t *c = &h->tiny.cls[cls];
        hl_slab_t *empty = NULL;
        hl_lock(&c->lock);
        c->pending = NULL;
        for (hl_slab_t *s = c->all, *next; s; s = next) {
            next = s->anext; /* s may leave the all list */
            void *chain = (void *)(s->remote & ~REMOTE_QUEUED);
            s->remote = 0;
            if (chain) {
                void *last = chain;
                uint32_t n = 1;
                for (void *q; (q = *(void **)last) != NULL; last = q)
                    n++;
                slab_put_run(c, s, chain, last, n, &empty);
            }
        }
        class_unlock(h, c, empty);
    }
}

/* Collect every class's remote slots now (trim, heap checks that need exact counts). */
static void collect_all(hl_heap_t *h)
{
    for (unsigned cls = 0; cls < HL_CLASS_COUNT; cls++) {
        hl_tiny_class_t *c = &h->tiny.cls[cls];
        if (!__atomic_load_n(&c->pending, __ATOMIC_SEQ_CST)) continue;
        hl_slab_t *empty = NULL;
        hl_lock(&c->lock);
        remote_collect(c, &empty);
        class_unlock(h, c, empty);
    }
}

void hl_tiny_free_direct(hl_heap_t *h, void *p, unsigned cls)
{
    *(void **)p = NULL;
    hl_tiny_return_chain(h, cls, p);
}

void hl_tiny_class_counts(hl_heap_t *h, unsigned cls, size_t *slabs, size_t *used, size_t *held)
{
    hl_tiny_class_t *c = &h->tiny.cls[cls];
    size_t u = 0, n = 0;
    hl_slab_t *empty = NULL;
    hl_lock(&c->lock);
    remote_collect(c, &empty); /* remote slots are free: exact counts */
    for (hl_slab_t *s = c->all; s; s = s->anext) {
        u += s->used;
        n += s->nslots;
    }
    for (unsigned i = 0; i < c->nxfer; i++) /* out of their slabs, but free */
        u -= c->xfer_n[i];
    *slabs = c->slabs;
    class_unlock(h, c, empty);
    *used = u;
    *held = n;
}

/* ---- checker and destruction -------------------------------------------------------------- */

static size_t tiny_bad(int verbose, const char *what, const void *where)
{
    return hl_check_fail(verbose, "tiny", what, where);
}

size_t hl_tiny_check(hl_heap_t *h, int verbose)
{
    hl_tiny_t *t = &h->tiny;
    size_t errors = 0;
    for (unsigned cls = 0; cls < HL_CLASS_COUNT; cls++) {
        hl_tiny_class_t *c = &t->cls[cls];
        hl_lock(&c->lock);
        size_t n = 0;
        for (hl_slab_t *s = c->all; s; s = s->anext, n++) {
            if (s->magic != HL_SLAB_MAGIC || s->cls != cls) {
                errors += tiny_bad(verbose, "slab descriptor", s);
                break;
            }
            if (((uintptr_t)s & ~t->slab_mask) != 0)
                errors += tiny_bad(verbose, "slab alignment", s);
            size_t nfree = 0;
            for (void *p = s->free; p; p = *(void **)p) {
                uintptr_t off = (uintptr_t)((char *)p - s->first);
                if (hl_tiny_slab_of(t, p) != s || off % s->slot_size ||
                    off / s->slot_size >= s->bump) {
                    errors += tiny_bad(verbose, "free slot off the slot grid", p);
                    break;
                }
                if (((uint8_t *)p)[-1] != (HL_TAG_TINY | cls))
                    errors += tiny_bad(verbose, "free slot header byte", p);
                if (++nfree > s->nslots) {
                    errors += tiny_bad(verbose, "slab free list cycle", s);
                    break;
                }
            }
            if (s->used + nfree != s->bump || s->bump > s->nslots)
                errors += tiny_bad(verbose, "slab slot counters", s);
            if (s->on_partial == slab_full(s))
                errors += tiny_bad(verbose, "slab partial-list membership", s);
            if (s->used == 0) errors += tiny_bad(verbose, "empty slab not released", s);
        }
        if (n != c->slabs) errors += tiny_bad(verbose, "class slab count", c);
        hl_unlock(&c->lock);
    }
    /* The calling thread's cache. */
    hl_tls_t *tl = hl_tls_of(h);
    if (tl->heap == h) {
        for (unsigned cls = 0; cls < HL_CLASS_COUNT; cls++) {
            hl_tbin_t *b = &tl->bins[HL_BIN_TINY | cls];
            uint32_t n = 0;
            for (void *p = b->head; p; p = *(void **)p) {
                if (((uint8_t *)p)[-1] != (HL_TAG_TINY | cls)) {
                    errors += tiny_bad(verbose, "cached slot header byte", p);
                    break;
                }
                if (++n > hl_bin_count(b)) break;
            }
            if (n != hl_bin_count(b) || b->avail < 0)
                errors += tiny_bad(verbose, "thread cache count", b);
            /* The bin's second chain (tcap.h): at most a cap of slots of this class. */
            uint32_t m = 0;
            for (void *p = tl->tcap.spare[cls]; p; p = *(void **)p) {
                if (((uint8_t *)p)[-1] != (HL_TAG_TINY | cls)) {
                    errors += tiny_bad(verbose, "second-chain slot header byte", p);
                    break;
                }
                if (++m > tl->tcap.spare_n[cls]) break;
            }
            if (m != tl->tcap.spare_n[cls] || m > b->cap)
                errors += tiny_bad(verbose, "thread cache second-chain count", b);
        }
    }
    return errors;
}

void hl_tiny_destroy(hl_heap_t *h)
{
    hl_segment_t *seg = h->tiny.segments;
    while (seg) {
        hl_segment_t *n = seg->next;
        hl_region_unreport(seg, seg->bytes, "slab_segment", &seg->reported);
        hl_os_unmap_quiet(seg, seg->bytes, "slab_segment");
        seg = n;
    }
    h->tiny.segments = NULL;
}
