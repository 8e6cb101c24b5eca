/* Threaded loop in the manner of a glibc-style "malloc thread" benchmark.
 *
 * usage: thread NTHREADS [ITERS]
 *   Each thread owns 1024 slots. An iteration picks a random slot, frees its block if it
 *   holds one, and allocates a new block of a size biased towards small ones
 *   (8 + 4088·u⁴ bytes, u uniform in [0,1): median 250 B, 20% above 1 KiB), writing its
 *   first and last byte. All threads start together (barrier) and run ITERS iterations each; the
 * run spans the earliest thread start to the latest thread end. Figure: thread.<N>t in ns per
 * iteration, wall time / ITERS (lower is better). With more threads than cores the figure includes
 * time-sharing: compare allocators, not thread counts.
 */
#include "bench.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { SLOTS = 1024 };

static uint64_t g_iters;
static pthread_barrier_t g_start;
/* Per-thread start and end times: the main thread may be descheduled right after the
 * barrier, so the run spans the earliest start to the latest end. */
static uint64_t *g_t0, *g_t1;

static size_t pick_size(bench_rng_t *r)
{
    double u = bench_rng_unit(r);
    return 8 + (size_t)(4088.0 * u * u * u * u);
}

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    void **slot = bench_mem(SLOTS * sizeof *slot);
    bench_rng_t rng;
    bench_rng_seed(&rng, 1000 + id);
    pthread_barrier_wait(&g_start);
    g_t0[id] = bench_now_ns();
    for (uint64_t k = 0; k < g_iters; k++) {
        size_t i = bench_rng_below(&rng, SLOTS);
        free(slot[i]);
        size_t n = pick_size(&rng);
        void *p = malloc(n);
        if (!p) bench_die("thread: malloc(%zu) failed", n);
        bench_touch(p, n);
        slot[i] = p;
    }
    g_t1[id] = bench_now_ns();
    for (size_t i = 0; i < SLOTS; i++)
        free(slot[i]);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) bench_die("usage: thread NTHREADS [ITERS]");
    unsigned nt = (unsigned)bench_parse_size(argv[1], "thread count");
    if (nt == 0 || nt > 64) bench_die("thread: thread count must be 1..64");
    g_iters = bench_iters(argc > 2 ? bench_parse_size(argv[2], "iterations") : 3000000);
    pthread_t *th = bench_mem(nt * sizeof *th);
    g_t0 = bench_mem(nt * sizeof *g_t0);
    g_t1 = bench_mem(nt * sizeof *g_t1);
    pthread_barrier_init(&g_start, NULL, nt);
    for (unsigned t = 0; t < nt; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t) != 0)
            bench_die("thread: pthread_create failed");
    uint64_t t0 = UINT64_MAX, t1 = 0;
    for (unsigned t = 0; t < nt; t++) {
        pthread_join(th[t], NULL);
        t0 = g_t0[t] < t0 ? g_t0[t] : t0;
        t1 = g_t1[t] > t1 ? g_t1[t] : t1;
    }

    char key[64];
    snprintf(key, sizeof key, "thread.%ut", nt);
    bench_result(key, (double)(t1 - t0) / (double)g_iters, "ns/iter", "lower");
    return 0;
}
