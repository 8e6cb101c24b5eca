/* schemas/hl_blockfmt.h — the packed block row of schema version 4 (schemas/heapledger.sql,
 * tables block_data, block_seg and block_wide; docs/schema.md "block"). Shared by the writer
 * (tracer/ingest_store.c) and the direct reader (analyzer/blockreader.c); the view `block`
 * and its INSERT trigger are the same rules in SQL, and they must stay the same choices.
 *
 * A block row (the 21 columns of the view, hl_bv_t) is stored against the bases of its
 * segment (ids seg << 11 to (seg << 11) + 2047; block_seg: pid, ptr, alloc_ts and
 * alloc_seq - 2 * id of the first row of the segment that was stored), as the block_data
 * columns, in order (id is the rowid):
 *   dptr = ptr - seg.ptr        kind = flags | tier << 4 | (class + 1) << 6 | alloc_path << 12
 *          | free_path << 18 | pack2(zz(usable - size), size) << 24
 *   ats = alloc_ts - seg.ts     cyc = pack2(alloc_cycles + 1, free_cycles + 1)
 *   stk = pack2(alloc_stack, free_stack)                fr = pack2(free_seq - alloc_seq,
 *          free_ts - alloc_ts), NULL when live
 *   misc = pack2(zz(alloc_seq - 2 * id - seg.seq), pack2(zz(alloc_tid - pid),
 *          pack2(zz(pid - seg.pid), pack2(zz(free_tid - alloc_tid), id - prev_block))))
 * with a NULL path, cycle count, stack or prev_block as 0 (free_tid - alloc_tid 0 when live).
 * pack2(x, y) = L | x << 5 | y << (5 + L) with L the bit length of x; zz(v) = 2v for v >= 0,
 * -2v - 1 below. Every difference must be exact in 64 bits and every packed value in range
 * (hl_bf_encode); a row that is not is stored whole in block_wide, and its block_data row has
 * only NULLs (kind NULL is the mark). Version 3 had size, aseq and atid in columns of their
 * own: each column costs SQLite a bind, two register copies and its part of the record for
 * every row (docs/PERFORMANCE.md, "Schema version 4").
 */
#ifndef HL_BLOCKFMT_H
#define HL_BLOCKFMT_H

#include <stdint.h>

/* block_data's columns after the rowid. */
enum { HL_BF_DPTR, HL_BF_KIND, HL_BF_ATS, HL_BF_CYC, HL_BF_STK, HL_BF_FR, HL_BF_MISC, HL_BF_NCOLS };

/* The columns of the view `block` (and of block_wide), in their order. */
enum {
    HL_BV_ID,
    HL_BV_PID,
    HL_BV_PTR,
    HL_BV_SIZE,
    HL_BV_USABLE,
    HL_BV_TIER,
    HL_BV_CLASS,
    HL_BV_ALLOC_SEQ,
    HL_BV_ALLOC_TS,
    HL_BV_ALLOC_TID,
    HL_BV_ALLOC_PATH,
    HL_BV_ALLOC_CYCLES,
    HL_BV_ALLOC_STACK,
    HL_BV_FREE_SEQ,
    HL_BV_FREE_TS,
    HL_BV_FREE_TID,
    HL_BV_FREE_PATH,
    HL_BV_FREE_CYCLES,
    HL_BV_FREE_STACK,
    HL_BV_PREV_BLOCK,
    HL_BV_FLAGS,
    HL_BV_NCOLS
};

/* A row of the view: v[HL_BV_*], and bit i of null set when column i is NULL. */
typedef struct hl_bv_s {
    int64_t v[HL_BV_NCOLS];
    uint32_t null;
} hl_bv_t;

/* One row of block_seg. */
typedef struct hl_bf_seg_s {
    int64_t pid, ptr, ts, seq;
} hl_bf_seg_t;

#define HL_BF_SEG_SHIFT   11
#define HL_BF_TIER_SHIFT  4
#define HL_BF_CLASS_SHIFT 6
#define HL_BF_APATH_SHIFT 12
#define HL_BF_FPATH_SHIFT 18
#define HL_BF_SIZE_SHIFT  24
#define HL_BF_FLAGS_MASK  15
#define HL_BF_TIER_MASK   3
#define HL_BF_FIELD_MASK  63 /* class + 1, alloc_path, free_path */
/* pack2(zz(usable - size), size) << 24 stays below 2^63: below 2^39. */
#define HL_BF_SIZE_BITS 39

