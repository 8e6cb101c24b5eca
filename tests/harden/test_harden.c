/* tests/harden/test_harden.c — hardened mode on heap objects (Criterion).
 *
 * Death tests: one per error kind and tier. Each runs the bug twice: first in a forked child
 * whose stderr is captured, to check the report's first line (kind, block size, tier/class)
 * and its stacks; then in the test process itself, which must die of SIGABRT
 * (`.signal = SIGABRT`). Then tests that hardened mode stays silent and exact on correct
 * programs (random workloads with content checks and full heap checks), the option parser,
 * abort_on_error=0, quarantine, rotation and the page map.
 */
#include "../test_rand.h"
#include "fullguard.h" /* HL_DEFAULT_SAMPLE */
#include "harden.h"
#include "harden_test.h"
#include "pagemap.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define TINY  24
#define MID   6000
#define LARGE 300000

typedef void (*bug_fn)(hl_heap_t *h, size_t size);

/* Run bug in a child with stderr captured into buf; returns the wait status. */
static int run_child(bug_fn bug, size_t size, const char *opts, char *buf, size_t len)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], 2);
        hl_heap_t *h = heap_with(opts);
        bug(h, size);
        _exit(0);
    }
    close(fds[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < len && (r = read(fds[0], buf + n, len - 1 - n)) > 0)
        n += (size_t)r;
    buf[n] = 0;
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    return st;
}

/* The death test body: check the child's report, then die here. */
static void death(bug_fn bug, const char *fn, size_t size, const char *opts, const char *kind,
                  const char *block)
{
    static char buf[1 << 16];
    int st = run_child(bug, size, opts, buf, sizeof buf);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "child did not abort; stderr:\n%s", buf);
    char first[256];
    snprintf(first, sizeof first, "heapledger: ERROR: %s on 0x", kind);
    cr_assert(strncmp(buf, first, strlen(first)) == 0, "want '%s…', got:\n%s", first, buf);
    const char *eol = strchr(buf, '\n');
    cr_assert_not_null(eol);
    cr_assert(strstr(buf, block) && strstr(buf, block) < eol, "first line lacks '%s':\n%s", block,
              buf);
    cr_assert(strstr(buf, fn), "stack does not name %s:\n%s", fn, buf);
    if (strcmp(block, "none/") != 0 && !strstr(block, "0-byte"))
        cr_assert(strstr(buf, "allocated by thread T"), "no allocation stack:\n%s", buf);
    if (!strcmp(kind, "double-free"))
        cr_assert(strstr(buf, "freed by thread T"), "no free stack:\n%s", buf);
    /* Frames carry file:line (this file is built with -g; heapledger-symbolize names them). */
    cr_assert(strstr(buf, "tests/harden/test_harden.c:"), "no frame with file:line:\n%s", buf);
    char summary[128];
    snprintf(summary, sizeof summary, "\nSUMMARY: heapledger: %s ", kind);
    cr_assert(strstr(buf, summary), "no '%s' line:\n%s", summary + 1, buf);
    /* Now for real, in this process (report text goes nowhere). */
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    bug(heap_with(opts), size);
}

#define HARD "harden=1"

/* ---- the bugs ---------------------------------------------------------------------------- */

static __attribute__((noinline)) void bug_double_free(hl_heap_t *h, size_t n)
{
    char *p = hl_heap_malloc(h, n);
    hl_heap_free(h, p);
    hl_heap_free(h, p);
}

/* Delayed: the block was reused by another allocation and freed again before the stale free. */
static __attribute__((noinline)) void bug_double_free_reused(hl_heap_t *h, size_t n)
{
    char *p = hl_heap_malloc(h, n);
    hl_heap_free(h, p);
    char *q = hl_heap_malloc(h, n);
    hl_heap_free(h, q);
    hl_heap_free(h, p);
}

static __attribute__((noinline)) void bug_interior_free(hl_heap_t *h, size_t n)
{
    char *p = hl_heap_malloc(h, n);
    hl_heap_free(h, p + 16);
}

static __attribute__((noinline)) void bug_misaligned_free(hl_heap_t *h, size_t n)
{
    char *p = hl_heap_malloc(h, n);
    hl_heap_free(h, p + 1);
}

static __attribute__((noinline)) void bug_stack_free(hl_heap_t *h, size_t n)
{
    char local[64];
    (void)n;
    hl_heap_free(h, local + 16);
}

static char a_global[256] __attribute__((aligned(16)));
static __attribute__((noinline)) void bug_global_free(hl_heap_t *h, size_t n)
{
    (void)n;
    hl_heap_free(h, a_global + 32);
}

static __attribute__((noinline)) void bug_wild_free(hl_heap_t *h, size_t n)
{
    (void)n;
    char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    hl_heap_free(h, m + 64);
}

static __attribute__((noinline)) void bug_unmapped_free(hl_heap_t *h, size_t n)
{
    (void)n;
    hl_heap_free(h, (void *)(uintptr_t)0x100000000010ull);
}

static __attribute__((noinline)) void bug_overflow(hl_heap_t *h, size_t n)
{
    char *p = hl_heap_malloc(h, n);
    memset(p, 'x', n + 1);
    hl_heap_free(h, p);
}

static __attribute__((noinline)) void bug_overflow_guard(hl_heap_t *h, size_t n)
{
    volatile char *p = hl_heap_malloc(h, n);
    for (size_t i = n;; i++) /* runs into the guard page */
        p[i] = 'x';
}

static __attribute__((noinline)) void bug_overflow_check(hl_heap_t *h, size_t n)
{
    char *p = hl_heap_malloc(h, n);
    p[n + 2] = 'x';
    hl_heap_check(h, 0);
}

