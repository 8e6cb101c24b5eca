#!/usr/bin/env python3
"""tests/bench/block_row_size.py DB [ROWS] [AFTER_ID] — what block_data's rows would cost in
other layouts (docs/PERFORMANCE.md, "Database size"), computed from the rows of a run
database with SQLite's record format: per row the cell (payload length and rowid varints,
the record header: its length, a NULL for the rowid alias id and one serial type per
column, the body) plus its 2-byte cell pointer; the file estimate fills 4,088 of every
4,096-byte page. Reads ROWS rows (default all) with ids above AFTER_ID (default 0).

Layouts: v2 (schema version 2, as stored); segN: ats from the alloc_ts of the first row of
each 2^N ids instead of the first block; pairs: (acyc, fcyc) and (astack, fstack) each one
integer (pack2: a 5-bit bit length of the first, then the first, then the second; NULL as
0, cycles + 1); +tids: dpid, atid, ftid one integer (zigzag, pack2 twice); v3 (schema version 3, schemas/hl_blockfmt.h): dptr, ats, aseq and the
pid from the bases of each 2,048 ids, (acyc, fcyc), (astack, fstack), (fseq, fts) paired, (dpid,
ftid, dprev) in one integer: ten columns; and three variants of it. The rows are read
through the view `block`, so a database of schema version 2 or 3 will do (the segment bases
here: the first row of each segment in id order; the ingest takes the first one it stores,
which can differ)."""
import sqlite3
import sys


def serial_size(v):
    if v is None or v in (0, 1):
        return 0
    a = v if v >= 0 else -v - 1
    for bits, size in ((7, 1), (15, 2), (23, 3), (31, 4), (47, 6)):
        if a < 1 << bits:
            return size
    return 8


def varint_len(v):
    n = 1
    while v >= 128 and n < 9:
        v >>= 7
        n += 1
    return n


def cell(rowid, vals):
    payload = 1 + 1 + len(vals) + sum(serial_size(v) for v in vals)
    return varint_len(payload) + varint_len(rowid) + payload + 2


def pack2(x, y):
    if x is None or y is None or x < 0 or y < 0:
        return None
    n = x.bit_length()
    if n > 31 or 5 + n + y.bit_length() > 63:
        return None
    return n | x << 5 | y << (5 + n)


def zigzag(v):
    return None if v is None else (v << 1) ^ (v >> 63)


def nul0(v):
    return 0 if v is None else v + 1


def main():
    db = sqlite3.connect(sys.argv[1])
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else None
    after = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    # The rows through the view `block` (any schema version from 2), as version 2 stored them:
    # differences from the first block row.
    q = ("SELECT id, pid, ptr, size, usable, tier, class, alloc_seq, alloc_ts, alloc_tid, "
         "alloc_path, alloc_cycles, alloc_stack, free_seq, free_ts, free_tid, free_path, "
         "free_cycles, free_stack, prev_block, flags FROM block WHERE id > ? ORDER BY id")
    if limit:
        q += " LIMIT %d" % limit
    b0 = db.execute("SELECT pid, ptr, alloc_ts FROM block ORDER BY id LIMIT 1").fetchone()
    tot, base, n, segbase = {}, {}, 0, {}
    for (rid, pid, ptr, size, usable, tier, cls, aseq_, ats_, atid_, apath, acyc, astack, fseq_,
         fts_, ftid_, fpath, fcyc, fstack, prev, flags) in db.execute(q, (after,)):
        dpid, dptr, ats, atid = pid - b0[0], ptr - b0[1], ats_ - b0[2], atid_ - pid
        kind = (flags | tier << 4 | (cls + 1) << 6 | (apath or 0) << 12 | (fpath or 0) << 18
                | (usable - size) << 24)
        aseq = aseq_ - 2 * rid
        fseq = None if fseq_ is None else fseq_ - aseq_
        fts = None if fts_ is None else fts_ - ats_
        ftid = None if ftid_ is None else ftid_ - atid_
        dprev = None if prev is None else rid - prev
        row = (rid, dpid, dptr, size, kind, aseq, ats, atid, acyc, astack, fseq, fts, ftid, fcyc,
               fstack, dprev)
        n += 1
        seg = {}
        for b in (11, 13, 16):
            seg[b] = ats - base.setdefault((b, rid >> b), ats)
        cyc = pack2(nul0(acyc), nul0(fcyc))
        stk = pack2(astack or 0, fstack or 0)
        tids = pack2(zigzag(dpid), pack2(zigzag(atid), zigzag(ftid) if ftid is not None else 0))
        sb = segbase.setdefault(rid >> 11, (dpid, dptr, ats, aseq))
        sdpid, sdptr, sats, saseq = dpid - sb[0], dptr - sb[1], ats - sb[2], aseq - sb[3]
        fr = None if fseq is None else pack2(fseq, fts)
        m3 = pack2(zigzag(ftid) if ftid is not None else 0, dprev or 0)
        misc = pack2(zigzag(sdpid), pack2(zigzag(atid), m3))
        misc_b = pack2(zigzag(sdpid), m3)
        layouts = {
            "v2": row[1:],
            "seg11": (dpid, dptr, size, kind, aseq, seg[11], atid, acyc, astack, fseq, fts, ftid,
                      fcyc, fstack, dprev),
            "seg13": (dpid, dptr, size, kind, aseq, seg[13], atid, acyc, astack, fseq, fts, ftid,
                      fcyc, fstack, dprev),
            "seg16": (dpid, dptr, size, kind, aseq, seg[16], atid, acyc, astack, fseq, fts, ftid,
                      fcyc, fstack, dprev),
            "pairs": (dpid, dptr, size, kind, aseq, ats, atid, cyc, stk, fseq, fts, ftid, dprev),
            "seg11+pairs": (dpid, dptr, size, kind, aseq, seg[11], atid, cyc, stk, fseq, fts, ftid,
                            dprev),
            "seg11+pairs+tids": (tids, dptr, size, kind, aseq, seg[11], cyc, stk, fseq, fts, dprev),
            "v3a (misc with atid)": (sdptr, size, kind, saseq, sats, cyc, stk, fr, misc),
            "v3 (schema 3)": (sdptr, size, kind, saseq, sats, atid, cyc, stk, fr, misc_b),
            "v3, dptr from block 1": (dptr, size, kind, saseq, sats, cyc, stk, fr, misc),
            "v3, aseq not by seg": (sdptr, size, kind, aseq, sats, cyc, stk, fr, misc),
        }
        for k, v in layouts.items():
            tot[k] = tot.get(k, 0) + cell(rid, v)
    for k, v in tot.items():
        print("%-24s %6.2f B/row  %8.1f MB (file estimate)" % (k, v / n, v / 4088.0 * 4096 / 1e6))
    print(n, "rows")


if __name__ == "__main__":
    main()
