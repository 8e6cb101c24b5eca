/* tracer/record_summary.c — one-screen summary of a run database (record_summary.h).
 * Reads only the tables and views of schemas/heapledger.sql. */
#include "record_summary.h"
#include "../analyzer/leakclass.h"
#include "../analyzer/safetext.h"

#include "suppress.h"

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
 * path, flags): a few rows, aggregated here (the path_cycles view is far slower on millions
 * of rows). Each call is counted once, by the call made, with the rules of the report
 * (docs/metrics.md, "Counts"): a block's start is its malloc-family call or its realloc;
 * its end is a free, or the realloc(p, 0) that freed it (flags 4, with the realloc's
 * cycles), or nothing of its own (the old side of a realloc that started a block: flags 4,
 * free_cycles NULL; an end inferred from a reuse, flags 8). */
enum { OP_ALLOC = 1, OP_FREE, OP_REALLOC };

typedef struct summary_s {
    int64_t allocs, frees, reallocs, failed, orphans, blocks, bytes, live, live_bytes;
    int64_t count[4][256];  /* calls per op and path id */
    double cycles[4][256];  /* cycles summed per op and path id */
    char name[256][32];     /* path name */
    unsigned char pop[256]; /* the path's own op (path table) */
} summary_t;

static const char *const op_name[4] = {"?", "alloc", "free", "realloc"};

static void summary_path(summary_t *m, int op, int path, int64_t n, double cycles)
{
    if (path < 0 || path > 255) path = 0;
    m->count[op][path] += n;
    m->cycles[op][path] += cycles;
}

/* The per-group figures: from block_totals, which the ingest filled as it stored the rows
 * (tracer/ingest_totals.c), when it covers every block row; else (a database made before
 * block_totals, rows changed since) from a scan of every row, the same columns in the same
 * order. blocks: the block rows the ingest wrote (-1: unknown), which spares the count of
 * block_data — a walk of every page of the table (0.08–0.11 s at 10 M events, growing with
 * the trace) — when block_totals covers them. */
static const char *block_groups_sql(sqlite3 *db, int64_t blocks)
{
    int covered =
        blocks >= 0 &&
        q_int(db, "SELECT CAST(total(blocks) AS INTEGER) FROM block_totals", -1) == blocks;
    if (!covered)
        covered = q_int(db,
                        "SELECT (SELECT total(blocks) FROM block_totals) = "
                        "(SELECT count(*) FROM block_data)",
                        0) == 1;
    if (covered)
        return "SELECT alloc_path, free_path, flags, blocks, freed, alloc_cycles, free_cycles, "
               "bytes, live_bytes, free_cycles_n FROM block_totals";
    return "SELECT alloc_path, free_path, flags, count(*), count(free_seq), "
           "total(alloc_cycles), total(free_cycles), total(size), "
           "total(CASE WHEN free_seq IS NULL THEN size END), "
           "count(free_cycles) FROM block GROUP BY 1, 2, 3";
}

