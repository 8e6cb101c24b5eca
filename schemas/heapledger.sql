-- heapledger run database, schema version 4.
--
-- One file per recording. Written by the tracer (record / collect / collectd), read by the
-- analyzer (report / diff / replay / history) and by sqlite3 alone through the views below.
-- The schema version is PRAGMA user_version; a reader refuses any other version with a
-- message naming both versions. Timestamps are nanoseconds on the LTTng trace clock
-- (CLOCK_MONOTONIC), the same clock as kernel_event. Path, tier and op numbers are those of
-- schemas/paths.def and schemas/hl_schema.h (copied into the path table at creation).

PRAGMA user_version = 4;

-- Key/value facts about the file: 'writer' (heapledger version), 'ingest_status' ('complete',
-- 'partial' when the trace was truncated or corrupt, 'live' while collectd is writing,
-- 'interrupted' by SIGINT/SIGTERM: what was stored until then), 'ingest_warning' (what was
-- lost, when partial or interrupted), 'source' (trace dir or URL).
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT
);

-- One row per recording.
CREATE TABLE IF NOT EXISTS run (
    id               INTEGER PRIMARY KEY,
    command          TEXT,     -- command line as run
    options          TEXT,     -- HEAPLEDGER_OPTIONS of the run
    host             TEXT,
    version          TEXT,     -- heapledger version that recorded
    tsc_hz           INTEGER,  -- TSC frequency (cycles -> ns)
    start_ts         INTEGER,
    end_ts           INTEGER,
    exit_status      INTEGER,
    events           INTEGER,  -- events ingested
    discarded_events INTEGER,  -- events the tracer reported lost (0 in blocking mode)
    arena_size       INTEGER   -- arena=SIZE of the run, 0 when the heap grows from the OS
);

-- Traced processes (fork children appear with their own pid).
CREATE TABLE IF NOT EXISTS process (
    pid       INTEGER PRIMARY KEY,
    ppid      INTEGER,
    procname  TEXT,
    options   TEXT,
    tsc_hz    INTEGER,
    start_ts  INTEGER,
    end_ts    INTEGER
);

CREATE TABLE IF NOT EXISTS thread (
    pid  INTEGER NOT NULL,
    tid  INTEGER NOT NULL,
    name TEXT,
    PRIMARY KEY (pid, tid)
);

CREATE TABLE IF NOT EXISTS path (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    op   TEXT NOT NULL          -- 'alloc', 'free' or 'realloc'
);

-- One row per block lifetime: from the allocation (malloc, calloc, memalign, or the new side
-- of a realloc) to its free (or the old side of a realloc). A realloc that returns the same
-- pointer still ends one lifetime and starts the next (prev_block links them).
-- Failed allocations are rows with ptr = 0 and flags bit 0.
-- A realloc's cycles are stored once: as alloc_cycles of the block it starts (failed or
-- not), or as free_cycles of the block it ends when it starts none (realloc(p, 0)); the old
-- side of a moving realloc has free_cycles NULL.
--
-- Stored narrow (schema version 4): block_data holds each lifetime in seven small integers,
-- most of them differences that SQLite's variable-width integers store in 0-3 bytes (a 0 or a
-- 1 costs no byte at all), several of them two or more values in one (pack2 below; each
-- column costs the ingest a bind and its part of the record per row); the view `block`
-- below gives the columns of version 1 back, and inserts, updates and deletes on it go to
-- block_data through its triggers. A row whose values do not fit the packing (negative, NULL
-- where the ingest never writes one, too wide) is stored whole in block_wide, with a row of
-- NULLs in block_data keeping its place. Readers use the view (or decode block_data like
-- analyzer/blockreader.c); docs/schema.md and schemas/hl_blockfmt.h have the rules.
--
-- pack2(x, y) = L | x << 5 | y << (5 + L), L the bit length of x (x < 2^31, y < 2^(58 - L),
-- both >= 0): x = (v >> 5) & ((1 << (v & 31)) - 1), y = v >> (5 + (v & 31)).
-- zz(v) = 2v for v >= 0, -2v - 1 below (small magnitudes, small codes).
CREATE TABLE IF NOT EXISTS block_seg (    -- the bases of the block rows of ids seg << 11 ...
    seg INTEGER PRIMARY KEY,              --   (seg << 11) + 2047: the first row stored of them
    pid INTEGER NOT NULL,                 -- its pid
    ptr INTEGER NOT NULL,                 -- its pointer
    ts  INTEGER NOT NULL,                 -- its alloc_ts
    seq INTEGER NOT NULL                  -- its alloc_seq - 2 * id
);

