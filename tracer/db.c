/* tracer/db.c — create and open heapledger run databases.
 *
 * The schema text (schemas/heapledger.sql, heapledger_index.sql) is compiled into the binary
 * with .incbin (paths relative to the top of the tree, where make runs the compiler), so a
 * database created by any heapledger binary carries exactly the schema of its version. The
 * path table is filled from schemas/paths.def at creation.
 */
#include "db.h"
#include "hl_schema.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

__asm__(".pushsection .rodata\n"
        ".global hl_db_schema_sql\n"
        "hl_db_schema_sql:\n"
        ".incbin \"schemas/heapledger.sql\"\n"
        ".byte 0\n"
        ".global hl_db_index_sql\n"
        "hl_db_index_sql:\n"
        ".incbin \"schemas/heapledger_index.sql\"\n"
        ".byte 0\n"
        ".popsection\n");
extern const char hl_db_schema_sql[];
extern const char hl_db_index_sql[];

int hl_db_exec(sqlite3 *db, const char *sql, const char *what, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK) return 0;
    int code = sqlite3_extended_errcode(db);
    if ((code & 0xff) == SQLITE_FULL)
        snprintf(err, errlen, "%s: disk full (%s)", what, msg ? msg : "");
    else
        snprintf(err, errlen, "%s: %s", what, msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return -1;
}

int hl_db_check_version(sqlite3 *db, const char *path, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL);
    if (rc != SQLITE_OK) {
        snprintf(err, errlen, "%s: not an SQLite database (%s)", path, sqlite3_errmsg(db));
        return -1;
    }
    int version = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    if (version == HL_DB_SCHEMA_VERSION) {
        /* user_version alone could be any SQLite file's: require our block table too. */
        rc = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE name = 'block'", -1, &st,
                                NULL);
        int ok = rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
        if (ok) return 0;
        snprintf(err, errlen, "%s: not a heapledger run database (no block table)", path);
        return -1;
    }
    if (version == 0)
        snprintf(err, errlen, "%s: not a heapledger run database (schema version 0)", path);
    else if (version < 0)
        snprintf(err, errlen, "%s: not a readable SQLite database (%s)", path, sqlite3_errmsg(db));
    else if (version < HL_DB_SCHEMA_VERSION)
        /* Not migrated: version 1 has no block_data, and the trace is the source of truth. */
        snprintf(err, errlen,
                 "%s: run database schema version %d, this heapledger reads version %d "
                 "(an older heapledger wrote it: ingest its trace again with "
                 "`heapledger collect TRACE -o NEW.db`, or read it with the heapledger that "
                 "wrote it)",
                 path, version, HL_DB_SCHEMA_VERSION);
    else
        snprintf(err, errlen,
                 "%s: run database schema version %d, this heapledger reads version %d "
                 "(re-ingest the trace with a matching heapledger)",
                 path, version, HL_DB_SCHEMA_VERSION);
    return -1;
}

