/* Peak utilisation before exhaustion of a fixed arena (heapledger heap objects only).
 *
 * usage: util ARENA [ROUNDS [CONFIG]]        (ROUNDS defaults to 50)
 *   Each round creates a fresh heap with "arena=ARENA" followed by CONFIG and performs random
 *   actions until the first allocation fails: with probability 1/2 allocate, 1/4 free a
 *   random live block, 1/4 realloc a random live block to a new size (with no live block,
 *   allocate). Sizes are biased towards small ones: 90% are 8 + ⌊1016·u³⌋ bytes (8–1024 B,
 *   median 135 B) and 10% are uniform in 1–8 KiB. A failed realloc also ends the round (the
 *   block stays live at its old size). At that moment the utilisation is
 *   (requested bytes of the live blocks) / ARENA.
 * Figures: util.<ARENA> = mean utilisation over the rounds in % (higher is better), and
 *   util.<ARENA>.min = the worst round.
 */
#include "bench.h"
#include "bench_alloc.h"

#include <stdio.h>

#ifndef BENCH_HEAP_API
#error "util measures heapledger arenas: build it with -DBENCH_HEAP_API"
#endif

typedef struct live_s {
    void *p;
    size_t n;
} live_t;

static size_t draw_size(bench_rng_t *r)
{
    if (bench_rng_below(r, 10) == 0) return 1024 + bench_rng_below(r, 7 * 1024 + 1);
    double u = bench_rng_unit(r);
    return 8 + (size_t)(1016.0 * u * u * u);
}

/* One round; returns the live requested bytes at the first failed allocation. */
static size_t round_until_exhausted(live_t *live, size_t cap, bench_rng_t *r)
{
    size_t nlive = 0, bytes = 0;
    for (;;) {
        uint64_t a = bench_rng_below(r, 4);
        if (nlive == 0 || a < 2) {
            size_t n = draw_size(r);
            void *p = b_malloc(n);
            if (!p) return bytes;
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
                if (!p) return bytes;
                bench_touch(p, n);
                bytes = bytes - live[i].n + n;
                live[i] = (live_t){p, n};
            }
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) bench_die("usage: util ARENA [ROUNDS [CONFIG]]");
    size_t arena = bench_parse_size(argv[1], "arena size");
    uint64_t rounds = argc > 2 ? bench_parse_size(argv[2], "rounds") : 50;
    if (bench_quick()) rounds = 2;
    if (arena < 4096 || rounds == 0)
        bench_die("util: arena must be at least 4K and rounds positive");
    size_t cap = arena / 8;
    live_t *live = bench_mem(cap * sizeof *live);
    bench_rng_t rng;
    bench_rng_seed(&rng, 5);
    double sum = 0, worst = 1e9;
    for (uint64_t k = 0; k < rounds; k++) {
        bench_alloc_open(argc > 3 ? argv[3] : NULL, argv[1]);
        double u = 100.0 * (double)round_until_exhausted(live, cap, &rng) / (double)arena;
        bench_alloc_close();
        sum += u;
        if (u < worst) worst = u;
    }
    char key[64];
    snprintf(key, sizeof key, "util.%s", argv[1]);
    bench_result(key, sum / (double)rounds, "%", "higher");
    snprintf(key, sizeof key, "util.%s.min", argv[1]);
    bench_result(key, worst, "%", "higher");
    return 0;
}