static __attribute__((noinline)) void bug_underflow(hl_heap_t *h, size_t n)
{
    char *p = hl_heap_malloc(h, n);
    p[-1] = 0;
    hl_heap_free(h, p);
}

static __attribute__((noinline)) void bug_uaf_write(hl_heap_t *h, size_t n)
{
    char *p = hl_heap_malloc(h, n);
    hl_heap_free(h, p);
    p[3] = 'x';
    hl_heap_check(h, 0);
}

static __attribute__((noinline)) void bug_uaf_write_evicted(hl_heap_t *h, size_t n)
{
    char *p = hl_heap_malloc(h, n);
    hl_heap_free(h, p);
    p[5] = 'x';
    for (int i = 0; i < 200; i++) /* push it out of a small quarantine */
        hl_heap_free(h, hl_heap_malloc(h, n));
}

static __attribute__((noinline)) void bug_uaf_read_large(hl_heap_t *h, size_t n)
{
    volatile char *p = hl_heap_malloc(h, n);
    hl_heap_free(h, (void *)p);
    (void)p[100];
}

static __attribute__((noinline)) void bug_realloc_freed(hl_heap_t *h, size_t n)
{
    char *p = hl_heap_malloc(h, n);
    hl_heap_free(h, p);
    hl_heap_realloc(h, p, n * 2);
}

static __attribute__((noinline)) void bug_realloc_interior(hl_heap_t *h, size_t n)
{
    char *p = hl_heap_malloc(h, n);
    hl_heap_realloc(h, p + 32, n * 2);
}

static __attribute__((noinline)) void bug_usable_freed(hl_heap_t *h, size_t n)
{
    char *p = hl_heap_malloc(h, n);
    hl_heap_free(h, p);
    hl_heap_usable_size(h, p);
}

static __attribute__((noinline)) void bug_usable_wild(hl_heap_t *h, size_t n)
{
    (void)n;
    hl_heap_usable_size(h, a_global + 64);
}

static __attribute__((noinline)) void bug_delete_size(hl_heap_t *h, size_t n)
{
    char *p = hl_heap_malloc(h, n);
    hl_harden_check_delete(h, p, n + 8, 0, "operator delete");
    hl_heap_free(h, p);
}

/* Exact lines: each bug below sits at a fixed distance from its enum anchor (keep it so). */
enum { L_ZERO = __LINE__ };
static __attribute__((noinline)) void bug_zero_write(hl_heap_t *h, size_t n)
{
    char *p = hl_heap_malloc(h, n); /* L_ZERO + 3: malloc(0) */
    p[0] = 'x';
    hl_heap_free(h, p); /* L_ZERO + 5 */
}

enum { L_ALDEL = __LINE__ };
static __attribute__((noinline)) void bug_delete_aligned_size(hl_heap_t *h, size_t n)
{
    char *p = hl_heap_memalign(h, 64, n);                    /* L_ALDEL + 3 */
    hl_harden_check_delete(h, p, 65, 64, "operator delete"); /* L_ALDEL + 4 */
    hl_heap_free(h, p);
}

enum { L_DF = __LINE__ };
static __attribute__((noinline)) void bug_double_free_lines(hl_heap_t *h, size_t n)
{
    char *p = hl_heap_malloc(h, n); /* L_DF + 3 */
    hl_heap_free(h, p);             /* L_DF + 4 */
    hl_heap_free(h, p);             /* L_DF + 5 */
}

enum { L_FAR = __LINE__ };
static __attribute__((noinline)) void bug_far_overflow(hl_heap_t *h, size_t n)
{
    char *p = hl_heap_malloc(h, n); /* L_FAR + 3 */
    memset(p, 'x', n + 200);        /* 200 bytes past the end: canary, trailer, next blocks */
    hl_heap_free(h, p);             /* L_FAR + 5 */
}

enum { L_NEAR = __LINE__ };
static __attribute__((noinline)) void bug_one_byte_overflow(hl_heap_t *h, size_t n)
{
    char *p = hl_heap_malloc(h, n); /* L_NEAR + 3 */
    p[n] = 'x';                     /* one byte past the end: into the block's slack */
    hl_heap_free(h, p);             /* L_NEAR + 5 */
}

enum { L_MERGED = __LINE__ };
static __attribute__((noinline)) void bug_double_free_merged(hl_heap_t *h, size_t n)
{
    char *a = hl_heap_malloc(h, n);
    char *p = hl_heap_malloc(h, n); /* L_MERGED + 4 */
    char *c = hl_heap_malloc(h, n); /* keeps p's free span from the arena's free rest */
    hl_heap_free(h, p);             /* L_MERGED + 6 */
    hl_heap_free(h, a);             /* p is now inside a's free block */
    hl_heap_free(h, p);             /* L_MERGED + 8 */
    hl_heap_free(h, c);
}

enum { L_GUARD = __LINE__ };
static __attribute__((noinline)) void bug_guard_write(hl_heap_t *h, size_t n)
{
    volatile char *p = hl_heap_malloc(h, n); /* L_GUARD + 3 */
    for (size_t i = n;; i++)
        p[i] = 'x'; /* L_GUARD + 5: faults in the guard page */
}

/* The report of bug under opts has every want[] line (printf patterns, line numbers filled). */
static void exact_opts(bug_fn bug, size_t size, const char *opts, const char *const *want,
                       size_t nwant)
{
    static char buf[1 << 16];
    int st = run_child(bug, size, opts, buf, sizeof buf);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "child did not abort; stderr:\n%s", buf);
    for (size_t i = 0; i < nwant; i++)
        cr_assert(strstr(buf, want[i]), "report lacks '%s':\n%s", want[i], buf);
}

