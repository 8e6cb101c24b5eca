-- tests/analyzer/oldversion.sql — applied over basic.sql: a database of schema version 2
-- (block_data in fifteen columns, before version 3).
PRAGMA user_version = 2;
