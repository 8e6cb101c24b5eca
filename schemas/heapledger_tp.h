/* heapledger LTTng-UST tracepoint provider "heapledger" — the event contract between
 * liballoc (call sites) and the tracer's ingest (schemas/heapledger.sql).
 *
 * Field conventions: pointers are uint64; sizes uint64; tier/cls/path are the enums of
 * schemas/hl_schema.h (cls 255 = not a tiny class); cycles are TSC ticks of the operation
 * itself, tracing excluded, saturated at 2^32-1; stack ids are per-process, 0 = no stack, and
 * each id is described once by a `stack` event emitted before its first use.
 *
 * Trace layout 3 (docs/tracepoints.md). The per-operation events alloc/free/realloc have one
 * payload field, `words`, a fixed-length array of uint64 written with a single ring-buffer
 * write (LTTng-UST writes each field with an indirect call plus alignment: about 4 ns a field
 * here, and these events are nearly every event of a trace):
 *
 *   alloc    words[6] = { who, ptr, size, usable, op, cycles }
 *   free     words[5] = { who, ptr, usable, op, cycles }
 *   realloc  words[7] = { who, old_ptr, ptr, size, usable, op, cycles }
 *
 *   who = vpid << 32 | vtid                      (from a per-thread cache, no context callback)
 *   op  = tier | cls << 8 | path << 16 | stack << 32
 *
 * `heapledger record` puts these three events on a channel without contexts. Every other event
 * (stack, os_map, os_unmap, error, config, thread, LTTng's statedump and dl events) is rare,
 * keeps named fields and goes to a second channel that has the vpid and vtid contexts.
 * `thread` names a thread once, at its first traced operation. The ingest also reads layout 2
 * (named fields vpid, vtid, ptr, size, usable, tier_cls_path, cycles, stack) and layout 1 (no
 * vpid/vtid payload fields, tier/cls/path as three fields, vpid/vtid/procname contexts on
 * every event).
 *
 * Arguments. alloc/free/realloc take the words themselves (one pointer): the call site
 * builds them where its values already are (liballoc/trace_lttng.c keeps `who` as a
 * per-thread word), and the probe copies them with no packing and no stack-passed arguments.
 * HL_TP_ALLOC_W / HL_TP_FREE_W / HL_TP_REALLOC_W build them from the named values (the
 * argument list the events took before, which other call sites, e.g. test generators, use).
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

#ifndef HL_TP_WORDS_DEFINED
#define HL_TP_WORDS_DEFINED
/* Words of layout 3 (see the header comment). */
#define HL_TP_WHO(w) ((uint64_t)(w)->pid << 32 | (uint64_t)(w)->tid)
#define HL_TP_OP(tier, cls, path, stk)                                                             \
    ((uint64_t)(tier) | (uint64_t)(cls) << 8 | (uint64_t)(path) << 16 | (uint64_t)(stk) << 32)
#define HL_TP_ALLOC_WORDS   6
#define HL_TP_FREE_WORDS    5
#define HL_TP_REALLOC_WORDS 7
/* The words of one event from named values (who: a const struct hl_tp_who *). */
#define HL_TP_ALLOC_W(who, ptr, size, usable, tier, cls, path, cycles, stack)                      \
    ((const uint64_t[HL_TP_ALLOC_WORDS]){HL_TP_WHO(who), (ptr), (size), (usable),                  \
                                         HL_TP_OP(tier, cls, path, stack), (cycles)})
#define HL_TP_FREE_W(who, ptr, usable, tier, cls, path, cycles, stack)                             \
    ((const uint64_t[HL_TP_FREE_WORDS]){HL_TP_WHO(who), (ptr), (usable),                           \
                                        HL_TP_OP(tier, cls, path, stack), (cycles)})
#define HL_TP_REALLOC_W(who, old_ptr, ptr, size, usable, tier, cls, path, cycles, stack)           \
    ((const uint64_t[HL_TP_REALLOC_WORDS]){HL_TP_WHO(who), (old_ptr), (ptr), (size), (usable),     \
                                           HL_TP_OP(tier, cls, path, stack), (cycles)})
#endif

LTTNG_UST_TRACEPOINT_EVENT(heapledger, alloc, LTTNG_UST_TP_ARGS(const uint64_t *, words),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_array_hex(uint64_t, words, words,
                                                                         HL_TP_ALLOC_WORDS)))

LTTNG_UST_TRACEPOINT_EVENT(heapledger, free, LTTNG_UST_TP_ARGS(const uint64_t *, words),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_array_hex(uint64_t, words, words,
                                                                         HL_TP_FREE_WORDS)))

