/* liballoc/harden_cache.c — which per-thread buffers a hardened heap's operation uses (see
 * harden_cache.h). Two per thread, like the thread caches: one for the default heap and one
 * for the last other heap the thread used. */
#include "harden_cache.h"

#include <string.h>

__thread hl_hcache_t *hl_hcache_main __attribute__((tls_model("initial-exec")));
__thread hl_hcache_t *hl_hcache_x __attribute__((tls_model("initial-exec")));

static size_t live_records;   /* held by threads (atomic) */
static size_t mapped_records; /* pages mapped for records so far (atomic) */
/* One dropped record kept mapped for the next thread's first use (atomic exchange: whoever
 * takes it owns it), so that short-lived hardened threads do not map and unmap a page each. */
static hl_hcache_t *spare_record;

static inline hl_hcache_t **slot_for(const hl_heap_t *h)
{
    return h == &hl_main_heap ? &hl_hcache_main : &hl_hcache_x;
}

static size_t record_len(void)
{
    return hl_align_up(sizeof(hl_hcache_t), hl_page_size);
}

hl_hcache_t *hl_hcache_slot_of(hl_heap_t *h)
{
    hl_hcache_t *c = *slot_for(h);
    if (!c || !c->heap) return NULL;
    if (c->heap != h && !hl_heap_alive(c->heap, c->uid)) {
        hl_hcache_reset(c); /* another heap's, gone with it */
        return NULL;
    }
    return c;
}

hl_hcache_t *hl_hcache_of(hl_heap_t *h, void (*flush)(hl_heap_t *, hl_hcache_t *))
{
    if (h->arena_base) return NULL;
    hl_tls_t *t = hl_tls_of(h);
    if (t->state != HL_TLS_BOUND || t->heap != h) return NULL; /* unbound or exiting */
    hl_hcache_t **slot = slot_for(h), *c = *slot;
    if (hl_unlikely(!c)) {
        /* The thread's first operation on a heap of this kind: its page, zeroed (empty). */
        c = __atomic_exchange_n(&spare_record, NULL, __ATOMIC_ACQUIRE);
        if (c)
            memset(c, 0, sizeof *c);
        else if ((c = hl_os_map(record_len(), hl_page_size, "hcache")) != NULL)
            __atomic_add_fetch(&mapped_records, 1, __ATOMIC_RELAXED);
        if (!c) return NULL; /* the shared quarantine serves it */
        __atomic_add_fetch(&live_records, 1, __ATOMIC_RELAXED);
        *slot = c;
    }
    if (hl_likely(c->heap == h && c->uid == h->uid)) return c;
    if (c->heap && hl_heap_alive(c->heap, c->uid)) flush(c->heap, c); /* empties c */
    hl_hcache_reset(c);
    c->heap = h;
    c->uid = h->uid;
    return c;
}

void hl_hcache_reset(hl_hcache_t *c)
{
    c->nq = 0;
    c->qbytes = 0;
    c->live = 0;
    for (unsigned i = 0; i < HL_CLASS_COUNT; i++)
        c->head[i] = 0;
    c->spare = c->used = 0;
    c->own.head = c->own.count = c->own.bytes = 0; /* the ring stays mapped, empty */
    c->own_counted = 0;                            /* the heap's list went with it */
    c->own_next = c->own_prev = NULL;
    c->heap = NULL;
}

void hl_hcache_drop(hl_heap_t *h)
{
    hl_hcache_t **slot = slot_for(h), *c = *slot;
    if (!c) return;
    *slot = NULL;
    hl_quarantine_fini(&c->own);
    hl_hcache_t *none = NULL;
    if (!__atomic_compare_exchange_n(&spare_record, &none, c, 0, __ATOMIC_RELEASE,
                                     __ATOMIC_RELAXED))
        hl_os_unmap(c, record_len(), "hcache"); /* a spare is kept already */
    __atomic_sub_fetch(&live_records, 1, __ATOMIC_RELAXED);
}

size_t hl_hcache_live(void)
{
    return __atomic_load_n(&live_records, __ATOMIC_RELAXED);
}

size_t hl_hcache_mapped(void)
{
    return __atomic_load_n(&mapped_records, __ATOMIC_RELAXED);
}

void hl_hcache_list_add(hl_hcache_list_t *l, hl_hcache_t *c)
{
    c->own_prev = NULL;
    c->own_next = l->first;
    if (l->first) l->first->own_prev = c;
    l->first = c;
    c->own_counted = 1;
    __atomic_store_n(&l->n, l->n + 1, __ATOMIC_RELAXED);
}

void hl_hcache_list_del(hl_hcache_list_t *l, hl_hcache_t *c)
{
    if (c->own_prev)
        c->own_prev->own_next = c->own_next;
    else
        l->first = c->own_next;
    if (c->own_next) c->own_next->own_prev = c->own_prev;
    c->own_next = c->own_prev = NULL;
    c->own_counted = 0;
    __atomic_store_n(&l->n, l->n - 1, __ATOMIC_RELAXED);
}

void hl_hcache_list_walk(hl_hcache_list_t *l, void (*cb)(void *p, void *arg), void *arg)
{
    for (hl_hcache_t *c = l->first; c; c = c->own_next)
        hl_quarantine_walk(&c->own, cb, arg);
}
