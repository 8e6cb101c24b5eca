/* TLSF module tests on pools in static buffers: random sequences with content checks and the
 * invariant checker after every step batch. */
#include "../test_rand.h"
#include "internal.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

static _Alignas(64) char pool_a[1 << 20];
static _Alignas(64) char pool_b[256 << 10];

typedef struct live_s {
    unsigned char *p;
    size_t n;
    unsigned char fill;
} live_t;

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    return hl_test_rand(&rng);
}

static void verify(const live_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->p[i] != l->fill) cr_assert_fail("block %p byte %zu changed", (void *)l->p, i);
}

Test(tlsf, empty_pool_is_consistent)
{
    hl_tlsf_t t;
    hl_tlsf_init(&t, 3, 0);
    cr_assert_eq(hl_tlsf_add_pool(&t, pool_a, sizeof pool_a), 0);
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
    cr_assert_eq(hl_tlsf_free_bytes(&t), sizeof pool_a - HL_TLSF_POOL_OVERHEAD);
    cr_assert_eq(hl_tlsf_largest_free(&t), sizeof pool_a - HL_TLSF_POOL_OVERHEAD);
}

Test(tlsf, rejects_misaligned_or_tiny_pool)
{
    hl_tlsf_t t;
    hl_tlsf_init(&t, 0, 0);
    cr_assert_eq(hl_tlsf_add_pool(&t, pool_a + 8, 4096), -1);
    cr_assert_eq(hl_tlsf_add_pool(&t, pool_a, 64), -1);
}

Test(tlsf, alloc_free_coalesces_back_to_one_block)
{
    hl_tlsf_t t;
    hl_tlsf_init(&t, 0, 0);
    hl_tlsf_add_pool(&t, pool_a, sizeof pool_a);
    void *p[64];
    for (int i = 0; i < 64; i++) {
        p[i] = hl_tlsf_malloc(&t, 100 + (size_t)i * 37, NULL);
        cr_assert_not_null(p[i]);
        cr_assert_eq((uintptr_t)p[i] % 16, 0);
        cr_assert_geq(hl_tlsf_usable(p[i]), 100 + (size_t)i * 37);
        cr_assert_eq(((uint8_t *)p[i])[-1], HL_TAG_MID);
    }
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
    hl_tlsf_freed_t fr;
    int empty = 0;
    for (int i = 0; i < 64; i += 2)
        hl_tlsf_free(&t, p[i], &fr);
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
    for (int i = 1; i < 64; i += 2) {
        hl_tlsf_free(&t, p[i], &fr);
        cr_assert(fr.coalesced);
        empty += fr.empty_pool != NULL;
    }
    cr_assert_eq(empty, 1, "the last free leaves the pool as one free block");
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
    cr_assert_eq(hl_tlsf_largest_free(&t), sizeof pool_a - HL_TLSF_POOL_OVERHEAD);
}

Test(tlsf, good_fit_never_returns_too_small)
{
    hl_tlsf_t t;
    hl_tlsf_init(&t, 0, 0);
    hl_tlsf_add_pool(&t, pool_a, sizeof pool_a);
    for (size_t n = 0; n < 70000; n = n * 3 / 2 + 1) {
        void *p = hl_tlsf_malloc(&t, n, NULL);
        cr_assert_not_null(p);
        cr_assert_geq(hl_tlsf_usable(p), n);
        memset(p, 0xab, n);
        hl_tlsf_free(&t, p, NULL);
    }
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
}

Test(tlsf, exhaustion_returns_null)
{
    hl_tlsf_t t;
    hl_tlsf_init(&t, 0, 0);
    hl_tlsf_add_pool(&t, pool_b, sizeof pool_b);
    cr_assert_null(hl_tlsf_malloc(&t, sizeof pool_b, NULL));
    size_t total = 0;
    void *p;
    while ((p = hl_tlsf_malloc(&t, 1000, NULL)))
        total += 1000;
    cr_assert_gt(total, sizeof pool_b * 9 / 10);
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
}

