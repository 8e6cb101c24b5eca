-- tests/analyzer/badversion.sql — applied over basic.sql: a database of an older schema version (1).
PRAGMA user_version = 1;
