/* tests/harden/harden_test.h — what the hardened-mode Criterion suites share: a heap made from
 * an options string, and whether a freed block sits in the calling thread's reuse cache
 * (liballoc/harden_cache.h). Header-only: each suite is its own program. */
#ifndef HL_HARDEN_TEST_H
#define HL_HARDEN_TEST_H

#include "harden_cache.h"
#include "heapledger.h"

#include <criterion/criterion.h>

/* A heap with these options (the test fails on a bad string or a failed create). */
static inline hl_heap_t *heap_with(const char *opts)
{
    hl_options_t o;
    hl_options_default(&o);
    char err[128];
    cr_assert_eq(hl_options_parse(&o, opts, err, sizeof err), 0, "options %s: %s", opts, err);
    hl_heap_t *h = hl_heap_create(&o);
    cr_assert_not_null(h, "heap with %s", opts);
    return h;
}

typedef struct hl_test_find_s {
    const void *p;
    int found;
} hl_test_find_t;

static inline void hl_test_find_cb(void *p, void *arg)
{
    hl_test_find_t *f = arg;
    f->found |= p == f->p;
}

/* Is p in the calling thread's reuse cache of h? */
static inline int in_reuse_cache(hl_heap_t *h, const void *p)
{
    hl_hcache_t *c = hl_hcache_peek(h);
    if (!c) return 0;
    hl_test_find_t f = {p, 0};
    hl_hcache_each(c, hl_test_find_cb, &f);
    return f.found;
}

#endif
