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
    return &hl_tls_of(h)->bins[HL_BIN_TINY | hl_size_class[(size + 16) >> 4]];
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
        hl_tbin_t *b = &t->bins[HL_BIN_TINY | c];
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
    hl_tcap_t *a = &hl_tls_of(h)->tcap;
    unsigned cls = hl_size_class[(SIZE + 16) >> 4];
    cr_assert_gt(hl_bin_count(b) + a->spare_n[cls], base, "the grown bin holds a round's slots");
    for (int i = 0; i < 400 && b->cap > base; i++) {
        rounds(h, 40, 4000, 1); /* another class: slow events that look at the clock */
        sleep_ms(2);
    }
    cr_assert_eq(b->cap, base, "idle bin back to its base cap (%u, base %u)", b->cap, base);
    cr_assert_leq(hl_bin_count(b), base / 2 + 1);
    cr_assert_eq(a->spare[cls], NULL, "a shrinking bin gives its second chain back");
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
    /* Fill the bin twice, one more free each time: the first full bin becomes the second
     * chain, the next one sends that chain (cap slots) to the transfer cache. */
    static void *v[4096];
    unsigned n = 2 * b->cap + 2;
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
    /* Refill by refill the batches double up to the cap's half: 18, then 18 each (the base
     * cap of 224-byte slots is 36). */
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

/* A bin is two chains (tcap.h, hl_tcap_flush_keep): a free that finds the bin full moves it
 * whole to the second chain, touching nothing shared; the next full bin sends the older chain
 * to the transfer cache; and a flush after a flush (one-way traffic, a consumer) sends both. */
Test(tcap, full_bin_moves_to_its_second_chain_then_to_the_class)
{
    hl_heap_t *h = unit_heap("decay=60000");
    uint32_t cap = base_cap(h, SIZE);
    static void *v[1024];
    unsigned n = 3 * cap + 3;
    for (unsigned i = 0; i < n; i++)
        v[i] = hl_heap_malloc(h, SIZE);
    hl_heap_flush_thread(h); /* empty bin, no slow event yet */
    hl_tiny_trim(h, 0);      /* empty transfer cache */
    hl_tbin_t *b = bin_of(h, SIZE);
    unsigned cls = hl_size_class[(SIZE + 16) >> 4];
    hl_tcap_t *a = &hl_tls_of(h)->tcap;
    hl_tiny_class_t *c = &h->tiny.cls[cls];
    unsigned i = 0;
    while (i < cap) /* the bin fills */
        hl_heap_free(h, v[i++]);
    cr_assert_eq(hl_bin_count(b), cap);
    hl_heap_free(h, v[i++]); /* first full bin: into the second chain */
    cr_assert_eq(hl_bin_count(b), 1, "the bin kept %u slots", hl_bin_count(b) - 1);
    cr_assert_eq(a->spare_n[cls], cap);
    cr_assert_eq(c->nxfer, 0, "nothing went to the class");
    while (hl_bin_count(b) < cap)
        hl_heap_free(h, v[i++]);
    hl_heap_free(h, v[i++]); /* the second chain was taken: it goes to the class */
    cr_assert_eq(hl_bin_count(b), 1);
    cr_assert_eq(a->spare_n[cls], cap);
    cr_assert_eq(c->nxfer, 1);
    cr_assert_eq(c->xfer_n[0], cap, "a batch of a whole bin");
    while (hl_bin_count(b) < cap)
        hl_heap_free(h, v[i++]);
    hl_heap_free(h, v[i++]); /* a flush after a flush: both chains go */
    cr_assert_eq(hl_bin_count(b), 1);
    cr_assert_eq(a->spare[cls], NULL, "one-way traffic keeps no second chain");
    cr_assert_eq(c->nxfer, 3);
    cr_assert_eq(c->xfer_n[1] + c->xfer_n[2], 2 * cap);
    cr_assert_eq(b->cap, cap, "one-way traffic does not grow the bin");
    while (i < n)
        hl_heap_free(h, v[i++]);
    check_empty_and_destroy(h);
}

