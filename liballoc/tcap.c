/* liballoc/tcap.c — adaptive thread-cache caps (see tcap.h). */
#include "internal.h"

#include <stddef.h>
#include <string.h>

/* Largest cap bin cls may grow to: HL_TCAP_BIN_BYTES of slots, at most HL_TCAP_BIN_SLOTS,
 * never below the base cap. */
static uint32_t cap_max(const hl_heap_t *h, unsigned cls)
{
    uint32_t max = HL_TCAP_BIN_BYTES / hl_class_slot(cls);
    if (max > HL_TCAP_BIN_SLOTS) max = HL_TCAP_BIN_SLOTS;
    return max < h->tiny.caps[cls] ? h->tiny.caps[cls] : max;
}

static void grow(hl_heap_t *h, hl_tls_t *t, unsigned cls)
{
    hl_tbin_t *b = &t->bins[HL_BIN_TINY | cls];
    uint32_t cap = b->cap * 2, max = cap_max(h, cls);
    if (cap > max) cap = max;
    if (cap <= b->cap) return;
    uint32_t slot = hl_class_slot(cls), add = (cap - b->cap) * slot;
    if (t->tcap.grown + add > HL_TCAP_THREAD_BYTES) {
        /* The budget's rest, in whole slots: the last bins to grow get what is left. */
        uint32_t more = (HL_TCAP_THREAD_BYTES - t->tcap.grown) / slot;
        if (more == 0) return;
        cap = b->cap + more;
        add = more * slot;
    }
    t->tcap.grown += add;
    b->avail += (int32_t)(cap - b->cap);
    b->cap = cap;
    t->tcap.grows++;
}

/* Halve the grown cap of bin cls (not below the base) and give the slots beyond half of the
 * new cap back to their slabs. */
static void shrink(hl_heap_t *h, hl_tls_t *t, unsigned cls)
{
    hl_tbin_t *b = &t->bins[HL_BIN_TINY | cls];
    uint32_t base = h->tiny.caps[cls];
    if (b->cap <= base) return;
    void *spare = t->tcap.spare[cls]; /* may hold more than the new cap: back to the slabs */
    t->tcap.spare[cls] = NULL;
    t->tcap.spare_n[cls] = 0;
    if (spare) hl_tiny_return_chain(h, cls, spare);
    uint32_t cap = b->cap / 2 < base ? base : b->cap / 2;
    uint32_t count = hl_bin_count(b), keep = cap / 2;
    void *chain = NULL;
    if (count > keep) {
        if (keep == 0) {
            chain = b->head;
            b->head = NULL;
        } else {
            void *cut = b->head;
            for (uint32_t i = 1; i < keep; i++)
                cut = *(void **)cut;
            chain = *(void **)cut;
            *(void **)cut = NULL;
        }
        count = keep;
    }
    t->tcap.grown -= (b->cap - cap) * hl_class_slot(cls);
    b->cap = cap;
    b->avail = (int32_t)(cap - count);
    t->tcap.shrinks++;
    if (chain) hl_tiny_return_chain(h, cls, chain);
}

/* Once per decay period: shrink the grown bins that did not alternate during it (all but
 * cls, whose event is being served). */
static void idle_check(hl_heap_t *h, hl_tls_t *t, unsigned cls)
{
    hl_tcap_t *a = &t->tcap;
    uint32_t now = hl_decay_now();
    if (!a->since) {
        a->since = now ? now : 1;
        return;
    }
    if (now - a->since < h->opt.decay_ms) return;
    a->since = now ? now : 1;
    for (unsigned c = 0; a->grown && c < HL_CLASS_COUNT; c++)
        if (c != cls && !a->busy[c]) shrink(h, t, c);
    memset(a->busy, 0, sizeof a->busy);
}

void hl_tcap_slow(hl_heap_t *h, hl_tcap_t *a, unsigned cls, int alternated)
{
    hl_tls_t *t = (hl_tls_t *)((char *)a - offsetof(hl_tls_t, tcap));
    if (h->opt.harden || t->heap != h || !t->bins[HL_BIN_TINY | cls].cap) return;
    if (alternated) {
        /* The first switch may be a single burst followed by its frees: grow from the second. */
        if (a->switches[cls] < 2) a->switches[cls]++;
        a->busy[cls] = 1;
        if (a->switches[cls] >= 2) grow(h, t, cls);
        if (++a->events % HL_TCAP_CHECK_EVERY) return;
    }
    idle_check(h, t, cls);
}

void hl_tcap_reset(hl_tls_t *t)
{
    hl_heap_t *h = t->heap;
    int alive = -1; /* not asked yet: hl_heap_alive takes the heap list's lock */
    for (unsigned c = 0; c < HL_CLASS_COUNT; c++) {
        if (!t->tcap.spare[c]) continue;
        if (alive < 0) alive = h && hl_heap_alive(h, t->heap_uid);
        if (alive) hl_tiny_return_chain(h, c, t->tcap.spare[c]);
    }
    memset(&t->tcap, 0, sizeof t->tcap);
}
