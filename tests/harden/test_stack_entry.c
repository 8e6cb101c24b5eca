/* tests/harden/test_stack_entry.c — stacks that start at the allocator's entry frame
 * (stack_entry.c, hl_stack_enter in stack.h).
 *
 * An "entry" here is a function that notes its frame as the shim's entry points do; the
 * capture runs a few frames deeper (as hardened mode's does, under heapledger's own frames).
 * The captured stack must begin with the return address into the entry's caller (the
 * program's call site) and go on exactly as a full unwind does from there; a noted frame
 * that is not live (below the capture's stack pointer) is not used; nested entries (a signal
 * handler's allocation inside an operation) each get their own call site; unwind=check
 * compares the entry's walk with libunwind's.
 */
#include "stack.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>

#define DEPTH     12
#define BARRIER() __asm__ volatile("" ::: "memory")

typedef struct {
    uint64_t ips[DEPTH];
    size_t n;
    uint64_t walks;    /* entry walks the capture made */
    uintptr_t site;    /* the entry's return address: the program's call site */
    uint64_t full[64]; /* a full unwind from the capture's frame, without the entry */
    size_t nfull;
} got_t;

/* heapledger's own frames between the entry and the capture (three of them). */
static __attribute__((noinline)) void capture_here(got_t *g)
{
    uint64_t w0 = hl_stack_entry_walks();
    /* skip 1: without an entry both stacks start in capture_here's caller (the two calls'
     * own return addresses differ); the entry's walk starts at its call site regardless */
    g->n = hl_stack_capture_user(g->ips, DEPTH, 1);
    g->walks = hl_stack_entry_walks() - w0;
    uintptr_t saved = hl_stack_enter(NULL); /* the reference: the same walk, without the entry */
    g->nfull = hl_stack_capture_user(g->full, 64, 1);
    hl_stack_leave(saved);
    BARRIER();
}
static __attribute__((noinline)) void inner2(got_t *g)
{
    capture_here(g);
    BARRIER();
}
static __attribute__((noinline)) void inner1(got_t *g)
{
    inner2(g);
    BARRIER();
}

/* The entry point: notes its frame for the length of the operation. */
static __attribute__((noinline)) void entry(got_t *g)
{
    uintptr_t saved = hl_stack_enter(__builtin_frame_address(0));
    g->site = (uintptr_t)__builtin_return_address(0);
    inner1(g);
    hl_stack_leave(saved);
    BARRIER();
}

/* The program's call sites. */
static __attribute__((noinline)) void program_a(got_t *g)
{
    entry(g);
    BARRIER();
}
static __attribute__((noinline)) void program_b(got_t *g)
{
    program_a(g);
    BARRIER();
}

/* The entry's stack is the full unwind's from the call site on. */
static void expect_from_site(const got_t *g, const char *what)
{
    cr_assert_eq(g->walks, 1, "%s: the capture did not walk from the entry's frame", what);
    cr_assert_gt(g->n, 0, "%s: no frames", what);
    cr_assert_eq(g->ips[0], g->site, "%s: frame 0 is %#lx, the program's call site is %#lx", what,
                 (unsigned long)g->ips[0], (unsigned long)g->site);
    size_t k = 0;
    while (k < g->nfull && g->full[k] != g->site)
        k++;
    cr_assert_lt(k, g->nfull, "%s: a full unwind does not pass the call site", what);
    size_t want = g->nfull - k < DEPTH ? g->nfull - k : DEPTH;
    cr_assert_eq(g->n, want, "%s: %zu frames, a full unwind has %zu from the site", what, g->n,
                 want);
    for (size_t i = 0; i < g->n; i++)
        cr_assert_eq(g->ips[i], g->full[k + i], "%s: frame %zu differs", what, i);
    cr_assert_geq(k, 2, "%s: the full unwind passes only %zu frames before the site", what, k);
}

