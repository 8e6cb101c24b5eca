/* tests/bench/tp_floor.c — the floor of a traced allocator event: what LTTng-UST alone costs.
 *
 * usage: tp_floor N
 * Emits N × (`heapledger:alloc`, `heapledger:free`) with the payload liballoc's call sites
 * write (schemas/heapledger_tp.h, trace layout 3), through call sites of its own linked the
 * way libheapledger.so's are (dynamic linkage: the probes are libheapledger-tp.so's, which
 * `heapledger record` preloads), and nothing else: no allocator call, no stack capture, no
 * TSC read, no per-thread state. Run under `heapledger record` (tests/bench/trace_cost.sh);
 * the difference between record_bench's cost per event and this one's is heapledger's own
 * (docs/PERFORMANCE.md, "The traced program's cost per event"). Untraced (no provider
 * loaded) the call sites stay disabled and the loop costs a load and a branch per event.
 * Prints "events E cpu_ns_per_event X" (process CPU time, loop only).
 */
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE
#include "heapledger_tp.h"

#include "hl_schema.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char *end;
    errno = 0;
    long n = argc == 2 ? strtol(argv[1], &end, 10) : 0;
    if (argc != 2 || errno || *end || n < 1) {
        fprintf(stderr, "usage: tp_floor N   (N >= 1 alloc/free event pairs, e.g. 1000000; "
                        "run it under `heapledger record`)\n");
        return 1;
    }
    struct hl_tp_who who = {(uint32_t)getpid(), (uint32_t)gettid()};
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    for (long i = 0; i < n; i++) {
        /* The values of record_bench's loop: a tiny-cache hit and push, sizes 32..95. */
        uint64_t ptr = 0x100000000ull + (uint64_t)(i & 63) * 0x80;
        uint64_t size = 32 + (uint64_t)(i & 63);
        lttng_ust_tracepoint(heapledger, alloc,
                             HL_TP_ALLOC_W(&who, ptr, size, size + 15, HL_TIER_TINY, 3,
                                           HL_PATH_TINY_CACHE_HIT, 20, 0));
        lttng_ust_tracepoint(
            heapledger, free,
            HL_TP_FREE_W(&who, ptr, size + 15, HL_TIER_TINY, 3, HL_PATH_TINY_CACHE_PUSH, 16, 0));
    }
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    printf("events %ld cpu_ns_per_event %.2f\n", 2 * n, ns / (2.0 * (double)n));
    return 0;
}
