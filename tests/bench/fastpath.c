/* Tiny fast-path probes: the cache-hit malloc+free pair and the free push.
 *
 * usage: fastpath loop N [SIZE]      N × { p = malloc(SIZE); free(p); }, prints nothing
 *                                    (run under callgrind by callgrind.sh with N and 2N)
 *        fastpath cycles [SIZE]      rdtsc measurements, prints RESULT lines
 *   SIZE defaults to 64 B.
 *   cycles: fastpath.pair = TSC ticks per malloc+free pair (median over 2000 timed loops of
 *   256 pairs); fastpath.free / fastpath.malloc = ticks per call in batches of 16 frees of
 *   just-allocated blocks, then 16 mallocs served from what those frees cached (median over
 *   20000 batches). The median empty-timer reading is subtracted before dividing by the
 *   batch length. Ticks are TSC ticks (constant rate), not core clock cycles.
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BATCH = 16, PAIRS = 256 };

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static double median_per_op(uint64_t *d, size_t n, unsigned per)
{
    qsort(d, n, sizeof *d, cmp_u64);
    uint64_t floor_ticks = bench_tsc_floor();
    uint64_t m = d[n / 2] > floor_ticks ? d[n / 2] - floor_ticks : 0;
    return (double)m / per;
}

static void cycles(size_t size)
{
    enum { LOOPS = 2000, BATCHES = 20000 };
    uint64_t *d = bench_mem(BATCHES * sizeof *d);
    void *blk[BATCH];
    for (int i = 0; i < 100000; i++) /* warm the thread cache */
        free(malloc(size));

    uint64_t loops = bench_iters(LOOPS);
    for (uint64_t k = 0; k < loops; k++) {
        uint64_t t0 = bench_rdtsc();
        for (int i = 0; i < PAIRS; i++) {
            void *p = malloc(size);
            free(p);
        }
        d[k] = bench_rdtsc() - t0;
    }
    bench_result("fastpath.pair", median_per_op(d, loops, PAIRS), "ticks", "lower");

    uint64_t batches = bench_iters(BATCHES);
    uint64_t *m = bench_mem(BATCHES * sizeof *m);
    for (int i = 0; i < BATCH; i++)
        blk[i] = malloc(size);
    for (uint64_t k = 0; k < batches; k++) {
        uint64_t t0 = bench_rdtsc();
        for (int i = 0; i < BATCH; i++)
            free(blk[i]);
        uint64_t t1 = bench_rdtsc();
        for (int i = 0; i < BATCH; i++)
            blk[i] = malloc(size);
        uint64_t t2 = bench_rdtsc();
        d[k] = t1 - t0;
        m[k] = t2 - t1;
    }
    for (int i = 0; i < BATCH; i++)
        free(blk[i]);
    bench_result("fastpath.free", median_per_op(d, batches, BATCH), "ticks", "lower");
    bench_result("fastpath.malloc", median_per_op(m, batches, BATCH), "ticks", "lower");
    bench_result("fastpath.tsc_ghz", bench_tsc_per_ns(), "GHz", "info");
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "loop") == 0 && argc <= 4) {
        uint64_t n = bench_parse_size(argv[2], "iterations");
        size_t size = argc > 3 ? bench_parse_size(argv[3], "size") : 64;
        for (uint64_t i = 0; i < n; i++) {
            void *p = malloc(size);
            free(p);
        }
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "cycles") == 0 && argc <= 3) {
        cycles(argc > 2 ? bench_parse_size(argv[2], "size") : 64);
        return 0;
    }
    bench_die("usage: fastpath loop N [SIZE] | fastpath cycles [SIZE]");
}