Test(stack_entry, stack_starts_at_the_programs_call_site)
{
    cr_assert_eq(hl_stack_init(), 0);
    got_t g;
    memset(&g, 0, sizeof g);
    program_b(&g);
    expect_from_site(&g, "entry");
    cr_assert_eq(hl_stack_entry_fp, 0, "the entry's frame stays noted after the operation");
}

Test(stack_entry, no_entry_walks_from_the_capture)
{
    cr_assert_eq(hl_stack_init(), 0);
    got_t g;
    memset(&g, 0, sizeof g);
    inner1(&g);
    cr_assert_eq(g.walks, 0);
    cr_assert_eq(g.n, g.nfull < DEPTH ? g.nfull : DEPTH);
    cr_assert_arr_eq(g.ips, g.full, g.n * sizeof(uint64_t));
}

/* A frame noted by a call that has returned (a longjmp out of an interrupted entry leaves
 * one), deeper than the capture: below its stack pointer, not used. */
static __attribute__((noinline)) void note_and_return(void)
{
    hl_stack_entry_fp = (uintptr_t)__builtin_frame_address(0);
    BARRIER();
}
static __attribute__((noinline)) void deep_note(int n)
{
    char pad[1024];
    __asm__ volatile("" : : "r"(pad) : "memory");
    if (n)
        deep_note(n - 1);
    else
        note_and_return();
    BARRIER();
}

Test(stack_entry, a_dead_entry_frame_is_not_used)
{
    cr_assert_eq(hl_stack_init(), 0);
    got_t g;
    memset(&g, 0, sizeof g);
    deep_note(64); /* 64 KiB down: no frame of the capture overwrites it */
    cr_assert_neq(hl_stack_entry_fp, 0);
    inner1(&g);
    hl_stack_entry_fp = 0;
    cr_assert_eq(g.walks, 0, "a frame below the stack pointer was walked from");
    cr_assert_eq(g.n, g.nfull < DEPTH ? g.nfull : DEPTH);
    cr_assert_arr_eq(g.ips, g.full, g.n * sizeof(uint64_t));
}

/* A signal handler that makes its own "allocation" during the outer operation, before the
 * outer capture: the handler's capture does not take the outer call site (its own walk from
 * the handler's entry meets the signal frame: the fast walker defers, the capture unwinds in
 * full), and the outer capture after the handler still starts at its own. */
static got_t in_handler;
static __attribute__((noinline)) void handler_site(int sig)
{
    (void)sig;
    entry(&in_handler);
    BARRIER();
}
static __attribute__((noinline)) void raising_entry(got_t *g)
{
    uintptr_t saved = hl_stack_enter(__builtin_frame_address(0));
    g->site = (uintptr_t)__builtin_return_address(0);
    raise(SIGUSR1);
    inner1(g);
    hl_stack_leave(saved);
    BARRIER();
}
static __attribute__((noinline)) void program_c(got_t *g)
{
    raising_entry(g);
    BARRIER();
}

Test(stack_entry, nested_entries_keep_their_own_call_sites)
{
    cr_assert_eq(hl_stack_init(), 0);
    signal(SIGUSR1, handler_site);
    got_t g;
    memset(&g, 0, sizeof g);
    memset(&in_handler, 0, sizeof in_handler);
    program_c(&g);
    cr_assert_gt(in_handler.n, 0, "the handler's capture has no frames");
    cr_assert_neq(in_handler.ips[0], g.site, "the handler's stack starts at the outer call site");
    cr_assert_eq(in_handler.walks, 0, "walked through the signal frame from the entry");
    expect_from_site(&g, "the interrupted entry");
}

Test(stack_entry, check_mode_agrees_with_libunwind)
{
    cr_assert_eq(hl_stack_init(), 0);
    hl_stack_set_unwind(HL_UNWIND_CHECK); /* a difference aborts: the test would crash */
    got_t g;
    memset(&g, 0, sizeof g);
    for (int i = 0; i < 3; i++)
        program_b(&g);
    hl_stack_set_unwind(HL_UNWIND_FAST);
    expect_from_site(&g, "entry, unwind=check");
}