CREATE TABLE IF NOT EXISTS block_data (
    id   INTEGER PRIMARY KEY,
    dptr INTEGER,   -- ptr - seg.ptr
    kind INTEGER,   -- flags | tier << 4 | (class + 1) << 6 | alloc_path << 12
                    --   | free_path << 18 | pack2(zz(usable - size), size) << 24 (paths 0:
                    --   NULL); NULL: the row is in block_wide
    ats  INTEGER,   -- alloc_ts - seg.ts
    cyc  INTEGER,   -- pack2(alloc_cycles + 1, free_cycles + 1), a NULL as 0
    stk  INTEGER,   -- pack2(alloc_stack, free_stack), a NULL as 0
    fr   INTEGER,   -- pack2(free_seq - alloc_seq, free_ts - alloc_ts); NULL: live at the end
    misc INTEGER    -- pack2(zz(alloc_seq - 2 * id - seg.seq), pack2(zz(alloc_tid - pid),
                    --   pack2(zz(pid - seg.pid), pack2(zz(free_tid - alloc_tid), id - prev_block)))),
                    --   free_tid - alloc_tid 0 when live, id - prev_block 0 when NULL
);

-- The rows that do not fit block_data's packing, as inserted (the columns of `block`).
CREATE TABLE IF NOT EXISTS block_wide (
    id INTEGER PRIMARY KEY, pid INTEGER, ptr INTEGER, size INTEGER, usable INTEGER,
    tier INTEGER, class INTEGER, alloc_seq INTEGER, alloc_ts INTEGER, alloc_tid INTEGER,
    alloc_path INTEGER, alloc_cycles INTEGER, alloc_stack INTEGER, free_seq INTEGER,
    free_ts INTEGER, free_tid INTEGER, free_path INTEGER, free_cycles INTEGER,
    free_stack INTEGER, prev_block INTEGER, flags INTEGER
);

-- Bit lengths for the triggers: the bit length of 0 <= x < 2^31 is
-- (SELECT count(*) FROM bit_length WHERE low <= x).
CREATE TABLE IF NOT EXISTS bit_length (
    bits INTEGER PRIMARY KEY,
    low  INTEGER NOT NULL                 -- 2^(bits - 1)
);
INSERT OR IGNORE INTO bit_length
    WITH RECURSIVE b(bits, low) AS (SELECT 1, 1 UNION ALL SELECT bits + 1, low * 2 FROM b
                                    WHERE bits < 31)
    SELECT bits, low FROM b;

