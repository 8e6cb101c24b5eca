/* tests/harden/test_quarantine.c — the quarantine's size (liballoc/quarantine.h, harden.c):
 * harden=1's default follows the heap's live bytes (a floor for small heaps, the full 1 MiB
 * for big ones), an explicit quarantine=SIZE is held as given, and the ring keeps its FIFO
 * order while its wrap point moves with the budget. Blocks are followed through the calling
 * thread's buffers (harden_cache.h): a freed block that left the shared quarantine is in the
 * thread's reuse cache.
 */
#include "harden.h"
#include "harden_test.h"
#include "harden_cache.h"
#include "quarantine.h"

#include <criterion/criterion.h>
#include <string.h>

/* Did p leave the shared quarantine (it is in the calling thread's reuse cache)? */
static int left_quarantine(hl_heap_t *h, const void *p)
{
    return in_reuse_cache(h, p);
}

/* Allocate n blocks of size bytes, free p, then free the others one by one until p leaves
 * the quarantine: the bytes freed after p by then, counted as the quarantine counts them
 * (about the request and its padding), SIZE_MAX when p never left. */
static size_t bytes_until_out(hl_heap_t *h, size_t size, size_t n)
{
    char **others = hl_heap_malloc(h, n * sizeof *others);
    for (size_t i = 0; i < n; i++)
        others[i] = hl_heap_malloc(h, size);
    char *p = hl_heap_malloc(h, size);
    hl_heap_free(h, p);
    size_t freed = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        hl_heap_free(h, others[i]);
        if (left_quarantine(h, p)) {
            freed = (i + 1) * (size + HL_HARDEN_PAD);
            break;
        }
    }
    return freed;
}

/* A small heap (400 KB live) does not hold 1 MiB of freed blocks: its quarantine is the floor. */
Test(quarantine, small_heap_holds_the_floor)
{
    hl_heap_t *h = heap_with("harden=1,stacks=0");
    size_t freed = bytes_until_out(h, 100, 4000);
    cr_assert_neq(freed, SIZE_MAX, "the block left the quarantine within 400 KB of frees");
    cr_assert_geq(freed, HL_QUARANTINE_FLOOR / 2, "held for about the floor: %zu bytes", freed);
    cr_assert_leq(freed, HL_QUARANTINE_FLOOR + (256u << 10), "not 1 MiB: %zu bytes", freed);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

/* A small program (about 100 KB live) holds 64 KiB of freed blocks, not more: a block freed
 * leaves the quarantine within 100 KB of later frees (the floor was 128 KiB). */
Test(quarantine, small_program_holds_64k)
{
    hl_heap_t *h = heap_with("harden=1,stacks=0");
    size_t freed = bytes_until_out(h, 100, 700);
    cr_assert_neq(freed, SIZE_MAX, "the block left the quarantine within 100 KB of frees");
    cr_assert_geq(freed, (size_t)48 << 10, "held for about 64 KiB: %zu bytes", freed);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

/* A big heap (8 MB live) gets the full 1 MiB: a freed block is still held after 600 KB. */
Test(quarantine, big_heap_holds_the_full_size)
{
    hl_heap_t *h = heap_with("harden=1,stacks=0");
    size_t freed = bytes_until_out(h, 1000, 8000);
    cr_assert_neq(freed, SIZE_MAX, "the block left the quarantine within 8 MB of frees");
    cr_assert_geq(freed, (size_t)800 << 10, "held for about 1 MiB: %zu bytes", freed);
    cr_assert_leq(freed, (size_t)1400 << 10, "at most 1 MiB and the buffers: %zu bytes", freed);
    hl_heap_destroy(h);
}

/* An explicit size is held as given, whatever the heap. */
Test(quarantine, explicit_size_is_kept)
{
    hl_heap_t *h = heap_with("harden=1,stacks=0,quarantine=512K");
    size_t freed = bytes_until_out(h, 100, 8000);
    cr_assert_neq(freed, SIZE_MAX);
    cr_assert_geq(freed, (size_t)400 << 10, "held for about 512 KiB: %zu bytes", freed);
    hl_heap_destroy(h);
}

/* quarantine=1M given explicitly is a fixed 1 MiB, even on a small heap (before
 * quarantine=auto it could not be told from harden=1's adaptive default); quarantine=auto
 * alone adapts as harden=1 does. */
Test(quarantine, explicit_1m_is_fixed_and_auto_adapts)
{
    hl_heap_t *h = heap_with("harden=1,stacks=0,quarantine=1M");
    size_t freed = bytes_until_out(h, 100, 12000);
    cr_assert_neq(freed, SIZE_MAX, "the block left the quarantine within 1.2 MB of frees");
    cr_assert_geq(freed, (size_t)800 << 10, "held for about 1 MiB: %zu bytes", freed);
    hl_heap_destroy(h);
    h = heap_with("canary=1,poison=1,quarantine=auto,stacks=0");
    freed = bytes_until_out(h, 100, 4000);
    cr_assert_neq(freed, SIZE_MAX, "the block left the quarantine within 400 KB of frees");
    cr_assert_leq(freed, HL_QUARANTINE_FLOOR + (256u << 10), "not 1 MiB: %zu bytes", freed);
    hl_heap_destroy(h);
}

/* The ring: a lower entry count evicts the oldest entries first and moves the wrap point
 * once the entries in use allow; a higher one lets it grow again; FIFO order throughout. */
Test(quarantine, ring_follows_its_capacity_in_order)
{
    hl_quarantine_t q;
    cr_assert_eq(hl_quarantine_init(&q, (size_t)1 << 20, 64), 0);
    void *out[256];
    uintptr_t next_out = 1, next_in = 1;
    for (int round = 0; round < 40; round++) {
        size_t entries = round % 3 == 0 ? 64 : round % 3 == 1 ? 5 : 20;
        hl_quarantine_set_budget(&q, (size_t)1 << 20, entries);
        for (int k = 0; k < 30; k++) {
            void *p[4];
            uint32_t b[4] = {1, 1, 1, 1};
            for (int j = 0; j < 4; j++)
                p[j] = (void *)(next_in++ * 16);
            size_t n = hl_quarantine_push_batch(&q, p, b, 4, out, 256);
            for (size_t j = 0; j < n; j++) {
                cr_assert_eq((uintptr_t)out[j], next_out * 16, "FIFO order (round %d)", round);
                next_out++;
            }
            cr_assert_leq(q.count, q.lcap);
            cr_assert_leq(q.lcap, 64);
        }
        cr_assert_leq(q.count, entries, "round %d: %zu entries for %zu", round, q.count, entries);
    }
    size_t n;
    while ((n = hl_quarantine_drain(&q, out, 256)) > 0)
        for (size_t j = 0; j < n; j++)
            cr_assert_eq((uintptr_t)out[j], next_out++ * 16, "drained in order");
    cr_assert_eq(next_out, next_in);
    hl_quarantine_fini(&q);
}
