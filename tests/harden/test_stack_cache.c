/* tests/harden/test_stack_cache.c — the call-site cache of hardened stacks (stack_cache.c).
 *
 * A cached stack is reused only when the return-address words of its last full unwind still
 * hold the same addresses. These tests reach hl_stack_capture_id at the same stack pointer and
 * return address through different call chains (twin functions with identical frames), where
 * a cache keyed by the call site alone would hand out the first chain's stack, and check that
 * every id equals a full unwind's (hl_stack_capture_user + hl_stack_intern) at the same place.
 */
#include "stack.h"

#include <criterion/criterion.h>
#include <pthread.h>

#define DEPTH 8

typedef struct {
    uint32_t cached, full;
} pair_t;

#define BARRIER() __asm__ volatile("" ::: "memory")

/* Both captures from the same frame; skip 1 makes both stacks start in leaf's caller (their
 * own call instructions in leaf differ). */
static __attribute__((noinline)) pair_t leaf(void)
{
    pair_t r;
    r.cached = hl_stack_capture_id(DEPTH, 1);
    uint64_t ips[DEPTH];
    size_t d = hl_stack_capture_user(ips, DEPTH, 1);
    int is_new;
    r.full = hl_stack_intern(ips, d, &is_new);
    BARRIER();
    return r;
}

/* Twins: same code, same frame, different return addresses into their callers. */
static __attribute__((noinline)) pair_t via_a(void)
{
    pair_t r = leaf();
    BARRIER();
    return r;
}

static __attribute__((noinline)) pair_t via_b(void)
{
    pair_t r = leaf();
    BARRIER();
    return r;
}

/* The chain differs two frames further out: mid is shared, its callers are twins. */
static __attribute__((noinline)) pair_t mid(void)
{
    pair_t r = via_a();
    BARRIER();
    return r;
}

static __attribute__((noinline)) pair_t outer_a(void)
{
    pair_t r = mid();
    BARRIER();
    return r;
}

static __attribute__((noinline)) pair_t outer_b(void)
{
    pair_t r = mid();
    BARRIER();
    return r;
}

static void expect_exact(pair_t p, const char *what)
{
    cr_assert_neq(p.full, 0, "%s: a full unwind gave no stack", what);
    cr_assert_eq(p.cached, p.full, "%s: cached id %u, a full unwind interns %u", what, p.cached,
                 p.full);
}

Test(stack_cache, same_call_site_different_caller_is_not_reused)
{
    cr_assert_eq(hl_stack_init(), 0);
    for (int round = 0; round < 3; round++) {
        pair_t a = via_a(), b = via_b();
        expect_exact(a, "via_a");
        expect_exact(b, "via_b");
        cr_assert_neq(a.cached, b.cached, "two call chains share stack id %u", a.cached);
    }
}

Test(stack_cache, chain_differing_further_out_is_not_reused)
{
    cr_assert_eq(hl_stack_init(), 0);
    for (int round = 0; round < 3; round++) {
        pair_t a = outer_a(), b = outer_b();
        expect_exact(a, "outer_a");
        expect_exact(b, "outer_b");
        cr_assert_neq(a.cached, b.cached, "two call chains share stack id %u", a.cached);
    }
}

Test(stack_cache, repeated_site_gives_the_same_id)
{
    cr_assert_eq(hl_stack_init(), 0);
    static pair_t got[1000];
    for (int i = 0; i < 1000; i++)
        got[i] = via_a(); /* one call site (no branch here the compiler could peel off) */
    for (int i = 1; i < 1000; i++)
        cr_assert_eq(got[i].cached, got[0].cached, "round %d: id %u, then %u", i, got[0].cached,
                     got[i].cached);
    pair_t first = got[999];
    expect_exact(first, "via_a");
}

/* A site met again is answered from the thread's memo (its last verified chain at the same
 * stack pointer and return address), with the same exact id. */
Test(stack_cache, repeated_site_is_answered_from_the_memo)
{
    cr_assert_eq(hl_stack_init(), 0);
    for (int i = 0; i < 10; i++)
        expect_exact(via_a(), "via_a, warming up");
    uint64_t before, after;
    hl_stack_cache_stats(&before);
    for (int i = 0; i < 100; i++)
        expect_exact(via_a(), "via_a");
    hl_stack_cache_stats(&after);
    /* This loop's call is a new chain: its first captures (SC_SIGHTS) walk and cache it. */
    cr_assert_geq(after - before, 95, "%llu of 100 captures from the memo",
                  (unsigned long long)(after - before));
}

/* Twins alternating at the same stack pointer and return address: each finds the other's
 * chain in the memo and must not take it, round after round, after both are cached. */
Test(stack_cache, twins_alternating_never_take_the_memo_of_the_other)
{
    cr_assert_eq(hl_stack_init(), 0);
    for (int round = 0; round < 50; round++) {
        pair_t a = via_a(), b = via_b(), oa = outer_a(), ob = outer_b();
        expect_exact(a, "via_a");
        expect_exact(b, "via_b");
        expect_exact(oa, "outer_a");
        expect_exact(ob, "outer_b");
        cr_assert_neq(a.cached, b.cached, "round %d: two call chains share stack id %u", round,
                      a.cached);
        cr_assert_neq(oa.cached, ob.cached, "round %d: two call chains share stack id %u", round,
                      oa.cached);
    }
}

