/* heapledger benchmarks — shared helpers (see bench.h for the output contract). */
#include "bench.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double bench_tsc_per_ns(void)
{
    static double ratio;
    if (ratio > 0) return ratio;
    uint64_t n0 = bench_now_ns(), t0 = bench_rdtsc();
    while (bench_now_ns() - n0 < 20000000ull)
        ;
    uint64_t n1 = bench_now_ns(), t1 = bench_rdtsc();
    ratio = (double)(t1 - t0) / (double)(n1 - n0);
    return ratio;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

uint64_t bench_tsc_floor(void)
{
    static uint64_t floor_ticks = UINT64_MAX;
    if (floor_ticks != UINT64_MAX) return floor_ticks;
    enum { N = 1001 };
    uint64_t d[N];
    for (int i = 0; i < N; i++) {
        uint64_t a = bench_rdtsc();
        uint64_t b = bench_rdtsc();
        d[i] = b - a;
    }
    qsort(d, N, sizeof d[0], cmp_u64);
    floor_ticks = d[N / 2];
    return floor_ticks;
}

int bench_quick(void)
{
    static int quick = -1;
    if (quick < 0) {
        const char *q = getenv("BENCH_QUICK");
        quick = q && *q && strcmp(q, "0") != 0;
    }
    return quick;
}

uint64_t bench_iters(uint64_t n)
{
    if (!bench_quick()) return n;
    return n / 50 ? n / 50 : 1;
}

double bench_rng_gauss(bench_rng_t *r, double mean, double sd)
{
    double u1 = bench_rng_unit(r), u2 = bench_rng_unit(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return mean + sd * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

void *bench_mem(size_t bytes)
{
    void *p =
        mmap(NULL, bytes ? bytes : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) bench_die("mmap of %zu bookkeeping bytes: %s", bytes, strerror(errno));
    return p;
}

void bench_result(const char *key, double value, const char *unit, const char *better)
{
    printf("RESULT %s %.6g %s %s\n", key, value, unit, better);
    fflush(stdout);
}

void bench_skip(const char *reason)
{
    printf("SKIP %s\n", reason);
    fflush(stdout);
    exit(BENCH_EXIT_SKIP);
}

void bench_die(const char *fmt, ...)
{
    va_list ap;
    fputs("bench: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

uint64_t bench_parse_size(const char *s, const char *what)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        bench_die("bad %s '%s': expected a number with an optional K/M/G suffix", what, s);
    switch (*end) {
    case 'K':
    case 'k':
        v <<= 10;
        end++;
        break;
    case 'M':
    case 'm':
        v <<= 20;
        end++;
        break;
    case 'G':
    case 'g':
        v <<= 30;
        end++;
        break;
    default:
        break;
    }
    if (*end) bench_die("bad %s '%s': trailing characters", what, s);
    return v;
}

uint64_t bench_rss_kib(void)
{
    char buf[128];
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    unsigned long long size, resident;
    if (sscanf(buf, "%llu %llu", &size, &resident) != 2) return 0;
    return resident * (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
}

void bench_idle_small(unsigned ms)
{
    enum { SLOTS = 64 };
    void **slot = bench_mem(SLOTS * sizeof *slot);
    bench_rng_t rng;
    bench_rng_seed(&rng, 7);
    uint64_t end = bench_now_ns() + (uint64_t)ms * 1000000u;
    while (bench_now_ns() < end) {
        for (int k = 0; k < 256; k++) {
            size_t i = bench_rng_below(&rng, SLOTS);
            free(slot[i]);
            size_t n = (size_t)16 << bench_rng_below(&rng, 12);
            n += bench_rng_below(&rng, n);
            slot[i] = malloc(n);
            if (!slot[i]) bench_die("malloc(%zu) failed", n);
            bench_touch(slot[i], n);
        }
    }
    for (size_t i = 0; i < SLOTS; i++)
        free(slot[i]);
}
