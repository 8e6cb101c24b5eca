/* Tiny random-mixed workload: random malloc/free over a working set of slots.
 *
 * usage: tiny SIZE|mixed [SLOTS [OPS]]
 *   Each step picks a random slot: an occupied slot is freed, an empty one receives a new
 *   block (SIZE bytes, or 16–1024 B uniform with "mixed") whose first and last bytes are
 *   written. About half the slots are live at any time. One step is one operation.
 * Figure: tiny.<size|mixed> in M ops/s (higher is better).
 */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) bench_die("usage: tiny SIZE|mixed [SLOTS [OPS]]");
    int mixed = strcmp(argv[1], "mixed") == 0;
    size_t fixed = mixed ? 0 : bench_parse_size(argv[1], "size");
    if (!mixed && (fixed == 0 || fixed > 1024)) bench_die("tiny: size %zu outside 1..1024", fixed);
    size_t slots = argc > 2 ? bench_parse_size(argv[2], "slot count") : 1024;
    uint64_t ops = bench_iters(argc > 3 ? bench_parse_size(argv[3], "op count") : 10000000);
    if (slots == 0) bench_die("tiny: slot count must be positive");

    void **slot = bench_mem(slots * sizeof *slot);
    bench_rng_t rng;
    bench_rng_seed(&rng, 42);

    /* Warm up: fill half the slots so the timed loop starts in its steady state. */
    for (size_t i = 0; i < slots; i += 2) {
        size_t n = mixed ? 16 + bench_rng_below(&rng, 1009) : fixed;
        slot[i] = malloc(n);
        bench_touch(slot[i], n);
    }

    uint64_t t0 = bench_now_ns();
    for (uint64_t k = 0; k < ops; k++) {
        uint64_t r = bench_rng_next(&rng);
        size_t i = (size_t)(((unsigned __int128)r * slots) >> 64);
        if (slot[i]) {
            free(slot[i]);
            slot[i] = NULL;
        } else {
            size_t n = mixed ? 16 + (size_t)((r & 0xffffffffu) % 1009) : fixed;
            void *p = malloc(n);
            if (!p) bench_die("tiny: malloc(%zu) failed", n);
            bench_touch(p, n);
            slot[i] = p;
        }
    }
    uint64_t t1 = bench_now_ns();
    for (size_t i = 0; i < slots; i++)
        free(slot[i]);

    char key[64];
    snprintf(key, sizeof key, "tiny.%s", argv[1]);
    bench_result(key, (double)ops / (double)(t1 - t0) * 1e3, "Mops/s", "higher");
    return 0;
}
