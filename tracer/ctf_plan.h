/* tracer/ctf_plan.h — a scope's decoding plan, compiled once from its field tree
 * (ctf_meta.h), so that the stream decoder (ctf_stream.c) does not walk the tree per event.
 *
 * A plan is a flat list of steps. A RUN is a stretch of fixed-size members (integers,
 * floating point, static arrays, the structs around them) whose start is aligned to every
 * member's alignment: each member then lies at a fixed bit offset from the run's start, and
 * one bounds check covers the whole run. A VARIANT picks, by the value of its tag (an earlier
 * integer of the same struct), the steps of one option. Strings, sequences and a variant with
 * more options than a plan holds are not expressed: hl_ctf_plan_compile() refuses the scope
 * and the stream decodes it by walking its tree, as before.
 *
 * A plan writes the same value slots as the tree walk (ctf_stream.c: INT u and kind, text
 * arrays as strings up to their first NUL, arrays as a pointer into the packet) and updates
 * the clock from clock-mapped integers in the same order, so the consumers (ctf_source.c)
 * cannot tell which of the two decoded an event. The values whose kind is all they carry
 * (STRUCT, VARIANT, FLOAT) are written once, not per event: the stream keeps one value
 * array per scope, so nothing else writes into those slots.
 *
 * LTTng-UST's event classes compile: heapledger's alloc/free/realloc (a struct of one
 * `words` array: one run, one leaf), the compact and large event headers (an enum id, then a
 * variant of a compact struct {timestamp} and an extended struct {id, timestamp}), the
 * vpid/vtid context, the statedump events without strings. Measured in docs/PERFORMANCE.md,
 * "The decoder compiled per event class".
 */
#ifndef HL_CTF_PLAN_H
#define HL_CTF_PLAN_H

#include <stdint.h>
#include <string.h>

#include "ctf_meta.h"

/* Where the decoder is: the packet's bytes, the bit position, the content's end in bits. */
typedef struct hl_ctf_cursor_s {
    const uint8_t *b;
    uint64_t pos, end;
    uint64_t *clock; /* NULL: clock-mapped integers do not update the clock */
    uint32_t gen;    /* the event generation written into every value decoded */
} hl_ctf_cursor_t;

/* How a leaf is read. */
enum {
    HL_LEAF_U8 = 1, /* byte-aligned unsigned integers: a plain load (and the clock) */
    HL_LEAF_U16,
    HL_LEAF_U32,
    HL_LEAF_U64,
    HL_LEAF_INT,   /* any other integer: bit reader, sign (and the clock) */
    HL_LEAF_ARRAY, /* a static array of integers: a pointer into the packet */
    HL_LEAF_TEXT,  /* a static text array: a string up to its first NUL */
};

/* One value of a run, at a fixed offset from the run's start. */
typedef struct hl_ctf_leaf_s {
    uint8_t op; /* HL_LEAF_* */
    uint8_t is_signed, clock;
    uint8_t esize; /* ARRAY, TEXT: element bytes */
    uint16_t size; /* INT: bits */
    uint32_t off;  /* bits from the run's start (U8..U64, ARRAY, TEXT: whole bytes) */
    uint32_t slot; /* its value's index in the scope's value array */
    uint32_t len;  /* ARRAY, TEXT: element count */
} hl_ctf_leaf_t;

/* A value whose kind never changes: STRUCT, VARIANT, FLOAT (skipped). Written once into
 * the scope's value array (hl_ctf_plan_init), not per event. */
typedef struct hl_ctf_marker_s {
    uint32_t slot;
    uint8_t kind;
} hl_ctf_marker_t;

enum { HL_PLAN_RUN = 1, HL_PLAN_VARIANT = 2 };

/* One step. A VARIANT's options are the steps right after it: option k is the steps
 * [opt[k], opt[k + 1]) and the step after the variant is next. */
