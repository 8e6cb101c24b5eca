/* tracer/ctf_stream.c — packets and events of one CTF stream file (see ctf_stream.h).
 *
 * Each scope is decoded by its plan (ctf_plan.c: runs of members at fixed offsets, one
 * bounds check per run) or, when it has none (strings, sequences), by walking its node tree
 * (ctf_meta.c) with a bit position: align, bounds check against the packet's content size,
 * read. The two write the same values. Integers are little-endian bit fields
 * (byte-aligned 8/16/32/64-bit ones take the fast path); arrays and sequences of integers
 * are not copied: their value points into the packet buffer. Every bound is checked
 * before it is read: a lying size or length makes the event fail, never a read outside
 * the buffer.
 */
#include "ctf_stream.h"

#include "ctf_plan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CTF_MAGIC   0xc1fc1fc1u
#define MAX_PACKET  (256u << 20) /* bytes; LTTng's sub-buffers are far smaller */
#define HEAD_WINDOW 4096u        /* bytes read to check a packet's header and context */

static int dec(hl_ctf_cursor_t *d, const hl_ctf_node_t *n, hl_ctf_val_t *v)
{
    uint64_t a = n->align;
    d->pos = (d->pos + a - 1) & ~(a - 1);
    hl_ctf_val_t *o = &v[n->slot];
    switch ((hl_ctf_kind_t)n->kind) {
    case HL_CTF_INT: {
        if (d->pos > d->end || d->end - d->pos < n->size) return -1;
        uint64_t x = hl_ctf_rd_bits(d->b, d->pos, n->size);
        d->pos += n->size;
        if (n->clock && d->clock) hl_ctf_update_clock(d->clock, x, n->size);
        o->u = hl_ctf_int_value(x, n->size, n->is_signed);
        o->kind = HL_CTF_INT;
        o->gen = d->gen;
        return 0;
    }
    case HL_CTF_FLOAT:
        if (d->pos > d->end || d->end - d->pos < n->size) return -1;
        d->pos += n->size;
        o->kind = HL_CTF_FLOAT;
        o->gen = d->gen;
        return 0;
    case HL_CTF_STRING: {
        if (d->pos >= d->end) return -1;
        const uint8_t *p = d->b + (d->pos >> 3);
        uint64_t room = (d->end - d->pos) / 8;
        const uint8_t *z = memchr(p, 0, room);
        if (!z) return -1;
        o->p = p;
        o->n = (uint32_t)(z - p);
        o->kind = HL_CTF_STRING;
        o->gen = d->gen;
        d->pos += ((uint64_t)(z - p) + 1) * 8;
        return 0;
    }
    case HL_CTF_STRUCT:
        for (uint32_t i = 0; i < n->nchild; i++)
            if (dec(d, &n->child[i], v) != 0) return -1;
        o->kind = HL_CTF_STRUCT;
        o->gen = d->gen;
        return 0;
    case HL_CTF_VARIANT: {
        const hl_ctf_val_t *tag = &v[n->ref];
        if (tag->gen != d->gen || tag->kind != HL_CTF_INT) return -1;
        int64_t t = (int64_t)tag->u;
        for (uint32_t i = 0; i < n->nrange; i++) {
            const hl_ctf_range_t *r = &n->range[i];
            if (t >= r->lo && t <= r->hi) {
                o->kind = HL_CTF_VARIANT;
                o->gen = d->gen;
                return dec(d, &n->child[r->child], v);
            }
        }
        return -1; /* no option for this tag */
    }
    case HL_CTF_ARRAY:
    case HL_CTF_SEQ: {
        uint64_t count = n->len;
        if (n->kind == HL_CTF_SEQ) {
            const hl_ctf_val_t *l = &v[n->ref];
            if (l->gen != d->gen || l->kind != HL_CTF_INT) return -1;
            count = l->u;
        }
        if (d->pos > d->end) return -1;
        uint64_t room = (d->end - d->pos) / 8 / n->size;
        if (count > room || count > UINT32_MAX) return -1;
        const uint8_t *p = d->b + (d->pos >> 3);
        o->p = p;
        o->esize = (uint8_t)n->size;
        o->is_signed = n->is_signed;
        o->gen = d->gen;
        if (n->text) {
            const uint8_t *z = memchr(p, 0, count);
            o->n = z ? (uint32_t)(z - p) : (uint32_t)count;
            o->kind = HL_CTF_STRING;
        } else {
            o->n = (uint32_t)count;
            o->kind = HL_CTF_ARRAY;
        }
        d->pos += count * n->size * 8;
        return 0;
    }
    }
    return -1;
}

