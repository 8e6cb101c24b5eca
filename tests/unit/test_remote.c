/* Remote frees of the tiny tier (liballoc/tiny.h): slots returned while their class lock is
 * busy go onto their slabs' lock-free remote lists and come back whole at the next holder;
 * cross-thread frees under contention keep every count exact, and slabs of exited threads
 * are taken over by the threads that remain. */
#include "internal.h"
#include "unit_heap.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

typedef struct job_s {
    hl_heap_t *h;
    void **blocks;
    unsigned n;
} job_t;

static void *free_all(void *arg)
{
    job_t *j = arg;
    for (unsigned i = 0; i < j->n; i++)
        hl_heap_free(j->h, j->blocks[i]);
    return NULL;
}

/* Slots waiting on the remote lists of class cls (caller holds the class lock). */
static size_t remote_slots(hl_heap_t *h, unsigned cls)
{
    size_t n = 0;
    for (hl_slab_t *s = h->tiny.cls[cls].pending; s; s = s->rnext)
        for (void *p = (void *)(s->remote & ~(uintptr_t)1); p; p = *(void **)p)
            n++;
    return n;
}

/* Every free of another thread while the class lock is held elsewhere completes (it would
 * wait forever on the lock otherwise) and leaves its slot on a remote list; the next lock
 * holder takes them all back, the slabs empty and are released, and a second round of the
 * same allocations needs no new slab. */
Test(remote, busy_class_lock_sends_frees_to_remote_lists, .timeout = 60)
{
    hl_heap_t *h = unit_heap("tcache=0");
    enum { N = 3000, SIZE = 48 };
    static void *blocks[N];
    unsigned cls = hl_size_class[(SIZE + 16) >> 4];
    for (unsigned i = 0; i < N; i++) {
        blocks[i] = hl_heap_malloc(h, SIZE);
        cr_assert_not_null(blocks[i]);
        memset(blocks[i], 0x5a, SIZE);
    }
    hl_heap_info_t before, after;
    hl_heap_info(h, &before);
    cr_assert_gt(before.slabs, 1, "the blocks span several slabs");

    hl_tiny_class_t *c = &h->tiny.cls[cls];
    hl_lock(&c->lock);
    job_t j = {h, blocks, N};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, free_all, &j), 0);
    cr_assert_eq(pthread_join(t, NULL), 0, "the foreign frees did not wait for the lock");
    cr_assert_eq(remote_slots(h, cls), N, "every freed slot is on a remote list");
    size_t used = 0;
    for (hl_slab_t *s = c->all; s; s = s->anext)
        used += s->used;
    cr_assert_eq(used, N, "remote slots stay counted in their slabs until collected");
    hl_unlock(&c->lock);

    hl_heap_info(h, &after); /* takes the class lock: collects */
    cr_assert_eq(after.used, 0, "%zu bytes still in use", after.used);
    cr_assert_eq(after.slabs, 0, "every slab came back empty and was released");
    cr_assert_null(c->pending);
    cr_assert_eq(hl_heap_check(h, 1), 0);

    for (unsigned i = 0; i < N; i++)
        blocks[i] = hl_heap_malloc(h, SIZE);
    hl_heap_info(h, &after);
    cr_assert_eq(after.slabs, before.slabs, "the released slabs are reused");
    cr_assert_eq(after.held, before.held, "no new memory from the OS");
    for (unsigned i = 0; i < N; i++)
        hl_heap_free(h, blocks[i]);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

/* Producer/consumer pairs over single-producer/single-consumer rings: every block is freed by
 * another thread than the one that allocated it, while a third kind of thread keeps taking
 * the class locks (heap statistics), so flushes find them busy. Contents are checked at each
 * free; at the end the counts are exact and every slab is released. */
enum { RING = 1024, PAIRS = 3 };

typedef struct ring_s {
    hl_heap_t *h;
    unsigned items;
    _Alignas(64) unsigned head;
    _Alignas(64) unsigned tail;
    _Alignas(64) unsigned char *slot[RING];
} ring_t;

static int g_stop;

