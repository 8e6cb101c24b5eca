/* tests/ingest/ingest_gen.c — emits a known sequence of heapledger tracepoints.
 *
 * A stand-in for the allocator: it defines the provider of schemas/heapledger_tp.h itself
 * and emits events with fake pointers, so the ingest tests know the exact expected rows.
 *
 *   ingest_gen basic        the fixed sequence below
 *   ingest_gen fork         basic in the parent, then basic in a forked child (own vpid)
 *   ingest_gen forkstacks   stack ids across fork without exec and exec (see forkstacks())
 *   ingest_gen slow         basic after 2 s, then 1 s more (live tests: the live viewer
 *                           only sees what is flushed after it attached to a stream)
 *   ingest_gen bench N      N alloc/free pairs over 64 live blocks per thread, 2 threads
 *
 * Basic sequence (threads "ingest_gen" (main), "ingest_gen_wkr", and "ingest_gen-ust" which poses
 * as one of LTTng's own threads and must be filtered out; every thread name starts with
 * "ingest_gen" so that test sessions can filter on $ctx.procname and ignore other programs
 * traced by the same lttng-sessiond):
 *   config; stack 1 (3 frames inside this program); os_map 1 MiB;
 *   10 alloc (ptr P(i) = 0x1000 + i*0x100, size 16*(i+1), stack 1) by main;
 *   P(0..4) freed by main, P(5..7) freed by worker (cross-thread), P(8), P(9) leaked;
 *   realloc chain: alloc 0x9000 → realloc in place 0x9000 → realloc move 0xa000 → free;
 *   realloc(NULL, 64) → 0xb000 (leaked); realloc(0xb100→0) size 0 on an unknown pointer
 *   (orphan); free of never-seen 0xdead0 (orphan); one failed alloc (ptr 0, alloc_fail);
 *   error "double-free"; os_unmap; NAME-ust allocs 0x7000 (filtered).
 * Expected per process: block rows 10 + 3 + 1 + 1 = 15; live at exit 2 + 1 = 3 (P(8),
 *   P(9), 0xb000); failed 1; orphan_free 2; stack 1 with 3 frames; error 1; os_region 2;
 *   heapledger events 10 + 8 + 5 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 = 31 (+1 filtered).
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "heapledger_tp.h"

#include "hl_schema.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define P(i) (0x1000u + (i)*0x100u)

/* The vpid/vtid payload fields of alloc/free/realloc (layout 2), per calling thread. */
static const struct hl_tp_who *who(void)
{
    static __thread struct hl_tp_who w;
    w.pid = (uint32_t)getpid();
    w.tid = (uint32_t)gettid();
    return &w;
}
#define WHO who()
/* alloc/free/realloc from named values (their words: schemas/heapledger_tp.h). */
#define tp_alloc(...)   lttng_ust_tracepoint(heapledger, alloc, HL_TP_ALLOC_W(__VA_ARGS__))
#define tp_free(...)    lttng_ust_tracepoint(heapledger, free, HL_TP_FREE_W(__VA_ARGS__))
#define tp_realloc(...) lttng_ust_tracepoint(heapledger, realloc, HL_TP_REALLOC_W(__VA_ARGS__))

/* The frames of stack 1: fixed offsets into these functions (symbolisation test). */
void __attribute__((noinline)) ingest_gen_leaf(void)
{
    __asm__ volatile("" ::: "memory");
}
void __attribute__((noinline)) ingest_gen_mid(void)
{
    ingest_gen_leaf();
}

static void emit_stack(void)
{
    /* Return addresses, like every frame liballoc captures: each is looked up at ip - 1. */
    uint64_t ips[3] = {(uint64_t)(uintptr_t)&ingest_gen_leaf + 1,
                       (uint64_t)(uintptr_t)&ingest_gen_mid + 1,
                       (uint64_t)(uintptr_t)&emit_stack + 1};
    lttng_ust_tracepoint(heapledger, stack, 1, ips, 3);
}

