/* liballoc/trace.h — the one tracing hook header (STYLE.md habit 8).
 *
 * The heap core never talks to a tracer directly. The malloc shim asks hl_trace_active()
 * (one predictable branch, false when no tracing session listens) and, only when it is true,
 * takes the out-of-line traced path: a per-thread guard so that only the outermost allocator
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
    uint8_t tier;   /* hl_tier_t */
    uint8_t cls;    /* tiny class, 0xff for mid/large */
    uint8_t path;   /* hl_path_t */
    size_t usable;  /* usable size of the resulting block (alloc/realloc) or freed block */
} hl_opinfo_t;

#ifdef HL_TRACE_LTTNG
/* Implemented by the tracing backend. */
int hl_trace_active_slow(void);
extern volatile int hl_trace_on; /* mirrors "some heapledger event is enabled" */
static inline int hl_trace_active(void) { return __builtin_expect(hl_trace_on, 0); }
void hl_trace_init(const char *options, uint64_t tsc_hz);
void hl_trace_emit_alloc(const void *ptr, size_t size, const hl_opinfo_t *info, uint64_t cycles);
void hl_trace_emit_free(const void *ptr, const hl_opinfo_t *info, uint64_t cycles);
void hl_trace_emit_realloc(const void *old, const void *ptr, size_t size, const hl_opinfo_t *info,
                           uint64_t cycles);
void hl_trace_emit_os(int map, const void *addr, size_t len, const char *purpose);
void hl_trace_emit_error(const char *kind, const void *addr, const char *details);
#else
static inline int hl_trace_active(void) { return 0; }
static inline void hl_trace_init(const char *options, uint64_t tsc_hz)
{
    (void)options;
    (void)tsc_hz;
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
#endif

#endif
