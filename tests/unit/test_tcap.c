/* Adaptive thread-cache caps (liballoc/tcap.h): a bin that alternates between refills and
 * flushes grows, one-way traffic does not, grown bins shrink back and give their slots to the
 * slabs once idle for the decay time, a whole-cache flush (trim, thread exit) resets the caps,
 * and a batch of a grown bin taken by a thread with a smaller cap is split. */
#include "internal.h"
#include "unit_heap.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { SIZE = 300 }; /* class of 320-byte slots: base cap 51 */

static hl_tbin_t *bin_of(hl_heap_t *h, size_t size)
{
    return &hl_tls_of(h)->bins[HL_TAG_TINY | hl_size_class[(size + 16) >> 4]];
}

static uint32_t base_cap(hl_heap_t *h, size_t size)
{
    return h->tiny.caps[hl_size_class[(size + 16) >> 4]];
}

static uint64_t refills(hl_heap_t *h)
{
    return unit_path_count(h, HL_PATH_TINY_REFILL) + unit_path_count(h, HL_PATH_TINY_NEW_SLAB);
}

/* Every block freed: the thread's caches flushed, the heap consistent and empty. */
static void check_empty_and_destroy(hl_heap_t *h)
{
    hl_heap_flush_thread(h);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_info_t info;
    hl_heap_info(h, &info);
    cr_assert_eq(info.used, 0);
    hl_heap_destroy(h);
}

