/* tracer/record_summary.c — one-screen summary of a run database (record_summary.h).
 * Reads only the tables and views of schemas/heapledger.sql. */
#include "record_summary.h"
#include "../analyzer/safetext.h"

#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

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

/* Everything but the leak sites comes from one scan of `block` grouped by (alloc path, free
 * path, failed): a few rows, aggregated here (the path_cycles view is far slower on millions
 * of rows). */
typedef struct summary_s {
    int64_t allocs, failed, freed, bytes, live_bytes;
    int64_t count[256]; /* operations per path id */
    double cycles[256]; /* cycles summed per path id */
    char name[256][32]; /* path name */
    char op[256][8];    /* 'alloc', 'free', 'realloc' */
} summary_t;

static void summary_scan(sqlite3 *db, summary_t *m)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT id, name, op FROM path", -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            int id = sqlite3_column_int(st, 0);
            if (id < 0 || id > 255) continue;
            snprintf(m->name[id], sizeof m->name[id], "%s", sqlite3_column_text(st, 1));
            snprintf(m->op[id], sizeof m->op[id], "%s", sqlite3_column_text(st, 2));
        }
        sqlite3_finalize(st);
    }
    if (sqlite3_prepare_v2(db,
                           "SELECT alloc_path, free_path, flags & 1, count(*), count(free_seq), "
                           "total(alloc_cycles), total(free_cycles), total(size), "
                           "total(CASE WHEN free_seq IS NULL THEN size END) "
                           "FROM block GROUP BY 1, 2, 3",
                           -1, &st, NULL) != SQLITE_OK)
        return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int ap = sqlite3_column_int(st, 0), fp = sqlite3_column_int(st, 1);
        int64_t n = sqlite3_column_int64(st, 3), nf = sqlite3_column_int64(st, 4);
        if (sqlite3_column_int(st, 2)) {
            m->failed += n;
            continue;
        }
        m->allocs += n;
        m->freed += nf;
        m->bytes += (int64_t)sqlite3_column_double(st, 7);
        m->live_bytes += (int64_t)sqlite3_column_double(st, 8);
        if (ap > 0 && ap < 256) {
            m->count[ap] += n;
            m->cycles[ap] += sqlite3_column_double(st, 5);
        }
        if (fp > 0 && fp < 256) {
            m->count[fp] += nf;
            m->cycles[fp] += sqlite3_column_double(st, 6);
        }
    }
    sqlite3_finalize(st);
}

/* The busiest paths, most operations first, with their mean cost. */
static void summary_paths(FILE *f, const summary_t *m, double tsc_hz)
{
    int done[256] = {0};
    for (int row = 0; row < 6; row++) {
        int best = -1;
        for (int p = 1; p < 256; p++)
            if (!done[p] && m->count[p] && (best < 0 || m->count[p] > m->count[best])) best = p;
        if (best < 0) break;
        done[best] = 1;
        double cyc = m->cycles[best] / (double)m->count[best];
        fprintf(f, "  %-12s %-7s %-18s %12lld  %8.0f cycles", row ? "" : "paths",
                hl_safe(m->op[best]), m->name[best][0] ? hl_safe(m->name[best]) : "?",
                (long long)m->count[best], cyc);
        if (tsc_hz > 0) fprintf(f, " (%.0f ns)", cyc * 1e9 / tsc_hz);
        fputc('\n', f);
    }
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
                human(b, sizeof b, sqlite3_column_double(st, 1)), fn ? hl_safe(fn) : "?");
        if (file)
            fprintf(f, " (%s:%d)", hl_safe(file), sqlite3_column_int(st, 4));
        else if (mod)
            fprintf(f, " (%s)", hl_safe(mod));
        fputc('\n', f);
        first = 0;
    }
    sqlite3_finalize(st);
}

int hl_record_summary(FILE *f, const char *db_path)
{
    sqlite3 *db;
    /* Read-write although only read: a read-only connection to a WAL database leaves its
     * -wal and -shm files behind when it closes; this one checkpoints and removes them. */
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        fprintf(f, "heapledger record: cannot read %s: %s\n", db_path, sqlite3_errmsg(db));
        sqlite3_close(db);
        return -1;
    }
    static summary_t m;
    memset(&m, 0, sizeof m);
    summary_scan(db, &m);
    char b1[32];
    int64_t events = q_int(db, "SELECT sum(events) FROM run", 0);
    int64_t discarded = q_int(db, "SELECT sum(discarded_events) FROM run", 0);
    double tsc_hz = (double)q_int(db, "SELECT max(tsc_hz) FROM run", 0);
    int64_t procs = q_int(db, "SELECT count(*) FROM process", 0);
    int64_t threads = q_int(db, "SELECT count(*) FROM thread", 0);
    int64_t orphans = q_int(db, "SELECT count(*) FROM orphan_free", 0);
    int64_t errors = q_int(db, "SELECT count(*) FROM error", 0);
    int64_t live = m.allocs - m.freed;

    fprintf(f, "  %-12s %lld recorded, %lld lost%s\n", "events", (long long)events,
            (long long)discarded,
            discarded ? "  (recorded with --lossy or buffers too small)" : "");
    fprintf(f, "  %-12s %lld processes, %lld threads\n", "traced", (long long)procs,
            (long long)threads);
    fprintf(f, "  %-12s %lld (%s requested), %lld failed\n", "allocations", (long long)m.allocs,
            human(b1, sizeof b1, (double)m.bytes), (long long)m.failed);
    fprintf(f, "  %-12s %lld, and %lld of blocks allocated before tracing began\n", "frees",
            (long long)m.freed, (long long)orphans);
    fprintf(f, "  %-12s %lld blocks, %s\n", "live at exit", (long long)live,
            human(b1, sizeof b1, (double)m.live_bytes));
    if (errors) fprintf(f, "  %-12s %lld heap errors detected\n", "errors", (long long)errors);
    summary_paths(f, &m, tsc_hz);
    if (live) summary_leaks(f, db);
    sqlite3_close(db);
    return 0;
}
