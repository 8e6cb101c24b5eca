-- tests/analyzer/leakclass.sql — the leak scan's classes against the blocks live at the end:
-- two processes, only pid 100 scanned (two leak_scan rows for it), classes 1, 2 and 3, a
-- live block without a class row, a class row of 0 and one of 7 (neither is a class: both
-- count as unclassified), a stale class row on a freed block, a failed allocation with a
-- class row and the unscanned process's live blocks (none of the last three count).
-- Expected: definitely lost 1 block (10 B), indirectly lost 1 (20 B), still reachable 1
-- (30 B), unclassified 3 (40 + 50 + 60 = 150 B); lost by stack: stack 1 only (blocks 1 and
-- 2), not the failed block's stack 2 nor the unscanned block 9. Loaded after
-- schemas/heapledger.sql.
INSERT INTO run VALUES (1, './prog --leaks', '', 'testhost', '0.1.0', 2000000000,
                        1000, 30000, 0, 21, 0, 0);
INSERT INTO process VALUES (100, 1, 'prog', '', 2000000000, 1000, 30000);
INSERT INTO process VALUES (200, 1, 'prog', '', 2000000000, 1000, 30000);
INSERT INTO thread VALUES (100, 101, 'prog'), (200, 201, 'prog');

-- id pid ptr size usable tier class | alloc: seq ts tid path cycles stack | free: seq ts tid path cycles stack | prev flags
INSERT INTO block VALUES (1, 100, 4096, 10, 15, 1, 0, 2, 2000, 101, 1, 20, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
INSERT INTO block VALUES (2, 100, 4112, 20, 31, 1, 1, 4, 3000, 101, 1, 20, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
INSERT INTO block VALUES (3, 100, 4144, 30, 31, 1, 1, 6, 4000, 101, 1, 20, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
INSERT INTO block VALUES (4, 100, 4176, 40, 47, 1, 2, 8, 5000, 101, 1, 20, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
INSERT INTO block VALUES (5, 100, 4224, 50, 63, 1, 3, 10, 6000, 101, 1, 20, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
INSERT INTO block VALUES (6, 100, 4288, 60, 63, 1, 3, 12, 7000, 101, 1, 20, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
INSERT INTO block VALUES (7, 100, 4352, 70, 79, 1, 4, 14, 8000, 101, 1, 20, 2, 15, 9000, 101, 9, 10, 3, NULL, 0);
INSERT INTO block VALUES (8, 100, 0, 80, 0, 1, 4, 16, 10000, 101, 1, 20, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1);
INSERT INTO block VALUES (9, 200, 8192, 90, 95, 1, 5, 18, 11000, 201, 1, 20, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
INSERT INTO block VALUES (10, 200, 8288, 100, 111, 1, 6, 20, 12000, 201, 1, 20, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);

INSERT INTO leak_scan (pid, ts, status, threads, threads_scanned, blocks) VALUES
    (100, 29000, 0, 1, 1, 6), (100, 29500, 0, 1, 1, 6);
INSERT INTO leak_block VALUES (1, 1), (2, 2), (3, 3), (5, 0), (6, 7), (7, 1), (8, 1), (9, 1);

INSERT INTO stack VALUES (1, 100, 3), (2, 100, 3), (3, 100, 3);
