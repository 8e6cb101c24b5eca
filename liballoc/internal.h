/* liballoc/internal.h — the map of the allocator (STYLE.md habit 1).
 *
 * Glossary
 *   heap     hl_heap_t: one allocator instance. The preloaded malloc family uses the static
 *            default heap; tests, benchmarks and replay create their own.
 *   tier     tiny (requests <= tiny_max, slots in slabs, 1-byte header), mid (TLSF blocks up
 *            to mid_max, 16-byte boundary-tag header), large (one mmap per block).
 *   class    a tiny slot size (schemas/classes.def). Slot of S bytes serves S-1 bytes.
 *   slab     slab_size bytes aligned to slab_size holding slots of one class; its descriptor
 *            hl_slab_t is in-band at the slab start, so ptr -> slab is a mask.
 *   segment  normal mode: 64 slabs mapped at once; the first slab holds the segment record.
 *            Arena mode: slabs are aligned TLSF blocks carved from the arena instead.
 *   tcache   per-thread LIFO lists of free tiny slots per class (hl_tls_t), bounded by caps;
 *            refilled and flushed in batches against the class's central slab lists.
 *   arena    (mid) a TLSF instance with its own lock; threads are spread over arenas.
 *            Fixed-arena mode (option arena=SIZE) is something else: one region of SIZE
 *            bytes from which every tier carves, with a single TLSF.
 *   path     what an operation did (schemas/paths.def), counted per thread and traced.
 *   class map one byte per 64 KiB window: the tag of the default heap's tiny slab there, which
 *            the preloaded free reads instead of the header byte (classmap.h)
 *   side heap the tracer's heap (sideheap.c): LTTng-UST's, libunwind's and the tracing code's
 *            own blocks under `heapledger record`, outside the program's heap, arena, stats
 *            and events. One reserved address range, so a block's owner is its address.
 *
 * Header byte at ptr-1 (every block the allocator hands out):
 *   0xA0|class  tiny slot (class < 32)       HL_TAG_MID   used TLSF block
 *   HL_TAG_LARGE large mapping                HL_TAG_MID_FREE free TLSF block
 *
 * Build levels: HL_DEBUG=1 (make HL_DEBUG=1) turns on hl_assert(); the runtime checks of
 * hardened mode are always compiled and switched by options.
 */
#ifndef HL_INTERNAL_H
#define HL_INTERNAL_H

#include "heapledger.h"
#include "hl_schema.h"
#include "trace.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef HL_DEBUG
#define HL_DEBUG 0
#endif

#define hl_likely(x)   __builtin_expect(!!(x), 1)
#define hl_unlikely(x) __builtin_expect(!!(x), 0)
#define hl_noinline    __attribute__((noinline))
#define hl_inline      static inline __attribute__((always_inline))
#define hl_cold        __attribute__((cold, noinline))

/* ---- tags ------------------------------------------------------------------------------- */
#define HL_TAG_TINY      0xA0u /* | class */
#define HL_TAG_TINY_MASK 0xE0u
#define HL_TAG_MID       0xC5u
#define HL_TAG_MID_FREE  0xCFu
#define HL_TAG_LARGE     0xD3u

#define HL_ALIGN     16u
#define HL_CLASS_MAX 32u /* bins in a thread cache: every 5-bit class value */

/* The largest request any tier serves (glibc's limit): larger ones — a negative int turned
 * into a size, an overflowed sum — fail with ENOMEM in every mode, before hardening pads
 * them or a tier rounds them (heap.c, alloc_slow). */
#define HL_REQUEST_MAX ((size_t)PTRDIFF_MAX)

/* Defaults (docs/options.md). */
#define HL_DEFAULT_MID_MAX    (256u << 10)
#define HL_DEFAULT_SLAB       (64u << 10)
#define HL_DEFAULT_ARENA_SLAB (4u << 10)
/* Regions grow geometrically so that small programs hold little: the first slab segment
 * has HL_SEGMENT_SLABS_MIN slabs, each next one twice as many up to HL_SEGMENT_SLABS; a
 * TLSF arena's pools start at HL_POOL_SIZE_MIN bytes and double up to HL_POOL_SIZE. */
#define HL_SEGMENT_SLABS_MIN 16u
#define HL_SEGMENT_SLABS     64u
#define HL_POOL_SIZE_MIN     (1u << 20)
#define HL_POOL_SIZE         (8u << 20)
#define HL_MAX_ARENAS        16u
#define HL_DEFAULT_DECAY_MS  100u

