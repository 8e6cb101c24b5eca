/* liballoc/heap.c — the heap object: set-up, dispatch between tiers, realloc, aligned
 * allocation, the heap registry, fork handling, and the slow paths of the inline fast paths.
 *
 * Lock order (outermost first): heaps registry -> tiny class -> slab source -> mid arena ->
 * large list -> thread registry -> the tracer's heap (sideheap.c). Fork takes them all in
 * that order.
 */
#include "internal.h"
#include "classmap.h"
#include "harden.h" /* hardening hooks (harden.h) */

#include <errno.h>
#include <sched.h>
#include <string.h>

hl_heap_t hl_main_heap;

static hl_lock_t heaps_lock = PTHREAD_MUTEX_INITIALIZER;
static hl_heap_t *heaps;
static uint64_t next_uid = 1;

/* ---- set-up -------------------------------------------------------------------------------- */

static int heap_setup(hl_heap_t *h, const hl_options_t *opt)
{
    hl_options_t o = *opt;
    h->opt_given = *opt;
    if (o.arena_size) {
        if (!o.slab_size) o.slab_size = HL_DEFAULT_ARENA_SLAB;
        if (o.arena_size < 4 * o.slab_size || o.arena_size < 4096) return -1;
    } else if (!o.slab_size) {
        o.slab_size = HL_DEFAULT_SLAB;
    }
    /* Small slabs suit small fixed arenas; the tiny tier then stops at the largest class of
     * which a slab holds three slots (below). */
    if (!hl_is_pow2(o.slab_size) || o.slab_size < 1024 || o.slab_size > (1u << 20)) return -1;
    if (o.tiny_max > HL_TINY_MAX || o.arenas > HL_MAX_ARENAS) return -1;
    if (!o.arenas) {
        unsigned n = 2 * hl_os_ncpu();
        o.arenas = n > HL_MAX_ARENAS ? HL_MAX_ARENAS : n;
    }
    if (o.mid_max < HL_TINY_MAX + 16) o.mid_max = HL_TINY_MAX + 16;
    h->opt = o;
    /* Fixed arenas default to TLSF alone: partial slabs of many classes cost a small arena
     * more than the 1-byte headers save (docs/PERFORMANCE.md, peak utilisation). */
    int tiny_on = o.tiny == 2 ? !o.arena_size : (int)o.tiny;
    h->tiny_max = tiny_on ? o.tiny_max : 0;
    /* The tiny tier serves a class only when a slab holds at least three of its slots (4 KiB
     * arena slabs stop at the 1296-byte class). */
    if (h->tiny_max) {
        size_t room = o.slab_size - (sizeof(hl_slab_t) + (o.slab_size / 16 + 63) / 64 * 8) - 16 -
                      (o.arena_size ? HL_TLSF_HDR : 0);
        unsigned c = hl_size_class[(h->tiny_max + 16) >> 4];
        while (c > 0 && room / hl_class_slot(c) < 3)
            c--;
        if (h->tiny_max > hl_class_slot(c) - 1) h->tiny_max = hl_class_slot(c) - 1;
    }
    h->mid_max = o.arena_size ? SIZE_MAX : o.mid_max;
    if (o.arena_size) {
        h->arena_size = o.arena_size;
        if (o.arena_base) {
            h->arena_base = o.arena_base;
            h->arena_owned = 0;
        } else {
            h->arena_base =
                hl_os_map_quiet(hl_align_up(o.arena_size, hl_page_size), hl_page_size, "arena");
            if (!h->arena_base) return -1;
            h->arena_owned = 1;
        }
    }
    hl_harden_setup(h); /* hardening hook: resolves opt.harden (caps, rotation read it) */
    hl_tiny_setup(h);
    if (hl_mid_setup(h) != 0) {
        if (h->arena_owned)
            hl_os_unmap_quiet(h->arena_base, hl_align_up(h->arena_size, hl_page_size), "arena");
        return -1;
    }
    hl_large_setup(h);
    hl_lock(&heaps_lock);
    h->uid = next_uid++;
    h->prev = NULL;
    h->next = heaps;
    if (heaps) heaps->prev = h;
    heaps = h;
    hl_unlock(&heaps_lock);
    __atomic_store_n(&h->state, HL_HEAP_READY, __ATOMIC_RELEASE);
    return 0;
}

