/* Fixed-arena random actions (the workload used to judge embedded heaps).
 *
 * usage: arena g32|g160|g256|mix plain|realloc [CONFIG]
 *   1024 slots. An action picks a random slot: an empty slot receives a new block; an
 *   occupied one is freed ("plain"), or with "realloc" is freed or resized (even odds).
 *   Sizes are Gaussian: mean 32, 160 or 256 B with standard deviation mean/4, clipped to
 *   [1, 4·mean]; "mix" draws each size from one of the three at random. Every new or resized
 *   block gets its first and last byte written.
 *   Heap-API build: the heap is created with "arena=8M" followed by CONFIG.
 *   Pass 1 (2 M actions, or fewer once it has run 0.3 s) measures throughput without
 *   timers. Pass 2 (500 k actions, or fewer after 0.3 s; same stream continued) times every
 *   malloc and every free with lfence-serialised rdtsc, subtracts the median empty-pair
 *   reading (the timer floor) and converts ticks to ns with the TSC rate calibrated against
 *   CLOCK_MONOTONIC. Realloc calls are not timed.
 * Figures: arena.<dist>.<mode>.kops in kOps/s (higher is better) and
 *   arena.<dist>.<mode>.p01 … .p99: percentiles of the per-call malloc and free latency
 *   (one distribution over both calls) in ns (lower is better).
 */
#include "bench.h"
#include "bench_alloc.h"

#include <stdio.h>
#include <string.h>

enum { SLOTS = 1024, HIST = 1 << 16 };

typedef struct dist_s {
    const char *name;
    double mean[3];
    int n; /* number of components (1, or 3 for the mixture) */
} dist_t;

static const dist_t DISTS[] = {
    {"g32", {32}, 1},
    {"g160", {160}, 1},
    {"g256", {256}, 1},
    {"mix", {32, 160, 256}, 3},
};

typedef struct state_s {
    void *ptr[SLOTS];
    bench_rng_t rng;
    const dist_t *dist;
    int realloc_mode;
    uint32_t *hist; /* latency histogram in TSC ticks, HIST buckets, last = overflow */
    uint64_t samples;
} state_t;

static size_t draw_size(state_t *s)
{
    double m = s->dist->mean[s->dist->n == 1 ? 0 : bench_rng_below(&s->rng, 3)];
    double x = bench_rng_gauss(&s->rng, m, m / 4);
    if (x < 1) x = 1;
    if (x > 4 * m) x = 4 * m;
    return (size_t)x;
}

static void record(state_t *s, uint64_t t0, uint64_t t1)
{
    uint64_t floor_ticks = bench_tsc_floor();
    uint64_t d = t1 - t0 > floor_ticks ? t1 - t0 - floor_ticks : 0;
    s->hist[d < HIST ? d : HIST - 1]++;
    s->samples++;
}

/* One action; with timed, malloc and free are timed into the histogram. */
static inline void action(state_t *s, int timed)
{
    size_t i = bench_rng_below(&s->rng, SLOTS);
    void *p = s->ptr[i];
    if (!p) {
        size_t n = draw_size(s);
        uint64_t t0 = timed ? bench_rdtsc() : 0;
        p = b_malloc(n);
        if (timed) record(s, t0, bench_rdtsc());
        if (!p) bench_die("arena: malloc(%zu) failed: arena exhausted", n);
        bench_touch(p, n);
        s->ptr[i] = p;
    } else if (s->realloc_mode && (bench_rng_next(&s->rng) & 1)) {
        size_t n = draw_size(s);
        p = b_realloc(p, n);
        if (!p) bench_die("arena: realloc(%zu) failed: arena exhausted", n);
        bench_touch(p, n);
        s->ptr[i] = p;
    } else {
        uint64_t t0 = timed ? bench_rdtsc() : 0;
        b_free(p);
        if (timed) record(s, t0, bench_rdtsc());
        s->ptr[i] = NULL;
    }
}

static double percentile_ns(const state_t *s, double q)
{
    uint64_t want = (uint64_t)(q * (double)(s->samples - 1)) + 1, seen = 0;
    for (uint64_t b = 0; b < HIST; b++) {
        seen += s->hist[b];
        if (seen >= want) return (double)b / bench_tsc_per_ns();
    }
    return (double)(HIST - 1) / bench_tsc_per_ns();
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) bench_die("usage: arena g32|g160|g256|mix plain|realloc [CONFIG]");
    state_t *s = bench_mem(sizeof *s);
    for (size_t d = 0; d < sizeof DISTS / sizeof DISTS[0]; d++)
        if (strcmp(argv[1], DISTS[d].name) == 0) s->dist = &DISTS[d];
    if (!s->dist) bench_die("arena: unknown distribution '%s' (g32, g160, g256, mix)", argv[1]);
    if (strcmp(argv[2], "plain") != 0 && strcmp(argv[2], "realloc") != 0)
        bench_die("arena: mode must be 'plain' or 'realloc', not '%s'", argv[2]);
    s->realloc_mode = strcmp(argv[2], "realloc") == 0;
    s->hist = bench_mem(HIST * sizeof *s->hist);
    bench_rng_seed(&s->rng, 2024);
    bench_tsc_floor();
    bench_tsc_per_ns();

    bench_alloc_open(argc > 3 ? argv[3] : NULL, "8M");
    for (int k = 0; k < SLOTS; k++) /* warm-up into the steady state (about half live) */
        action(s, 0);
    /* Each pass stops early (on a multiple of CHUNK actions) once it has run for
     * BUDGET_NS, so a slow configuration cannot stretch the suite; fast ones do all. */
    enum { CHUNK = 1 << 16 };
    const uint64_t BUDGET_NS = 300000000ull;
    uint64_t n1 = bench_iters(2000000), n2 = bench_iters(500000), done = 0;
    uint64_t t0 = bench_now_ns(), t1 = t0;
    while (done < n1 && t1 - t0 < BUDGET_NS) {
        for (uint64_t k = 0; k < CHUNK && done < n1; k++, done++)
            action(s, 0);
        t1 = bench_now_ns();
    }
    n1 = done;
    for (uint64_t k = 0, t2 = t1; k < n2 && (k % CHUNK || bench_now_ns() - t2 < BUDGET_NS); k++)
        action(s, 1);
    for (int i = 0; i < SLOTS; i++)
        if (s->ptr[i]) b_free(s->ptr[i]);
    bench_alloc_close();

    char key[96];
    const char *mode = argv[2];
    snprintf(key, sizeof key, "arena.%s.%s.kops", s->dist->name, mode);
    bench_result(key, (double)n1 / (double)(t1 - t0) * 1e6, "kOps/s", "higher");
    static const struct {
        const char *name;
        double q;
    } P[] = {{"p01", 0.01}, {"p25", 0.25}, {"p50", 0.50}, {"p75", 0.75}, {"p99", 0.99}};
    for (size_t i = 0; i < sizeof P / sizeof P[0]; i++) {
        snprintf(key, sizeof key, "arena.%s.%s.%s", s->dist->name, mode, P[i].name);
        bench_result(key, percentile_ns(s, P[i].q), "ns", "lower");
    }
    return 0;
}
