-- tests/analyzer/badversion.sql — applied over basic.sql: a database of another schema version.
PRAGMA user_version = 2;