/* ---- locks ------------------------------------------------------------------------------ */
typedef pthread_mutex_t hl_lock_t;
hl_inline void hl_lock(hl_lock_t *l)
{
    pthread_mutex_lock(l);
}
hl_inline void hl_unlock(hl_lock_t *l)
{
    pthread_mutex_unlock(l);
}
/* Adaptive: a waiter spins briefly before sleeping. With more threads than cores a lock
 * holder is often preempted for only a moment; measured on 4 threads on 2 cores (Larson,
 * cross-thread frees): +10 % throughput against the default mutex. */
hl_inline void hl_lock_init(hl_lock_t *l)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
    pthread_mutex_init(l, &a);
    pthread_mutexattr_destroy(&a);
}

/* ---- diagnostics (util.c) --------------------------------------------------------------- */
/* Fixed-buffer writer: never allocates, writes with write(2). */
typedef struct hl_out_s {
    int fd;
    size_t len;
    char buf[1024];
} hl_out_t;
void hl_out_init(hl_out_t *o, int fd);
void hl_out_str(hl_out_t *o, const char *s);
void hl_out_u64(hl_out_t *o, uint64_t v);
void hl_out_u64w(hl_out_t *o, uint64_t v, int width);
void hl_out_hex(hl_out_t *o, uint64_t v);
void hl_out_size(hl_out_t *o, uint64_t bytes); /* "12.3 MiB" */
void hl_out_flush(hl_out_t *o);
/* A bounded string in a fixed buffer (report details lines): never allocates, truncates. */
typedef struct hl_text_s {
    char s[192];
    size_t n;
} hl_text_t;
void hl_text_str(hl_text_t *t, const char *s);
void hl_text_num(hl_text_t *t, uint64_t v, int hex); /* decimal, or 0x-prefixed hex */
/* The hexadecimal number at *s (lower-case digits, as /proc/PID/maps writes them); *s is left
 * on the first other character. */
uint64_t hl_parse_hex(const char **s);
/* Write "heapledger: <msg>\n" to stderr. */
void hl_warn(const char *msg, const char *arg);
/* A checker found a broken invariant: describe it on stderr when verbose ("heapledger:
 * <module> check: <what> at <where>"); returns 1 so that checkers can sum the calls. */
size_t hl_check_fail(int verbose, const char *module, const char *what, const void *where);
/* Report an unrecoverable heap error and abort. */
__attribute__((noreturn)) void hl_fatal(const char *kind, const void *addr, const char *details);

#if HL_DEBUG
#define hl_assert(c) ((c) ? (void)0 : hl_fatal("assertion", NULL, #c))
#else
#define hl_assert(c) ((void)0)
#endif

hl_inline size_t hl_align_up(size_t n, size_t a)
{
    return (n + a - 1) & ~(a - 1);
}
hl_inline bool hl_is_pow2(size_t a)
{
    return a && !(a & (a - 1));
}

#include "os.h"
#include "tlsf.h"
#include "tiny.h"
#include "tcap.h"
#include "mid.h"
#include "large.h"
#include "decay.h"

/* ---- per-thread state (thread.c) ------------------------------------------------------- */
typedef struct hl_tbin_s {
    void *head;    /* LIFO of free slots, linked through their first word */
    int32_t avail; /* free room: cap - slots in the list (the fast paths touch only this) */
    uint32_t cap;  /* 0 = no caching (unbound, hardened, exiting, not a tiny tag) */
} hl_tbin_t;

hl_inline uint32_t hl_bin_count(const hl_tbin_t *b)
{
    return b->cap - (uint32_t)b->avail;
}

enum { HL_TLS_FRESH = 0, HL_TLS_BOUND = 1, HL_TLS_EXITING = 2 };

/* Bins of a thread cache: tiny class c is bin HL_BIN_TINY | c, the header byte less
 * HL_BIN_BASE_TAG; bins 0..31 keep cap 0 (the class map's 0, header bytes 0x80..0x9F). 64 bins
 * of 16 bytes instead of one per byte value: 3 KiB less static TLS per cache, two per thread. */
#define HL_BIN_TINY     0x20u
#define HL_BIN_BASE_TAG (HL_TAG_TINY - HL_BIN_TINY)
#define HL_BINS         64u

/* A thread cache. The class map gives the shim's free the bin index itself (0: cap 0); the
 * header-byte path takes tag - HL_BIN_BASE_TAG and one range test (hl_free_push). */