/* A scope by its plan, or by walking its tree when it has none. */
static inline __attribute__((always_inline)) int
dec_scope(hl_ctf_cursor_t *d, const hl_ctf_scope_t *sc, hl_ctf_val_t *v)
{
    if (!sc->root) return 0;
    if (sc->plan) return hl_ctf_plan_dec(sc->plan, d, v);
    return dec(d, sc->root, v);
}

static int valid_int(const hl_ctf_val_t *v, uint32_t slot, uint32_t gen)
{
    return slot != HL_CTF_NOSLOT && v[slot].gen == gen && v[slot].kind == HL_CTF_INT;
}

/* Packet header and context at the start of b (n bytes available, the packet being at
 * file offset off). Sets *packet_bits, *content_bits, *hdr_end (bits used) and the stream
 * class, instance, timestamp_begin, events_discarded. 0, or -1 with s->err. */
typedef struct pkt_s {
    const hl_ctf_stream_class_t *sc;
    uint64_t packet_bits, content_bits, hdr_end;
    int has_instance;
    uint64_t instance;
    int has_begin;
    uint64_t begin;
    int has_end;
    uint64_t end;
    int has_discarded;
    uint64_t discarded;
} pkt_t;

static int packet_head(hl_ctf_stream_t *s, const uint8_t *b, uint64_t n, uint64_t off, pkt_t *pk)
{
    const hl_ctf_meta_t *m = s->m;
    uint64_t left = s->fsize - off; /* bytes of the file from this packet on */
    s->gen++;
    hl_ctf_cursor_t d = {b, 0, n * 8, NULL, s->gen};
    memset(pk, 0, sizeof *pk);
    s->ph = s->vals[m->packet_header.index];
    if (dec_scope(&d, &m->packet_header, s->ph) != 0) {
        snprintf(s->err, sizeof s->err, "%s: packet at offset %llu: truncated packet header",
                 s->path, (unsigned long long)off);
        return -1;
    }
    if (valid_int(s->ph, m->ph_magic, s->gen) && s->ph[m->ph_magic].u != CTF_MAGIC) {
        snprintf(s->err, sizeof s->err, "%s: packet at offset %llu: bad magic 0x%llx", s->path,
                 (unsigned long long)off, (unsigned long long)s->ph[m->ph_magic].u);
        return -1;
    }
    if (m->ph_uuid != HL_CTF_NOSLOT && m->has_uuid) {
        const hl_ctf_val_t *u = &s->ph[m->ph_uuid];
        if (u->gen != s->gen || u->esize != 1 || u->n != 16 || memcmp(u->p, m->uuid, 16)) {
            snprintf(s->err, sizeof s->err, "%s: packet at offset %llu: trace uuid mismatch",
                     s->path, (unsigned long long)off);
            return -1;
        }
    }
    uint64_t sid = 0;
    if (valid_int(s->ph, m->ph_stream_id, s->gen))
        sid = s->ph[m->ph_stream_id].u;
    else if (m->nstreams == 1)
        sid = m->streams[0]->id;
    pk->sc = hl_ctf_meta_stream(m, sid);
    if (!pk->sc) {
        snprintf(s->err, sizeof s->err, "%s: packet at offset %llu: unknown stream class %llu",
                 s->path, (unsigned long long)off, (unsigned long long)sid);
        return -1;
    }
    if (valid_int(s->ph, m->ph_instance_id, s->gen)) {
        pk->has_instance = 1;
        pk->instance = s->ph[m->ph_instance_id].u;
    }
    const hl_ctf_stream_class_t *sc = pk->sc;
    s->pc = s->vals[sc->packet_context.index];
    if (dec_scope(&d, &sc->packet_context, s->pc) != 0) {
        snprintf(s->err, sizeof s->err, "%s: packet at offset %llu: truncated packet context",
                 s->path, (unsigned long long)off);
        return -1;
    }
    pk->hdr_end = d.pos;
    /* Without them the packet's padding would be decoded as events (CTF allows it, LTTng
     * always writes both): babeltrace2 decides. */
    if (!valid_int(s->pc, sc->pc_packet_size, s->gen) ||
        !valid_int(s->pc, sc->pc_content_size, s->gen)) {
        snprintf(s->err, sizeof s->err,
                 "%s: packet at offset %llu: no packet_size or content_size in its context",
                 s->path, (unsigned long long)off);
        return -1;
    }
    pk->packet_bits =
        valid_int(s->pc, sc->pc_packet_size, s->gen) ? s->pc[sc->pc_packet_size].u : left * 8;
    pk->content_bits = valid_int(s->pc, sc->pc_content_size, s->gen) ? s->pc[sc->pc_content_size].u
                                                                     : pk->packet_bits;
    if (!pk->packet_bits || pk->packet_bits % 8 || pk->packet_bits / 8 > left ||
        pk->packet_bits / 8 > MAX_PACKET || pk->content_bits > pk->packet_bits ||
        pk->content_bits < pk->hdr_end) {
        snprintf(s->err, sizeof s->err,
                 "%s: packet at offset %llu: bad sizes (packet %llu bits, content %llu bits, "
                 "%llu bytes left in the file)",
                 s->path, (unsigned long long)off, (unsigned long long)pk->packet_bits,
                 (unsigned long long)pk->content_bits, (unsigned long long)left);
        return -1;
    }
    if (valid_int(s->pc, sc->pc_ts_begin, s->gen)) {
        pk->has_begin = 1;
        pk->begin = s->pc[sc->pc_ts_begin].u;
    }
    if (valid_int(s->pc, sc->pc_ts_end, s->gen)) {
        pk->has_end = 1;
        pk->end = s->pc[sc->pc_ts_end].u;
    }
    if (valid_int(s->pc, sc->pc_discarded, s->gen)) {
        pk->has_discarded = 1;
        pk->discarded = s->pc[sc->pc_discarded].u;
    }
    return 0;
}