void hl_default_init(void)
{
    hl_heap_t *h = &hl_main_heap;
    uint32_t expected = HL_HEAP_UNINIT;
    if (__atomic_compare_exchange_n(&h->state, &expected, HL_HEAP_INITIALIZING, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        hl_os_init();
        hl_cmap_init(); /* before the first slab (tiny.c registers the default heap's) */
        hl_options_t o;
        hl_options_default(&o);
        hl_options_from_env(&o);
        h->is_default = 1;
        if (heap_setup(h, &o) != 0) {
            hl_warn("HEAPLEDGER_OPTIONS: unusable combination, using the defaults",
                    hl_options_env_string());
            if (o.arena_size) hl_warn("arena: could not set up the fixed arena", NULL);
            hl_options_default(&o);
            if (heap_setup(h, &o) != 0) hl_fatal("init", NULL, "cannot set up the default heap");
        }
        return;
    }
    while (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != HL_HEAP_READY)
        sched_yield();
}

/* ---- registry and fork ----------------------------------------------------------------------- */

int hl_heap_alive(hl_heap_t *h, uint64_t uid)
{
    if (h == &hl_main_heap) return 1;
    int alive = 0;
    hl_lock(&heaps_lock);
    for (hl_heap_t *x = heaps; x; x = x->next)
        if (x == h && x->uid == uid) {
            alive = 1;
            break;
        }
    hl_unlock(&heaps_lock);
    return alive;
}

static void heap_locks(hl_heap_t *h, int op)
{
    hl_lock_t *locks[HL_CLASS_COUNT + 2 + HL_MAX_ARENAS];
    unsigned n = 0;
    for (unsigned c = 0; c < HL_CLASS_COUNT; c++)
        locks[n++] = &h->tiny.cls[c].lock;
    locks[n++] = &h->tiny.src_lock;
    for (unsigned i = 0; i < h->mid.narenas; i++)
        locks[n++] = &h->mid.arenas[i].lock;
    locks[n++] = &h->large.lock;
    for (unsigned i = 0; i < n; i++) {
        if (op == 0)
            hl_lock(locks[i]);
        else if (op == 1)
            hl_unlock(locks[i]);
        else
            hl_lock_init(locks[i]);
    }
}

static void fork_prepare(void)
{
    hl_lock(&heaps_lock);
    for (hl_heap_t *h = heaps; h; h = h->next)
        heap_locks(h, 0);
    hl_thread_fork_prepare();
    hl_side_fork_prepare(); /* the tracer's heap: taken with no other lock inside it */
}

static void fork_parent(void)
{
    hl_side_fork_parent();
    hl_thread_fork_parent();
    for (hl_heap_t *h = heaps; h; h = h->next)
        heap_locks(h, 1);
    hl_unlock(&heaps_lock);
}

/* The child is a new process for the trace: every region is reported again. */
static void forget_reports(hl_heap_t *h)
{
    h->arena_reported = 0;
    for (hl_segment_t *s = h->tiny.segments; s; s = s->next)
        s->reported = 0;
    for (unsigned i = 0; i < h->mid.narenas; i++)
        for (hl_tlsf_pool_t *p = h->mid.arenas[i].tlsf.pools; p; p = p->next)
            p->owner_flags = 0;
}

static void fork_child(void)
{
    hl_side_fork_child();
    hl_thread_fork_child();
    for (hl_heap_t *h = heaps; h; h = h->next) {
        heap_locks(h, 2);
        hl_tiny_fork_child(h); /* remote pushes the fork interrupted (tiny.h) */
        hl_mid_fork_child(h);  /* only the forking thread is left in its arena */
        forget_reports(h);
    }
    hl_lock_init(&heaps_lock);
}

void hl_heap_report_regions(hl_heap_t *h)
{
    if (h->state != HL_HEAP_READY) return;
    if (h->arena_base) {
        /* The one region; the arena's TLSF pool lies inside it. */
        hl_lock(&h->mid.arenas[0].lock);
        hl_region_report(h->arena_base, h->arena_size, "arena", &h->arena_reported);
        hl_unlock(&h->mid.arenas[0].lock);
        return;
    }
    hl_lock(&h->tiny.src_lock);
    for (hl_segment_t *s = h->tiny.segments; s; s = s->next)
        hl_region_report(s, s->bytes, "slab_segment", &s->reported);
    hl_unlock(&h->tiny.src_lock);
    for (unsigned i = 0; i < h->mid.narenas; i++) {
        hl_arena_t *a = &h->mid.arenas[i];
        hl_lock(&a->lock);
        for (hl_tlsf_pool_t *p = a->tlsf.pools; p; p = p->next)
            hl_region_report(p, p->bytes, "tlsf_pool", &p->owner_flags);
        hl_unlock(&a->lock);
    }
}

static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static void global_init(void)
{
    hl_os_init();
    hl_thread_init_once();
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void hl_global_init(void)
{
    pthread_once(&global_once, global_init);
}

/* ---- public object API -------------------------------------------------------------------- */

hl_heap_t *hl_heap_create(const hl_options_t *options)
{
    hl_global_init();
    hl_options_t def;
    if (!options) {
        hl_options_default(&def);
        options = &def;
    }
    size_t bytes = hl_align_up(sizeof(hl_heap_t), hl_page_size);
    hl_heap_t *h = hl_os_map(bytes, hl_page_size, "heap");
    if (!h) {
        errno = ENOMEM;
        return NULL;
    }
    if (heap_setup(h, options) != 0) {
        hl_os_unmap(h, bytes, "heap");
        errno = options->arena_size && !options->arena_base ? ENOMEM : EINVAL;
        return NULL;
    }
    return h;
}

void hl_heap_destroy(hl_heap_t *h)
{
    if (!h || h == &hl_main_heap) return;
    hl_tls_t *t = hl_tls_of(h);
    if (t->heap == h) {
        for (unsigned c = 0; c < HL_CLASS_MAX; c++) {
            hl_tbin_t *b = &t->bins[HL_BIN_TINY | c];
            b->head = NULL;
            b->cap = 0;
            b->avail = 0;
        }
        memset(t->paths, 0, sizeof t->paths);
        t->heap = NULL;
    }
    hl_lock(&heaps_lock);
    if (h->prev)
        h->prev->next = h->next;
    else
        heaps = h->next;
    if (h->next) h->next->prev = h->prev;
    hl_unlock(&heaps_lock);
    h->state = HL_HEAP_DEAD;
    hl_harden_destroy(h); /* hardening hook */
    hl_large_destroy(h);
    hl_mid_destroy(h);
    hl_tiny_destroy(h);
    hl_region_unreport(h->arena_base, h->arena_size, "arena", &h->arena_reported);
    if (h->arena_owned)
        hl_os_unmap_quiet(h->arena_base, hl_align_up(h->arena_size, hl_page_size), "arena");
    hl_os_unmap(h, hl_align_up(sizeof(hl_heap_t), hl_page_size), "heap");
}

hl_heap_t *hl_heap_default(void)
{
    hl_heap_ensure(&hl_main_heap);
    return &hl_main_heap;
}

/* ---- slow paths ----------------------------------------------------------------------------- */

static void set_fail(hl_heap_t *h, hl_opinfo_t *info)
{
    errno = ENOMEM;
    hl_count(h, HL_PATH_ALLOC_FAIL);
    hl_info(info, HL_TIER_NONE, 0xff, HL_PATH_ALLOC_FAIL, 0);
}

/* Fixed-arena mode, out of memory: give back what the calling thread caches and every empty
 * slab, so that the retry sees all free memory. Returns 1 if anything came back. */
static int arena_reclaim(hl_heap_t *h)
{
    int any = 0;
    hl_tls_t *t = hl_tls_of(h);
    if (t->heap == h)
        for (unsigned c = 0; c < HL_CLASS_COUNT && !any; c++)
            any = hl_bin_count(&t->bins[HL_BIN_TINY | c]) + hl_tcap_spare_count(&t->tcap, c) != 0;
    if (t->heap == h) hl_tls_flush(t);
    any |= hl_harden_drain(h); /* hardening hook: quarantined blocks go back first */
    return hl_tiny_trim(h, 1) > 0 || any;
}

static void *tiny_alloc(hl_heap_t *h, size_t n, hl_opinfo_t *info)
{
    hl_tls_t *t = hl_tls_of(h);
    if (t->heap != h) t = hl_tls_bind(h);
    unsigned cls = hl_size_class[(n + 16) >> 4];
    hl_tbin_t *b = &t->bins[HL_BIN_TINY | cls];
    if (b->head) /* bound just now to a heap whose bin is filled: cannot be, but stay exact */
        return hl_malloc_fast(h, n, info);
    return hl_tiny_alloc_slow(h, t, cls, info);
}

/* The slow allocation path of malloc and memalign: tier choice (tiny only for the default
 * alignment), one retry after reclaiming cached memory in a fixed arena, hardening around
 * it, failure bookkeeping (NULL, ENOMEM, path alloc_fail). */
static void *alloc_slow(hl_heap_t *h, size_t n, size_t align, hl_opinfo_t *info)
{
    hl_heap_ensure(h);
    if (hl_unlikely(n > HL_REQUEST_MAX || align > HL_REQUEST_MAX)) {
        set_fail(h, info); /* nothing can serve it: no padding, no rounding may wrap it */
        return NULL;
    }
    hl_decay_tick(h, &h->decay_pending); /* decay hook: kept memory goes back (decay.h) */
    size_t req = n;                      /* hardening hook: room for canary and trailer */
    if (h->opt.harden) n = hl_harden_pad(h, req);
    if (!hl_tls_of(h)->heap) hl_tls_bind(h);
    void *p;
    if (h->opt.guard >= 2 && /* hardening hook: guard=all|sample:N */
        (p = hl_harden_alloc_guarded(h, req, align, info)) != NULL)
        return p;
    if (h->opt.harden && align <= HL_ALIGN && h->tiny_max && n <= h->tiny_max &&
        (p = hl_harden_alloc_cached(h, req, n, info)) != NULL) /* hardening hook: reuse cache */
        return p;
    for (int attempt = 0;; attempt++) {
        if (align <= HL_ALIGN && h->tiny_max && n <= h->tiny_max)
            p = tiny_alloc(h, n, info);
        else if (h->arena_base || (n <= h->mid_max && align <= h->mid_max / 4))
            p = hl_mid_alloc(h, n, align, info);
        else
            p = hl_large_alloc(h, n, align, info);
        if (p || !h->arena_base || attempt || !arena_reclaim(h)) break;
    }
    if (p && h->opt.harden) /* hardening hook: canary, trailer, guard */
        p = hl_harden_on_alloc(h, p, req, info);
    if (!p) set_fail(h, info);
    return p;
}

void *hl_malloc_slow(hl_heap_t *h, size_t n, hl_opinfo_t *info)
{
    return alloc_slow(h, n, HL_ALIGN, info);
}

/* Detach all but the newest keep slots of a full bin (hl_tcap_flush_keep) and hand them to the
 * transfer cache. */
static void bin_flush_half(hl_heap_t *h, hl_tbin_t *b, unsigned cls, uint32_t keep)
{
    void *cut = b->head;
    for (uint32_t i = 1; i < keep && cut; i++)
        cut = *(void **)cut;
    void *chain;
    if (keep == 0) {
        chain = b->head;
        b->head = NULL;
    } else {
        chain = *(void **)cut;
        *(void **)cut = NULL;
    }
    uint32_t n = hl_bin_count(b) - keep;
    b->avail = (int32_t)(b->cap - keep);
    hl_tiny_flush_batch(h, cls, chain, n);
}

void hl_free_slow(hl_heap_t *h, void *p, hl_opinfo_t *info)
{
    hl_decay_tick(h, &h->decay_pending);     /* decay hook (decay.h) */
    if (h->opt.harden && !hl_side_owns(p) && /* the tracer's blocks: mid.c sends them home */
        !hl_harden_free(h, p, info))         /* hardening hook: 0 = consumed */
        return;
    unsigned tag = ((const uint8_t *)p)[-1];
    if ((tag & HL_TAG_TINY_MASK) == HL_TAG_TINY) {
        unsigned cls = tag & (HL_CLASS_MAX - 1);
        if (cls >= HL_CLASS_COUNT)
            hl_fatal("invalid-free", p, "header byte names no size class (corrupt header?)");
        hl_tls_t *t = hl_tls_of(h);
        if (!t->heap) {
            hl_heap_ensure(h);
            /* A thread that has never allocated: possibly in its teardown, where a bound cache
             * would outlive the thread. Its first frees go to the slabs directly. */
            if (t->unbound_frees < HL_TLS_BIND_AFTER_FREES)
                t->unbound_frees++;
            else
                t = hl_tls_bind(h);
        }
        hl_tbin_t *b = &t->bins[HL_BIN_TINY | cls];
        hl_path_t path;
        if (t->heap == h && b->cap) {
            path = HL_PATH_TINY_CACHE_PUSH; /* first free of a thread: just bound */
            unsigned prev = HL_TCAP_NONE;
            if (b->avail <= 0)
                prev = hl_tcap_event(h, &t->tcap, cls, HL_TCAP_FLUSH); /* may grow (tcap.h) */
            if (b->avail <= 0) {
                bin_flush_half(h, b, cls, hl_tcap_flush_keep(b->cap, prev));
                path = HL_PATH_TINY_FLUSH;
            }
            *(void **)p = b->head;
            b->head = p;
            b->avail--;
        } else {
            hl_tiny_free_direct(h, p, cls);
            path = HL_PATH_TINY_DIRECT_FREE;
        }
        hl_count(h, path);
        hl_info(info, HL_TIER_TINY, cls, path, hl_class_slot(cls) - 1);
        return;
    }
    switch (tag) {
    case HL_TAG_MID:
        hl_mid_free(h, p, info);
        return;
    case HL_TAG_LARGE:
        hl_large_free(h, p, info);
        return;
    case HL_TAG_MID_FREE:
        hl_fatal("double-free", p, "the block is already free");
    default:
        hl_fatal("invalid-free", p, "not a block of this heap (or its header was overwritten)");
    }
}

/* ---- operations with path reporting ------------------------------------------------------- */

void *hl_heap_calloc_info(hl_heap_t *h, size_t n, size_t size, hl_opinfo_t *info)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        set_fail(h, info);
        return NULL;
    }
    void *p = hl_malloc_fast(h, total, info);
    if (p && info->path != HL_PATH_LARGE_MMAP) /* fresh mappings are zero already */
        memset(p, 0, total);
    return p;
}

