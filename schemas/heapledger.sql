-- heapledger run database, schema version 2.
--
-- One file per recording. Written by the tracer (record / collect / collectd), read by the
-- analyzer (report / diff / replay / history) and by sqlite3 alone through the views below.
-- The schema version is PRAGMA user_version; a reader refuses any other version with a
-- message naming both versions. Timestamps are nanoseconds on the LTTng trace clock
-- (CLOCK_MONOTONIC), the same clock as kernel_event. Path, tier and op numbers are those of
-- schemas/paths.def and schemas/hl_schema.h (copied into the path table at creation).

PRAGMA user_version = 2;

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
-- Stored narrow (schema version 2): block_data holds each lifetime as small integers, most
-- of them differences that SQLite's variable-width integers store in 0-2 bytes (a 0 or a 1
-- costs no byte at all); the view `block` below gives the columns of version 1 back, and
-- inserts, updates and deletes on it go to block_data through its triggers. Readers use the
-- view (or decode block_data like analyzer/blockreader.c); docs/schema.md has the rules.
CREATE TABLE IF NOT EXISTS block_base (   -- one row: what block_data's differences start from
    id  INTEGER PRIMARY KEY CHECK (id = 1),
    pid INTEGER NOT NULL,                 -- the first block's pid
    ptr INTEGER NOT NULL,                 -- the first block's pointer
    ts  INTEGER NOT NULL                  -- the first block's alloc_ts
);

CREATE TABLE IF NOT EXISTS block_data (
    id     INTEGER PRIMARY KEY,
    dpid   INTEGER NOT NULL,   -- pid - block_base.pid
    dptr   INTEGER NOT NULL,   -- ptr - block_base.ptr
    size   INTEGER NOT NULL,   -- requested bytes
    kind   INTEGER NOT NULL,   -- flags | tier << 4 | (class + 1) << 6 | alloc_path << 12
                               --   | free_path << 18 | (usable - size) << 24 (paths 0: NULL)
    aseq   INTEGER NOT NULL,   -- alloc_seq - 2 * id
    ats    INTEGER NOT NULL,   -- alloc_ts - block_base.ts
    atid   INTEGER,            -- alloc_tid - pid
    acyc   INTEGER,            -- alloc_cycles
    astack INTEGER,            -- alloc_stack
    fseq   INTEGER,            -- free_seq - alloc_seq; NULL: live at the end of the recording
    fts    INTEGER,            -- free_ts - alloc_ts
    ftid   INTEGER,            -- free_tid - alloc_tid
    fcyc   INTEGER,            -- free_cycles
    fstack INTEGER,            -- free_stack
    dprev  INTEGER             -- id - prev_block
);

-- The block lifetimes with the columns of schema version 1 (docs/schema.md, "block").
CREATE VIEW IF NOT EXISTS block AS
    SELECT id,
           (SELECT pid FROM block_base) + dpid AS pid,
           (SELECT ptr FROM block_base) + dptr AS ptr,
           size,
           size + (kind >> 24) AS usable,
           (kind >> 4) & 3 AS tier,
           ((kind >> 6) & 63) - 1 AS class,
           2 * id + aseq AS alloc_seq,
           (SELECT ts FROM block_base) + ats AS alloc_ts,
           (SELECT pid FROM block_base) + dpid + atid AS alloc_tid,
           nullif((kind >> 12) & 63, 0) AS alloc_path,
           acyc AS alloc_cycles,
           astack AS alloc_stack,
           2 * id + aseq + fseq AS free_seq,
           (SELECT ts FROM block_base) + ats + fts AS free_ts,
           (SELECT pid FROM block_base) + dpid + atid + ftid AS free_tid,
           CASE WHEN fseq IS NOT NULL THEN nullif((kind >> 18) & 63, 0) END AS free_path,
           fcyc AS free_cycles,
           fstack AS free_stack,
           id - dprev AS prev_block,
           kind & 15 AS flags
    FROM block_data;

CREATE TRIGGER IF NOT EXISTS block_insert INSTEAD OF INSERT ON block
BEGIN
    INSERT OR IGNORE INTO block_base VALUES (1, NEW.pid, NEW.ptr, NEW.alloc_ts);
    INSERT INTO block_data VALUES (
        NEW.id, NEW.pid - (SELECT pid FROM block_base), NEW.ptr - (SELECT ptr FROM block_base),
        NEW.size,
        (coalesce(NEW.flags, 0) & 15) | ((NEW.tier & 3) << 4) | (((NEW.class + 1) & 63) << 6)
            | ((coalesce(NEW.alloc_path, 0) & 63) << 12)
            | ((coalesce(NEW.free_path, 0) & 63) << 18) | ((NEW.usable - NEW.size) << 24),
        NEW.alloc_seq - 2 * NEW.id, NEW.alloc_ts - (SELECT ts FROM block_base),
        NEW.alloc_tid - NEW.pid, NEW.alloc_cycles, NEW.alloc_stack,
        NEW.free_seq - NEW.alloc_seq, NEW.free_ts - NEW.alloc_ts, NEW.free_tid - NEW.alloc_tid,
        NEW.free_cycles, NEW.free_stack, NEW.id - NEW.prev_block);
END;

CREATE TRIGGER IF NOT EXISTS block_update INSTEAD OF UPDATE ON block
BEGIN
    DELETE FROM block_data WHERE id = OLD.id;
    INSERT INTO block VALUES (NEW.id, NEW.pid, NEW.ptr, NEW.size, NEW.usable, NEW.tier,
        NEW.class, NEW.alloc_seq, NEW.alloc_ts, NEW.alloc_tid, NEW.alloc_path, NEW.alloc_cycles,
        NEW.alloc_stack, NEW.free_seq, NEW.free_ts, NEW.free_tid, NEW.free_path,
        NEW.free_cycles, NEW.free_stack, NEW.prev_block, NEW.flags);
END;

CREATE TRIGGER IF NOT EXISTS block_delete INSTEAD OF DELETE ON block
BEGIN
    DELETE FROM block_data WHERE id = OLD.id;
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
