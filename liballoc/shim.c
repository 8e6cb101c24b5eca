/* liballoc/shim.c — the preloaded malloc family: a thin shim over the default heap.
 *
 * Every entry point is the inline fast path plus one predictable branch on "is a tracing
 * session listening" (hl_trace_active). The traced variants are out of line: they take the
 * per-thread guard so that only the outermost allocator call of a thread is traced (LTTng-UST
 * and libunwind allocate inside the emit), read the TSC around the operation itself only, and
 * emit one event. Nested calls are the tracer's: served by the side heap (sideheap.c), untraced.
 *
 * Semantics follow glibc: 16-byte alignment, malloc(0) returns a unique pointer,
 * realloc(p, 0) frees and returns NULL, calloc/reallocarray check overflow (ENOMEM),
 * posix_memalign returns EINVAL/ENOMEM without touching errno, aligned_alloc rejects
 * alignments that are not powers of two (EINVAL), memalign rounds them up.
 */
#include "internal.h"
#include "classmap.h"
#include "harden.h" /* hardening hooks: sized frees, check at exit */
#include "leakscan.h"
#include "stack.h" /* who a call belongs to: the tracer's modules */

#include <errno.h>
#include <malloc.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
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
    if (prctl(PR_GET_NAME, name, 0, 0, 0) != 0) return 1;
    size_t n = strlen(name);
    return n >= 4 && !memcmp(name + n - 4, "-ust", 4) ? 2 : 1;
}

/* Regions mapped before tracing started are reported at the first traced operation of the
 * process (and again in a forked child, a new process for the trace). */
static int regions_reported;

static hl_noinline void report_regions(void)
{
    if (__atomic_exchange_n(&regions_reported, 1, __ATOMIC_ACQ_REL) == 0) hl_heap_report_regions(H);
}

/* ---- the tracer's calls (served by the side heap, sideheap.c) -----------------------------
 *
 * Under `heapledger record` the tracer allocates through this malloc too. A call is the
 * tracer's when it is nested in an emit (the in_trace guard), made on one of LTTng-UST's
 * "-ust" threads, or made from LTTng-UST's own code on a program thread: found by the stack
 * the alloc event would carry while tracing is on (traced_alloc), and by a walk while one of
 * the windows below is open. Those calls are served by the side heap, untraced, and a side
 * block goes back to it by its address from any thread (hl_side_owns).
 *
 * Windows (side_window): LTTng-UST starts in its constructor, before the probe provider
 * (libheapledger-tp.so) is initialised and before any event can be enabled; it starts again
 * in a forked child from its fork wrapper, after the fork handlers; its destructor runs after
 * ours. While a window is open, each call of a program thread is attributed by its stack: a
 * frame in LTTng-UST's libraries or the provider makes it the tracer's (hl_stack_in_tracer).
 * The start-up window closes at the first call of the program's own after the provider's
 * constructor ran, the fork window at the first call of the program's own in the child; the
 * exit window stays open.
 *
 * Whether the process is recorded is known at its first allocator call: the gate starts
 * closed and the first call on the gated path looks for the probe provider among the loaded
 * objects (gate_decide); when it is not there the gate opens and the untraced fast paths are
 * exactly what they were. */
enum { GATE_UNDECIDED = 0, GATE_DECIDING = 1, GATE_DECIDED = 2 };
#ifdef HL_TRACE_LTTNG
static int gate_state = GATE_UNDECIDED;
#else
static int gate_state = GATE_DECIDED; /* no tracing backend: the gate starts open */
#endif
static int side_on;       /* the tracer's calls go to the side heap (provider loaded) */
static int side_window;   /* a start-up or fork window is open */
static int provider_init; /* the provider's constructor ran (hl_trace_gate_close) */
static int exit_window;   /* the window opened at exit: it stays open */

#define HL_WINDOW_DEPTH 32 /* frames looked at for an LTTng-UST caller */

static void gate_open(void);