Test(tlsf, memalign_alignments)
{
    hl_tlsf_t t;
    hl_tlsf_init(&t, 0, 0);
    hl_tlsf_add_pool(&t, pool_a, sizeof pool_a);
    void *keep[40];
    int k = 0;
    for (size_t a = 32; a <= 65536; a <<= 1) {
        for (size_t n = 1; n < 5000; n = n * 7 + 3) {
            void *p = hl_tlsf_memalign(&t, a, n, NULL);
            cr_assert_not_null(p, "align %zu size %zu", a, n);
            cr_assert_eq((uintptr_t)p % a, 0);
            cr_assert_geq(hl_tlsf_usable(p), n);
            memset(p, 1, n);
            if (k < 40 && (n & 1))
                keep[k++] = p;
            else
                hl_tlsf_free(&t, p, NULL);
            cr_assert_eq(hl_tlsf_check(&t, 1), 0);
        }
    }
    while (k)
        hl_tlsf_free(&t, keep[--k], NULL);
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
    cr_assert_eq(hl_tlsf_largest_free(&t), sizeof pool_a - HL_TLSF_POOL_OVERHEAD);
}

Test(tlsf, resize_in_place)
{
    hl_tlsf_t t;
    hl_tlsf_init(&t, 0, 0);
    hl_tlsf_add_pool(&t, pool_a, sizeof pool_a);
    unsigned char *a = hl_tlsf_malloc(&t, 1000, NULL);
    unsigned char *b = hl_tlsf_malloc(&t, 1000, NULL);
    memset(a, 7, 1000);
    cr_assert(hl_tlsf_resize(&t, a, 200), "shrink always works");
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
    cr_assert(hl_tlsf_resize(&t, a, 900), "regrow into the freed tail");
    cr_assert(!hl_tlsf_resize(&t, a, 5000), "b is in the way");
    hl_tlsf_free(&t, b, NULL);
    cr_assert(hl_tlsf_resize(&t, a, 50000), "b freed: grow over it");
    cr_assert_geq(hl_tlsf_usable(a), 50000);
    for (int i = 0; i < 200; i++)
        cr_assert_eq(a[i], 7);
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
}

static void random_sequence(int rotate, unsigned steps)
{
    hl_tlsf_t t;
    hl_tlsf_init(&t, 1, rotate);
    hl_tlsf_add_pool(&t, pool_a, sizeof pool_a);
    hl_tlsf_add_pool(&t, pool_b, sizeof pool_b);
    enum { N = 512 };
    live_t live[N];
    memset(live, 0, sizeof live);
    for (unsigned step = 0; step < steps; step++) {
        live_t *l = &live[next_rand() % N];
        uint64_t r = next_rand();
        if (l->p) {
            verify(l);
            if (r % 4 == 0) {
                size_t n = (size_t)(next_rand() % 8192);
                if (hl_tlsf_resize(&t, l->p, n)) {
                    if (n > l->n) memset(l->p + l->n, l->fill, n - l->n);
                    l->n = n;
                }
            } else {
                hl_tlsf_free(&t, l->p, NULL);
                l->p = NULL;
            }
        } else {
            size_t n = (r & 1) ? (size_t)(next_rand() % 256) : (size_t)(next_rand() % 20000);
            size_t align = (r & 6) == 6 ? (size_t)16 << (next_rand() % 8) : 16;
            l->p = align > 16 ? hl_tlsf_memalign(&t, align, n, NULL) : hl_tlsf_malloc(&t, n, NULL);
            if (l->p) {
                cr_assert_eq((uintptr_t)l->p % align, 0);
                l->n = n;
                l->fill = (unsigned char)next_rand();
                memset(l->p, l->fill, n);
            }
        }
        if (step % 1000 == 0) cr_assert_eq(hl_tlsf_check(&t, 1), 0, "step %u", step);
    }
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
    for (int i = 0; i < N; i++)
        if (live[i].p) {
            verify(&live[i]);
            hl_tlsf_free(&t, live[i].p, NULL);
        }
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
    cr_assert_eq(t.used_bytes, 0);
    cr_assert_eq(hl_tlsf_free_bytes(&t), sizeof pool_a + sizeof pool_b - 2 * HL_TLSF_POOL_OVERHEAD);
}

