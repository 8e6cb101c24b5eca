-- tests/analyzer/basic.sql — a small hand-made run: one process, one thread, a TLSF pool of
-- 4096 B at 0x10000 and a slab segment of 4096 B at 0x20000 (H = 8192), three mid blocks,
-- two tiny blocks, one orphan free, one error. Loaded after schemas/heapledger.sql.
-- Expected metrics are worked out by hand in tests/analyzer/README.md.
INSERT INTO run VALUES (1, './prog --basic', '', 'testhost', '0.1.0', 2000000000,
                        1000, 11000, 0, 11, 0, 0);
INSERT INTO process VALUES (100, 1, 'prog', '', 2000000000, 1000, 11000);
INSERT INTO thread VALUES (100, 101, 'prog');

INSERT INTO os_region VALUES (1, 1000, 100, 101, 'map', 65536, 4096, 'tlsf_pool');      -- 0x10000
INSERT INTO os_region VALUES (2, 1000, 100, 101, 'map', 131072, 4096, 'slab_segment'); -- 0x20000

-- id pid ptr size usable tier class | alloc: seq ts tid path cycles stack | free: seq ts tid path cycles stack | prev flags
-- B1 mid 100/112 at 0x10010 -> [0x10000, 0x10080)
INSERT INTO block VALUES (1, 100, 65552, 100, 112, 2, -1, 3, 2000, 101, 5, 100, 1, 6, 5000, 101, 11, 50, 1, NULL, 0);
-- B2 mid 200/208 at 0x10090 -> [0x10080, 0x10160), live at exit
INSERT INTO block VALUES (2, 100, 65680, 200, 208, 2, -1, 4, 3000, 101, 5, 200, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
-- B3 mid 50/64 at 0x10170 -> [0x10160, 0x101B0)
INSERT INTO block VALUES (3, 100, 65904, 50, 64, 2, -1, 5, 4000, 101, 5, 300, 2, 9, 8000, 101, 12, 80, 2, NULL, 0);
-- T1 tiny class 0, 10/15, live at exit
INSERT INTO block VALUES (4, 100, 131088, 10, 15, 1, 0, 7, 6000, 101, 1, 20, 3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0);
-- T2 tiny class 7, 120/127, temporary (freed before the thread allocated again)
INSERT INTO block VALUES (5, 100, 131104, 120, 127, 1, 7, 8, 7000, 101, 2, 400, 3, 10, 9000, 101, 9, 10, 3, NULL, 0);

INSERT INTO orphan_free VALUES (11, 9500, 100, 101, 3735928559, 9, 30, NULL);

INSERT INTO error VALUES (1, 9600, 100, 101, 'double-free', 65552, 100, 2, -1,
                          'block already free', 2, 1, 1);

INSERT INTO stack VALUES (1, 100, 3), (2, 100, 3), (3, 100, 3);
INSERT INTO frame VALUES (1, 0, 4096, 'malloc', 16, '', 0, '/usr/lib/libheapledger.so');
INSERT INTO frame VALUES (1, 1, 4352, 'make_node', 16, 'node.c', 42, '/tmp/prog');
INSERT INTO frame VALUES (1, 2, 4608, 'main', 32, 'main.c', 7, '/tmp/prog');
INSERT INTO frame VALUES (2, 0, 4096, 'malloc', 16, '', 0, '/usr/lib/libheapledger.so');
INSERT INTO frame VALUES (2, 1, 4864, 'parse_line', 5, 'parse.c', 10, '/tmp/prog');
INSERT INTO frame VALUES (2, 2, 4608, 'main', 48, 'main.c', 9, '/tmp/prog');
INSERT INTO frame VALUES (3, 0, 4096, 'malloc', 16, '', 0, '/usr/lib/libheapledger.so');
-- An unsymbolised frame: an absolute return address, its offset from the module's base.
INSERT INTO frame VALUES (3, 1, 140484487041610, NULL, 5194, NULL, 0, '/tmp/prog');
INSERT INTO frame VALUES (3, 2, 4608, 'main', 64, 'main.c', 11, '/tmp/prog');
