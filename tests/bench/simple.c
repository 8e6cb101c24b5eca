/* Simple loop in the manner of a glibc-style "malloc simple" benchmark.
 *
 * usage: simple SIZE NBLOCKS [ROUNDS]
 *   Each round allocates NBLOCKS blocks of SIZE bytes (writing their first and last byte),
 *   then frees them in allocation order, so up to NBLOCKS blocks are live at once.
 * Figure: simple.<SIZE>x<NBLOCKS> in ns per malloc+free pair (lower is better).
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) bench_die("usage: simple SIZE NBLOCKS [ROUNDS]");
    size_t size = bench_parse_size(argv[1], "size");
    size_t nblocks = bench_parse_size(argv[2], "block count");
    if (size == 0 || nblocks == 0) bench_die("simple: size and block count must be positive");
    uint64_t pairs = argc > 3 ? bench_parse_size(argv[3], "rounds") * nblocks : 12000000;
    uint64_t rounds = bench_iters(pairs / nblocks ? pairs / nblocks : 1);

    void **blk = bench_mem(nblocks * sizeof *blk);
    uint64_t t0 = 0;
    /* Round 0 warms up and is not timed. */
    for (uint64_t r = 0; r <= rounds; r++) {
        if (r == 1) t0 = bench_now_ns();
        for (size_t i = 0; i < nblocks; i++) {
            void *p = malloc(size);
            if (!p) bench_die("simple: malloc(%zu) failed", size);
            bench_touch(p, size);
            blk[i] = p;
        }
        for (size_t i = 0; i < nblocks; i++)
            free(blk[i]);
    }
    uint64_t t1 = bench_now_ns();

    char key[64];
    snprintf(key, sizeof key, "simple.%zux%zu", size, nblocks);
    bench_result(key, (double)(t1 - t0) / (double)(rounds * nblocks), "ns/pair", "lower");
    return 0;
}
