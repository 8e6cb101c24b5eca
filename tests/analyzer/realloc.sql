-- tests/analyzer/realloc.sql — a realloc whose two sides share one seq: block 1 (100 B) ends
-- by realloc at seq 3 and block 2 (300 B) starts at seq 3. R goes 100 -> 300, never 400.
INSERT INTO run VALUES (1, './grow', '', 'testhost', '0.1.0', 1000000000, 0, 1000, 0, 3, 0, 0);
INSERT INTO process VALUES (300, 1, 'grow', '', 1000000000, 0, 1000);
-- The old side of a realloc that started a block has no cycles of its own (they are on
-- block 2).
INSERT INTO block VALUES (1, 300, 65552, 100, 112, 2, -1, 1, 100, 300, 5, 10, NULL, 3, 300, 300, 15, NULL, NULL, NULL, 4);
INSERT INTO block VALUES (2, 300, 69632, 300, 304, 2, -1, 3, 300, 300, 15, 90, NULL, 4, 400, 300, 11, 20, NULL, 1, 2);