typedef struct hl_tls_s {
    hl_tbin_t bins[HL_BINS];
    hl_heap_t *heap;     /* heap the cache belongs to; NULL until the first miss */
    uint32_t state;      /* HL_TLS_* */
    uint32_t arena;      /* mid arena index of this thread */
    uint16_t in_trace;   /* reentrancy guard (hl_tls only): nested calls are the
                            tracer's (side heap, untraced) */
    uint16_t trace_kind; /* hl_tls only: 0 not known yet, 1 traced, 2 the tracer's
                            (LTTng-UST's own "-ust" threads: side heap, untraced) */
    uint64_t heap_uid;   /* uid of heap when bound (detects a destroyed heap) */
    uint64_t paths[HL_PATH_COUNT];
    uint32_t reg_slot;      /* 1 + index in the registry of live caches (thread.c), 0 none */
    uint32_t unbound_frees; /* frees served while unbound (HL_TLS_BIND_AFTER_FREES) */
    uint32_t arena_hint;    /* 1 + arena of the last mid block freed while unbound (mid.h) */
    hl_tcap_t tcap;         /* adaptive caps of the bins (tcap.h) */
} hl_tls_t;

/* A thread that has never allocated serves this many frees without binding its cache: glibc
 * frees during a thread's teardown, after its key destructors ran (__nptl_free_stacks), and a
 * cache bound then would never be flushed nor unregistered (thread.c). */
#define HL_TLS_BIND_AFTER_FREES 64u

/* Two caches per thread: hl_tls for the default heap (the malloc shim: no "which heap" test
 * on its fast path) and hl_tls_x for the last other heap the thread used. */
extern __thread hl_tls_t hl_tls __attribute__((tls_model("initial-exec")));
extern __thread hl_tls_t hl_tls_x __attribute__((tls_model("initial-exec")));

/* Bind the calling thread's cache for heap h to it (flushing what it held for another). */
hl_tls_t *hl_tls_bind(hl_heap_t *h);
/* Flush every bin of t back to its heap. */
void hl_tls_flush(hl_tls_t *t);
void hl_thread_init_once(void);
/* Sum of per-path counters of heap h over live and exited threads. */
void hl_thread_sum_paths(hl_heap_t *h, uint64_t *out);
/* The thread caches bound to h (the caller's too), up to max, for the leak scan: their
 * count, or -1 when the registry lock is held (tried, never waited for). */
int hl_thread_caches(hl_heap_t *h, hl_tls_t **out, size_t max);

/* ---- the heap object (heap.c) ----------------------------------------------------------- */
enum { HL_HEAP_UNINIT = 0, HL_HEAP_INITIALIZING = 1, HL_HEAP_READY = 2, HL_HEAP_DEAD = 3 };

struct hl_heap_s {
    uint32_t state;
    uint32_t is_default;
    uint64_t uid;
    hl_options_t opt;       /* resolved (automatic values filled in) */
    hl_options_t opt_given; /* as given: what reports and the config event show */
    size_t tiny_max;        /* largest tiny request (0: tiny tier off) */
    size_t mid_max;         /* largest mid request; above: large (normal mode) */
    void *arena_base;       /* fixed-arena mode: the region, else NULL */
    size_t arena_size;
    int arena_owned;                  /* arena mapped by us */
    uint32_t arena_reported;          /* os_map of the arena emitted (hl_region_report) */
    struct hl_sidemeta_s *hmeta_side; /* hardened fixed arena: block metadata outside it */
    hl_tiny_t tiny;
    hl_mid_t mid;
    hl_large_t large;
    uint32_t decay_pending; /* the large cache or a mid arena keeps memory (decay.h) */
    uint32_t decay_next;    /* hl_decay_now() of the next decay pass */
    uint32_t decay_ops;     /* slow paths / HL_DECAY_EVERY, and its value at the last pass */
    uint32_t decay_last_ops;
    uint64_t paths[HL_PATH_COUNT]; /* counters of exited threads (atomic adds) */
    struct hl_heap_s *next, *prev; /* all heaps (fork handlers, thread binding) */
};

/* The default heap; ready after hl_default_init(). */
extern hl_heap_t hl_main_heap;

hl_inline hl_tls_t *hl_tls_of(hl_heap_t *h)
{
    return h == &hl_main_heap ? &hl_tls : &hl_tls_x;
}

