-- tests/analyzer/leakneg.sql — leakclass.sql (loaded before this) with free_seq values that
-- heapledger never writes: below 0 (blocks 1 and 4: no free, as for NULL, in the analysis
-- stream and in SQL alike) and -0.5 (block 3: read as the integer 0, a free).
-- Expected: definitely lost 1 block (10 B), indirectly lost 1 (20 B), still reachable 0,
-- unclassified 3 (40 + 50 + 60 = 150 B).
UPDATE block SET free_seq = -1, free_ts = 9000 WHERE id = 1;
UPDATE block SET free_seq = -9223372036854775808 WHERE id = 4;
UPDATE block SET free_seq = -0.5, free_ts = 9500 WHERE id = 3;
