/* Server-like workload with cross-thread frees (Larson-style).
 *
 * usage: larson NTHREADS [ROUNDS [OPS_PER_ROUND]]
 *   There are NTHREADS slot arrays of 1000 blocks (16–1024 B). In round r thread t works on
 *   array (t + r) mod NTHREADS: each operation frees the block of a random slot and allocates
 *   a replacement (first and last byte written). A barrier ends each round, so every block
 *   allocated by one thread is freed by another one a round later.
 * Figure: larson.<N>t in M ops/s over all threads, one op = one free + one malloc (higher is
 *   better).
 */
#include "bench.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { SLOTS = 1000 };

static unsigned g_threads;
static uint64_t g_rounds, g_ops;
static void ***g_arrays;
static pthread_barrier_t g_barrier;

static void *worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    bench_rng_t rng;
    bench_rng_seed(&rng, 7 + id);
    void **own = g_arrays[id];
    for (size_t i = 0; i < SLOTS; i++) {
        size_t n = 16 + bench_rng_below(&rng, 1009);
        own[i] = malloc(n);
        if (!own[i]) bench_die("larson: malloc(%zu) failed", n);
        bench_touch(own[i], n);
    }
    pthread_barrier_wait(&g_barrier); /* all arrays filled */
    pthread_barrier_wait(&g_barrier); /* clock started */
    for (uint64_t r = 0; r < g_rounds; r++) {
        void **slot = g_arrays[(id + r) % g_threads];
        for (uint64_t k = 0; k < g_ops; k++) {
            uint64_t x = bench_rng_next(&rng);
            size_t i = (size_t)((x >> 32) % SLOTS);
            size_t n = 16 + (size_t)((x & 0xffffffffu) % 1009);
            free(slot[i]);
            void *p = malloc(n);
            if (!p) bench_die("larson: malloc(%zu) failed", n);
            bench_touch(p, n);
            slot[i] = p;
        }
        pthread_barrier_wait(&g_barrier);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) bench_die("usage: larson NTHREADS [ROUNDS [OPS_PER_ROUND]]");
    g_threads = (unsigned)bench_parse_size(argv[1], "thread count");
    if (g_threads < 2 || g_threads > 64)
        bench_die("larson: thread count must be 2..64 (frees must cross threads)");
    g_rounds = bench_iters(argc > 2 ? bench_parse_size(argv[2], "rounds") : 400);
    g_ops = argc > 3 ? bench_parse_size(argv[3], "ops per round") : 10000;

    g_arrays = bench_mem(g_threads * sizeof *g_arrays);
    for (unsigned t = 0; t < g_threads; t++)
        g_arrays[t] = bench_mem(SLOTS * sizeof(void *));
    pthread_t *th = bench_mem(g_threads * sizeof *th);
    pthread_barrier_init(&g_barrier, NULL, g_threads + 1);
    for (unsigned t = 0; t < g_threads; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t) != 0)
            bench_die("larson: pthread_create failed");
    pthread_barrier_wait(&g_barrier);
    uint64_t t0 = bench_now_ns();
    pthread_barrier_wait(&g_barrier);
    for (uint64_t r = 0; r < g_rounds; r++)
        pthread_barrier_wait(&g_barrier);
    uint64_t t1 = bench_now_ns();
    for (unsigned t = 0; t < g_threads; t++)
        pthread_join(th[t], NULL);
    for (unsigned t = 0; t < g_threads; t++)
        for (size_t i = 0; i < SLOTS; i++)
            free(g_arrays[t][i]);

    char key[64];
    snprintf(key, sizeof key, "larson.%ut", g_threads);
    bench_result(key, (double)(g_rounds * g_ops * g_threads) / (double)(t1 - t0) * 1e3, "Mops/s",
                 "higher");
    return 0;
}