/* Describe what an operation did (for stats and tracing). */
hl_inline void hl_info(hl_opinfo_t *info, unsigned tier, unsigned cls, unsigned path, size_t usable)
{
    info->tier = (uint8_t)tier;
    info->cls = (uint8_t)cls;
    info->path = (uint8_t)path;
    info->usable = usable;
}

/* Count an operation's path against heap h: on the thread's counters when its cache belongs
 * to h, else directly on the heap (atomic). */
hl_inline void hl_count(hl_heap_t *h, unsigned path)
{
    hl_tls_t *t = hl_tls_of(h);
    if (hl_likely(t->heap == h))
        t->paths[path]++;
    else
        __atomic_add_fetch(&h->paths[path], 1, __ATOMIC_RELAXED);
}

void hl_default_init(void);
hl_inline void hl_heap_ensure(hl_heap_t *h)
{
    if (hl_unlikely(__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) != HL_HEAP_READY))
        hl_default_init();
}

/* Core operations with path reporting (heap.c). info may not be NULL. */
void *hl_heap_calloc_info(hl_heap_t *h, size_t n, size_t size, hl_opinfo_t *info);
void *hl_heap_memalign_info(hl_heap_t *h, size_t align, size_t n, hl_opinfo_t *info);
void *hl_heap_realloc_info(hl_heap_t *h, void *p, size_t n, hl_opinfo_t *info);
/* Slow paths of the inline fast paths (heap.c). */
void *hl_malloc_slow(hl_heap_t *h, size_t n, hl_opinfo_t *info);
void hl_free_slow(hl_heap_t *h, void *p, hl_opinfo_t *info);

/* Report every long-lived region of h (slab segments, TLSF pools, the fixed arena) not yet
 * reported to this process's trace: called at the first traced operation of a process, so
 * that regions mapped before tracing started appear too (heap.c). */
void hl_heap_report_regions(hl_heap_t *h);

/* Heap registry and fork (heap.c, thread.c). */
int hl_heap_alive(hl_heap_t *h, uint64_t uid);
void hl_global_init(void); /* once: fork handlers */
void hl_thread_fork_prepare(void);
void hl_thread_fork_parent(void);
void hl_thread_fork_child(void);

/* ---- the tracer's heap (sideheap.c) ------------------------------------------------------ */
/* Who may use it: the shim's gated path only, for calls it attributes to the tracer (nested
 * in an emit, on an LTTng-UST "-ust" thread, or made from LTTng-UST's code; shim.c). Frees
 * and reallocs go to it by address from any thread. */
#define HL_SIDE_RESERVE          (256u << 20) /* address space reserved when recorded (NORESERVE) */
#define HL_SIDE_RESERVE_MIN      (16u << 20)  /* smallest reservation tried when that fails */
#define HL_SIDE_RESERVE_UNTRACED (1u << 20)   /* untraced: only the call-site registration */
#define HL_SIDE_OWNER            0xFFu        /* TLSF owner byte of its blocks: no heap's arena */

typedef struct hl_side_region_s {
    uintptr_t base;
    size_t len; /* 0 until the region is mapped (published with release order) */
} hl_side_region_t;
extern hl_side_region_t hl_side_region;

/* Is p a block of the side heap? Two loads, a subtraction and a compare. */
hl_inline int hl_side_owns(const void *p)
{
    return (uintptr_t)p - __atomic_load_n(&hl_side_region.base, __ATOMIC_RELAXED) <
           __atomic_load_n(&hl_side_region.len, __ATOMIC_ACQUIRE);
}
/* The malloc family on the side heap (NULL with errno ENOMEM when it cannot serve: the caller
 * then falls back to the default heap). Never allocate, never trace, never print. */
void *hl_side_malloc(size_t n);
void *hl_side_calloc(size_t n, size_t size);
void *hl_side_memalign(size_t align, size_t n);
void *hl_side_realloc(void *p, size_t n); /* p must be a side block (or NULL) */
void hl_side_free(void *p);               /* p must be a side block */
size_t hl_side_usable(const void *p);
/* Bytes of address space to reserve at the first allocation (default HL_SIDE_RESERVE);
 * no effect once the region exists. */
void hl_side_reserve_hint(size_t bytes);
/* Live blocks and their usable bytes. */
void hl_side_totals(size_t *blocks, size_t *bytes);
/* One line on fd with the live blocks and bytes of the side heap (nothing if never used). */
void hl_side_print(int fd);
/* Broken invariants of its TLSF instance. */
size_t hl_side_check(int verbose);
void hl_side_fork_prepare(void);
void hl_side_fork_parent(void);
void hl_side_fork_child(void);

