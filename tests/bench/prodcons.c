/* Producer/consumer queue: every block is allocated by one thread and freed by another.
 *
 * usage: prodcons NPAIRS [ITEMS]
 *   NPAIRS producer/consumer pairs, each joined by a bounded single-producer/single-consumer
 *   ring of 4096 pointers. A producer allocates ITEMS blocks of 16–1024 B, writes their first
 *   and last byte and pushes them; its consumer pops, reads the first byte and frees. A full or
 *   empty ring makes the waiting side yield the CPU.
 * Figure: prodcons.<N>p in M blocks/s over all pairs (higher is better).
 */
#include "bench.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

enum { RING = 4096 };

typedef struct ring_s {
    unsigned id;                /* pair number */
    _Alignas(64) uint64_t head; /* next slot the consumer reads; written by the consumer */
    _Alignas(64) uint64_t tail; /* next slot the producer writes; written by the producer */
    _Alignas(64) void *item[RING];
} ring_t;

static uint64_t g_items;
static pthread_barrier_t g_start;
/* Start and end time per thread: the run spans the earliest start to the latest end. */
static uint64_t *g_t0, *g_t1;

static void *producer(void *arg)
{
    ring_t *q = arg;
    bench_rng_t rng;
    bench_rng_seed(&rng, (uint64_t)(uintptr_t)q);
    uint64_t tail = 0, head_seen = 0;
    pthread_barrier_wait(&g_start);
    g_t0[2 * q->id] = bench_now_ns();
    for (uint64_t k = 0; k < g_items; k++) {
        size_t n = 16 + bench_rng_below(&rng, 1009);
        void *p = malloc(n);
        if (!p) bench_die("prodcons: malloc(%zu) failed", n);
        bench_touch(p, n);
        while (tail - head_seen == RING) {
            head_seen = __atomic_load_n(&q->head, __ATOMIC_ACQUIRE);
            if (tail - head_seen == RING) sched_yield();
        }
        q->item[tail % RING] = p;
        __atomic_store_n(&q->tail, ++tail, __ATOMIC_RELEASE);
    }
    g_t1[2 * q->id] = bench_now_ns();
    return NULL;
}

static void *consumer(void *arg)
{
    ring_t *q = arg;
    uint64_t head = 0, tail_seen = 0, sum = 0;
    pthread_barrier_wait(&g_start);
    g_t0[2 * q->id + 1] = bench_now_ns();
    while (head < g_items) {
        while (head == tail_seen) {
            tail_seen = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);
            if (head == tail_seen) sched_yield();
        }
        void *p = q->item[head % RING];
        sum += *(volatile unsigned char *)p;
        free(p);
        __atomic_store_n(&q->head, ++head, __ATOMIC_RELEASE);
    }
    g_t1[2 * q->id + 1] = bench_now_ns();
    return (void *)(uintptr_t)sum;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) bench_die("usage: prodcons NPAIRS [ITEMS]");
    unsigned np = (unsigned)bench_parse_size(argv[1], "pair count");
    if (np == 0 || np > 32) bench_die("prodcons: pair count must be 1..32");
    g_items = bench_iters(argc > 2 ? bench_parse_size(argv[2], "items") : 2000000);
    ring_t *q = bench_mem(np * sizeof *q);
    pthread_t *th = bench_mem(2 * np * sizeof *th);
    g_t0 = bench_mem(2 * np * sizeof *g_t0);
    g_t1 = bench_mem(2 * np * sizeof *g_t1);
    pthread_barrier_init(&g_start, NULL, 2 * np);
    for (unsigned i = 0; i < np; i++) {
        q[i].id = i;
        if (pthread_create(&th[2 * i], NULL, producer, &q[i]) != 0 ||
            pthread_create(&th[2 * i + 1], NULL, consumer, &q[i]) != 0)
            bench_die("prodcons: pthread_create failed");
    }
    uint64_t t0 = UINT64_MAX, t1 = 0;
    for (unsigned i = 0; i < 2 * np; i++) {
        pthread_join(th[i], NULL);
        t0 = g_t0[i] < t0 ? g_t0[i] : t0;
        t1 = g_t1[i] > t1 ? g_t1[i] : t1;
    }

    char key[64];
    snprintf(key, sizeof key, "prodcons.%up", np);
    bench_result(key, (double)(g_items * np) / (double)(t1 - t0) * 1e3, "Mblocks/s", "higher");
    return 0;
}
