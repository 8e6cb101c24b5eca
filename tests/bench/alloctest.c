/* Random sizes over a live set, per thread (the shape of the alloc-test benchmark).
 *
 * usage: alloctest NTHREADS [OPS [LIVE]]
 *   Each thread keeps LIVE slots (default 8192), filled at the start. An operation picks a
 *   random slot, frees its block and allocates a replacement whose size is drawn from a mix
 *   weighted towards small blocks: 60% 8–64 B, 30% 64–512 B, 9% 512 B–4 KiB, 1% 4–32 KiB
 *   (uniform inside each band); the first and last byte are written. Blocks never leave
 *   their thread. At the end every thread frees its live set.
 * Figure: alloctest.<N>t in M ops/s over all threads, one op = one free + one malloc (higher
 *   is better).
 */
#include "bench.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t g_ops, g_live;
static pthread_barrier_t g_start;
static uint64_t *g_t0, *g_t1;

static size_t pick_size(bench_rng_t *r)
{
    uint64_t band = bench_rng_below(r, 100);
    if (band < 60) return 8 + (size_t)bench_rng_below(r, 57);
    if (band < 90) return 64 + (size_t)bench_rng_below(r, 449);
    if (band < 99) return 512 + (size_t)bench_rng_below(r, 3585);
    return 4096 + (size_t)bench_rng_below(r, 28673);
}

static void *worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    bench_rng_t rng;
    bench_rng_seed(&rng, 1234 + id);
    void **slot = bench_mem(g_live * sizeof *slot);
    for (uint64_t i = 0; i < g_live; i++) {
        size_t n = pick_size(&rng);
        slot[i] = malloc(n);
        if (!slot[i]) bench_die("alloctest: malloc(%zu) failed", n);
        bench_touch(slot[i], n);
    }
    pthread_barrier_wait(&g_start);
    g_t0[id] = bench_now_ns();
    for (uint64_t k = 0; k < g_ops; k++) {
        uint64_t i = bench_rng_below(&rng, g_live);
        size_t n = pick_size(&rng);
        free(slot[i]);
        void *p = malloc(n);
        if (!p) bench_die("alloctest: malloc(%zu) failed", n);
        bench_touch(p, n);
        slot[i] = p;
    }
    g_t1[id] = bench_now_ns();
    for (uint64_t i = 0; i < g_live; i++)
        free(slot[i]);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) bench_die("usage: alloctest NTHREADS [OPS [LIVE]]");
    unsigned nt = (unsigned)bench_parse_size(argv[1], "thread count");
    if (nt < 1 || nt > 64) bench_die("alloctest: thread count must be 1..64");
    g_ops = bench_iters(argc > 2 ? bench_parse_size(argv[2], "ops per thread") : 4000000);
    g_live = argc > 3 ? bench_parse_size(argv[3], "live set") : 8192;
    if (g_live < 1 || g_live > (1u << 22)) bench_die("alloctest: live set must be 1..4M slots");
    pthread_t *th = bench_mem(nt * sizeof *th);
    g_t0 = bench_mem(nt * sizeof *g_t0);
    g_t1 = bench_mem(nt * sizeof *g_t1);
    pthread_barrier_init(&g_start, NULL, nt);
    for (unsigned t = 0; t < nt; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t) != 0)
            bench_die("alloctest: pthread_create failed");
    uint64_t t0 = UINT64_MAX, t1 = 0;
    for (unsigned t = 0; t < nt; t++) {
        pthread_join(th[t], NULL);
        t0 = g_t0[t] < t0 ? g_t0[t] : t0;
        t1 = g_t1[t] > t1 ? g_t1[t] : t1;
    }

    char key[64];
    snprintf(key, sizeof key, "alloctest.%ut", nt);
    bench_result(key, (double)(g_ops * nt) / (double)(t1 - t0) * 1e3, "Mops/s", "higher");
    return 0;
}