typedef struct hl_ctf_step_s {
    uint8_t op;
    uint16_t align;      /* RUN: the alignment of its start (bits) */
    uint32_t need, bits; /* RUN: bits that must be in the content (UINT32_MAX: no check);
                            bits it advances */
    uint32_t first, n;   /* RUN: its leaves */
    uint32_t tag;        /* VARIANT: slot of the tag */
    uint32_t nrange;     /* VARIANT: tag ranges → option */
    const hl_ctf_range_t *range;
    uint32_t opt[9], next; /* VARIANT: the options' first steps, opt[nopt] = the end */
} hl_ctf_step_t;

typedef struct hl_ctf_plan_s {
    uint32_t nstep, nleaf, nmarker;
    int array1; /* one run of one array (heapledger's alloc/free/realloc `words`) */
    hl_ctf_step_t *step;
    hl_ctf_leaf_t *leaf;
    hl_ctf_marker_t *marker;
} hl_ctf_plan_t;

/* The plan of a scope's root (a struct), its memory from alloc(actx, bytes) (zeroed, never
 * NULL: the metadata arena); NULL when the scope has something a plan does not express
 * (strings, sequences, more than 8 options in a variant, more than 256 leaves or 64 steps, a
 * run longer than 128 MiB). */
hl_ctf_plan_t *hl_ctf_plan_compile(const hl_ctf_node_t *root, void *(*alloc)(void *, size_t),
                                   void *actx);
/* Write the markers into a value array used for this scope only, once before decoding. */
void hl_ctf_plan_init(const hl_ctf_plan_t *p, hl_ctf_val_t *v);
/* Decode one instance of the scope at c->pos into v (prepared by hl_ctf_plan_init): 0, or
 * -1 when it runs past c->end or a variant's tag selects no option (c->pos is then
 * meaningless). */
int hl_ctf_plan_run(const hl_ctf_plan_t *p, hl_ctf_cursor_t *c, hl_ctf_val_t *v);

/* ---- event headers ------------------------------------------------------------------- */

/* An event header of LTTng's shape: a run holding only the id (an unsigned integer), then a
 * variant on it whose options are each one run of unsigned integers, every one of them an
 * event id or clock-mapped (compact: {timestamp}; extended: {id, timestamp}). Decoded by
 * straight-line code that yields the id and updates the clock and writes no value. */
typedef struct hl_ctf_hdr_opt_s {
    uint16_t align;
    uint32_t need, bits;
    uint8_t has_id, has_ts;
    hl_ctf_leaf_t id, ts;
} hl_ctf_hdr_opt_t;

typedef struct hl_ctf_hdr_s {
    int large;      /* exactly LTTng's large header (below): the shortest straight line */
    uint16_t align; /* the first run: the id alone */
    uint32_t need, bits;
    hl_ctf_leaf_t tag;
    uint32_t nrange;
    const hl_ctf_range_t *range;
    hl_ctf_hdr_opt_t opt[8];
} hl_ctf_hdr_t;

/* The header shape of plan p (an event header's), whose id members are the slots ids[0..nid):
 * 0 and *h filled, or -1 when the header has another shape (the plan decodes it). */
int hl_ctf_plan_header(const hl_ctf_plan_t *p, const uint32_t *ids, uint32_t nid, hl_ctf_hdr_t *h);

/* ---- the bit reader both decoders use -------------------------------------------------- */

/* size (1..64) bits at bit pos of b, little-endian. */
static inline uint64_t hl_ctf_rd_bits(const uint8_t *b, uint64_t pos, unsigned size)
{
    const uint8_t *p = b + (pos >> 3);
    unsigned sh = (unsigned)(pos & 7);
    if (!sh) {
        switch (size) {
        case 8:
            return p[0];
        case 16: {
            uint16_t v;
            memcpy(&v, p, 2);
            return v;
        }
        case 32: {
            uint32_t v;
            memcpy(&v, p, 4);
            return v;
        }
        case 64: {
            uint64_t v;
            memcpy(&v, p, 8);
            return v;
        }
        default:
            break;
        }
    }
    unsigned nb = (sh + size + 7) / 8; /* <= 9 */
    unsigned __int128 x = 0;
    for (unsigned i = 0; i < nb; i++)
        x |= (unsigned __int128)p[i] << (8 * i);
    x >>= sh;
    return size == 64 ? (uint64_t)x : (uint64_t)x & ((UINT64_C(1) << size) - 1);
}