/* One value array per scope, in one block after the table of pointers; the markers of the
 * planned scopes written (ctf_plan.h). */
static hl_ctf_val_t **value_arrays(const hl_ctf_meta_t *m)
{
    size_t n = 0;
    for (size_t i = 0; i < m->nscopes; i++)
        n += m->scopes[i]->nslots + 1;
    size_t head = (m->nscopes + 1) * sizeof(hl_ctf_val_t *);
    head = (head + 15) & ~(size_t)15;
    char *mem = calloc(1, head + n * sizeof(hl_ctf_val_t));
    if (!mem) return NULL;
    hl_ctf_val_t **v = (hl_ctf_val_t **)mem;
    hl_ctf_val_t *at = (hl_ctf_val_t *)(mem + head);
    for (size_t i = 0; i < m->nscopes; i++) {
        v[i] = at;
        if (m->scopes[i]->plan) hl_ctf_plan_init(m->scopes[i]->plan, at);
        at += m->scopes[i]->nslots + 1;
    }
    return v;
}

hl_ctf_stream_t *hl_ctf_stream_open(const hl_ctf_meta_t *m, const char *path, char *err,
                                    size_t errlen)
{
    hl_ctf_stream_t *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->m = m;
    s->fd = -1;
    s->path = strdup(path);
    s->vals = value_arrays(m);
    uint8_t *head = malloc(HEAD_WINDOW);
    struct stat sb;
    if (!s->path || !s->vals || !head) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    s->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (s->fd < 0 || fstat(s->fd, &sb) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto fail;
    }
    s->fsize = (uint64_t)sb.st_size;
    /* Check every packet's header and context. */
    for (uint64_t off = 0; off < s->fsize;) {
        uint64_t want = s->fsize - off < HEAD_WINDOW ? s->fsize - off : HEAD_WINDOW;
        ssize_t k = pread(s->fd, head, want, (off_t)off);
        if (k != (ssize_t)want) {
            snprintf(err, errlen, "%s: cannot read at offset %llu", path, (unsigned long long)off);
            goto fail;
        }
        pkt_t pk;
        if (packet_head(s, head, want, off, &pk) != 0) {
            snprintf(err, errlen, "%s", s->err);
            goto fail;
        }
        if (!s->packets) {
            s->sc = pk.sc;
            s->has_instance = pk.has_instance;
            s->instance_id = pk.instance;
        } else if (pk.sc != s->sc || pk.has_instance != s->has_instance ||
                   pk.instance != s->instance_id) {
            snprintf(err, errlen,
                     "%s: packet at offset %llu: another stream than the first packet's", path,
                     (unsigned long long)off);
            goto fail;
        }
        s->packets++;
        off += pk.packet_bits / 8;
    }
    free(head);
    if (s->sc) {
        s->eh = s->vals[s->sc->event_header.index];
        s->sctx = s->vals[s->sc->event_context.index];
    }
    return s;
fail:
    free(head);
    hl_ctf_stream_close(s);
    return NULL;
}

