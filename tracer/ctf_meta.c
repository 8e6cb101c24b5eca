/* tracer/ctf_meta.c — TSDL metadata → trace model (see ctf_meta.h for what is understood).
 *
 * The lexer and parser (ctf_tsdl.c) read the whole metadata text into shared type
 * descriptions (typealiases and named structs are referenced, not copied); this file then
 * instantiates every scope (packet header, packet context, event header, event contexts,
 * payloads) into its own node tree with value slots, sequence lengths and variant tags
 * resolved to slots of the same struct, checks the stream and event classes, and reads the
 * metadata file. Errors unwind with longjmp; everything lives in one arena freed with the
 * model.
 */
#include "ctf_meta.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctf_plan.h"
#include "ctf_tsdl.h"

/* ---- instantiation: nodes with slots ------------------------------------------------ */

typedef struct inst_s {
    hl_tsdl_ctx_t *c;
    uint32_t nslots;
} inst_t;

static int type_align(const hl_tsdl_ty_t *t)
{
    switch (t->kind) {
    case HL_CTF_STRUCT: {
        unsigned a = t->align;
        for (size_t i = 0; i < t->nf; i++) {
            unsigned b = (unsigned)type_align(t->f[i].t);
            if (b > a) a = b;
        }
        return (int)a;
    }
    case HL_CTF_VARIANT:
        return 1; /* the selected option aligns itself */
    case HL_CTF_ARRAY:
    case HL_CTF_SEQ:
        return type_align(t->elem);
    default:
        return (int)t->align;
    }
}

static void instantiate(inst_t *in, hl_ctf_node_t *n, const hl_tsdl_ty_t *t, const char *name,
                        const hl_ctf_node_t *scope, int depth);

/* Slot of the member called name among the already instantiated members of st. */
static uint32_t find_ref(const hl_ctf_node_t *st, uint32_t upto, const char *name)
{
    for (uint32_t i = upto; i-- > 0;)
        if (st->child[i].name && !strcmp(st->child[i].name, name)) return i;
    return HL_CTF_NOSLOT;
}

