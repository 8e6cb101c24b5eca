/* tests/e2e/record_stack_test.c — Criterion tests of the stack table (liballoc/stack.c):
 * capture, interning, "new" per process epoch, lookup, and concurrent interning. */
#include "stack.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>

static void setup(void)
{
    cr_assert_eq(hl_stack_init(), 0);
}

TestSuite(stack, .init = setup);

static __attribute__((noipa)) size_t site_a(uint64_t *ips, size_t max)
{
    size_t d = hl_stack_capture(ips, max, 0);
    __asm__ volatile("" ::: "memory"); /* keep the call out of tail position */
    return d;
}

static __attribute__((noipa)) size_t site_b(uint64_t *ips, size_t max)
{
    size_t d = hl_stack_capture(ips, max, 0);
    __asm__ volatile("" ::: "memory");
    return d;
}

Test(stack, capture_is_stable_per_site)
{
    uint64_t a1[16], a2[16], b[16];
    size_t d1 = 0, d2 = 0;
    for (int i = 0; i < 2; i++)
        *(i ? &d2 : &d1) = site_a(i ? a2 : a1, 16);
    size_t db = site_b(b, 16);
    cr_assert_gt(d1, 2);
    cr_assert_eq(db, d1);
    cr_assert_eq(d1, d2);
    /* [0] is in site_a, [1] in this test (two call sites if the loop is unrolled), the rest
     * is Criterion's runner: identical. */
    cr_assert_eq(a1[0], a2[0], "same site, same innermost frame");
    cr_assert_eq(memcmp(a1 + 2, a2 + 2, (d1 - 2) * sizeof *a1), 0, "same callers");
    cr_assert_neq(a1[0], b[0], "innermost frame differs between sites");
    cr_assert_eq(site_a(a1, 2), 2, "depth is capped by max");
}

Test(stack, skip_drops_inner_frames)
{
    uint64_t full[16], skipped[16];
    size_t d = hl_stack_capture(full, 16, 0);
    size_t s = hl_stack_capture(skipped, 16, 1);
    cr_assert_eq(s + 1, d);
    cr_assert_eq(memcmp(full + 2, skipped + 1, (s - 1) * sizeof *full), 0);
}

Test(stack, intern_and_lookup)
{
    uint64_t ips[4] = {0x1000, 0x2000, 0x3000, 0x4000};
    int is_new;
    uint32_t id = hl_stack_intern(ips, 4, &is_new);
    cr_assert_neq(id, 0);
    cr_assert_eq(is_new, 1);
    cr_assert_eq(hl_stack_intern(ips, 4, &is_new), id);
    cr_assert_eq(is_new, 0);
    uint32_t id3 = hl_stack_intern(ips, 3, &is_new);
    cr_assert_neq(id3, id, "a prefix is another stack");
    cr_assert_eq(is_new, 1);
    size_t depth;
    const uint64_t *got = hl_stack_lookup(id, &depth);
    cr_assert_not_null(got);
    cr_assert_eq(depth, 4);
    cr_assert_eq(memcmp(got, ips, sizeof ips), 0);
    cr_assert_null(hl_stack_lookup(0, &depth));
    cr_assert_null(hl_stack_lookup(1u << 30, &depth));
    cr_assert_eq(hl_stack_intern(ips, 0, &is_new), 0, "empty stack has no id");
    cr_assert_eq(is_new, 0);
}

Test(stack, described_per_process)
{
    uint64_t ips[2] = {0xabc0, 0xdef0};
    int is_new;
    uint32_t id = hl_stack_intern(ips, 2, &is_new);
    cr_assert_eq(is_new, 1);
    cr_assert_eq(hl_stack_described(id), 0, "a new stack needs a description");
    /* Another user interning it (hardened mode) does not take that away. */
    cr_assert_eq(hl_stack_intern(ips, 2, &is_new), id);
    cr_assert_eq(is_new, 0);
    cr_assert_eq(hl_stack_described(id), 0);
    hl_stack_set_described(id);
    cr_assert_eq(hl_stack_described(id), 1);
    hl_stack_fork_child();
    cr_assert_eq(hl_stack_intern(ips, 2, &is_new), id, "ids survive fork");
    cr_assert_eq(is_new, 0);
    cr_assert_eq(hl_stack_described(id), 0, "but the child must describe the stack again");
    hl_stack_set_described(id);
    cr_assert_eq(hl_stack_described(id), 1);
    cr_assert_eq(hl_stack_described(0), 1, "nothing to describe for no stack");
}

#define N_STACKS  500
#define N_THREADS 4
static uint32_t ids[N_THREADS][N_STACKS];
static int news[N_THREADS][N_STACKS];

static void *intern_all(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < N_STACKS; i++) {
        uint64_t ips[3] = {0x7000000 + (uint64_t)i * 16, 0x8000000, (uint64_t)i};
        ids[t][i] = hl_stack_intern(ips, 3, &news[t][i]);
    }
    return NULL;
}

Test(stack, concurrent_intern)
{
    pthread_t th[N_THREADS];
    for (int t = 0; t < N_THREADS; t++)
        pthread_create(&th[t], NULL, intern_all, (void *)(intptr_t)t);
    for (int t = 0; t < N_THREADS; t++)
        pthread_join(th[t], NULL);
    for (int i = 0; i < N_STACKS; i++) {
        int reported_new = 0;
        for (int t = 0; t < N_THREADS; t++) {
            cr_assert_neq(ids[t][i], 0);
            size_t depth;
            const uint64_t *got = hl_stack_lookup(ids[t][i], &depth);
            cr_assert_not_null(got);
            cr_assert_eq(depth, 3);
            cr_assert_eq(got[2], (uint64_t)i, "id resolves to the stack it was given for");
            reported_new += news[t][i];
        }
        /* Each stack was inserted by some thread (a race may insert it twice, under two ids). */
        cr_assert_geq(reported_new, 1);
    }
}
