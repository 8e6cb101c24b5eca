/* Cross-thread frees under the preloaded allocator (liballoc/tiny.h, remote lists).
 *
 * usage: remote_free [PAIRS [ITEMS]]   (defaults 3 and 100000)
 *   Two phases, each: PAIRS producer/consumer pairs joined by single-producer/single-consumer
 *   rings (every block is freed by another thread than the one that allocated it; sizes
 *   16–4096 B, contents checked before each free) while a churn thread allocates and frees
 *   blocks of the same sizes, so the class locks are often busy when consumers return slots.
 *   After each phase, with every thread joined: malloc_trim(0), the heap check must find no
 *   broken invariant, and the heap statistics go to stderr (heapledger_print_stats) for
 *   remote_free.sh to compare. Prints "remote_free: ok" on stdout.
 */
#include "heapledger.h"

#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { RING = 1024 };

typedef struct ring_s {
    unsigned items;
    _Alignas(64) unsigned head;
    _Alignas(64) unsigned tail;
    _Alignas(64) unsigned char *slot[RING];
} ring_t;

static int g_stop;

static void die(const char *msg)
{
    if (write(2, msg, strlen(msg)) < 0) _exit(2);
    _exit(1);
}

static size_t next_size(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return 16 + *x % 4081;
}

static void *produce(void *arg)
{
    ring_t *q = arg;
    uint64_t x = 0x9e3779b97f4a7c15ull ^ (uintptr_t)q;
    for (unsigned k = 0; k < q->items; k++) {
        size_t n = next_size(&x);
        unsigned char *p = malloc(n);
        if (!p) die("remote_free: malloc failed\n");
        memset(p + 2, (int)(n & 0xff), n - 2);
        p[0] = (unsigned char)(n >> 8);
        p[1] = (unsigned char)n;
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
        size_t n = (size_t)p[0] << 8 | p[1];
        if (n < 16 || n > 4096)
            die("remote_free: a block's length bytes changed before its free\n");
        for (size_t i = 2; i < n; i++)
            if (p[i] != (unsigned char)n)
                die("remote_free: a block's contents changed before its free\n");
        free(p);
        __atomic_store_n(&q->head, q->head + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void *churn(void *arg)
{
    (void)arg;
    uint64_t x = 12345;
    void *keep[64] = {0};
    for (unsigned i = 0; !__atomic_load_n(&g_stop, __ATOMIC_ACQUIRE); i++) {
        free(keep[i % 64]);
        keep[i % 64] = malloc(next_size(&x));
    }
    for (unsigned i = 0; i < 64; i++)
        free(keep[i]);
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned pairs = argc > 1 ? (unsigned)atoi(argv[1]) : 3;
    unsigned items = argc > 2 ? (unsigned)atoi(argv[2]) : 100000;
    if (pairs < 1 || pairs > 16 || items < 1)
        die("usage: remote_free [PAIRS 1..16 [ITEMS >= 1]]\n");
    if (!heapledger_check_heap || !heapledger_print_stats)
        die("remote_free: run it with LD_PRELOAD=libheapledger.so\n");
    /* Rings from mmap: the allocator under test sees only the workload's requests. */
    ring_t *q =
        mmap(NULL, pairs * sizeof *q, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (q == MAP_FAILED) die("remote_free: mmap failed\n");
    for (int phase = 0; phase < 2; phase++) {
        pthread_t th[32], ch;
        memset(q, 0, pairs * sizeof *q);
        __atomic_store_n(&g_stop, 0, __ATOMIC_RELEASE);
        if (pthread_create(&ch, NULL, churn, NULL)) die("remote_free: pthread_create failed\n");
        for (unsigned i = 0; i < pairs; i++) {
            q[i].items = items;
            if (pthread_create(&th[2 * i], NULL, produce, &q[i]) ||
                pthread_create(&th[2 * i + 1], NULL, consume, &q[i]))
                die("remote_free: pthread_create failed\n");
        }
        for (unsigned i = 0; i < 2 * pairs; i++)
            pthread_join(th[i], NULL);
        __atomic_store_n(&g_stop, 1, __ATOMIC_RELEASE);
        pthread_join(ch, NULL);
        malloc_trim(0);
        if (heapledger_check_heap() != 0)
            die("remote_free: the heap check found broken invariants\n");
        heapledger_print_stats();
    }
    printf("remote_free: ok\n");
    return 0;
}
