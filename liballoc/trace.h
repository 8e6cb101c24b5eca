/* liballoc/trace.h — the one tracing hook header (STYLE.md habit 8).
 *
 * The heap core never talks to a tracer directly. The malloc shim asks hl_trace_active()
 * (one predictable branch, false when no tracing session listens; malloc and free ask only
 * once the probe provider has closed their fast-path gate, see shim.c) and, only when it is
 * true, takes the out-of-line traced path: a per-thread guard so that only the outermost allocator
 * call of a thread emits, TSC reads around the operation itself, then one hl_trace_emit_*().
 *
 * Backends: HL_TRACE_LTTNG (tracer/…, LTTng-UST provider "heapledger", see
 * schemas/heapledger_tp.h) or none (HL_TRACE_LTTNG undefined: everything below is a no-op and
 * compiles away).
 */
#ifndef HL_TRACE_H
#define HL_TRACE_H

#include <stddef.h>
#include <stdint.h>

/* What an operation did, filled by the heap core for stats and tracing. */
typedef struct hl_opinfo_s {
    uint8_t tier;  /* hl_tier_t */
    uint8_t cls;   /* tiny class, 0xff for mid/large */
    uint8_t path;  /* hl_path_t */
    size_t usable; /* usable size of the resulting block (alloc/realloc) or freed block */
} hl_opinfo_t;

#ifdef HL_TRACE_LTTNG
/* Implemented by liballoc/trace_lttng.c (LTTng-UST call sites; the probes live in
 * libheapledger-tp.so, which `heapledger record` preloads).
 *
 * The gate is the state word of the `heapledger:alloc` call site, which LTTng-UST sets while a
 * session has the event (heapledger:* in practice) and a probe provider is loaded. It is a
 * hidden global of this library: hl_trace_active() is one load and one predictable branch.
 * Enabling only some heapledger events by hand works only if alloc is among them. */
#include <lttng/tracepoint-types.h>
extern struct lttng_ust_tracepoint lttng_ust_tracepoint_heapledger___alloc
    __attribute__((visibility("hidden")));
static inline int hl_trace_active(void)
{
    return __builtin_expect(
        __atomic_load_n(&lttng_ust_tracepoint_heapledger___alloc.state, __ATOMIC_RELAXED), 0);
}
/* Once, at allocator start-up: options is HEAPLEDGER_OPTIONS (may be NULL; copied, read for
 * stacks=N and arena=SIZE), tsc_hz the TSC frequency or 0 to let the backend calibrate it.
 * Registers the call sites with LTTng-UST (dlopen of its tracepoint library, which
 * allocates: the caller decides where that memory comes from). Otherwise cheap: nothing is
 * mapped, calibrated or unwound until the first traced event. */
void hl_trace_init(const char *options, uint64_t tsc_hz);
/* Emitters. Contract for alloc/free/realloc: call only when hl_trace_active(), under the
 * caller's per-thread reentrancy guard and with no heap lock held (they capture a stack, and
 * the first one of a process maps the stack table and warms the unwinder up, which may call
 * malloc). cycles are TSC ticks of the operation itself; they are saturated to 32 bits.
 * os and error may be called from anywhere (they test hl_trace_active() themselves and never
 * allocate). */
void hl_trace_emit_alloc(const void *ptr, size_t size, const hl_opinfo_t *info, uint64_t cycles);
void hl_trace_emit_free(const void *ptr, const hl_opinfo_t *info, uint64_t cycles);
void hl_trace_emit_realloc(const void *old, const void *ptr, size_t size, const hl_opinfo_t *info,
                           uint64_t cycles);
/* Before a traced allocation, under the guard: capture the caller's stack for the alloc event
 * that follows, and return 1 instead when the call is the tracer's own (a frame near malloc
 * lies in LTTng-UST's libraries or the probe provider, e.g. LTTng-UST's statedump after a
 * dlopen): then the caller serves it elsewhere and emits nothing. 0 when stacks are off. */
int hl_trace_prepare_alloc(void);
/* map: 1 = mapped from the OS, 0 = returned; purpose: "slab_segment", "tlsf_pool", "large"… */
void hl_trace_emit_os(int map, const void *addr, size_t len, const char *purpose);
void hl_trace_emit_error(const char *kind, const void *addr, const char *details);
/* The same with the block's size and its allocation/free stack ids (liballoc/stack.h ids,
 * 0 = unknown): stacks not yet described in this process get their `stack` events first. */
void hl_trace_emit_error_stacks(const char *kind, const void *addr, size_t size,
                                const char *details, uint32_t alloc_stack, uint32_t free_stack);
/* The leak scan's results at exit (leakscan.c): n words of (user pointer | class) per
 * leak_blocks event, then the summary (hl_leak_summary_t as words). Check the gate
 * themselves. */
void hl_trace_emit_leak_blocks(const uint64_t *words, unsigned n);
void hl_trace_emit_leak_scan(const uint64_t *summary, unsigned n);
#else
static inline int hl_trace_active(void)
{
    return 0;
}
static inline void hl_trace_emit_leak_blocks(const uint64_t *words, unsigned n)
{
    (void)words, (void)n;
}
static inline void hl_trace_emit_leak_scan(const uint64_t *summary, unsigned n)
{
    (void)summary, (void)n;
}
static inline void hl_trace_init(const char *options, uint64_t tsc_hz)
{
    (void)options;
    (void)tsc_hz;
}
static inline int hl_trace_prepare_alloc(void)
{
    return 0;
}
static inline void hl_trace_emit_alloc(const void *ptr, size_t size, const hl_opinfo_t *info,
                                       uint64_t cycles)
{
    (void)ptr, (void)size, (void)info, (void)cycles;
}
static inline void hl_trace_emit_free(const void *ptr, const hl_opinfo_t *info, uint64_t cycles)
{
    (void)ptr, (void)info, (void)cycles;
}
static inline void hl_trace_emit_realloc(const void *old, const void *ptr, size_t size,
                                         const hl_opinfo_t *info, uint64_t cycles)
{
    (void)old, (void)ptr, (void)size, (void)info, (void)cycles;
}
static inline void hl_trace_emit_os(int map, const void *addr, size_t len, const char *purpose)
{
    (void)map, (void)addr, (void)len, (void)purpose;
}
static inline void hl_trace_emit_error(const char *kind, const void *addr, const char *details)
{
    (void)kind, (void)addr, (void)details;
}
static inline void hl_trace_emit_error_stacks(const char *kind, const void *addr, size_t size,
                                              const char *details, uint32_t alloc_stack,
                                              uint32_t free_stack)
{
    (void)kind, (void)addr, (void)size, (void)details, (void)alloc_stack, (void)free_stack;
}
#endif

#endif
