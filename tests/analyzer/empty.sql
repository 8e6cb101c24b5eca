-- tests/analyzer/empty.sql — a run that recorded nothing.
INSERT INTO run VALUES (1, '/bin/true', '', 'testhost', '0.1.0', 1000000000, 1000, 2000, 0, 0, 0, 0);
