/* Unit tests of the tracer's heap (liballoc/sideheap.c) and of the way its blocks go home
 * when they reach another heap's free or realloc (mid.c, heap.c). Criterion. */
#include "internal.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

static size_t live_blocks(void)
{
    size_t blocks, bytes;
    hl_side_totals(&blocks, &bytes);
    return blocks;
}

Test(sideheap, owner_is_the_address)
{
    cr_expect(!hl_side_owns(NULL));
    int on_stack;
    cr_expect(!hl_side_owns(&on_stack));
    void *p = hl_side_malloc(100);
    cr_assert_not_null(p);
    cr_expect(hl_side_owns(p));
    cr_expect(((uintptr_t)p & 15) == 0);
    cr_expect(hl_side_usable(p) >= 100);
    hl_heap_t *h = hl_heap_create(NULL);
    void *q = hl_heap_malloc(h, 100);
    cr_expect(!hl_side_owns(q), "a heap object's block is not the side heap's");
    hl_heap_free(h, q);
    hl_heap_destroy(h);
    hl_side_free(p);
}

Test(sideheap, malloc_family)
{
    size_t before = live_blocks();
    unsigned char *c = hl_side_calloc(64, 8);
    cr_assert_not_null(c);
    for (int i = 0; i < 512; i++)
        cr_expect_eq(c[i], 0);
    memset(c, 0xab, 512);
    hl_side_free(c);
    c = hl_side_calloc(64, 8); /* recycled memory is zeroed too */
    for (int i = 0; i < 512; i++)
        cr_expect_eq(c[i], 0);
    hl_side_free(c);
    cr_expect_null(hl_side_calloc(SIZE_MAX / 2, 4), "overflow");

    void *a = hl_side_memalign(4096, 100);
    cr_assert_not_null(a);
    cr_expect(((uintptr_t)a & 4095) == 0);
    hl_side_free(a);

    char *r = hl_side_realloc(NULL, 10);
    memcpy(r, "tracer!!!", 10);
    r = hl_side_realloc(r, 100000);
    cr_assert_not_null(r);
    cr_expect(hl_side_owns(r));
    cr_expect_str_eq(r, "tracer!!!");
    cr_expect_null(hl_side_realloc(r, 0), "realloc(p, 0) frees");
    cr_expect_eq(live_blocks(), before);
    cr_expect_eq(hl_side_check(1), 0);
}

Test(sideheap, big_blocks_and_check)
{
    void *p[64];
    for (int i = 0; i < 64; i++) {
        p[i] = hl_side_malloc((size_t)(i + 1) * 8192);
        cr_assert_not_null(p[i]);
        memset(p[i], i, (size_t)(i + 1) * 8192);
    }
    for (int i = 0; i < 64; i += 2)
        hl_side_free(p[i]);
    cr_expect_eq(hl_side_check(1), 0);
    for (int i = 1; i < 64; i += 2) {
        cr_expect_eq(((unsigned char *)p[i])[(size_t)(i + 1) * 8192 - 1], i);
        hl_side_free(p[i]);
    }
    cr_expect_eq(hl_side_check(1), 0);
}

/* A side block freed or reallocated through another heap (e.g. a block of the loader's that
 * heapledger's own start-up got from the side heap, freed later by an untraced free) goes
 * back to the side heap instead of corrupting a mid arena. */
Test(sideheap, free_through_a_heap_goes_home)
{
    size_t before = live_blocks();
    hl_heap_t *h = hl_heap_create(NULL);
    void *p = hl_side_malloc(300);
    hl_heap_free(h, p);
    cr_expect_eq(live_blocks(), before);
    cr_expect_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

Test(sideheap, free_through_a_hardened_heap_goes_home)
{
    size_t before = live_blocks();
    hl_options_t o;
    hl_options_default(&o);
    char err[128];
    cr_assert_eq(hl_options_parse(&o, "harden=1", err, sizeof err), 0);
    hl_heap_t *h = hl_heap_create(&o);
    cr_assert_not_null(h);
    void *p = hl_side_malloc(300);
    hl_heap_free(h, p);
    cr_expect_eq(live_blocks(), before);
    hl_heap_destroy(h);
}

Test(sideheap, realloc_through_a_heap_moves_out)
{
    size_t before = live_blocks();
    hl_heap_t *h = hl_heap_create(NULL);
    char *p = hl_side_malloc(40);
    strcpy(p, "moved");
    char *q = hl_heap_realloc(h, p, 5000);
    cr_assert_not_null(q);
    cr_expect(!hl_side_owns(q), "the block now belongs to the heap that grew it");
    cr_expect_str_eq(q, "moved");
    cr_expect_eq(live_blocks(), before);
    hl_heap_free(h, q);
    hl_heap_destroy(h);
}
