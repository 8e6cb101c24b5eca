/* tracer/ingest_source.c — the decode side: a babeltrace2 graph turned into records.
 *
 * Graph: one src.ctf.fs component per CTF directory (or one src.ctf.lttng-live component)
 * → utils.muxer (global time order across streams, CPUs and processes) → a simple sink whose
 * consume function converts each message into an hl_rec_t and pushes full batches to the
 * queue. This runs in the decoder child (ingest_decoder.c; for a live session in the live
 * reader process that hl_source_open_live() starts, ingest_decoder.c); it never touches
 * SQLite.
 *
 * Per event the cost is a few babeltrace2 accessor calls: field positions are looked up
 * once per event class (cache keyed by the class pointer), integers read by index.
 * Trace layouts (docs/tracepoints.md): in layout 3 alloc/free/realloc carry one array of
 * uint64 `words` (who = vpid << 32 | vtid first, op = tier | cls << 8 | path << 16 | stack << 32,
 * schemas/heapledger_tp.h); layouts 2 and 1 have named fields. Process and thread ids come from
 * words[0] (layout 3) or the payload fields vpid/vtid (layout 2: alloc/free/realloc), otherwise
 * from the vpid/vtid contexts. Thread names come from `heapledger:thread` events (layouts 2
 * and 3) or, in traces that have the procname context
 * (layout 1, or sessions made by hand with it), from that context: there LTTng's own threads
 * (procname ending in "-ust", the names liblttng-ust gives its listener threads) are
 * recognised and their heapledger events dropped (counted in batch->filtered); their
 * statedump events are kept (they carry the module maps). The allocator no longer traces
 * those threads, so layout 2 needs no filter.
 */
#include "ingest_internal.h"

#include <babeltrace2/babeltrace.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ingest_events.h"

typedef struct ev_info_s {
    const bt_event_class *ec;
    ev_kind_t kind;
    int heapledger; /* provider heapledger: subject to the LTTng-thread filter */
    int nf;
    int idx[MAXF];                  /* payload member index, -1 when absent */
    int ctx_pid, ctx_tid, ctx_name; /* common context member index, -1 when absent */
    int pay_pid, pay_tid;           /* payload vpid/vtid index (layout 2), -1 when absent */
    int words;                      /* payload `words` index (layout 3), -1 when absent */
    int bad_words;                  /* `words` present but not the layout-3 array: refused */
} ev_info_t;

#define EV_CACHE 512 /* event classes of all traces; open addressing by pointer */

struct hl_source_s {
    bt_graph *graph;
    hl_queue_t *q;
    hl_batch_t *cur;
    int live;
    uint64_t events; /* all event messages so far (= next seq) */
    uint64_t pending_events, pending_discarded, pending_filtered;
    hl_map_t threads; /* pid << 32 | tid → name hash << 1 | is_lttng_thread */
    ev_info_t cache[EV_CACHE];
    int nsrc;
    double last_push;     /* hl_ingest_now() of the last batch pushed (heartbeat) */
    uint64_t skip;        /* events delivered by heapledger's own reader before (no records) */
    hl_decoder_t *remote; /* a live session read by a process of its own: no graph here */
    uint64_t messages;    /* every message the sink was given (any type) */
    char *live_url;       /* the live session read here (reattached while none arrived) */
};

static void close_locked(hl_source_t *s);

/* ---- finding traces ------------------------------------------------------------------ */

typedef struct dirlist_s {
    char **v;
    size_t n, cap;
    uint64_t bytes;
} dirlist_t;

static int walk(const char *dir, dirlist_t *out, int depth)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int has_meta = 0;
    uint64_t bytes = 0;
    char path[4096];
    struct dirent *e;
    char **subs = NULL;
    size_t nsub = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (lstat(path, &sb) != 0) continue; /* symlinked dirs are not followed (loops) */
        if (S_ISLNK(sb.st_mode) && (stat(path, &sb) != 0 || S_ISDIR(sb.st_mode))) continue;
        if (S_ISDIR(sb.st_mode)) {
            char **ns = realloc(subs, (nsub + 1) * sizeof *subs);
            if (!ns) break;
            subs = ns;
            subs[nsub++] = strdup(path);
        } else if (S_ISREG(sb.st_mode)) {
            if (!strcmp(e->d_name, "metadata"))
                has_meta = 1;
            else
                bytes += (uint64_t)sb.st_size;
        }
    }
    closedir(d);
    if (has_meta) {
        if (out->n == out->cap) {
            out->cap = out->cap ? out->cap * 2 : 8;
            out->v = realloc(out->v, out->cap * sizeof *out->v);
        }
        out->v[out->n++] = strdup(dir);
        out->bytes += bytes;
    }
    for (size_t i = 0; i < nsub; i++) {
        if (!has_meta && depth < 16) /* a CTF dir's subdirs (index/) hold no trace */
            walk(subs[i], out, depth + 1);
        free(subs[i]);
    }
    free(subs);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int hl_source_find_ctf(const char *root, char ***dirs, uint64_t *bytes, char *err, size_t errlen)
{
    struct stat sb;
    if (stat(root, &sb) != 0) {
        snprintf(err, errlen, "%s: %m", root);
        return -1;
    }
    if (!S_ISDIR(sb.st_mode)) {
        snprintf(err, errlen, "%s: not a directory (give the trace output directory)", root);
        return -1;
    }
    dirlist_t l = {0};
    if (walk(root, &l, 0) != 0) {
        snprintf(err, errlen, "%s: cannot read: %m", root);
        return -1;
    }
    if (l.n) qsort(l.v, l.n, sizeof *l.v, cmp_str);
    *dirs = l.v;
    if (bytes) *bytes += l.bytes;
    return (int)l.n;
}

