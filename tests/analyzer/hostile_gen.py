#!/usr/bin/env python3
"""tests/analyzer/hostile_gen.py OUTDIR SCHEMA.sql INDEX.sql KERNEL_VIEWS.sql BASIC.sql KERNEL.sql
    LEAKCLASS.sql

Writes the fuzz corpus of hostile run databases (tests/analyzer/hostile_test.sh runs the
analyzer on each): each case is tests/analyzer/basic.sql (or kernel.sql) with one kind of
damage that a database the analyzer did not write may hold — sizes and timestamps at the ends
of the integer range or out of order, ids that point nowhere, control characters and bytes
that are not UTF-8 in every recorded string, b-tree records whose column widths disagree
with their payload, a truncated file. Deterministic: the same files every run (the
environment's HL_HOSTILE_SEED and HL_HOSTILE_RANDOM make other random cases). The leak_*
cases are tests/analyzer/leakclass.sql (a leak scan's classes) with damaged block rows: the
leak classes counted in the pass must be SQLite's (hostile_test.sh compares them).
"""
import os
import random
import sqlite3
import struct
import sys

out, schema, index, kviews, basic, kernel, leakclass = sys.argv[1:8]
os.makedirs(out, exist_ok=True)
SQL = {p: open(p).read() for p in (schema, index, kviews, basic, kernel, leakclass)}
MAX, MIN = 2**63 - 1, -2**63

# Strings that would drive a terminal or break JSON: CSI, OSC (window title) with BEL, a C1
# CSI, DEL, bidi override, backspaces, stray continuation bytes, an overlong '/', a UTF-16
# surrogate, a truncated sequence, 0xfe/0xff.
EVIL = ("X'1b5b33316d' || 'red' || X'1b5d303b70776e6564' || X'07' || X'c29b32' || 'J' || "
        "X'7f' || X'e280ae' || 'txt' || X'0808' || X'80bf' || X'c0af' || X'eda080' || X'e282' "
        "|| X'fffe'")
EVIL_TEXT = "CAST(" + EVIL + " AS TEXT)"


def make(name, body, damage=None, kernel_db=False, base=None):
    path = os.path.join(out, name + ".db")
    for p in (path, path + "-journal", path + "-wal"):
        if os.path.exists(p):
            os.remove(p)
    db = sqlite3.connect(path)
    script = SQL[schema]
    if kernel_db:
        script += SQL[kviews]
    script += SQL[base or (kernel if kernel_db else basic)] + "\n" + body + "\n" + SQL[index]
    db.executescript(script)
    db.commit()
    db.close()
    if damage:
        damage(path)
    return path


def block_record_offsets(path):
    """(file offset of the record header, header size, record length) of each block row
    stored on the root page of block_data (the table under the view block since schema
    version 2; a leaf for these small tables)."""
    db = sqlite3.connect(path)
    root = db.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'block_data'").fetchone()[0]
    psize = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    data = open(path, "rb").read()
    pg = (root - 1) * psize
    assert data[pg] == 0x0D, "the block table fits on one leaf page"
    ncell = struct.unpack(">H", data[pg + 3:pg + 5])[0]
    cells = []
    for i in range(ncell):
        off = pg + struct.unpack(">H", data[pg + 8 + 2 * i:pg + 10 + 2 * i])[0]
        size, k = varint(data, off)
        _, k2 = varint(data, off + k)
        rec = off + k + k2
        hsize, _ = varint(data, rec)
        cells.append((rec, hsize, size))
    return cells


def varint(b, at):
    v = 0
    for i in range(9):
        c = b[at + i]
        if i == 8:
            return (v << 8) | c, 9
        v = (v << 7) | (c & 0x7F)
        if not c & 0x80:
            return v, i + 1


def retype(frm, to, row=1):
    """Change the first serial type frm in the header of the row-th block record to to: the
    header then describes one byte more or less than the record holds."""
    def damage(path):
        cells = block_record_offsets(path)
        rec, hsize, _ = cells[row]
        data = bytearray(open(path, "rb").read())
        for i in range(rec + 1, rec + hsize):
            if data[i] == frm:
                data[i] = to
                break
        else:
            raise SystemExit("hostile_gen: no serial type %d in the record" % frm)
        open(path, "wb").write(bytes(data))
    return damage


