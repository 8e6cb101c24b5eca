/* liballoc/shim.c — the preloaded malloc family: a thin shim over the default heap.
 *
 * Every entry point is the inline fast path plus one predictable branch on "is a tracing
 * session listening" (hl_trace_active). The traced variants are out of line: they take the
 * per-thread guard so that only the outermost allocator call of a thread is traced (LTTng-UST
 * and libunwind allocate inside the emit), read the TSC around the operation itself only, and
 * emit one event. Nested calls are served, untraced.
 *
 * Semantics follow glibc: 16-byte alignment, malloc(0) returns a unique pointer,
 * realloc(p, 0) frees and returns NULL, calloc/reallocarray check overflow (ENOMEM),
 * posix_memalign returns EINVAL/ENOMEM without touching errno, aligned_alloc rejects
 * alignments that are not powers of two (EINVAL), memalign rounds them up.
 */
#include "internal.h"
#include "harden.h" /* hardening hooks: sized frees, check at exit */

#include <errno.h>
#include <malloc.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define HL_API __attribute__((visibility("default")))

static hl_heap_t *const H = &hl_main_heap;
static uint64_t tsc_floor;

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t cycles_since(uint64_t c0)
{
    uint64_t d = rdtsc() - c0;
    return d > tsc_floor ? d - tsc_floor : 0;
}

/* LTTng-UST's own threads are named "<process>-ust" (set when they start, before they
 * allocate). They are never traced: their events are noise, and capturing their stacks is a
 * deadlock — they allocate while holding LTTng-UST's lock, which a thread inside dlclose()
 * (holding the loader lock) waits for, while unw_backtrace() waits for the loader lock. */
static hl_noinline uint16_t thread_kind(void)
{
    char name[17] = {0};
    if (prctl(PR_GET_NAME, name, 0, 0, 0) != 0)
        return 1;
    size_t n = strlen(name);
    return n >= 4 && !memcmp(name + n - 4, "-ust", 4) ? 2 : 1;
}

/* Regions mapped before tracing started are reported at the first traced operation of the
 * process (and again in a forked child, a new process for the trace). */
static int regions_reported;

static hl_noinline void report_regions(void)
{
    if (__atomic_exchange_n(&regions_reported, 1, __ATOMIC_ACQ_REL) == 0)
        hl_heap_report_regions(H);
}

static void shim_fork_child(void) { regions_reported = 0; }

/* Begin a traced operation; returns 0 if the thread is already inside one (nested) or is
 * never traced. */
static inline int trace_enter(hl_tls_t *t)
{
    if (t->in_trace)
        return 0;
    if (hl_unlikely(t->trace_kind == 0))
        t->trace_kind = thread_kind();
    if (t->trace_kind == 2)
        return 0;
    t->in_trace = 1;
    if (hl_unlikely(!__atomic_load_n(&regions_reported, __ATOMIC_RELAXED)))
        report_regions();
    return 1;
}

/* ---- traced variants (out of line) ------------------------------------------------------- */

static hl_noinline void *traced_alloc(int kind, size_t a, size_t b)
{
    hl_tls_t *t = &hl_tls;
    hl_opinfo_t info;
    int outer = trace_enter(t);
    uint64_t c0 = rdtsc();
    void *p = kind == 0   ? hl_malloc_fast(H, a, &info)
              : kind == 1 ? hl_heap_calloc_info(H, a, b, &info)
                          : hl_heap_memalign_info(H, a, b, &info);
    if (outer) {
        uint64_t c = cycles_since(c0);
        int saved = errno;
        size_t req = kind == 1 ? a * b : kind == 2 ? b : a;
        hl_trace_emit_alloc(p, req, &info, c);
        errno = saved;
        t->in_trace = 0;
    }
    return p;
}

static hl_noinline void traced_free(void *p)
{
    hl_tls_t *t = &hl_tls;
    hl_opinfo_t info;
    int outer = trace_enter(t);
    uint64_t c0 = rdtsc();
    hl_free_fast(H, p, &info);
    if (outer) {
        uint64_t c = cycles_since(c0);
        int saved = errno;
        hl_trace_emit_free(p, &info, c);
        errno = saved;
        t->in_trace = 0;
    }
}