/* The stream's time moves to t (raw clock value): -1 with s->err when it goes backwards. */
static int advance(hl_ctf_stream_t *s, uint64_t t, const char *what)
{
    if (s->have_last && t < s->last_ts) {
        snprintf(s->err, sizeof s->err,
                 "%s: packet ending at offset %llu: time goes backwards (%s %llu after %llu)",
                 s->path, (unsigned long long)s->next_off, what, (unsigned long long)t,
                 (unsigned long long)s->last_ts);
        return -1;
    }
    s->last_ts = t;
    s->have_last = 1;
    return 0;
}

/* Read the packet at next_off into buf and decode its header and context. 1 loaded, 0 end,
 * -1 error. */
static int load_packet(hl_ctf_stream_t *s)
{
    if (s->next_off >= s->fsize) return 0;
    uint64_t off = s->next_off;
    uint64_t want = s->fsize - off < HEAD_WINDOW ? s->fsize - off : HEAD_WINDOW;
    if (want > s->cap) {
        size_t nc = s->cap ? s->cap : HEAD_WINDOW;
        while (nc < want)
            nc *= 2;
        uint8_t *nb = realloc(s->buf, nc);
        if (!nb) goto oom;
        s->buf = nb;
        s->cap = nc;
    }
    if (pread(s->fd, s->buf, want, (off_t)off) != (ssize_t)want) goto rd;
    pkt_t pk;
    if (packet_head(s, s->buf, want, off, &pk) != 0) return -1;
    if (pk.sc != s->sc || pk.instance != s->instance_id) {
        snprintf(s->err, sizeof s->err, "%s: packet at offset %llu changed under the reader",
                 s->path, (unsigned long long)off);
        return -1;
    }
    uint64_t bytes = pk.packet_bits / 8;
    if (bytes > s->cap) {
        size_t nc = s->cap;
        while (nc < bytes)
            nc *= 2;
        uint8_t *nb = realloc(s->buf, nc);
        if (!nb) goto oom;
        s->buf = nb;
        s->cap = nc;
    }
    if (bytes > want &&
        pread(s->fd, s->buf + want, bytes - want, (off_t)(off + want)) != (ssize_t)(bytes - want))
        goto rd;
    s->pos = pk.hdr_end;
    s->end = pk.content_bits;
    s->next_off = off + bytes;
    s->has_end = pk.has_end;
    s->pkt_end = pk.end;
    if (pk.has_begin) {
        s->clock = pk.begin;
        if (advance(s, pk.begin, "packet begin") != 0) return -1;
    }
    if (pk.has_discarded) {
        if (s->have_prev && pk.discarded != s->prev_discarded)
            s->discarded += pk.discarded - s->prev_discarded;
        s->prev_discarded = pk.discarded;
        s->have_prev = 1;
    }
    return 1;
rd:
    snprintf(s->err, sizeof s->err, "%s: cannot read the packet at offset %llu", s->path,
             (unsigned long long)off);
    return -1;
oom:
    snprintf(s->err, sizeof s->err, "out of memory");
    return -1;
}