void *hl_heap_memalign_info(hl_heap_t *h, size_t align, size_t n, hl_opinfo_t *info)
{
    if (align <= HL_ALIGN) return hl_malloc_fast(h, n, info);
    return alloc_slow(h, n, align, info);
}

size_t hl_heap_usable_size(hl_heap_t *h, const void *p)
{
    if (h->opt.harden) /* hardening hook: the requested size, or a report */
        return hl_harden_usable(h, p);
    (void)h;
    if (!p) return 0;
    unsigned tag = ((const uint8_t *)p)[-1];
    if ((tag & HL_TAG_TINY_MASK) == HL_TAG_TINY && (tag & 31) < HL_CLASS_COUNT)
        return hl_class_slot(tag & 31) - 1;
    if (tag == HL_TAG_MID) return hl_tlsf_usable(p);
    if (tag == HL_TAG_LARGE) return hl_large_usable(p);
    hl_fatal("invalid-usable-size", p, "not a live block of this heap");
}

/* Fixed arena: a block that shrinks below 3/4 of its size (by 64 bytes at least) moves into
 * a good fit elsewhere, under one lock, instead of staying where it is: left in place, small
 * blocks stay scattered where large ones were and split the large free space (wide mix at
 * 256 KiB: 91.0 % peak utilisation with every shrink in place, 92.9 % with this rule;
 * docs/allocator.md). NULL when nothing else fits: the caller shrinks it in place, so realloc
 * fails no more often than before. */