static hl_noinline void *traced_realloc(void *old, size_t n)
{
    hl_tls_t *t = &hl_tls;
    hl_opinfo_t info;
    int outer = trace_enter(t);
    uint64_t c0 = rdtsc();
    void *p = hl_heap_realloc_info(H, old, n, &info);
    if (outer) {
        uint64_t c = cycles_since(c0);
        int saved = errno;
        hl_trace_emit_realloc(old, p, n, &info, c);
        errno = saved;
        t->in_trace = 0;
    }
    return p;
}

/* ---- the malloc family ----------------------------------------------------------------------- */

/* The fast-path gate. Tracing is possible only once the probe provider
 * (libheapledger-tp.so) is loaded; its constructor calls hl_trace_gate_close() before it
 * registers the probes. Until then malloc's fast path compares the size against the tiny
 * limit and free's against NULL, as they must anyway, and pay nothing for tracing (the
 * tracepoints compiled in cost no instruction there); afterwards the limit is 0 and the floor
 * the top of the address space, so every call takes the out-of-line path, which asks
 * hl_trace_active() exactly. */
static size_t gate_limit = HL_TINY_MAX + 1;
static uintptr_t gate_floor = 0;

HL_API void hl_trace_gate_close(void)
{
    __atomic_store_n(&gate_limit, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&gate_floor, UINTPTR_MAX, __ATOMIC_RELEASE);
}

static hl_noinline void *malloc_gated(size_t n)
{
    if (hl_unlikely(hl_trace_active()))
        return traced_alloc(0, n, 0);
    hl_opinfo_t info;
    return hl_malloc_fast(H, n, &info);
}

static hl_noinline void free_gated(void *p)
{
    if (!p)
        return;
    if (hl_unlikely(hl_trace_active())) {
        traced_free(p);
        return;
    }
    hl_opinfo_t info;
    hl_free_fast(H, p, &info);
}

HL_API void *malloc(size_t n)
{
    size_t limit = __atomic_load_n(&gate_limit, __ATOMIC_RELAXED);
    if (limit > HL_TINY_MAX + 1) /* never: lets the compiler drop the tiny-limit test below */
        __builtin_unreachable();
    if (hl_likely(n < limit)) {
        hl_opinfo_t info;
        return hl_malloc_fast_below(H, n, HL_TINY_MAX + 1, &info);
    }
    return malloc_gated(n);
}

HL_API void free(void *p)
{
    if (hl_likely((uintptr_t)p > __atomic_load_n(&gate_floor, __ATOMIC_RELAXED))) {
        hl_opinfo_t info;
        hl_free_fast(H, p, &info);
        return;
    }
    free_gated(p);
}

HL_API void *calloc(size_t n, size_t size)
{
    if (hl_unlikely(hl_trace_active()))
        return traced_alloc(1, n, size);
    hl_opinfo_t info;
    return hl_heap_calloc_info(H, n, size, &info);
}

HL_API void *realloc(void *p, size_t n)
{
    if (hl_unlikely(hl_trace_active()))
        return traced_realloc(p, n);
    hl_opinfo_t info;
    return hl_heap_realloc_info(H, p, n, &info);
}

HL_API void *reallocarray(void *p, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, total);
}

static void *aligned(size_t align, size_t n)
{
    if (hl_unlikely(hl_trace_active()))
        return traced_alloc(2, align, n);
    hl_opinfo_t info;
    return hl_heap_memalign_info(H, align, n, &info);
}

HL_API int posix_memalign(void **out, size_t align, size_t n)
{
    if (!hl_is_pow2(align) || align % sizeof(void *))
        return EINVAL;
    int saved = errno;
    void *p = aligned(align, n);
    if (!p) {
        errno = saved;
        return ENOMEM;
    }
    *out = p;
    return 0;
}

HL_API void *aligned_alloc(size_t align, size_t n)
{
    if (!hl_is_pow2(align)) {
        errno = EINVAL;
        return NULL;
    }
    return aligned(align, n);
}

HL_API void *memalign(size_t align, size_t n)
{
    if (align > SIZE_MAX / 2 + 1) {
        errno = EINVAL;
        return NULL;
    }
    if (!hl_is_pow2(align)) {
        size_t a = 1;
        while (a < align)
            a <<= 1;
        align = a;
    }
    return aligned(align, n);
}