/* The trace root of a CTF dir: the directory holding the `ust` (or `kernel`) directory it
 * is under, i.e. the session output directory LTTng made (SESSION/ust/uid/0/64-bit,
 * SESSION/ust/pid/NAME-PID-DATE, SESSION/snapshot-1-…/ust/…); the CTF dir itself when it
 * is under no such component. Malloc'ed. */
static char *trace_root(const char *dir)
{
    char real[4096];
    if (!realpath(dir, real)) snprintf(real, sizeof real, "%s", dir);
    char *cut = NULL;
    for (char *p = real; (p = strchr(p, '/')); p++) {
        const char *c = p + 1;
        size_t l = strcspn(c, "/");
        if ((l == 3 && !strncmp(c, "ust", 3)) || (l == 6 && !strncmp(c, "kernel", 6))) cut = p;
    }
    if (cut && cut != real) *cut = 0;
    return strdup(real);
}

int hl_source_trace_roots(char *const *dirs, int n, char ***roots)
{
    char **v = calloc(n ? (size_t)n : 1, sizeof *v);
    int k = 0;
    if (!v) return -1;
    for (int i = 0; i < n; i++) {
        char *r = trace_root(dirs[i]);
        int seen = 0;
        for (int j = 0; r && j < k && !seen; j++)
            seen = !strcmp(v[j], r);
        if (seen || !r)
            free(r);
        else
            v[k++] = r;
    }
    if (k) qsort(v, (size_t)k, sizeof *v, cmp_str);
    *roots = v;
    return k;
}

/* ---- errors --------------------------------------------------------------------------- */

/* The babeltrace2 error of this thread as one line: its root cause (the innermost, last
 * cause) and the outermost one. */
static void take_bt_error(const char *what, char *err, size_t errlen)
{
    const bt_error *e = bt_current_thread_take_error();
    if (!e) {
        snprintf(err, errlen, "%s", what);
        return;
    }
    uint64_t n = bt_error_get_cause_count(e);
    const char *root =
        n ? bt_error_cause_get_message(bt_error_borrow_cause_by_index(e, n - 1)) : "";
    const char *top = n ? bt_error_cause_get_message(bt_error_borrow_cause_by_index(e, 0)) : "";
    if (n > 1 && strcmp(root, top))
        snprintf(err, errlen, "%s: %s (%s)", what, top, root);
    else
        snprintf(err, errlen, "%s: %s", what, top);
    bt_error_release(e);
}

/* ---- decoding ------------------------------------------------------------------------- */

static inline uint64_t fint(const bt_field *f)
{
    if (!f) return 0;
    bt_field_class_type t = bt_field_get_class_type(f);
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
        return (uint64_t)bt_field_integer_signed_get_value(f);
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
        return bt_field_integer_unsigned_get_value(f);
    return 0;
}

static inline const char *fstr(const bt_field *f)
{
    if (!f || bt_field_get_class_type(f) != BT_FIELD_CLASS_TYPE_STRING) return "";
    return bt_field_string_get_value(f);
}

static int member_index(const bt_field_class *st, const char *name)
{
    if (!st || bt_field_class_get_type(st) != BT_FIELD_CLASS_TYPE_STRUCTURE) return -1;
    uint64_t n = bt_field_class_structure_get_member_count(st);
    for (uint64_t i = 0; i < n; i++) {
        const bt_field_class_structure_member *m =
            bt_field_class_structure_borrow_member_by_index_const(st, i);
        if (!strcmp(bt_field_class_structure_member_get_name(m), name)) return (int)i;
    }
    return -1;
}

