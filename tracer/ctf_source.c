/* tracer/ctf_source.c — CTF dirs → merged events → records, without babeltrace2 (see
 * ctf_source.h for the order and the fallback contract).
 *
 * The record of an event is built exactly as ingest_source.c builds it from babeltrace2's
 * fields (same members by name, ingest_events.h; same defaults: a member that is absent or
 * not an integer reads 0, not a string reads ""), including the procname-context thread
 * names and LTTng-thread filter of layout 1.
 */
#include "ctf_source.h"

#include "ctf_meta.h"
#include "ctf_stream.h"
#include "ingest_events.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct cinfo_s {
    ev_kind_t kind;
    int heapledger;
    int nf;
    uint32_t idx[MAXF];                  /* payload slots, HL_CTF_NOSLOT when absent */
    uint32_t ctx_pid, ctx_tid, ctx_name; /* stream event context slots */
    uint32_t pay_pid, pay_tid;
    uint32_t words; /* layout 3 */
} cinfo_t;

typedef struct ctrace_s {
    hl_ctf_meta_t *m;
    cinfo_t *info; /* by event class index */
} ctrace_t;

typedef struct cstream_s {
    hl_ctf_stream_t *st;
    ctrace_t *tr;
} cstream_t;

struct hl_ctf_source_s {
    hl_queue_t *q;
    hl_batch_t *cur;
    ctrace_t *tr;
    size_t ntr;
    cstream_t *s;
    size_t ns;
    size_t *heap; /* stream indexes with a current event, min-heap by key */
    size_t nheap;
    uint64_t events;
    uint64_t pending_events, pending_discarded, pending_filtered;
    int64_t last_ns;
    hl_map_t threads;
    double last_push;
};

/* ---- opening --------------------------------------------------------------------------- */

static uint32_t slot_of(const hl_ctf_scope_t *sc, const char *name)
{
    const hl_ctf_node_t *n = hl_ctf_member(sc->root, name);
    return n ? n->slot : HL_CTF_NOSLOT;
}

/* The converter's view of an event class; -1 (err) for a layout-3 `words` of another shape
 * (the babeltrace2 path reports that one with its own message). */
static int class_info(const hl_ctf_meta_t *m, const hl_ctf_event_class_t *ec, cinfo_t *in,
                      char *err, size_t errlen)
{
    memset(in, 0, sizeof *in);
    for (int j = 0; j < MAXF; j++)
        in->idx[j] = HL_CTF_NOSLOT;
    for (size_t k = 0; k < sizeof ev_table / sizeof ev_table[0]; k++) {
        if (strcmp(ec->name, ev_table[k].name)) continue;
        in->kind = ev_table[k].kind;
        for (int j = 0; j < MAXF && ev_table[k].fields[j]; j++) {
            in->idx[j] = slot_of(&ec->payload, ev_table[k].fields[j]);
            in->nf = j + 1;
        }
    }
    in->heapledger = !strncmp(ec->name, "heapledger:", 11);
    in->pay_pid = slot_of(&ec->payload, "vpid");
    in->pay_tid = slot_of(&ec->payload, "vtid");
    in->words = HL_CTF_NOSLOT;
    if (in->kind == EV_ALLOC || in->kind == EV_FREE || in->kind == EV_REALLOC) {
        const hl_ctf_node_t *w = hl_ctf_member(ec->payload.root, "words");
        if (w) {
            if (w->kind != HL_CTF_ARRAY || w->is_signed || w->text ||
                w->len < (uint64_t)words_needed(in->kind)) {
                snprintf(err, errlen, "%s: payload `words` is not the layout-3 array", ec->name);
                return -1;
            }
            in->words = w->slot;
        }
    }
    const hl_ctf_stream_class_t *sc = hl_ctf_meta_stream(m, ec->stream_id);
    in->ctx_pid = sc ? slot_of(&sc->event_context, "vpid") : HL_CTF_NOSLOT;
    in->ctx_tid = sc ? slot_of(&sc->event_context, "vtid") : HL_CTF_NOSLOT;
    in->ctx_name = sc ? slot_of(&sc->event_context, "procname") : HL_CTF_NOSLOT;
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The stream files of a CTF dir (regular files but metadata and dot files), sorted. */
static int stream_files(const char *dir, char ***out, size_t *n, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: cannot read the directory", dir);
        return -1;
    }
    char **v = NULL;
    size_t k = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, "metadata")) continue;
        char path[4200];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
        char **nv = realloc(v, (k + 1) * sizeof *v);
        if (!nv || !(nv[k] = strdup(path))) {
            free(nv ? nv : v);
            closedir(d);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        v = nv;
        k++;
    }
    closedir(d);
    if (k) qsort(v, k, sizeof *v, cmp_name);
    *out = v;
    *n = k;
    return 0;
}

