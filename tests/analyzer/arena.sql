-- tests/analyzer/arena.sql — a fixed 1024-byte arena at 0x40000: two mid blocks, one freed,
-- then a 500-byte request fails although 608 bytes are free (largest span 320).
INSERT INTO run VALUES (1, './embedded', 'arena=1024', 'testhost', '0.1.0', 1000000000,
                        1000, 6000, 0, 6, 0, 1024);
INSERT INTO process VALUES (200, 1, 'embedded', 'arena=1024', 1000000000, 1000, 6000);
INSERT INTO thread VALUES (200, 200, 'embedded');
INSERT INTO os_region VALUES (1, 1000, 200, 200, 'map', 262144, 1024, 'arena'); -- 0x40000
-- A1 300/304 at 0x40010 -> [0x40000, 0x40140)
INSERT INTO block VALUES (1, 200, 262160, 300, 304, 2, -1, 2, 2000, 200, 5, 100, NULL, 4, 4000, 200, 11, 60, NULL, NULL, 0);
-- A2 400/400 at 0x40150 -> [0x40140, 0x402E0), live at exit
INSERT INTO block VALUES (2, 200, 262480, 400, 400, 2, -1, 3, 3000, 200, 5, 120, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
-- F1: 500 bytes, failed
INSERT INTO block VALUES (3, 200, 0, 500, 0, 2, -1, 5, 5000, 200, 8, 40, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 1);