static void summary_scan(sqlite3 *db, summary_t *m, int64_t blocks)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT id, name, op FROM path", -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            int id = sqlite3_column_int(st, 0);
            if (id < 0 || id > 255) continue;
            const char *op = (const char *)sqlite3_column_text(st, 2);
            snprintf(m->name[id], sizeof m->name[id], "%s", sqlite3_column_text(st, 1));
            for (int k = 1; k < 4; k++)
                if (op && !strcmp(op, op_name[k])) m->pop[id] = (unsigned char)k;
        }
        sqlite3_finalize(st);
    }
    if (sqlite3_prepare_v2(db, block_groups_sql(db, blocks), -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            int ap = sqlite3_column_int(st, 0), fp = sqlite3_column_int(st, 1);
            int flags = sqlite3_column_int(st, 2);
            int64_t n = sqlite3_column_int64(st, 3), nf = sqlite3_column_int64(st, 4);
            int op = flags & 2 ? OP_REALLOC : OP_ALLOC;
            *(op == OP_REALLOC ? &m->reallocs : &m->allocs) += n;
            summary_path(m, op, ap, n, sqlite3_column_double(st, 5));
            if (flags & 1) {
                m->failed += n;
                continue;
            }
            m->blocks += n;
            m->live += n - nf;
            m->bytes += (int64_t)sqlite3_column_double(st, 7);
            m->live_bytes += (int64_t)sqlite3_column_double(st, 8);
            if (!nf || (flags & 8)) continue;
            if (flags & 4) {
                int64_t nz = sqlite3_column_int64(st, 9); /* realloc(p, 0) */
                m->reallocs += nz;
                if (nz) summary_path(m, OP_REALLOC, fp, nz, sqlite3_column_double(st, 6));
            } else {
                m->frees += nf;
                summary_path(m, OP_FREE, fp, nf, sqlite3_column_double(st, 6));
            }
        }
        sqlite3_finalize(st);
    }
    if (sqlite3_prepare_v2(db,
                           "SELECT path, count(*), total(cycles), cycles IS NULL FROM orphan_free "
                           "GROUP BY 1, 4",
                           -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            int p = sqlite3_column_int(st, 0);
            if (p > 0 && p < 256 && m->pop[p] == OP_REALLOC && sqlite3_column_int(st, 3))
                continue; /* the old side of a realloc that started a block */
            int64_t n = sqlite3_column_int64(st, 1);
            m->orphans += n;
            summary_path(m, OP_FREE, p, n, sqlite3_column_double(st, 2));
        }
        sqlite3_finalize(st);
    }
}

/* The busiest paths, most operations first, with their mean cost. */
static void summary_paths(FILE *f, const summary_t *m, double tsc_hz)
{
    int done[4][256] = {{0}};
    for (int row = 0; row < 6; row++) {
        int bo = 0, bp = -1;
        for (int op = 1; op < 4; op++)
            for (int p = 1; p < 256; p++)
                if (!done[op][p] && m->count[op][p] &&
                    (bp < 0 || m->count[op][p] > m->count[bo][bp])) {
                    bo = op;
                    bp = p;
                }
        if (bp < 0) break;
        done[bo][bp] = 1;
        double cyc = m->cycles[bo][bp] / (double)m->count[bo][bp];
        fprintf(f, "  %-12s %-7s %-18s %12lld  %8.0f cycles", row ? "" : "paths",
                hl_safe(op_name[bo]), m->name[bp][0] ? hl_safe(m->name[bp]) : "?",
                (long long)m->count[bo][bp], cyc);
        if (tsc_hz > 0) fprintf(f, " (%.0f ns)", cyc * 1e9 / tsc_hz);
        fputc('\n', f);
    }
}

/* The live sites' query: from live_totals, which the ingest filled as it stored the live
 * rows (tracer/ingest_totals.c), when it covers them all (its blocks add up to the live
 * blocks the figures counted); else one GROUP BY over the live_at_exit view, i.e. a scan of
 * every block row. Same columns, same order (bytes, then stack, NULL first). */
static int live_sites_prepare(sqlite3 *db, int64_t live, sqlite3_stmt **st)
{
    if (q_int(db, "SELECT total(blocks) FROM live_totals", -1) == live &&
        sqlite3_prepare_v2(db,
                           "SELECT t.blocks, t.bytes, fr.function, fr.file, fr.line, fr.module, "
                           "t.stack FROM (SELECT nullif(alloc_stack, 0) AS stack, sum(blocks) "
                           "AS blocks, sum(bytes) AS bytes FROM live_totals GROUP BY 1) t "
                           "LEFT JOIN frame fr ON fr.stack_id = t.stack AND fr.depth = 0 "
                           "WHERE t.blocks > 0 ORDER BY t.bytes DESC, t.stack",
                           -1, st, NULL) == SQLITE_OK)
        return 0;
    return sqlite3_prepare_v2(db,
                              "SELECT count(*), sum(l.size), fr.function, fr.file, fr.line, "
                              "fr.module, l.alloc_stack FROM live_at_exit l LEFT JOIN frame fr "
                              "ON fr.stack_id = l.alloc_stack AND fr.depth = 0 "
                              "GROUP BY l.alloc_stack ORDER BY sum(l.size) DESC, l.alloc_stack",
                              -1, st, NULL) == SQLITE_OK
               ? 0
               : -1;
}

