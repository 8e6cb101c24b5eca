-- heapledger benchmark: an sqlite3 workload (in-memory database, deterministic sizes and keys). @ROWS@ is replaced by the
-- runner (100000 rows; 10000 with BENCH_QUICK=1).
PRAGMA cache_size = -65536;
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, name TEXT, payload BLOB);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < @ROWS@)
INSERT INTO t(k, name, payload)
SELECT (i * 7919) % 1000, printf('name-%d-%s', i, hex(randomblob(6))), randomblob(40 + i % 200)
FROM c;
CREATE INDEX t_k ON t(k);
CREATE INDEX t_name ON t(name);
SELECT 'groups', count(*) FROM (SELECT k, count(*), sum(length(payload)) FROM t GROUP BY k);
UPDATE t SET name = name || '-x', payload = randomblob(30) WHERE k % 3 = 0;
DELETE FROM t WHERE k % 5 = 0;
SELECT 'rows', count(*) FROM t;
SELECT 'top', count(*) FROM (SELECT name FROM t ORDER BY name DESC LIMIT 1000);