int hl_ctf_stream_next(hl_ctf_stream_t *s)
{
    if (!s->sc) return 0; /* no packets */
    while (!s->buf || s->pos >= s->end) {
        if (s->buf && s->has_end) { /* the packet ends */
            s->has_end = 0;
            if (advance(s, s->pkt_end, "packet end") != 0) return -1;
        }
        int r = load_packet(s);
        if (r <= 0) return r;
    }
    const hl_ctf_stream_class_t *sc = s->sc;
    s->gen++;
    uint64_t at = s->next_off; /* for messages: the packet's end */
    hl_ctf_cursor_t d = {s->buf, s->pos, s->end, &s->clock, s->gen};
    uint64_t id = 0;
    if (sc->hdr) {
        if (hl_ctf_hdr_run(sc->hdr, &d, &id) != 0) goto bad_header;
    } else {
        if (dec_scope(&d, &sc->event_header, s->eh) != 0) goto bad_header;
        for (uint32_t i = 0; i < sc->nid; i++)
            if (valid_int(s->eh, sc->id_slot[i], s->gen)) id = s->eh[sc->id_slot[i]].u;
    }
    if (id >= sc->nevents || !sc->events[id]) {
        snprintf(s->err, sizeof s->err,
                 "%s: packet ending at offset %llu: event id %llu not in the metadata", s->path,
                 (unsigned long long)at, (unsigned long long)id);
        return -1;
    }
    const hl_ctf_event_class_t *ec = sc->events[id];
    s->ectx = s->vals[ec->context.index];
    s->pl = s->vals[ec->payload.index];
    if (dec_scope(&d, &sc->event_context, s->sctx) != 0 ||
        dec_scope(&d, &ec->context, s->ectx) != 0 || dec_scope(&d, &ec->payload, s->pl) != 0) {
        snprintf(s->err, sizeof s->err,
                 "%s: packet ending at offset %llu: event '%s' runs past the packet's content "
                 "or has a bad length or tag",
                 s->path, (unsigned long long)at, ec->name);
        return -1;
    }
    s->pos = d.pos;
    s->ec = ec;
    s->ts = s->clock;
    if (advance(s, s->clock, "event") != 0) return -1;
    if (hl_ctf_ns_of(s->m, s->clock, &s->ns) != 0) {
        snprintf(s->err, sizeof s->err,
                 "%s: packet ending at offset %llu: time %llu out of range in ns from the "
                 "clock's origin",
                 s->path, (unsigned long long)at, (unsigned long long)s->clock);
        return -1;
    }
    return 1;
bad_header:
    snprintf(s->err, sizeof s->err,
             "%s: packet ending at offset %llu: event header runs past the packet's content",
             s->path, (unsigned long long)at);
    return -1;
}

void hl_ctf_stream_close(hl_ctf_stream_t *s)
{
    if (!s) return;
    if (s->fd >= 0) close(s->fd);
    free(s->path);
    free(s->buf);
    free(s->vals);
    free(s);
}