/* CTF's clock update: a value of fewer than 64 bits replaces the low bits of the clock,
 * and a smaller value than the clock's low bits means they wrapped around once. */
static inline void hl_ctf_update_clock(uint64_t *clock, uint64_t v, unsigned size)
{
    if (size >= 64) {
        *clock = v;
        return;
    }
    uint64_t mask = (UINT64_C(1) << size) - 1;
    if (v < (*clock & mask)) *clock += mask + 1;
    *clock = (*clock & ~mask) | v;
}

/* An unsigned integer leaf of a run whose start is at bit pos. */
static inline uint64_t hl_ctf_leaf_uint(const hl_ctf_leaf_t *l, const uint8_t *b, uint64_t pos)
{
    uint64_t x = 0;
    switch (l->op) { /* U8..U64: off in bytes, pos byte-aligned; INT: off in bits */
    case HL_LEAF_U8:
        return b[(pos >> 3) + l->off];
    case HL_LEAF_U16:
        memcpy(&x, b + (pos >> 3) + l->off, 2);
        return x;
    case HL_LEAF_U32:
        memcpy(&x, b + (pos >> 3) + l->off, 4);
        return x;
    case HL_LEAF_U64:
        memcpy(&x, b + (pos >> 3) + l->off, 8);
        return x;
    default:
        return hl_ctf_rd_bits(b, pos + l->off, l->size);
    }
}

/* An integer field's value of size bits as read (x), sign-extended when the field is signed;
 * the one rule of the plans and of the tree walk (ctf_stream.c). */
static inline uint64_t hl_ctf_int_value(uint64_t x, unsigned size, int is_signed)
{
    if (is_signed && size < 64 && (x >> (size - 1)) & 1) x |= ~((UINT64_C(1) << size) - 1);
    return x;
}

/* The leaves [l, le) of a run whose start is at bit pos (aligned, bounds checked). */
static inline void hl_ctf_run_leaves(const hl_ctf_leaf_t *l, const hl_ctf_leaf_t *le,
                                     hl_ctf_cursor_t *c, uint64_t pos, hl_ctf_val_t *v)
{
    for (; l < le; l++) {
        hl_ctf_val_t *o = &v[l->slot];
        uint64_t x;
        if (l->op <= HL_LEAF_INT) {
            x = hl_ctf_leaf_uint(l, c->b, pos);
            if (l->clock && c->clock) hl_ctf_update_clock(c->clock, x, l->size);
            o->u = hl_ctf_int_value(x, l->size, l->is_signed);
            o->kind = HL_CTF_INT;
            o->gen = c->gen;
            continue;
        }
        const uint8_t *p = c->b + (pos >> 3) + l->off; /* byte-aligned */
        o->p = p;
        o->n = l->len;
        o->esize = l->esize;
        o->is_signed = l->is_signed;
        o->kind = HL_CTF_ARRAY;
        o->gen = c->gen;
        if (l->op == HL_LEAF_TEXT) {
            const uint8_t *z = memchr(p, 0, l->len);
            if (z) o->n = (uint32_t)(z - p);
            o->kind = HL_CTF_STRING;
        }
    }
}

/* The leaves of a plan of one run (out of line: keeps hl_ctf_plan_dec small). */
void hl_ctf_plan_leaves(const hl_ctf_plan_t *p, hl_ctf_cursor_t *c, uint64_t pos, hl_ctf_val_t *v);

