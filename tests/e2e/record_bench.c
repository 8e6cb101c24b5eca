/* tests/e2e/record_bench.c — allocation-heavy loop for the tracing-cost benchmarks
 * (tests/e2e/record_bench.sh, docs/PERFORMANCE.md "Tracing cost").
 *
 * usage: record_bench N [threads]
 * Each thread does N iterations of malloc(32 + i % 64) / free: 2 allocator calls, so 2 events
 * per iteration when recorded. Prints "ops O ns_per_op X" (X: wall ns per allocator call,
 * all threads together, loop only) and "cpu_ns_per_op Y" (process CPU time per call: less
 * sensitive to other load on the machine, which is what the benchmark reports).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long iters;

static void *loop(void *arg)
{
    (void)arg;
    for (long i = 0; i < iters; i++) {
        void *p = malloc(32 + (size_t)(i & 63));
        *(volatile char *)p = 1;
        free(p);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: record_bench N [threads]\n");
        return 2;
    }
    iters = atol(argv[1]);
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    if (threads < 1 || threads > 64) threads = 1;
    pthread_t t[64];
    struct timespec a, b, ca, cb;
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ca);
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, loop, NULL);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cb);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    double cpu = (double)(cb.tv_sec - ca.tv_sec) * 1e9 + (double)(cb.tv_nsec - ca.tv_nsec);
    double ops = 2.0 * (double)iters * threads;
    printf("ops %.0f ns_per_op %.2f cpu_ns_per_op %.2f\n", ops, ns / ops, cpu / ops);
    return 0;
}