static void *produce(void *arg)
{
    ring_t *q = arg;
    uint64_t x = 0x9e3779b97f4a7c15ull ^ (uintptr_t)q;
    for (unsigned k = 0; k < q->items; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t n = 16 + x % 1500;
        unsigned char *p = hl_heap_malloc(q->h, n);
        cr_assert_not_null(p);
        memset(p, (int)(n & 0xff), n);
        p[0] = (unsigned char)(n >> 8);
        while (q->tail - __atomic_load_n(&q->head, __ATOMIC_ACQUIRE) == RING)
            sched_yield();
        q->slot[q->tail % RING] = p;
        __atomic_store_n(&q->tail, q->tail + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void *consume(void *arg)
{
    ring_t *q = arg;
    for (unsigned k = 0; k < q->items; k++) {
        while (__atomic_load_n(&q->tail, __ATOMIC_ACQUIRE) == q->head)
            sched_yield();
        unsigned char *p = q->slot[q->head % RING];
        size_t n = hl_heap_usable_size(q->h, p);
        cr_assert_geq(n, 16);
        unsigned char want = p[1];
        size_t len = (size_t)p[0] << 8 | want;
        cr_assert(len >= 16 && len <= n, "block length %zu of usable %zu", len, n);
        for (size_t i = 1; i < len; i++)
            if (p[i] != want)
                cr_assert_fail("byte %zu of a %zu-byte block changed before its free", i, len);
        hl_heap_free(q->h, p);
        __atomic_store_n(&q->head, q->head + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void *lock_taker(void *arg)
{
    hl_heap_t *h = arg;
    hl_heap_info_t info;
    while (!__atomic_load_n(&g_stop, __ATOMIC_ACQUIRE))
        hl_heap_info(h, &info);
    return NULL;
}

static void pairs_under_contention(const char *opts)
{
    hl_heap_t *h = unit_heap(opts);
    static ring_t q[PAIRS];
    pthread_t th[2 * PAIRS], taker;
    __atomic_store_n(&g_stop, 0, __ATOMIC_RELEASE);
    cr_assert_eq(pthread_create(&taker, NULL, lock_taker, h), 0);
    for (unsigned i = 0; i < PAIRS; i++) {
        memset(&q[i], 0, sizeof q[i]);
        q[i].h = h;
        q[i].items = 60000;
        cr_assert_eq(pthread_create(&th[2 * i], NULL, produce, &q[i]), 0);
        cr_assert_eq(pthread_create(&th[2 * i + 1], NULL, consume, &q[i]), 0);
    }
    for (unsigned i = 0; i < 2 * PAIRS; i++)
        pthread_join(th[i], NULL);
    __atomic_store_n(&g_stop, 1, __ATOMIC_RELEASE);
    pthread_join(taker, NULL);
    hl_heap_trim(h, 0); /* this thread's cache and the transfer caches go back to the slabs */
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_info_t info;
    hl_heap_info(h, &info);
    cr_assert_eq(info.used, 0, "%s: %zu bytes still in use", opts, info.used);
    cr_assert_eq(info.slabs, 0, "%s: %zu slabs not released", opts, info.slabs);
    for (unsigned c = 0; c < HL_CLASS_COUNT; c++)
        cr_assert_null(h->tiny.cls[c].pending, "%s: class %u has remote slots left", opts, c);
    hl_heap_destroy(h);
}

Test(remote, cross_thread_frees_under_contention_are_exact, .timeout = 300)
{
    pairs_under_contention("");
}

Test(remote, cross_thread_frees_without_caches_are_exact, .timeout = 300)
{
    pairs_under_contention("tcache=0");
}

/* Threads that allocate and exit: their blocks (and the slabs holding them) are freed by the
 * main thread and reused by a later thread without new slabs. */
static void *alloc_and_exit(void *arg)
{
    job_t *j = arg;
    for (unsigned i = 0; i < j->n; i++) {
        j->blocks[i] = hl_heap_malloc(j->h, 16 + i % 1000);
        cr_assert_not_null(j->blocks[i]);
    }
    return NULL;
}

Test(remote, slabs_of_exited_threads_are_taken_over, .timeout = 60)
{
    hl_heap_t *h = unit_heap("");
    enum { N = 20000 };
    static void *blocks[N];
    job_t j = {h, blocks, N};
    pthread_t t;
    hl_heap_info_t first, again;
    cr_assert_eq(pthread_create(&t, NULL, alloc_and_exit, &j), 0);
    pthread_join(t, NULL);
    hl_heap_info(h, &first);
    free_all(&j);
    hl_heap_trim(h, 0);
    hl_heap_info(h, &again);
    cr_assert_eq(again.used, 0);
    cr_assert_eq(again.slabs, 0);
    cr_assert_eq(pthread_create(&t, NULL, alloc_and_exit, &j), 0);
    pthread_join(t, NULL);
    hl_heap_info(h, &again);
    cr_assert_eq(again.slabs, first.slabs, "the same slabs serve the second thread");
    cr_assert_eq(again.held, first.held, "no new memory from the OS");
    free_all(&j);
    hl_heap_flush_thread(h);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}
