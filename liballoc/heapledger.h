/* heapledger — public interface.
 *
 * Two audiences:
 *  - A program preloaded with libheapledger.so needs nothing from here: malloc & co. are
 *    replaced. It may call the few heapledger_* functions: they are declared weak here, so a
 *    program that includes this header links without the library (pkg-config heapledger:
 *    no library) and tests for them with `if (heapledger_version)`; they are non-NULL only
 *    when libheapledger.so is loaded (preloaded, or linked in through heapledger-preload,
 *    which replaces the whole process's malloc). Linked against libheapledger_core alone they
 *    stay NULL: the heap objects have no default heap.
 *  - Programs of their own, tests, benchmarks and the analyzer's what-if replay create heap
 *    objects with hl_heap_create() and use the hl_heap_* family on them (pkg-config
 *    heapledger-core: libheapledger_core.so or .a; the program's malloc is left alone).
 */
#ifndef HEAPLEDGER_H
#define HEAPLEDGER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Everything declared here is exported from libheapledger.so (the rest is hidden). */
#pragma GCC visibility push(default)

typedef struct hl_heap_s hl_heap_t;

/* Heap options. Start from hl_options_default(), then set fields or hl_options_parse() the
 * HEAPLEDGER_OPTIONS syntax ("name=value,name=value"). Size fields left 0 mean "automatic".
 * docs/options.md lists every option. */
typedef struct hl_options_s {
    size_t arena_size; /* arena=SIZE: fixed arena of SIZE bytes; 0 = grow from the OS */
    void *arena_base;  /* caller-provided arena memory (API only), NULL = mmap it */
    size_t mid_max;    /* mid_max=SIZE: largest request served by TLSF (default 256K) */
    size_t slab_size;  /* slab=SIZE: tiny slab size, power of two (default 64K; 4K in arena mode) */
    uint32_t arenas;   /* arenas=N: TLSF arenas threads spread over (default: 2 per CPU, max 16) */
    uint32_t tcache;   /* tcache=N: thread cache capacity scale, 0 disables the cache */
    uint32_t stats;    /* stats=1: print counters at exit */
    uint32_t tiny;     /* tiny=0|1: tiny tier off/on; 2 (default) = on, but off in arena mode */
    uint32_t trim_keep; /* trim_keep=N: empty slabs kept before memory goes back to the OS */
    size_t tiny_max;    /* tiny_max=SIZE: largest request served by the tiny tier (<= 4096) */
    uint32_t stacks;    /* stacks=N: call-stack depth recorded by tracing and reports */
    /* Hardened mode (docs/hardening.md). harden=1 in an options string turns on check_free,
     * canary, poison, quarantine and guard=large; each has its own switch too. */
    uint32_t harden;         /* any hardening active (set by harden=1 or by any check below) */
    size_t quarantine;       /* quarantine=BYTES: freed blocks held back (FIFO), 0 = none,
                                HL_QUARANTINE_AUTO (quarantine=auto, harden=1's default): it
                                follows the heap's live bytes, at most 1 MiB */
    uint32_t check_free;     /* check_free=1: exact validation of every free/realloc */
    uint32_t canary;         /* canary=1: canary after the requested size, checked on free */
    uint32_t poison;         /* poison=1: fill freed blocks, verify on reuse/quarantine exit */
    uint32_t zero_on_free;   /* zero_on_free=1: clear blocks when they are really released */
    uint32_t rotate;         /* rotate=1: two TLSF free stores (delayed reuse) */
    uint32_t abort_on_error; /* abort_on_error=0: report, count and continue */
    uint32_t check_at_exit;  /* check_at_exit=1: full heap check at exit */
    uint32_t guard;          /* guard=large|all|sample:N -> 1|2|3 (0 = none) */
    uint32_t guard_sample;   /* N of guard=sample:N */
    uint32_t decay_ms; /* decay=MS: freed large mappings and empty TLSF pools kept this long */
    uint32_t leaks;    /* leaks=0|1|2: leak scan at exit off, on (prints a summary),
                          2 (default) only when recorded (docs/analyze.md) */
    uint32_t unwind;   /* unwind=fast|libunwind|check -> 0|1|2: how stacks are walked */
} hl_options_t;