LTTNG_UST_TRACEPOINT_EVENT(heapledger, realloc, LTTNG_UST_TP_ARGS(const uint64_t *, words),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_array_hex(uint64_t, words, words,
                                                                         HL_TP_REALLOC_WORDS)))

/* A call stack, innermost frame first. */
LTTNG_UST_TRACEPOINT_EVENT(heapledger, stack,
                           LTTNG_UST_TP_ARGS(uint32_t, id, const uint64_t *, ips, uint8_t, depth),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint32_t, id, id)
                                                   lttng_ust_field_sequence_hex(uint64_t, ips, ips,
                                                                                uint8_t, depth)))

LTTNG_UST_TRACEPOINT_EVENT(heapledger, os_map,
                           LTTNG_UST_TP_ARGS(uint64_t, addr, uint64_t, len, const char *, purpose),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(uint64_t, addr, addr)
                                                   lttng_ust_field_integer(uint64_t, len, len)
                                                       lttng_ust_field_string(purpose, purpose)))

LTTNG_UST_TRACEPOINT_EVENT(heapledger, os_unmap,
                           LTTNG_UST_TP_ARGS(uint64_t, addr, uint64_t, len, const char *, purpose),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_integer_hex(uint64_t, addr, addr)
                                                   lttng_ust_field_integer(uint64_t, len, len)
                                                       lttng_ust_field_string(purpose, purpose)))

/* An error found by hardened mode (kind: "double-free", "heap-overflow", …). */
LTTNG_UST_TRACEPOINT_EVENT(
    heapledger, error,
    LTTNG_UST_TP_ARGS(const char *, kind, uint64_t, addr, uint64_t, size, const char *, details,
                      uint32_t, stack, uint32_t, alloc_stack, uint32_t, free_stack),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_string(kind, kind) lttng_ust_field_integer_hex(uint64_t, addr, addr)
            lttng_ust_field_integer(uint64_t, size, size) lttng_ust_field_string(details, details)
                lttng_ust_field_integer(uint32_t, stack, stack)
                    lttng_ust_field_integer(uint32_t, alloc_stack, alloc_stack)
                        lttng_ust_field_integer(uint32_t, free_stack, free_stack)))

/* Once per process, when the allocator starts (and again after fork in the child).
 * fork_parent: the pid of the process this one was forked from without exec (its stack table
 * is the parent's as of fork_ts, CLOCK_MONOTONIC ns just before the fork); 0 for a process
 * that started by exec. */
LTTNG_UST_TRACEPOINT_EVENT(
    heapledger, config,
    LTTNG_UST_TP_ARGS(const char *, version, const char *, options, uint64_t, tsc_hz, uint64_t,
                      arena_size, uint32_t, fork_parent, uint64_t, fork_ts),
    LTTNG_UST_TP_FIELDS(lttng_ust_field_string(version, version)
                            lttng_ust_field_string(options, options)
                                lttng_ust_field_integer(uint64_t, tsc_hz, tsc_hz)
                                    lttng_ust_field_integer(uint64_t, arena_size, arena_size)
                                        lttng_ust_field_integer(uint32_t, fork_parent, fork_parent)
                                            lttng_ust_field_integer(uint64_t, fork_ts, fork_ts)))

/* A thread's name (prctl PR_GET_NAME), once per thread at its first traced operation. */
LTTNG_UST_TRACEPOINT_EVENT(heapledger, thread, LTTNG_UST_TP_ARGS(const char *, name),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_string(name, name)))

/* The leak scan at exit (liballoc/leakscan.h): the class of every live block it found, as
 * words (user pointer | class; 1 definitely lost, 2 indirectly lost, 3 still reachable),
 * up to 64 per event, then one summary. A summary whose status is above 1 comes alone. */
LTTNG_UST_TRACEPOINT_EVENT(heapledger, leak_blocks,
                           LTTNG_UST_TP_ARGS(const uint64_t *, words, uint16_t, n),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_sequence_hex(uint64_t, blocks, words,
                                                                            uint16_t, n)))

/* LTTng-UST events take at most 10 arguments: the summary's counts travel as one array. */
LTTNG_UST_TRACEPOINT_EVENT(heapledger, leak_scan, LTTNG_UST_TP_ARGS(const uint64_t *, words),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_array(uint64_t, summary, words, 13)))

#endif /* HL_TP_H */

#include <lttng/tracepoint-event.h>