static void exact(bug_fn bug, size_t size, const char *const *want, size_t nwant)
{
    exact_opts(bug, size, HARD, want, nwant);
}

#define SRC "tests/harden/test_harden.c:"
Test(harden_report, zero_size_write_caught_at_free)
{
    char l_alloc[64], l_free[64], sum[128];
    snprintf(l_alloc, sizeof l_alloc, SRC "%d", L_ZERO + 3);
    snprintf(l_free, sizeof l_free, SRC "%d", L_ZERO + 5);
    snprintf(sum, sizeof sum, "SUMMARY: heapledger: heap-overflow %s in bug_zero_write", l_free);
    const char *want[] = {"heapledger: ERROR: heap-overflow on 0x",
                          "(0-byte block, tiny/",
                          "bad byte at offset 0 (0x",
                          "0 bytes after the 0-byte block",
                          l_alloc,
                          l_free,
                          sum};
    exact(bug_zero_write, 0, want, sizeof want / sizeof want[0]);
}

Test(harden_report, aligned_sized_delete_wrong_size)
{
    char l_alloc[64], l_del[64], sum[128];
    snprintf(l_alloc, sizeof l_alloc, SRC "%d", L_ALDEL + 3);
    snprintf(l_del, sizeof l_del, SRC "%d", L_ALDEL + 4);
    snprintf(sum, sizeof sum,
             "SUMMARY: heapledger: size-mismatch-delete %s in bug_delete_aligned_size", l_del);
    const char *want[] = {"heapledger: ERROR: size-mismatch-delete on 0x",
                          "(100-byte block, ",
                          "operator delete called with size 65 for a block of 100 bytes",
                          l_alloc,
                          l_del,
                          sum};
    exact(bug_delete_aligned_size, 100, want, sizeof want / sizeof want[0]);
}

Test(harden_report, double_free_lines_and_module_offsets)
{
    char l_alloc[64], l_free[64], l_again[64], sum[128];
    snprintf(l_alloc, sizeof l_alloc, SRC "%d (/", L_DF + 3);
    snprintf(l_free, sizeof l_free, SRC "%d (/", L_DF + 4);
    snprintf(l_again, sizeof l_again, SRC "%d (/", L_DF + 5);
    snprintf(sum, sizeof sum,
             "SUMMARY: heapledger: double-free " SRC "%d in bug_double_free_lines\n", L_DF + 5);
    const char *want[] = {
        "in bug_double_free_lines+0x", l_alloc, l_free, l_again, "harden_tests+0x", sum};
    exact(bug_double_free_lines, TINY, want, sizeof want / sizeof want[0]);
}

/* A far overflow destroys the inline trailer: the report still gives the true requested size,
 * the first bad offset and the allocation stack (from the trailer's out-of-line copy). */
static void far_overflow(size_t n, const char *tier)
{
    char l_alloc[64], l_free[64], sum[128], size[64], off[64], after[64];
    snprintf(l_alloc, sizeof l_alloc, SRC "%d", L_FAR + 3);
    snprintf(l_free, sizeof l_free, SRC "%d", L_FAR + 5);
    snprintf(sum, sizeof sum, "SUMMARY: heapledger: heap-overflow %s in bug_far_overflow", l_free);
    snprintf(size, sizeof size, "(%zu-byte block, %s", n, tier);
    snprintf(off, sizeof off, "bad byte at offset %zu (0x", n);
    snprintf(after, sizeof after, "0 bytes after the %zu-byte block", n);
    const char *want[] = {"heapledger: ERROR: heap-overflow on 0x",
                          size,
                          off,
                          after,
                          "canary and block trailer overwritten",
                          "allocated by thread T",
                          l_alloc,
                          l_free,
                          sum};
    exact(bug_far_overflow, n, want, sizeof want / sizeof want[0]);
}

Test(harden_report, far_overflow_tiny_is_exact)
{
    far_overflow(50, "tiny/");
}

Test(harden_report, far_overflow_mid_is_exact)
{
    far_overflow(5000, "mid/tlsf)");
}

/* ---- a fixed arena: the records live outside the arena (sidemeta.c) ----------------------- */

#define ARENA_HARD HARD ",arena=1M"

/* An overflow of n bytes at a block of a hardened fixed arena: the canary's first byte names
 * the offset, the side record the true size and the allocation stack, however far it ran. */
static void arena_overflow(bug_fn bug, int line0, size_t n)
{
    char l_alloc[64], l_free[64], sum[128], size[64], off[64], after[64];
    snprintf(l_alloc, sizeof l_alloc, SRC "%d", line0 + 3);
    snprintf(l_free, sizeof l_free, SRC "%d", line0 + 5);
    snprintf(sum, sizeof sum, "SUMMARY: heapledger: heap-overflow %s in ", l_free);
    snprintf(size, sizeof size, "(%zu-byte block, mid/tlsf)", n);
    snprintf(off, sizeof off, "bad byte at offset %zu (0x", n);
    snprintf(after, sizeof after, "0 bytes after the %zu-byte block", n);
    const char *want[] = {"heapledger: ERROR: heap-overflow on 0x",
                          size,
                          off,
                          after,
                          "canary after the block overwritten (found on free)",
                          "allocated by thread T",
                          l_alloc,
                          l_free,
                          sum};
    exact_opts(bug, n, ARENA_HARD, want, sizeof want / sizeof want[0]);
}

Test(harden_arena, far_overflow_is_exact)
{
    arena_overflow(bug_far_overflow, L_FAR, 5000); /* 200 bytes over the next block's header */
    arena_overflow(bug_far_overflow, L_FAR, 50);
}

Test(harden_arena, one_byte_overflow_into_slack)
{
    arena_overflow(bug_one_byte_overflow, L_NEAR, 100); /* 100 + 8 rounds to 112: 4 B of slack */
}

