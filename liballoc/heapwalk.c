/* liballoc/heapwalk.c — hl_heap_walk: the TLSF blocks of a heap, for arena maps. */
#include "internal.h"

typedef struct walk_arg_s {
    hl_heap_walker_t cb;
    void *arg;
} walk_arg_t;

static void visit(void *ptr, size_t usable, int is_free, void *arg)
{
    walk_arg_t *w = arg;
    w->cb((const char *)ptr - HL_TLSF_HDR, usable + HL_TLSF_HDR, is_free, w->arg);
}

void hl_heap_walk(hl_heap_t *h, hl_heap_walker_t cb, void *arg)
{
    walk_arg_t w = {cb, arg};
    for (unsigned i = 0; i < h->mid.narenas; i++) {
        hl_arena_t *a = &h->mid.arenas[i];
        hl_lock(&a->lock);
        hl_tlsf_walk(&a->tlsf, visit, &w);
        hl_unlock(&a->lock);
    }
}