/* The live blocks by allocation stack: the C runtime's (never freed by design, the report's
 * built-in suppressions, analyzer/suppress.h) on one line, the three largest others with
 * their innermost frame. */
static void summary_leaks(FILE *f, sqlite3 *db, int64_t live)
{
    hl_hmap_t kinds = {0};
    hl_supp_t *supp = hl_supp_new();
    int classified = hl_supp_classify(supp, db, &kinds) == 0;
    hl_supp_free(supp);
    sqlite3_stmt *st;
    if (live_sites_prepare(db, live, &st) != 0) {
        hl_hmap_free(&kinds);
        return;
    }
    int shown = 0;
    int64_t rt_blocks = 0;
    double rt_bytes = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        char b[32];
        int64_t stack =
            sqlite3_column_type(st, 6) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 6);
        if (classified && hl_hmap_get(&kinds, (uint64_t)(stack + 1))) {
            rt_blocks += sqlite3_column_int64(st, 0);
            rt_bytes += sqlite3_column_double(st, 1);
            continue;
        }
        if (shown == 3) continue;
        const char *fn = (const char *)sqlite3_column_text(st, 2);
        const char *file = (const char *)sqlite3_column_text(st, 3);
        const char *mod = (const char *)sqlite3_column_text(st, 5);
        fprintf(f, "  %-12s %10lld blocks %10s  at %s", shown ? "" : "live sites",
                (long long)sqlite3_column_int64(st, 0),
                human(b, sizeof b, sqlite3_column_double(st, 1)), fn ? hl_safe(fn) : "?");
        if (file)
            fprintf(f, " (%s:%d)", hl_safe(file), sqlite3_column_int(st, 4));
        else if (mod)
            fprintf(f, " (%s)", hl_safe(mod));
        fputc('\n', f);
        shown++;
    }
    sqlite3_finalize(st);
    hl_hmap_free(&kinds);
    if (rt_blocks) {
        char b[32];
        fprintf(f, "  %-12s %10lld blocks %10s  of the C runtime, never freed by design\n",
                shown ? "" : "live sites", (long long)rt_blocks, human(b, sizeof b, rt_bytes));
    }
}

/* The leak scan's classes (analyzer/leakclass.h) under "live at exit", when the run has a scan:
 * leaked = definitely + indirectly lost, then each class, then the scan's status when it was
 * not complete. Requested bytes, as the report's leak classes. */