/* A parked pool serves nothing, stays in the pool list and the checker's books, and serves
 * again once unparked (tlsf.h); a parked pool can be removed. */
Test(tlsf, a_parked_pool_serves_nothing_until_unparked)
{
    hl_tlsf_t t;
    hl_tlsf_init(&t, 1, 1); /* with rotation */
    cr_assert_eq(hl_tlsf_add_pool(&t, pool_a, sizeof pool_a), 0);
    cr_assert_eq(hl_tlsf_add_pool(&t, pool_b, sizeof pool_b), 0);
    hl_tlsf_pool_t *a = (hl_tlsf_pool_t *)pool_a, *b = (hl_tlsf_pool_t *)pool_b;
    hl_tlsf_park_pool(&t, a);
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
    cr_assert_eq(hl_tlsf_parked_next(&t, NULL), a);
    cr_assert_null(hl_tlsf_parked_next(&t, a));
    cr_assert_eq(t.parked_bytes, sizeof pool_a);
    cr_assert_eq(t.pool_bytes, sizeof pool_a + sizeof pool_b, "still the arena's pool");
    cr_assert_eq(hl_tlsf_free_bytes(&t), sizeof pool_b - HL_TLSF_POOL_OVERHEAD);
    cr_assert_eq(hl_tlsf_largest_free(&t), sizeof pool_b - HL_TLSF_POOL_OVERHEAD);
    cr_assert_null(hl_tlsf_malloc(&t, 300 << 10, NULL), "only pool_b serves (256 KiB)");
    void *p[8];
    for (int i = 0; i < 8; i++) {
        p[i] = hl_tlsf_malloc(&t, 16 << 10, NULL);
        cr_assert((char *)p[i] > pool_b && (char *)p[i] < pool_b + sizeof pool_b, "from pool_b");
    }
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
    hl_tlsf_unpark_pool(&t, a);
    cr_assert_null(hl_tlsf_parked_next(&t, NULL));
    cr_assert_eq(t.parked_bytes, 0);
    void *q = hl_tlsf_malloc(&t, 300 << 10, NULL);
    cr_assert((char *)q > pool_a && (char *)q < pool_a + sizeof pool_a, "pool_a serves again");
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
    hl_tlsf_free(&t, q, NULL);
    for (int i = 0; i < 8; i++)
        hl_tlsf_free(&t, p[i], NULL);
    hl_tlsf_park_pool(&t, b);
    hl_tlsf_park_pool(&t, a);
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
    cr_assert_null(hl_tlsf_malloc(&t, 64, NULL), "both parked: nothing serves");
    hl_tlsf_remove_pool(&t, b); /* parked, not listed: taken off the parked chain */
    cr_assert_eq(hl_tlsf_parked_next(&t, NULL), a);
    cr_assert_null(hl_tlsf_parked_next(&t, a));
    cr_assert_eq(t.pool_bytes, sizeof pool_a);
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
    hl_tlsf_remove_pool(&t, a);
    cr_assert_null(t.pools);
    cr_assert_eq(t.parked_pools, 0);
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
}

/* With rotation, a pool parked from the inactive store goes back there: the memory freed since
 * the last swap is not handed out before the next one (rotation's guarantee, tlsf.h). */
Test(tlsf, an_unparked_pool_keeps_rotations_delay)
{
    hl_tlsf_t t;
    hl_tlsf_init(&t, 1, 1);
    cr_assert_eq(hl_tlsf_add_pool(&t, pool_a, sizeof pool_a), 0);
    cr_assert_eq(hl_tlsf_add_pool(&t, pool_b, sizeof pool_b), 0);
    char *p = hl_tlsf_malloc(&t, 16 << 10, NULL);
    cr_assert(p > pool_b && p < pool_b + sizeof pool_b, "the good fit is the smaller pool");
    hl_tlsf_freed_t fr;
    hl_tlsf_free(&t, p, &fr); /* into the inactive store, merged with the rest of pool_b */
    cr_assert_eq(fr.empty_pool, (hl_tlsf_pool_t *)pool_b);
    hl_tlsf_park_pool(&t, fr.empty_pool);
    hl_tlsf_unpark_pool(&t, fr.empty_pool);
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
    char *q = hl_tlsf_malloc(&t, 16 << 10, NULL);
    cr_assert(q > pool_a && q < pool_a + sizeof pool_a,
              "pool_b's memory, freed after the last swap, is not handed out before the next");
    hl_tlsf_free(&t, q, NULL);
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
}

