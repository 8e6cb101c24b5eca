/* Peak utilisation before exhaustion of a fixed arena (heapledger heap objects only).
 *
 * usage: util ARENA [ROUNDS [CONFIG [DIST]]]     (ROUNDS defaults to 50)
 *   Each round creates a fresh heap with "arena=ARENA" followed by CONFIG and performs random
 *   actions until the first allocation fails: with probability 1/2 allocate, 1/4 free a
 *   random live block, 1/4 realloc a random live block to a new size (with no live block,
 *   allocate). Sizes are biased towards small ones: 90% are 8 + ⌊1016·u³⌋ bytes (8–1024 B,
 *   median 135 B) and 10% are uniform in 1–8 KiB (DIST "cubic", the default). DIST "gauss":
 *   each size from one of three Gaussians, mean 32, 160 or 256 B (sd mean/4, clipped to
 *   [1, 4·mean]); "wide": 85% uniform in 16–512 B, 15% uniform in 1–6 KiB. With a DIST the
 *   key names it (util.<DIST>.<ARENA>) and round k uses seed k + 1. A failed realloc also ends the
 * round (the block stays live at its old size). At that moment the utilisation is (requested bytes
 * of the live blocks) / ARENA. Figures: util.<ARENA> = mean utilisation over the rounds in %
 * (higher is better), and util.<ARENA>.min = the worst round; for diagnosis ("info"), means at the
 * failure of hl_heap_info's counters in % of the arena: util.<ARENA>.usable (usable bytes of live
 *   blocks), .free_tiny (free tiny slots), .free_mid (free TLSF bytes), .largest (largest
 *   free TLSF block), and .fail_size (mean size of the failing request, bytes).
 */
#include "bench.h"
#include "bench_alloc.h"

#include <stdio.h>
#include <string.h>

#ifndef BENCH_HEAP_API
#error "util measures heapledger arenas: build it with -DBENCH_HEAP_API"
#endif

typedef struct live_s {
    void *p;
    size_t n;
} live_t;

static int dist; /* 0 cubic, 1 gauss, 2 wide */

static size_t draw_size(bench_rng_t *r)
{
    if (dist == 1) {
        static const double mean[3] = {32, 160, 256};
        double m = mean[bench_rng_below(r, 3)];
        double x = bench_rng_gauss(r, m, m / 4);
        if (x < 1) x = 1;
        if (x > 4 * m) x = 4 * m;
        return (size_t)x;
    }
    if (dist == 2) {
        if (bench_rng_below(r, 100) < 85) return 16 + bench_rng_below(r, 512 - 16 + 1);
        return 1024 + bench_rng_below(r, 5 * 1024 + 1);
    }
    if (bench_rng_below(r, 10) == 0) return 1024 + bench_rng_below(r, 7 * 1024 + 1);
    double u = bench_rng_unit(r);
    return 8 + (size_t)(1016.0 * u * u * u);
}

/* One round; returns the live requested bytes at the first failed allocation and stores the
 * size of that request in *fail_size. */
static size_t round_until_exhausted(live_t *live, size_t cap, bench_rng_t *r, size_t *fail_size)
{
    size_t nlive = 0, bytes = 0;
    for (;;) {
        uint64_t a = bench_rng_below(r, 4);
        if (nlive == 0 || a < 2) {
            size_t n = draw_size(r);
            void *p = b_malloc(n);
            if (!p) {
                *fail_size = n;
                return bytes;
            }
            if (nlive == cap) bench_die("util: more than %zu live blocks: arena too large", cap);
            bench_touch(p, n);
            live[nlive++] = (live_t){p, n};
            bytes += n;
        } else {
            size_t i = bench_rng_below(r, nlive);
            if (a == 2) {
                b_free(live[i].p);
                bytes -= live[i].n;
                live[i] = live[--nlive];
            } else {
                size_t n = draw_size(r);
                void *p = b_realloc(live[i].p, n);
                if (!p) {
                    *fail_size = n;
                    return bytes;
                }
                bench_touch(p, n);
                bytes = bytes - live[i].n + n;
                live[i] = (live_t){p, n};
            }
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 5) bench_die("usage: util ARENA [ROUNDS [CONFIG [DIST]]]");
    const char *dname = argc > 4 ? argv[4] : NULL;
    if (dname && strcmp(dname, "gauss") == 0)
        dist = 1;
    else if (dname && strcmp(dname, "wide") == 0)
        dist = 2;
    else if (dname && strcmp(dname, "cubic") != 0)
        bench_die("util: unknown distribution '%s' (cubic, gauss, wide)", dname);
    size_t arena = bench_parse_size(argv[1], "arena size");
    uint64_t rounds = argc > 2 ? bench_parse_size(argv[2], "rounds") : 50;
    if (bench_quick()) rounds = 2;
    if (arena < 4096 || rounds == 0)
        bench_die("util: arena must be at least 4K and rounds positive");
    size_t cap = arena / 8;
    live_t *live = bench_mem(cap * sizeof *live);
    bench_rng_t rng;
    bench_rng_seed(&rng, 5);
    double sum = 0, worst = 1e9, usable = 0, free_tiny = 0, free_mid = 0, largest = 0, fails = 0;
    for (uint64_t k = 0; k < rounds; k++) {
        if (dname) bench_rng_seed(&rng, k + 1);
        bench_alloc_open(argc > 3 && *argv[3] ? argv[3] : NULL, argv[1]);
        size_t fail_size = 0;
        double u =
            100.0 * (double)round_until_exhausted(live, cap, &rng, &fail_size) / (double)arena;
        hl_heap_info_t info;
        hl_heap_info(bench_heap, &info);
        usable += 100.0 * (double)info.used / (double)arena;
        free_tiny += 100.0 * (double)info.free_tiny / (double)arena;
        free_mid += 100.0 * (double)info.free_mid / (double)arena;
        largest += 100.0 * (double)info.largest_free / (double)arena;
        fails += (double)fail_size;
        bench_alloc_close();
        sum += u;
        if (u < worst) worst = u;
    }
    char key[64], pre[40];
    snprintf(pre, sizeof pre, "util.%s%s%s", dname ? dname : "", dname ? "." : "", argv[1]);
    snprintf(key, sizeof key, "%s", pre);
    bench_result(key, sum / (double)rounds, "%", "higher");
    snprintf(key, sizeof key, "%s.min", pre);
    bench_result(key, worst, "%", "higher");
    static const char *const info_key[] = {"usable", "free_tiny", "free_mid", "largest",
                                           "fail_size"};
    const double info_sum[] = {usable, free_tiny, free_mid, largest, fails};
    for (size_t i = 0; i < sizeof info_key / sizeof info_key[0]; i++) {
        snprintf(key, sizeof key, "%s.%s", pre, info_key[i]);
        bench_result(key, info_sum[i] / (double)rounds, i < 4 ? "%" : "B", "info");
    }
    return 0;
}