static void summary_classes(FILE *f, sqlite3 *db)
{
    hl_leakclass_report_t *lc = hl_leakclass_load(db);
    if (!lc) return;
    char b[4][32], bl[32];
    if (lc->status > 1) {
        fprintf(f, "  %-12s %s\n", "leak scan", hl_leakclass_status(lc->status));
        hl_leakclass_free(lc);
        return;
    }
    for (int k = 1; k < 4; k++)
        human(b[k], sizeof b[k], (double)lc->bytes[k]);
    fprintf(f, "  %-12s %llu blocks, %s (definitely + indirectly lost, reachability scan)\n",
            "leaked", (unsigned long long)(lc->blocks[1] + lc->blocks[2]),
            human(bl, sizeof bl, (double)(lc->bytes[1] + lc->bytes[2])));
    fprintf(f,
            "  %-12s %llu blocks (%s) definitely lost, %llu blocks (%s) indirectly lost, %llu "
            "blocks (%s) still reachable\n",
            "leak classes", (unsigned long long)lc->blocks[1], b[1],
            (unsigned long long)lc->blocks[2], b[2], (unsigned long long)lc->blocks[3], b[3]);
    if (lc->blocks[0])
        fprintf(f, "  %-12s %llu blocks (%s) without a class (allocated after the scan)\n", "",
                (unsigned long long)lc->blocks[0], human(bl, sizeof bl, (double)lc->bytes[0]));
    if (lc->status == 1)
        fprintf(f, "  %-12s %llu of %llu other threads scanned, %s\n", "",
                (unsigned long long)lc->threads_scanned, (unsigned long long)lc->threads,
                hl_leakclass_status(lc->status));
    sqlite3_stmt *st = NULL;
    if (lc->nsites && sqlite3_prepare_v2(db,
                                         "SELECT function, file, line, module FROM frame "
                                         "WHERE stack_id = ? AND depth = 0",
                                         -1, &st, NULL) != SQLITE_OK)
        st = NULL;
    for (size_t i = 0; st && i < lc->nsites && i < 3; i++) {
        const hl_leak_site_t *t = &lc->sites[i];
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, t->stack);
        int row = sqlite3_step(st) == SQLITE_ROW;
        const char *fn = row ? (const char *)sqlite3_column_text(st, 0) : NULL;
        const char *file = row ? (const char *)sqlite3_column_text(st, 1) : NULL;
        const char *mod = row ? (const char *)sqlite3_column_text(st, 3) : NULL;
        fprintf(f, "  %-12s %10llu blocks %10s  at %s", i ? "" : "lost sites",
                (unsigned long long)(t->definite_blocks + t->indirect_blocks),
                human(bl, sizeof bl, (double)(t->definite_bytes + t->indirect_bytes)),
                fn ? hl_safe(fn) : "?");
        if (file)
            fprintf(f, " (%s:%d)", hl_safe(file), sqlite3_column_int(st, 2));
        else if (mod)
            fprintf(f, " (%s)", hl_safe(mod));
        fputc('\n', f);
    }
    sqlite3_finalize(st);
    hl_leakclass_free(lc);
}

int hl_record_summary(FILE *f, const char *db_path, int64_t blocks)
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
    summary_scan(db, &m, blocks);
    char b1[32];
    int64_t events = q_int(db, "SELECT sum(events) FROM run", 0);
    int64_t discarded = q_int(db, "SELECT sum(discarded_events) FROM run", 0);
    double tsc_hz = (double)q_int(db, "SELECT max(tsc_hz) FROM run", 0);
    int64_t procs = q_int(db, "SELECT count(*) FROM process", 0);
    int64_t threads = q_int(db, "SELECT count(*) FROM thread", 0);
    int64_t errors = q_int(db, "SELECT count(*) FROM error", 0);

    fprintf(f, "  %-12s %lld recorded, %lld lost%s\n", "events", (long long)events,
            (long long)discarded,
            discarded ? "  (recorded with --lossy or buffers too small)" : "");
    fprintf(f, "  %-12s %lld processes, %lld threads\n", "traced", (long long)procs,
            (long long)threads);
    fprintf(f,
            "  %-12s %lld allocs, %lld frees, %lld reallocs, %lld failed, %lld frees of "
            "unknown blocks\n",
            "operations", (long long)m.allocs, (long long)m.frees, (long long)m.reallocs,
            (long long)m.failed, (long long)m.orphans);
    fprintf(f, "  %-12s %s in %lld blocks\n", "requested", human(b1, sizeof b1, (double)m.bytes),
            (long long)m.blocks);
    fprintf(f, "  %-12s %lld blocks, %s\n", "live at exit", (long long)m.live,
            human(b1, sizeof b1, (double)m.live_bytes));
    summary_classes(f, db);
    if (errors) fprintf(f, "  %-12s %lld heap errors detected\n", "errors", (long long)errors);
    summary_paths(f, &m, tsc_hz);
    if (m.live) summary_leaks(f, db, m.live);
    sqlite3_close(db);
    return 0;
}