def truncate(frac):
    def damage(path):
        n = os.path.getsize(path)
        with open(path, "r+b") as f:
            f.truncate(int(n * frac) // 512 * 512 + 100)
    return damage


make("control_chars", f"""
UPDATE run SET command = {EVIL_TEXT}, options = {EVIL_TEXT}, host = {EVIL_TEXT},
               version = {EVIL_TEXT};
UPDATE process SET procname = {EVIL_TEXT}, options = {EVIL_TEXT};
UPDATE thread SET name = {EVIL_TEXT};
UPDATE frame SET function = {EVIL_TEXT} || depth, file = {EVIL_TEXT}, module = {EVIL_TEXT};
UPDATE error SET kind = {EVIL_TEXT}, details = {EVIL_TEXT};
UPDATE os_region SET purpose = {EVIL_TEXT} WHERE seq = 2;
""")

make("huge_sizes", f"""
UPDATE block SET size = {MAX}, usable = {MAX} WHERE id = 1;
UPDATE block SET size = -1, usable = -1 WHERE id = 2;
UPDATE block SET size = {MIN}, usable = 0, ptr = -16 WHERE id = 3;
UPDATE block SET ptr = {MAX}, usable = {MAX} WHERE id = 4;
UPDATE block SET class = 1000000, tier = 99 WHERE id = 5;
UPDATE os_region SET len = {MAX}, addr = {MAX} WHERE seq = 1;
UPDATE os_region SET len = -4096 WHERE seq = 2;
UPDATE run SET arena_size = {MAX};
UPDATE error SET size = {MAX}, addr = {MIN};
INSERT INTO block VALUES (6, 100, 4096, {MAX}, {MAX}, 3, -1, 12, 9700, 101, 7, {MAX},
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
INSERT INTO block VALUES (7, 100, 8192, {MAX}, {MAX}, 2, -1, 13, 9800, 101, 5, {MIN},
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1);
""")

make("negative_arena", "UPDATE run SET arena_size = -5, tsc_hz = -1;")

make("time_disorder", f"""
UPDATE block SET alloc_ts = {MAX}, free_ts = {MIN} WHERE id = 1;
UPDATE block SET alloc_ts = {MIN} WHERE id = 2;
UPDATE block SET alloc_ts = 9000, free_ts = 100, alloc_seq = 50, free_seq = 1 WHERE id = 3;
UPDATE block SET alloc_seq = {MAX}, alloc_ts = -5 WHERE id = 4;
UPDATE block SET alloc_seq = {MIN}, free_seq = {MAX} WHERE id = 5;
UPDATE run SET start_ts = {MAX}, end_ts = {MIN}, tsc_hz = 0;
UPDATE orphan_free SET ts = {MIN}, seq = {MAX};
UPDATE os_region SET ts = {MAX};
UPDATE error SET ts = {MIN};
""")

make("time_huge_span", f"""
UPDATE run SET start_ts = {MIN}, end_ts = {MAX}, tsc_hz = 1;
UPDATE block SET alloc_ts = {MIN} + id, free_ts = {MAX} - id WHERE free_ts IS NOT NULL;
""")

make("dangling_ids", f"""
UPDATE block SET alloc_stack = 999, free_stack = {MAX}, prev_block = 12345, flags = 2
  WHERE id = 1;
UPDATE block SET alloc_stack = {MAX}, alloc_path = 9999, alloc_tid = {MIN} WHERE id = 2;
UPDATE block SET alloc_stack = -7, alloc_path = -5, free_path = {MAX}, free_stack = {MIN}
  WHERE id = 3;
UPDATE block SET alloc_path = 255, flags = 255, prev_block = {MAX}, alloc_stack = {MAX}
  WHERE id = 4;
UPDATE block SET pid = 424242, alloc_stack = 2 WHERE id = 5;
UPDATE error SET stack = 777, alloc_stack = {MAX}, free_stack = {MIN}, tier = 77,
  class = -99;
UPDATE orphan_free SET stack = {MAX}, path = {MIN};
INSERT INTO stack VALUES (50, 100, {MAX});
INSERT INTO frame VALUES (50, {MAX}, 0, NULL, NULL, NULL, NULL, NULL);
INSERT INTO frame VALUES (50, -1, {MAX}, 'f', {MIN}, 'x.c', {MIN}, NULL);
UPDATE block SET alloc_stack = 50 WHERE id = 2;
-- -1 as a block id, a pointer and the block a realloc replaced: UINT64_MAX as a map key.
INSERT INTO block VALUES (-1, 100, -1, 8, 16, 2, -1, 30, 9900, 101, 5, 10, -1,
  NULL, NULL, NULL, NULL, NULL, NULL, -1, 2);
INSERT INTO block VALUES (60, 100, 65552, 8, 16, 2, -1, 31, 9950, 101, 5, 10, -1,
  NULL, NULL, NULL, NULL, NULL, NULL, -1, 2);
""")

# Many blocks whose cycles are at the ends of the range (percentiles, means, sums).
rows = []
for v in range(300):
    ac = (MAX, MIN, -1)[v % 3]
    fc = (MIN, MAX)[v % 2]
    rows.append(f"INSERT INTO block VALUES ({100 + v}, 100, {262144 + 64 * v}, 32, 48, 2, -1, "
                f"{1000 + 2 * v}, {20000 + 2 * v}, 101, 5, {ac}, 1, {1001 + 2 * v}, "
                f"{20001 + 2 * v}, 101, 11, {fc}, 1, NULL, 0);")
make("extreme_cycles", "UPDATE block SET alloc_cycles = %d, free_cycles = %d;\n" % (MAX, MAX) +
     "\n".join(rows))

make("nulls_everywhere", """
UPDATE run SET command = NULL, options = NULL, host = NULL, version = NULL, tsc_hz = NULL,
  start_ts = NULL, end_ts = NULL, events = NULL, discarded_events = NULL, arena_size = NULL;
UPDATE block SET alloc_tid = NULL, alloc_path = NULL, alloc_cycles = NULL, alloc_stack = NULL,
  free_tid = NULL, free_path = NULL, free_cycles = NULL, free_stack = NULL;
UPDATE frame SET function = NULL, file = NULL, module = NULL, offset = NULL, line = NULL;
UPDATE error SET tid = NULL, addr = NULL, size = NULL, details = NULL, stack = NULL;
UPDATE os_region SET purpose = NULL, tid = NULL;
""")

make("same_pointer_twice", """
UPDATE block SET ptr = 65552, tier = 2 WHERE id IN (2, 3, 4, 5);
UPDATE block SET free_seq = NULL, free_ts = NULL WHERE id IN (1, 3);
""")

make("wrong_types", f"""
UPDATE block SET size = 'many', usable = 1.5, alloc_ts = x'00ff' WHERE id = 2;
UPDATE run SET tsc_hz = 'fast', start_ts = 'then', arena_size = 2.5;
UPDATE frame SET function = x'1b5b326a00ff', line = 'x';
""")

# The block table's records with one serial type changed: 2-byte to 1-byte (the header
# describes one byte less than the record holds: the direct reader read the columns after it
# shifted, with status 0) and 1-byte to 2-byte (one byte more than it holds).
make("record_short_width", "", damage=retype(2, 1, row=4))
make("record_long_width", "", damage=retype(1, 2, row=0))
make("record_reserved_type", "", damage=retype(1, 10, row=0))

make("truncated_half", "\n".join(rows), damage=truncate(0.5))
make("truncated_header", "", damage=truncate(0.0))

make("kernel_hostile", f"""
UPDATE kernel_event SET ts = {MAX} WHERE rowid % 3 = 0;
UPDATE kernel_event SET ts = {MIN} WHERE rowid % 3 = 1;
""", kernel_db=True)

# HL_HOSTILE_SEED and HL_HOSTILE_RANDOM (cases) explore further by hand; make check runs the
# default three.
rnd = random.Random(int(os.environ.get("HL_HOSTILE_SEED", "16")))
# A few hundred random values in every integer column of block: anything goes.
cols = ["ptr", "size", "usable", "tier", "class", "alloc_seq", "alloc_ts", "alloc_tid",
        "alloc_path", "alloc_cycles", "alloc_stack", "free_seq", "free_ts", "free_tid",
        "free_path", "free_cycles", "free_stack", "prev_block", "flags"]
picks = [MAX, MIN, -1, 0, 1, 2**32, 2**31 - 1, 16, 4096]
for k in range(int(os.environ.get("HL_HOSTILE_RANDOM", "3"))):
    body = []
    for bid in range(1, 6):
        sets = ", ".join(f"{c} = {rnd.choice(picks) if rnd.random() < 0.7 else rnd.randint(MIN, MAX)}"
                         for c in cols if rnd.random() < 0.5)
        if sets:
            body.append(f"UPDATE block SET {sets} WHERE id = {bid};")
    make(f"random_{k}", "\n".join(body))

# The same straight in the packed columns of block_data and in block_seg (the view's
# triggers check the packed fields, so the cases above cannot reach every stored value).
data_cols = ["dptr", "kind", "ats", "cyc", "stk", "fr", "misc"]
picks3 = picks + [31, 63, 2**36 - 1, -32, 2**62]  # bit lengths 31 and beyond in pack2's L
for k in range(int(os.environ.get("HL_HOSTILE_RANDOM", "3"))):
    body = []
    for bid in range(1, 6):
        sets = ", ".join(f"{c} = {rnd.choice(picks3) if rnd.random() < 0.7 else rnd.randint(MIN, MAX)}"
                         for c in data_cols if rnd.random() < 0.5)
        if sets:
            body.append(f"UPDATE block_data SET {sets} WHERE id = {bid};")
    base = ", ".join(f"{c} = {rnd.choice(picks)}" for c in ("pid", "ptr", "ts", "seq")
                     if rnd.random() < 0.5)
    if base:
        body.append(f"UPDATE block_seg SET {base};")
    make(f"random_data_{k}", "\n".join(body))

# Schema version 3's (and 4's) own shapes: a block_data row marked wide (kind NULL) without its
# block_wide row, a block_wide row without its mark, a wide row of text and extreme values,
# a segment without its bases (or with text ones), NULL in a packed column, pack2 values
# whose bit length field points past 64 bits.
make("v3_wide_mark_without_row", "UPDATE block_data SET kind = NULL WHERE id = 2;")
make("v3_wide_row_without_mark", f"""
INSERT INTO block_wide (id, pid, ptr, size, usable, tier, class, alloc_seq, alloc_ts, alloc_tid)
    VALUES (99, 100, 4096, 16, 16, 1, 0, 99, 99, 101);""")
make("v3_wide_extremes", f"""
UPDATE block SET size = {MAX}, usable = {MIN}, alloc_cycles = -5, free_stack = 0,
                 flags = 99, tier = 'tiny', class = NULL WHERE id = 3;
UPDATE block SET free_seq = alloc_seq - 10, prev_block = {MIN} WHERE id = 4;""")
make("v3_segment_without_bases", "DELETE FROM block_seg;")
make("v3_segment_text_bases", "UPDATE block_seg SET ts = 'soon', seq = X'00ff';")
make("v3_null_packed_columns", "UPDATE block_data SET cyc = NULL, misc = NULL WHERE id = 1;"
     "UPDATE block_data SET stk = NULL, ats = NULL WHERE id = 2;")
make("v3_pack2_lengths", f"""
UPDATE block_data SET cyc = 31 | ({2**31 - 1} << 5), stk = -1, fr = {MAX}, misc = 31 WHERE id = 1;
UPDATE block_data SET cyc = {MIN}, misc = -1, fr = -32 WHERE id = 2;""")

# The leak scan's classes with free_seq values heapledger never writes (below 0: no free; a
# fraction: read as an integer), failed and unscanned blocks moved around, class rows that
# point nowhere or hold no class.
make("leak_negative_free_seq", f"""
UPDATE block SET free_seq = -1, free_ts = 9000 WHERE id = 1;
UPDATE block SET free_seq = {MIN} WHERE id = 4;
UPDATE block SET free_seq = -0.5, free_ts = 9500 WHERE id = 3;
UPDATE block SET free_seq = -2, flags = 1 WHERE id = 5;
UPDATE block SET free_seq = -3 WHERE id = 9;
INSERT INTO leak_block VALUES (4, 2), (12345, 1), (-1, 2);
UPDATE leak_block SET class = -5 WHERE block = 6;
""", base=leakclass)
leak_picks = [MAX, MIN, -1, 0, 1, 100, 200, -0.5, 2.5]
leak_cols = {"free_seq": leak_picks + ["NULL"], "flags": leak_picks, "pid": leak_picks,
             "size": leak_picks, "alloc_stack": leak_picks + ["NULL"]}
for k in range(int(os.environ.get("HL_HOSTILE_RANDOM", "3"))):
    body = []
    for bid in range(1, 11):
        sets = ", ".join(f"{c} = {rnd.choice(v)}" for c, v in leak_cols.items()
                         if rnd.random() < 0.4)
        if sets:
            body.append(f"UPDATE block SET {sets} WHERE id = {bid};")
    for bid in range(1, 11):
        if rnd.random() < 0.3:
            cls = rnd.choice([0, 1, 2, 3, 7, -1])
            body.append(f"INSERT OR REPLACE INTO leak_block VALUES ({bid}, {cls});")
    make(f"leak_random_{k}", "\n".join(body), base=leakclass)