HL_API void *valloc(size_t n) { return aligned(hl_page_size, n); }

HL_API void *pvalloc(size_t n)
{
    size_t ps = hl_page_size;
    if (n > SIZE_MAX - ps) {
        errno = ENOMEM;
        return NULL;
    }
    return aligned(ps, n ? hl_align_up(n, ps) : ps);
}

HL_API size_t malloc_usable_size(void *p) { return hl_heap_usable_size(H, p); }

HL_API void free_sized(void *p, size_t size)
{
    if (H->opt.harden) /* hardening hook: size must match the block */
        hl_harden_check_delete(H, p, size, 0, "free_sized");
    free(p);
}

HL_API void free_aligned_sized(void *p, size_t align, size_t size)
{
    if (H->opt.harden) /* hardening hook */
        hl_harden_check_delete(H, p, size, align, "free_aligned_sized");
    free(p);
}

/* Tells cxx.c that the malloc shim (and so the default heap) is what serves this process. */
const int hl_shim_linked = 1;

HL_API int malloc_trim(size_t pad) { return hl_heap_trim(H, pad); }

HL_API struct mallinfo2 mallinfo2(void)
{
    struct mallinfo2 m;
    hl_heap_info_t i;
    memset(&m, 0, sizeof m);
    hl_heap_info(H, &i);
    m.arena = i.held - i.large;
    m.ordblks = i.pools;
    m.hblks = __atomic_load_n(&H->large.blocks, __ATOMIC_RELAXED);
    m.hblkhd = i.large;
    m.uordblks = i.used;
    m.fordblks = i.free_tiny + i.free_mid;
    m.keepcost = i.largest_free;
    return m;
}

static int clamp_int(size_t v) { return v > 0x7fffffff ? 0x7fffffff : (int)v; }

HL_API struct mallinfo mallinfo(void)
{
    struct mallinfo2 m2 = mallinfo2();
    struct mallinfo m;
    memset(&m, 0, sizeof m);
    m.arena = clamp_int(m2.arena);
    m.ordblks = clamp_int(m2.ordblks);
    m.hblks = clamp_int(m2.hblks);
    m.hblkhd = clamp_int(m2.hblkhd);
    m.uordblks = clamp_int(m2.uordblks);
    m.fordblks = clamp_int(m2.fordblks);
    m.keepcost = clamp_int(m2.keepcost);
    return m;
}

HL_API void malloc_stats(void) { hl_stats_print(H, 2); }

/* glibc's internal names, for programs that call them directly. */
HL_API void *__libc_malloc(size_t n) { return malloc(n); }
HL_API void __libc_free(void *p) { free(p); }
HL_API void *__libc_calloc(size_t n, size_t s) { return calloc(n, s); }
HL_API void *__libc_realloc(void *p, size_t n) { return realloc(p, n); }
HL_API void *__libc_memalign(size_t a, size_t n) { return memalign(a, n); }

/* ---- heapledger_* ----------------------------------------------------------------------------- */

HL_API const char *heapledger_version(void) { return HL_VERSION; }
HL_API void heapledger_print_stats(void) { hl_stats_print(H, 2); }
HL_API size_t heapledger_check_heap(void) { return hl_heap_check(H, 1); }

/* ---- process start and exit ------------------------------------------------------------------- */

static void calibrate_tsc_floor(void)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 64; i++) {
        uint64_t a = rdtsc(), b = rdtsc();
        if (b - a < best)
            best = b - a;
    }
    tsc_floor = best;
}

__attribute__((constructor(101))) static void shim_init(void)
{
    hl_heap_ensure(H);
    hl_global_init();
    pthread_atfork(NULL, NULL, shim_fork_child);
    calibrate_tsc_floor();
    char opts[512];
    hl_options_format(&H->opt_given, opts, sizeof opts);
    hl_trace_init(opts, 0);
}

__attribute__((destructor)) static void shim_fini(void)
{
    if (H->state == HL_HEAP_READY && H->opt.stats)
        hl_stats_print(H, 2);
    if (H->state == HL_HEAP_READY && H->opt.check_at_exit) /* hardening hook */
        hl_heap_check(H, 1);
}