-- The block lifetimes with the columns of schema version 1 (docs/schema.md, "block").
CREATE VIEW IF NOT EXISTS block AS
    SELECT u.id AS id,
           CASE WHEN u.kind IS NULL THEN w.pid ELSE u.pid END AS pid,
           CASE WHEN u.kind IS NULL THEN w.ptr ELSE u.sptr + u.dptr END AS ptr,
           CASE WHEN u.kind IS NULL THEN w.size ELSE u.size END AS size,
           CASE WHEN u.kind IS NULL THEN w.usable
                ELSE u.size + CASE WHEN u.zdu & 1 THEN -1 - (u.zdu >> 1) ELSE u.zdu >> 1 END END AS usable,
           CASE WHEN u.kind IS NULL THEN w.tier ELSE (u.kind >> 4) & 3 END AS tier,
           CASE WHEN u.kind IS NULL THEN w.class ELSE ((u.kind >> 6) & 63) - 1 END AS class,
           CASE WHEN u.kind IS NULL THEN w.alloc_seq ELSE u.alloc_seq END AS alloc_seq,
           CASE WHEN u.kind IS NULL THEN w.alloc_ts ELSE u.alloc_ts END AS alloc_ts,
           CASE WHEN u.kind IS NULL THEN w.alloc_tid ELSE u.alloc_tid END AS alloc_tid,
           CASE WHEN u.kind IS NULL THEN w.alloc_path ELSE nullif((u.kind >> 12) & 63, 0) END
               AS alloc_path,
           CASE WHEN u.kind IS NULL THEN w.alloc_cycles
                ELSE nullif((u.cyc >> 5) & ((1 << (u.cyc & 31)) - 1), 0) - 1 END AS alloc_cycles,
           CASE WHEN u.kind IS NULL THEN w.alloc_stack
                ELSE nullif((u.stk >> 5) & ((1 << (u.stk & 31)) - 1), 0) END AS alloc_stack,
           CASE WHEN u.kind IS NULL THEN w.free_seq
                ELSE u.alloc_seq + ((u.fr >> 5) & ((1 << (u.fr & 31)) - 1)) END AS free_seq,
           CASE WHEN u.kind IS NULL THEN w.free_ts ELSE u.alloc_ts + (u.fr >> (5 + (u.fr & 31))) END
               AS free_ts,
           CASE WHEN u.kind IS NULL THEN w.free_tid
                WHEN u.fr IS NOT NULL THEN u.alloc_tid
                    + CASE WHEN u.zf & 1 THEN -1 - (u.zf >> 1) ELSE u.zf >> 1 END END AS free_tid,
           CASE WHEN u.kind IS NULL THEN w.free_path
                WHEN u.fr IS NOT NULL THEN nullif((u.kind >> 18) & 63, 0) END AS free_path,
           CASE WHEN u.kind IS NULL THEN w.free_cycles
                ELSE nullif(u.cyc >> (5 + (u.cyc & 31)), 0) - 1 END AS free_cycles,
           CASE WHEN u.kind IS NULL THEN w.free_stack
                ELSE nullif(u.stk >> (5 + (u.stk & 31)), 0) END AS free_stack,
           CASE WHEN u.kind IS NULL THEN w.prev_block
                ELSE u.id - nullif(u.m3 >> (5 + (u.m3 & 31)), 0) END AS prev_block,
           CASE WHEN u.kind IS NULL THEN w.flags ELSE u.kind & 15 END AS flags
    -- misc's parts: za, then m1 = (zt, m2), m2 = (zp, m3), m3 = (zf, id - prev_block)
    FROM (SELECT t.*, t.pid + CASE WHEN t.zt & 1 THEN -1 - (t.zt >> 1) ELSE t.zt >> 1 END AS alloc_tid, (t.m3 >> 5) & ((1 << (t.m3 & 31)) - 1) AS zf
          FROM (SELECT t.*, t.spid + CASE WHEN (t.m2 >> 5) & ((1 << (t.m2 & 31)) - 1) & 1 THEN -1 - ((t.m2 >> 5) & ((1 << (t.m2 & 31)) - 1) >> 1) ELSE (t.m2 >> 5) & ((1 << (t.m2 & 31)) - 1) >> 1 END AS pid, t.m2 >> (5 + (t.m2 & 31)) AS m3
                FROM (SELECT t.*, (t.m1 >> 5) & ((1 << (t.m1 & 31)) - 1) AS zt, t.m1 >> (5 + (t.m1 & 31)) AS m2
                      FROM (SELECT d.*, s.pid AS spid, s.ptr AS sptr,
                                   2 * d.id + (s.seq + CASE WHEN (d.misc >> 5) & ((1 << (d.misc & 31)) - 1) & 1 THEN -1 - ((d.misc >> 5) & ((1 << (d.misc & 31)) - 1) >> 1) ELSE (d.misc >> 5) & ((1 << (d.misc & 31)) - 1) >> 1 END) AS alloc_seq,
                                   s.ts + d.ats AS alloc_ts, d.misc >> (5 + (d.misc & 31)) AS m1,
                                   ((d.kind >> 24) >> 5) & ((1 << ((d.kind >> 24) & 31)) - 1) AS zdu, (d.kind >> 24) >> (5 + ((d.kind >> 24) & 31)) AS size
                            FROM block_data d LEFT JOIN block_seg s ON s.seg = d.id >> 11) t) t) t) u
    LEFT JOIN block_wide w ON u.kind IS NULL AND w.id = u.id;

