/* heapledger benchmarks — the allocator under test for the fixed-arena programs.
 *
 * The same source is built twice:
 *  - with BENCH_HEAP_API: a heapledger heap object created in-process from a configuration
 *    string (hl_options_parse + hl_heap_create, linked with libheapledger_core.a); this is
 *    how the configuration matrix (baseline, harden=1, rotate=1, …) is measured;
 *  - without it: plain malloc/free/realloc, so the runner can compare the same action
 *    sequence across allocators under LD_PRELOAD.
 */
#ifndef HL_BENCH_ALLOC_H
#define HL_BENCH_ALLOC_H

#include <stddef.h>
#include <stdlib.h>

#ifdef BENCH_HEAP_API
#include "heapledger.h"

extern hl_heap_t *bench_heap;

static inline void *b_malloc(size_t n)
{
    return hl_heap_malloc(bench_heap, n);
}
static inline void b_free(void *p)
{
    hl_heap_free(bench_heap, p);
}
static inline void *b_realloc(void *p, size_t n)
{
    return hl_heap_realloc(bench_heap, p, n);
}
#else
static inline void *b_malloc(size_t n)
{
    return malloc(n);
}
static inline void b_free(void *p)
{
    free(p);
}
static inline void *b_realloc(void *p, size_t n)
{
    return realloc(p, n);
}
#endif

/* Open the allocator under test. With BENCH_HEAP_API, config (may be NULL or "") is parsed
 * over "arena=<default_arena>" and a heap is created; an option hl_options_parse rejects
 * makes the program print "SKIP option rejected: …" and exit BENCH_EXIT_SKIP. Without it,
 * a non-empty config is an error (LD_PRELOAD selects the allocator). */
void bench_alloc_open(const char *config, const char *default_arena);
/* Destroy the heap (heap build) — nothing for malloc. */
void bench_alloc_close(void);

#endif