sqlite3 *hl_db_open_read(const char *path, char *err, size_t errlen)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        return NULL;
    }
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: cannot open: %s", path, db ? sqlite3_errmsg(db) : "?");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, HL_DB_BUSY_MS);
    if (hl_db_check_version(db, path, err, errlen) != 0) {
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

static void remove_db_files(const char *path)
{
    char side[4096];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-journal", path);
    unlink(side);
}

/* The path table: every path of schemas/paths.def with its operation. */
static int fill_paths(sqlite3 *db, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO path(id, name, op) VALUES (?,?,?)", -1, &st,
                           NULL) != SQLITE_OK) {
        snprintf(err, errlen, "filling the path table: %s", sqlite3_errmsg(db));
        return -1;
    }
    int rc = 0;
    for (unsigned p = 1; p < HL_PATH_COUNT && !rc; p++) {
        sqlite3_bind_int(st, 1, (int)p);
        sqlite3_bind_text(st, 2, hl_path_name(p), -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, hl_op_name(hl_path_op(p)), -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE) {
            snprintf(err, errlen, "filling the path table: %s",
                     (sqlite3_errcode(db) & 0xff) == SQLITE_FULL ? "disk full"
                                                                 : sqlite3_errmsg(db));
            rc = -1;
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

sqlite3 *hl_db_create(const char *path, int force, char *err, size_t errlen)
{
    struct stat sb;
    if (lstat(path, &sb) == 0) {
        if (!force) {
            snprintf(err, errlen, "%s: output file exists (use --force to replace it)", path);
            return NULL;
        }
        if (!S_ISREG(sb.st_mode)) {
            snprintf(err, errlen, "%s: exists and is not a regular file", path);
            return NULL;
        }
        remove_db_files(path);
    }
    /* Create the file ourselves first: errno then names the real problem (read-only file
     * system, missing directory, permissions), which sqlite's message hides. */
    /* O_EXCL|O_NOFOLLOW: never through a symlink planted at a predictable name; 0600: the
     * run database holds the full command line and its options (sqlite gives its -wal and
     * -shm files the same mode). */
    int fd = open(path, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        return NULL;
    }
    close(fd);
    /* No global memory statistics: they take a mutex on every sqlite allocation. Only
     * possible before sqlite is initialised; harmless (SQLITE_MISUSE) afterwards. */
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3 *db = NULL;
    /* NOMUTEX: a connection is used by one thread at a time; the serialized mode's mutex
     * around every bind and step cost 7 % of a bulk ingest. */
    int rc = sqlite3_open_v2(
        path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        /* sqlite's "unable to open database file" hides errno: say what is wrong. */
        int e = sqlite3_system_errno(db);
        snprintf(err, errlen, "%s: cannot create: %s", path, e ? strerror(e) : sqlite3_errmsg(db));
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, HL_DB_BUSY_MS);
    char what[64];
    snprintf(what, sizeof what, "creating the schema");
    if (hl_db_exec(db, "PRAGMA journal_mode = WAL", "setting WAL mode", err, errlen) != 0 ||
        hl_db_exec(db, hl_db_schema_sql, what, err, errlen) != 0 ||
        fill_paths(db, err, errlen) != 0) {
        char e2[256];
        snprintf(e2, sizeof e2, "%s: %s", path, err);
        snprintf(err, errlen, "%s", e2);
        sqlite3_close(db);
        remove_db_files(path);
        return NULL;
    }
    return db;
}

int hl_db_create_indexes(sqlite3 *db, char *err, size_t errlen)
{
    /* Let the sorter of CREATE INDEX use a helper thread (ignored if not compiled in). */
    sqlite3_exec(db, "PRAGMA threads = 2", NULL, NULL, NULL);
    return hl_db_exec(db, hl_db_index_sql, "creating indexes", err, errlen);
}

int hl_db_mark_partial(const char *path, const char *why, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
        sqlite3_close(db);
        return -1;
    }
    sqlite3_busy_timeout(db, HL_DB_BUSY_MS);
    static const char *const sql[] = {
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('ingest_status', 'partial')",
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('ingest_warning', "
        "coalesce((SELECT value || '; ' FROM meta WHERE key = 'ingest_warning'), '') || ?1)",
    };
    int rc = hl_db_exec(db, "BEGIN IMMEDIATE", path, err, errlen);
    for (size_t i = 0; rc == 0 && i < sizeof sql / sizeof sql[0]; i++) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, sql[i], -1, &st, NULL) != SQLITE_OK ||
            (i == 1 && sqlite3_bind_text(st, 1, why, -1, SQLITE_TRANSIENT) != SQLITE_OK) ||
            sqlite3_step(st) != SQLITE_DONE) {
            snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
            rc = -1;
        }
        sqlite3_finalize(st);
    }
    if (rc == 0) rc = hl_db_exec(db, "COMMIT", path, err, errlen);
    sqlite3_close(db);
    return rc;
}