static ev_info_t *info_of(hl_source_t *s, const bt_event_class *ec)
{
    size_t h = ((uintptr_t)ec >> 4) & (EV_CACHE - 1);
    for (size_t i = 0; i < EV_CACHE; i++, h = (h + 1) & (EV_CACHE - 1)) {
        ev_info_t *in = &s->cache[h];
        if (in->ec == ec) return in;
        if (in->ec) continue;
        /* First event of this class: resolve the member positions. */
        memset(in, 0, sizeof *in);
        in->ec = ec;
        const char *name = bt_event_class_get_name(ec);
        const bt_field_class *pl = bt_event_class_borrow_payload_field_class_const(ec);
        in->pay_pid = member_index(pl, "vpid");
        in->pay_tid = member_index(pl, "vtid");
        for (size_t k = 0; name && k < sizeof ev_table / sizeof ev_table[0]; k++) {
            if (strcmp(name, ev_table[k].name)) continue;
            in->kind = ev_table[k].kind;
            const bt_field_class *p = bt_event_class_borrow_payload_field_class_const(ec);
            for (int j = 0; j < MAXF && ev_table[k].fields[j]; j++) {
                in->idx[j] = member_index(p, ev_table[k].fields[j]);
                in->nf = j + 1;
            }
        }
        in->words = -1;
        if (in->kind == EV_ALLOC || in->kind == EV_FREE || in->kind == EV_REALLOC) {
            in->words = member_index(pl, "words");
            if (in->words >= 0) {
                const bt_field_class *a = bt_field_class_structure_member_borrow_field_class_const(
                    bt_field_class_structure_borrow_member_by_index_const(pl, (uint64_t)in->words));
                in->bad_words =
                    bt_field_class_get_type(a) != BT_FIELD_CLASS_TYPE_STATIC_ARRAY ||
                    !bt_field_class_type_is(
                        bt_field_class_get_type(
                            bt_field_class_array_borrow_element_field_class_const(a)),
                        BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER) ||
                    bt_field_class_array_static_get_length(a) < (uint64_t)words_needed(in->kind);
            }
        }
        in->heapledger = name && !strncmp(name, "heapledger:", 11);
        const bt_field_class *cc = bt_stream_class_borrow_event_common_context_field_class_const(
            bt_event_class_borrow_stream_class_const(ec));
        in->ctx_pid = member_index(cc, "vpid");
        in->ctx_tid = member_index(cc, "vtid");
        in->ctx_name = member_index(cc, "procname");
        return in;
    }
    return NULL; /* more than EV_CACHE classes: treated as unknown events */
}

static inline const bt_field *member(const bt_field *st, int idx)
{
    return idx < 0 || !st
               ? NULL
               : bt_field_structure_borrow_member_field_by_index_const(st, (uint64_t)idx);
}

static int push_cur(hl_source_t *s, int flush, int last)
{
    hl_batch_t *b = s->cur;
    if (!b) {
        b = hl_queue_get_empty(s->q);
        if (!b) return -1;
    }
    b->events = s->pending_events;
    b->discarded = s->pending_discarded;
    b->filtered = s->pending_filtered;
    b->flush = flush;
    b->last = last;
    s->pending_events = s->pending_discarded = s->pending_filtered = 0;
    s->cur = NULL;
    hl_queue_push(s->q, b);
    s->last_push = hl_ingest_now();
    return 0;
}

static inline hl_rec_t *new_rec(hl_source_t *s)
{
    if (s->cur && s->cur->n == HL_BATCH_RECS && push_cur(s, 0, 0) != 0) return NULL;
    if (!s->cur && !(s->cur = hl_queue_get_empty(s->q))) return NULL;
    hl_rec_t *r = &s->cur->rec[s->cur->n++];
    r->ext = NULL;
    r->n = 0;
    return r;
}

static char *two_strings(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *p = malloc(la + lb + 2);
    if (p) {
        memcpy(p, a, la + 1);
        memcpy(p + la + 1, b, lb + 1);
    }
    return p;
}

static uint64_t name_hash(const char *n)
{
    uint64_t h = 1469598103934665603ull;
    while (*n)
        h = (h ^ (unsigned char)*n++) * 1099511628211ull;
    return h;
}

/* Returns 1 when the event comes from one of LTTng's own threads. May emit a THREAD record
 * (before the event's own record) when (pid, tid) is new or renamed. */
static int track_thread(hl_source_t *s, uint32_t pid, uint32_t tid, const char *name, uint64_t seq,
                        uint64_t ts)
{
    int emit = seq >= s->skip;
    uint64_t key = (uint64_t)pid << 32 | tid;
    uint64_t h = name_hash(name) << 1;
    uint64_t *v = hl_map_find(&s->threads, key);
    if (v && (*v & ~1ull) == h) return (int)(*v & 1);
    size_t len = strlen(name);
    int ust = len >= 4 && !strcmp(name + len - 4, "-ust");
    hl_map_put(&s->threads, key, h | (uint64_t)ust);
    hl_rec_t *r = emit ? new_rec(s) : NULL;
    if (r) {
        r->kind = HL_REC_THREAD;
        r->pid = pid;
        r->tid = tid;
        r->seq = seq;
        r->ts = ts;
        r->ext = strdup(name);
        r->a = (uint64_t)ust;
    }
    return ust;
}

/* tier, cls, path of an alloc/free/realloc: from the packed member (layout 2: tier | cls << 8
 * | path << 16) when present, else from the three members at three[0..2] (layout 1). */