static hl_cold void gate_decide(void)
{
    hl_cmap_init(); /* free's map exists before any block (the side heap's too) is handed out */
    int st = GATE_UNDECIDED;
    if (!__atomic_compare_exchange_n(&gate_state, &st, GATE_DECIDING, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&gate_state, __ATOMIC_ACQUIRE) != GATE_DECIDED)
            sched_yield();
        return;
    }
    if (hl_stack_tracer_scan()) {
        __atomic_store_n(&side_window, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&side_on, 1, __ATOMIC_RELEASE);
    } else {
        gate_open();
    }
    __atomic_store_n(&gate_state, GATE_DECIDED, __ATOMIC_RELEASE);
}

/* Attribute a call of a program thread in a window by its stack. The unwinder's first walk
 * allocates: under the guard, those calls are the tracer's. */
static hl_noinline int window_walk(hl_tls_t *t)
{
    uint64_t ips[HL_WINDOW_DEPTH];
    t->in_trace = 1;
    size_t n = hl_stack_capture(ips, HL_WINDOW_DEPTH, 0);
    t->in_trace = 0;
    int tracer = hl_stack_in_tracer(ips, n);
    if (!tracer && __atomic_load_n(&provider_init, __ATOMIC_ACQUIRE) && !exit_window)
        __atomic_store_n(&side_window, 0, __ATOMIC_RELAXED);
    return tracer;
}

/* Is this call (on the gated path) the tracer's? */
static inline int tracer_call(hl_tls_t *t)
{
    if (t->in_trace) return 1;
    if (!__atomic_load_n(&side_on, __ATOMIC_ACQUIRE)) return 0;
    if (hl_unlikely(t->trace_kind == 0)) t->trace_kind = thread_kind();
    if (t->trace_kind == 2) return 1;
    if (hl_unlikely(__atomic_load_n(&side_window, __ATOMIC_RELAXED))) return window_walk(t);
    return 0;
}

/* A tracer's allocation (kind as in traced_alloc); NULL when the side heap cannot serve it:
 * the caller then falls back to the default heap. */
static void *side_alloc(int kind, size_t a, size_t b)
{
    return kind == 0   ? hl_side_malloc(a)
           : kind == 1 ? hl_side_calloc(a, b)
                       : hl_side_memalign(a, b);
}

static void shim_fork_child(void)
{
    regions_reported = 0;
    if (side_on) /* LTTng-UST's fork wrapper starts it again in the child */
        side_window = 1;
}

/* Begin a traced operation; returns 0 if the thread is already inside one (nested) or is
 * never traced. */
static inline int trace_enter(hl_tls_t *t)
{
    if (t->in_trace) return 0;
    if (hl_unlikely(t->trace_kind == 0)) t->trace_kind = thread_kind();
    if (t->trace_kind == 2) return 0;
    t->in_trace = 1;
    if (hl_unlikely(!__atomic_load_n(&regions_reported, __ATOMIC_RELAXED))) report_regions();
    return 1;
}

/* ---- traced variants (out of line) ------------------------------------------------------- */

