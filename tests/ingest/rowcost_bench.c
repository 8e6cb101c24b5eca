/* tests/ingest/rowcost_bench.c — what SQLite's part of block_data costs per block, for row
 * layouts the store does not use (yet): the question of docs/PERFORMANCE.md, "SQLite's
 * fixed cost per block row".
 *
 *   rowcost_bench SRC.db OUT.db K [ROWS]   K blocks per row (7 K columns), ROWS rows per
 *                                          INSERT ... VALUES (default 128 / K: the store's
 *                                          896 parameters per statement)
 *   rowcost_bench SRC.db OUT.db vt         one block per row, INSERT ... SELECT from an
 *                                          eponymous virtual table over the rows (no binds)
 *
 * Reads SRC's block_data (schema version 4: seven packed columns) into memory, then inserts
 * it into a new OUT.db the way the store does (no journal, synchronous off, 16 MiB cache, one
 * transaction, rowids appended; a parameter bound only when its value changed). Only
 * rc_insert_all() is the measured part: run it under `valgrind --tool=callgrind
 * --toggle-collect=rc_insert_all` (tests/ingest/rowcost_bench.sh).
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NC 7 /* block_data's packed columns (schemas/hl_blockfmt.h) */

typedef struct {
    int64_t v;
    int set;
} bound_t;

static int64_t (*rows)[NC];
static int nrows, K, R, use_vt;
static sqlite3 *db;
static sqlite3_stmt *st;
static bound_t *bd;

static void die(const char *what)
{
    fprintf(stderr, "rowcost_bench: %s: %s\n", what, db ? sqlite3_errmsg(db) : "?");
    exit(1);
}

/* The virtual table: rows[0 .. nrows) with their seven columns. */
typedef struct {
    sqlite3_vtab_cursor base;
    int i;
} cur_t;

static int vt_connect(sqlite3 *d, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
                      char **err)
{
    (void)aux, (void)argc, (void)argv, (void)err;
    int rc = sqlite3_declare_vtab(d, "CREATE TABLE x(c0, c1, c2, c3, c4, c5, c6)");
    if (rc != SQLITE_OK) return rc;
    *out = sqlite3_malloc(sizeof **out);
    if (!*out) return SQLITE_NOMEM;
    memset(*out, 0, sizeof **out);
    return SQLITE_OK;
}
static int vt_disconnect(sqlite3_vtab *v)
{
    sqlite3_free(v);
    return SQLITE_OK;
}
static int vt_best_index(sqlite3_vtab *v, sqlite3_index_info *info)
{
    (void)v;
    info->estimatedCost = 1e6;
    return SQLITE_OK;
}
static int vt_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out)
{
    (void)v;
    cur_t *c = sqlite3_malloc(sizeof *c);
    if (!c) return SQLITE_NOMEM;
    memset(c, 0, sizeof *c);
    *out = &c->base;
    return SQLITE_OK;
}
static int vt_close(sqlite3_vtab_cursor *c)
{
    sqlite3_free(c);
    return SQLITE_OK;
}
static int vt_filter(sqlite3_vtab_cursor *c, int n, const char *s, int argc, sqlite3_value **argv)
{
    (void)n, (void)s, (void)argc, (void)argv;
    ((cur_t *)c)->i = 0;
    return SQLITE_OK;
}
static int vt_next(sqlite3_vtab_cursor *c)
{
    ((cur_t *)c)->i++;
    return SQLITE_OK;
}
static int vt_eof(sqlite3_vtab_cursor *c)
{
    return ((cur_t *)c)->i >= nrows;
}
static int vt_column(sqlite3_vtab_cursor *c, sqlite3_context *ctx, int col)
{
    sqlite3_result_int64(ctx, rows[((cur_t *)c)->i][col]);
    return SQLITE_OK;
}
static int vt_rowid(sqlite3_vtab_cursor *c, sqlite3_int64 *out)
{
    *out = ((cur_t *)c)->i;
    return SQLITE_OK;
}
static const sqlite3_module vt_module = {
    .xConnect = vt_connect,
    .xBestIndex = vt_best_index,
    .xDisconnect = vt_disconnect,
    .xDestroy = vt_disconnect,
    .xOpen = vt_open,
    .xClose = vt_close,
    .xFilter = vt_filter,
    .xNext = vt_next,
    .xEof = vt_eof,
    .xColumn = vt_column,
    .xRowid = vt_rowid,
};