static void *arena_move_shrunk(hl_heap_t *h, void *p, size_t n, hl_opinfo_t *info)
{
    unsigned owner = hl_tlsf_owner(p);
    if (owner >= h->mid.narenas) return NULL; /* the tracer's block (mid.c sends it home) */
    hl_arena_t *a = &h->mid.arenas[owner];
    hl_lock(&a->lock);
    void *q = hl_tlsf_move(&a->tlsf, p, n);
    size_t usable = q ? hl_tlsf_usable(q) : 0;
    hl_unlock(&a->lock);
    if (q) {
        hl_count(h, HL_PATH_REALLOC_MOVE);
        hl_info(info, HL_TIER_MID, 0xff, HL_PATH_REALLOC_MOVE, usable);
    }
    return q;
}

void *hl_heap_realloc_info(hl_heap_t *h, void *p, size_t n, hl_opinfo_t *info)
{
    if (h->opt.harden && !hl_side_owns(p)) /* hardening hook: validate, then always move */
        return hl_harden_realloc(h, p, n, info);
    if (!p) return hl_malloc_fast(h, n, info);
    if (n == 0) {
        hl_free_fast(h, p, info);
        return NULL;
    }
    unsigned tag = ((const uint8_t *)p)[-1];
    size_t old;
    if ((tag & HL_TAG_TINY_MASK) == HL_TAG_TINY) {
        if ((tag & 31) >= HL_CLASS_COUNT)
            hl_fatal("invalid-realloc", p, "header byte names no size class");
        old = hl_class_slot(tag & 31) - 1;
        /* Same slot when it fits and would not waste more than half of it. */
        if (n <= old && (n > old / 2 || old <= 32)) {
            hl_count(h, HL_PATH_REALLOC_INPLACE);
            hl_info(info, HL_TIER_TINY, (tag & 31), HL_PATH_REALLOC_INPLACE, old);
            return p;
        }
    } else if (tag == HL_TAG_MID) {
        old = hl_tlsf_usable(p);
        int stay = n > h->tiny_max || n > old / 2;
        void *q;
        if (h->arena_base && n < old - old / 4 && old - n >= 64 &&
            (q = arena_move_shrunk(h, p, n, info)) != NULL)
            return q;
        if (stay && n <= h->mid_max && hl_mid_resize(h, p, n)) {
            hl_count(h, HL_PATH_REALLOC_INPLACE);
            hl_info(info, HL_TIER_MID, 0xff, HL_PATH_REALLOC_INPLACE, hl_tlsf_usable(p));
            return p;
        }
    } else if (tag == HL_TAG_LARGE) {
        old = hl_large_usable(p);
        if (n > h->mid_max) {
            void *q = hl_large_realloc(h, p, n, info);
            if (q) return q;
        }
    } else if (tag == HL_TAG_MID_FREE) {
        hl_fatal("invalid-realloc", p, "the block is free (use after free?)");
    } else {
        hl_fatal("invalid-realloc", p, "not a block of this heap");
    }
    hl_opinfo_t tmp;
    void *q = hl_malloc_fast(h, n, info);
    if (!q) return NULL; /* the old block stays valid, errno is ENOMEM */
    memcpy(q, p, old < n ? old : n);
    hl_free_fast(h, p, &tmp);
    hl_count(h, HL_PATH_REALLOC_MOVE);
    info->path = HL_PATH_REALLOC_MOVE;
    return q;
}