static hl_noinline void *traced_alloc(int kind, size_t a, size_t b)
{
    hl_tls_t *t = &hl_tls;
    hl_opinfo_t info;
    int outer = trace_enter(t);
    void *p;
    /* LTTng-UST's own code on a program thread (its statedump after a dlopen, say): found by
     * the stack the event would carry, captured first; served by the side heap, untraced. */
    if (outer && hl_trace_prepare_alloc() && (p = side_alloc(kind, a, b)) != NULL) {
        t->in_trace = 0;
        return p;
    }
    uint64_t c0 = rdtsc();
    p = kind == 0   ? hl_malloc_fast(H, a, &info)
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
#ifdef HL_TRACE_LTTNG /* closed until the first call decided (gate_decide) */
static size_t gate_limit = 0;
static uintptr_t gate_floor = UINTPTR_MAX;
#define hl_gated() hl_unlikely(__atomic_load_n(&gate_floor, __ATOMIC_RELAXED) != 0)
#else
static size_t gate_limit = HL_TINY_MAX + 1;
static uintptr_t gate_floor = 0;
#define hl_gated() hl_trace_active()
#endif

HL_API void hl_trace_gate_close(void)
{
    __atomic_store_n(&gate_limit, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&gate_floor, UINTPTR_MAX, __ATOMIC_RELEASE);
    hl_cmap_gate(0); /* free's gate (classmap.h) */
    __atomic_store_n(&side_on, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&provider_init, 1, __ATOMIC_RELEASE);
}

static void gate_open(void)
{
    hl_cmap_gate(1);
    __atomic_store_n(&gate_floor, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&gate_limit, HL_TINY_MAX + 1, __ATOMIC_RELEASE);
    if (__atomic_load_n(&provider_init, __ATOMIC_ACQUIRE)) /* closed meanwhile: stays closed */
        hl_trace_gate_close();
}

/* The gated path of malloc, calloc and the aligned family (kind as in traced_alloc). */
static hl_noinline void *alloc_gated(int kind, size_t a, size_t b)
{
    if (hl_unlikely(__atomic_load_n(&gate_state, __ATOMIC_ACQUIRE) != GATE_DECIDED)) gate_decide();
    if (tracer_call(&hl_tls)) {
        void *p = side_alloc(kind, a, b);
        if (p) return p;
    }
    if (hl_unlikely(hl_trace_active())) return traced_alloc(kind, a, b);
    hl_opinfo_t info;
    return kind == 0   ? hl_malloc_fast(H, a, &info)
           : kind == 1 ? hl_heap_calloc_info(H, a, b, &info)
                       : hl_heap_memalign_info(H, a, b, &info);
}

/* malloc's and free's gated paths are tail-called by the entry: their frame is the entry's
 * (stack.h, hl_stack_enter). */
static hl_noinline void *malloc_gated(size_t n)
{
    uintptr_t entry = hl_stack_enter(__builtin_frame_address(0));
    void *p = alloc_gated(0, n, 0);
    hl_stack_leave(entry);
    return p;
}

static void free_gated_body(void *p)
{
    if (!p) return;
    if (hl_side_owns(p)) { /* the tracer's block, freed by whichever thread: untraced */
        hl_side_free(p);
        return;
    }
    if (hl_unlikely(hl_trace_active())) {
        traced_free(p);
        return;
    }
    hl_opinfo_t info;
    hl_free_fast(H, p, &info);
}

static hl_noinline void free_gated(void *p)
{
    uintptr_t entry = hl_stack_enter(__builtin_frame_address(0));
    free_gated_body(p);
    hl_stack_leave(entry);
}

static hl_noinline __attribute__((unused)) void *realloc_gated(void *p, size_t n)
{
    if (p && hl_side_owns(p)) /* a tracer's block stays the tracer's */
        return hl_side_realloc(p, n);
    if (!p) { /* realloc(NULL, n) is a realloc call: traced as one (docs/metrics.md, Counts) */
        if (hl_unlikely(__atomic_load_n(&gate_state, __ATOMIC_ACQUIRE) != GATE_DECIDED))
            gate_decide();
        if (tracer_call(&hl_tls)) {
            void *q = side_alloc(0, n, 0);
            if (q) return q;
        }
    }
    if (hl_unlikely(hl_trace_active())) return traced_realloc(p, n);
    hl_opinfo_t info;
    return hl_heap_realloc_info(H, p, n, &info);
}

/* malloc's slow path (an empty bin, hardened mode, mid and large sizes), tail-called: the
 * entry's frame for stack capture (stack.h). */
static hl_noinline void *malloc_slow(size_t n)
{
    uintptr_t entry = hl_stack_enter(__builtin_frame_address(0));
    hl_opinfo_t info;
    void *p = hl_malloc_slow(H, n, &info);
    hl_stack_leave(entry);
    return p;
}

HL_API void *malloc(size_t n)
{
    size_t limit = __atomic_load_n(&gate_limit, __ATOMIC_RELAXED);
    if (limit > HL_TINY_MAX + 1) /* never: lets the compiler drop the tiny-limit test below */
        __builtin_unreachable();
    if (hl_likely(n < limit)) {
        hl_opinfo_t info;
        void *p = hl_malloc_pop_below(H, n, HL_TINY_MAX + 1, &info);
        return hl_likely(p != NULL) ? p : malloc_slow(n);
    }
    return malloc_gated(n);
}

/* free's slow path, tail-called as malloc's. */
static hl_noinline void free_slow(void *p)
{
    uintptr_t entry = hl_stack_enter(__builtin_frame_address(0));
    hl_opinfo_t info;
    hl_free_slow(H, p, &info);
    hl_stack_leave(entry);
}

/* The bin comes from the class map, not from the block's header byte (classmap.h): the
 * block is only stored into. A full bin, a window of no tiny slab (mid, large, side blocks,
 * NULL) and a closed gate (every tag 0) all find a bin without room; then, with the gate
 * open, the header byte decides as before (read here, in free: a wild pointer's fault is
 * recognised by the function it happens in, fault.c), else the gated path. Without the class
 * map, free's entry jumps to free_hdr (hl_shim_free_without_map). Aligned to 16 bytes: its
 * first eight are rewritten with one aligned store. */
HL_API __attribute__((aligned(16))) void free(void *p)
{
    hl_tbin_t *b = &hl_tls.bins[hl_cmap_tag(p)];
    if (hl_likely(b->avail > 0)) {
        *(void **)p = b->head;
        b->head = p;
        b->avail--;
        hl_tls.paths[HL_PATH_TINY_CACHE_PUSH]++;
        return;
    }
    if (hl_likely((uintptr_t)p > __atomic_load_n(&gate_floor, __ATOMIC_RELAXED))) {
        hl_opinfo_t info;
        if (hl_likely(hl_free_push(H, p, &info))) return;
        free_slow(p);
        return;
    }
    free_gated(p);
}

/* This object's own free (the free callers find may be a program's, or a non-PIE program's
 * PLT entry): an assembler-local label at free's address, resolved when this object is
 * linked, so that no second symbol names free's code (harden.c and the symbolizer name free's
 * frames and faults by the function symbol there). */
__asm__(".set .Lhl_free_entry, free");
static uintptr_t free_entry(void)
{
    uintptr_t a;
    __asm__("lea .Lhl_free_entry(%%rip), %0" : "=r"(a));
    return a;
}

/* free without the class map: the header byte decides, as free did before the map (harden.c
 * names a wild pointer's fault in it an invalid free, like one in free). */
static hl_noinline void free_hdr(void *p)
{
    if (hl_likely((uintptr_t)p > __atomic_load_n(&gate_floor, __ATOMIC_RELAXED))) {
        hl_opinfo_t info;
        if (hl_likely(hl_free_push(H, p, &info))) return;
        free_slow(p);
        return;
    }
    free_gated(p);
}

/* free's variant without the class map (classmap.h, called once by hl_cmap_init when the maps
 * cannot be reserved). That is decided before the default heap or the side heap hands out a
 * block, so until then every free was free(NULL), which free reads from the one-byte map, and
 * afterwards free's first instruction is a jump to free_hdr: no test on either fast path.
 * The jump is written with one aligned 8-byte store while free's page is writable (callers
 * that run free meanwhile, only possible with free(NULL), execute either the old or the new
 * bytes). */
void hl_shim_free_without_map(void)
{
    uintptr_t at = free_entry(), page = at & ~(uintptr_t)(hl_page_size - 1);
    int32_t rel = (int32_t)((intptr_t)(uintptr_t)free_hdr - (intptr_t)(at + 5));
    if (mprotect((void *)page, hl_page_size, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
        hl_fatal("init", NULL,
                 "cannot reserve the class map (4 GiB of address space, no memory) nor switch "
                 "free to its header-byte variant (mprotect of the library's code refused); "
                 "raise the address-space limit (ulimit -v) by 4 GiB or run without heapledger");
    uint64_t word = __atomic_load_n((uint64_t *)at, __ATOMIC_RELAXED);
    word = (word & ~(uint64_t)0xffffffffff) | 0xe9 | (uint64_t)(uint32_t)rel << 8; /* jmp rel32 */
    __atomic_store_n((uint64_t *)at, word, __ATOMIC_SEQ_CST);
    __builtin___clear_cache((char *)at, (char *)at + 8);
    mprotect((void *)page, hl_page_size, PROT_READ | PROT_EXEC);
}

/* The entries below note their own frame for stack capture (stack.h, hl_stack_enter) and
 * call the operation's body, never another entry (whose frame would be called by ours). */
static void *calloc_body(size_t n, size_t size)
{
    if (hl_gated()) return alloc_gated(1, n, size);
    hl_opinfo_t info;
    return hl_heap_calloc_info(H, n, size, &info);
}

HL_API void *calloc(size_t n, size_t size)
{
    uintptr_t entry = hl_stack_enter(__builtin_frame_address(0));
    void *p = calloc_body(n, size);
    hl_stack_leave(entry);
    return p;
}

static void *realloc_body(void *p, size_t n)
{
    if (hl_gated()) return realloc_gated(p, n);
    hl_opinfo_t info;
    return hl_heap_realloc_info(H, p, n, &info);
}

HL_API void *realloc(void *p, size_t n)
{
    uintptr_t entry = hl_stack_enter(__builtin_frame_address(0));
    void *q = realloc_body(p, n);
    hl_stack_leave(entry);
    return q;
}

HL_API void *reallocarray(void *p, size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    uintptr_t entry = hl_stack_enter(__builtin_frame_address(0));
    void *q = realloc_body(p, total);
    hl_stack_leave(entry);
    return q;
}

/* The memalign family's body; the caller noted its frame. */
static void *aligned(size_t align, size_t n)
{
    if (hl_gated()) return alloc_gated(2, align, n);
    hl_opinfo_t info;
    return hl_heap_memalign_info(H, align, n, &info);
}

/* aligned() from an entry whose frame is fp. */
hl_inline void *aligned_entry(void *fp, size_t align, size_t n)
{
    uintptr_t entry = hl_stack_enter(fp);
    void *p = aligned(align, n);
    hl_stack_leave(entry);
    return p;
}

HL_API int posix_memalign(void **out, size_t align, size_t n)
{
    if (!hl_is_pow2(align) || align % sizeof(void *)) return EINVAL;
    int saved = errno;
    void *p = aligned_entry(__builtin_frame_address(0), align, n);
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
    return aligned_entry(__builtin_frame_address(0), align, n);
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
    return aligned_entry(__builtin_frame_address(0), align, n);
}

HL_API void *valloc(size_t n)
{
    return aligned_entry(__builtin_frame_address(0), hl_page_size, n);
}

HL_API void *pvalloc(size_t n)
{
    size_t ps = hl_page_size;
    if (n > SIZE_MAX - ps) {
        errno = ENOMEM;
        return NULL;
    }
    return aligned_entry(__builtin_frame_address(0), ps, n ? hl_align_up(n, ps) : ps);
}

HL_API size_t malloc_usable_size(void *p)
{
    if (hl_unlikely(hl_side_owns(p))) /* a tracer's block */
        return hl_side_usable(p);
    return hl_heap_usable_size(H, p);
}

/* The sized frees check under their own frame (a report's stacks start at the program's
 * call), then tail-call free, whose slow path notes the same frame. */
HL_API void free_sized(void *p, size_t size)
{
    if (H->opt.harden && !hl_side_owns(p)) { /* hardening hook: size must match the block */
        uintptr_t entry = hl_stack_enter(__builtin_frame_address(0));
        hl_harden_check_delete(H, p, size, 0, "free_sized");
        hl_stack_leave(entry);
    }
    free(p);
}

HL_API void free_aligned_sized(void *p, size_t align, size_t size)
{
    if (H->opt.harden && !hl_side_owns(p)) { /* hardening hook */
        uintptr_t entry = hl_stack_enter(__builtin_frame_address(0));
        hl_harden_check_delete(H, p, size, align, "free_aligned_sized");
        hl_stack_leave(entry);
    }
    free(p);
}

/* Tells cxx.c that the malloc shim (and so the default heap) is what serves this process. */
const int hl_shim_linked = 1;

HL_API int malloc_trim(size_t pad)
{
    return hl_heap_trim(H, pad);
}

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

static int clamp_int(size_t v)
{
    return v > 0x7fffffff ? 0x7fffffff : (int)v;
}

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

HL_API void malloc_stats(void)
{
    hl_stats_print(H, 2);
}

/* glibc's internal names, for programs that call them directly. */
HL_API void *__libc_malloc(size_t n)
{
    return malloc(n);
}
HL_API void __libc_free(void *p)
{
    free(p);
}
HL_API void *__libc_calloc(size_t n, size_t s)
{
    return calloc(n, s);
}
HL_API void *__libc_realloc(void *p, size_t n)
{
    return realloc(p, n);
}
HL_API void *__libc_memalign(size_t a, size_t n)
{
    return memalign(a, n);
}

/* ---- heapledger_* -----------------------------------------------------------------------------
 */

HL_API const char *heapledger_version(void)
{
    return HL_VERSION;
}
HL_API void heapledger_print_stats(void)
{
    hl_stats_print(H, 2);
}
HL_API size_t heapledger_check_heap(void)
{
    return hl_heap_check(H, 1);
}

/* ---- process start and exit -------------------------------------------------------------------
 */

static void calibrate_tsc_floor(void)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 64; i++) {
        uint64_t a = rdtsc(), b = rdtsc();
        if (b - a < best) best = b - a;
    }
    tsc_floor = best;
}

/* heapledger's own call sites are registered with LTTng-UST in every run, traced or not
 * (hl_trace_init dlopens LTTng-UST's small tracepoint library): that memory is the tracer's.
 * The gate is closed and the guard held around it, so that it comes from the side heap. */
static void register_call_sites(const char *opts)
{
#ifdef HL_TRACE_LTTNG
    if (__atomic_load_n(&gate_state, __ATOMIC_ACQUIRE) != GATE_DECIDED) gate_decide();
    int was_open = __atomic_load_n(&gate_floor, __ATOMIC_ACQUIRE) == 0;
    if (!__atomic_load_n(&side_on, __ATOMIC_ACQUIRE)) /* not recorded: a small region does */
        hl_side_reserve_hint(HL_SIDE_RESERVE_UNTRACED);
    __atomic_store_n(&gate_limit, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&gate_floor, UINTPTR_MAX, __ATOMIC_RELEASE);
    hl_cmap_gate(0);
    hl_tls.in_trace = 1;
#endif
    hl_trace_init(opts, 0);
#ifdef HL_TRACE_LTTNG
    hl_tls.in_trace = 0;
    if (was_open) gate_open();
#endif
}

__attribute__((constructor(101))) static void shim_init(void)
{
    hl_heap_ensure(H);
    hl_global_init();
    pthread_atfork(NULL, NULL, shim_fork_child);
    calibrate_tsc_floor();
#ifndef HL_TRACE_LTTNG
    hl_cmap_gate(1); /* no tracing backend: free's gate opens once the maps exist */
#endif
    char opts[512];
    hl_options_format(&H->opt_given, opts, sizeof opts);
    register_call_sites(opts);
}

__attribute__((destructor)) static void shim_fini(void)
{
    /* LTTng-UST's destructor runs after this one (it was initialised before us) and may
     * allocate on this thread (pthread_cancel loads libgcc_s): attribute by stack from now. */
    if (__atomic_load_n(&side_on, __ATOMIC_ACQUIRE)) {
        exit_window = 1;
        __atomic_store_n(&side_window, 1, __ATOMIC_RELEASE);
    }
    if (H->state == HL_HEAP_READY && H->opt.stats) {
        hl_stats_print(H, 2);
        hl_side_print(2); /* the tracer's heap, when it was used */
    }
    if (H->state == HL_HEAP_READY && H->opt.check_at_exit) /* hardening hook */
        hl_heap_check(H, 1);
    hl_leakscan_at_exit(H, H->opt.leaks, hl_trace_active()); /* leakscan.h */
}