/* The measured part: every block into OUT's block_data. */
__attribute__((noinline)) void rc_insert_all(void)
{
    if (use_vt) {
        if (sqlite3_step(st) != SQLITE_DONE) die("inserting");
        sqlite3_reset(st);
        return;
    }
    int per = R * K; /* blocks per statement; the tail that fills no statement is left out */
    for (int i = 0; i + per <= nrows; i += per) {
        int p = 1;
        for (int b = 0; b < per; b++)
            for (int c = 0; c < NC; c++, p++) {
                int64_t v = rows[i + b][c];
                if (bd[p].set && bd[p].v == v) continue;
                bd[p].set = 1;
                bd[p].v = v;
                sqlite3_bind_int64(st, p, v);
            }
        if (sqlite3_step(st) != SQLITE_DONE) die("inserting");
        sqlite3_reset(st);
    }
}

static void load(const char *path)
{
    sqlite3 *src;
    sqlite3_stmt *q;
    if (sqlite3_open_v2(path, &src, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(src, "SELECT count(*) FROM block_data", -1, &q, NULL) != SQLITE_OK ||
        sqlite3_step(q) != SQLITE_ROW) {
        fprintf(stderr, "rowcost_bench: %s: not a heapledger database of schema version 4 (%s)\n",
                path, sqlite3_errmsg(src));
        exit(1);
    }
    nrows = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
    rows = calloc(nrows ? nrows : 1, sizeof *rows);
    if (!rows) exit(1);
    if (sqlite3_prepare_v2(src,
                           "SELECT coalesce(dptr,0), coalesce(kind,0), coalesce(ats,0),"
                           " coalesce(cyc,0), coalesce(stk,0), coalesce(fr,0), coalesce(misc,0)"
                           " FROM block_data ORDER BY id",
                           -1, &q, NULL) != SQLITE_OK)
        exit(1);
    for (int i = 0; i < nrows && sqlite3_step(q) == SQLITE_ROW; i++)
        for (int c = 0; c < NC; c++)
            rows[i][c] = sqlite3_column_int64(q, c);
    sqlite3_finalize(q);
    sqlite3_close(src);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr,
                "usage: rowcost_bench SRC.db OUT.db K [ROWS] | rowcost_bench SRC.db OUT.db vt\n");
        return 2;
    }
    use_vt = strcmp(argv[3], "vt") == 0;
    K = use_vt ? 1 : atoi(argv[3]);
    R = argc > 4 ? atoi(argv[4]) : 128 / (K ? K : 1);
    if (K < 1 || R < 1 || K * R * NC > 32766) {
        fprintf(stderr, "rowcost_bench: K and ROWS must be positive, K * ROWS * 7 at most 32766\n");
        return 2;
    }
    load(argv[1]);
    remove(argv[2]);
    if (sqlite3_open_v2(argv[2], &db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK ||
        sqlite3_exec(db,
                     "PRAGMA synchronous = OFF; PRAGMA journal_mode = OFF;"
                     " PRAGMA cache_size = -16384",
                     NULL, NULL, NULL) != SQLITE_OK)
        die(argv[2]);
    size_t cap = 64 + (size_t)K * NC * 16 + (size_t)R * (K * NC * 2 + 3);
    char *sql = malloc(cap), *s = sql;
    if (!sql) return 1;
    s += sprintf(s, "CREATE TABLE block_data(id INTEGER PRIMARY KEY");
    for (int k = 0; k < K; k++)
        for (int c = 0; c < NC; c++)
            s += sprintf(s, ", c%d_%d INTEGER", k, c);
    sprintf(s, ")");
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) die("creating");
    s = sql;
    s += sprintf(s, "INSERT INTO block_data(");
    for (int k = 0; k < K; k++)
        for (int c = 0; c < NC; c++)
            s += sprintf(s, "%sc%d_%d", k || c ? "," : "", k, c);
    if (use_vt) {
        if (sqlite3_create_module_v2(db, "rc_rows", &vt_module, NULL, NULL) != SQLITE_OK)
            die("module");
        sprintf(s, ") SELECT c0, c1, c2, c3, c4, c5, c6 FROM rc_rows");
    } else {
        s += sprintf(s, ") VALUES ");
        for (int r = 0; r < R; r++) {
            s += sprintf(s, "%s(", r ? "," : "");
            for (int j = 0; j < K * NC; j++)
                s += sprintf(s, "%s?", j ? "," : "");
            s += sprintf(s, ")");
        }
    }
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
        die("preparing");
    free(sql);
    bd = calloc((size_t)K * R * NC + 1, sizeof *bd);
    if (!bd || sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) die("begin");
    rc_insert_all();
    if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) die("commit");
    int stored = use_vt ? nrows : nrows / (R * K) * (R * K);
    sqlite3_finalize(st);
    sqlite3_close(db);
    printf("blocks %d\n", stored);
    return 0;
}
