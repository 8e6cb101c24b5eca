/* Memory kept for reuse (decay.h): the large cache's policy (big blocks reused, split,
 * grown, bounded) and the empty TLSF pools (reused by another arena), both given back to the OS
 * after the decay time once the allocator is active, or by a trim; decay=0 keeps nothing; fixed
 * arenas keep everything in the arena. Mapped or unmapped is asked of the kernel (mincore). */
#include "internal.h"
#include "unit_heap.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* Is the page holding p mapped? */
static int mapped(const void *p)
{
    unsigned char v;
    void *page = (void *)((uintptr_t)p & ~(uintptr_t)4095);
    return mincore(page, 4096, &v) == 0;
}

static size_t npools(const hl_arena_t *a)
{
    size_t n = 0;
    for (const hl_tlsf_pool_t *p = a->tlsf.pools; p; p = p->next)
        n++;
    return n;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Allocator activity: mid blocks, every operation on a slow path (where decay ticks). */
static void activity(hl_heap_t *h, int ops)
{
    for (int i = 0; i < ops; i++)
        hl_heap_free(h, hl_heap_malloc(h, 8192));
}

Test(decay, a_big_block_is_reused)
{
    hl_heap_t *h = unit_heap("");
    char *p = hl_heap_malloc(h, 20 << 20);
    memset(p, 1, 20 << 20);
    hl_heap_free(h, p);
    cr_assert(mapped(p), "the freed 20 MiB mapping is kept");
    char *q = hl_heap_malloc(h, 20 << 20);
    cr_assert_eq(q, p, "the same mapping comes back");
    cr_assert_eq(q[(20 << 20) - 1], 1, "with its pages (no new mapping)");
    cr_assert_eq(unit_path_count(h, HL_PATH_LARGE_MMAP), 1);
    cr_assert_eq(unit_path_count(h, HL_PATH_LARGE_REUSE), 1);
    hl_heap_free(h, q);
    hl_heap_destroy(h);
}

Test(decay, a_smaller_request_splits_and_a_larger_one_grows)
{
    hl_heap_t *h = unit_heap("");
    char *p = hl_heap_malloc(h, 20 << 20);
    hl_heap_free(h, p);
    char *a = hl_heap_malloc(h, 5 << 20); /* head of the cached mapping */
    cr_assert_eq(a, p);
    cr_assert_lt(hl_heap_usable_size(h, a), 6 << 20, "split, not handed out whole");
    cr_assert_eq(h->large.cache_count, 1, "the tail stays cached");
    char *b = hl_heap_malloc(h, 12 << 20); /* from the tail */
    cr_assert_eq(unit_path_count(h, HL_PATH_LARGE_MMAP), 1, "both from the one mapping");
    memset(a, 2, 5 << 20);
    memset(b, 3, 12 << 20);
    hl_heap_free(h, a);
    char *c = hl_heap_malloc(h, 9 << 20); /* larger than the 5 MiB cached: grown */
    cr_assert_not_null(c);
    cr_assert_eq(c[0], 2, "the grown mapping keeps its pages");
    memset(c, 4, 9 << 20);
    cr_assert_eq(unit_path_count(h, HL_PATH_LARGE_MMAP), 1);
    cr_assert_eq(unit_path_count(h, HL_PATH_LARGE_REUSE), 3);
    hl_heap_free(h, b);
    hl_heap_free(h, c);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

Test(decay, the_cache_stays_within_its_budget)
{
    hl_heap_t *h = unit_heap("");
    enum { N = 12 };
    char *p[N];
    for (int i = 0; i < N; i++)
        p[i] = hl_heap_malloc(h, 10 << 20);
    for (int i = 0; i < N; i++)
        hl_heap_free(h, p[i]);
    cr_assert_leq(h->large.cache_bytes, HL_LARGE_CACHE_BYTES);
    cr_assert_leq(h->large.cache_bytes, (size_t)N * (10 << 20) + (size_t)N * 4096);
    cr_assert_gt(h->large.cache_bytes, 0);
    hl_heap_destroy(h);
}

Test(decay, cached_memory_goes_back_after_the_decay_time)
{
    hl_heap_t *h = unit_heap("decay=250");
    char *p = hl_heap_malloc(h, 8 << 20);
    memset(p, 1, 8 << 20);
    hl_heap_free(h, p);
    activity(h, 5000);
    cr_assert(mapped(p), "kept while the decay time has not passed");
    sleep_ms(300);
    activity(h, 5000);
    cr_assert_not(mapped(p), "unmapped by a decay pass");
    cr_assert_eq(h->large.cache_count, 0);
    hl_heap_destroy(h);
}

Test(decay, a_trim_empties_the_cache)
{
    hl_heap_t *h = unit_heap("");
    char *p = hl_heap_malloc(h, 8 << 20);
    hl_heap_free(h, p);
    cr_assert(mapped(p));
    cr_assert_eq(hl_heap_trim(h, 0), 1);
    cr_assert_not(mapped(p));
    hl_heap_destroy(h);
}

/* Fill the thread's arena past its first pool (pools of 1, 2, 4, 8 MiB), free it all. */
static void fill_and_free(hl_heap_t *h, void **p, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = hl_heap_malloc(h, 200 << 10);
    for (int i = 0; i < n; i++)
        hl_heap_free(h, p[i]);
}

Test(decay, decay_zero_keeps_nothing)
{
    hl_heap_t *h = unit_heap("decay=0,arenas=2");
    char *p = hl_heap_malloc(h, 8 << 20);
    hl_heap_free(h, p);
    cr_assert_not(mapped(p), "unmapped at once");
    cr_assert_eq(unit_path_count(h, HL_PATH_LARGE_MUNMAP), 1);
    void *q[40];
    fill_and_free(h, q, 40);
    cr_assert_eq(npools(&h->mid.arenas[0]) + npools(&h->mid.arenas[1]), 1,
                 "emptied pools are unmapped at once but the last");
    hl_heap_destroy(h);
}

Test(decay, an_empty_pool_is_reused_by_the_next_arena)
{
    hl_heap_t *h = unit_heap("arenas=2");
    void *p[40];
    fill_and_free(h, p, 40); /* 8 MiB: pools of 1, 2, 4 and 8 MiB, all empty now */
    hl_tls_t *t = hl_tls_of(h);
    hl_arena_t *a = &h->mid.arenas[t->arena % 2], *b = &h->mid.arenas[(t->arena + 1) % 2];
    size_t before = a->tlsf.pool_bytes;
    cr_assert_eq(npools(a), 4, "emptied pools are kept");
    cr_assert_eq(npools(b), 0);
    hl_heap_info_t info;
    hl_heap_info(h, &info);
    cr_assert_geq(info.held, before, "kept pools count as held memory");
    t->arena++; /* the next thread's arena grows: it takes the smallest empty pool */
    void *q = hl_heap_malloc(h, 200 << 10);
    cr_assert_eq(hl_tlsf_owner(q), (unsigned)(b - h->mid.arenas));
    cr_assert_eq(npools(b), 1);
    cr_assert_eq(b->tlsf.pool_bytes, HL_POOL_SIZE_MIN);
    cr_assert_eq(a->tlsf.pool_bytes, before - HL_POOL_SIZE_MIN, "moved, not mapped");
    hl_heap_free(h, q);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

Test(decay, empty_pools_go_back_after_the_decay_time_or_a_trim)
{
    hl_heap_t *h = unit_heap("arenas=1,decay=250");
    hl_arena_t *a = &h->mid.arenas[0];
    void *p[40];
    fill_and_free(h, p, 40);
    cr_assert_eq(npools(a), 4);
    activity(h, 5000);
    cr_assert_geq(npools(a), 4, "kept while the decay time has not passed");
    sleep_ms(300);
    activity(h, 5000);
    cr_assert_eq(npools(a), 1, "unmapped by a decay pass (the activity needs one pool)");
    cr_assert_eq(a->tlsf.pool_bytes, HL_POOL_SIZE_MIN);
    fill_and_free(h, p, 40);
    cr_assert_geq(npools(a), 2);
    cr_assert_eq(hl_heap_trim(h, 0), 1);
    cr_assert_eq(npools(a), 0, "a trim unmaps every empty pool");
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

/* Resident pages of [p, p + len), KiB; 0 once the range is unmapped. */
static size_t resident_kib(const void *p, size_t len)
{
    unsigned char v[(8 << 20) / 4096];
    size_t pages = len / 4096, n = 0;
    cr_assert_leq(pages, sizeof v);
    if (mincore((void *)p, len, v) != 0) return 0;
    for (size_t i = 0; i < pages; i++)
        n += v[i] & 1;
    return n * 4;
}

/* After a burst, an arena whose working set mostly fits its smallest pool: the emptied pools
 * are parked (the smallest serves), the working set gathers in the pool that serves, and a
 * parked pool taken back for a moment when the working set overflows gives its pages back at
 * a decay pass instead of keeping them resident for ever (it is parked again within the decay
 * time each time, so it never expires; mid.c, pool_emptied and purge_parked). */
Test(decay, a_pool_the_arena_only_borrows_gives_its_pages_back)
{
    hl_heap_t *h = unit_heap("arenas=1,decay=200");
    hl_arena_t *a = &h->mid.arenas[0];
    void *p[12];
    for (int i = 0; i < 12; i++) { /* 2.4 MiB: pools of 1 and 2 MiB, every page written */
        p[i] = hl_heap_malloc(h, 200 << 10);
        memset(p[i], 1, 200 << 10);
    }
    cr_assert_eq(npools(a), 2);
    for (int i = 0; i < 12; i++)
        hl_heap_free(h, p[i]);
    cr_assert_eq(npools(a), 2, "both kept");
    hl_tlsf_pool_t *big = hl_tlsf_parked_next(&a->tlsf, NULL);
    cr_assert_not_null(big, "an emptied pool is parked");
    cr_assert_null(hl_tlsf_parked_next(&a->tlsf, big));
    cr_assert_eq(big->bytes, 2u << 20, "the smaller pool serves, the larger is parked");
    char *lo = (char *)big;
    size_t len = big->bytes;
    cr_assert_geq(resident_kib(lo, len), 1200, "the burst's pages are resident");
    /* Rounds of a 1.2 MiB working set of 150 KiB blocks: 900 KiB fit the 1 MiB pool, the rest
     * overflows into the parked one, which is parked again when the round frees its blocks. */
    int in_big = 0;
    for (int round = 0; round < 4000 && resident_kib(lo, len) > 512; round++) {
        for (int i = 0; i < 8; i++) {
            p[i] = hl_heap_malloc(h, 150 << 10);
            memset(p[i], 2, 4096);
            in_big += (char *)p[i] > lo && (char *)p[i] < lo + len;
        }
        for (int i = 0; i < 8; i++)
            hl_heap_free(h, p[i]);
        activity(h, 61); /* 138 slow paths a round: passes (decay.h) fall on every phase */
        sleep_ms(1);
    }
    cr_assert_gt(in_big, 0, "the working set overflowed into the parked pool");
    cr_assert_lt(resident_kib(lo, len), 512, "its pages went back: %zu KiB resident",
                 resident_kib(lo, len));
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

static void *bind_and_exit(void *arg)
{
    hl_heap_t *h = arg;
    hl_heap_free(h, hl_heap_malloc(h, 64)); /* binds this thread's cache to h's arena */
    return NULL;
}

/* While threads bind to arenas and leave them, the parked pools are what the next thread takes
 * (thread churn): they keep their pages; once no thread came or went for the decay time, a
 * pass gives them back (mid.c, purge_parked; the same burst as above). */
Test(decay, parked_pools_keep_their_pages_while_threads_come_and_go)
{
    hl_heap_t *h = unit_heap("arenas=1,decay=100");
    hl_arena_t *a = &h->mid.arenas[0];
    void *p[12];
    for (int i = 0; i < 12; i++) {
        p[i] = hl_heap_malloc(h, 200 << 10);
        memset(p[i], 1, 200 << 10);
    }
    for (int i = 0; i < 12; i++)
        hl_heap_free(h, p[i]);
    hl_tlsf_pool_t *big = hl_tlsf_parked_next(&a->tlsf, NULL);
    cr_assert_not_null(big);
    char *lo = (char *)big;
    size_t len = big->bytes;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long ms = 0;
    for (int round = 0; ms < 400; round++) { /* a thread comes and goes every round */
        pthread_t th;
        cr_assert_eq(pthread_create(&th, NULL, bind_and_exit, h), 0);
        pthread_join(th, NULL);
        activity(h, 61);
        sleep_ms(1);
        clock_gettime(CLOCK_MONOTONIC, &t);
        ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
    }
    cr_assert_geq(resident_kib(lo, len), 1200, "kept while threads come and go: %zu KiB",
                  resident_kib(lo, len));
    for (int round = 0; round < 4000 && resident_kib(lo, len) > 512; round++) {
        activity(h, 61);
        sleep_ms(1);
    }
    cr_assert_lt(resident_kib(lo, len), 512, "given back once they stopped: %zu KiB resident",
                 resident_kib(lo, len));
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

Test(decay, a_fixed_arena_keeps_everything_in_the_arena)
{
    hl_heap_t *h = unit_heap("arena=16M");
    char *lo = h->arena_base, *hi = lo + h->arena_size;
    for (int round = 0; round < 3; round++) {
        char *p = hl_heap_malloc(h, 6 << 20);
        cr_assert(p >= lo && p + (6 << 20) <= hi, "a big block comes from the arena");
        memset(p, 1, 6 << 20);
        hl_heap_free(h, p);
        activity(h, 1000);
    }
    cr_assert_eq(h->large.cache_count, 0);
    cr_assert_eq(unit_path_count(h, HL_PATH_LARGE_MMAP), 0);
    cr_assert_eq(unit_path_count(h, HL_PATH_LARGE_REUSE), 0);
    cr_assert_eq(h->mid.arenas[0].tlsf.pools->bytes, h->arena_size & ~(size_t)15);
    hl_heap_info_t info;
    hl_heap_info(h, &info);
    cr_assert_eq(info.held, h->arena_size);
    hl_heap_destroy(h);
}

Test(decay, the_option_parses_and_refuses_bad_values)
{
    hl_options_t o;
    char err[128];
    hl_options_default(&o);
    cr_assert_eq(o.decay_ms, HL_DEFAULT_DECAY_MS);
    cr_assert_eq(hl_options_parse(&o, "decay=250", err, sizeof err), 0, "%s", err);
    cr_assert_eq(o.decay_ms, 250);
    cr_assert_eq(hl_options_parse(&o, "decay=soon", err, sizeof err), -1);
    cr_assert(!strncmp(err, "bad value in option 'decay=soon'", 32), "%s", err);
    cr_assert_eq(hl_options_parse(&o, "decay=99999999999", err, sizeof err), -1);
}

Test(decay, a_block_handed_out_whole_keeps_a_fresh_usable_size)
{
    hl_heap_t *h = unit_heap("");
    char *p = hl_heap_malloc(h, 10 << 20);
    hl_heap_free(h, p);
    char *q = hl_heap_malloc(h, 9 << 20); /* 10 MiB cached: within a quarter, taken whole */
    cr_assert_eq(q, p);
    size_t fresh = ((9u << 20) + 48 + 4095) / 4096 * 4096 - 48;
    cr_assert_eq(hl_heap_usable_size(h, q), fresh, "usable size independent of the cache");
    cr_assert_eq(h->large.cache_count, 0);
    hl_heap_free(h, q); /* the whole 10 MiB mapping goes back */
    char *r = hl_heap_malloc(h, 10 << 20);
    cr_assert_eq(r, p);
    cr_assert_eq(unit_path_count(h, HL_PATH_LARGE_MMAP), 1);
    r = hl_heap_realloc(h, r, 12 << 20); /* mremap from the whole mapping */
    cr_assert_not_null(r);
    hl_heap_free(h, r);
    hl_heap_destroy(h);
}

/* A decay pass that starts a new period while most large blocks are free (between two
 * generations of short-lived threads) does not shrink the budget to the few bytes live at
 * that moment: the previous period's mark holds for one more period, so the next frees are
 * kept and the next generation reuses them. Two periods later the old peak is forgotten. */
Test(decay, the_budget_outlives_the_start_of_a_period)
{
    hl_heap_t *h = unit_heap("decay=1000");
    enum { N = 8 };
    const size_t len = (2u << 20) + 4096; /* mapping of a 2 MiB block */
    char *p[N];
    for (int i = 0; i < N; i++)
        p[i] = hl_heap_malloc(h, 2 << 20);
    for (int i = 0; i < N - 1; i++)
        hl_heap_free(h, p[i]);
    cr_assert_eq(h->large.cache_count, N - 1, "the freed blocks are cached");
    uint32_t now = hl_decay_now();
    hl_large_decay(h, now); /* a new period (the first), nothing idle long enough to expire */
    cr_assert_eq(h->large.live_hw, len, "the new period's mark starts at the live block");
    cr_assert_eq(h->large.cache_count, N - 1);
    hl_heap_free(h, p[N - 1]);
    cr_assert_eq(h->large.cache_count, N, "kept within the previous period's mark");
    cr_assert_eq(h->large.cache_bytes, N * len);
    for (int i = 0; i < N; i++)
        p[i] = hl_heap_malloc(h, 2 << 20);
    cr_assert_eq(unit_path_count(h, HL_PATH_LARGE_MMAP), N, "the next generation maps nothing");
    for (int i = 0; i < N; i++)
        hl_heap_free(h, p[i]);
    hl_large_decay(h, now + 1000); /* all idle for the decay time: unmapped */
    hl_large_decay(h, now + 2000);
    cr_assert_eq(h->large.cache_count, 0);
    cr_assert_lt(h->large.live_hw > h->large.prev_hw ? h->large.live_hw : h->large.prev_hw, len,
                 "two periods without live blocks: the old peak is gone");
    hl_heap_destroy(h);
}