static void *worker(void *arg)
{
    (void)arg;
    for (unsigned i = 5; i < 8; i++)
        tp_free(WHO, P(i), 16 * (i + 1), HL_TIER_TINY, 1, HL_PATH_TINY_CACHE_PUSH, 7, 0);
    return NULL;
}

static void *fake_ust(void *arg)
{
    (void)arg;
    tp_alloc(WHO, 0x7000, 8, 15, HL_TIER_TINY, 0, HL_PATH_TINY_CACHE_HIT, 5, 0);
    return NULL;
}

typedef struct named_s {
    void *(*fn)(void *);
    const char *name;
} named_t;

static void *start_named(void *arg)
{
    named_t *n = arg;
    pthread_setname_np(pthread_self(), n->name);
    return n->fn(NULL);
}

/* Thread names derive from the process name (tests run a copy of this program under a
 * unique name and filter their sessions on it): "<comm>_wkr", "<comm>-ust". */
static void run_named(void *(*fn)(void *), const char *suffix)
{
    char name[16];
    snprintf(name, sizeof name, "%.10s%s", program_invocation_short_name, suffix);
    named_t n = {fn, name};
    pthread_t t;
    pthread_create(&t, NULL, start_named, &n);
    pthread_join(t, NULL);
}

static void basic(void)
{
    lttng_ust_tracepoint(heapledger, config, "0.1.0-test", "stacks=3", 2445000000ull, 0, 0, 0);
    emit_stack();
    lttng_ust_tracepoint(heapledger, os_map, 0x100000, 1 << 20, "slab_segment");
    for (unsigned i = 0; i < 10; i++)
        tp_alloc(WHO, P(i), 16 * (i + 1), 16 * (i + 1) + 15, HL_TIER_TINY, 1,
                 HL_PATH_TINY_CACHE_HIT, 10 + i, 1);
    for (unsigned i = 0; i < 5; i++)
        tp_free(WHO, P(i), 16 * (i + 1) + 15, HL_TIER_TINY, 1, HL_PATH_TINY_CACHE_PUSH, 20 + i, 1);
    run_named(worker, "_wkr");
    /* realloc chain */
    tp_alloc(WHO, 0x9000, 100, 112, HL_TIER_MID, 255, HL_PATH_TLSF, 300, 1);
    tp_realloc(WHO, 0x9000, 0x9000, 90, 112, HL_TIER_MID, 255, HL_PATH_REALLOC_INPLACE, 40, 1);
    tp_realloc(WHO, 0x9000, 0xa000, 4000, 4016, HL_TIER_MID, 255, HL_PATH_REALLOC_MOVE, 900, 1);
    tp_free(WHO, 0xa000, 4016, HL_TIER_MID, 255, HL_PATH_TLSF_FREE, 200, 1);
    tp_realloc(WHO, 0, 0xb000, 64, 79, HL_TIER_TINY, 3, HL_PATH_TINY_CACHE_HIT, 30, 1);
    tp_realloc(WHO, 0xb100, 0, 0, 0, HL_TIER_TINY, 3, HL_PATH_REALLOC_INPLACE, 31, 1);
    tp_free(WHO, 0xdead0, 0, HL_TIER_TINY, 0, HL_PATH_TINY_CACHE_PUSH, 9, 0);
    tp_alloc(WHO, 0, 1ull << 40, 0, HL_TIER_LARGE, 255, HL_PATH_ALLOC_FAIL, 1000, 1);
    lttng_ust_tracepoint(heapledger, error, "double-free", P(0), 16, "freed twice", 1, 1, 1);
    lttng_ust_tracepoint(heapledger, os_unmap, 0x100000, 1 << 20, "slab_segment");
    run_named(fake_ust, "-ust");
}