/* Wrapping arithmetic on int64 values (a hostile database may hold any of them). */
static inline int64_t hl_bf_add(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

static inline int64_t hl_bf_sub(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

/* x >> n as SQLite computes it: an arithmetic shift (n < 64; GNU C's >> on a negative
 * signed value is one, documented). */
static inline int64_t hl_bf_sar(int64_t x, unsigned n)
{
    return x >> n;
}

/* The segment of a block id (SQLite's id >> 11). */
static inline int64_t hl_bf_seg_of(int64_t id)
{
    return hl_bf_sar(id, HL_BF_SEG_SHIFT);
}

static inline int hl_bf_bitlen(uint64_t x)
{
    return x ? 64 - __builtin_clzll(x) : 0;
}

/* pack2's parts as the view computes them (any stored value, even a hostile one). */
static inline int64_t hl_bf_px(int64_t v)
{
    unsigned l = (unsigned)(v & 31);
    return hl_bf_sar(v, 5) & (int64_t)((1ull << l) - 1);
}

static inline int64_t hl_bf_py(int64_t v)
{
    return hl_bf_sar(v, 5 + (unsigned)(v & 31));
}

/* pack2(x, y) into *out; 0 when it does not fit (x < 2^31, y < 2^(58 - L), both >= 0). */
static inline __attribute__((always_inline)) int hl_bf_pack2(int64_t x, int64_t y, int64_t *out)
{
    if (x < 0 || y < 0 || x > 2147483647) return 0;
    int l = hl_bf_bitlen((uint64_t)x);
    if (y >= (int64_t)1 << (58 - l)) return 0;
    *out = (int64_t)((uint64_t)l | (uint64_t)x << 5 | (uint64_t)y << (5 + l));
    return 1;
}

/* zz(v) for |v| small enough for pack2's first half; 0 when it is not. */
static inline __attribute__((always_inline)) int hl_bf_zz(int64_t v, int64_t *out)
{
    if (v < -1073741824 || v > 1073741823) return 0;
    *out = v < 0 ? -2 * v - 1 : 2 * v;
    return 1;
}

static inline int64_t hl_bf_unzz(int64_t z)
{
    return z & 1 ? -1 - hl_bf_sar(z, 1) : hl_bf_sar(z, 1);
}

#define HL_BV_NUL(r, i) (((r)->null >> (i)) & 1)

/* The segment base a row makes when it is the first of its segment: 0 when it cannot (the
 * trigger's condition: alloc_seq - 2 * id exact). */
static inline int hl_bf_seg_from(const hl_bv_t *r, hl_bf_seg_t *s)
{
    int64_t two_id;
    if (HL_BV_NUL(r, HL_BV_PID) || HL_BV_NUL(r, HL_BV_PTR) || HL_BV_NUL(r, HL_BV_ALLOC_TS) ||
        HL_BV_NUL(r, HL_BV_ALLOC_SEQ) || __builtin_mul_overflow(r->v[HL_BV_ID], 2, &two_id) ||
        __builtin_sub_overflow(r->v[HL_BV_ALLOC_SEQ], two_id, &s->seq))
        return 0;
    s->pid = r->v[HL_BV_PID];
    s->ptr = r->v[HL_BV_PTR];
    s->ts = r->v[HL_BV_ALLOC_TS];
    return 1;
}

/* Encode r against its segment's base s into c[HL_BF_NCOLS] (*fr_null: fr is NULL). Returns
 * 0 when the row does not fit and goes to block_wide: the same conditions as the trigger
 * block_insert in schemas/heapledger.sql. */
static inline int hl_bf_encode(const hl_bv_t *r, const hl_bf_seg_t *s, int64_t *c, int *fr_null)
{
    const int64_t *v = r->v;
#define NUL(i) HL_BV_NUL(r, i)
    if (NUL(HL_BV_PID) || NUL(HL_BV_PTR) || NUL(HL_BV_SIZE) || NUL(HL_BV_USABLE) ||
        NUL(HL_BV_ALLOC_SEQ) || NUL(HL_BV_ALLOC_TS) || NUL(HL_BV_ALLOC_TID) || NUL(HL_BV_TIER) ||
        NUL(HL_BV_CLASS))
        return 0;
    int64_t flags = NUL(HL_BV_FLAGS) ? 0 : v[HL_BV_FLAGS]; /* NULL is 0, as in version 2 */
    if (v[HL_BV_TIER] < 0 || v[HL_BV_TIER] > 3 || v[HL_BV_CLASS] < -1 || v[HL_BV_CLASS] > 62 ||
        flags < 0 || flags > 15)
        return 0;
    int live = NUL(HL_BV_FREE_SEQ);
    int64_t ap = NUL(HL_BV_ALLOC_PATH) ? 0 : v[HL_BV_ALLOC_PATH];
    int64_t fp = NUL(HL_BV_FREE_PATH) ? 0 : v[HL_BV_FREE_PATH];
    if ((!NUL(HL_BV_ALLOC_PATH) && (ap < 1 || ap > 63)) ||
        (!NUL(HL_BV_FREE_PATH) && (fp < 1 || fp > 63 || live)))
        return 0;
    int64_t ca = 0, cf = 0, sa = 0, sf = 0;
    if (!NUL(HL_BV_ALLOC_CYCLES)) {
        if (v[HL_BV_ALLOC_CYCLES] < 0 || v[HL_BV_ALLOC_CYCLES] > 2147483646) return 0;
        ca = v[HL_BV_ALLOC_CYCLES] + 1;
    }
    if (!NUL(HL_BV_FREE_CYCLES)) {
        if (v[HL_BV_FREE_CYCLES] < 0 || v[HL_BV_FREE_CYCLES] >= (int64_t)1 << 62) return 0;
        cf = v[HL_BV_FREE_CYCLES] + 1;
    }
    if (!NUL(HL_BV_ALLOC_STACK)) {
        if (v[HL_BV_ALLOC_STACK] < 1 || v[HL_BV_ALLOC_STACK] > 2147483647) return 0;
        sa = v[HL_BV_ALLOC_STACK];
    }
    if (!NUL(HL_BV_FREE_STACK)) {
        if (v[HL_BV_FREE_STACK] < 1) return 0;
        sf = v[HL_BV_FREE_STACK];
    }
    if (live ? !NUL(HL_BV_FREE_TS) || !NUL(HL_BV_FREE_TID)
             : NUL(HL_BV_FREE_TS) || NUL(HL_BV_FREE_TID))
        return 0;
    int64_t du, two_id, aseq, atid, dpid, fseq = 0, fts = 0, ftid = 0, dprev = 0;
    if (__builtin_sub_overflow(v[HL_BV_PTR], s->ptr, &c[HL_BF_DPTR]) ||
        __builtin_sub_overflow(v[HL_BV_USABLE], v[HL_BV_SIZE], &du) ||
        __builtin_mul_overflow(v[HL_BV_ID], 2, &two_id) ||
        __builtin_sub_overflow(v[HL_BV_ALLOC_SEQ], two_id, &aseq) ||
        __builtin_sub_overflow(aseq, s->seq, &aseq) ||
        __builtin_sub_overflow(v[HL_BV_ALLOC_TS], s->ts, &c[HL_BF_ATS]) ||
        __builtin_sub_overflow(v[HL_BV_ALLOC_TID], v[HL_BV_PID], &atid) ||
        __builtin_sub_overflow(v[HL_BV_PID], s->pid, &dpid))
        return 0;
    if (!live && (__builtin_sub_overflow(v[HL_BV_FREE_SEQ], v[HL_BV_ALLOC_SEQ], &fseq) ||
                  __builtin_sub_overflow(v[HL_BV_FREE_TS], v[HL_BV_ALLOC_TS], &fts) ||
                  __builtin_sub_overflow(v[HL_BV_FREE_TID], v[HL_BV_ALLOC_TID], &ftid)))
        return 0;
    if (!NUL(HL_BV_PREV_BLOCK) &&
        (__builtin_sub_overflow(v[HL_BV_ID], v[HL_BV_PREV_BLOCK], &dprev) || dprev < 1))
        return 0;
    int64_t zdu, za, zt, zp, zf, ks, m1, m2, m3;
    if (fseq < 0 || fseq > 2147483647 || fts < 0 || !hl_bf_zz(du, &zdu) || !hl_bf_zz(aseq, &za) ||
        !hl_bf_zz(atid, &zt) || !hl_bf_zz(dpid, &zp) || !hl_bf_zz(ftid, &zf))
        return 0;
    if (!hl_bf_pack2(zdu, v[HL_BV_SIZE], &ks) || ks >= (int64_t)1 << HL_BF_SIZE_BITS) return 0;
    c[HL_BF_KIND] = (int64_t)((uint64_t)flags | (uint64_t)v[HL_BV_TIER] << HL_BF_TIER_SHIFT |
                              (uint64_t)(v[HL_BV_CLASS] + 1) << HL_BF_CLASS_SHIFT |
                              (uint64_t)ap << HL_BF_APATH_SHIFT |
                              (uint64_t)fp << HL_BF_FPATH_SHIFT | (uint64_t)ks << HL_BF_SIZE_SHIFT);
    if (!hl_bf_pack2(ca, cf, &c[HL_BF_CYC]) || !hl_bf_pack2(sa, sf, &c[HL_BF_STK]) ||
        !hl_bf_pack2(fseq, fts, &c[HL_BF_FR]) || !hl_bf_pack2(zf, dprev, &m3) ||
        !hl_bf_pack2(zp, m3, &m2) || !hl_bf_pack2(zt, m2, &m1) ||
        !hl_bf_pack2(za, m1, &c[HL_BF_MISC]))
        return 0;
    *fr_null = live;
#undef NUL
    return 1;
}

/* Decode a packed block_data row (rowid id, columns c, fr NULL when fr_null) against its
 * segment's base into the view's columns, as the view computes them (wrapping where SQLite
 * would make a real of an overflow: only a hostile row overflows). */
static inline void hl_bf_decode(int64_t id, const int64_t *c, int fr_null, const hl_bf_seg_t *s,
                                hl_bv_t *r)
{
    int64_t *v = r->v, kind = c[HL_BF_KIND], ks = hl_bf_sar(kind, HL_BF_SIZE_SHIFT);
    int64_t m1 = hl_bf_py(c[HL_BF_MISC]), m2 = hl_bf_py(m1), m3 = hl_bf_py(m2);
    int64_t pid = hl_bf_add(s->pid, hl_bf_unzz(hl_bf_px(m2)));
    int64_t aseq =
        hl_bf_add(hl_bf_add(id, id), hl_bf_add(s->seq, hl_bf_unzz(hl_bf_px(c[HL_BF_MISC]))));
    int64_t ats = hl_bf_add(s->ts, c[HL_BF_ATS]), atid = hl_bf_add(pid, hl_bf_unzz(hl_bf_px(m1)));
    int64_t size = hl_bf_py(ks), x;
    r->null = 0;
    v[HL_BV_ID] = id;
    v[HL_BV_PID] = pid;
    v[HL_BV_PTR] = hl_bf_add(s->ptr, c[HL_BF_DPTR]);
    v[HL_BV_SIZE] = size;
    v[HL_BV_USABLE] = hl_bf_add(size, hl_bf_unzz(hl_bf_px(ks)));
    v[HL_BV_TIER] = hl_bf_sar(kind, HL_BF_TIER_SHIFT) & HL_BF_TIER_MASK;
    v[HL_BV_CLASS] = (hl_bf_sar(kind, HL_BF_CLASS_SHIFT) & HL_BF_FIELD_MASK) - 1;
    v[HL_BV_ALLOC_SEQ] = aseq;
    v[HL_BV_ALLOC_TS] = ats;
    v[HL_BV_ALLOC_TID] = atid;
    if (!(v[HL_BV_ALLOC_PATH] = hl_bf_sar(kind, HL_BF_APATH_SHIFT) & HL_BF_FIELD_MASK))
        r->null |= 1u << HL_BV_ALLOC_PATH;
    if ((x = hl_bf_px(c[HL_BF_CYC])) == 0) r->null |= 1u << HL_BV_ALLOC_CYCLES;
    v[HL_BV_ALLOC_CYCLES] = hl_bf_sub(x, 1);
    if ((v[HL_BV_ALLOC_STACK] = hl_bf_px(c[HL_BF_STK])) == 0) r->null |= 1u << HL_BV_ALLOC_STACK;
    if (fr_null) {
        r->null |= 1u << HL_BV_FREE_SEQ | 1u << HL_BV_FREE_TS | 1u << HL_BV_FREE_TID |
                   1u << HL_BV_FREE_PATH;
    } else {
        v[HL_BV_FREE_SEQ] = hl_bf_add(aseq, hl_bf_px(c[HL_BF_FR]));
        v[HL_BV_FREE_TS] = hl_bf_add(ats, hl_bf_py(c[HL_BF_FR]));
        v[HL_BV_FREE_TID] = hl_bf_add(atid, hl_bf_unzz(hl_bf_px(m3)));
        if (!(v[HL_BV_FREE_PATH] = hl_bf_sar(kind, HL_BF_FPATH_SHIFT) & HL_BF_FIELD_MASK))
            r->null |= 1u << HL_BV_FREE_PATH;
    }
    if ((x = hl_bf_py(c[HL_BF_CYC])) == 0) r->null |= 1u << HL_BV_FREE_CYCLES;
    v[HL_BV_FREE_CYCLES] = hl_bf_sub(x, 1);
    if ((v[HL_BV_FREE_STACK] = hl_bf_py(c[HL_BF_STK])) == 0) r->null |= 1u << HL_BV_FREE_STACK;
    if ((x = hl_bf_py(m3)) == 0) r->null |= 1u << HL_BV_PREV_BLOCK;
    v[HL_BV_PREV_BLOCK] = hl_bf_sub(id, x);
    v[HL_BV_FLAGS] = kind & HL_BF_FLAGS_MASK;
}

#endif