/* Merge order: time from origin, then trace uuid, stream class id, stream instance id. */
static inline __attribute__((always_inline)) int key_cmp(const cstream_t *a, const cstream_t *b)
{
    if (a->st->ns != b->st->ns) return a->st->ns < b->st->ns ? -1 : 1;
    if (a->tr != b->tr) {
        int c = memcmp(a->tr->m->uuid, b->tr->m->uuid, 16);
        if (c) return c;
    }
    if (a->st->sc->id != b->st->sc->id) return a->st->sc->id < b->st->sc->id ? -1 : 1;
    if (a->st->instance_id != b->st->instance_id)
        return a->st->instance_id < b->st->instance_id ? -1 : 1;
    return 0;
}

static void heap_down(hl_ctf_source_t *s, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->nheap && key_cmp(&s->s[s->heap[l]], &s->s[s->heap[m]]) < 0) m = l;
        if (r < s->nheap && key_cmp(&s->s[s->heap[r]], &s->s[s->heap[m]]) < 0) m = r;
        if (m == i) return;
        size_t t = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = t;
        i = m;
    }
}

static void heap_up(hl_ctf_source_t *s, size_t i)
{
    while (i) {
        size_t p = (i - 1) / 2;
        if (key_cmp(&s->s[s->heap[i]], &s->s[s->heap[p]]) >= 0) return;
        size_t t = s->heap[i];
        s->heap[i] = s->heap[p];
        s->heap[p] = t;
        i = p;
    }
}

