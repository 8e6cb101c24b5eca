/* heapledger benchmarks — the helpers every benchmark program shares.
 *
 * Contract with the runner (tests/bench/runner.py): a program prints its figures on stdout as
 * lines
 *
 *     RESULT <key> <value> <unit> <higher|lower>
 *
 * (one per figure; "higher" means a larger value is better) and nothing else on stdout. A
 * program that cannot run a configuration prints "SKIP <reason>" and exits with status 3.
 * Any other failure exits non-zero with a message on stderr.
 *
 * BENCH_QUICK=1 in the environment scales every iteration count down (bench_iters) so the
 * smoke test only checks that each program runs and prints its figure.
 *
 * Bookkeeping memory (slot arrays, latency samples, queues) comes from mmap, never from the
 * allocator under test, so every allocator sees the same request stream.
 */
#ifndef HL_BENCH_H
#define HL_BENCH_H

#include <stddef.h>
#include <stdint.h>

/* Exit status of a program that skips a configuration it cannot run. */
#define BENCH_EXIT_SKIP 3

/* Monotonic wall clock in nanoseconds (CLOCK_MONOTONIC). */
uint64_t bench_now_ns(void);

/* Serialising TSC read (lfence; rdtsc). */
static inline uint64_t bench_rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi)::"memory");
    return ((uint64_t)hi << 32) | lo;
}

/* TSC ticks per nanosecond, calibrated once against CLOCK_MONOTONIC over ~20 ms. */
double bench_tsc_per_ns(void);
/* Median tick count of an empty bench_rdtsc() pair: the timer floor to subtract. */
uint64_t bench_tsc_floor(void);

/* Non-zero when BENCH_QUICK=1. */
int bench_quick(void);
/* n, or n / 50 (at least 1) in quick mode. */
uint64_t bench_iters(uint64_t n);

/* Small fast PRNG (xorshift64*); state must be non-zero. */
typedef struct bench_rng_s {
    uint64_t s;
} bench_rng_t;

static inline void bench_rng_seed(bench_rng_t *r, uint64_t seed)
{
    r->s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    if (r->s == 0) r->s = 1;
}

static inline uint64_t bench_rng_next(bench_rng_t *r)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, n). */
static inline uint64_t bench_rng_below(bench_rng_t *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)bench_rng_next(r) * n) >> 64);
}

/* Uniform in [0, 1). */
static inline double bench_rng_unit(bench_rng_t *r)
{
    return (double)(bench_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Normal deviate (Box-Muller). */
double bench_rng_gauss(bench_rng_t *r, double mean, double sd);

/* Zeroed memory from mmap for bookkeeping; aborts on failure. Never freed before exit. */
void *bench_mem(size_t bytes);

/* Print one RESULT line (see the contract above). */
void bench_result(const char *key, double value, const char *unit, const char *better);

/* Print "SKIP reason" and exit with BENCH_EXIT_SKIP. */
void bench_skip(const char *reason) __attribute__((noreturn));
/* Print "bench: message" on stderr and exit 1. */
void bench_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* Parse a decimal count or size with an optional K/M/G suffix (powers of 1024); dies on
 * bad input naming what. */
uint64_t bench_parse_size(const char *s, const char *what);

/* Write the first byte and the last byte of a block (so the allocator under test cannot
 * hand out untouched memory for free). */
static inline void bench_touch(void *p, size_t n)
{
    volatile unsigned char *c = p;
    c[0] = (unsigned char)n;
    c[n - 1] = (unsigned char)n;
}

/* Write one byte in every page of a block (its first and last byte included): a program
 * that allocates a buffer fills it, so an allocator that hands out fresh mappings pays their
 * page faults. */
static inline void bench_touch_pages(void *p, size_t n)
{
    volatile unsigned char *c = p;
    for (size_t i = 0; i < n; i += 4096)
        c[i] = (unsigned char)i;
    c[n - 1] = (unsigned char)n;
}

/* Resident set size of the calling process in KiB (/proc/self/statm, read with read(2): no
 * allocation by the allocator under test). 0 if it cannot be read. */
uint64_t bench_rss_kib(void);

/* The quiet phase after a burst: keep allocating and freeing small and mid-sized blocks (a
 * ring of 64 slots, 16 B to 64 KiB, log-uniform) for `ms` milliseconds, then free them. An
 * allocator that caches freed memory should give it back to the OS during this phase. */
void bench_idle_small(unsigned ms);

#endif
