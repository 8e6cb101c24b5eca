/* analyzer/rundb.c — see rundb.h. */
#include "rundb.h"

#include "db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

sqlite3 *hl_an_open(const char *path, char *err, size_t errlen)
{
    /* The file and schema-version checks are the tracer's (tracer/db.h), one for all
     * readers; the analyzer adds the tables it reads and its read pragmas. */
    sqlite3 *db = hl_db_open_read(path, err, errlen);
    if (!db) return NULL;
    static const char *const tables[] = {"run",       "block", "orphan_free", "stack", "frame",
                                         "os_region", "error", "process",     "thread"};
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
        char q[160];
        /* block is a view over block_data since schema version 2. */
        snprintf(q, sizeof q,
                 "SELECT count(*) FROM sqlite_master WHERE type IN ('table', 'view') AND "
                 "name='%s'",
                 tables[i]);
        if (hl_an_int(db, q, 0) != 1) {
            snprintf(err, errlen, "%s: not a heapledger run database (no table '%s')", path,
                     tables[i]);
            sqlite3_close(db);
            return NULL;
        }
    }
    sqlite3_exec(db,
                 "PRAGMA cache_size=-65536; PRAGMA mmap_size=0;"
                 "PRAGMA temp_store=MEMORY;",
                 NULL, NULL, NULL);
    return db;
}

int64_t hl_an_int(sqlite3 *db, const char *sql, int64_t def)
{
    sqlite3_stmt *st = NULL;
    int64_t v = def;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
        sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

char *hl_col_strdup(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return strdup(s ? (const char *)s : "");
}

int hl_run_load(sqlite3 *db, const char *path, int64_t pid, hl_run_t *run, char *err, size_t errlen)
{
    memset(run, 0, sizeof *run);
    run->path = strdup(path);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db,
                           "SELECT command, options, host, version, tsc_hz, start_ts, end_ts, "
                           "exit_status, events, discarded_events, arena_size FROM run "
                           "ORDER BY id LIMIT 1",
                           -1, &st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: cannot read the run table: %s", path, sqlite3_errmsg(db));
        return -1;
    }
    if (sqlite3_step(st) == SQLITE_ROW) {
        run->command = hl_col_strdup(st, 0);
        run->options = hl_col_strdup(st, 1);
        run->host = hl_col_strdup(st, 2);
        run->version = hl_col_strdup(st, 3);
        run->tsc_hz = hl_col_i64(st, 4, 0);
        run->start_ts = hl_col_i64(st, 5, -1);
        run->end_ts = hl_col_i64(st, 6, -1);
        run->exit_status = hl_col_i64(st, 7, -1);
        run->events = hl_col_i64(st, 8, 0);
        run->discarded = hl_col_i64(st, 9, 0);
        run->arena_size = hl_col_i64(st, 10, 0);
    } else {
        run->command = strdup("");
        run->options = strdup("");
        run->host = strdup("");
        run->version = strdup("");
        run->start_ts = run->end_ts = run->exit_status = -1;
    }
    sqlite3_finalize(st);
    /* Discarded counts may carry bit 63 (lttng list): mask it. */
    run->discarded &= INT64_MAX;

    char w[64] = "";
    if (pid > 0) snprintf(w, sizeof w, " WHERE pid = %lld", (long long)pid);
    char q[256];
#define COUNT(field, table)                                                                        \
    snprintf(q, sizeof q, "SELECT count(*) FROM %s%s", table, w);                                  \
    run->field = hl_an_int(db, q, 0)
    snprintf(q, sizeof q, "SELECT count(*) FROM (SELECT 1 FROM block%s LIMIT 1)", w);
    run->has_blocks = hl_an_int(db, q, 0);
    COUNT(orphan_frees, "orphan_free");
    COUNT(os_regions, "os_region");
    COUNT(errors, "error");
    COUNT(threads, "thread");
#undef COUNT
    run->processes = pid > 0 ? 1 : hl_an_int(db, "SELECT count(*) FROM process", 0);
    if (run->processes == 0)
        run->processes = hl_an_int(db, "SELECT count(DISTINCT pid) FROM block", 0);
    /* The last block's allocation, one rowid lookup (ids are in allocation order; in a
     * hand-made database where they are not, this is only a progress bar's end): max()
     * of either seq would scan the table (0.4 s at 10 M events). Frees after the last
     * allocation are past this mark. */
    int64_t ms = hl_an_int(db, "SELECT alloc_seq FROM block ORDER BY id DESC LIMIT 1", 0);
    int64_t mo = hl_an_int(db, "SELECT max(seq) FROM orphan_free", 0);
    run->max_seq = ms > mo ? ms : mo;
    if (run->start_ts < 0) {
        int64_t a = hl_an_int(db, "SELECT min(alloc_ts) FROM block", -1);
        int64_t o = hl_an_int(db, "SELECT min(ts) FROM orphan_free", -1);
        run->start_ts = a < 0 ? o : (o < 0 || a < o ? a : o);
        if (run->start_ts < 0) run->start_ts = 0;
    }
    if (run->end_ts < run->start_ts) {
        int64_t a =
            hl_an_int(db, "SELECT max(max(alloc_ts), coalesce(max(free_ts), 0)) FROM block", 0);
        int64_t o = hl_an_int(db, "SELECT max(ts) FROM orphan_free", 0);
        run->end_ts = a > o ? a : o;
        if (run->end_ts < run->start_ts) run->end_ts = run->start_ts;
    }
    run->start_ts = hl_ts(run->start_ts);
    run->end_ts = hl_ts(run->end_ts);
    if (run->end_ts < run->start_ts) run->end_ts = run->start_ts;
    if (run->events == 0)
        run->events = hl_an_int(db, "SELECT count(*) FROM block", 0) +
                      hl_an_int(db, "SELECT count(*) FROM block WHERE free_seq IS NOT NULL", 0) +
                      run->orphan_frees;
    (void)err;
    (void)errlen;
    return 0;
}

void hl_run_free(hl_run_t *run)
{
    free(run->path);
    free(run->command);
    free(run->options);
    free(run->host);
    free(run->version);
    memset(run, 0, sizeof *run);
}