static void instantiate(inst_t *in, hl_ctf_node_t *n, const hl_tsdl_ty_t *t, const char *name,
                        const hl_ctf_node_t *scope, int depth)
{
    hl_tsdl_ctx_t *c = in->c;
    if (depth > 32) hl_tsdl_fail(c, "types nested too deeply");
    memset(n, 0, sizeof *n);
    n->kind = (uint8_t)t->kind;
    n->name = name;
    n->slot = in->nslots++;
    n->align = (uint16_t)type_align(t);
    n->ref = HL_CTF_NOSLOT;
    switch (t->kind) {
    case HL_CTF_INT:
    case HL_CTF_FLOAT:
        n->size = (uint16_t)t->size;
        n->is_signed = (uint8_t)t->sgn;
        n->clock = (uint8_t)t->clock;
        break;
    case HL_CTF_STRING:
        break;
    case HL_CTF_STRUCT:
        n->nchild = (uint32_t)t->nf;
        n->child = t->nf ? hl_tsdl_alloc(c, t->nf * sizeof *n->child) : NULL;
        for (size_t i = 0; i < t->nf; i++) {
            n->nchild = (uint32_t)i; /* find_ref sees only earlier members */
            instantiate(in, &n->child[i], t->f[i].t, t->f[i].name, n, depth + 1);
        }
        n->nchild = (uint32_t)t->nf;
        break;
    case HL_CTF_VARIANT: {
        if (!t->tag || !scope) hl_tsdl_fail(c, "variant without a tag in its struct");
        uint32_t k = find_ref(scope, scope->nchild, t->tag);
        if (k == HL_CTF_NOSLOT) hl_tsdl_fail(c, "variant tag '%s' not found", t->tag);
        const hl_ctf_node_t *tagn = &scope->child[k];
        if (tagn->kind != HL_CTF_INT) hl_tsdl_fail(c, "variant tag '%s' is not an enum", t->tag);
        n->ref = tagn->slot;
        n->nchild = (uint32_t)t->nf;
        n->child = t->nf ? hl_tsdl_alloc(c, t->nf * sizeof *n->child) : NULL;
        for (size_t i = 0; i < t->nf; i++)
            instantiate(in, &n->child[i], t->f[i].t, t->f[i].name, scope, depth + 1);
        /* The tag's enum type: find it back from the scope's struct type is not possible
         * here (nodes only), so the ranges were stashed on the tag node at its creation. */
        const hl_tsdl_ty_t *tagt = (const hl_tsdl_ty_t *)tagn->range;
        if (!tagt) hl_tsdl_fail(c, "variant tag '%s' is not an enum", t->tag);
        n->range = hl_tsdl_alloc(c, (tagt->nmap ? tagt->nmap : 1) * sizeof *n->range);
        for (size_t m = 0; m < tagt->nmap; m++) {
            uint32_t opt = HL_CTF_NOSLOT;
            for (size_t i = 0; i < t->nf; i++)
                if (!strcmp(t->f[i].name, tagt->map[m].label)) opt = (uint32_t)i;
            if (opt == HL_CTF_NOSLOT) continue; /* a label without option: no option */
            n->range[n->nrange].lo = tagt->map[m].lo;
            n->range[n->nrange].hi = tagt->map[m].hi;
            n->range[n->nrange].child = opt;
            n->nrange++;
        }
        break;
    }
    case HL_CTF_ARRAY:
    case HL_CTF_SEQ: {
        const hl_tsdl_ty_t *e = t->elem;
        if (e->kind != HL_CTF_INT ||
            (e->size != 8 && e->size != 16 && e->size != 32 && e->size != 64) || e->align % 8 ||
            e->align > e->size)
            hl_tsdl_fail(c, "array '%s' of other than byte-aligned 8/16/32/64-bit integers", name);
        n->size = (uint16_t)(e->size / 8);
        n->is_signed = (uint8_t)e->sgn;
        n->text = (uint8_t)(e->text && e->size == 8);
        n->len = t->len;
        if (t->kind == HL_CTF_SEQ) {
            if (!scope) hl_tsdl_fail(c, "sequence without its struct");
            uint32_t k = find_ref(scope, scope->nchild, t->lenref);
            if (k == HL_CTF_NOSLOT) hl_tsdl_fail(c, "sequence length '%s' not found", t->lenref);
            if (scope->child[k].kind != HL_CTF_INT)
                hl_tsdl_fail(c, "sequence length '%s' is not an integer", t->lenref);
            n->ref = scope->child[k].slot;
        }
        break;
    }
    default:
        hl_tsdl_fail(c, "unknown type");
    }
    /* An enum remembers its type for a variant that it tags (see above). */
    if (t->kind == HL_CTF_INT && t->nmap) n->range = (hl_ctf_range_t *)(uintptr_t)t;
}

static void scope_of(hl_tsdl_ctx_t *c, hl_ctf_scope_t *sc, const hl_tsdl_ty_t *t, const char *what)
{
    sc->root = NULL;
    sc->nslots = 0;
    if (!t) return;
    if (t->kind != HL_CTF_STRUCT) hl_tsdl_fail(c, "%s is not a struct", what);
    inst_t in = {c, 0};
    sc->root = hl_tsdl_alloc(c, sizeof *sc->root);
    instantiate(&in, sc->root, t, NULL, NULL, 0);
    sc->nslots = in.nslots;
    if (sc->nslots > 4096) hl_tsdl_fail(c, "%s has too many fields", what);
}

/* Enum nodes carry their type in `range` during instantiation; clear that afterwards so
 * that only variants have ranges. */
static void clear_enum_stash(hl_ctf_node_t *n)
{
    if (!n) return;
    if (n->kind == HL_CTF_INT) {
        n->range = NULL;
        n->nrange = 0;
    }
    for (uint32_t i = 0; i < n->nchild; i++)
        clear_enum_stash(&n->child[i]);
}

static void *arena_alloc(void *c, size_t n)
{
    return hl_tsdl_alloc(c, n);
}