/* n + 8 a multiple of 16: no rounding slack; the heap asks for one byte more (one granule). */
Test(harden_arena, one_byte_overflow_of_a_block_without_slack)
{
    arena_overflow(bug_one_byte_overflow, L_NEAR, 24);
    arena_overflow(bug_one_byte_overflow, L_NEAR, 1000);
}

/* Released (quarantine=0) and merged into its free neighbour: its record still names it. */
Test(harden_arena, double_free_after_merge_names_the_block)
{
    char l_alloc[64], l_free[64], l_again[64];
    snprintf(l_alloc, sizeof l_alloc, SRC "%d", L_MERGED + 4);
    snprintf(l_free, sizeof l_free, SRC "%d", L_MERGED + 6);
    snprintf(l_again, sizeof l_again, SRC "%d", L_MERGED + 8);
    const char *want[] = {"heapledger: ERROR: double-free on 0x",
                          "(200-byte block, mid/tlsf)",
                          "the block was already freed",
                          "allocated by thread T",
                          "freed by thread T",
                          l_alloc,
                          l_free,
                          l_again};
    exact_opts(bug_double_free_merged, 200, ARENA_HARD ",quarantine=0", want,
               sizeof want / sizeof want[0]);
}

/* The quarantine still delays reuse in an arena (at most 1/32 of it: 32 KiB of 1 MiB). */
Test(harden_arena, quarantine_delays_reuse)
{
    hl_heap_t *h = heap_with(ARENA_HARD);
    char *p = hl_heap_malloc(h, 100);
    hl_heap_free(h, p);
    for (int i = 0; i < 200; i++) { /* 200 x 112 B: within 32 KiB */
        char *q = hl_heap_malloc(h, 100);
        cr_assert_neq(q, p, "reused while in quarantine");
        hl_heap_free(h, q);
    }
    cr_assert_eq((unsigned char)p[0], HL_POISON_BYTE, "freed block is poisoned");
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

/* Random actions in a 256 KiB arena until the first failure (the workbench's wide mix: 85 %
 * 16-512 B, 15 % 1-6 KiB; allocate 1/2, free 1/4, realloc 1/4): live requested bytes then. */
static size_t arena_peak(const char *opts, uint64_t seed)
{
    enum { CAP = 4096 };
    static void *ptr[CAP];
    static size_t len[CAP];
    hl_heap_t *h = heap_with(opts);
    size_t n = 0, live = 0;
    for (;;) {
        uint64_t r = hl_test_rand(&seed), a = r % 4;
        size_t sz = (r >> 8) % 100 < 85 ? 16 + (r >> 16) % 497 : 1024 + (r >> 16) % 5121;
        if (n == 0 || a < 2) {
            void *p = hl_heap_malloc(h, sz);
            if (!p || n == CAP) break;
            ptr[n] = p;
            len[n++] = sz;
            live += sz;
        } else {
            size_t i = (r >> 40) % n;
            if (a == 2) {
                hl_heap_free(h, ptr[i]);
                live -= len[i];
                ptr[i] = ptr[--n];
                len[i] = len[n];
            } else {
                void *p = hl_heap_realloc(h, ptr[i], sz);
                if (!p) break;
                live = live - len[i] + sz;
                ptr[i] = p;
                len[i] = sz;
            }
        }
    }
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
    return live;
}

/* Peak utilisation of a hardened arena within 3 points of the plain one (5 seeds); with
 * rotation the quarantine is the only delay of a block that sat in it (no second one in the
 * inactive store), so rotate=1,harden=1 packs exactly as harden=1. */
Test(harden_arena, peak_utilisation_within_3_points)
{
    double base = 0, hard = 0;
    for (uint64_t k = 1; k <= 5; k++) {
        base += arena_peak("arena=256K", k * 0x9e3779b97f4a7c15ull);
        size_t hk = arena_peak(HARD ",arena=256K", k * 0x9e3779b97f4a7c15ull);
        size_t rk = arena_peak(HARD ",rotate=1,arena=256K", k * 0x9e3779b97f4a7c15ull);
        cr_assert_eq(rk, hk, "seed %d: rotate=1,harden=1 %zu B live, harden=1 %zu B", (int)k, rk,
                     hk);
        hard += hk;
    }
    double pb = 100 * base / 5 / (256 << 10), ph = 100 * hard / 5 / (256 << 10);
    cr_assert_geq(ph, pb - 3, "harden=1 %.1f %% against %.1f %% unhardened", ph, pb);
}

/* Blocks that fill an arena: count, and whether a hardening record ("LIVE") is in the arena. */
static size_t fill_arena(const char *opts, size_t n, size_t *live_words)
{
    hl_heap_t *h = heap_with(opts);
    size_t count = 0;
    char *p;
    while ((p = hl_heap_malloc(h, n)) != NULL) {
        memset(p, 'u', n);
        count++;
    }
    *live_words = 0;
    const uint32_t *w = h->arena_base;
    for (size_t i = 0; i < h->arena_size / 4; i++)
        *live_words += w[i] == HL_META_LIVE;
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
    return count;
}

/* Peak utilisation: a hardened arena holds as many blocks as a plain one when each has slack
 * (the canary is the slack); without slack each block costs one granule more. */
Test(harden_arena, no_hardening_metadata_in_the_arena)
{
    size_t lw_plain, lw_hard;
    size_t plain = fill_arena("arena=256K", 100, &lw_plain);
    size_t hard = fill_arena(HARD ",arena=256K", 100, &lw_hard);
    cr_assert_gt(plain, 2000);
    cr_assert_eq(hard, plain, "hardened arena holds %zu blocks of 100 B, plain %zu", hard, plain);
    cr_assert_eq(lw_hard, 0, "%zu hardening records inside the arena", lw_hard);
    plain = fill_arena("arena=256K", 24, &lw_plain); /* 32-byte blocks, 0 B of slack */
    hard = fill_arena(HARD ",arena=256K", 24, &lw_hard);
    cr_assert(hard * 48 <= plain * 32 + 48 && hard * 48 + 48 >= plain * 32,
              "0-slack blocks (32 B plain, 48 B hardened): %zu hardened, %zu plain", hard, plain);
    cr_assert_eq(lw_hard, 0);
    /* tiny=1 keeps inline trailers (slab slots have no side entry) */
    fill_arena(HARD ",arena=256K,tiny=1", 24, &lw_hard);
    cr_assert_gt(lw_hard, 0, "tiny=1 in an arena: inline trailers expected");
}

/* A fault: the stack is unwound from the signal context, so frame #0 is the function doing
 * the access (no signal trampoline), looked up at the faulting instruction (not at ip - 1):
 * it gives the line of the write. */
Test(harden_report, guard_fault_names_the_faulting_line)
{
    char l_alloc[64], l_write[64], sum[128];
    snprintf(l_alloc, sizeof l_alloc, SRC "%d", L_GUARD + 3);
    snprintf(l_write, sizeof l_write, SRC "%d", L_GUARD + 5);
    snprintf(sum, sizeof sum, "SUMMARY: heapledger: heap-overflow %s in bug_guard_write\n",
             l_write);
    const char *want[] = {"(300000-byte block, large/mmap)",
                          "WRITE faulted",
                          "    #0 0x",
                          " in bug_guard_write+0x",
                          l_alloc,
                          l_write,
                          sum};
    exact(bug_guard_write, LARGE, want, sizeof want / sizeof want[0]);
}

/* No helper (missing, or HEAPLEDGER_SYMBOLIZER=0): the module's own symbols name the frames,
 * module+offset stays, the summary names the bug's function. */
Test(harden_report, without_helper_falls_back_to_symbols)
{
    setenv("HEAPLEDGER_SYMBOLIZER", "/nonexistent/heapledger-symbolize", 1);
    const char *want[] = {"in bug_double_free_lines+0x", "harden_tests+0x",
                          "SUMMARY: heapledger: double-free (/", ") in bug_double_free_lines\n"};
    exact(bug_double_free_lines, TINY, want, sizeof want / sizeof want[0]);
}

/* An exact aligned delete and a size-0 sized delete of a new(0) block are fine. */
Test(harden_report, aligned_sized_delete_exact_size_is_silent)
{
    hl_heap_t *h = heap_with(HARD ",abort_on_error=0");
    size_t before = hl_harden_errors();
    char *p = hl_heap_memalign(h, 64, 100);
    hl_harden_check_delete(h, p, 100, 64, "operator delete");
    hl_heap_free(h, p);
    p = hl_heap_malloc(h, 1);
    hl_harden_check_delete(h, p, 0, 0, "operator delete");
    hl_heap_free(h, p);
    cr_assert_eq(hl_harden_errors(), before);
}

/* ---- death tests: kind x tier -------------------------------------------------------------- */

#define DEATH(name, bug, size, opts, kind, block)                                                  \
    Test(harden_death, name, .signal = SIGABRT)                                                    \
    {                                                                                              \
        death(bug, #bug, size, opts, kind, block);                                                 \
    }

DEATH(double_free_tiny, bug_double_free, TINY, HARD, "double-free", "(24-byte block, tiny/")
DEATH(double_free_mid, bug_double_free, MID, HARD, "double-free", "(6000-byte block, mid/tlsf)")
DEATH(double_free_large, bug_double_free, LARGE, HARD, "double-free",
      "(300000-byte block, large/mmap)")
DEATH(double_free_tiny_noquarantine, bug_double_free, TINY, HARD ",quarantine=0", "double-free",
      "(24-byte block, tiny/")
DEATH(double_free_mid_noquarantine, bug_double_free, MID, HARD ",quarantine=0", "double-free",
      "-byte block, mid/tlsf)")
DEATH(double_free_reused_tiny, bug_double_free_reused, TINY, HARD ",quarantine=0", "double-free",
      "(24-byte block, tiny/")
DEATH(double_free_reused_mid, bug_double_free_reused, MID, HARD ",quarantine=0", "double-free",
      "-byte block, mid/tlsf)")
DEATH(double_free_arena_tiny, bug_double_free, TINY, HARD ",arena=1M,tiny=1", "double-free",
      "(24-byte block, tiny/")
DEATH(double_free_arena_mid, bug_double_free, MID, HARD ",arena=1M", "double-free",
      "(6000-byte block, mid/tlsf)")

DEATH(invalid_free_interior_tiny, bug_interior_free, TINY, HARD, "invalid-free",
      "(24-byte block, tiny/")
DEATH(invalid_free_interior_mid, bug_interior_free, MID, HARD, "invalid-free",
      "(6000-byte block, mid/tlsf)")
DEATH(invalid_free_interior_large, bug_interior_free, LARGE, HARD, "invalid-free",
      "(300000-byte block, large/mmap)")
DEATH(invalid_free_interior_arena, bug_interior_free, MID, HARD ",arena=1M", "invalid-free",
      "(6000-byte block, mid/tlsf)")
DEATH(invalid_free_stack, bug_stack_free, 0, HARD, "invalid-free", "(0-byte block, none/stack)")
DEATH(invalid_free_global, bug_global_free, 0, HARD, "invalid-free", "(0-byte block, none/global)")
DEATH(invalid_free_wild, bug_wild_free, 0, HARD, "invalid-free", "(0-byte block, none/wild)")

DEATH(invalid_free_unmapped, bug_unmapped_free, 0, HARD, "invalid-free",
      "(0-byte block, none/wild)")

DEATH(misaligned_free_tiny, bug_misaligned_free, TINY, HARD, "misaligned-free",
      "(24-byte block, tiny/")
DEATH(misaligned_free_mid, bug_misaligned_free, MID, HARD, "misaligned-free",
      "(6000-byte block, mid/tlsf)")
DEATH(misaligned_free_large, bug_misaligned_free, LARGE, HARD, "misaligned-free",
      "(300000-byte block, large/mmap)")

DEATH(heap_overflow_tiny, bug_overflow, TINY, HARD, "heap-overflow", "(24-byte block, tiny/")
DEATH(heap_overflow_mid, bug_overflow, MID, HARD, "heap-overflow", "(6000-byte block, mid/tlsf)")
DEATH(heap_overflow_large, bug_overflow, LARGE, HARD, "heap-overflow",
      "(300000-byte block, large/mmap)")
DEATH(heap_overflow_large_guard, bug_overflow_guard, LARGE, HARD, "heap-overflow",
      "(300000-byte block, large/mmap)")
DEATH(heap_overflow_check_tiny, bug_overflow_check, TINY, HARD, "heap-overflow",
      "(24-byte block, tiny/")
DEATH(heap_overflow_check_mid, bug_overflow_check, MID, HARD, "heap-overflow",
      "(6000-byte block, mid/tlsf)")
DEATH(heap_overflow_arena_tiny, bug_overflow, TINY, HARD ",arena=1M,tiny=1", "heap-overflow",
      "(24-byte block, tiny/")
DEATH(heap_overflow_arena_mid, bug_overflow, MID, ARENA_HARD, "heap-overflow",
      "(6000-byte block, mid/tlsf)")
DEATH(heap_overflow_check_arena, bug_overflow_check, TINY, ARENA_HARD, "heap-overflow",
      "(24-byte block, mid/tlsf)")
DEATH(heap_underflow_arena, bug_underflow, TINY, ARENA_HARD, "heap-underflow",
      "(24-byte block, mid/tlsf)")
DEATH(use_after_free_arena, bug_uaf_write, TINY, ARENA_HARD, "use-after-free",
      "(24-byte block, mid/tlsf)")
DEATH(use_after_free_arena_evicted, bug_uaf_write_evicted, MID, ARENA_HARD ",quarantine=16K",
      "use-after-free", "(6000-byte block, mid/tlsf)")
DEATH(double_free_reused_arena, bug_double_free_reused, TINY, ARENA_HARD ",quarantine=0",
      "double-free", "(24-byte block, mid/tlsf)")
DEATH(invalid_realloc_arena, bug_realloc_freed, MID, ARENA_HARD, "invalid-realloc",
      "(6000-byte block, mid/tlsf)")
DEATH(size_mismatch_delete_arena, bug_delete_size, TINY, ARENA_HARD, "size-mismatch-delete",
      "(24-byte block, mid/tlsf)")

DEATH(heap_underflow_tiny, bug_underflow, TINY, HARD, "heap-underflow", "(24-byte block, tiny/")
DEATH(heap_underflow_mid, bug_underflow, MID, HARD, "heap-underflow", "(6000-byte block, mid/tlsf)")
DEATH(heap_underflow_large, bug_underflow, LARGE, HARD, "heap-underflow",
      "(300000-byte block, large/mmap)")

DEATH(use_after_free_tiny, bug_uaf_write, TINY, HARD, "use-after-free", "(24-byte block, tiny/")
DEATH(use_after_free_mid, bug_uaf_write, MID, HARD, "use-after-free", "(6000-byte block, mid/tlsf)")
DEATH(use_after_free_tiny_evicted, bug_uaf_write_evicted, TINY, HARD ",quarantine=1K",
      "use-after-free", "(24-byte block, tiny/")
DEATH(use_after_free_mid_evicted, bug_uaf_write_evicted, MID, HARD ",quarantine=16K",
      "use-after-free", "(6000-byte block, mid/tlsf)")
DEATH(use_after_free_large, bug_uaf_read_large, LARGE, HARD, "use-after-free",
      "(300000-byte block, large/mmap)")

DEATH(heap_overflow_guard_all, bug_overflow_guard, TINY, HARD ",guard=all", "heap-overflow",
      "(24-byte block, guarded/page)")
DEATH(use_after_free_guard_all, bug_uaf_read_large, TINY, HARD ",guard=all", "use-after-free",
      "(24-byte block, guarded/page)")
DEATH(use_after_free_guard_sample, bug_uaf_read_large, TINY, HARD ",guard=sample:1",
      "use-after-free", "(24-byte block, guarded/page)")

DEATH(invalid_realloc_tiny, bug_realloc_freed, TINY, HARD, "invalid-realloc",
      "(24-byte block, tiny/")
DEATH(invalid_realloc_mid, bug_realloc_freed, MID, HARD, "invalid-realloc",
      "(6000-byte block, mid/tlsf)")
DEATH(invalid_realloc_large, bug_realloc_freed, LARGE, HARD, "invalid-realloc",
      "(300000-byte block, large/mmap)")
DEATH(invalid_realloc_interior, bug_realloc_interior, MID, HARD, "invalid-realloc",
      "(6000-byte block, mid/tlsf)")

DEATH(invalid_usable_size_tiny, bug_usable_freed, TINY, HARD, "invalid-usable-size",
      "(24-byte block, tiny/")
DEATH(invalid_usable_size_mid, bug_usable_freed, MID, HARD, "invalid-usable-size",
      "(6000-byte block, mid/tlsf)")
DEATH(invalid_usable_size_large, bug_usable_freed, LARGE, HARD, "invalid-usable-size",
      "(300000-byte block, large/mmap)")
DEATH(invalid_usable_size_global, bug_usable_wild, 0, HARD, "invalid-usable-size",
      "(0-byte block, none/global)")

DEATH(size_mismatch_delete_tiny, bug_delete_size, TINY, HARD, "size-mismatch-delete",
      "(24-byte block, tiny/")
DEATH(size_mismatch_delete_mid, bug_delete_size, MID, HARD, "size-mismatch-delete",
      "(6000-byte block, mid/tlsf)")
DEATH(size_mismatch_delete_large, bug_delete_size, LARGE, HARD, "size-mismatch-delete",
      "(300000-byte block, large/mmap)")

/* ---- correct programs stay silent ------------------------------------------------------------ */

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
    return hl_test_rand(&rng);
}

static size_t rand_size(void)
{
    uint64_t r = next_rand();
    switch (r % 10) {
    case 0:
        return r >> 40 & 0x7ffff; /* up to 512K: large */
    case 1:
    case 2:
        return 1024 + (r >> 32 & 0x7fff); /* mid */
    default:
        return r >> 32 & 1023; /* tiny */
    }
}

static void workload(const char *opts, int steps)
{
    hl_heap_t *h = heap_with(opts);
    enum { SLOTS = 512 };
    static char *ptr[SLOTS];
    static size_t len[SLOTS];
    memset(ptr, 0, sizeof ptr);
    size_t before = hl_harden_errors();
    for (int i = 0; i < steps; i++) {
        unsigned s = (unsigned)(next_rand() % SLOTS);
        if (ptr[s]) {
            for (size_t k = 0; k < len[s]; k += 97)
                cr_assert_eq((unsigned char)ptr[s][k], (unsigned char)(s + k), "content");
            if (next_rand() & 1) {
                size_t n = rand_size();
                char *q = hl_heap_realloc(h, ptr[s], n);
                cr_assert(q || !n);
                size_t keep = n < len[s] ? n : len[s];
                for (size_t k = 0; k < keep; k += 97)
                    cr_assert_eq((unsigned char)q[k], (unsigned char)(s + k), "realloc content");
                ptr[s] = q;
                len[s] = n;
                for (size_t k = 0; k < n; k++)
                    q[k] = (char)(s + k);
                if (!n) ptr[s] = NULL;
            } else {
                hl_heap_free(h, ptr[s]);
                ptr[s] = NULL;
            }
        } else {
            size_t n = rand_size();
            char *q = (next_rand() % 8) == 0 ? hl_heap_memalign(h, 64u << (next_rand() % 8), n)
                                             : hl_heap_malloc(h, n);
            cr_assert_not_null(q);
            if (strstr(opts, "harden=1"))
                cr_assert_eq(hl_heap_usable_size(h, q), n, "usable size is the requested size");
            for (size_t k = 0; k < n; k++)
                q[k] = (char)(s + k);
            ptr[s] = q;
            len[s] = n;
        }
        if (i % 5000 == 0) cr_assert_eq(hl_heap_check(h, 1), 0, "heap check at step %d", i);
    }
    cr_assert_eq(hl_heap_check(h, 1), 0);
    for (unsigned s = 0; s < SLOTS; s++)
        hl_heap_free(h, ptr[s]);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    cr_assert_eq(hl_harden_errors(), before, "no report on a correct program");
    hl_heap_destroy(h);
}

Test(harden, silent_on_correct_workload)
{
    workload(HARD, 30000);
}
Test(harden, silent_with_rotation)
{
    workload(HARD ",rotate=1", 30000);
}
Test(harden, silent_without_quarantine_with_zeroing)
{
    workload(HARD ",quarantine=0,zero_on_free=1", 30000);
}
Test(harden, silent_in_fixed_arena)
{
    workload(HARD ",arena=32M", 20000);
}
Test(harden, silent_with_sampled_guard_pages)
{
    workload(HARD ",guard=sample:7", 20000);
}
Test(harden, rotation_alone_is_consistent)
{
    workload("rotate=1", 30000);
}

Test(harden, options_parse)
{
    hl_options_t o;
    char err[128];
    hl_options_default(&o);
    cr_assert_eq(o.harden, 0);
    cr_assert_eq(o.abort_on_error, 1);
    cr_assert_eq(hl_options_parse(&o, "harden=1,poison=0", err, sizeof err), 0);
    cr_assert(o.harden && o.check_free && o.canary && !o.poison && o.guard == 3 &&
              o.guard_sample == HL_DEFAULT_SAMPLE); /* large blocks, and sampled guarded runs */
    cr_assert_eq(o.quarantine, HL_QUARANTINE_AUTO);
    cr_assert_eq(o.rotate, 0, "harden=1 does not rotate");
    hl_options_default(&o);
    cr_assert_eq(hl_options_parse(&o, "rotate=1,harden=1", err, sizeof err), 0);
    cr_assert(o.rotate && o.harden);
    cr_assert_eq(
        hl_options_parse(&o, "guard=sample:8,quarantine=64K,abort_on_error=0", err, sizeof err), 0);
    cr_assert(o.guard == 3 && o.guard_sample == 8 && o.quarantine == 65536 && !o.abort_on_error);
    cr_assert_eq(hl_options_parse(&o, "guard=all", err, sizeof err), 0);
    cr_assert_eq(o.guard, 2);
    cr_assert_eq(hl_options_parse(&o, "guard=sometimes", err, sizeof err), -1);
    cr_assert(strstr(err, "guard=sometimes"), "%s", err);
    cr_assert_eq(hl_options_parse(&o, "harden=full", err, sizeof err), 0);
    cr_assert(o.harden && o.check_free && o.guard == 2); /* harden=full: guard=all */
    cr_assert_eq(hl_options_parse(&o, "harden=3", err, sizeof err), -1);
    cr_assert_eq(hl_options_parse(&o, "harden=fulll", err, sizeof err), -1);
    cr_assert_str_eq(err, "bad value in option 'harden=fulll' (harden takes 0, 1 or full)");
    cr_assert_eq(hl_options_parse(&o, "rotate=yes", err, sizeof err), -1);
    hl_options_default(&o);
    cr_assert_eq(hl_options_parse(&o, "harden=1,harden=0", err, sizeof err), 0);
    cr_assert(!o.harden && !o.canary && !o.quarantine && !o.guard);
}

Test(harden, continue_counts_errors)
{
    hl_heap_t *h = heap_with(HARD ",abort_on_error=0");
    int null = open("/dev/null", O_WRONLY), saved = dup(2);
    dup2(null, 2);
    size_t before = hl_harden_errors();
    char *p = hl_heap_malloc(h, 40);
    hl_heap_free(h, p);
    hl_heap_free(h, p);        /* double-free: ignored */
    hl_heap_free(h, a_global); /* invalid-free: ignored */
    cr_assert_null(hl_heap_realloc(h, p, 10));
    cr_assert_eq(hl_heap_usable_size(h, p), 0);
    char *q = hl_heap_malloc(h, 10);
    q[10] = 1;
    hl_heap_free(h, q); /* overflow reported, block still freed */
    dup2(saved, 2);
    cr_assert_eq(hl_harden_errors() - before, 5);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

Test(harden, quarantine_delays_reuse)
{
    hl_heap_t *h = heap_with(HARD ",quarantine=64K");
    char *p = hl_heap_malloc(h, 100);
    hl_heap_free(h, p);
    for (int i = 0; i < 50; i++) {
        char *q = hl_heap_malloc(h, 100);
        cr_assert_neq(q, p, "reused while in quarantine");
        hl_heap_free(h, q);
    }
    cr_assert_eq((unsigned char)p[0], HL_POISON_BYTE, "freed block is poisoned");
    hl_heap_destroy(h);
}

Test(harden, rotation_delays_mid_reuse)
{
    hl_heap_t *h = heap_with("rotate=1,tiny=0");
    char *a = hl_heap_malloc(h, 5000); /* used neighbours: p cannot merge on free */
    char *p = hl_heap_malloc(h, 3000);
    char *b = hl_heap_malloc(h, 5000);
    hl_heap_free(h, p);
    char *q = hl_heap_malloc(h, 3000);
    cr_assert_neq(q, p, "with rotation a freed block is not reused at once");
    hl_heap_free(h, q);
    hl_heap_free(h, a);
    hl_heap_free(h, b);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

Test(harden, pagemap_kinds)
{
    char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_eq(hl_pagemap_get(m), HL_PAGE_NONE);
    hl_pagemap_register(m, 1 << 20, "tlsf_pool");
    cr_assert_eq(hl_pagemap_get(m), HL_PAGE_POOL_HEAD);
    cr_assert_eq(hl_pagemap_get(m + 5000), HL_PAGE_POOL);
    cr_assert_eq(hl_pagemap_get(m + (1 << 20) - 1), HL_PAGE_POOL);
    cr_assert_eq(hl_pagemap_get(m + (1 << 20)), HL_PAGE_NONE);
    cr_assert_eq(hl_pagemap_head(m + 700000, HL_PAGE_POOL_HEAD, HL_PAGE_POOL, 1000), m);
    hl_pagemap_unregister(m, 1 << 20);
    cr_assert_eq(hl_pagemap_get(m + 5000), HL_PAGE_NONE);
    cr_assert_eq(hl_pagemap_get((void *)0x10), HL_PAGE_NONE);
    cr_assert_eq(hl_pagemap_get((void *)~(uintptr_t)0), HL_PAGE_NONE);
    munmap(m, 1 << 20);
}

/* A slab handed to other classes and back 256 times has the same 8-bit generation again: a
 * trailer left by the first life must not pass for this slot's (the cross-thread stress once
 * reported "use-after-free … bad byte at offset 8 … found on reuse" for a 3574-byte tiny/27
 * block nobody had touched: the bytes were another class's live data in between). */
Test(harden, slab_generation_wrap_is_no_use_after_free)
{
    hl_heap_t *h = heap_with(HARD ",quarantine=0,abort_on_error=0,stacks=0,trim_keep=64");
    size_t before = hl_harden_errors();
    char *a = hl_heap_malloc(h, 3574); /* class 27: slot 0 of a fresh slab */
    cr_assert_not_null(a);
    memset(a, 0x11, 3574);
    hl_heap_free(h, a); /* poisoned, released at once (no quarantine); the slab goes back */
    /* 255 lives of the same slab for another class: its slot 0 overlaps a's first bytes and
     * is written; a's trailer, near the slab's end, is never touched. */
    for (int life = 1; life < 256; life++) {
        char *b = hl_heap_malloc(h, 40);
        cr_assert_not_null(b);
        memset(b, 0x22, 40);
        hl_heap_free(h, b);
    }
    /* The 257th life is class 27 again, with a's generation: slot 0 is a's. */
    char *c = hl_heap_malloc(h, 3574);
    cr_assert_eq(c, a, "the test needs the same slot again");
    cr_assert_eq(hl_harden_errors(), before, "false use-after-free on a slot nobody touched");
    hl_heap_free(h, c);
    cr_assert_eq(hl_harden_errors(), before, "no report on a correct program");
    hl_heap_destroy(h);
}
