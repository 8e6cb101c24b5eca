/* schemas/hl_blockfmt.h — the packed block row of schema version 2 (schemas/heapledger.sql,
 * table block_data; docs/schema.md "block"). Shared by the writer (tracer/ingest_store.c)
 * and the direct reader (analyzer/blockreader.c); the view `block` and its triggers are the
 * same rules in SQL.
 *
 * block_data columns, in order (id is the rowid):
 *   dpid = pid - base.pid          dptr = ptr - base.ptr        size
 *   kind = flags | tier << 4 | (class + 1) << 6 | alloc_path << 12 | free_path << 18
 *          | (usable - size) << 24
 *   aseq = alloc_seq - 2 * id      ats = alloc_ts - base.ts     atid = alloc_tid - pid
 *   acyc = alloc_cycles            astack = alloc_stack
 *   fseq = free_seq - alloc_seq    fts = free_ts - alloc_ts     ftid = free_tid - alloc_tid
 *   fcyc = free_cycles             fstack = free_stack          dprev = id - prev_block
 * base is the one row of block_base. A path 0 stands for NULL; fseq NULL: live at the end.
 * Differences are computed modulo 2^64 (SQLite reads them as signed 64-bit integers).
 */
#ifndef HL_BLOCKFMT_H
#define HL_BLOCKFMT_H

#include <stdint.h>

enum {
    HL_BF_DPID,
    HL_BF_DPTR,
    HL_BF_SIZE,
    HL_BF_KIND,
    HL_BF_ASEQ,
    HL_BF_ATS,
    HL_BF_ATID,
    HL_BF_ACYC,
    HL_BF_ASTACK,
    HL_BF_FSEQ,
    HL_BF_FTS,
    HL_BF_FTID,
    HL_BF_FCYC,
    HL_BF_FSTACK,
    HL_BF_DPREV,
    HL_BF_NCOLS /* columns after the rowid */
};

#define HL_BF_TIER_SHIFT   4
#define HL_BF_CLASS_SHIFT  6
#define HL_BF_APATH_SHIFT  12
#define HL_BF_FPATH_SHIFT  18
#define HL_BF_USABLE_SHIFT 24
#define HL_BF_FLAGS_MASK   15
#define HL_BF_TIER_MASK    3
#define HL_BF_FIELD_MASK   63 /* class + 1, alloc_path, free_path */

/* Wrapping arithmetic on int64 values (a hostile database may hold any of them). */
static inline int64_t hl_bf_add(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a + (uint64_t)b);
}

static inline int64_t hl_bf_sub(int64_t a, int64_t b)
{
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

static inline int64_t hl_bf_kind(int flags, int tier, int cls, int alloc_path, int free_path,
                                 int64_t usable_minus_size)
{
    return (int64_t)((uint64_t)(flags & HL_BF_FLAGS_MASK) |
                     (uint64_t)(tier & HL_BF_TIER_MASK) << HL_BF_TIER_SHIFT |
                     (uint64_t)((cls + 1) & HL_BF_FIELD_MASK) << HL_BF_CLASS_SHIFT |
                     (uint64_t)(alloc_path & HL_BF_FIELD_MASK) << HL_BF_APATH_SHIFT |
                     (uint64_t)(free_path & HL_BF_FIELD_MASK) << HL_BF_FPATH_SHIFT |
                     (uint64_t)usable_minus_size << HL_BF_USABLE_SHIFT);
}

/* kind >> 24 as SQLite computes it: an arithmetic shift. */
static inline int64_t hl_bf_kind_usable_delta(int64_t kind)
{
    return kind < 0 ? -(int64_t)((~(uint64_t)kind) >> HL_BF_USABLE_SHIFT) - 1
                    : kind >> HL_BF_USABLE_SHIFT;
}

#endif