/* A scope's index and plan (after clear_enum_stash: a plan reads only variants' ranges). */
static void plan_of(hl_tsdl_ctx_t *c, hl_ctf_scope_t *sc)
{
    hl_ctf_meta_t *m = c->m;
    sc->index = (uint32_t)m->nscopes;
    m->scopes[m->nscopes++] = sc;
    sc->plan = hl_ctf_plan_compile(sc->root, arena_alloc, c);
}

/* hl_ctf_ns_of's shortcut (ctf_meta.h). */
static void ns_shortcut(hl_ctf_meta_t *m)
{
    m->ns_fast = 0;
    if (m->clock_freq != 1000000000) return;
    __int128 base = (__int128)m->clock_offset_s * 1000000000 + m->clock_offset;
    if (base > INT64_MAX || base < INT64_MIN) return;
    __int128 room = (__int128)INT64_MAX - base; /* >= 0 */
    m->ns_base = (int64_t)base;
    m->ns_max = room > (__int128)UINT64_MAX ? UINT64_MAX : (uint64_t)room;
    m->ns_fast = 1;
}

static uint32_t member_slot(const hl_ctf_scope_t *sc, const char *name, int kind)
{
    const hl_ctf_node_t *n = hl_ctf_member(sc->root, name);
    return n && n->kind == kind ? n->slot : HL_CTF_NOSLOT;
}

/* Event header slots named id (any depth, decoding order). */
static void header_ids(hl_ctf_stream_class_t *s, const hl_ctf_node_t *n)
{
    if (n->kind == HL_CTF_INT && n->name && !strcmp(n->name, "id") && s->nid < 4)
        s->id_slot[s->nid++] = n->slot;
    for (uint32_t i = 0; i < n->nchild; i++)
        header_ids(s, &n->child[i]);
}