/* A phase of up to two caps of allocations and frees stays in the thread with (almost) no
 * growth: the empty bin takes its second chain back, no refill from the class. (The first
 * round's last refill may carve more than the round needs, so that its frees overflow twice
 * and the second round refills once: one growth step at most. A bin that kept half at a
 * flush needed four caps for such a phase.) */
Test(tcap, phase_of_two_caps_stays_in_the_thread)
{
    hl_heap_t *h = unit_heap("decay=60000");
    uint32_t base = base_cap(h, SIZE);
    rounds(h, SIZE, 2 * base, 2); /* slots carved, bin and second chain filled */
    uint64_t before = refills(h);
    rounds(h, SIZE, 2 * base, 20);
    cr_assert_eq(refills(h) - before, 0, "%llu refills from the class in 20 rounds",
                 (unsigned long long)(refills(h) - before));
    cr_assert_leq(bin_of(h, SIZE)->cap, 2 * base, "the bin grew to %u (base %u)",
                  bin_of(h, SIZE)->cap, base);
    cr_assert_eq(h->tiny.cls[hl_size_class[(SIZE + 16) >> 4]].nxfer, 0);
    check_empty_and_destroy(h);
}

/* Fill the bin and its second chain, then overflow once more: the thread's cache hands one
 * batch of a whole bin to the class. In two steps: allocate, then free. */
static void alloc_blocks(hl_heap_t *h, void **v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        v[i] = hl_heap_malloc(h, SIZE);
}

static void free_blocks(hl_heap_t *h, void **v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        hl_heap_free(h, v[i]);
}

static pthread_barrier_t handover_barrier;

/* Allocates its blocks before the main thread hands its batch over, frees them after. */
static void *other_hands_over(void *arg)
{
    static void *w[1024];
    hl_heap_t *h = arg;
    unsigned n = 2 * base_cap(h, SIZE) + 1;
    alloc_blocks(h, w, n);
    pthread_barrier_wait(&handover_barrier);
    pthread_barrier_wait(&handover_barrier);
    free_blocks(h, w, n);
    return NULL; /* its bin and second chain go back to the slabs at exit */
}

/* A refill takes its own thread's batch (whose lines its core wrote last) before a newer one
 * another thread handed over (tiny.h, xfer_by). */
Test(tcap, refill_prefers_its_own_threads_batch)
{
    hl_heap_t *h = unit_heap("decay=60000");
    uint32_t cap = base_cap(h, SIZE);
    unsigned cls = hl_size_class[(SIZE + 16) >> 4];
    hl_tiny_class_t *c = &h->tiny.cls[cls];
    static void *v[1024];
    pthread_barrier_init(&handover_barrier, NULL, 2);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, other_hands_over, h), 0);
    pthread_barrier_wait(&handover_barrier); /* the other thread holds its blocks */
    alloc_blocks(h, v, 2 * cap + 1);
    free_blocks(h, v, 2 * cap + 1);
    cr_assert_eq(c->nxfer, 1);
    void *mine = c->xfer[0];
    pthread_barrier_wait(&handover_barrier); /* now it frees them */
    cr_assert_eq(pthread_join(t, NULL), 0);
    pthread_barrier_destroy(&handover_barrier);
    cr_assert_eq(c->nxfer, 2, "the other thread's batch is the newest (%u batches)", c->nxfer);
    cr_assert_eq(c->xfer_by[0], hl_tls_of(h));
    /* Empty the bin and its second chain; the next malloc refills from the class. */
    hl_tbin_t *b = bin_of(h, SIZE);
    unsigned k = 0;
    while (b->head || hl_tls_of(h)->tcap.spare[cls])
        v[k++] = hl_heap_malloc(h, SIZE);
    v[k++] = hl_heap_malloc(h, SIZE);
    cr_assert_eq(v[k - 1], mine, "the refill took this thread's batch");
    cr_assert_eq(c->nxfer, 1);
    cr_assert_neq(c->xfer_by[0], hl_tls_of(h), "the other thread's batch stays");
    for (unsigned i = 0; i < k; i++)
        hl_heap_free(h, v[i]);
    check_empty_and_destroy(h);
}
