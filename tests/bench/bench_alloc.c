/* heapledger benchmarks — opening the allocator under test (see bench_alloc.h). */
#include "bench_alloc.h"
#include "bench.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#ifdef BENCH_HEAP_API
hl_heap_t *bench_heap;

void bench_alloc_open(const char *config, const char *default_arena)
{
    hl_options_t o;
    char err[256], arena[64], reason[400];
    hl_options_default(&o);
    snprintf(arena, sizeof arena, "arena=%s", default_arena);
    if (hl_options_parse(&o, arena, err, sizeof err) != 0)
        bench_die("default '%s' rejected: %s", arena, err);
    if (config && *config && hl_options_parse(&o, config, err, sizeof err) != 0) {
        snprintf(reason, sizeof reason, "option rejected: %s", err);
        bench_skip(reason);
    }
    bench_heap = hl_heap_create(&o);
    if (!bench_heap)
        bench_die("hl_heap_create(%s%s%s): %s", arena, config && *config ? "," : "",
                  config ? config : "", strerror(errno));
}

void bench_alloc_close(void)
{
    hl_heap_destroy(bench_heap);
    bench_heap = NULL;
}
#else
void bench_alloc_open(const char *config, const char *default_arena)
{
    (void)default_arena;
    if (config && *config)
        bench_die("configuration '%s' needs the heap-API build of this program", config);
}

void bench_alloc_close(void) {}
#endif
