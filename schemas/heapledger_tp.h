/* heapledger LTTng-UST tracepoint provider "heapledger" — the event contract between
 * liballoc (call sites) and the tracer's ingest (schemas/heapledger.sql).
 *
 * Field conventions: pointers are uint64 hex; sizes uint64; tier/cls/path are the enums of
 * schemas/hl_schema.h (cls 255 = not a tiny class), packed as one field
 * tier_cls_path = tier | cls << 8 | path << 16 (one ring-buffer write instead of three); cycles are TSC ticks of the operation
 * itself, tracing excluded, saturated at 2^32-1; stack ids are per-process, 0 = no stack, and
 * each id is described once by a `stack` event emitted before its first use.
 *
 * Process and thread (layout 2). The per-operation events alloc/free/realloc carry vpid and
 * vtid as their first two payload fields, filled from a per-thread cache (cheaper than LTTng
 * context callbacks on every event); `heapledger record` puts them on a channel without
 * contexts. Every other event (stack, os_map, os_unmap, error, config, thread, LTTng's
 * statedump and dl events) is rare and goes to a second channel that has the vpid and vtid
 * contexts. `thread` names a thread once, at its first traced operation. Layout 1 (no vpid/vtid
 * payload fields, tier/cls/path as three fields, vpid/vtid/procname contexts on every event)
 * is still read by the ingest.
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER heapledger

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "heapledger_tp.h"

#if !defined(HL_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define HL_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

#ifndef HL_TP_WHO_DEFINED
#define HL_TP_WHO_DEFINED
/* Who emits: the process and thread ids as seen in the process's namespace. */
struct hl_tp_who {
    uint32_t pid, tid;
};
#endif

LTTNG_UST_TRACEPOINT_EVENT(heapledger, alloc,
    LTTNG_UST_TP_ARGS(const struct hl_tp_who *, who, uint64_t, ptr, uint64_t, size, uint64_t, usable, uint8_t, tier, uint8_t,
                      cls, uint8_t, path, uint32_t, cycles, uint32_t, stack),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, vpid, who->pid)
        lttng_ust_field_integer(uint32_t, vtid, who->tid)
        lttng_ust_field_integer_hex(uint64_t, ptr, ptr)
        lttng_ust_field_integer(uint64_t, size, size)
        lttng_ust_field_integer(uint64_t, usable, usable)
        lttng_ust_field_integer_hex(uint32_t, tier_cls_path,
                                    (uint32_t)tier | (uint32_t)cls << 8 | (uint32_t)path << 16)
        lttng_ust_field_integer(uint32_t, cycles, cycles)
        lttng_ust_field_integer(uint32_t, stack, stack)))

LTTNG_UST_TRACEPOINT_EVENT(heapledger, free,
    LTTNG_UST_TP_ARGS(const struct hl_tp_who *, who, uint64_t, ptr, uint64_t, usable, uint8_t, tier, uint8_t, cls, uint8_t,
                      path, uint32_t, cycles, uint32_t, stack),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, vpid, who->pid)
        lttng_ust_field_integer(uint32_t, vtid, who->tid)
        lttng_ust_field_integer_hex(uint64_t, ptr, ptr)
        lttng_ust_field_integer(uint64_t, usable, usable)
        lttng_ust_field_integer_hex(uint32_t, tier_cls_path,
                                    (uint32_t)tier | (uint32_t)cls << 8 | (uint32_t)path << 16)
        lttng_ust_field_integer(uint32_t, cycles, cycles)
        lttng_ust_field_integer(uint32_t, stack, stack)))

LTTNG_UST_TRACEPOINT_EVENT(heapledger, realloc,
    LTTNG_UST_TP_ARGS(const struct hl_tp_who *, who, uint64_t, old_ptr, uint64_t, ptr, uint64_t, size, uint64_t, usable,
                      uint8_t, tier, uint8_t, cls, uint8_t, path, uint32_t, cycles, uint32_t,
                      stack),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, vpid, who->pid)
        lttng_ust_field_integer(uint32_t, vtid, who->tid)
        lttng_ust_field_integer_hex(uint64_t, old_ptr, old_ptr)
        lttng_ust_field_integer_hex(uint64_t, ptr, ptr)
        lttng_ust_field_integer(uint64_t, size, size)
        lttng_ust_field_integer(uint64_t, usable, usable)
        lttng_ust_field_integer_hex(uint32_t, tier_cls_path,
                                    (uint32_t)tier | (uint32_t)cls << 8 | (uint32_t)path << 16)
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

/* A thread's name (prctl PR_GET_NAME), once per thread at its first traced operation. */
LTTNG_UST_TRACEPOINT_EVENT(heapledger, thread,
    LTTNG_UST_TP_ARGS(const char *, name),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_string(name, name)))

#endif /* HL_TP_H */

#include <lttng/tracepoint-event.h>