-- Hand-made rows: the same encoding as the ingest's (schemas/hl_blockfmt.h, hl_bf_encode);
-- flags NULL is 0, as in version 2.
CREATE TRIGGER IF NOT EXISTS block_insert INSTEAD OF INSERT ON block
BEGIN
    SELECT RAISE(ABORT, 'block.id must be given (an integer): the rows of a heapledger database keep their ids')
        WHERE typeof(NEW.id) != 'integer';
    SELECT RAISE(ABORT, 'UNIQUE constraint failed: block.id')
        WHERE EXISTS (SELECT 1 FROM block_data WHERE id = NEW.id);
    INSERT OR IGNORE INTO block_seg
        SELECT NEW.id >> 11, NEW.pid, NEW.ptr, NEW.alloc_ts, NEW.alloc_seq - 2 * NEW.id
        WHERE typeof(NEW.pid) = 'integer' AND typeof(NEW.ptr) = 'integer'
              AND typeof(NEW.alloc_ts) = 'integer' AND typeof(NEW.alloc_seq) = 'integer'
              AND typeof(NEW.alloc_seq - 2 * NEW.id) = 'integer';
    INSERT INTO block_data (id, dptr, kind, ats, cyc, stk, fr, misc)
    SELECT id, dptr,
           -- (in SQL, << >> & | have one precedence: every term in parentheses)
           flags | (tier << 4) | ((class + 1) << 6) | (coalesce(alloc_path, 0) << 12)
               | (coalesce(free_path, 0) << 18) | (ks << 24),
           ats,
           lca | (ca << 5) | (cf << (5 + lca)),
           lsa | (sa << 5) | (sf << (5 + lsa)),
           CASE WHEN free_seq IS NOT NULL THEN lfseq | (fseq << 5) | (fts << (5 + lfseq)) END,
           lza | (za << 5) | (m1 << (5 + lza))
    -- misc from the inside out: m3 = pack2(zf, dprev), m2 = pack2(zp, m3), m1 = pack2(zt, m2)
    FROM (SELECT *, lzt | (zt << 5) | (m2 << (5 + lzt)) AS m1
    FROM (SELECT *, lzp | (zp << 5) | (m3 << (5 + lzp)) AS m2
    FROM (SELECT *, lzf | (zf << 5) | (dprev << (5 + lzf)) AS m3,
                 lzdu | (zdu << 5) | (size << (5 + lzdu)) AS ks
    FROM (SELECT *, (SELECT count(*) FROM bit_length WHERE low <= ca) AS lca,
                 (SELECT count(*) FROM bit_length WHERE low <= sa) AS lsa,
                 (SELECT count(*) FROM bit_length WHERE low <= fseq) AS lfseq,
                 (SELECT count(*) FROM bit_length WHERE low <= zp) AS lzp,
                 (SELECT count(*) FROM bit_length WHERE low <= zf) AS lzf,
                 (SELECT count(*) FROM bit_length WHERE low <= za) AS lza,
                 (SELECT count(*) FROM bit_length WHERE low <= zt) AS lzt,
                 (SELECT count(*) FROM bit_length WHERE low <= zdu) AS lzdu
          FROM (SELECT *, CASE WHEN dpid < 0 THEN -2 * dpid - 1 ELSE 2 * dpid END AS zp,
                       CASE WHEN ftid < 0 THEN -2 * ftid - 1 ELSE 2 * ftid END AS zf,
                       CASE WHEN aseq < 0 THEN -2 * aseq - 1 ELSE 2 * aseq END AS za,
                       CASE WHEN atid < 0 THEN -2 * atid - 1 ELSE 2 * atid END AS zt,
                       CASE WHEN du < 0 THEN -2 * du - 1 ELSE 2 * du END AS zdu
                FROM (SELECT NEW.id AS id, NEW.size AS size, NEW.tier AS tier, NEW.class AS class,
                             coalesce(NEW.flags, 0) AS flags, NEW.alloc_path AS alloc_path,
                             NEW.free_path AS free_path, NEW.free_seq AS free_seq,
                             NEW.ptr - s.ptr AS dptr, NEW.usable - NEW.size AS du,
                             NEW.alloc_seq - 2 * NEW.id - s.seq AS aseq, NEW.alloc_ts - s.ts AS ats,
                             NEW.alloc_tid - NEW.pid AS atid, NEW.pid - s.pid AS dpid,
                             CASE WHEN NEW.alloc_cycles IS NULL THEN 0 ELSE NEW.alloc_cycles + 1 END
                                 AS ca,
                             CASE WHEN NEW.free_cycles IS NULL THEN 0 ELSE NEW.free_cycles + 1 END
                                 AS cf,
                             coalesce(NEW.alloc_stack, 0) AS sa, coalesce(NEW.free_stack, 0) AS sf,
                             CASE WHEN NEW.free_seq IS NULL THEN 0
                                  ELSE NEW.free_seq - NEW.alloc_seq END AS fseq,
                             CASE WHEN NEW.free_seq IS NULL THEN 0
                                  ELSE NEW.free_ts - NEW.alloc_ts END AS fts,
                             CASE WHEN NEW.free_seq IS NULL THEN 0
                                  ELSE NEW.free_tid - NEW.alloc_tid END AS ftid,
                             CASE WHEN NEW.prev_block IS NULL THEN 0
                                  ELSE NEW.id - NEW.prev_block END AS dprev
                      FROM block_seg s
                      WHERE s.seg = NEW.id >> 11
                        -- the values the packing takes: integers, NULL only where it has a code
                        AND typeof(NEW.pid) = 'integer' AND typeof(NEW.ptr) = 'integer'
                        AND typeof(NEW.size) = 'integer' AND typeof(NEW.usable) = 'integer'
                        AND typeof(NEW.alloc_seq) = 'integer' AND typeof(NEW.alloc_ts) = 'integer'
                        AND typeof(NEW.alloc_tid) = 'integer'
                        AND typeof(NEW.tier) = 'integer' AND NEW.tier BETWEEN 0 AND 3
                        AND typeof(NEW.class) = 'integer' AND NEW.class BETWEEN -1 AND 62
                        AND (NEW.flags IS NULL OR (typeof(NEW.flags) = 'integer'
                                                   AND NEW.flags BETWEEN 0 AND 15))
                        AND (NEW.alloc_path IS NULL OR (typeof(NEW.alloc_path) = 'integer'
                                                        AND NEW.alloc_path BETWEEN 1 AND 63))
                        AND (NEW.free_path IS NULL OR (typeof(NEW.free_path) = 'integer'
                                                       AND NEW.free_path BETWEEN 1 AND 63
                                                       AND NEW.free_seq IS NOT NULL))
                        AND (NEW.alloc_cycles IS NULL OR (typeof(NEW.alloc_cycles) = 'integer'
                                                          AND NEW.alloc_cycles BETWEEN 0 AND 2147483646))
                        AND (NEW.free_cycles IS NULL OR (typeof(NEW.free_cycles) = 'integer'
                                                         AND NEW.free_cycles >= 0
                                                         AND NEW.free_cycles < 4611686018427387904))
                        AND (NEW.alloc_stack IS NULL OR (typeof(NEW.alloc_stack) = 'integer'
                                                         AND NEW.alloc_stack BETWEEN 1 AND 2147483647))
                        AND (NEW.free_stack IS NULL OR (typeof(NEW.free_stack) = 'integer'
                                                        AND NEW.free_stack >= 1))
                        AND (NEW.prev_block IS NULL OR typeof(NEW.prev_block) = 'integer')
                        AND CASE WHEN NEW.free_seq IS NULL
                                 THEN NEW.free_ts IS NULL AND NEW.free_tid IS NULL
                                 ELSE typeof(NEW.free_seq) = 'integer'
                                      AND typeof(NEW.free_ts) = 'integer'
                                      AND typeof(NEW.free_tid) = 'integer' END)
                -- the differences: exact (SQLite makes a real of an integer overflow)
                WHERE typeof(dptr) = 'integer' AND typeof(du) = 'integer'
                      AND du BETWEEN -1073741824 AND 1073741823
                      AND typeof(aseq) = 'integer' AND aseq BETWEEN -1073741824 AND 1073741823
                      AND typeof(ats) = 'integer'
                      AND typeof(atid) = 'integer' AND atid BETWEEN -1073741824 AND 1073741823
                      AND typeof(dpid) = 'integer'
                      AND dpid BETWEEN -1073741824 AND 1073741823
                      AND typeof(fseq) = 'integer' AND fseq BETWEEN 0 AND 2147483647
                      AND typeof(fts) = 'integer' AND fts >= 0
                      AND typeof(ftid) = 'integer' AND ftid BETWEEN -1073741824 AND 1073741823
                      AND typeof(dprev) = 'integer' AND dprev >= 0
                      AND (NEW.prev_block IS NULL OR dprev >= 1)))
    -- the second values of the pairs: below 2^(58 - bit length of the first); size also
    -- below 2^(34 - bit length of zz(usable - size)) (kind below 2^63)
    WHERE cf < (1 << (58 - lca)) AND sf < (1 << (58 - lsa)) AND fts < (1 << (58 - lfseq))
          AND dprev < (1 << (58 - lzf)) AND size >= 0 AND size < (1 << (34 - lzdu)))
    WHERE m3 < (1 << (58 - lzp)))
    WHERE m2 < (1 << (58 - lzt)))
    WHERE m1 < (1 << (58 - lza));
    INSERT INTO block_wide
        SELECT NEW.id, NEW.pid, NEW.ptr, NEW.size, NEW.usable, NEW.tier, NEW.class,
               NEW.alloc_seq, NEW.alloc_ts, NEW.alloc_tid, NEW.alloc_path, NEW.alloc_cycles,
               NEW.alloc_stack, NEW.free_seq, NEW.free_ts, NEW.free_tid, NEW.free_path,
               NEW.free_cycles, NEW.free_stack, NEW.prev_block, NEW.flags
        WHERE NOT EXISTS (SELECT 1 FROM block_data WHERE id = NEW.id);
    INSERT INTO block_data (id) SELECT NEW.id WHERE NOT EXISTS (SELECT 1 FROM block_data WHERE id = NEW.id);