/* rounds of: allocate n blocks of size, free them (the shape of a phase-wise program). */
static void rounds(hl_heap_t *h, size_t size, unsigned n, unsigned rounds)
{
    static void *v[4096];
    cr_assert_leq(n, 4096);
    for (unsigned r = 0; r < rounds; r++) {
        for (unsigned i = 0; i < n; i++) {
            v[i] = hl_heap_malloc(h, size);
            cr_assert_not_null(v[i]);
            memset(v[i], 0x33, size);
        }
        for (unsigned i = 0; i < n; i++)
            hl_heap_free(h, v[i]);
    }
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

Test(tcap, alternating_bin_grows_and_stops_refilling)
{
    hl_heap_t *h = unit_heap("decay=60000");
    uint32_t base = base_cap(h, SIZE);
    rounds(h, SIZE, 4 * base, 3);
    hl_tbin_t *b = bin_of(h, SIZE);
    cr_assert_geq(b->cap, 4 * base, "cap %u grew to hold a round (base %u)", b->cap, base);
    cr_assert_leq(b->cap, HL_TCAP_BIN_BYTES / hl_class_slot(hl_size_class[(SIZE + 16) >> 4]));
    cr_assert_gt(hl_tls_of(h)->tcap.grows, 0);
    uint64_t before = refills(h);
    rounds(h, SIZE, 2 * base, 20); /* at the base cap: two refills a round at least */
    cr_assert_leq(refills(h) - before, 2, "a round fits the grown bin: %llu refills in 20 rounds",
                  (unsigned long long)(refills(h) - before));
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

Test(tcap, one_way_traffic_keeps_the_base_cap)
{
    hl_heap_t *h = unit_heap("decay=60000");
    uint32_t base = base_cap(h, SIZE);
    enum { N = 4000 };
    static void *v[N];
    for (unsigned i = 0; i < N; i++)
        v[i] = hl_heap_malloc(h, SIZE); /* refills only */
    for (unsigned i = 0; i < N; i++)
        hl_heap_free(h, v[i]); /* flushes only */
    cr_assert_eq(bin_of(h, SIZE)->cap, base, "a burst is no alternation");
    cr_assert_eq(hl_tls_of(h)->tcap.grows, 0);
    hl_heap_destroy(h);
}

Test(tcap, growth_is_bounded_per_thread)
{
    hl_heap_t *h = unit_heap("decay=60000");
    for (int pass = 0; pass < 3; pass++)
        for (size_t size = 16; size <= HL_TINY_MAX; size += 16)
            rounds(h, size, 1024, 2);
    hl_tls_t *t = hl_tls_of(h);
    size_t grown = 0;
    for (unsigned c = 0; c < HL_CLASS_COUNT; c++) {
        hl_tbin_t *b = &t->bins[HL_TAG_TINY | c];
        cr_assert_geq(b->cap, h->tiny.caps[c]);
        cr_assert_leq(b->cap, HL_TCAP_BIN_SLOTS);
        grown += (size_t)(b->cap - h->tiny.caps[c]) * hl_class_slot(c);
    }
    cr_assert_eq(grown, t->tcap.grown);
    cr_assert_leq(grown, HL_TCAP_THREAD_BYTES, "grown caps hold %zu bytes", grown);
    cr_assert_gt(grown, 0);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

/* A grown bin that stops alternating halves its cap once per decay period on the thread's
 * slow paths (here: another class's alternations) and its slots go back to the slabs. */
Test(tcap, idle_bin_shrinks_and_gives_slots_back, .timeout = 60)
{
    hl_heap_t *h = unit_heap("decay=20");
    uint32_t base = base_cap(h, SIZE);
    rounds(h, SIZE, 4 * base, 4);
    hl_tbin_t *b = bin_of(h, SIZE);
    cr_assert_gt(b->cap, base);
    cr_assert_gt(hl_bin_count(b), base, "the grown bin holds a round's slots");
    for (int i = 0; i < 400 && b->cap > base; i++) {
        rounds(h, 40, 4000, 1); /* another class: slow events that look at the clock */
        sleep_ms(2);
    }
    cr_assert_eq(b->cap, base, "idle bin back to its base cap (%u, base %u)", b->cap, base);
    cr_assert_leq(hl_bin_count(b), base / 2 + 1);
    size_t slabs, used, held;
    hl_tiny_class_counts(h, hl_size_class[(SIZE + 16) >> 4], &slabs, &used, &held);
    cr_assert_leq(used, base / 2 + 1, "the slots went back to their slabs: %zu still out", used);
    cr_assert_gt(hl_tls_of(h)->tcap.shrinks, 0);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

Test(tcap, trim_resets_caps_and_releases_the_slabs)
{
    hl_heap_t *h = unit_heap("decay=60000");
    uint32_t base = base_cap(h, SIZE);
    rounds(h, SIZE, 8 * base, 4);
    cr_assert_gt(bin_of(h, SIZE)->cap, base);
    hl_heap_info_t info;
    hl_heap_info(h, &info);
    cr_assert_gt(info.slabs, 0);
    hl_heap_trim(h, 0);
    cr_assert_eq(bin_of(h, SIZE)->cap, base);
    cr_assert_eq(hl_tls_of(h)->tcap.grown, 0);
    hl_heap_info(h, &info);
    cr_assert_eq(info.used, 0);
    cr_assert_eq(info.slabs, 0, "every slab went back: %zu left", info.slabs);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

typedef struct job_s {
    hl_heap_t *h;
    uint32_t cap;   /* out: the bin's cap before the thread exits */
    size_t checked; /* out: hl_heap_check errors seen by the thread */
    int32_t avail;  /* out: the bin's room after the refill */
} job_t;

static void *grow_and_exit(void *arg)
{
    job_t *j = arg;
    rounds(j->h, SIZE, 8 * base_cap(j->h, SIZE), 4);
    j->cap = bin_of(j->h, SIZE)->cap;
    return NULL; /* the cache is flushed by the thread-exit destructor */
}

Test(tcap, thread_exit_gives_a_grown_cache_back)
{
    hl_heap_t *h = unit_heap("decay=60000");
    job_t j = {.h = h};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, grow_and_exit, &j), 0);
    cr_assert_eq(pthread_join(t, NULL), 0);
    cr_assert_gt(j.cap, base_cap(h, SIZE), "the thread's cap grew");
    hl_heap_info_t info;
    hl_heap_info(h, &info);
    cr_assert_eq(info.used, 0, "%zu bytes still out after the thread exited", info.used);
    hl_heap_trim(h, 0);
    hl_heap_info(h, &info);
    cr_assert_eq(info.slabs, 0);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

/* A thread with a grown cap flushes batches larger than another thread's whole cap into the
 * class's transfer cache; that thread's refill takes only what fits its bin. */
static void *refill_small(void *arg)
{
    job_t *j = arg;
    void *p = hl_heap_malloc(j->h, SIZE); /* a refill from the big batches */
    hl_tbin_t *b = bin_of(j->h, SIZE);
    j->cap = b->cap;
    j->checked = hl_heap_check(j->h, 1); /* checks this thread's bins: count, avail >= 0 */
    j->avail = b->avail;
    hl_heap_free(j->h, p);
    return NULL;
}

Test(tcap, large_transfer_batch_is_split_for_a_small_bin)
{
    hl_heap_t *h = unit_heap("decay=60000");
    uint32_t base = base_cap(h, SIZE);
    rounds(h, SIZE, 8 * base, 4);
    hl_tbin_t *b = bin_of(h, SIZE);
    cr_assert_geq(b->cap, 4 * base);
    hl_tiny_trim(h, 0); /* transfer cache empty: the next flush lands in it */
    /* Fill the bin, then one more free: a flush of cap/2 slots into the transfer cache. */
    static void *v[4096];
    unsigned n = b->cap + 1;
    for (unsigned i = 0; i < n; i++)
        v[i] = hl_heap_malloc(h, SIZE);
    for (unsigned i = 0; i < n; i++)
        hl_heap_free(h, v[i]);
    hl_tiny_class_t *c = &h->tiny.cls[hl_size_class[(SIZE + 16) >> 4]];
    cr_assert_gt(c->nxfer, 0);
    cr_assert_gt(c->xfer_n[c->nxfer - 1], base, "a batch larger than a base bin");
    job_t j = {.h = h};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, refill_small, &j), 0);
    cr_assert_eq(pthread_join(t, NULL), 0);
    cr_assert_eq(j.cap, base);
    cr_assert_eq(j.checked, 0);
    cr_assert_geq(j.avail, 0, "the refill took no more than the bin holds");
    check_empty_and_destroy(h);
}

/* A forked child inherits the grown cache and keeps working with it. */
Test(tcap, fork_child_keeps_a_consistent_grown_cache)
{
    hl_heap_t *h = unit_heap("decay=60000");
    uint32_t base = base_cap(h, SIZE);
    rounds(h, SIZE, 4 * base, 3);
    cr_assert_gt(bin_of(h, SIZE)->cap, base);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        rounds(h, SIZE, 4 * base, 5);
        rounds(h, 100, 1000, 5);
        hl_heap_flush_thread(h);
        hl_heap_info_t info;
        hl_heap_info(h, &info);
        _exit(hl_heap_check(h, 1) == 0 && info.used == 0 && bin_of(h, SIZE)->cap == base ? 0 : 1);
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
    hl_heap_destroy(h);
}

/* Tracing-free heaps with caching off or hardened never adapt. */
Test(tcap, no_cache_no_adaptation)
{
    hl_heap_t *h = unit_heap("tcache=0");
    rounds(h, SIZE, 200, 4);
    cr_assert_eq(bin_of(h, SIZE)->cap, 0);
    cr_assert_eq(hl_tls_of(h)->tcap.grows, 0);
    hl_heap_destroy(h);
}

/* Slots carved so far in the slab of p. */
static uint32_t carved(hl_heap_t *h, void *p)
{
    return hl_tiny_slab_of(&h->tiny, p)->bump;
}

/* A bin's first refills carve HL_TCAP_WARM_BYTES of slots (at least one), doubling, before
 * refills take half the cap: a class used for one block costs a page, not half a cap. */
Test(tcap, first_refills_carve_a_page_then_grow)
{
    hl_heap_t *h = unit_heap("decay=60000");
    void *big = hl_heap_malloc(h, 4000); /* 4112-byte slots: base cap 16, a refill wants 8 */
    cr_assert_not_null(big);
    cr_assert_eq(carved(h, big), 1, "the first refill of a 4 KiB class carved %u slots",
                 carved(h, big));
    void *small = hl_heap_malloc(h, 200); /* 224-byte slots: a refill wants 37 */
    uint32_t slot = hl_class_slot(hl_size_class[(200 + 16) >> 4]);
    cr_assert_eq(carved(h, small), HL_TCAP_WARM_BYTES / slot);
    /* Refill by refill the batches double up to the cap's half: 18, 36, then 37 each. */
    hl_tbin_t *b = bin_of(h, 200);
    uint32_t want = (b->cap + 1) / 2, prev = carved(h, small);
    static void *v[512];
    unsigned n = 0;
    for (unsigned r = 1; r <= HL_TCAP_WARM_STEPS + 1; r++) {
        while (b->head)
            v[n++] = hl_heap_malloc(h, 200);
        v[n++] = hl_heap_malloc(h, 200); /* refill */
        uint32_t now = carved(h, small), batch = now - prev;
        uint32_t lim = r < HL_TCAP_WARM_STEPS ? (HL_TCAP_WARM_BYTES << r) / slot : want;
        cr_assert_eq(batch, lim < want ? lim : want, "refill %u carved %u (want %u)", r + 1, batch,
                     want);
        prev = now;
    }
    for (unsigned i = 0; i < n; i++)
        hl_heap_free(h, v[i]);
    hl_heap_free(h, small);
    hl_heap_free(h, big);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

/* Another thread's bins start small again: warming is per thread cache (and a trim, which
 * gives every slot back, starts it over). */
static void *one_big(void *arg)
{
    hl_heap_t *h = arg;
    void *p = hl_heap_malloc(h, 4000);
    uintptr_t held = p ? hl_bin_count(bin_of(h, 4000)) + 1 : 0;
    hl_heap_free(h, p);
    return (void *)held;
}

Test(tcap, a_new_thread_warms_its_own_bins)
{
    hl_heap_t *h = unit_heap("decay=60000");
    rounds(h, 4000, 64, 2); /* this thread's bin is warm: its refills take 8 slots */
    cr_assert_eq(hl_tls_of(h)->tcap.warm[hl_size_class[(4000 + 16) >> 4]], HL_TCAP_WARM_STEPS);
    hl_heap_trim(h, 0); /* the transfer cache too: the other thread's refill carves */
    pthread_t th;
    void *held;
    cr_assert_eq(pthread_create(&th, NULL, one_big, h), 0);
    cr_assert_eq(pthread_join(th, &held), 0);
    cr_assert_eq((uintptr_t)held, 1, "the new thread's first refill took %zu slots",
                 (size_t)(uintptr_t)held);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

/* A free that finds its bin full keeps half the bin after a refill (a phase fits), but hands
 * the whole bin over after another flush: a thread that only frees (a consumer) keeps nothing
 * waiting, and the flush walks no kept half (tcap.h, hl_tcap_flush_keep). */
Test(tcap, second_flush_in_a_row_hands_over_the_whole_bin)
{
    hl_heap_t *h = unit_heap("decay=60000");
    uint32_t cap = base_cap(h, SIZE), keep = cap / 2;
    static void *v[1024];
    unsigned n = 2 * cap + 2;
    for (unsigned i = 0; i < n; i++)
        v[i] = hl_heap_malloc(h, SIZE);
    hl_heap_flush_thread(h); /* empty bin, no slow event yet */
    hl_tiny_trim(h, 0);      /* empty transfer cache */
    hl_tbin_t *b = bin_of(h, SIZE);
    hl_tiny_class_t *c = &h->tiny.cls[hl_size_class[(SIZE + 16) >> 4]];
    unsigned i = 0;
    while (i < cap) /* the bin fills */
        hl_heap_free(h, v[i++]);
    cr_assert_eq(hl_bin_count(b), cap);
    hl_heap_free(h, v[i++]); /* first flush: half stays */
    cr_assert_eq(hl_bin_count(b), keep + 1);
    cr_assert_eq(c->nxfer, 1);
    cr_assert_eq(c->xfer_n[0], cap - keep);
    while (hl_bin_count(b) < cap) /* full again without a refill in between */
        hl_heap_free(h, v[i++]);
    hl_heap_free(h, v[i++]); /* a flush after a flush: all of it goes */
    cr_assert_eq(hl_bin_count(b), 1, "the bin kept %u slots", hl_bin_count(b) - 1);
    cr_assert_eq(c->nxfer, 2);
    cr_assert_eq(c->xfer_n[1], cap, "a batch of the whole bin");
    cr_assert_eq(b->cap, cap, "one-way traffic does not grow the bin");
    while (i < n)
        hl_heap_free(h, v[i++]);
    check_empty_and_destroy(h);
}
