/* tests/harden/test_stack_site.c — the call-site cache keyed at the program's call into the
 * allocator (stack_site.c, hl_stack_site_id through hl_stack_capture_id).
 *
 * An "entry" notes its frame as the shim's entry points do and captures a few frames deeper.
 * Every id the cache gives must be the id of a full walk from the same entry
 * (hl_stack_capture_user + hl_stack_intern) at the same place, over many call sites: twin
 * chains that agree on the entry's frame, its return address and the next one and differ
 * further out; recursion at many depths (the same call sites at other stack addresses);
 * frames addressed by rbp (alloca of varying sizes); and a depth limit below the stack's
 * depth. Repeated captures must be answered from the cache (hits), or it does nothing.
 */
#include "stack.h"

#include <alloca.h>
#include <criterion/criterion.h>
#include <string.h>

#define DEPTH     16
#define BARRIER() __asm__ volatile("" ::: "memory")

typedef struct {
    uint32_t cached, full;
} pair_t;

static uintptr_t last_fp; /* the last entry's frame */

/* heapledger's own frames between the entry and the capture. */
static __attribute__((noinline)) void capture_here(pair_t *p, size_t max)
{
    p->cached = hl_stack_capture_id(max, 1);
    uint64_t ips[HL_STACK_MAX_DEPTH];
    size_t d = hl_stack_capture_user(ips, max, 1);
    int is_new;
    p->full = hl_stack_intern(ips, d, &is_new);
    BARRIER();
}
static __attribute__((noinline)) void inner(pair_t *p, size_t max)
{
    capture_here(p, max);
    BARRIER();
}

/* The entry point: notes its frame for the length of the operation. */
static __attribute__((noinline)) void entry(pair_t *p, size_t max)
{
    uintptr_t saved = hl_stack_enter(__builtin_frame_address(0));
    last_fp = (uintptr_t)__builtin_frame_address(0);
    inner(p, max);
    hl_stack_leave(saved);
    BARRIER();
}

static unsigned checked;

static void expect_exact(pair_t p, const char *what, int k)
{
    cr_assert_neq(p.full, 0, "%s %d: a full walk gave no stack", what, k);
    cr_assert_eq(p.cached, p.full, "%s %d: cached id %u, a full walk interns %u", what, k, p.cached,
                 p.full);
    checked++;
}

/* The program: call sites that share the entry's frame, return address and next frame. */
static __attribute__((noinline)) pair_t site(size_t max)
{
    pair_t p;
    entry(&p, max);
    BARRIER();
    return p;
}
static __attribute__((noinline)) pair_t mid(size_t max)
{
    pair_t p = site(max);
    BARRIER();
    return p;
}
static __attribute__((noinline)) pair_t twin_a(size_t max)
{
    pair_t p = mid(max);
    BARRIER();
    return p;
}
static __attribute__((noinline)) pair_t twin_b(size_t max)
{
    pair_t p = mid(max);
    BARRIER();
    return p;
}
static __attribute__((noinline)) pair_t outer_a(size_t max)
{
    pair_t p = twin_a(max);
    BARRIER();
    return p;
}
static __attribute__((noinline)) pair_t outer_b(size_t max)
{
    pair_t p = twin_b(max);
    BARRIER();
    return p;
}

/* Recursion: the same call sites at every depth. */
static __attribute__((noinline)) pair_t rec(int n, int which, size_t max)
{
    pair_t p;
    if (n == 0)
        p = which ? outer_b(max) : outer_a(max);
    else if (n & 1)
        p = rec(n - 1, which, max);
    else
        p = rec(n - 1, !which, max);
    BARRIER();
    return p;
}

/* A frame addressed by rbp: alloca of a size that varies between calls. */
static __attribute__((noinline)) pair_t dyn(size_t bytes, int which, size_t max)
{
    volatile char *buf = alloca(bytes);
    buf[0] = 1;
    pair_t p = which ? outer_b(max) : outer_a(max);
    buf[bytes - 1] = 2;
    BARRIER();
    return p;
}
static __attribute__((noinline)) pair_t dyn_rec(int n, size_t bytes, size_t max)
{
    pair_t p = n ? dyn_rec(n - 1, bytes, max) : dyn(bytes, (int)(bytes & 1), max);
    BARRIER();
    return p;
}

Test(stack_site, twins_differing_further_out_get_their_own_stacks)
{
    cr_assert_eq(hl_stack_init(), 0);
    uint32_t a = 0, b = 0;
    for (int k = 0; k < 50; k++) {
        pair_t pa = outer_a(DEPTH), pb = outer_b(DEPTH);
        expect_exact(pa, "twin a", k);
        expect_exact(pb, "twin b", k);
        if (!a) a = pa.full;
        if (!b) b = pb.full;
        cr_assert_eq(pa.full, a, "twin a %d: the stack changed", k);
        cr_assert_eq(pb.full, b, "twin b %d: the stack changed", k);
    }
    cr_assert_neq(a, b, "the twins' stacks differ");
}