static void *thread_body(void *arg)
{
    pair_t *out = arg;
    out[0] = via_a();
    out[1] = via_b();
    out[2] = outer_a();
    return NULL;
}

/* New threads start without any stack words of their own unwound: entries made by other
 * threads (same addresses, different stacks) must neither be trusted nor fault. */
Test(stack_cache, threads_get_exact_stacks)
{
    cr_assert_eq(hl_stack_init(), 0);
    pair_t mine = via_a();
    for (int t = 0; t < 8; t++) {
        pthread_t th;
        pair_t got[3];
        cr_assert_eq(pthread_create(&th, NULL, thread_body, got), 0);
        pthread_join(th, NULL);
        expect_exact(got[0], "thread via_a");
        expect_exact(got[1], "thread via_b");
        expect_exact(got[2], "thread outer_a");
        cr_assert_neq(got[0].cached, mine.cached, "a thread's stack (start_thread) took main's");
    }
}

/* Untraced, libunwind's first walk (it allocates and keeps ~370 KiB) waits for the first
 * capture the fast walker defers: none on ordinary frames; with unwind=libunwind the first
 * capture makes it, and gives the fast walker's stack. */
Test(stack_cache, libunwind_walks_only_when_needed)
{
    cr_assert_eq(hl_stack_init(), 0);
    cr_assert_eq(hl_stack_unwinder_calls(), 0, "libunwind walked at start-up");
    pair_t a = via_a();
    expect_exact(a, "via_a");
    cr_assert_eq(hl_stack_unwinder_calls(), 0, "libunwind walked ordinary frames");
    uint64_t fast[DEPTH], lib[DEPTH];
    size_t nf = hl_stack_capture_user(fast, DEPTH, 0);
    hl_stack_set_unwind(HL_UNWIND_LIBUNWIND);
    size_t nl = hl_stack_capture_user(lib, DEPTH, 0);
    hl_stack_set_unwind(HL_UNWIND_FAST);
    cr_assert_eq(hl_stack_unwinder_calls(), 1);
    cr_assert_eq(nl, nf, "libunwind's first walk: %zu frames, the fast walker's %zu", nl, nf);
    for (size_t i = 1; i < nf; i++) /* frame 0: each call's own return address */
        cr_assert_eq(lib[i], fast[i], "frame %zu", i);
}

/* ---- the stack table (stack.c) ------------------------------------------------------------ */

#include <stdio.h>
#include <unistd.h>

static long rss_pages(void)
{
    long size = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    cr_assert_not_null(f);
    cr_assert_eq(fscanf(f, "%ld %ld", &size, &res), 2);
    fclose(f);
    return res;
}

typedef struct {
    uint32_t base, n, *ids;
} intern_job_t;

static void *intern_many(void *arg)
{
    intern_job_t *j = arg;
    for (uint32_t i = 0; i < j->n; i++) {
        uint64_t ips[4] = {0x400000u + j->base + i, 0x500000, 0x600000 + (i & 7), 0x700000};
        int is_new;
        j->ids[i] = hl_stack_intern(ips, 4, &is_new);
    }
    return NULL;
}

/* 40 000 distinct stacks from two threads: every id is distinct and names its frames, and
 * the table's resident pages grow with the stacks (slots by id, a 4-byte index), not with
 * the table's size: an index of 32-byte slots touched at random cost 8 MiB here. */
Test(stack_table, distinct_stacks_dense_and_exact)
{
    cr_assert_eq(hl_stack_init(), 0);
    enum { N = 20000 };
    static uint32_t ids[2][N];
    long before = rss_pages();
    intern_job_t jobs[2] = {{0, N, ids[0]}, {N, N, ids[1]}};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, intern_many, &jobs[1]), 0);
    intern_many(&jobs[0]);
    pthread_join(t, NULL);
    long grown = (rss_pages() - before) * sysconf(_SC_PAGESIZE);
    static uint8_t seen[1u << 18];
    for (int k = 0; k < 2; k++)
        for (uint32_t i = 0; i < N; i++) {
            uint32_t id = ids[k][i];
            cr_assert(id != 0 && id < (1u << 18), "id %u", id);
            cr_assert_eq(seen[id], 0, "id %u handed out twice", id);
            seen[id] = 1;
            size_t d;
            const uint64_t *f = hl_stack_lookup(id, &d);
            cr_assert_not_null(f);
            cr_assert_eq(d, 4);
            cr_assert_eq(f[0], 0x400000u + jobs[k].base + i);
            int is_new;
            cr_assert_eq(hl_stack_intern(f, 4, &is_new), id, "interned again: same id");
            cr_assert_eq(is_new, 0);
        }
    cr_assert_lt(grown, 4L << 20, "table pages touched: %ld bytes for %d stacks", grown, 2 * N);
}
