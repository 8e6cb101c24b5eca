/* Gathering in the large cache (large.h): a request no cached mapping holds is served by
 * growing the largest smaller one and moving other cached pieces into the growth with
 * mremap, so the pages the program filled once stay resident (no page fault, no copy) —
 * asked of the kernel with mincore. The gathered block spans several kernel mappings: it is
 * reused, split, copied by realloc, freed and unmapped like any other; a fork child keeps it;
 * and a thread's gathered blocks survive its exit. */
#include "internal.h"
#include "unit_heap.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)

/* Pages of [p, p+n) resident now (without touching them). */
static size_t resident_pages(const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095, e = ((uintptr_t)p + n + 4095) & ~4095ul;
    size_t pages = (e - a) / 4096, r = 0;
    unsigned char v[8192];
    cr_assert_leq(pages, sizeof v);
    cr_assert_eq(mincore((void *)a, e - a, v), 0, "%s", strerror(errno));
    for (size_t i = 0; i < pages; i++)
        r += v[i] & 1;
    return r;
}

/* Three blocks of separate mappings; the first and the third freed (the second keeps them
 * from touching). Returns the second, live. */
static char *two_cached(hl_heap_t *h, size_t n, char **a, char **c)
{
    *a = hl_heap_malloc(h, n);
    char *b = hl_heap_malloc(h, n);
    *c = hl_heap_malloc(h, n);
    memset(*a, 1, n);
    memset(b, 2, n);
    memset(*c, 3, n);
    hl_heap_free(h, *a);
    hl_heap_free(h, *c);
    cr_assert_eq(h->large.cache_count, 2);
    return b;
}

Test(gather, a_larger_request_takes_the_pages_of_two_cached_mappings)
{
    hl_heap_t *h = unit_heap("");
    char *a, *c;
    char *b = two_cached(h, 8 * MIB, &a, &c);
    uint64_t maps = unit_path_count(h, HL_PATH_LARGE_MMAP);
    size_t n = 15 * MIB;
    char *g = hl_heap_malloc(h, n);
    cr_assert_not_null(g);
    cr_assert_eq(unit_path_count(h, HL_PATH_LARGE_MMAP), maps, "no new mapping");
    cr_assert_eq(unit_path_count(h, HL_PATH_LARGE_REUSE), 1);
    size_t pages = (n + 48 + 4095) / 4096;
    cr_assert_eq(resident_pages(g, n), pages, "every page of the 15 MiB block is resident already");
    cr_assert(g[0] == 1 || g[0] == 3, "the head is one cached mapping's pages");
    cr_assert(g[n - 1] == 1 || g[n - 1] == 3, "the tail is the other's");
    cr_assert_neq(g[0], g[n - 1]);
    cr_assert_eq(h->large.cache_count, 1, "what is left of the second stays cached");
    cr_assert_eq(h->large.cache_bytes, 8 * MIB + 4096 - (n + 4096 - (8 * MIB + 4096)));
    uint32_t origin = *(uint32_t *)(g - 48 + 24);
    cr_assert(origin & HL_LARGE_MIXED, "the gathered block spans several kernel mappings");
    memset(g, 4, n);
    hl_heap_free(h, b);
    hl_heap_free(h, g);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

Test(gather, a_gathered_block_is_reused_split_copied_and_unmapped)
{
    hl_heap_t *h = unit_heap("");
    char *a, *c;
    char *b = two_cached(h, 8 * MIB, &a, &c);
    size_t n = 15 * MIB;
    char *g = hl_heap_malloc(h, n);
    memset(g, 5, n);
    g = hl_heap_realloc(h, g, 20 * MIB); /* several mappings: mremap cannot grow it, copied */
    cr_assert_not_null(g);
    for (size_t i = 0; i < n; i += 4096)
        cr_assert_eq(g[i], 5, "realloc keeps the contents (offset %zu)", i);
    hl_heap_free(h, g);
    char *r = hl_heap_malloc(h, 4 * MIB); /* from a cached range: split */
    cr_assert_not_null(r);
    memset(r, 6, 4 * MIB);
    char *s = hl_heap_malloc(h, 14 * MIB);
    cr_assert_not_null(s);
    memset(s, 7, 14 * MIB);
    cr_assert_eq(r[4 * MIB - 1], 6);
    hl_heap_free(h, r);
    hl_heap_free(h, s);
    hl_heap_free(h, b);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    cr_assert_eq(hl_heap_trim(h, 0), 1);
    cr_assert_eq(h->large.cache_count, 0);
    cr_assert_eq(h->large.cache_bytes, 0);
    hl_heap_destroy(h);
}

Test(gather, a_fork_child_uses_and_frees_gathered_blocks)
{
    hl_heap_t *h = unit_heap("");
    char *a, *c;
    char *b = two_cached(h, 8 * MIB, &a, &c);
    char *g = hl_heap_malloc(h, 15 * MIB);
    memset(g, 8, 15 * MIB);
    pid_t pid = fork();
    if (pid == 0) {
        int ok = g[15 * MIB - 1] == 8;
        hl_heap_free(h, g);
        char *x = hl_heap_malloc(h, 12 * MIB);
        ok = ok && x && (memset(x, 9, 12 * MIB), hl_heap_check(h, 1) == 0);
        hl_heap_free(h, x);
        hl_heap_free(h, b);
        _exit(ok ? 0 : 1);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
    cr_assert_eq(g[0], 8, "the parent's block is its own");
    hl_heap_free(h, g);
    hl_heap_free(h, b);
    hl_heap_destroy(h);
}

static hl_heap_t *g_heap;
static void *worker(void *arg)
{
    char **out = arg;
    char *a, *c;
    char *b = two_cached(g_heap, 6 * MIB, &a, &c);
    out[0] = hl_heap_malloc(g_heap, 11 * MIB); /* gathered; outlives this thread */
    memset(out[0], 10, 11 * MIB);
    out[1] = b;
    return NULL;
}

Test(gather, blocks_gathered_by_an_exited_thread_stay_valid)
{
    g_heap = unit_heap("");
    char *out[2];
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, worker, out), 0);
    cr_assert_eq(pthread_join(t, NULL), 0);
    for (size_t i = 0; i < 11 * MIB; i += 4096)
        cr_assert_eq(out[0][i], 10);
    hl_heap_free(g_heap, out[0]);
    hl_heap_free(g_heap, out[1]);
    char *again = hl_heap_malloc(g_heap, 16 * MIB); /* from the cache, on the main thread */
    cr_assert_not_null(again);
    memset(again, 11, 16 * MIB);
    hl_heap_free(g_heap, again);
    cr_assert_eq(hl_heap_check(g_heap, 1), 0);
    hl_heap_destroy(g_heap);
}

Test(gather, decay_zero_gathers_nothing)
{
    hl_heap_t *h = unit_heap("decay=0");
    char *p = hl_heap_malloc(h, 8 * MIB), *q = hl_heap_malloc(h, 8 * MIB);
    hl_heap_free(h, p);
    hl_heap_free(h, q);
    cr_assert_eq(h->large.cache_count, 0);
    char *g = hl_heap_malloc(h, 15 * MIB);
    /* its header page only (a huge page where THP is "always"): most of it untouched */
    cr_assert_lt(resident_pages(g, 15 * MIB), 1024, "a fresh mapping");
    hl_heap_free(h, g);
    hl_heap_destroy(h);
}