Test(tlsf, random_sequence_checked)
{
    random_sequence(0, 200000);
}

Test(tlsf, random_sequence_rotating_stores)
{
    random_sequence(1, 200000);
}

Test(tlsf, rotation_delays_reuse)
{
    hl_tlsf_t t;
    hl_tlsf_init(&t, 0, 1);
    hl_tlsf_add_pool(&t, pool_a, sizeof pool_a);
    void *a = hl_tlsf_malloc(&t, 512, NULL);
    void *guard = hl_tlsf_malloc(&t, 512, NULL);
    hl_tlsf_free(&t, a, NULL);
    void *b = hl_tlsf_malloc(&t, 512, NULL);
    cr_assert_neq(a, b, "a freed block is not handed out again while the active store serves");
    cr_assert_eq(t.swaps, 0);
    (void)guard;
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
}

/* The rotation guarantee (tlsf.h): memory freed after the latest store swap is not part of a
 * block handed out (malloc, memalign, realloc in place) before the next swap. Checked at
 * 16-byte granularity over a random sequence with a shadow map of recently freed bytes. */
Test(tlsf, rotation_never_hands_out_memory_freed_since_the_last_swap)
{
    static unsigned char recent[sizeof pool_a / 16];
    static live_t live[2048];
    hl_tlsf_t t;
    hl_tlsf_init(&t, 0, 1);
    hl_tlsf_add_pool(&t, pool_a, sizeof pool_a);
    memset(recent, 0, sizeof recent);
    size_t nlive = 0;
    uint64_t swaps = 0, early = 0;
#define CELL(q) (((uintptr_t)(q) - (uintptr_t)pool_a) / 16)
    for (unsigned step = 0; step < 100000; step++) {
        uint64_t r = next_rand();
        if (nlive < 2048 && (nlive == 0 || r % 3 == 0)) {
            size_t n = 16 + (next_rand() % (r % 7 == 0 ? 6000 : 400));
            unsigned char *p =
                r % 11 == 0 ? hl_tlsf_memalign(&t, 256, n, NULL) : hl_tlsf_malloc(&t, n, NULL);
            if (!p) continue;
            if (t.swaps != swaps) {
                swaps = t.swaps;
                memset(recent, 0, sizeof recent);
            }
            for (size_t c = CELL(p); c < CELL(p + hl_tlsf_usable(p)); c++)
                if (recent[c]) early++;
            live[nlive++] = (live_t){p, n, 0};
        } else {
            size_t i = (size_t)(next_rand() % nlive);
            unsigned char *p = live[i].p;
            if (r % 3 == 1) {
                size_t old = hl_tlsf_usable(p), n = 16 + next_rand() % 800;
                if (hl_tlsf_resize(&t, p, n)) {
                    for (size_t c = CELL(p + old); c < CELL(p + hl_tlsf_usable(p)); c++)
                        if (recent[c]) early++;
                    for (size_t c = CELL(p + hl_tlsf_usable(p)); c < CELL(p + old); c++)
                        recent[c] = 1;
                }
                continue;
            }
            for (size_t c = CELL(p); c < CELL(p + hl_tlsf_usable(p)); c++)
                recent[c] = 1;
            hl_tlsf_free(&t, p, NULL);
            live[i] = live[--nlive];
        }
    }
#undef CELL
    cr_assert_eq(early, 0, "%llu recently freed cells handed out before a swap",
                 (unsigned long long)early);
    cr_assert_gt(t.swaps, 100, "the sequence swaps stores (%llu)", (unsigned long long)t.swaps);
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
}

