/* tests/e2e/tp_emit.c — drives the tracing backend (liballoc/trace_lttng.c + stack.c) directly,
 * without the allocator: N alloc/free event pairs from T threads, with the same per-thread
 * guard discipline as the malloc shim. Used by the record tests (exact event counts, stacks,
 * fork) and by the emit-cost benchmark.
 *
 * usage: tp_emit N [threads] [fork|sleep|crash]
 *   fork   a child (fork without exec) emits the same events as the parent, first
 *   sleep  after emitting, wait for a signal (Ctrl-C tests)
 *   crash  after emitting, die of SIGSEGV
 *   error  after emitting, intern a stack without describing it (as hardened mode does) and
 *          emit an `error` event naming it as the allocation stack
 * Prints "pid P events E ns_per_event X active A" on stdout (E: events of process P; the
 * tests select their own processes by pid, other recordings may run at the same time).
 */
#include "hl_schema.h"
#include "stack.h"
#include "trace.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long n_pairs;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Two distinct call sites so that two distinct stacks appear. */
static __attribute__((noinline)) void site_alloc(char *p, size_t i)
{
    hl_opinfo_t info = {HL_TIER_TINY, (uint8_t)(i % 8), HL_PATH_TINY_CACHE_HIT, 32};
    if (hl_trace_active()) hl_trace_emit_alloc(p + i * 32, 24, &info, 40);
}

static __attribute__((noinline)) void site_free(char *p, size_t i)
{
    hl_opinfo_t info = {HL_TIER_TINY, (uint8_t)(i % 8), HL_PATH_TINY_CACHE_PUSH, 32};
    if (hl_trace_active()) hl_trace_emit_free(p + i * 32, &info, 30);
}

static void *worker(void *arg)
{
    char *base = arg;
    for (long i = 0; i < n_pairs; i++) {
        site_alloc(base, (size_t)i);
        site_free(base, (size_t)i);
    }
    return NULL;
}

static double run(int threads)
{
    pthread_t t[64];
    double t0 = now();
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, (char *)0x100000 + ((size_t)i << 32));
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    return now() - t0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: tp_emit N [threads] [fork|sleep|crash]\n");
        return 2;
    }
    n_pairs = atol(argv[1]);
    int threads = argc > 2 ? atoi(argv[2]) : 1;
    const char *mode = argc > 3 ? argv[3] : "";
    if (threads < 1 || threads > 64) threads = 1;
    hl_trace_init(getenv("HEAPLEDGER_OPTIONS"), 0);
    if (!strcmp(mode, "fork")) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            run(threads);
            printf("pid %d (fork child)\n", (int)getpid());
            fflush(stdout);
            _exit(0);
        }
        waitpid(pid, NULL, 0);
    }
    double s = run(threads);
    double ev = 2.0 * (double)n_pairs * threads;
    printf("pid %d events %.0f ns_per_event %.1f active %d\n", (int)getpid(), ev, s * 1e9 / ev,
           hl_trace_active());
    fflush(stdout);
    if (!strcmp(mode, "sleep")) pause();
    if (!strcmp(mode, "crash")) raise(SIGSEGV);
    if (!strcmp(mode, "error") && hl_trace_active()) {
        uint64_t ips[8];
        int is_new;
        uint32_t id = hl_stack_intern(ips, hl_stack_capture(ips, 8, 0), &is_new);
        hl_trace_emit_error_stacks("double-free", (void *)0x1000, 40, "tp_emit test", id, 0);
        printf("error alloc_stack %u\n", id);
    }
    return 0;
}
