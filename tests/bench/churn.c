/* Thread churn with mid and large blocks: generations of short-lived threads.
 *
 * usage: churn GENERATIONS THREADS OPS
 *   Each generation starts THREADS threads and waits for them. A thread owns 64 slots; an
 *   operation picks a random slot, frees its block and allocates a new one: 85 % mid-sized
 *   (4 KiB .. 256 KiB, log-uniform), 15 % large (256 KiB .. 2 MiB, log-uniform), writing one
 *   byte in every page. When a thread ends it frees three quarters of its slots and hands the
 *   last quarter to its successor of the next generation, which frees them (blocks freed by a
 *   thread other than the one that allocated them, after that thread is gone). The last
 *   generation's hand-offs are freed by the main thread.
 * Figures:
 *   churn.<THREADS>t.<OPS>       ns per operation over the whole run (lower is better)
 *   churn.<THREADS>t.<OPS>.rss   resident set at the end, after everything was freed and
 *                                250 ms of small-block work, MiB (lower)
 */
#include "bench.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { SLOTS = 64, HANDOFF = SLOTS / 4 };

static uint64_t g_ops;
static void **g_handoff; /* [thread][HANDOFF] */

static size_t log_uniform(bench_rng_t *r, unsigned lo_log2, unsigned hi_log2)
{
    size_t base = (size_t)1 << (lo_log2 + bench_rng_below(r, hi_log2 - lo_log2));
    return base + bench_rng_below(r, base);
}

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg >> 32;
    uint64_t seed = (uintptr_t)arg & 0xffffffffu;
    void **mine = &g_handoff[id * HANDOFF];
    void *slot[SLOTS] = {0};
    bench_rng_t rng;
    bench_rng_seed(&rng, seed);
    for (size_t i = 0; i < HANDOFF; i++) { /* the predecessor's blocks */
        free(mine[i]);
        mine[i] = NULL;
    }
    for (uint64_t k = 0; k < g_ops; k++) {
        size_t i = bench_rng_below(&rng, SLOTS);
        free(slot[i]);
        size_t n =
            bench_rng_below(&rng, 100) < 85 ? log_uniform(&rng, 12, 18) : log_uniform(&rng, 18, 21);
        void *p = malloc(n);
        if (!p) bench_die("churn: malloc(%zu) failed", n);
        bench_touch_pages(p, n);
        slot[i] = p;
    }
    for (size_t i = 0; i < SLOTS - HANDOFF; i++)
        free(slot[i]);
    for (size_t i = 0; i < HANDOFF; i++)
        mine[i] = slot[SLOTS - HANDOFF + i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) bench_die("usage: churn GENERATIONS THREADS OPS");
    uint64_t gens = bench_parse_size(argv[1], "generation count");
    unsigned nt = (unsigned)bench_parse_size(argv[2], "thread count");
    uint64_t ops = bench_parse_size(argv[3], "operation count");
    if (gens == 0 || ops == 0) bench_die("churn: generations and operations must be positive");
    if (nt == 0 || nt > 64) bench_die("churn: thread count must be 1..64");
    gens = bench_iters(gens);
    g_ops = ops;
    g_handoff = bench_mem(nt * HANDOFF * sizeof *g_handoff);
    pthread_t *th = bench_mem(nt * sizeof *th);

    uint64_t t0 = bench_now_ns();
    for (uint64_t g = 0; g < gens; g++) {
        for (unsigned t = 0; t < nt; t++) {
            uintptr_t arg = ((uintptr_t)t << 32) | (uint32_t)(g * nt + t + 1);
            if (pthread_create(&th[t], NULL, worker, (void *)arg) != 0)
                bench_die("churn: pthread_create failed");
        }
        for (unsigned t = 0; t < nt; t++)
            pthread_join(th[t], NULL);
    }
    uint64_t t1 = bench_now_ns();
    for (size_t i = 0; i < nt * HANDOFF; i++)
        free(g_handoff[i]);
    bench_idle_small(bench_quick() ? 20 : 250);
    double rss = (double)bench_rss_kib() / 1024.0;

    char key[64];
    snprintf(key, sizeof key, "churn.%ut.%llu", nt, (unsigned long long)ops);
    bench_result(key, (double)(t1 - t0) / (double)(gens * nt * ops), "ns/op", "lower");
    snprintf(key, sizeof key, "churn.%ut.%llu.rss", nt, (unsigned long long)ops);
    bench_result(key, rss, "MiB", "lower");
    return 0;
}