/* A scope by its plan: a plan of one run inline, any other by hl_ctf_plan_run. */
static inline __attribute__((always_inline)) int
hl_ctf_plan_dec(const hl_ctf_plan_t *p, hl_ctf_cursor_t *c, hl_ctf_val_t *v)
{
    if (p->nstep != 1) return hl_ctf_plan_run(p, c, v);
    const hl_ctf_step_t *s = p->step; /* a run: a variant has options after it */
    uint64_t a = s->align;
    uint64_t pos = (c->pos + a - 1) & ~(a - 1);
    if (s->need != UINT32_MAX && (pos > c->end || c->end - pos < s->need)) return -1;
    if (p->array1) { /* the straight line of heapledger's own events */
        const hl_ctf_leaf_t *l = p->leaf;
        hl_ctf_val_t *o = &v[l->slot];
        o->p = c->b + (pos >> 3) + l->off;
        o->n = l->len;
        o->esize = l->esize;
        o->is_signed = l->is_signed;
        o->kind = HL_CTF_ARRAY;
        o->gen = c->gen;
    } else {
        hl_ctf_plan_leaves(p, c, pos, v);
    }
    c->pos = pos + s->bits;
    return 0;
}

/* Decode an event header of LTTng's shape at c->pos: 0 with the event id in *id, -1 when it
 * runs past c->end or its id selects no option. The same checks, clock updates and id as
 * the plan or the tree walk of the header. */
static inline __attribute__((always_inline)) int hl_ctf_hdr_run(const hl_ctf_hdr_t *h,
                                                                hl_ctf_cursor_t *c, uint64_t *id)
{
    if (h->large) { /* 16-bit id; compact: 32-bit time (6 bytes); extended: 32-bit id, 64-bit time
                       (14 bytes), at byte offsets (the struct is byte-aligned) */
        uint64_t pos = (c->pos + 7) & ~UINT64_C(7);
        if (pos > c->end || c->end - pos < 48) return -1;
        const uint8_t *p = c->b + (pos >> 3);
        uint64_t x = 0;
        memcpy(&x, p, 2);
        if (x != 65535) {
            uint64_t t = 0;
            memcpy(&t, p + 2, 4);
            if (c->clock) hl_ctf_update_clock(c->clock, t, 32);
            c->pos = pos + 48;
            *id = x;
            return 0;
        }
        if (c->end - pos < 112) return -1;
        memcpy(&x, p + 2, 4);
        if (c->clock) memcpy(c->clock, p + 6, 8);
        c->pos = pos + 112;
        *id = x;
        return 0;
    }
    uint64_t a = h->align;
    uint64_t pos = (c->pos + a - 1) & ~(a - 1);
    if (pos > c->end || c->end - pos < h->need) return -1;
    uint64_t t = hl_ctf_leaf_uint(&h->tag, c->b, pos);
    pos += h->bits;
    const hl_ctf_hdr_opt_t *o = NULL;
    if ((int64_t)t >= h->range[0].lo && (int64_t)t <= h->range[0].hi) /* mostly compact */
        o = &h->opt[h->range[0].child];
    else
        for (uint32_t r = 1; r < h->nrange; r++)
            if ((int64_t)t >= h->range[r].lo && (int64_t)t <= h->range[r].hi) {
                o = &h->opt[h->range[r].child];
                break;
            }
    if (!o) return -1;
    a = o->align;
    pos = (pos + a - 1) & ~(a - 1);
    if (o->need != UINT32_MAX && (pos > c->end || c->end - pos < o->need)) return -1;
    if (o->has_id) t = hl_ctf_leaf_uint(&o->id, c->b, pos);
    if (o->has_ts && c->clock)
        hl_ctf_update_clock(c->clock, hl_ctf_leaf_uint(&o->ts, c->b, pos), o->ts.size);
    c->pos = pos + o->bits;
    *id = t;
    return 0;
}

#endif