/* A swap for a tighter fit waits for HL_TLSF_ROTATE_MIN frees into the inactive store. */
Test(tlsf, rotation_swaps_for_a_tighter_fit_after_rotate_min_frees)
{
    hl_tlsf_t t;
    hl_tlsf_init(&t, 0, 1);
    hl_tlsf_add_pool(&t, pool_a, sizeof pool_a);
    void *a[HL_TLSF_ROTATE_MIN], *guard[HL_TLSF_ROTATE_MIN];
    for (unsigned i = 0; i < HL_TLSF_ROTATE_MIN; i++) {
        a[i] = hl_tlsf_malloc(&t, 64, NULL);
        guard[i] = hl_tlsf_malloc(&t, 64, NULL);
    }
    for (unsigned i = 0; i + 1 < HL_TLSF_ROTATE_MIN; i++) {
        hl_tlsf_free(&t, a[i], NULL);
        void *p = hl_tlsf_malloc(&t, 64, NULL);
        for (unsigned k = 0; k <= i; k++)
            cr_assert_neq(p, a[k], "reused after %u frees", i + 1);
        cr_assert_eq(t.swaps, 0);
    }
    hl_tlsf_free(&t, a[HL_TLSF_ROTATE_MIN - 1], NULL);
    void *p = hl_tlsf_malloc(&t, 64, NULL);
    int from_freed = 0;
    for (unsigned k = 0; k < HL_TLSF_ROTATE_MIN; k++)
        from_freed |= p == a[k];
    cr_assert(from_freed, "after %u frees the tighter fit of the other store is used",
              HL_TLSF_ROTATE_MIN);
    cr_assert_eq(t.swaps, 1);
    (void)guard;
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
}

/* A used block costs 8 bytes: its usable bytes run into its successor's prev_size slot,
 * which only a free block's successor needs. Every usable byte may be written, through
 * frees, coalescing and in-place resizes of the neighbours. */
Test(tlsf, used_block_costs_one_word)
{
    static live_t live[400];
    hl_tlsf_t t;
    hl_tlsf_init(&t, 0, 0);
    hl_tlsf_add_pool(&t, pool_b, sizeof pool_b);
    cr_assert_eq(hl_tlsf_block_size(1), 32);
    cr_assert_eq(hl_tlsf_block_size(24), 32);
    cr_assert_eq(hl_tlsf_block_size(25), 48);
    cr_assert_eq(hl_tlsf_block_size(32), 48);
    cr_assert_eq(hl_tlsf_block_size(40), 48);
    cr_assert_eq(hl_tlsf_block_size(1000), 1008);
    for (size_t i = 0; i < 400; i++) {
        size_t n = 1 + i % 200;
        unsigned char *p = hl_tlsf_malloc(&t, n, NULL);
        cr_assert_not_null(p);
        cr_assert_eq(hl_tlsf_usable(p), hl_tlsf_block_size(n) - 8, "n %zu", n);
        cr_assert_geq(hl_tlsf_usable(p), n);
        live[i] = (live_t){p, hl_tlsf_usable(p), (unsigned char)(i + 1)};
        memset(p, live[i].fill, live[i].n);
    }
    for (size_t i = 0; i < 400; i += 3) {
        hl_tlsf_free(&t, live[i].p, NULL);
        live[i].p = NULL;
    }
    for (size_t i = 1; i < 400; i += 3) { /* shrink and grow beside free neighbours */
        if (!live[i].p || !hl_tlsf_resize(&t, live[i].p, live[i].n / 2)) continue;
        live[i].n = hl_tlsf_usable(live[i].p);
        if (hl_tlsf_resize(&t, live[i].p, live[i].n + 40)) {
            memset(live[i].p, live[i].fill, hl_tlsf_usable(live[i].p));
            live[i].n = hl_tlsf_usable(live[i].p);
        }
    }
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
    for (size_t i = 0; i < 400; i++)
        if (live[i].p) verify(&live[i]);
    for (size_t i = 0; i < 400; i++)
        if (live[i].p) hl_tlsf_free(&t, live[i].p, NULL);
    cr_assert_eq(hl_tlsf_check(&t, 1), 0);
    cr_assert_eq(hl_tlsf_free_bytes(&t), sizeof pool_b - HL_TLSF_POOL_OVERHEAD);
}