hl_ctf_source_t *hl_ctf_source_open(char *const *dirs, size_t n, hl_queue_t *q, char *err,
                                    size_t errlen)
{
    hl_ctf_source_t *s = calloc(1, sizeof *s);
    if (!s || hl_map_init(&s->threads, 64) != 0) {
        free(s);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->q = q;
    s->last_ns = INT64_MIN;
    s->tr = calloc(n ? n : 1, sizeof *s->tr);
    if (!s->tr) goto oom;
    for (size_t i = 0; i < n; i++) {
        char e[400];
        ctrace_t *t = &s->tr[s->ntr];
        t->m = hl_ctf_meta_load(dirs[i], e, sizeof e);
        if (!t->m) {
            snprintf(err, errlen, "%s: %s", dirs[i], e);
            goto fail;
        }
        s->ntr++;
        for (size_t j = 0; j + 1 < s->ntr; j++)
            if (!memcmp(s->tr[j].m->uuid, t->m->uuid, 16)) {
                snprintf(err, errlen, "%s: two CTF directories with the same trace uuid", dirs[i]);
                goto fail;
            }
        t->info = calloc(t->m->nevents ? t->m->nevents : 1, sizeof *t->info);
        if (!t->info) goto oom;
        for (size_t k = 0; k < t->m->nevents; k++)
            if (class_info(t->m, t->m->events[k], &t->info[k], e, sizeof e) != 0) {
                snprintf(err, errlen, "%s: %s", dirs[i], e);
                goto fail;
            }
        char **files = NULL;
        size_t nf = 0;
        if (stream_files(dirs[i], &files, &nf, err, errlen) != 0) goto fail;
        cstream_t *ns = realloc(s->s, (s->ns + nf + 1) * sizeof *ns);
        if (!ns) {
            for (size_t k = 0; k < nf; k++)
                free(files[k]);
            free(files);
            goto oom;
        }
        s->s = ns;
        int bad = 0;
        for (size_t k = 0; k < nf; k++) {
            if (!bad) {
                hl_ctf_stream_t *st = hl_ctf_stream_open(t->m, files[k], e, sizeof e);
                hl_decoder_heartbeat(); /* a file checked: the watchdog sees progress */
                if (!st) {
                    snprintf(err, errlen, "%s", e);
                    bad = 1;
                } else if (!st->packets) {
                    hl_ctf_stream_close(st); /* empty file: no stream */
                } else {
                    s->s[s->ns].st = st;
                    s->s[s->ns].tr = t;
                    s->ns++;
                }
            }
            free(files[k]);
        }
        free(files);
        if (bad) goto fail;
    }
    /* Two files of one stream would need babeltrace2's grouping of stream files. */
    for (size_t i = 0; i < s->ns; i++)
        for (size_t j = i + 1; j < s->ns; j++)
            if (s->s[i].tr == s->s[j].tr && s->s[i].st->sc == s->s[j].st->sc &&
                s->s[i].st->instance_id == s->s[j].st->instance_id) {
                snprintf(err, errlen, "%s and %s: two files of one stream", s->s[i].st->path,
                         s->s[j].st->path);
                goto fail;
            }
    s->heap = calloc(s->ns + 1, sizeof *s->heap);
    if (!s->heap) goto oom;
    return s;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    hl_ctf_source_close(s);
    return NULL;
}

void hl_ctf_source_close(hl_ctf_source_t *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->ns; i++)
        hl_ctf_stream_close(s->s[i].st);
    for (size_t i = 0; i < s->ntr; i++) {
        hl_ctf_meta_free(s->tr[i].m);
        free(s->tr[i].info);
    }
    if (s->cur) hl_queue_push(s->q, s->cur); /* never left half-filled by run; defensive */
    free(s->tr);
    free(s->s);
    free(s->heap);
    hl_map_destroy(&s->threads);
    free(s);
}

uint64_t hl_ctf_source_events(const hl_ctf_source_t *s)
{
    return s->events;
}

/* ---- records ----------------------------------------------------------------------------- */

static int push_cur(hl_ctf_source_t *s, int last)
{
    hl_batch_t *b = s->cur;
    if (!b && !(b = hl_queue_get_empty(s->q))) return -1;
    b->events = s->pending_events;
    b->discarded = s->pending_discarded;
    b->filtered = s->pending_filtered;
    b->flush = 0;
    b->last = last;
    s->pending_events = s->pending_discarded = s->pending_filtered = 0;
    s->cur = NULL;
    hl_queue_push(s->q, b);
    s->last_push = hl_ingest_now();
    return 0;
}

static inline hl_rec_t *new_rec(hl_ctf_source_t *s)
{
    if (s->cur && s->cur->n == HL_BATCH_RECS && push_cur(s, 0) != 0) return NULL;
    if (!s->cur && !(s->cur = hl_queue_get_empty(s->q))) return NULL;
    hl_rec_t *r = &s->cur->rec[s->cur->n++];
    memset(r, 0, sizeof *r);
    return r;
}

static inline uint64_t vint(const hl_ctf_val_t *v, uint32_t slot)
{
    return slot != HL_CTF_NOSLOT && v[slot].kind == HL_CTF_INT ? v[slot].u : 0;
}

/* A string member (or ""), its length in *len. */
static inline const char *vstr(const hl_ctf_val_t *v, uint32_t slot, size_t *len)
{
    if (slot == HL_CTF_NOSLOT || v[slot].kind != HL_CTF_STRING) {
        *len = 0;
        return "";
    }
    *len = v[slot].n;
    return (const char *)v[slot].p;
}

static char *vstrdup(const hl_ctf_val_t *v, uint32_t slot)
{
    size_t l;
    const char *p = vstr(v, slot, &l);
    char *r = malloc(l + 1);
    if (r) {
        memcpy(r, p, l);
        r[l] = 0;
    }
    return r;
}

