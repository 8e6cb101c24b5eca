/* Large-block replacement: a small working set of big buffers, replaced at random.
 *
 * usage: large [SLOTS [ITERS [MIN MAX]]]
 *   SLOTS buffers (default 4) live at once. An iteration picks a random slot, frees its
 *   buffer and allocates a new one of a size uniform in [MIN, MAX] (default 5M..25M), then
 *   writes one byte in each of its pages (a program fills the buffers it allocates). ITERS
 *   iterations (default 400) after one untimed round that fills every slot.
 *   Then the burst ends: every buffer is freed, and the program keeps running for 250 ms on
 *   small and mid-sized blocks (a ring of 64 slots, 16 B to 64 KiB) — the phase in which an
 *   allocator that caches freed memory should give it back to the OS.
 * Figures:
 *   large.replace   ns per iteration (lower is better)
 *   large.rss_free  resident set right after the last buffer was freed, MiB (lower)
 *   large.rss_idle  resident set after the 250 ms of small-block work, MiB (lower)
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc > 5 || argc == 4) bench_die("usage: large [SLOTS [ITERS [MIN MAX]]]");
    size_t nslots = argc > 1 ? bench_parse_size(argv[1], "slot count") : 4;
    uint64_t iters = bench_iters(argc > 2 ? bench_parse_size(argv[2], "iterations") : 400);
    size_t lo = argc > 3 ? bench_parse_size(argv[3], "minimum size") : (size_t)5 << 20;
    size_t hi = argc > 4 ? bench_parse_size(argv[4], "maximum size") : (size_t)25 << 20;
    if (nslots == 0 || nslots > 64) bench_die("large: slot count must be 1..64");
    if (lo == 0 || hi < lo) bench_die("large: sizes must satisfy 0 < MIN <= MAX");
    if (iters == 0) iters = 1;

    void **slot = bench_mem(nslots * sizeof *slot);
    bench_rng_t rng;
    bench_rng_seed(&rng, 42);
    for (size_t i = 0; i < nslots; i++) {
        size_t n = lo + bench_rng_below(&rng, hi - lo + 1);
        slot[i] = malloc(n);
        if (!slot[i]) bench_die("large: malloc(%zu) failed", n);
        bench_touch_pages(slot[i], n);
    }
    uint64_t t0 = bench_now_ns();
    for (uint64_t k = 0; k < iters; k++) {
        size_t i = bench_rng_below(&rng, nslots);
        free(slot[i]);
        size_t n = lo + bench_rng_below(&rng, hi - lo + 1);
        slot[i] = malloc(n);
        if (!slot[i]) bench_die("large: malloc(%zu) failed", n);
        bench_touch_pages(slot[i], n);
    }
    uint64_t t1 = bench_now_ns();
    for (size_t i = 0; i < nslots; i++)
        free(slot[i]);
    double rss_free = (double)bench_rss_kib() / 1024.0;
    bench_idle_small(bench_quick() ? 20 : 250);
    double rss_idle = (double)bench_rss_kib() / 1024.0;

    bench_result("large.replace", (double)(t1 - t0) / (double)iters, "ns/iter", "lower");
    bench_result("large.rss_free", rss_free, "MiB", "lower");
    bench_result("large.rss_idle", rss_idle, "MiB", "lower");
    return 0;
}
