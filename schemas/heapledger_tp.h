/* heapledger LTTng-UST tracepoint provider "heapledger" — the event contract between
 * liballoc (call sites) and the tracer's ingest (schemas/heapledger.sql).
 *
 * Field conventions: pointers are uint64 hex; sizes uint64; tier/cls/path are the enums of
 * schemas/hl_schema.h (cls 255 = not a tiny class); cycles are TSC ticks of the operation
 * itself, tracing excluded, saturated at 2^32-1; stack ids are per-process, 0 = no stack, and
 * each id is described once by a `stack` event emitted before its first use.
 * The session adds the vpid, vtid and procname contexts.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER heapledger

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "heapledger_tp.h"

#if !defined(HL_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define HL_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

LTTNG_UST_TRACEPOINT_EVENT(heapledger, alloc,
    LTTNG_UST_TP_ARGS(uint64_t, ptr, uint64_t, size, uint64_t, usable, uint8_t, tier, uint8_t,
                      cls, uint8_t, path, uint32_t, cycles, uint32_t, stack),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, ptr, ptr)
        lttng_ust_field_integer(uint64_t, size, size)
        lttng_ust_field_integer(uint64_t, usable, usable)
        lttng_ust_field_integer(uint8_t, tier, tier)
        lttng_ust_field_integer(uint8_t, cls, cls)
        lttng_ust_field_integer(uint8_t, path, path)
        lttng_ust_field_integer(uint32_t, cycles, cycles)
        lttng_ust_field_integer(uint32_t, stack, stack)))

LTTNG_UST_TRACEPOINT_EVENT(heapledger, free,
    LTTNG_UST_TP_ARGS(uint64_t, ptr, uint64_t, usable, uint8_t, tier, uint8_t, cls, uint8_t,
                      path, uint32_t, cycles, uint32_t, stack),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, ptr, ptr)
        lttng_ust_field_integer(uint64_t, usable, usable)
        lttng_ust_field_integer(uint8_t, tier, tier)
        lttng_ust_field_integer(uint8_t, cls, cls)
        lttng_ust_field_integer(uint8_t, path, path)
        lttng_ust_field_integer(uint32_t, cycles, cycles)
        lttng_ust_field_integer(uint32_t, stack, stack)))

LTTNG_UST_TRACEPOINT_EVENT(heapledger, realloc,
    LTTNG_UST_TP_ARGS(uint64_t, old_ptr, uint64_t, ptr, uint64_t, size, uint64_t, usable,
                      uint8_t, tier, uint8_t, cls, uint8_t, path, uint32_t, cycles, uint32_t,
                      stack),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, old_ptr, old_ptr)
        lttng_ust_field_integer_hex(uint64_t, ptr, ptr)
        lttng_ust_field_integer(uint64_t, size, size)
        lttng_ust_field_integer(uint64_t, usable, usable)
        lttng_ust_field_integer(uint8_t, tier, tier)
        lttng_ust_field_integer(uint8_t, cls, cls)
        lttng_ust_field_integer(uint8_t, path, path)
        lttng_ust_field_integer(uint32_t, cycles, cycles)
        lttng_ust_field_integer(uint32_t, stack, stack)))

/* A call stack, innermost frame first. */
LTTNG_UST_TRACEPOINT_EVENT(heapledger, stack,
    LTTNG_UST_TP_ARGS(uint32_t, id, const uint64_t *, ips, uint8_t, depth),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, id, id)
        lttng_ust_field_sequence_hex(uint64_t, ips, ips, uint8_t, depth)))

LTTNG_UST_TRACEPOINT_EVENT(heapledger, os_map,
    LTTNG_UST_TP_ARGS(uint64_t, addr, uint64_t, len, const char *, purpose),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, addr, addr)
        lttng_ust_field_integer(uint64_t, len, len)
        lttng_ust_field_string(purpose, purpose)))

LTTNG_UST_TRACEPOINT_EVENT(heapledger, os_unmap,
    LTTNG_UST_TP_ARGS(uint64_t, addr, uint64_t, len, const char *, purpose),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer_hex(uint64_t, addr, addr)
        lttng_ust_field_integer(uint64_t, len, len)
        lttng_ust_field_string(purpose, purpose)))

/* An error found by hardened mode (kind: "double-free", "heap-overflow", …). */
LTTNG_UST_TRACEPOINT_EVENT(heapledger, error,
    LTTNG_UST_TP_ARGS(const char *, kind, uint64_t, addr, uint64_t, size, const char *,
                      details, uint32_t, stack, uint32_t, alloc_stack, uint32_t, free_stack),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_string(kind, kind)
        lttng_ust_field_integer_hex(uint64_t, addr, addr)
        lttng_ust_field_integer(uint64_t, size, size)
        lttng_ust_field_string(details, details)
        lttng_ust_field_integer(uint32_t, stack, stack)
        lttng_ust_field_integer(uint32_t, alloc_stack, alloc_stack)
        lttng_ust_field_integer(uint32_t, free_stack, free_stack)))

/* Once per process, when the allocator starts (and again after fork in the child). */
LTTNG_UST_TRACEPOINT_EVENT(heapledger, config,
    LTTNG_UST_TP_ARGS(const char *, version, const char *, options, uint64_t, tsc_hz,
                      uint64_t, arena_size),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_string(version, version)
        lttng_ust_field_string(options, options)
        lttng_ust_field_integer(uint64_t, tsc_hz, tsc_hz)
        lttng_ust_field_integer(uint64_t, arena_size, arena_size)))

#endif /* HL_TP_H */

#include <lttng/tracepoint-event.h>