/* Element i of an integer array (little-endian, sign-extended when signed). */
static inline uint64_t velem(const hl_ctf_val_t *a, uint64_t i)
{
    const uint8_t *p = a->p + i * a->esize;
    switch (a->esize) {
    case 1:
        return a->is_signed ? (uint64_t)(int64_t)(int8_t)p[0] : p[0];
    case 2: {
        uint16_t x;
        memcpy(&x, p, 2);
        return a->is_signed ? (uint64_t)(int64_t)(int16_t)x : x;
    }
    case 4: {
        uint32_t x;
        memcpy(&x, p, 4);
        return a->is_signed ? (uint64_t)(int64_t)(int32_t)x : x;
    }
    default: {
        uint64_t x;
        memcpy(&x, p, 8);
        return x;
    }
    }
}

static inline uint64_t varr_len(const hl_ctf_val_t *v, uint32_t slot)
{
    return slot != HL_CTF_NOSLOT && v[slot].kind == HL_CTF_ARRAY ? v[slot].n : 0;
}

static uint64_t name_hash(const char *n, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len && n[i]; i++)
        h = (h ^ (unsigned char)n[i]) * 1099511628211ull;
    return h;
}

/* As ingest_source.c's track_thread: 1 when the event comes from one of LTTng's own
 * threads; a THREAD record when (pid, tid) is new or renamed. */
static int track_thread(hl_ctf_source_t *s, uint32_t pid, uint32_t tid, const char *name,
                        size_t len, uint64_t seq, uint64_t ts)
{
    uint64_t key = (uint64_t)pid << 32 | tid;
    uint64_t h = name_hash(name, len) << 1;
    uint64_t *v = hl_map_find(&s->threads, key);
    if (v && (*v & ~1ull) == h) return (int)(*v & 1);
    int ust = len >= 4 && !memcmp(name + len - 4, "-ust", 4);
    hl_map_put(&s->threads, key, h | (uint64_t)ust);
    hl_rec_t *r = new_rec(s);
    if (r) {
        r->kind = HL_REC_THREAD;
        r->pid = pid;
        r->tid = tid;
        r->seq = seq;
        r->ts = ts;
        if ((r->ext = malloc(len + 1))) {
            memcpy(r->ext, name, len);
            ((char *)r->ext)[len] = 0;
        }
        r->a = (uint64_t)ust;
    }
    return ust;
}

static char *two_strings(const hl_ctf_val_t *v, uint32_t a, uint32_t b)
{
    size_t la, lb;
    const char *pa = vstr(v, a, &la), *pb = vstr(v, b, &lb);
    char *p = malloc(la + lb + 2);
    if (p) {
        memcpy(p, pa, la);
        p[la] = 0;
        memcpy(p + la + 1, pb, lb);
        p[la + 1 + lb] = 0;
    }
    return p;
}

static inline void op_fields(hl_rec_t *r, const hl_ctf_val_t *v, const uint32_t *three,
                             uint32_t packed)
{
    if (packed != HL_CTF_NOSLOT) {
        uint64_t x = vint(v, packed);
        r->tier = (uint8_t)x;
        r->cls = (uint8_t)(x >> 8);
        r->path = (uint8_t)(x >> 16);
    } else {
        r->tier = (uint8_t)vint(v, three[0]);
        r->cls = (uint8_t)vint(v, three[1]);
        r->path = (uint8_t)vint(v, three[2]);
    }
}

/* Strings that babeltrace2 would hand over are NUL-free up to their length; a text array
 * ends at its first NUL (ctf_stream.c). */