static void build(hl_tsdl_ctx_t *c)
{
    hl_ctf_meta_t *m = c->m;
    if (!m->clock_freq) m->clock_freq = 1000000000;
    ns_shortcut(m);
    m->scopes = hl_tsdl_alloc(c, (1 + 3 * c->nst + 2 * c->nev) * sizeof *m->scopes);
    scope_of(c, &m->packet_header, c->ph, "packet.header");
    clear_enum_stash(m->packet_header.root);
    plan_of(c, &m->packet_header);
    m->ph_magic = member_slot(&m->packet_header, "magic", HL_CTF_INT);
    m->ph_stream_id = member_slot(&m->packet_header, "stream_id", HL_CTF_INT);
    m->ph_instance_id = member_slot(&m->packet_header, "stream_instance_id", HL_CTF_INT);
    m->ph_uuid = member_slot(&m->packet_header, "uuid", HL_CTF_ARRAY);
    if (!c->nst) hl_tsdl_fail(c, "no stream class");
    m->streams = hl_tsdl_alloc(c, c->nst * sizeof *m->streams);
    m->nstreams = c->nst;
    for (size_t i = 0; i < c->nst; i++) {
        if (!c->st[i].has_id && c->nst > 1) hl_tsdl_fail(c, "stream class without id");
        for (size_t j = 0; j < i; j++)
            if (c->st[j].id == c->st[i].id)
                hl_tsdl_fail(c, "two stream classes with id %llu", (unsigned long long)c->st[i].id);
        hl_ctf_stream_class_t *s = hl_tsdl_alloc(c, sizeof *s);
        s->id = c->st[i].id;
        scope_of(c, &s->packet_context, c->st[i].pc, "packet.context");
        scope_of(c, &s->event_header, c->st[i].eh, "event.header");
        scope_of(c, &s->event_context, c->st[i].ec, "event.context");
        if (s->event_header.root) header_ids(s, s->event_header.root);
        clear_enum_stash(s->packet_context.root);
        clear_enum_stash(s->event_header.root);
        clear_enum_stash(s->event_context.root);
        plan_of(c, &s->packet_context);
        plan_of(c, &s->event_header);
        if (s->event_header.plan) {
            hl_ctf_hdr_t *h = hl_tsdl_alloc(c, sizeof *h);
            if (hl_ctf_plan_header(s->event_header.plan, s->id_slot, s->nid, h) == 0) s->hdr = h;
        }
        plan_of(c, &s->event_context);
        s->pc_content_size = member_slot(&s->packet_context, "content_size", HL_CTF_INT);
        s->pc_packet_size = member_slot(&s->packet_context, "packet_size", HL_CTF_INT);
        s->pc_ts_begin = member_slot(&s->packet_context, "timestamp_begin", HL_CTF_INT);
        s->pc_ts_end = member_slot(&s->packet_context, "timestamp_end", HL_CTF_INT);
        s->pc_discarded = member_slot(&s->packet_context, "events_discarded", HL_CTF_INT);
        m->streams[i] = s;
    }
    m->events = hl_tsdl_alloc(c, (c->nev ? c->nev : 1) * sizeof *m->events);
    for (size_t i = 0; i < c->nev; i++) {
        struct hl_tsdl_event_s *e = &c->ev[i];
        if (!e->has_stream && c->nst > 1) hl_tsdl_fail(c, "event '%s' without stream_id", e->name);
        hl_ctf_stream_class_t *s = NULL;
        for (size_t k = 0; k < m->nstreams; k++)
            if (!e->has_stream || m->streams[k]->id == e->stream_id) s = m->streams[k];
        if (!s)
            hl_tsdl_fail(c, "event '%s': no stream class %llu", e->name,
                         (unsigned long long)e->stream_id);
        if (e->id > 1000000) hl_tsdl_fail(c, "event id %llu too large", (unsigned long long)e->id);
        hl_ctf_event_class_t *ec = hl_tsdl_alloc(c, sizeof *ec);
        ec->index = (uint32_t)m->nevents;
        ec->id = e->id;
        ec->stream_id = s->id;
        ec->name = e->name;
        scope_of(c, &ec->context, e->ctx, "event context");
        scope_of(c, &ec->payload, e->fields, "event fields");
        clear_enum_stash(ec->context.root);
        clear_enum_stash(ec->payload.root);
        plan_of(c, &ec->context);
        plan_of(c, &ec->payload);
        if (ec->id >= s->nevents) {
            uint64_t nn = ec->id + 1 > s->nevents * 2 ? ec->id + 1 : s->nevents * 2;
            hl_ctf_event_class_t **ne = hl_tsdl_alloc(c, nn * sizeof *ne);
            if (s->nevents) memcpy(ne, s->events, s->nevents * sizeof *ne);
            s->events = ne;
            s->nevents = nn;
        }
        if (s->events[ec->id])
            hl_tsdl_fail(c, "two event classes with id %llu in stream class %llu",
                         (unsigned long long)ec->id, (unsigned long long)s->id);
        s->events[ec->id] = ec;
        m->events[m->nevents++] = ec;
    }
}