END;

CREATE TRIGGER IF NOT EXISTS block_update INSTEAD OF UPDATE ON block
BEGIN
    DELETE FROM block_data WHERE id = OLD.id;
    DELETE FROM block_wide WHERE id = OLD.id;
    INSERT INTO block VALUES (NEW.id, NEW.pid, NEW.ptr, NEW.size, NEW.usable, NEW.tier,
        NEW.class, NEW.alloc_seq, NEW.alloc_ts, NEW.alloc_tid, NEW.alloc_path, NEW.alloc_cycles,
        NEW.alloc_stack, NEW.free_seq, NEW.free_ts, NEW.free_tid, NEW.free_path,
        NEW.free_cycles, NEW.free_stack, NEW.prev_block, NEW.flags);
END;

CREATE TRIGGER IF NOT EXISTS block_delete INSTEAD OF DELETE ON block
BEGIN
    DELETE FROM block_data WHERE id = OLD.id;
    DELETE FROM block_wide WHERE id = OLD.id;
END;

-- The block rows' totals per (alloc_path, free_path, flags) of the block view (0 for NULL),
-- added up by the ingest as it stores the rows: what record's summary prints, without a
-- scan of every block row. blocks: rows; freed: rows with a free_seq; alloc_cycles,
-- free_cycles: sums of the non-NULL values; free_cycles_n: rows with free_cycles; bytes:
-- sum of size; live_bytes: sum of size of the rows without a free_seq. Valid while
-- total(blocks) equals the number of block rows (rows changed by hand are not counted).
CREATE TABLE IF NOT EXISTS block_totals (
    alloc_path    INTEGER NOT NULL,
    free_path     INTEGER NOT NULL,
    flags         INTEGER NOT NULL,
    blocks        INTEGER NOT NULL,
    freed         INTEGER NOT NULL,
    alloc_cycles  INTEGER NOT NULL,
    free_cycles   INTEGER NOT NULL,
    free_cycles_n INTEGER NOT NULL,
    bytes         INTEGER NOT NULL,
    live_bytes    INTEGER NOT NULL,
    PRIMARY KEY (alloc_path, free_path, flags)
) WITHOUT ROWID;

