/* tracer/ingest_events.h — the event classes heapledger ingests and the payload members
 * each one reads (internal to the two decoders: ingest_source.c over babeltrace2,
 * ctf_source.c over heapledger's own CTF reader), so that both read the same fields.
 */
#ifndef HL_INGEST_EVENTS_H
#define HL_INGEST_EVENTS_H

enum { MAXF = 10 };

typedef enum ev_kind_e {
    EV_OTHER = 0,
    EV_ALLOC,
    EV_FREE,
    EV_REALLOC,
    EV_STACK,
    EV_OS_MAP,
    EV_OS_UNMAP,
    EV_ERROR,
    EV_CONFIG,
    EV_MODULE,
    EV_BUILD_ID,
    EV_DLCLOSE,
    EV_THREAD,
    EV_LEAK_BLOCKS,
    EV_LEAK_SCAN,
} ev_kind_t;

/* Event name → kind and the payload members read, in the order the converter uses them. */
static const struct ev_table_s {
    const char *name;
    ev_kind_t kind;
    const char *fields[MAXF];
} ev_table[] = {
    /* Layout 2 packs tier/cls/path into tier_cls_path (the last member looked up); layout 1
     * has them as three fields. */
    {"heapledger:alloc",
     EV_ALLOC,
     {"ptr", "size", "usable", "tier", "cls", "path", "cycles", "stack", "tier_cls_path"}},
    {"heapledger:free",
     EV_FREE,
     {"ptr", "usable", "tier", "cls", "path", "cycles", "stack", "tier_cls_path"}},
    {"heapledger:realloc",
     EV_REALLOC,
     {"old_ptr", "ptr", "size", "usable", "tier", "cls", "path", "cycles", "stack",
      "tier_cls_path"}},
    {"heapledger:stack", EV_STACK, {"id", "ips"}},
    {"heapledger:os_map", EV_OS_MAP, {"addr", "len", "purpose"}},
    {"heapledger:os_unmap", EV_OS_UNMAP, {"addr", "len", "purpose"}},
    {"heapledger:error",
     EV_ERROR,
     {"kind", "addr", "size", "details", "stack", "alloc_stack", "free_stack"}},
    {"heapledger:config",
     EV_CONFIG,
     {"version", "options", "tsc_hz", "arena_size", "fork_parent", "fork_ts"}},
    {"heapledger:thread", EV_THREAD, {"name"}},
    {"heapledger:leak_blocks", EV_LEAK_BLOCKS, {"blocks"}},
    {"heapledger:leak_scan", EV_LEAK_SCAN, {"summary"}},
    {"lttng_ust_statedump:bin_info", EV_MODULE, {"baddr", "memsz", "path"}},
    {"lttng_ust_dl:dlopen", EV_MODULE, {"baddr", "memsz", "path"}},
    {"lttng_ust_statedump:build_id", EV_BUILD_ID, {"baddr", "build_id"}},
    {"lttng_ust_dl:build_id", EV_BUILD_ID, {"baddr", "build_id"}},
    {"lttng_ust_dl:dlclose", EV_DLCLOSE, {"baddr"}},
};

/* Layout 3: words per event kind, HL_TP_*_WORDS of schemas/heapledger_tp.h (not included
 * here: it pulls in LTTng-UST's tracepoint runtime). At least this many are read, more are
 * ignored (room for a later layout to append). */
enum { L3_ALLOC_WORDS = 6, L3_FREE_WORDS = 5, L3_REALLOC_WORDS = 7 };

static inline int words_needed(ev_kind_t k)
{
    return k == EV_ALLOC ? L3_ALLOC_WORDS : k == EV_FREE ? L3_FREE_WORDS : L3_REALLOC_WORDS;
}

/* An alloc, free or realloc record from its layout-3 words (w[0], who, is read by the caller;
 * the op word is second to last, the cycles last): the same for both decoders. hl_rec_t comes
 * from ingest_internal.h, which the includer has included. */
static inline void rec_from_words(hl_rec_t *r, ev_kind_t k, const uint64_t *w)
{
    int n = words_needed(k);
    r->kind = k == EV_ALLOC ? HL_REC_ALLOC : k == EV_FREE ? HL_REC_FREE : HL_REC_REALLOC;
    if (k == EV_ALLOC) {
        r->a = w[1];
        r->b = w[2];
        r->c = w[3];
    } else if (k == EV_FREE) {
        r->a = w[1];
        r->c = w[2];
    } else {
        r->a = w[1];
        r->d = w[2];
        r->b = w[3];
        r->c = w[4];
    }
    uint64_t op = w[n - 2];
    r->tier = (uint8_t)op;
    r->cls = (uint8_t)(op >> 8);
    r->path = (uint8_t)(op >> 16);
    r->stack = (uint32_t)(op >> 32);
    r->cycles = w[n - 1] > UINT32_MAX ? UINT32_MAX : (uint32_t)w[n - 1];
}

#endif