/* forkstacks: stack ids across fork (docs/tracepoints.md, config's fork_parent/fork_ts).
 * Parent: config; stacks 1 and 2; alloc 0xf1000 (stack 1), 0xf2000 (stack 2); fork; then
 * stack 5 (after the fork: not in the child's table). Child (own vpid with
 * liblttng-ust-fork): config naming the parent and the fork time; alloc 0xf3000 with stack 1
 * never described in the child (inherited: the parent's), 0xf3100 with stack 5 (the parent
 * described it only after the fork: unknown), its own stack 6 and alloc 0xf3200 with it.
 * Then an unrelated process (exec of this program, "forkstacks-exec"): alloc 0xf4000 with
 * stack 1, never described there (unknown, not the parent's). Every block stays live. */
static uint64_t mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void stack_n(uint32_t id, uint64_t salt)
{
    uint64_t ips[2] = {(uint64_t)(uintptr_t)&ingest_gen_leaf + salt,
                       (uint64_t)(uintptr_t)&ingest_gen_mid + 1};
    lttng_ust_tracepoint(heapledger, stack, id, ips, 2);
}

static void alloc_n(uint64_t p, uint32_t stack)
{
    tp_alloc(WHO, p, 32, 47, HL_TIER_TINY, 2, HL_PATH_TINY_CACHE_HIT, 10, stack);
}

static void forkstacks(const char *self)
{
    lttng_ust_tracepoint(heapledger, config, "0.1.0-test", "stacks=3", 2445000000ull, 0, 0, 0);
    stack_n(1, 0);
    stack_n(2, 1);
    alloc_n(0xf1000, 1);
    alloc_n(0xf2000, 2);
    int go[2];
    if (pipe(go) != 0) exit(1);
    uint32_t parent = (uint32_t)getpid();
    uint64_t fork_ts = mono_ns();
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        if (read(go[0], &c, 1) != 1) _exit(1); /* the parent has described stack 5 */
        lttng_ust_tracepoint(heapledger, config, "0.1.0-test", "stacks=3", 2445000000ull, 0, parent,
                             fork_ts);
        alloc_n(0xf3000, 1);
        alloc_n(0xf3100, 5);
        stack_n(6, 2);
        alloc_n(0xf3200, 6);
        _exit(0);
    }
    stack_n(5, 3);
    if (write(go[1], "x", 1) != 1) exit(1);
    int st;
    waitpid(pid, &st, 0);
    pid = fork();
    if (pid == 0) {
        execl(self, self, "forkstacks-exec", (char *)NULL);
        _exit(127);
    }
    waitpid(pid, &st, 0);
}

static void *bench_thread(void *arg)
{
    long n = (long)arg;
    uint64_t base = (uint64_t)(uintptr_t)&n & ~0xfffull;
    for (long i = 0; i < n; i++) {
        uint64_t p = base + (uint64_t)(i & 63) * 64;
        tp_alloc(WHO, p, 48, 63, HL_TIER_TINY, 3, HL_PATH_TINY_CACHE_HIT, 12, 1);
        tp_free(WHO, p, 63, HL_TIER_TINY, 3, HL_PATH_TINY_CACHE_PUSH, 9, 1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "basic";
    if (!strcmp(what, "basic")) {
        basic();
    } else if (!strcmp(what, "fork")) {
        basic();
        pid_t pid = fork();
        if (pid == 0) {
            basic();
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
    } else if (!strcmp(what, "forkstacks")) {
        forkstacks(argv[0]);
    } else if (!strcmp(what, "forkstacks-exec")) {
        lttng_ust_tracepoint(heapledger, config, "0.1.0-test", "stacks=3", 2445000000ull, 0, 0, 0);
        alloc_n(0xf4000, 1);
    } else if (!strcmp(what, "slow")) {
        /* live tests: give the viewer time to attach to the new streams first */
        sleep(2);
        basic();
        sleep(1);
    } else if (!strcmp(what, "bench")) {
        long n = argc > 2 ? atol(argv[2]) : 1000000;
        emit_stack();
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&t[i], NULL, bench_thread, (void *)(n / 2));
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
    } else {
        fprintf(stderr, "usage: ingest_gen basic|fork|forkstacks|slow|bench [N]\n");
        return 2;
    }
    return 0;
}