/* Stats printing (stats.c). */
void hl_stats_print(hl_heap_t *h, int fd);

/* Options (options.c). */
void hl_options_from_env(hl_options_t *o);
const char *hl_options_env_string(void); /* the raw HEAPLEDGER_OPTIONS value, or "" */

/* Map a tiny request size to its class: hl_size_class[(n + 16) >> 4] for n <= HL_TINY_MAX;
 * hl_size_bin[] holds the byte offset of that class's bin in hl_tls_t.bins (saves the fast
 * path three instructions). */
extern const uint8_t hl_size_class[(HL_TINY_MAX + 16) / 16 + 1];
extern const uint16_t hl_size_bin[(HL_TINY_MAX + 16) / 16 + 1];

/* ---- fast paths ------------------------------------------------------------------------- */

/* Allocation fast path: pop from the thread cache. About 20 instructions with the shim;
 * one unlikely branch (empty bin, or cache of another heap): NULL, the caller then takes
 * hl_malloc_slow(). For the default heap the "which heap" test folds away: its cache is bound
 * to it or empty. */
hl_inline void *hl_malloc_pop_below(hl_heap_t *h, size_t n, size_t limit, hl_opinfo_t *info)
{
    if (hl_likely(n < limit)) {
        unsigned off = hl_size_bin[(n + 16) >> 4];
        hl_tls_t *t = hl_tls_of(h);
        hl_tbin_t *b = (hl_tbin_t *)((char *)t->bins + off);
        void *p = b->head;
        if (hl_likely(p != NULL && (h == &hl_main_heap || t->heap == h))) {
            b->head = *(void **)p;
            b->avail++;
            t->paths[HL_PATH_TINY_CACHE_HIT]++;
            info->tier = HL_TIER_TINY;
            info->cls = (uint8_t)((off / sizeof(hl_tbin_t)) & (HL_CLASS_MAX - 1));
            info->path = HL_PATH_TINY_CACHE_HIT;
            info->usable = hl_class_slot(info->cls) - 1;
            return p;
        }
    }
    return NULL;
}

/* The pop, else hl_malloc_slow() (the shim calls the two apart: its slow entry records the
 * program's call for stack capture, stack.h). */
hl_inline void *hl_malloc_fast_below(hl_heap_t *h, size_t n, size_t limit, hl_opinfo_t *info)
{
    void *p = hl_malloc_pop_below(h, n, limit, info);
    return hl_likely(p != NULL) ? p : hl_malloc_slow(h, n, info);
}

/* The same with the tiny limit itself as the gate (the shim passes a limit that drops to 0
 * when tracing may be on; limit <= HL_TINY_MAX + 1). */
hl_inline void *hl_malloc_fast(hl_heap_t *h, size_t n, hl_opinfo_t *info)
{
    return hl_malloc_fast_below(h, n, HL_TINY_MAX + 1, info);
}

/* Free fast path: the header byte less HL_BIN_BASE_TAG indexes the bin; push when it has
 * room (1; 0: the caller takes hl_free_slow()). About 19 instructions with the shim. Mid,
 * large and corrupt header bytes fall outside the bins or on bins of cap 0. */
hl_inline int hl_free_push(hl_heap_t *h, void *p, hl_opinfo_t *info)
{
    unsigned tag = ((const uint8_t *)p)[-1];
    unsigned bin = tag - HL_BIN_BASE_TAG;
    hl_tls_t *t = hl_tls_of(h);
    if (hl_unlikely(bin >= HL_BINS)) return 0;
    hl_tbin_t *b = &t->bins[bin];
    if (hl_likely(b->avail > 0 && (h == &hl_main_heap || t->heap == h))) {
        *(void **)p = b->head;
        b->head = p;
        b->avail--;
        t->paths[HL_PATH_TINY_CACHE_PUSH]++;
        info->tier = HL_TIER_TINY;
        info->cls = (uint8_t)(tag & (HL_CLASS_MAX - 1));
        info->path = HL_PATH_TINY_CACHE_PUSH;
        info->usable = hl_class_slot(info->cls) - 1;
        return 1;
    }
    return 0;
}

/* The push, else hl_free_slow() (apart in the shim, as for malloc). */
hl_inline void hl_free_fast(hl_heap_t *h, void *p, hl_opinfo_t *info)
{
    if (hl_unlikely(!hl_free_push(h, p, info))) hl_free_slow(h, p, info);
}

#endif