/* ---- public wrappers ---------------------------------------------------------------------- */

void *hl_heap_malloc(hl_heap_t *h, size_t n)
{
    hl_opinfo_t info;
    return hl_malloc_fast(h, n, &info);
}

void hl_heap_free(hl_heap_t *h, void *p)
{
    hl_opinfo_t info;
    if (p) hl_free_fast(h, p, &info);
}

void *hl_heap_calloc(hl_heap_t *h, size_t n, size_t size)
{
    hl_opinfo_t info;
    return hl_heap_calloc_info(h, n, size, &info);
}

void *hl_heap_realloc(hl_heap_t *h, void *p, size_t n)
{
    hl_opinfo_t info;
    return hl_heap_realloc_info(h, p, n, &info);
}

void *hl_heap_memalign(hl_heap_t *h, size_t align, size_t n)
{
    hl_opinfo_t info;
    if (!hl_is_pow2(align)) {
        errno = EINVAL;
        return NULL;
    }
    return hl_heap_memalign_info(h, align, n, &info);
}

void hl_heap_flush_thread(hl_heap_t *h)
{
    hl_tls_t *t = hl_tls_of(h);
    if (t->heap == h) hl_tls_flush(t);
}

int hl_heap_trim(hl_heap_t *h, size_t pad)
{
    (void)pad;
    hl_heap_ensure(h);
    hl_heap_flush_thread(h);
    size_t n = hl_tiny_trim(h, 1);
    n += hl_mid_trim(h);
    n += hl_large_trim(h);
    return n > 0;
}

