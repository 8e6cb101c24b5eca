/* Mixed small blocks freed in LIFO and FIFO order, locally or by another thread (the shape of
 * the shbench programs: sh6bench frees its own blocks, sh8bench hands them over).
 *
 * usage: shbench local|cross NTHREADS [ROUNDS [BATCH]]
 *   In each round every thread allocates BATCH blocks whose sizes sweep a sawtooth over
 *   16..400 B (every size class of the range, in turn) and writes their first and last byte.
 *   The batch is then freed in two orders: the first half from its oldest block onwards
 *   (FIFO), the second half from its newest block backwards (LIFO). In `local` mode the thread
 *   frees its own batch right away; in `cross` mode a barrier ends the allocation phase and
 *   each thread frees the batch its neighbour (thread t+1) allocated in that round, so every
 *   block is freed by a thread that did not allocate it.
 * Figure: shbench.<mode>.<N>t in M ops/s over all threads, one op = one malloc + one free
 *   (higher is better).
 */
#include "bench.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned g_threads;
static int g_cross;
static uint64_t g_rounds, g_batch;
static void ***g_bufs; /* per thread: two batches, alternating rounds */
static pthread_barrier_t g_barrier;

static void fill(void **v, uint64_t n, uint64_t *size)
{
    for (uint64_t i = 0; i < n; i++) {
        size_t sz = (size_t)*size;
        v[i] = malloc(sz);
        if (!v[i]) bench_die("shbench: malloc(%zu) failed", sz);
        bench_touch(v[i], sz);
        *size = *size >= 400 ? 16 : *size + 13;
    }
}

static void drain(void **v, uint64_t n)
{
    uint64_t half = n / 2;
    for (uint64_t i = 0; i < half; i++) /* FIFO: oldest first */
        free(v[i]);
    for (uint64_t i = n; i > half; i--) /* LIFO: newest first */
        free(v[i - 1]);
}

static void *worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    uint64_t size = 16 + 7 * id;
    pthread_barrier_wait(&g_barrier); /* clock started */
    for (uint64_t r = 0; r < g_rounds; r++) {
        void **mine = g_bufs[2 * id + (r & 1)];
        fill(mine, g_batch, &size);
        if (!g_cross) {
            drain(mine, g_batch);
            continue;
        }
        /* Round r's batches are all allocated; the neighbour's batch of round r - 1 (the other
         * buffer) was freed before this barrier, so it may be refilled in round r + 1. */
        pthread_barrier_wait(&g_barrier);
        drain(g_bufs[2 * ((id + 1) % g_threads) + (r & 1)], g_batch);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 5) bench_die("usage: shbench local|cross NTHREADS [ROUNDS [BATCH]]");
    if (strcmp(argv[1], "local") == 0)
        g_cross = 0;
    else if (strcmp(argv[1], "cross") == 0)
        g_cross = 1;
    else
        bench_die("shbench: mode must be 'local' or 'cross', not '%s'", argv[1]);
    g_threads = (unsigned)bench_parse_size(argv[2], "thread count");
    if (g_threads < 1 || g_threads > 64) bench_die("shbench: thread count must be 1..64");
    if (g_cross && g_threads < 2)
        bench_die("shbench: cross mode needs at least 2 threads (frees must cross threads)");
    g_rounds = bench_iters(argc > 3 ? bench_parse_size(argv[3], "rounds") : 2000);
    g_batch = argc > 4 ? bench_parse_size(argv[4], "batch") : 2000;
    if (g_batch < 2 || g_batch > (1u << 20)) bench_die("shbench: batch must be 2..1M blocks");

    g_bufs = bench_mem(2 * g_threads * sizeof *g_bufs);
    for (unsigned i = 0; i < 2 * g_threads; i++)
        g_bufs[i] = bench_mem(g_batch * sizeof(void *));
    pthread_t *th = bench_mem(g_threads * sizeof *th);
    pthread_barrier_init(&g_barrier, NULL, g_threads + 1);
    for (unsigned t = 0; t < g_threads; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t) != 0)
            bench_die("shbench: pthread_create failed");
    uint64_t t0 = bench_now_ns();
    pthread_barrier_wait(&g_barrier);
    if (g_cross)
        for (uint64_t r = 0; r < g_rounds; r++)
            pthread_barrier_wait(&g_barrier);
    for (unsigned t = 0; t < g_threads; t++)
        pthread_join(th[t], NULL);
    uint64_t t1 = bench_now_ns();

    char key[64];
    snprintf(key, sizeof key, "shbench.%s.%ut", argv[1], g_threads);
    bench_result(key, (double)(g_rounds * g_batch * g_threads) / (double)(t1 - t0) * 1e3, "Mops/s",
                 "higher");
    return 0;
}
