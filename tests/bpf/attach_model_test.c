/* tests/bpf/attach_model_test.c — attach mode's call → block-lifetime rules (attach_model.c)
 * and the pointer map under it (ptrmap.c), without BPF: calls are fed by hand. */
#include "attach.h"
#include "ptrmap.h"

#include <criterion/criterion.h>
#include <stdlib.h>

static hl_attach_t a;
static uint64_t now;

static void call(uint32_t kind, uint64_t ptr, uint64_t old, uint64_t size, uint64_t caller)
{
    struct hl_ucall c = {.ts = ++now,
                         .pid = 42,
                         .tid = 7,
                         .ptr = ptr,
                         .old_ptr = old,
                         .size = size,
                         .caller = caller,
                         .stack = -1,
                         .kind = kind};
    hl_attach_apply(&a, &c);
}

static void setup(void)
{
    a = (hl_attach_t){.pid = 42};
    now = 0;
}

static void teardown(void)
{
    hl_attach_fini(&a);
}

TestSuite(attach_model, .init = setup, .fini = teardown);

Test(attach_model, malloc_free_is_one_lifetime)
{
    call(HL_UCALL_MALLOC, 0x1000, 0, 24, 0x400100);
    call(HL_UCALL_FREE, 0x1000, 0, 0, 0x400200);
    cr_assert_eq(a.nblocks, 1);
    cr_assert(a.blocks[0].ended);
    cr_assert_eq(a.blocks[0].size, 24);
    cr_assert_eq(a.blocks[0].alloc_seq, 0);
    cr_assert_eq(a.blocks[0].free_seq, 1);
    cr_assert_eq(a.blocks[0].flags, 0);
    cr_assert_eq(a.live.count, 0);
    cr_assert_eq(a.norphans, 0);
}

Test(attach_model, free_of_unknown_pointer_is_an_orphan)
{
    call(HL_UCALL_FREE, 0x2000, 0, 0, 0x400200);
    cr_assert_eq(a.nblocks, 0);
    cr_assert_eq(a.norphans, 1);
    cr_assert_eq(a.orphans[0].ptr, 0x2000);
}

Test(attach_model, reallocation_without_free_ends_inferred)
{
    call(HL_UCALL_MALLOC, 0x1000, 0, 10, 1);
    call(HL_UCALL_CALLOC, 0x1000, 0, 20, 1);
    cr_assert_eq(a.nblocks, 2);
    cr_assert(a.blocks[0].ended);
    cr_assert_eq(a.blocks[0].flags, 8);
    cr_assert_eq(a.blocks[0].free_tid, 0);
    cr_assert(!a.blocks[1].ended);
}

Test(attach_model, realloc_moves_and_links)
{
    call(HL_UCALL_MALLOC, 0x1000, 0, 10, 1);
    call(HL_UCALL_REALLOC, 0x3000, 0x1000, 5000, 1);
    cr_assert_eq(a.nblocks, 2);
    cr_assert_eq(a.blocks[0].flags, 4);
    cr_assert(a.blocks[0].ended);
    cr_assert_eq(a.blocks[1].flags, 2);
    cr_assert_eq(a.blocks[1].prev, 0);
    cr_assert_eq(a.blocks[1].size, 5000);
}

Test(attach_model, failed_realloc_keeps_the_old_block)
{
    call(HL_UCALL_MALLOC, 0x1000, 0, 10, 1);
    call(HL_UCALL_REALLOC, 0, 0x1000, 1ull << 40, 1);
    cr_assert_eq(a.nblocks, 2);
    cr_assert(!a.blocks[0].ended);
    cr_assert_eq(a.blocks[1].ptr, 0);
    cr_assert_eq(a.blocks[1].flags, 1 | 2);
    cr_assert_eq(a.live.count, 1);
}

Test(attach_model, realloc_to_zero_frees)
{
    call(HL_UCALL_MALLOC, 0x1000, 0, 10, 1);
    call(HL_UCALL_REALLOC, 0, 0x1000, 0, 1);
    cr_assert_eq(a.nblocks, 1);
    cr_assert(a.blocks[0].ended);
    cr_assert_eq(a.blocks[0].flags, 4);
}

Test(attach_model, realloc_of_null_allocates)
{
    call(HL_UCALL_REALLOC, 0x1000, 0, 64, 1);
    cr_assert_eq(a.nblocks, 1);
    cr_assert_eq(a.blocks[0].flags, 2);
    cr_assert_eq(a.blocks[0].prev, -1);
}

Test(attach_model, failed_malloc_is_a_failed_row)
{
    call(HL_UCALL_MALLOC, 0, 0, 1ull << 50, 1);
    cr_assert_eq(a.nblocks, 1);
    cr_assert_eq(a.blocks[0].flags, 1);
    cr_assert_eq(a.live.count, 0);
}

Test(attach_model, stacks_are_interned_by_site)
{
    call(HL_UCALL_MALLOC, 0x1000, 0, 1, 0xaaa);
    call(HL_UCALL_MALLOC, 0x2000, 0, 1, 0xbbb);
    call(HL_UCALL_MALLOC, 0x3000, 0, 1, 0xaaa);
    cr_assert_eq(a.nstacks, 2);
    cr_assert_eq(a.blocks[0].alloc_stack, a.blocks[2].alloc_stack);
    cr_assert_neq(a.blocks[0].alloc_stack, a.blocks[1].alloc_stack);
    cr_assert_eq(a.stacks[a.blocks[1].alloc_stack].ips[0], 0xbbb);
}

Test(ptrmap, insert_delete_lookup_under_collisions)
{
    hl_ptrmap_t m;
    hl_ptrmap_init(&m);
    enum { N = 200000 };
    /* Keys spaced by the table size collide on purpose in a naive hash. */
    for (uint32_t i = 1; i <= N; i++)
        cr_assert_eq(hl_ptrmap_put(&m, (uint64_t)i << 20, i), 0);
    cr_assert_eq(m.count, N);
    for (uint32_t i = 1; i <= N; i += 2) {
        uint32_t v = 0;
        cr_assert(hl_ptrmap_del(&m, (uint64_t)i << 20, &v));
        cr_assert_eq(v, i);
    }
    for (uint32_t i = 1; i <= N; i++) {
        uint32_t v = 0;
        int found = hl_ptrmap_get(&m, (uint64_t)i << 20, &v);
        cr_assert_eq(found, i % 2 == 0, "key %u", i);
        if (found) cr_assert_eq(v, i);
    }
    cr_assert(!hl_ptrmap_del(&m, 12345, NULL));
    cr_assert_eq(hl_ptrmap_put(&m, 2ull << 20, 99), 0);
    uint32_t v;
    cr_assert(hl_ptrmap_get(&m, 2ull << 20, &v) && v == 99);
    cr_assert_eq(m.count, N / 2);
    hl_ptrmap_fini(&m);
}