size_t hl_heap_check(hl_heap_t *h, int verbose)
{
    hl_heap_ensure(h);
    return hl_mid_check(h, verbose) + hl_tiny_check(h, verbose) +
           hl_harden_check(h, verbose); /* hardening hook: canaries, poison */
}

void hl_heap_path_counts(hl_heap_t *h, uint64_t *counts, size_t n)
{
    uint64_t all[HL_PATH_COUNT];
    hl_thread_sum_paths(h, all);
    for (size_t i = 0; i < n; i++)
        counts[i] = i < HL_PATH_COUNT ? all[i] : 0;
}

void hl_heap_info(hl_heap_t *h, hl_heap_info_t *out)
{
    hl_heap_ensure(h);
    memset(out, 0, sizeof *out);
    size_t pool_bytes, mid_used, mid_free, largest, pools;
    hl_mid_totals(h, &pool_bytes, &mid_used, &mid_free, &largest, &pools);
    hl_tls_t *t = hl_tls_of(h);
    size_t tiny_used = 0, tiny_free = 0, segs = 0;
    for (unsigned c = 0; c < HL_CLASS_COUNT; c++) {
        size_t slabs, used, held;
        hl_tiny_class_counts(h, c, &slabs, &used, &held);
        size_t cached = t->heap == h ? hl_bin_count(&t->bins[HL_BIN_TINY | c]) +
                                           hl_tcap_spare_count(&t->tcap, c)
                                     : 0;
        size_t S = hl_class_slot(c);
        tiny_used += (used - cached) * (S - 1);
        tiny_free += (held - used + cached) * (S - 1);
    }
    hl_lock(&h->tiny.src_lock);
    for (hl_segment_t *s = h->tiny.segments; s; s = s->next)
        segs += s->bytes;
    size_t slab_blocks = h->arena_base ? h->tiny.slabs_carved + h->tiny.nfree_slabs : 0;
    out->slabs = h->tiny.slabs_carved;
    hl_unlock(&h->tiny.src_lock);
    size_t large = __atomic_load_n(&h->large.bytes, __ATOMIC_RELAXED);
    /* In arena mode slabs are TLSF blocks: count them as tiny, not as mid use. */
    mid_used -= slab_blocks * h->tiny.slab_extent;
    out->held = h->arena_base ? h->arena_size : segs + pool_bytes + large;
    out->used = tiny_used + mid_used + large;
    out->free_tiny = tiny_free;
    out->free_mid = mid_free;
    out->large = large;
    out->largest_free = largest >= HL_TLSF_HDR ? largest - HL_TLSF_USED_OVERHEAD : 0;
    out->pools = pools;
}