-- The live rows of the block view (no free_seq, not failed: the rows of live_at_exit) per
-- (pid, allocation stack; 0 for a NULL alloc_stack), added up by the ingest as it stores
-- them: record's summary reads its live sites and the leak classes their per-process live
-- totals here instead of scanning every block row. Valid while total(blocks) equals the
-- number of live rows (readers go back to the rows otherwise).
CREATE TABLE IF NOT EXISTS live_totals (
    pid         INTEGER NOT NULL,
    alloc_stack INTEGER NOT NULL,
    blocks      INTEGER NOT NULL,
    bytes       INTEGER NOT NULL,
    PRIMARY KEY (pid, alloc_stack)
) WITHOUT ROWID;

-- Frees of pointers never seen allocated (allocated before tracing began, e.g. by LTTng's
-- own start-up). They count in the per-path cycle budgets but not in utilisation.
CREATE TABLE IF NOT EXISTS orphan_free (
    seq    INTEGER NOT NULL,
    ts     INTEGER NOT NULL,
    pid    INTEGER NOT NULL,
    tid    INTEGER,
    ptr    INTEGER NOT NULL,
    path   INTEGER,
    cycles INTEGER,
    stack  INTEGER
);

-- Call stacks, ids unique in the database (the collector renumbers per-process ids).
CREATE TABLE IF NOT EXISTS stack (
    id    INTEGER PRIMARY KEY,
    pid   INTEGER NOT NULL,
    depth INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS frame (
    stack_id INTEGER NOT NULL,
    depth    INTEGER NOT NULL,       -- 0 = innermost
    ip       INTEGER NOT NULL,
    function TEXT,
    offset   INTEGER,
    file     TEXT,
    line     INTEGER,
    module   TEXT,
    PRIMARY KEY (stack_id, depth)
) WITHOUT ROWID;

-- Loaded modules (executable and shared objects) per process, from LTTng's statedump
-- (lttng_ust_statedump:bin_info/build_id) and dlopen tracking (lttng_ust_dl:*); used to
-- symbolise frames at ingest and kept so that frames can be symbolised again offline.
CREATE TABLE IF NOT EXISTS module (
    pid       INTEGER NOT NULL,
    baddr     INTEGER NOT NULL,      -- load base address
    memsz     INTEGER NOT NULL,
    path      TEXT NOT NULL,         -- path on the traced host
    build_id  TEXT,                  -- hex, NULL when unknown
    load_ts   INTEGER,
    unload_ts INTEGER                -- dlclose time, NULL when never unloaded
);

-- Memory the allocator mapped from or returned to the OS.
CREATE TABLE IF NOT EXISTS os_region (
    seq     INTEGER NOT NULL,
    ts      INTEGER NOT NULL,
    pid     INTEGER NOT NULL,
    tid     INTEGER,
    op      TEXT NOT NULL,           -- 'map' or 'unmap'
    addr    INTEGER NOT NULL,
    len     INTEGER NOT NULL,
    purpose TEXT                     -- 'slab_segment', 'tlsf_pool', 'large', 'arena', …
);

-- Errors found by hardened mode.
CREATE TABLE IF NOT EXISTS error (
    id          INTEGER PRIMARY KEY,
    ts          INTEGER NOT NULL,
    pid         INTEGER NOT NULL,
    tid         INTEGER,
    kind        TEXT NOT NULL,       -- 'double-free', 'heap-overflow', …
    addr        INTEGER,
    size        INTEGER,
    tier        INTEGER,
    class       INTEGER,
    details     TEXT,
    stack       INTEGER,
    alloc_stack INTEGER,
    free_stack  INTEGER
);

-- Kernel-side events (tracer/bpf), same clock as everything else.
CREATE TABLE IF NOT EXISTS kernel_event (
    ts   INTEGER NOT NULL,
    pid  INTEGER NOT NULL,
    tid  INTEGER,
    kind TEXT NOT NULL,              -- mmap munmap mremap brk madvise page_fault rss
    addr INTEGER,
    len  INTEGER,
    ret  INTEGER
);

-- The leak scan at exit (liballoc/leakscan.h, docs/analyze.md "Leak classes"): one row per
-- process that ran it, and the class of every live block it found. class: 1 definitely
-- lost, 2 indirectly lost, 3 still reachable (memcheck's "possibly lost" is folded in).
-- status: 0 complete, 1 partial (threads - threads_scanned threads not scanned), 2 work
-- budget exceeded, 3 an allocator lock stayed held, 4 hardened mode, 5 no memory; above 1
-- no leak_block rows. Bytes are usable bytes as the scan saw them; unmatched: blocks the
-- scan found that the trace never saw allocated (allocated before tracing began).
CREATE TABLE IF NOT EXISTS leak_scan (
    pid              INTEGER NOT NULL,
    ts               INTEGER NOT NULL,
    status           INTEGER NOT NULL,
    threads          INTEGER,
    threads_scanned  INTEGER,
    root_bytes       INTEGER,
    heap_bytes       INTEGER,
    blocks           INTEGER,
    definite_blocks  INTEGER,
    definite_bytes   INTEGER,
    indirect_blocks  INTEGER,
    indirect_bytes   INTEGER,
    reachable_blocks INTEGER,
    reachable_bytes  INTEGER,
    ns               INTEGER,
    unmatched        INTEGER
);

CREATE TABLE IF NOT EXISTS leak_block (
    block INTEGER PRIMARY KEY,       -- block.id
    class INTEGER NOT NULL
);

-- Views for the common questions, answerable with sqlite3 alone.
CREATE VIEW IF NOT EXISTS allocations AS
    SELECT pid, ptr, size, usable, tier, class, alloc_path AS path, alloc_ts, free_ts,
           alloc_tid, free_tid, alloc_stack, free_stack, alloc_cycles, free_cycles
    FROM block WHERE (flags & 1) = 0;

CREATE VIEW IF NOT EXISTS live_at_exit AS
    SELECT * FROM allocations WHERE free_ts IS NULL;

-- Calls per (op, path) with their mean cycles. Each call is counted once, by the call made
-- (docs/metrics.md, "Counts"): a block's start is its malloc-family call ('alloc') or its
-- realloc ('realloc', flags & 2: realloc(NULL, n) too); its end is a free ('free'), or the
-- realloc(p, 0) that ended it and started nothing ('realloc': flags & 4 with the realloc's
-- cycles), or no call of its own (the old side of a realloc that started a block; an end
-- inferred from a reuse, flags & 8). An orphan free is a 'free', except the old side of a
-- realloc of a block allocated before tracing began (a realloc path, no cycles).
-- sum(count) per op gives the report's allocs, reallocs and frees + orphan frees.
CREATE VIEW IF NOT EXISTS path_cycles AS
    SELECT c.op AS op, p.name AS path, count(*) AS count, avg(c.cycles) AS mean_cycles
    FROM (SELECT CASE WHEN flags & 2 THEN 'realloc' ELSE 'alloc' END AS op,
                 alloc_path AS path, alloc_cycles AS cycles FROM block
          UNION ALL SELECT CASE WHEN flags & 4 THEN 'realloc' ELSE 'free' END, free_path,
                           free_cycles FROM block
                    WHERE free_seq IS NOT NULL AND flags & 8 = 0
                          AND (flags & 4 = 0 OR free_cycles IS NOT NULL)
          UNION ALL SELECT 'free', o.path, o.cycles FROM orphan_free o
                    WHERE o.cycles IS NOT NULL
                          OR (SELECT op FROM path WHERE id = o.path) IS NOT 'realloc') c
    JOIN path p ON p.id = c.path
    GROUP BY c.op, p.name;

-- live_at_exit with the scan's class ('definitely lost', 'indirectly lost', 'still reachable';
-- NULL when the process ran no scan or the block was allocated after it).
CREATE VIEW IF NOT EXISTS leak_classes AS
    SELECT b.id AS block, b.pid, b.ptr, b.size, b.usable, b.alloc_stack,
           CASE c.class WHEN 1 THEN 'definitely lost' WHEN 2 THEN 'indirectly lost'
                        WHEN 3 THEN 'still reachable' END AS class
    FROM block b LEFT JOIN leak_block c ON c.block = b.id
    WHERE b.free_seq IS NULL AND (b.flags & 1) = 0;

-- Indexes are created after the bulk load (schemas/heapledger_index.sql).
