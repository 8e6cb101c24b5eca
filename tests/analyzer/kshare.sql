-- tests/analyzer/kshare.sql — kernel view corner cases (tests/analyzer/README.md): one page
-- shared by two live tiny blocks of different paths (the fault counts for both paths, once
-- for their common class); two processes using the same address; RSS summed over processes.
INSERT INTO run VALUES (1, './prog --kshare', '', 'testhost', '0.1.0', 2000000000,
                        1000, 2000, 0, 4, 0, 0);
INSERT INTO process VALUES (300, 1, 'prog', '', 2000000000, 1000, 2000),
                           (301, 300, 'prog', '', 2000000000, 1000, 2000);
INSERT INTO os_region VALUES (1, 1100, 300, 300, 'map', 4194304, 4096, 'slab_segment'); -- 0x400000
-- A tiny_new_slab and B tiny_cache_hit, class 2, on page 0x400; C tlsf in process 301, no region.
INSERT INTO block VALUES (1, 300, 4194320, 40, 47, 1, 2, 2, 1200, 300, 3, 10, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
INSERT INTO block VALUES (2, 300, 4194368, 40, 47, 1, 2, 3, 1300, 300, 1, 10, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
INSERT INTO block VALUES (3, 301, 4194320, 90, 100, 2, -1, 4, 1350, 301, 4, 10, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
INSERT INTO kernel_event(rowid, ts, pid, tid, kind, addr, len, ret) VALUES
    (1, 1400, 300, 300, 'page_fault', 4194304, 4096, 6),
    (2, 1500, 300, 300, 'rss', NULL, 1000000, 1),
    (3, 1600, 301, 301, 'rss', NULL, 500000, 2),
    (4, 1700, 301, 301, 'page_fault', 4194304, 4096, 6);