#define HL_QUARANTINE_AUTO ((size_t)-1) /* quarantine=auto */

/* Fill *o with the defaults. */
void hl_options_default(hl_options_t *o);
/* Parse "name=value,…" into *o (over whatever it holds). Returns 0, or -1 after writing a
 * message for the first bad item into err (errlen bytes). Unknown names are errors here; the
 * preloaded library only warns about them. */
int hl_options_parse(hl_options_t *o, const char *s, char *err, size_t errlen);
/* Write the options as "name=value,…" (only those differing from the defaults). */
size_t hl_options_format(const hl_options_t *o, char *buf, size_t len);

/* Create a heap. NULL options = defaults. Returns NULL with errno set on failure
 * (ENOMEM, EINVAL for bad options). */
hl_heap_t *hl_heap_create(const hl_options_t *options);
/* Destroy a heap and return all its memory. No other thread may use it concurrently; blocks
 * still cached by other threads are dropped with it. */
void hl_heap_destroy(hl_heap_t *heap);
/* The heap behind the preloaded malloc family. */
hl_heap_t *hl_heap_default(void);

void *hl_heap_malloc(hl_heap_t *heap, size_t size);
void *hl_heap_calloc(hl_heap_t *heap, size_t n, size_t size);
void *hl_heap_realloc(hl_heap_t *heap, void *ptr, size_t size);
void *hl_heap_memalign(hl_heap_t *heap, size_t alignment, size_t size);
void hl_heap_free(hl_heap_t *heap, void *ptr);
size_t hl_heap_usable_size(hl_heap_t *heap, const void *ptr);
/* Return free memory to the OS; returns 1 if anything was released. */
int hl_heap_trim(hl_heap_t *heap, size_t pad);
/* Walk the heap's structures and count broken invariants (0 = consistent). With verbose,
 * each broken invariant is described on stderr. */
size_t hl_heap_check(hl_heap_t *heap, int verbose);
/* Flush the calling thread's cache of this heap back to the heap. */
void hl_heap_flush_thread(hl_heap_t *heap);

/* Byte counters of a heap, consistent when no other thread allocates. */
typedef struct hl_heap_info_s {
    size_t held;         /* bytes obtained from the OS (or the arena size) */
    size_t used;         /* usable bytes of live blocks */
    size_t free_tiny;    /* bytes in free tiny slots (caches and slabs) */
    size_t free_mid;     /* bytes in free TLSF blocks */
    size_t large;        /* bytes in large mappings */
    size_t largest_free; /* largest free TLSF block */
    size_t slabs;        /* tiny slabs carved */
    size_t pools;        /* TLSF pools added */
} hl_heap_info_t;
void hl_heap_info(hl_heap_t *heap, hl_heap_info_t *out);

/* Visit every TLSF block of the heap in address order within each pool (in arena mode: the
 * one pool that is the arena): cb(block start, block bytes with its header, is_free, arg).
 * Tiny slabs and hardening metadata carved from the TLSF are used blocks. For the arena map
 * of `heapledger replay`; holds each arena's lock while walking it (cb must not allocate
 * from this heap). */
typedef void (*hl_heap_walker_t)(const void *block, size_t bytes, int is_free, void *arg);
void hl_heap_walk(hl_heap_t *heap, hl_heap_walker_t cb, void *arg);

/* Per-path operation counters of a heap (index: hl_path_t in schemas/hl_schema.h). */
void hl_heap_path_counts(hl_heap_t *heap, uint64_t *counts, size_t n);

/* --- functions a traced program may call ------------------------------------------------- */

/* Weak declarations for programs; the library itself (HL_BUILDING_LIBRARY) defines them. */
#ifdef HL_BUILDING_LIBRARY
#define HEAPLEDGER_WEAK
#else
#define HEAPLEDGER_WEAK __attribute__((weak))
#endif

/* Version string of the library, e.g. "0.1.0". */
HEAPLEDGER_WEAK const char *heapledger_version(void);
/* Print the default heap's counters to stderr (the same text as stats=1 at exit). */
HEAPLEDGER_WEAK void heapledger_print_stats(void);
/* Check the default heap; returns the number of broken invariants. */
HEAPLEDGER_WEAK size_t heapledger_check_heap(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif
