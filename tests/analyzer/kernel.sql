-- tests/analyzer/kernel.sql — a hand-made run with kernel events (heapledger record --kernel):
-- one process (200), two threads (201 allocates, 202 only faults), a TLSF pool of 16 pages
-- at 0x100000, a large mapping of 64 pages at 0x200000, a slab segment of 16 pages at
-- 0x300000; page faults in live blocks, in free heap memory and outside the heap; RSS samples;
-- MADV_DONTNEED. Loaded after schemas/heapledger.sql and schemas/kernel_views.sql.
-- Expected values are worked out by hand in tests/analyzer/README.md ("kernel.sql").
INSERT INTO run VALUES (1, './prog --kernel', '', 'testhost', '0.1.0', 2000000000,
                        1000, 20000, 0, 12, 0, 0);
INSERT INTO process VALUES (200, 1, 'prog', '', 2000000000, 1000, 20000);
INSERT INTO thread VALUES (200, 201, 'prog'), (200, 202, 'worker');

INSERT INTO os_region VALUES (1, 2000, 200, 201, 'map', 1048576, 65536, 'tlsf_pool');    -- 0x100000
INSERT INTO os_region VALUES (2, 2000, 200, 201, 'map', 2097152, 262144, 'large');       -- 0x200000
INSERT INTO os_region VALUES (3, 2000, 200, 201, 'map', 3145728, 65536, 'slab_segment'); -- 0x300000
INSERT INTO os_region VALUES (21, 15100, 200, 201, 'unmap', 2097152, 262144, 'large');

-- id pid ptr size usable tier class | alloc: seq ts tid path cycles stack | free: seq ts tid path cycles stack | prev flags
-- L large_mmap 200000/262128 at 0x200010, freed at 15000
INSERT INTO block VALUES (1, 200, 2097168, 200000, 262128, 3, -1, 4, 3000, 201, 7, 900, NULL, 20, 15000, 201, 13, 700, NULL, NULL, 0);
-- M1 tlsf_split 5000/8176 at 0x100010 -> [0x100010, 0x102000), live at exit
INSERT INTO block VALUES (2, 200, 1048592, 5000, 8176, 2, -1, 5, 5000, 201, 5, 300, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
-- M2 tlsf 100/112 at 0x102010, freed at 5500
INSERT INTO block VALUES (3, 200, 1056784, 100, 112, 2, -1, 6, 5100, 201, 4, 200, NULL, 8, 5500, 201, 11, 60, NULL, NULL, 0);
-- T1 tiny_new_slab class 3, 40/47 at 0x300010, live
INSERT INTO block VALUES (4, 200, 3145744, 40, 47, 1, 3, 9, 7000, 201, 3, 400, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
-- T2 tiny_cache_hit class 3, 40/47 at 0x301010, live
INSERT INTO block VALUES (5, 200, 3149840, 40, 47, 1, 3, 10, 9000, 201, 1, 20, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);

-- kernel_event(rowid, ts, pid, tid, kind, addr, len, ret); page = 4096.
INSERT INTO kernel_event(rowid, ts, pid, tid, kind, addr, len, ret) VALUES
    (1, 1200, 200, 201, 'rss', NULL, 1000000, 400000),
    (2, 1900, 200, 201, 'mmap', 0, 262144, 2097152),
    (3, 2050, 200, 201, 'page_fault', 2097152, 4096, 6),    -- L's header, before its alloc
    (4, 2200, 200, 202, 'page_fault', 3178496, 32768, 6),   -- slab pages 0x308000.. (8), free
    (5, 2500, 200, 201, 'page_fault', 7340032, 8192, 6),    -- 0x700000, outside the heap
    (6, 4000, 200, 201, 'page_fault', 2101248, 32768, 6),   -- L pages 1..8
    (7, 4500, 200, 201, 'rss', NULL, 1300000, 600000),
    (8, 6000, 200, 201, 'page_fault', 1048576, 16384, 6),   -- pool pages 0..3: M1 on 0..1
    (9, 8000, 200, 201, 'page_fault', 3145728, 8192, 6),    -- slab pages 0..1: T1 on 0
    (10, 10000, 200, 202, 'page_fault', 1081344, 4096, 6),  -- pool page 8, free
    (11, 11000, 200, 201, 'madvise', 2101248, 16384, 0),    -- MADV_DONTNEED L pages 1..4
    (12, 12000, 200, 201, 'rss', NULL, 1200000, 500000),
    (13, 15200, 200, 201, 'munmap', 2097152, 262144, 0);
INSERT INTO kernel_event_arg VALUES (2, 3 | (34 << 8)), (11, 4), (7, 0), (12, 1);