static int convert(hl_ctf_source_t *s, const cstream_t *cs)
{
    const hl_ctf_stream_t *st = cs->st;
    const cinfo_t *in = &cs->tr->info[st->ec->index];
    const hl_ctf_val_t *p = st->pl, *ctx = st->sctx;
    uint64_t seq = s->events++;
    s->pending_events++;
    if (in->kind == EV_OTHER) return 0;
    uint64_t ts = st->ts;
    uint32_t pid, tid;
    uint64_t w[L3_REALLOC_WORDS];
    if (in->words != HL_CTF_NOSLOT) {
        const hl_ctf_val_t *a = &p[in->words];
        int nw = words_needed(in->kind);
        if (a->esize == 8 && nw == L3_ALLOC_WORDS) /* the words as they lie in the packet */
            memcpy(w, a->p, L3_ALLOC_WORDS * 8);
        else if (a->esize == 8 && nw == L3_FREE_WORDS)
            memcpy(w, a->p, L3_FREE_WORDS * 8);
        else
            for (int i = 0; i < nw; i++)
                w[i] = velem(a, (uint64_t)i);
        pid = (uint32_t)(w[0] >> 32);
        tid = (uint32_t)w[0];
    } else if (in->pay_pid != HL_CTF_NOSLOT && in->pay_tid != HL_CTF_NOSLOT) {
        pid = (uint32_t)vint(p, in->pay_pid);
        tid = (uint32_t)vint(p, in->pay_tid);
    } else {
        pid = (uint32_t)vint(ctx, in->ctx_pid);
        tid = (uint32_t)vint(ctx, in->ctx_tid);
    }
    if (in->ctx_name != HL_CTF_NOSLOT) {
        size_t nl;
        const char *name = vstr(ctx, in->ctx_name, &nl);
        if (track_thread(s, pid, tid, name, nl, seq, ts) && in->heapledger) {
            s->pending_filtered++;
            return 0;
        }
    }
    const uint32_t *f = in->idx;
    hl_rec_t *r = new_rec(s);
    if (!r) return -1;
    r->pid = pid;
    r->tid = tid;
    r->seq = seq;
    r->ts = ts;
    if (in->words != HL_CTF_NOSLOT) {
        rec_from_words(r, in->kind, w);
        return 0;
    }
    switch (in->kind) {
    case EV_ALLOC:
        r->kind = HL_REC_ALLOC;
        r->a = vint(p, f[0]);
        r->b = vint(p, f[1]);
        r->c = vint(p, f[2]);
        op_fields(r, p, f + 3, f[8]);
        r->cycles = (uint32_t)vint(p, f[6]);
        r->stack = (uint32_t)vint(p, f[7]);
        break;
    case EV_FREE:
        r->kind = HL_REC_FREE;
        r->a = vint(p, f[0]);
        r->c = vint(p, f[1]);
        op_fields(r, p, f + 2, f[7]);
        r->cycles = (uint32_t)vint(p, f[5]);
        r->stack = (uint32_t)vint(p, f[6]);
        break;
    case EV_REALLOC:
        r->kind = HL_REC_REALLOC;
        r->a = vint(p, f[0]);
        r->d = vint(p, f[1]);
        r->b = vint(p, f[2]);
        r->c = vint(p, f[3]);
        op_fields(r, p, f + 4, f[9]);
        r->cycles = (uint32_t)vint(p, f[7]);
        r->stack = (uint32_t)vint(p, f[8]);
        break;
    case EV_STACK:
    case EV_BUILD_ID: {
        r->kind = in->kind == EV_STACK ? HL_REC_STACK : HL_REC_BUILD_ID;
        uint64_t first = vint(p, f[0]);
        if (in->kind == EV_STACK)
            r->stack = (uint32_t)first;
        else
            r->a = first;
        uint64_t n = varr_len(p, f[1]);
        if (n > 4096) n = 4096;
        if (in->kind == EV_STACK) {
            uint64_t *ips = malloc((n ? n : 1) * sizeof *ips);
            for (uint64_t i = 0; ips && i < n; i++)
                ips[i] = velem(&p[f[1]], i);
            r->ext = ips;
        } else {
            uint8_t *bytes = malloc(n ? n : 1);
            for (uint64_t i = 0; bytes && i < n; i++)
                bytes[i] = (uint8_t)velem(&p[f[1]], i);
            r->ext = bytes;
        }
        r->n = r->ext ? (uint32_t)n : 0;
        break;
    }
    case EV_OS_MAP:
    case EV_OS_UNMAP:
        r->kind = in->kind == EV_OS_MAP ? HL_REC_OS_MAP : HL_REC_OS_UNMAP;
        r->a = vint(p, f[0]);
        r->b = vint(p, f[1]);
        r->ext = vstrdup(p, f[2]);
        break;
    case EV_ERROR:
        r->kind = HL_REC_ERROR;
        r->ext = two_strings(p, f[0], f[3]);
        r->a = vint(p, f[1]);
        r->b = vint(p, f[2]);
        r->cycles = (uint32_t)vint(p, f[4]);
        r->c = vint(p, f[5]);
        r->d = vint(p, f[6]);
        break;
    case EV_CONFIG:
        r->kind = HL_REC_CONFIG;
        r->ext = two_strings(p, f[0], f[1]);
        r->a = vint(p, f[2]);
        r->b = vint(p, f[3]);
        r->c = vint(p, f[4]);
        r->d = vint(p, f[5]);
        break;
    case EV_MODULE:
        r->kind = HL_REC_MODULE;
        r->a = vint(p, f[0]);
        r->b = vint(p, f[1]);
        r->ext = vstrdup(p, f[2]);
        break;
    case EV_DLCLOSE:
        r->kind = HL_REC_DLCLOSE;
        r->a = vint(p, f[0]);
        break;
    case EV_THREAD: {
        size_t len;
        const char *name = vstr(p, f[0], &len);
        r->kind = HL_REC_THREAD;
        r->ext = vstrdup(p, f[0]);
        r->a = len >= 4 && !memcmp(name + len - 4, "-ust", 4);
        break;
    }
    case EV_LEAK_BLOCKS:
    case EV_LEAK_SCAN: {
        r->kind = in->kind == EV_LEAK_BLOCKS ? HL_REC_LEAK_BLOCKS : HL_REC_LEAK_SCAN;
        uint64_t n = varr_len(p, f[0]);
        if (n > 4096) n = 4096;
        uint64_t *w2 = malloc((n ? n : 1) * sizeof *w2);
        for (uint64_t i = 0; w2 && i < n; i++)
            w2[i] = velem(&p[f[0]], i);
        r->ext = w2;
        r->n = w2 ? (uint32_t)n : 0;
        break;
    }
    case EV_OTHER:
        break;
    }
    return 0;
}

