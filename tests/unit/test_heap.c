/* Heap-object tests: every tier, class boundaries, alignment, realloc semantics, the fixed
 * arena (mapped, and in a static buffer), threads, and the checker after random sequences. */
#include "../test_rand.h"
#include "internal.h"
#include "unit_heap.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
    return hl_test_rand(&rng);
}

Test(heap, tiers_and_headers)
{
    hl_heap_t *h = unit_heap("");
    struct {
        size_t n;
        unsigned tag_mask, tag;
    } cases[] = {
        {0, 0xE0, 0xA0},
        {1, 0xE0, 0xA0},
        {15, 0xff, 0xA0},
        {16, 0xff, 0xA1},
        {1023, 0xE0, 0xA0},
        {1024, 0xff, 0xA0 | 19},
        {1039, 0xff, 0xA0 | 19},
        {1040, 0xff, 0xA0 | 20},
        {4096, 0xff, 0xA0 | 27},
        {4097, 0xff, HL_TAG_MID},
        {256 << 10, 0xff, HL_TAG_MID},
        {(256 << 10) + 1, 0xff, HL_TAG_LARGE},
        {5 << 20, 0xff, HL_TAG_LARGE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char *p = hl_heap_malloc(h, cases[i].n);
        cr_assert_not_null(p);
        cr_assert_eq((uintptr_t)p % 16, 0, "size %zu", cases[i].n);
        cr_assert_eq(p[-1] & cases[i].tag_mask, cases[i].tag, "size %zu tag %#x", cases[i].n,
                     p[-1]);
        size_t u = hl_heap_usable_size(h, p);
        cr_assert_geq(u, cases[i].n);
        memset(p, 0x5a, u);
        hl_heap_free(h, p);
    }
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

Test(heap, class_boundaries_are_exact)
{
    hl_heap_t *h = unit_heap("");
    for (unsigned c = 0; c < HL_CLASS_COUNT; c++) {
        size_t S = hl_class_slot(c);
        size_t n = S - 1 > HL_TINY_MAX ? HL_TINY_MAX : S - 1;
        unsigned char *p = hl_heap_malloc(h, n);
        cr_assert_eq(p[-1], 0xA0 | c, "largest request of class %u", c);
        cr_assert_eq(hl_heap_usable_size(h, p), S - 1);
        hl_heap_free(h, p);
        if (c + 1 < HL_CLASS_COUNT) {
            p = hl_heap_malloc(h, S);
            cr_assert_eq(p[-1], 0xA0 | (c + 1), "one byte more moves to class %u", c + 1);
            hl_heap_free(h, p);
        }
    }
    hl_heap_destroy(h);
}

/* Outside fixed arenas slot 0 starts on a cache line, so every slot of a class whose size is a
 * multiple of 64 covers whole lines: neighbours used by different threads share none
 * (tiny.c, slab_first). A fixed arena's small slabs keep the 16-byte grid. */
Test(heap, slots_of_line_sized_classes_start_on_a_line)
{
    hl_heap_t *h = unit_heap("");
    unsigned lined = 0;
    for (unsigned c = 0; c < HL_CLASS_COUNT; c++) {
        size_t S = hl_class_slot(c);
        if (S % 64) continue;
        lined++;
        void *p[8];
        for (unsigned i = 0; i < 8; i++) {
            p[i] = hl_heap_malloc(h, S - 1);
            cr_assert_eq((uintptr_t)p[i] % 64, 0, "slot %u of class %u (%zu B) at %p", i, c, S,
                         p[i]);
        }
        hl_slab_t *s = hl_tiny_slab_of(&h->tiny, p[0]);
        cr_assert_eq((uintptr_t)s->first % 64, 0, "class %u: first slot at %p", c, s->first);
        for (unsigned i = 0; i < 8; i++)
            hl_heap_free(h, p[i]);
    }
    cr_assert_geq(lined, 10, "classes of 64, 128, 192, 256, 320 … 896 B");
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);

    h = unit_heap("arena=1M,tiny=1");
    void *q = hl_heap_malloc(h, 63);
    hl_slab_t *s = hl_tiny_slab_of(&h->tiny, q);
    cr_assert_eq((uintptr_t)s->first - (uintptr_t)s, hl_align_up(h->tiny.hdr_size + 1, 16),
                 "a fixed arena's slab keeps the 16-byte grid");
    hl_heap_free(h, q);
    hl_heap_destroy(h);
}

Test(heap, malloc_zero_is_unique)
{
    hl_heap_t *h = unit_heap("");
    void *a = hl_heap_malloc(h, 0), *b = hl_heap_malloc(h, 0);
    cr_assert_not_null(a);
    cr_assert_neq(a, b);
    hl_heap_free(h, a);
    hl_heap_free(h, b);
    hl_heap_destroy(h);
}

Test(heap, memalign_up_to_2mib)
{
    hl_heap_t *h = unit_heap("");
    for (size_t a = 1; a <= (2u << 20); a <<= 1) {
        size_t sizes[] = {0, 1, 100, 5000, 300000};
        for (size_t i = 0; i < 5; i++) {
            unsigned char *p = hl_heap_memalign(h, a, sizes[i]);
            cr_assert_not_null(p, "align %zu size %zu", a, sizes[i]);
            cr_assert_eq((uintptr_t)p % (a < 16 ? 16 : a), 0);
            cr_assert_geq(hl_heap_usable_size(h, p), sizes[i]);
            memset(p, 1, sizes[i]);
            hl_heap_free(h, p);
        }
    }
    errno = 0;
    cr_assert_null(hl_heap_memalign(h, 24, 10));
    cr_assert_eq(errno, EINVAL);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

Test(heap, calloc_zeroes_and_checks_overflow)
{
    hl_heap_t *h = unit_heap("");
    for (size_t n = 1; n < 600000; n = n * 5 + 1) {
        unsigned char *p = hl_heap_malloc(h, n);
        memset(p, 0xff, n);
        hl_heap_free(h, p);
        p = hl_heap_calloc(h, 1, n);
        for (size_t i = 0; i < n; i++)
            cr_assert_eq(p[i], 0, "calloc(%zu) byte %zu", n, i);
        hl_heap_free(h, p);
    }
    errno = 0;
    cr_assert_null(hl_heap_calloc(h, SIZE_MAX / 2, 3));
    cr_assert_eq(errno, ENOMEM);
    errno = 0;
    cr_assert_null(hl_heap_malloc(h, SIZE_MAX - 100));
    cr_assert_eq(errno, ENOMEM);
    hl_heap_destroy(h);
}

Test(heap, realloc_preserves_content_across_tiers)
{
    hl_heap_t *h = unit_heap("");
    size_t sizes[] = {1,      10,      100,     1000,   1024,   1025, 4000, 70000, 262144,
                      262145, 1 << 20, 3 << 20, 300000, 100000, 2000, 500,  20,    1};
    unsigned char *p = hl_heap_realloc(h, NULL, 1);
    p[0] = 0;
    size_t have = 1;
    for (size_t i = 1; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        unsigned char *q = hl_heap_realloc(h, p, n);
        cr_assert_not_null(q);
        size_t keep = have < n ? have : n;
        for (size_t k = 0; k < keep; k++)
            cr_assert_eq(q[k], (unsigned char)(k * 7), "realloc %zu -> %zu byte %zu", have, n, k);
        for (size_t k = 0; k < n; k++)
            q[k] = (unsigned char)(k * 7);
        p = q;
        have = n;
        cr_assert_eq(hl_heap_check(h, 1), 0);
    }
    cr_assert_null(hl_heap_realloc(h, p, 0), "realloc(p, 0) frees and returns NULL");
    hl_heap_destroy(h);
}

Test(heap, realloc_grows_in_place_when_neighbour_free)
{
    hl_heap_t *h = unit_heap("arenas=1");
    void *a = hl_heap_malloc(h, 6000);
    void *b = hl_heap_malloc(h, 6000);
    void *guard = hl_heap_malloc(h, 6000);
    hl_heap_free(h, b);
    void *a2 = hl_heap_realloc(h, a, 11000);
    cr_assert_eq(a2, a);
    uint64_t counts[HL_PATH_COUNT];
    hl_heap_path_counts(h, counts, HL_PATH_COUNT);
    cr_assert_eq(counts[HL_PATH_REALLOC_INPLACE], 1);
    hl_heap_free(h, a2);
    hl_heap_free(h, guard);
    hl_heap_destroy(h);
}

/* Fixed arena: a block shrunk below 3/4 of its size moves into a good fit elsewhere (small
 * blocks then do not stay where large ones were); with no other room it shrinks in place. */
Test(heap, arena_shrinking_realloc_moves_into_a_hole)
{
    hl_heap_t *h = unit_heap("arena=64K");
    char *hole = hl_heap_malloc(h, 500);
    char *p = hl_heap_malloc(h, 4000);
    void *guard = hl_heap_malloc(h, 100);
    hl_heap_free(h, hole);
    for (int i = 0; i < 400; i++)
        p[i] = (char)i;
    char *q = hl_heap_realloc(h, p, 400);
    cr_assert_eq(q, hole, "shrunk block moved into the 500-byte hole");
    for (int i = 0; i < 400; i++)
        cr_assert_eq(q[i], (char)i);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    /* A shrink by less than a quarter stays in place. */
    char *r = hl_heap_malloc(h, 4000);
    cr_assert_eq(hl_heap_realloc(h, r, 3500), r);
    /* No room anywhere else: in place, never a failure. */
    void *fill[64];
    size_t n = 0;
    while (n < 64 && (fill[n] = hl_heap_malloc(h, 1000)) != NULL)
        n++;
    while (hl_heap_malloc(h, 16))
        ;
    cr_assert_eq(hl_heap_realloc(h, r, 500), r, "no free block fits: shrink in place");
    cr_assert_eq(hl_heap_check(h, 1), 0);
    (void)guard;
    hl_heap_destroy(h);
}

Test(heap, large_realloc_uses_mremap)
{
    hl_heap_t *h = unit_heap("");
    char *p = hl_heap_malloc(h, 1 << 20);
    memset(p, 3, 1 << 20);
    p = hl_heap_realloc(h, p, 8 << 20);
    cr_assert_eq(p[(1 << 20) - 1], 3);
    uint64_t counts[HL_PATH_COUNT];
    hl_heap_path_counts(h, counts, HL_PATH_COUNT);
    cr_assert_eq(counts[HL_PATH_LARGE_MREMAP], 1);
    hl_heap_free(h, p);
    hl_heap_destroy(h);
}

Test(heap, paths_are_counted)
{
    hl_heap_t *h = unit_heap("");
    void *p = hl_heap_malloc(h, 64);
    hl_heap_free(h, p);
    p = hl_heap_malloc(h, 64);
    hl_heap_free(h, p);
    uint64_t c[HL_PATH_COUNT];
    hl_heap_path_counts(h, c, HL_PATH_COUNT);
    cr_assert_eq(c[HL_PATH_TINY_NEW_SLAB], 1);
    cr_assert_eq(c[HL_PATH_TINY_CACHE_HIT], 1);
    cr_assert_eq(c[HL_PATH_TINY_CACHE_PUSH], 2);
    hl_heap_destroy(h);
}

static void fill_arena(hl_heap_t *h, size_t arena, int check_util)
{
    void *blocks[100000];
    size_t n = 0, bytes = 0;
    errno = 0;
    for (;;) {
        size_t sz = 16 + (size_t)(next_rand() % 3000);
        void *p = hl_heap_malloc(h, sz);
        if (!p) break;
        cr_assert_lt(n, 100000);
        memset(p, 0x11, sz);
        blocks[n++] = p;
        bytes += sz;
    }
    cr_assert_eq(errno, ENOMEM);
    if (check_util) cr_assert_gt(bytes, arena * 3 / 4, "filled %zu of %zu", bytes, arena);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    for (size_t i = 0; i < n; i++)
        hl_heap_free(h, blocks[i]);
    cr_assert_eq(hl_heap_check(h, 1), 0);
}

Test(heap, arena_exhaustion_returns_enomem)
{
    hl_heap_t *h = unit_heap("arena=1M");
    fill_arena(h, 1 << 20, 1);
    hl_heap_destroy(h);
    h = unit_heap("arena=1M,tiny=1");
    fill_arena(h, 1 << 20, 0);
    fill_arena(h, 1 << 20, 0);
    hl_heap_destroy(h);
    h = unit_heap("arena=1M");
    /* Everything came back: the arena fills again as far. */
    fill_arena(h, 1 << 20, 1);
    errno = 0;
    cr_assert_null(hl_heap_malloc(h, 2 << 20));
    cr_assert_eq(errno, ENOMEM);
    hl_heap_destroy(h);
}

static _Alignas(4096) char static_arena[512 << 10];

Test(heap, arena_in_a_static_buffer)
{
    hl_options_t o;
    hl_options_default(&o);
    o.arena_size = sizeof static_arena;
    o.arena_base = static_arena;
    hl_heap_t *h = hl_heap_create(&o);
    cr_assert_not_null(h);
    char *p = hl_heap_malloc(h, 100);
    cr_assert(p >= static_arena && p < static_arena + sizeof static_arena);
    char *q = hl_heap_malloc(h, 10000);
    cr_assert(q >= static_arena && q < static_arena + sizeof static_arena);
    hl_heap_free(h, p);
    hl_heap_free(h, q);
    fill_arena(h, sizeof static_arena, 1);
    hl_heap_info_t info;
    hl_heap_info(h, &info);
    cr_assert_eq(info.held, sizeof static_arena);
    hl_heap_destroy(h);
}

Test(heap, bad_options_are_refused)
{
    hl_options_t o;
    hl_options_default(&o);
    o.slab_size = 3000;
    errno = 0;
    cr_assert_null(hl_heap_create(&o));
    cr_assert_eq(errno, EINVAL);
    hl_options_default(&o);
    o.arena_size = 100;
    cr_assert_null(hl_heap_create(&o));
}

Test(heap, arena_slabs_limit_the_tiny_tier)
{
    hl_heap_t *h = unit_heap("arena=1M,tiny=1");
    unsigned char *p = hl_heap_malloc(h, 1280);
    cr_assert_eq(p[-1], 0xA0 | 20, "a 4 KiB slab holds three 1296-byte slots");
    unsigned char *q = hl_heap_malloc(h, 1296);
    cr_assert_eq(q[-1], HL_TAG_MID, "larger requests are TLSF blocks of the arena");
    hl_heap_free(h, p);
    hl_heap_free(h, q);
    hl_heap_destroy(h);
}

Test(heap, tiny_off_serves_everything_from_tlsf)
{
    hl_heap_t *h = unit_heap("tiny=0");
    unsigned char *p = hl_heap_malloc(h, 0);
    cr_assert_eq(p[-1], HL_TAG_MID);
    hl_heap_free(h, p);
    p = hl_heap_malloc(h, 100);
    cr_assert_eq(p[-1], HL_TAG_MID);
    hl_heap_free(h, p);
    hl_heap_destroy(h);
}

static void random_ops(hl_heap_t *h, unsigned steps, size_t max, int tolerate_oom)
{
    enum { N = 2000 };
    static struct {
        unsigned char *p;
        size_t n;
        unsigned char fill;
    } live[N];
    memset(live, 0, sizeof live);
    for (unsigned s = 0; s < steps; s++) {
        unsigned i = (unsigned)(next_rand() % N);
        uint64_t r = next_rand();
        if (live[i].p) {
            for (size_t k = 0; k < live[i].n; k += 1 + live[i].n / 16)
                cr_assert_eq(live[i].p[k], live[i].fill);
            if (r % 3 == 0) {
                size_t n = (size_t)(next_rand() % (r % 7 == 0 ? max : 2048));
                unsigned char *q = hl_heap_realloc(h, live[i].p, n);
                if (!q && n) {
                    cr_assert(tolerate_oom);
                    continue;
                }
                if (n > live[i].n) memset(q + live[i].n, live[i].fill, n - live[i].n);
                live[i].p = n ? q : NULL;
                live[i].n = n;
            } else {
                hl_heap_free(h, live[i].p);
                live[i].p = NULL;
            }
        } else {
            size_t n = (r & 3) ? (size_t)(next_rand() % 1100) : (size_t)(next_rand() % max);
            unsigned char *p = (r & 12) == 12 ? hl_heap_memalign(h, (size_t)32 << (r % 6), n)
                                              : hl_heap_malloc(h, n);
            if (!p) {
                cr_assert(tolerate_oom, "malloc(%zu) failed", n);
                continue;
            }
            live[i].p = p;
            live[i].n = n;
            live[i].fill = (unsigned char)r;
            memset(p, live[i].fill, n);
        }
        if (s % 5000 == 0) cr_assert_eq(hl_heap_check(h, 1), 0, "step %u", s);
    }
    cr_assert_eq(hl_heap_check(h, 1), 0);
    for (unsigned i = 0; i < N; i++)
        if (live[i].p) hl_heap_free(h, live[i].p);
    cr_assert_eq(hl_heap_check(h, 1), 0);
}

Test(heap, random_sequence_checked)
{
    random_ops(unit_heap(""), 150000, 600000, 0);
}
Test(heap, random_sequence_arena_checked)
{
    random_ops(unit_heap("arena=8M"), 150000, 200000, 1);
}
Test(heap, random_sequence_arena_tiny_checked)
{
    random_ops(unit_heap("arena=8M,tiny=1,slab=2K"), 150000, 200000, 1);
}
Test(heap, random_sequence_no_cache_checked)
{
    random_ops(unit_heap("tcache=0"), 100000, 100000, 0);
}

typedef struct xfer_s {
    hl_heap_t *h;
    void **slots;
    unsigned n;
} xfer_t;

static void *producer(void *arg)
{
    xfer_t *x = arg;
    for (unsigned i = 0; i < x->n; i++) {
        x->slots[i] = hl_heap_malloc(x->h, 16 + i % 2000);
        memset(x->slots[i], 0x42, 16 + i % 2000);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    xfer_t *x = arg;
    for (unsigned i = 0; i < x->n; i++)
        hl_heap_free(x->h, x->slots[i]);
    return NULL;
}

Test(heap, cross_thread_frees_do_not_leak)
{
    hl_heap_t *h = unit_heap("");
    enum { N = 20000 };
    static void *slots[N];
    xfer_t x = {h, slots, N};
    for (int round = 0; round < 5; round++) {
        pthread_t t;
        pthread_create(&t, NULL, producer, &x);
        pthread_join(t, NULL);
        pthread_create(&t, NULL, consumer, &x);
        pthread_join(t, NULL);
    }
    hl_heap_flush_thread(h);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_info_t info;
    hl_heap_info(h, &info);
    cr_assert_eq(info.used, 0, "every block came back: %zu bytes in use", info.used);
    hl_heap_trim(h, 0);
    hl_heap_destroy(h);
}

Test(heap, trim_releases_memory)
{
    hl_heap_t *h = unit_heap("");
    void *p[4000];
    for (int i = 0; i < 4000; i++)
        p[i] = hl_heap_malloc(h, 700);
    for (int i = 0; i < 4000; i++)
        hl_heap_free(h, p[i]);
    cr_assert_eq(hl_heap_trim(h, 0), 1);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

Test(heap, size_tables_agree)
{
    for (size_t n = 0; n <= HL_TINY_MAX; n++) {
        unsigned c = hl_size_class[(n + 16) >> 4];
        cr_assert_eq(hl_size_bin[(n + 16) >> 4], (HL_BIN_TINY | c) * sizeof(hl_tbin_t));
        cr_assert_geq(hl_class_slot(c) - 1, n, "class %u serves %zu", c, n);
        cr_assert(c == 0 || hl_class_slot(c - 1) - 1 < n, "class %u is the smallest for %zu", c, n);
    }
}

/* A thread cache holds bins for the tiny tags only (64 of 16 bytes, not one per byte value):
 * every other header byte, in range of the bins or not, takes the slow path, and a tiny one
 * lands on its class's bin. */
Test(heap, thread_cache_bins_cover_only_tiny_tags)
{
    cr_assert_eq(sizeof(((hl_tls_t *)0)->bins), HL_BINS * sizeof(hl_tbin_t));
    cr_assert_leq(sizeof(hl_tls_t), 2048, "a cache is %zu bytes of static TLS", sizeof(hl_tls_t));
    hl_heap_t *h = unit_heap("");
    hl_heap_free(h, hl_heap_malloc(h, 64)); /* binds the cache, the bins get their caps */
    _Alignas(16) unsigned char buf[64];
    hl_opinfo_t info;
    for (unsigned tag = 0; tag < 256; tag++) {
        if ((tag & HL_TAG_TINY_MASK) == HL_TAG_TINY) continue;
        buf[15] = (unsigned char)tag;
        cr_assert_eq(hl_free_push(h, buf + 16, &info), 0, "header byte 0x%02x pushed", tag);
    }
    unsigned c = hl_size_class[(64 + 16) >> 4];
    buf[15] = (unsigned char)(HL_TAG_TINY | c);
    cr_assert_eq(hl_free_push(h, buf + 16, &info), 1);
    cr_assert_eq(info.cls, c);
    cr_assert_eq(hl_tls_of(h)->bins[HL_BIN_TINY | c].head, buf + 16);
    cr_assert_eq(hl_heap_malloc(h, 64), buf + 16, "the pushed slot is the next one handed out");
    hl_heap_destroy(h);
}

typedef struct reg_thread_s {
    hl_heap_t *h;
    pthread_barrier_t *bound, *done;
} reg_thread_t;

static void *bind_and_wait(void *arg)
{
    reg_thread_t *r = arg;
    for (int i = 0; i < 10; i++)
        hl_heap_free(r->h, hl_heap_malloc(r->h, 48));
    if (r->bound) pthread_barrier_wait(r->bound);
    if (r->done) pthread_barrier_wait(r->done);
    return NULL;
}

/* The thread registry lists every live bound cache once, takes released slots back (they are
 * linked through the table, thread.c) and sums the paths of live and exited threads: 4 threads
 * live together, then 300 one after the other on the slots they released. */
Test(heap, thread_registry_reuses_released_slots)
{
    hl_heap_t *h = unit_heap("");
    uint64_t before = unit_path_count(h, HL_PATH_TINY_CACHE_PUSH) +
                      unit_path_count(h, HL_PATH_TINY_DIRECT_FREE) +
                      unit_path_count(h, HL_PATH_TINY_FLUSH);
    pthread_barrier_t bound, done;
    pthread_barrier_init(&bound, NULL, 5);
    pthread_barrier_init(&done, NULL, 5);
    reg_thread_t r = {h, &bound, &done};
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, bind_and_wait, &r);
    pthread_barrier_wait(&bound);
    hl_tls_t *caches[16];
    cr_assert_eq(hl_thread_caches(h, caches, 16), 4, "each live thread listed once");
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < i; j++)
            cr_assert_neq(caches[i], caches[j]);
    pthread_barrier_wait(&done);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    cr_assert_eq(hl_thread_caches(h, caches, 16), 0, "exited threads left the registry");
    r = (reg_thread_t){h, NULL, NULL};
    for (int i = 0; i < 300; i++) {
        pthread_create(&t[0], NULL, bind_and_wait, &r);
        pthread_join(t[0], NULL);
    }
    cr_assert_eq(hl_thread_caches(h, caches, 16), 0);
    uint64_t frees = unit_path_count(h, HL_PATH_TINY_CACHE_PUSH) +
                     unit_path_count(h, HL_PATH_TINY_DIRECT_FREE) +
                     unit_path_count(h, HL_PATH_TINY_FLUSH) - before;
    cr_assert_eq(frees, 304u * 10, "every exited thread's frees counted: %llu",
                 (unsigned long long)frees);
    pthread_barrier_destroy(&bound);
    pthread_barrier_destroy(&done);
    hl_heap_destroy(h);
}
