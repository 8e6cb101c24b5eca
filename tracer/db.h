/* tracer/db.h — opening and creating heapledger run databases (schemas/heapledger.sql).
 *
 * The schema version is PRAGMA user_version. Readers (the analyzer) use hl_db_open_read(),
 * which refuses a file that is not a heapledger database or has another schema version with
 * a message naming the file and both versions. Link with tracer/db.o and -lsqlite3.
 */
#ifndef HL_DB_H
#define HL_DB_H

#include <stddef.h>
#include <sqlite3.h>

/* Schema version this build writes and reads. */
#define HL_DB_SCHEMA_VERSION 4

/* How long a connection waits for another one's lock (sqlite3_busy_timeout). */
#define HL_DB_BUSY_MS 5000

/* Open an existing run database read-only. On error returns NULL and writes a one-line
 * message (no trailing newline) into err[errlen]. */
sqlite3 *hl_db_open_read(const char *path, char *err, size_t errlen);

/* Check that an open database is a heapledger run database of HL_DB_SCHEMA_VERSION.
 * Returns 0, or -1 with a message in err. */
int hl_db_check_version(sqlite3 *db, const char *path, char *err, size_t errlen);

/* Create a new run database at path with the v1 schema (tables and views, no indexes), in
 * WAL mode. Fails if path exists unless force (then the old file and its -wal/-shm are
 * removed). Returns NULL with a message in err on error. */
sqlite3 *hl_db_create(const char *path, int force, char *err, size_t errlen);

/* Create the indexes (schemas/heapledger_index.sql); called after the bulk load.
 * Returns 0, or -1 with a message in err. */
int hl_db_create_indexes(sqlite3 *db, char *err, size_t errlen);

/* Mark a finished run database as partial (meta ingest_status 'partial', ingest_warning why,
 * appended to a warning already there): the recording ended without all of its trace, for
 * instance a daemon died or the session's trace was not complete when it was destroyed.
 * Returns 0, or -1 with a message in err. */
int hl_db_mark_partial(const char *path, const char *why, char *err, size_t errlen);

/* Run a statement list; returns 0 or -1 with "what: sqlite message" in err. */
int hl_db_exec(sqlite3 *db, const char *sql, const char *what, char *err, size_t errlen);

#endif