hl_ctf_meta_t *hl_ctf_meta_parse(const char *text, size_t len, char *err, size_t errlen)
{
    hl_tsdl_ctx_t *c = calloc(1, sizeof *c);
    hl_ctf_meta_t *volatile m = calloc(1, sizeof *m);
    if (!c || !m) {
        free(c);
        free(m);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->s = text;
    c->n = len;
    c->err = err;
    c->errlen = errlen;
    c->m = m;
    snprintf(c->clock_name, sizeof c->clock_name, "monotonic");
    if (setjmp(c->jb)) {
        hl_tsdl_arena_free(c->arena);
        free(c);
        free(m);
        return NULL;
    }
    hl_tsdl_parse(c);
    build(c);
    m->arena = c->arena;
    free(c);
    return m;
}

void hl_ctf_meta_free(hl_ctf_meta_t *m)
{
    if (!m) return;
    hl_tsdl_arena_free(m->arena);
    free(m);
}

/* ---- the metadata file ------------------------------------------------------------- */

#define META_MAGIC 0x75d11d57u

char *hl_ctf_meta_text(const uint8_t *buf, size_t n, size_t *len, char *err, size_t errlen)
{
    uint32_t magic = 0;
    if (n >= 4) memcpy(&magic, buf, 4);
    char *out = NULL;
    size_t ol = 0;
    if (magic != META_MAGIC) {
        if (n < 8 || memcmp(buf, "/* CTF 1", 8)) {
            snprintf(err, errlen, "metadata: neither packetized nor text CTF metadata");
            return NULL;
        }
        out = malloc(n + 1);
        if (!out) {
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        memcpy(out, buf, n);
        ol = n;
    } else {
        out = malloc(n + 1);
        if (!out) {
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        size_t off = 0;
        while (off < n) {
            /* magic, uuid[16], checksum, content_size, packet_size (bits), compression,
             * encryption, checksum scheme, major, minor: 37 bytes */
            uint32_t mg, content, packet;
            if (n - off < 37) goto bad;
            memcpy(&mg, buf + off, 4);
            memcpy(&content, buf + off + 24, 4);
            memcpy(&packet, buf + off + 28, 4);
            if (mg != META_MAGIC || content % 8 || packet % 8 || content < 37 * 8 ||
                content > packet || packet / 8 > n - off || buf[off + 32] || buf[off + 33] ||
                buf[off + 34])
                goto bad;
            size_t tl = content / 8 - 37;
            memcpy(out + ol, buf + off + 37, tl);
            ol += tl;
            off += packet / 8;
        }
    }
    out[ol] = 0;
    if (strlen(out) != ol) { /* NUL bytes inside the text */
        free(out);
        snprintf(err, errlen, "metadata: NUL bytes in the text");
        return NULL;
    }
    *len = ol;
    return out;
bad:
    free(out);
    snprintf(err, errlen, "metadata: bad packet header");
    return NULL;
}

hl_ctf_meta_t *hl_ctf_meta_load(const char *dir, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/metadata", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return NULL;
    }
    if (sb.st_size > 64 << 20) {
        close(fd);
        snprintf(err, errlen, "%s: larger than 64 MiB", path);
        return NULL;
    }
    size_t n = (size_t)sb.st_size;
    uint8_t *buf = malloc(n ? n : 1);
    size_t got = 0;
    while (buf && got < n) {
        ssize_t k = read(fd, buf + got, n - got);
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd);
    if (!buf || got != n) {
        free(buf);
        snprintf(err, errlen, "%s: cannot read", path);
        return NULL;
    }
    size_t tl = 0;
    char *text = hl_ctf_meta_text(buf, n, &tl, err, errlen);
    free(buf);
    if (!text) return NULL;
    hl_ctf_meta_t *m = hl_ctf_meta_parse(text, tl, err, errlen);
    free(text);
    return m;
}

/* ---- lookups ----------------------------------------------------------------------- */

const hl_ctf_stream_class_t *hl_ctf_meta_stream(const hl_ctf_meta_t *m, uint64_t id)
{
    for (size_t i = 0; i < m->nstreams; i++)
        if (m->streams[i]->id == id) return m->streams[i];
    return NULL;
}

const hl_ctf_node_t *hl_ctf_member(const hl_ctf_node_t *st, const char *name)
{
    if (!st || st->kind != HL_CTF_STRUCT) return NULL;
    for (uint32_t i = 0; i < st->nchild; i++) {
        const char *n = st->child[i].name;
        if (n && n[0] == '_') n++;
        if (n && !strcmp(n, name)) return &st->child[i];
    }
    return NULL;
}

int hl_ctf_ns_from_origin(const hl_ctf_meta_t *m, uint64_t value, int64_t *ns)
{
    __int128 v = (__int128)m->clock_offset_s * 1000000000;
    if (m->clock_freq == 1000000000) {
        v += (__int128)m->clock_offset + value;
    } else {
        v += (__int128)m->clock_offset * 1000000000 / m->clock_freq;
        v += (__int128)value * 1000000000 / m->clock_freq;
    }
    if (v > INT64_MAX || v < INT64_MIN) return -1;
    *ns = (int64_t)v;
    return 0;
}
