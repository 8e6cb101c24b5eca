/* tracer/record_summary.c — one-screen summary of a run database (record_summary.h).
 * Reads only the tables and views of schemas/heapledger.sql. */
#include "record_summary.h"

#include <sqlite3.h>
#include <stdint.h>

/* First column of the first row of sql as an integer (def when no row or on error). */
static int64_t q_int(sqlite3 *db, const char *sql, int64_t def)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return def;
    int64_t v = def;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Bytes as "123 B", "4.0 KiB", "1.5 MiB", "2.0 GiB". */
static const char *human(char *buf, size_t len, double b)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
    return buf;
}

static void summary_paths(FILE *f, sqlite3 *db, double tsc_hz)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT op, path, count, mean_cycles FROM path_cycles "
                           "ORDER BY count DESC LIMIT 6",
                           -1, &st, NULL) != SQLITE_OK)
        return;
    int first = 1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        double cyc = sqlite3_column_double(st, 3);
        fprintf(f, "  %-12s %-7s %-18s %12lld  %8.0f cycles", first ? "paths" : "",
                (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1),
                (long long)sqlite3_column_int64(st, 2), cyc);
        if (tsc_hz > 0) fprintf(f, " (%.0f ns)", cyc * 1e9 / tsc_hz);
        fputc('\n', f);
        first = 0;
    }
    sqlite3_finalize(st);
}

static void summary_leaks(FILE *f, sqlite3 *db)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db,
                           "SELECT count(*), sum(l.size), fr.function, fr.file, fr.line, fr.module "
                           "FROM live_at_exit l LEFT JOIN frame fr "
                           "ON fr.stack_id = l.alloc_stack AND fr.depth = 0 "
                           "GROUP BY l.alloc_stack ORDER BY sum(l.size) DESC LIMIT 3",
                           -1, &st, NULL) != SQLITE_OK)
        return;
    int first = 1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        char b[32];
        const char *fn = (const char *)sqlite3_column_text(st, 2);
        const char *file = (const char *)sqlite3_column_text(st, 3);
        const char *mod = (const char *)sqlite3_column_text(st, 5);
        fprintf(f, "  %-12s %10lld blocks %10s  at %s", first ? "live sites" : "",
                (long long)sqlite3_column_int64(st, 0),
                human(b, sizeof b, sqlite3_column_double(st, 1)), fn ? fn : "?");
        if (file)
            fprintf(f, " (%s:%d)", file, sqlite3_column_int(st, 4));
        else if (mod)
            fprintf(f, " (%s)", mod);
        fputc('\n', f);
        first = 0;
    }
    sqlite3_finalize(st);
}

int hl_record_summary(FILE *f, const char *db_path)
{
    sqlite3 *db;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(f, "heapledger record: cannot read %s: %s\n", db_path, sqlite3_errmsg(db));
        sqlite3_close(db);
        return -1;
    }
    char b1[32];
    int64_t events = q_int(db, "SELECT sum(events) FROM run", 0);
    int64_t discarded = q_int(db, "SELECT sum(discarded_events) FROM run", 0);
    double tsc_hz = (double)q_int(db, "SELECT max(tsc_hz) FROM run", 0);
    int64_t procs = q_int(db, "SELECT count(*) FROM process", 0);
    int64_t threads = q_int(db, "SELECT count(*) FROM thread", 0);
    int64_t allocs = q_int(db, "SELECT count(*) FROM block WHERE (flags & 1) = 0", 0);
    int64_t failed = q_int(db, "SELECT count(*) FROM block WHERE (flags & 1) != 0", 0);
    int64_t freed = q_int(db, "SELECT count(*) FROM allocations WHERE free_ts IS NOT NULL", 0);
    int64_t live = q_int(db, "SELECT count(*) FROM live_at_exit", 0);
    int64_t live_bytes = q_int(db, "SELECT sum(size) FROM live_at_exit", 0);
    int64_t orphans = q_int(db, "SELECT count(*) FROM orphan_free", 0);
    int64_t errors = q_int(db, "SELECT count(*) FROM error", 0);
    int64_t bytes = q_int(db, "SELECT sum(size) FROM allocations", 0);

    fprintf(f, "  %-12s %lld recorded, %lld lost%s\n", "events", (long long)events,
            (long long)discarded,
            discarded ? "  (recorded with --lossy or buffers too small)" : "");
    fprintf(f, "  %-12s %lld processes, %lld threads\n", "traced", (long long)procs,
            (long long)threads);
    fprintf(f, "  %-12s %lld (%s requested), %lld failed\n", "allocations", (long long)allocs,
            human(b1, sizeof b1, (double)bytes), (long long)failed);
    fprintf(f, "  %-12s %lld, plus %lld of blocks allocated before tracing began\n", "frees",
            (long long)freed, (long long)orphans);
    fprintf(f, "  %-12s %lld blocks, %s\n", "live at exit", (long long)live,
            human(b1, sizeof b1, (double)live_bytes));
    if (errors) fprintf(f, "  %-12s %lld heap errors detected\n", "errors", (long long)errors);
    summary_paths(f, db, tsc_hz);
    if (live) summary_leaks(f, db);
    sqlite3_close(db);
    return 0;
}