static inline void op_fields(hl_rec_t *r, const bt_field *const *three, const bt_field *packed)
{
    if (packed) {
        uint64_t v = fint(packed);
        r->tier = (uint8_t)v;
        r->cls = (uint8_t)(v >> 8);
        r->path = (uint8_t)(v >> 16);
    } else {
        r->tier = (uint8_t)fint(three[0]);
        r->cls = (uint8_t)fint(three[1]);
        r->path = (uint8_t)fint(three[2]);
    }
}

/* The first n words of a layout-3 `words` array (checked by info_of: a static array of
 * unsigned integers, long enough). */
static inline void read_words(const bt_field *arr, uint64_t *w, int n)
{
    for (int i = 0; i < n; i++)
        w[i] = bt_field_integer_unsigned_get_value(
            bt_field_array_borrow_element_field_by_index_const(arr, (uint64_t)i));
}

static int convert_event(hl_source_t *s, const bt_message *msg)
{
    const bt_event *ev = bt_message_event_borrow_event_const(msg);
    const ev_info_t *in = info_of(s, bt_event_borrow_class_const(ev));
    uint64_t seq = s->events++;
    if (seq < s->skip) { /* delivered already: only the thread-name state */
        if (in && in->kind != EV_OTHER && in->ctx_name >= 0 && in->words < 0) {
            const bt_field *ctx = bt_event_borrow_common_context_field_const(ev);
            track_thread(s, (uint32_t)fint(member(ctx, in->ctx_pid)),
                         (uint32_t)fint(member(ctx, in->ctx_tid)), fstr(member(ctx, in->ctx_name)),
                         seq, 0);
        }
        return 0;
    }
    s->pending_events++;
    if (!in || in->kind == EV_OTHER) return 0;
    uint64_t ts = 0;
    const bt_clock_snapshot *cs = bt_message_event_borrow_default_clock_snapshot_const(msg);
    if (cs) ts = bt_clock_snapshot_get_value(cs);
    const bt_field *p = bt_event_borrow_payload_field_const(ev);
    uint32_t pid, tid;
    uint64_t w[L3_REALLOC_WORDS];
    if (in->words >= 0) { /* layout 3 */
        if (in->bad_words) {
            BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_UNKNOWN(
                "heapledger",
                "%s: payload `words` is not the layout-3 array of %d uint64 (a trace from "
                "another heapledger version?)",
                bt_event_class_get_name(in->ec), words_needed(in->kind));
            return -1;
        }
        read_words(member(p, in->words), w, words_needed(in->kind));
        pid = (uint32_t)(w[0] >> 32);
        tid = (uint32_t)w[0];
    } else if (in->pay_pid >= 0 && in->pay_tid >= 0) {
        pid = (uint32_t)fint(member(p, in->pay_pid));
        tid = (uint32_t)fint(member(p, in->pay_tid));
    } else {
        const bt_field *ctx = bt_event_borrow_common_context_field_const(ev);
        pid = (uint32_t)fint(member(ctx, in->ctx_pid));
        tid = (uint32_t)fint(member(ctx, in->ctx_tid));
    }
    if (in->ctx_name >= 0) { /* layout 1: thread names and the LTTng-thread filter */
        const bt_field *ctx = bt_event_borrow_common_context_field_const(ev);
        if (track_thread(s, pid, tid, fstr(member(ctx, in->ctx_name)), seq, ts) && in->heapledger) {
            s->pending_filtered++;
            return 0;
        }
    }
    const bt_field *f[MAXF];
    for (int i = 0; i < in->nf; i++)
        f[i] = member(p, in->idx[i]);
    hl_rec_t *r = new_rec(s);
    if (!r) return -1;
    r->pid = pid;
    r->tid = tid;
    r->seq = seq;
    r->ts = ts;
    if (in->words >= 0) { /* layout 3: w[0] is who, the op word is second to last */
        rec_from_words(r, in->kind, w);
        return 0;
    }
    switch (in->kind) {
    case EV_ALLOC:
        r->kind = HL_REC_ALLOC;
        r->a = fint(f[0]);
        r->b = fint(f[1]);
        r->c = fint(f[2]);
        op_fields(r, f + 3, f[8]);
        r->cycles = (uint32_t)fint(f[6]);
        r->stack = (uint32_t)fint(f[7]);
        break;
    case EV_FREE:
        r->kind = HL_REC_FREE;
        r->a = fint(f[0]);
        r->c = fint(f[1]);
        op_fields(r, f + 2, f[7]);
        r->cycles = (uint32_t)fint(f[5]);
        r->stack = (uint32_t)fint(f[6]);
        break;
    case EV_REALLOC:
        r->kind = HL_REC_REALLOC;
        r->a = fint(f[0]);
        r->d = fint(f[1]);
        r->b = fint(f[2]);
        r->c = fint(f[3]);
        op_fields(r, f + 4, f[9]);
        r->cycles = (uint32_t)fint(f[7]);
        r->stack = (uint32_t)fint(f[8]);
        break;
    case EV_STACK:
    case EV_BUILD_ID: {
        r->kind = in->kind == EV_STACK ? HL_REC_STACK : HL_REC_BUILD_ID;
        uint64_t first = fint(f[0]);
        if (in->kind == EV_STACK)
            r->stack = (uint32_t)first;
        else
            r->a = first;
        const bt_field *arr = f[1];
        uint64_t n = 0;
        if (arr && bt_field_class_type_is(bt_field_get_class_type(arr), BT_FIELD_CLASS_TYPE_ARRAY))
            n = bt_field_array_get_length(arr);
        if (n > 4096) n = 4096;
        if (in->kind == EV_STACK) {
            uint64_t *ips = malloc((n ? n : 1) * sizeof *ips);
            for (uint64_t i = 0; ips && i < n; i++)
                ips[i] = fint(bt_field_array_borrow_element_field_by_index_const(arr, i));
            r->ext = ips;
        } else {
            uint8_t *bytes = malloc(n ? n : 1);
            for (uint64_t i = 0; bytes && i < n; i++)
                bytes[i] =
                    (uint8_t)fint(bt_field_array_borrow_element_field_by_index_const(arr, i));
            r->ext = bytes;
        }
        r->n = r->ext ? (uint32_t)n : 0;
        break;
    }
    case EV_OS_MAP:
    case EV_OS_UNMAP:
        r->kind = in->kind == EV_OS_MAP ? HL_REC_OS_MAP : HL_REC_OS_UNMAP;
        r->a = fint(f[0]);
        r->b = fint(f[1]);
        r->ext = strdup(fstr(f[2]));
        break;
    case EV_ERROR:
        r->kind = HL_REC_ERROR;
        r->ext = two_strings(fstr(f[0]), fstr(f[3]));
        r->a = fint(f[1]);
        r->b = fint(f[2]);
        r->cycles = (uint32_t)fint(f[4]);
        r->c = fint(f[5]);
        r->d = fint(f[6]);
        break;
    case EV_CONFIG:
        r->kind = HL_REC_CONFIG;
        r->ext = two_strings(fstr(f[0]), fstr(f[1]));
        r->a = fint(f[2]);
        r->b = fint(f[3]);
        r->c = fint(f[4]); /* 0 in traces from before fork_parent/fork_ts */
        r->d = fint(f[5]);
        break;
    case EV_MODULE:
        r->kind = HL_REC_MODULE;
        r->a = fint(f[0]);
        r->b = fint(f[1]);
        r->ext = strdup(fstr(f[2]));
        break;
    case EV_DLCLOSE:
        r->kind = HL_REC_DLCLOSE;
        r->a = fint(f[0]);
        break;
    case EV_THREAD: {
        const char *name = fstr(f[0]);
        size_t len = strlen(name);
        r->kind = HL_REC_THREAD;
        r->ext = strdup(name);
        r->a = len >= 4 && !strcmp(name + len - 4, "-ust");
        break;
    }
    case EV_LEAK_BLOCKS:
    case EV_LEAK_SCAN: {
        r->kind = in->kind == EV_LEAK_BLOCKS ? HL_REC_LEAK_BLOCKS : HL_REC_LEAK_SCAN;
        const bt_field *arr = f[0];
        uint64_t n = 0;
        if (arr && bt_field_class_type_is(bt_field_get_class_type(arr), BT_FIELD_CLASS_TYPE_ARRAY))
            n = bt_field_array_get_length(arr);
        if (n > 4096) n = 4096;
        uint64_t *w = malloc((n ? n : 1) * sizeof *w);
        for (uint64_t i = 0; w && i < n; i++)
            w[i] = fint(bt_field_array_borrow_element_field_by_index_const(arr, i));
        r->ext = w;
        r->n = w ? (uint32_t)n : 0;
        break;
    }
    case EV_OTHER:
        break;
    }
    return 0;
}

static bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator *it,
                                                                  void *data)
{
    hl_source_t *s = data;
    bt_message_array_const msgs;
    uint64_t count;
    switch (bt_message_iterator_next(it, &msgs, &count)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
        break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    default:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    }
    int failed = 0;
    s->messages += count;
    for (uint64_t i = 0; i < count; i++) {
        const bt_message *m = msgs[i];
        if (!failed) {
            switch (bt_message_get_type(m)) {
            case BT_MESSAGE_TYPE_EVENT:
                failed = convert_event(s, m) != 0;
                break;
            case BT_MESSAGE_TYPE_DISCARDED_EVENTS: {
                uint64_t n = 0;
                if (bt_message_discarded_events_get_count(m, &n) ==
                        BT_PROPERTY_AVAILABILITY_AVAILABLE &&
                    s->events >= s->skip) /* before: counted by heapledger's reader */
                    s->pending_discarded += n;
                break;
            }
            default:
                break;
            }
        }
        bt_message_put_ref(m);
    }
    if (failed) {
        BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_UNKNOWN("heapledger", "%s",
                                                          "ingest aborted by the store");
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    }
    return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

/* ---- graph ---------------------------------------------------------------------------- */

/* A plugin by name (system dirs, static, BABELTRACE_PLUGIN_PATH); NULL with a message. */
static const bt_plugin *find_plugin(const char *plugin, char *err, size_t errlen)
{
    const bt_plugin *p = NULL;
    if (bt_plugin_find(plugin, BT_TRUE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, &p) !=
            BT_PLUGIN_FIND_STATUS_OK ||
        !p) {
        bt_current_thread_clear_error();
        snprintf(err, errlen, "babeltrace2 plugin '%s' not found (is babeltrace2 installed?)",
                 plugin);
        return NULL;
    }
    return p;
}

static const bt_component_class_source *source_class(const bt_plugin *p, const char *name,
                                                     char *err, size_t errlen)
{
    const bt_component_class_source *c =
        bt_plugin_borrow_source_component_class_by_name_const(p, name);
    if (!c) snprintf(err, errlen, "babeltrace2 component class source.ctf.%s not found", name);
    return c;
}

static hl_source_t *source_new(hl_queue_t *q)
{
    hl_source_t *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->q = q;
    if (hl_map_init(&s->threads, 64) != 0) {
        free(s);
        return NULL;
    }
    s->graph = bt_graph_create(0);
    if (!s->graph) {
        hl_map_destroy(&s->threads);
        free(s);
        return NULL;
    }
    return s;
}

/* Adds muxer + sink and connects every output port of the sources to the muxer. */
static int finish_graph(hl_source_t *s, const bt_component_source **srcs, int nsrc, char *err,
                        size_t errlen)
{
    const bt_plugin *utils = find_plugin("utils", err, errlen);
    if (!utils) return -1;
    const bt_component_class_filter *mux_cls =
        bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer");
    const bt_component_filter *mux = NULL;
    const bt_component_sink *sink = NULL;
    int rc = -1;
    if (!mux_cls) {
        snprintf(err, errlen, "babeltrace2 component class filter.utils.muxer not found");
        goto out;
    }
    if (bt_graph_add_filter_component(s->graph, mux_cls, "muxer", NULL, BT_LOGGING_LEVEL_WARNING,
                                      &mux) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        take_bt_error("creating the muxer", err, errlen);
        goto out;
    }
    if (bt_graph_add_simple_sink_component(s->graph, "heapledger", NULL, consume, NULL, s, &sink) !=
        BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        take_bt_error("creating the sink", err, errlen);
        goto out;
    }
    for (int i = 0; i < nsrc; i++) {
        uint64_t n = bt_component_source_get_output_port_count(srcs[i]);
        for (uint64_t k = 0; k < n; k++) {
            const bt_port_output *op =
                bt_component_source_borrow_output_port_by_index_const(srcs[i], k);
            uint64_t nin = bt_component_filter_get_input_port_count(mux);
            const bt_port_input *ip =
                bt_component_filter_borrow_input_port_by_index_const(mux, nin - 1);
            if (bt_graph_connect_ports(s->graph, op, ip, NULL) !=
                BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
                take_bt_error("connecting the trace streams", err, errlen);
                goto out;
            }
        }
    }
    if (bt_graph_connect_ports(s->graph,
                               bt_component_filter_borrow_output_port_by_index_const(mux, 0),
                               bt_component_sink_borrow_input_port_by_index_const(sink, 0),
                               NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
        take_bt_error("connecting the muxer", err, errlen);
        goto out;
    }
    rc = 0;
out:
    bt_plugin_put_ref(utils);
    return rc;
}

static hl_source_t *open_fs_locked(char *const *dirs, size_t n, hl_queue_t *q, char *err,
                                   size_t errlen)
{
    const bt_plugin *ctf = find_plugin("ctf", err, errlen);
    if (!ctf) return NULL;
    const bt_component_class_source *fs = source_class(ctf, "fs", err, errlen);
    hl_source_t *s = fs ? source_new(q) : NULL;
    const bt_component_source **srcs = calloc(n ? n : 1, sizeof *srcs);
    if (!fs) goto fail;
    if (!s || !srcs) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        bt_value *params = bt_value_map_create();
        bt_value *inputs = NULL;
        bt_value_map_insert_empty_array_entry(params, "inputs", &inputs);
        bt_value_array_append_string_element(inputs, dirs[i]);
        char name[32];
        snprintf(name, sizeof name, "src%zu", i);
        int st = bt_graph_add_source_component(s->graph, fs, name, params, BT_LOGGING_LEVEL_NONE,
                                               &srcs[i]);
        bt_value_put_ref(params);
        if (st != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
            char what[4200];
            snprintf(what, sizeof what, "%s: not a readable CTF trace", dirs[i]);
            take_bt_error(what, err, errlen);
            goto fail;
        }
    }
    if (finish_graph(s, srcs, (int)n, err, errlen) != 0) goto fail;
    free(srcs);
    bt_plugin_put_ref(ctf);
    return s;
fail:
    free(srcs);
    bt_plugin_put_ref(ctf);
    if (s) close_locked(s);
    return NULL;
}

/* s's graph: babeltrace2's live reader of s->live_url, muxed into our sink. */
static int live_graph_locked(hl_source_t *s, char *err, size_t errlen)
{
    const bt_plugin *ctf = find_plugin("ctf", err, errlen);
    if (!ctf) return -1;
    const bt_component_class_source *lc = source_class(ctf, "lttng-live", err, errlen);
    if (!lc) {
        bt_plugin_put_ref(ctf);
        return -1;
    }
    bt_value *params = bt_value_map_create();
    bt_value *inputs = NULL;
    bt_value_map_insert_empty_array_entry(params, "inputs", &inputs);
    bt_value_array_append_string_element(inputs, s->live_url);
    bt_value_map_insert_string_entry(params, "session-not-found-action", "end");
    const bt_component_source *src = NULL;
    int st =
        bt_graph_add_source_component(s->graph, lc, "live", params, BT_LOGGING_LEVEL_NONE, &src);
    bt_value_put_ref(params);
    bt_plugin_put_ref(ctf);
    if (st != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        take_bt_error(s->live_url, err, errlen);
        return -1;
    }
    return finish_graph(s, &src, 1, err, errlen);
}

static hl_source_t *open_live_locked(const char *url, hl_queue_t *q, char *err, size_t errlen)
{
    hl_source_t *s = source_new(q);
    if (!s || !(s->live_url = strdup(url))) {
        if (s) close_locked(s);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->live = 1;
    if (live_graph_locked(s, err, errlen) != 0) {
        close_locked(s);
        return NULL;
    }
    return s;
}

/* The live reader ended before any message: the relay daemon has no such session (not yet,
 * or not any more) — babeltrace2's live reader then ends as it does at a session's end, and
 * an empty recording must not pass for a complete one. Attach again, with a new graph, until
 * HL_LIVE_ATTACH_S after the first attach. Returns 0 (attached again), 1 (the time is up: err
 * says so) or -1 (err). */
static int live_reattach(hl_source_t *s, double t0, char *err, size_t errlen)
{
    if (hl_ingest_now() - t0 >= HL_LIVE_ATTACH_S) {
        snprintf(err, errlen,
                 "%s %s (not created yet, or destroyed before it could be read): nothing was "
                 "received in %d s of attaching; check the session name and that its record "
                 "--relay reaches this relay daemon",
                 HL_LIVE_NO_SESSION, s->live_url, HL_LIVE_ATTACH_S);
        return 1;
    }
    struct timespec ts = {0, 250 * 1000 * 1000};
    nanosleep(&ts, NULL);
    hl_bt_lock();
    bt_graph_put_ref(s->graph);
    s->graph = bt_graph_create(0);
    int rc = -1;
    if (s->graph)
        rc = live_graph_locked(s, err, errlen);
    else
        snprintf(err, errlen, "out of memory");
    hl_bt_unlock();
    return rc;
}

int hl_source_run(hl_source_t *s, const volatile int *stop, char *err, size_t errlen)
{
    if (s->remote) {
        char lost[8];
        return hl_decoder_pump(s->remote, s->q, (const volatile sig_atomic_t *)stop, lost,
                               sizeof lost, err, errlen);
    }
    int rc = 0;
    double t0 = s->last_push = hl_ingest_now();
    for (unsigned iter = 1;; iter++) {
        if (stop && *stop) {
            rc = 2;
            break;
        }
        bt_graph_run_once_status st = bt_graph_run_once(s->graph);
        if (st == BT_GRAPH_RUN_ONCE_STATUS_OK) {
            /* Heartbeat for the decoder's watchdog (ingest_decoder.c): a batch, full or
             * not, at least every second while decoding makes progress. */
            if (!(iter & 255) && !s->live && hl_ingest_now() - s->last_push >= 1.0 &&
                push_cur(s, 0, 0) != 0) {
                rc = -1;
                break;
            }
            continue;
        }
        if (st == BT_GRAPH_RUN_ONCE_STATUS_END) {
            if (s->live_url && !s->messages) { /* no such session at the relay daemon */
                int r = live_reattach(s, t0, err, errlen);
                if (r == 0) continue;
                rc = r;
            }
            break;
        }
        if (st == BT_GRAPH_RUN_ONCE_STATUS_AGAIN) {
            /* Live: nothing now. Let the store commit what it has, then wait a little. */
            if (s->cur || s->pending_events || s->pending_discarded) {
                if (push_cur(s, 1, 0) != 0) {
                    rc = -1;
                    break;
                }
            }
            struct timespec ts = {0, 20 * 1000 * 1000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (s->q->aborted) {
            bt_current_thread_clear_error();
            snprintf(err, errlen, "ingest aborted");
            rc = -1;
            break;
        }
        char what[128];
        snprintf(what, sizeof what, "trace decoding stopped after %llu events",
                 (unsigned long long)s->events);
        take_bt_error(what, err, errlen);
        rc = s->events ? 1 : -1;
        break;
    }
    if (!s->q->aborted) push_cur(s, 0, 1);
    return rc;
}

void hl_source_skip(hl_source_t *s, uint64_t n)
{
    s->skip = n;
}

uint64_t hl_source_events(const hl_source_t *s)
{
    return s->events;
}

static void close_locked(hl_source_t *s)
{
    if (!s) return;
    if (s->remote) {
        hl_decoder_free(s->remote);
        free(s);
        return;
    }
    bt_graph_put_ref(s->graph);
    hl_map_destroy(&s->threads);
    free(s->live_url);
    free(s);
}

/* ---- listing live sessions ------------------------------------------------------------ */

static int live_sessions_locked(const char *relay_url,
                                void (*fn)(const char *url, const char *host, const char *session,
                                           void *arg),
                                void *arg, char *err, size_t errlen)
{
    const bt_plugin *ctf = find_plugin("ctf", err, errlen);
    if (!ctf) return -1;
    const bt_component_class_source *lc = source_class(ctf, "lttng-live", err, errlen);
    if (!lc) {
        bt_plugin_put_ref(ctf);
        return -1;
    }
    bt_value *params = bt_value_map_create();
    bt_value_map_insert_string_entry(params, "url", relay_url);
    bt_query_executor *qe = bt_query_executor_create(
        bt_component_class_source_as_component_class_const(lc), "sessions", params);
    bt_value_put_ref(params);
    bt_plugin_put_ref(ctf);
    if (!qe) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const bt_value *res = NULL;
    int rc = -1;
    if (bt_query_executor_query(qe, &res) != BT_QUERY_EXECUTOR_QUERY_STATUS_OK || !res) {
        char what[300];
        snprintf(what, sizeof what, "%s: cannot list sessions", relay_url);
        take_bt_error(what, err, errlen);
        goto out;
    }
    rc = 0;
    uint64_t n = bt_value_array_get_length(res);
    for (uint64_t i = 0; i < n; i++) {
        const bt_value *m = bt_value_array_borrow_element_by_index_const(res, i);
        const bt_value *u = bt_value_map_borrow_entry_value_const(m, "url");
        const bt_value *h = bt_value_map_borrow_entry_value_const(m, "target-hostname");
        const bt_value *sn = bt_value_map_borrow_entry_value_const(m, "session-name");
        if (!u || !bt_value_is_string(u)) continue;
        fn(bt_value_string_get(u), h && bt_value_is_string(h) ? bt_value_string_get(h) : "",
           sn && bt_value_is_string(sn) ? bt_value_string_get(sn) : "", arg);
        rc++;
    }
out:
    bt_value_put_ref(res);
    bt_query_executor_put_ref(qe);
    return rc;
}

/* ---- serialisation -------------------------------------------------------------------- */

/* libbabeltrace2 is not thread-safe: plugin loading has global state and reference counts
 * are not atomic, so two threads building or destroying graphs from the same component
 * classes can corrupt them (collectd's followers and its session polling do exactly that).
 * Every call that loads plugins, creates, destroys or queries takes this lock; running
 * distinct graphs (bt_graph_run_once) needs no lock. */
static pthread_mutex_t bt_lock = PTHREAD_MUTEX_INITIALIZER;

void hl_bt_lock(void)
{
    pthread_mutex_lock(&bt_lock);
}

void hl_bt_unlock(void)
{
    pthread_mutex_unlock(&bt_lock);
}

hl_source_t *hl_source_open_fs(char *const *dirs, size_t n, hl_queue_t *q, char *err, size_t errlen)
{
    hl_bt_lock();
    hl_source_t *s = open_fs_locked(dirs, n, q, err, errlen);
    hl_bt_unlock();
    return s;
}

hl_source_t *hl_source_open_live(const char *url, hl_queue_t *q, char *err, size_t errlen)
{
    hl_source_t *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->q = q;
    s->live = 1;
    if (!(s->remote = hl_decoder_start_live(url, err, errlen))) {
        free(s);
        return NULL;
    }
    return s;
}

hl_source_t *hl_source_open_live_here(const char *url, hl_queue_t *q, char *err, size_t errlen)
{
    hl_bt_lock();
    hl_source_t *s = open_live_locked(url, q, err, errlen);
    hl_bt_unlock();
    return s;
}

void hl_source_close(hl_source_t *s)
{
    hl_bt_lock();
    close_locked(s);
    hl_bt_unlock();
}

int hl_source_live_sessions(const char *relay_url,
                            void (*fn)(const char *url, const char *host, const char *session,
                                       void *arg),
                            void *arg, char *err, size_t errlen)
{
    hl_bt_lock();
    int n = live_sessions_locked(relay_url, fn, arg, err, errlen);
    hl_bt_unlock();
    return n;
}