Test(stack_site, repeated_sites_are_answered_from_the_cache)
{
    cr_assert_eq(hl_stack_init(), 0);
    uint64_t h0, m0, h1, m1;
    hl_stack_site_stats(&h0, &m0);
    for (int k = 0; k < 100; k++)
        expect_exact(outer_a(DEPTH), "repeated", k);
    hl_stack_site_stats(&h1, &m1);
    cr_assert_geq(h1 - h0, 90, "%llu hits of 100 captures of one site (%llu walks)",
                  (unsigned long long)(h1 - h0), (unsigned long long)(m1 - m0));
}

Test(stack_site, recursion_at_every_depth)
{
    cr_assert_eq(hl_stack_init(), 0);
    for (int round = 0; round < 3; round++)
        for (int n = 0; n < 40; n++)
            for (int which = 0; which < 2; which++) {
                expect_exact(rec(n, which, DEPTH), "recursion", n);
                expect_exact(rec(n, which, 6), "recursion, depth 6", n);
            }
    uint64_t h, m;
    hl_stack_site_stats(&h, &m);
    cr_assert_gt(h, 0, "no capture was answered from the cache (%llu walks)",
                 (unsigned long long)m);
}

Test(stack_site, frames_addressed_by_rbp)
{
    cr_assert_eq(hl_stack_init(), 0);
    static const size_t sizes[] = {16, 24, 100, 4000, 17, 64, 4096, 33};
    for (int round = 0; round < 4; round++)
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
            for (int n = 0; n < 6; n++)
                expect_exact(dyn_rec(n, sizes[i] + (size_t)round * 8 * (n & 1), DEPTH), "alloca",
                             (int)i);
}

/* Interleaved: every kind of call above in one loop, so that entries are replaced while
 * other chains look them up. */
Test(stack_site, interleaved_sites_stay_exact)
{
    cr_assert_eq(hl_stack_init(), 0);
    for (int k = 0; k < 400; k++) {
        int n = (k * 7) % 23;
        switch (k % 4) {
        case 0:
            expect_exact(rec(n, k & 1, DEPTH), "mixed recursion", k);
            break;
        case 1:
            expect_exact(dyn_rec(n % 5, 16 + (size_t)(k % 9) * 8, DEPTH), "mixed alloca", k);
            break;
        case 2:
            expect_exact(outer_a(DEPTH), "mixed twin a", k);
            break;
        default:
            expect_exact(outer_b((size_t)(4 + k % 13)), "mixed twin b", k);
            break;
        }
    }
    cr_assert_geq(checked, 400);
}

/* A frame addressed by rbp whose callers differ only in their frame's size, called through
 * one call instruction: with the alloca sized to put the entry's frame at the same address,
 * the second call has the same entry frame, return address and next frame as the first, and
 * the word where the first call's return address out of the rbp frame lay (now inside the
 * alloca'd buffer) is made to hold that same address. Only rbp's value (the word at the
 * entry's frame) tells the chains apart: a cache that compared the return-address words alone
 * would hand out the first caller's stack. */
typedef pair_t (*caller_fn)(size_t bytes, uint64_t fill);
static __attribute__((noinline)) pair_t rbp_frame(size_t bytes, uint64_t fill)
{
    volatile uint64_t *buf = alloca(bytes);
    for (size_t i = 0; i < bytes / 8; i++)
        buf[i] = fill;
    pair_t p = mid(DEPTH);
    buf[0] = 0;
    BARRIER();
    return p;
}
static __attribute__((noinline)) pair_t big_caller(size_t bytes, uint64_t fill)
{
    volatile char pad[512];
    pad[0] = 1;
    pair_t p = rbp_frame(bytes, fill);
    pad[511] = pad[0];
    BARRIER();
    return p;
}
static __attribute__((noinline)) pair_t small_caller(size_t bytes, uint64_t fill)
{
    volatile char pad[16];
    pad[0] = 1;
    pair_t p = rbp_frame(bytes, fill);
    pad[15] = pad[0];
    BARRIER();
    return p;
}
static caller_fn volatile callers[2] = {big_caller, small_caller};
static __attribute__((noinline)) pair_t through(int which, size_t bytes, uint64_t fill)
{
    pair_t p = callers[which](bytes, fill); /* one call instruction for both */
    BARRIER();
    return p;
}

Test(stack_site, rbp_tells_chains_apart_when_return_words_agree)
{
    cr_assert_eq(hl_stack_init(), 0);
    pair_t p1 = {0, 0};
    uintptr_t fp1 = 0;
    uint64_t into_big = 0;
    int found = 0;
    /* One call instruction for every call (the frames beyond `through` are the same): the
     * first with the big caller, then the small one with growing alloca sizes. */
    for (volatile size_t k = 0; k < 130 && !found; k++) { /* volatile: no peeled copy */
        size_t bytes = 64 + (k ? (k - 1) * 16 : 0);
        pair_t p = through(k ? 1 : 0, bytes, into_big);
        expect_exact(p, k ? "small caller" : "big caller", (int)k);
        if (k == 0) {
            p1 = p;
            fp1 = last_fp;
            size_t d;
            const uint64_t *f = hl_stack_lookup(p1.full, &d);
            cr_assert(f && d > 4);
            into_big = f[3]; /* f: into site, mid, rbp_frame, big_caller, through */
        } else if (last_fp == fp1) {
            found = 1;
            cr_assert_neq(p.full, p1.full, "the two callers' stacks differ");
        }
    }
    cr_assert(found, "no alloca size put the entry's frame at the first call's address");
}
