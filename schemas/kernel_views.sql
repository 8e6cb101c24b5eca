-- heapledger run database: the kernel's view (tracer/bpf), on top of kernel_event.
--
-- Loaded by the tracer into a run database when it stores kernel events (hl_kernel_store),
-- after schemas/heapledger.sql. docs/kernel.md documents every column per kind. All
-- statements are idempotent.

-- The per-kind extra argument of a kernel event that has one (absent rows mean 0):
--   mmap       prot | (flags << 8)        (PROT_*, MAP_* of the call; MAP_ANONYMOUS = 0x20)
--   mremap     old length in pages
--   madvise    advice (MADV_*)
--   page_fault 1 when the faults lay in the brk heap [start_brk, brk) at fault time
--   rss        what took the sample: 0 a page fault, 1 a memory syscall
CREATE TABLE IF NOT EXISTS kernel_event_arg (
    event INTEGER PRIMARY KEY,       -- kernel_event.rowid
    arg   INTEGER NOT NULL
);

-- The memory-management syscalls with their extra argument.
CREATE VIEW IF NOT EXISTS kernel_syscall AS
    SELECT e.rowid AS event, e.ts, e.pid, e.tid, e.kind, e.addr, e.len, e.ret,
           coalesce(a.arg, 0) AS arg, e.ret < 0 AND e.ret > -4096 AS failed
    FROM kernel_event e LEFT JOIN kernel_event_arg a ON a.event = e.rowid
    WHERE e.kind IN ('mmap', 'munmap', 'mremap', 'brk', 'madvise');

CREATE VIEW IF NOT EXISTS kernel_mmap AS
    SELECT ts, pid, tid, addr, len, ret, arg & 255 AS prot, arg >> 8 AS flags,
           ((arg >> 8) & 32) != 0 AS anonymous, failed
    FROM kernel_syscall WHERE kind = 'mmap';

CREATE VIEW IF NOT EXISTS kernel_madvise AS
    SELECT ts, pid, tid, addr, len, ret, arg AS advice,
           CASE arg WHEN 0 THEN 'normal' WHEN 1 THEN 'random' WHEN 2 THEN 'sequential'
                    WHEN 3 THEN 'willneed' WHEN 4 THEN 'dontneed' WHEN 8 THEN 'free'
                    WHEN 9 THEN 'remove' WHEN 14 THEN 'hugepage' WHEN 15 THEN 'nohugepage'
                    WHEN 20 THEN 'cold' WHEN 21 THEN 'pageout' WHEN 25 THEN 'collapse'
                    ELSE 'other' END AS advice_name,
           failed
    FROM kernel_syscall WHERE kind = 'madvise';

-- Resident set size samples: one each time it moved by 256 KiB or more since the last one.
CREATE VIEW IF NOT EXISTS kernel_rss AS
    SELECT ts, pid, tid, len AS rss_bytes, ret AS anon_bytes
    FROM kernel_event WHERE kind = 'rss';

-- Page faults come in runs: consecutive pages faulted by one thread with the same error code
-- are one row (addr = first page, len = bytes, ts = first fault). pages assumes 4 KiB pages.
CREATE VIEW IF NOT EXISTS kernel_page_fault AS
    SELECT e.ts, e.pid, e.tid, e.addr, e.len, e.len / 4096 AS pages, e.ret AS error_code,
           (e.ret & 2) != 0 AS write,
           (e.ret & 1) != 0 AS protection, coalesce(a.arg, 0) & 1 AS in_brk_heap
    FROM kernel_event e LEFT JOIN kernel_event_arg a ON a.event = e.rowid
    WHERE e.kind = 'page_fault';

-- Per process and kind: how many events, how many bytes, time span.
CREATE VIEW IF NOT EXISTS kernel_summary AS
    SELECT pid, kind, count(*) AS events,
           sum(CASE WHEN kind IN ('mmap', 'munmap', 'mremap', 'madvise') THEN len END) AS bytes,
           max(CASE WHEN kind = 'rss' THEN len END) AS peak_rss,
           min(ts) AS first_ts, max(ts) AS last_ts
    FROM kernel_event GROUP BY pid, kind;

-- The allocator's mappings (os_region 'map', from a heapledger recording) with the bytes of
-- them the process faulted in while they were mapped: memory held but never touched is
-- len - faulted_bytes. A page faulted twice (after MADV_DONTNEED, say) counts twice, so
-- faulted_bytes can exceed len; never_touched_bytes is clamped at 0.
CREATE VIEW IF NOT EXISTS kernel_region_touch AS
    WITH maps AS (
        SELECT m.pid, m.addr, m.len, m.purpose, m.ts AS map_ts,
               (SELECT min(u.ts) FROM os_region u
                WHERE u.pid = m.pid AND u.op = 'unmap' AND u.addr = m.addr AND u.ts >= m.ts)
                   AS unmap_ts
        FROM os_region m WHERE m.op = 'map'),
    touched AS (
        SELECT maps.*,
               coalesce((SELECT sum(min(f.addr + f.len, maps.addr + maps.len) -
                                    max(f.addr, maps.addr))
                         FROM kernel_event f
                         WHERE f.kind = 'page_fault' AND f.pid = maps.pid
                           AND f.addr < maps.addr + maps.len AND f.addr + f.len > maps.addr
                           AND f.ts >= maps.map_ts
                           AND (maps.unmap_ts IS NULL OR f.ts <= maps.unmap_ts)), 0)
                   AS faulted_bytes
        FROM maps)
    SELECT pid, addr, len, purpose, map_ts, unmap_ts, faulted_bytes,
           max(0, len - faulted_bytes) AS never_touched_bytes
    FROM touched;