/* ---- the run ------------------------------------------------------------------------------ */

int hl_ctf_source_run(hl_ctf_source_t *s, char *err, size_t errlen)
{
    s->last_push = hl_ingest_now();
    /* Prime: the first event of every stream. */
    for (size_t i = 0; i < s->ns; i++) {
        int r = hl_ctf_stream_next(s->s[i].st);
        if (r < 0) {
            snprintf(err, errlen, "%s", s->s[i].st->err);
            return 1;
        }
        s->pending_discarded += s->s[i].st->discarded;
        s->s[i].st->discarded = 0;
        if (r == 1) {
            s->heap[s->nheap++] = i;
            heap_up(s, s->nheap - 1);
        }
    }
    unsigned tick = 0;
    while (s->nheap) {
        size_t i = s->heap[0];
        cstream_t *cs = &s->s[i];
        if (cs->st->ns < s->last_ns) {
            snprintf(err, errlen, "%s: time goes backwards after %llu events", cs->st->path,
                     (unsigned long long)s->events);
            if (s->cur || s->pending_events) push_cur(s, 0);
            return 1;
        }
        s->last_ns = cs->st->ns;
        if (convert(s, cs) != 0) return -1;
        int r = hl_ctf_stream_next(cs->st);
        s->pending_discarded += cs->st->discarded;
        cs->st->discarded = 0;
        if (r < 0) {
            snprintf(err, errlen, "%s (after %llu events)", cs->st->err,
                     (unsigned long long)s->events);
            if ((s->cur || s->pending_events) && push_cur(s, 0) != 0) return -1;
            return 1;
        }
        if (r == 0) {
            s->heap[0] = s->heap[--s->nheap];
        }
        if (s->nheap) heap_down(s, 0);
        /* Heartbeat for the decoder's watchdog: a batch at least every second. */
        if (!(++tick & 4095) && hl_ingest_now() - s->last_push >= 1.0 && push_cur(s, 0) != 0)
            return -1;
    }
    if (push_cur(s, 1) != 0) return -1;
    return 0;
}
