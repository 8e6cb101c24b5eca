/* analyzer/leakclass.c — reads the leak scan's classes (leakclass.h). */
#include "leakclass.h"

#include "jsonw.h"

#include <stdio.h>
#include <stdlib.h>

const char *const hl_leakclass_labels[4] = {"unclassified", "definitely lost", "indirectly lost",
                                            "still reachable"};

const char *hl_leakclass_status(uint64_t status)
{
    switch (status) {
    case 0:
        return "complete";
    case 1:
        return "partial: some threads could not be stopped, their stacks were not scanned";
    case 2:
        return "not classified: the scan's work budget ran out";
    case 3:
        return "not classified: a thread kept an allocator lock";
    case 4:
        return "not classified: hardened mode is not scanned";
    case 5:
        return "not classified: no memory for the scan";
    default:
        return "not classified: unknown status";
    }
}

/* The blocks every number here counts, in SQL over the view `block` as b: live at the end,
 * not failed, of a process that ran a scan. Live is what the analysis stream takes for live
 * (blockreader.c: a free_seq read as an integer below 0 is no free, as NULL is), so that the
 * totals counted in the pass, those from SQLite and the per-stack sites agree, also on a
 * database with a negative free_seq that heapledger did not write. */
#define LIVE_SCANNED                                                                               \
    "(b.free_seq IS NULL OR CAST(b.free_seq AS INTEGER) < 0) AND (b.flags & 1) = 0 "               \
    "AND b.pid IN (SELECT pid FROM leak_scan)"

static int has_table(sqlite3 *db)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                           "('leak_scan', 'leak_block')",
                           -1, &s, NULL) != SQLITE_OK)
        return 0;
    int n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
    sqlite3_finalize(s);
    return n == 2;
}

static int by_lost(const void *a, const void *b)
{
    const hl_leak_site_t *x = a, *y = b;
    uint64_t lx = x->definite_bytes + x->indirect_bytes, ly = y->definite_bytes + y->indirect_bytes;
    if (lx != ly) return lx > ly ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int load_sites(sqlite3 *db, hl_leakclass_report_t *lc)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT coalesce(b.alloc_stack, -1), c.class, count(*), sum(b.size) "
                           "FROM leak_block c CROSS JOIN block b ON b.id = c.block "
                           "WHERE c.class IN (1, 2) AND " LIVE_SCANNED " GROUP BY 1, 2 ORDER BY 1",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    size_t cap = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        int64_t stack = sqlite3_column_int64(s, 0);
        int cls = sqlite3_column_int(s, 1);
        uint64_t n = (uint64_t)sqlite3_column_int64(s, 2),
                 bytes = (uint64_t)sqlite3_column_int64(s, 3);
        if (!lc->nsites || lc->sites[lc->nsites - 1].stack != stack) {
            if (lc->nsites == cap) {
                size_t nc = cap ? 2 * cap : 64;
                hl_leak_site_t *ns = realloc(lc->sites, nc * sizeof *ns);
                if (!ns) break;
                lc->sites = ns;
                cap = nc;
            }
            lc->sites[lc->nsites++] = (hl_leak_site_t){.stack = stack};
        }
        hl_leak_site_t *t = &lc->sites[lc->nsites - 1];
        if (cls == 1)
            t->definite_blocks += n, t->definite_bytes += bytes;
        else
            t->indirect_blocks += n, t->indirect_bytes += bytes;
    }
    sqlite3_finalize(s);
    if (lc->nsites) qsort(lc->sites, lc->nsites, sizeof *lc->sites, by_lost);
    return 0;
}

/* Whether live_totals (the ingest's live rows per process and stack, docs/schema.md) covers
 * the live rows: block_totals covers every block row and its live rows are live_totals'. */
static int live_totals_valid(sqlite3 *db)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT (SELECT total(blocks) FROM block_totals) = (SELECT count(*) "
                           "FROM block_data) AND (SELECT total(blocks - freed) FROM block_totals "
                           "WHERE flags & 1 = 0) = (SELECT total(blocks) FROM live_totals)",
                           -1, &s, NULL) != SQLITE_OK)
        return 0;
    int ok = sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int(s, 0) == 1;
    sqlite3_finalize(s);
    return ok;
}

/* The live blocks of the scanned processes per class without a scan of every block row: the
 * classified ones through leak_block, the unclassified ones as the rest of live_totals.
 * CROSS JOIN keeps leak_block the outer loop (else the planner scans every block row for the
 * pid condition: 24 s at 100 M events). */
static int live_by_class(sqlite3 *db, hl_leakclass_report_t *lc)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT total(blocks), total(bytes) FROM live_totals "
                           "WHERE pid IN (SELECT pid FROM leak_scan)",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    uint64_t blocks = 0, bytes = 0;
    if (sqlite3_step(s) == SQLITE_ROW) {
        blocks = (uint64_t)sqlite3_column_int64(s, 0);
        bytes = (uint64_t)sqlite3_column_int64(s, 1);
    }
    sqlite3_finalize(s);
    if (sqlite3_prepare_v2(db,
                           "SELECT c.class, count(*), sum(b.size) FROM leak_block c "
                           "CROSS JOIN block b ON b.id = c.block WHERE " LIVE_SCANNED " GROUP BY 1",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    while (sqlite3_step(s) == SQLITE_ROW) {
        int cls = sqlite3_column_int(s, 0);
        if (cls < 1 || cls > 3) continue; /* counted with the unclassified ones */
        lc->blocks[cls] += (uint64_t)sqlite3_column_int64(s, 1);
        lc->bytes[cls] += (uint64_t)sqlite3_column_int64(s, 2);
        blocks -= (uint64_t)sqlite3_column_int64(s, 1);
        bytes -= (uint64_t)sqlite3_column_int64(s, 2);
    }
    sqlite3_finalize(s);
    lc->blocks[0] += blocks;
    lc->bytes[0] += bytes;
    return 0;
}

/* The same from every block row (a database without live_totals, or rows changed since). */
static void live_by_scan(sqlite3 *db, hl_leakclass_report_t *lc)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT coalesce(c.class, 0), count(*), sum(b.size) FROM block b "
                           "LEFT JOIN leak_block c ON c.block = b.id WHERE " LIVE_SCANNED
                           " GROUP BY 1",
                           -1, &s, NULL) != SQLITE_OK)
        return;
    while (sqlite3_step(s) == SQLITE_ROW) {
        int cls = sqlite3_column_int(s, 0);
        if (cls < 0 || cls > 3) cls = 0;
        lc->blocks[cls] += (uint64_t)sqlite3_column_int64(s, 1);
        lc->bytes[cls] += (uint64_t)sqlite3_column_int64(s, 2);
    }
    sqlite3_finalize(s);
}

/* The same totals from the stream's count of unfreed blocks per process: the classified
 * blocks by rowid lookups from leak_block (as many as the scan found), and class 0 is what
 * is left of the scanned processes' unfreed blocks. */
static void totals_counted(sqlite3 *db, hl_leakclass_report_t *lc, const hl_hmap_t *unfreed,
                           const hl_hmap_t *unfreed_bytes)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, "SELECT DISTINCT pid FROM leak_scan", -1, &s, NULL) != SQLITE_OK)
        return;
    while (sqlite3_step(s) == SQLITE_ROW) {
        uint64_t pid = (uint64_t)sqlite3_column_int64(s, 0);
        if (sqlite3_column_type(s, 0) != SQLITE_INTEGER) continue;
        const uint64_t *n = hl_hmap_get(unfreed, pid), *b = hl_hmap_get(unfreed_bytes, pid);
        lc->blocks[0] += n ? *n : 0;
        lc->bytes[0] += b ? *b : 0;
    }
    sqlite3_finalize(s);
    if (sqlite3_prepare_v2(db,
                           "SELECT c.class, count(*), sum(b.size) FROM leak_block c "
                           "CROSS JOIN block b ON b.id = c.block " /* leak_block drives */
                           "WHERE " LIVE_SCANNED " GROUP BY 1",
                           -1, &s, NULL) != SQLITE_OK)
        return;
    while (sqlite3_step(s) == SQLITE_ROW) {
        int cls = sqlite3_column_int(s, 0);
        if (sqlite3_column_type(s, 0) == SQLITE_NULL || cls < 0 || cls > 3) cls = 0;
        uint64_t n = (uint64_t)sqlite3_column_int64(s, 1), b = (uint64_t)sqlite3_column_int64(s, 2);
        lc->blocks[0] -= n;
        lc->bytes[0] -= b;
        lc->blocks[cls] += n;
        lc->bytes[cls] += b;
    }
    sqlite3_finalize(s);
}

hl_leakclass_report_t *hl_leakclass_load(sqlite3 *db)
{
    return hl_leakclass_load_counted(db, NULL, NULL);
}

hl_leakclass_report_t *hl_leakclass_load_counted(sqlite3 *db, const hl_hmap_t *unfreed,
                                                 const hl_hmap_t *unfreed_bytes)
{
    if (!db || !has_table(db)) return NULL;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db,
                           "SELECT count(*), max(status), sum(threads), sum(threads_scanned), "
                           "sum(unmatched) FROM leak_scan",
                           -1, &s, NULL) != SQLITE_OK)
        return NULL;
    hl_leakclass_report_t *lc = NULL;
    if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int64(s, 0) > 0 &&
        (lc = calloc(1, sizeof *lc)) != NULL) {
        lc->scans = (uint64_t)sqlite3_column_int64(s, 0);
        lc->status = (uint64_t)sqlite3_column_int64(s, 1);
        lc->threads = (uint64_t)sqlite3_column_int64(s, 2);
        lc->threads_scanned = (uint64_t)sqlite3_column_int64(s, 3);
        lc->unmatched = (uint64_t)sqlite3_column_int64(s, 4);
    }
    sqlite3_finalize(s);
    if (!lc) return NULL;
    if (unfreed && unfreed_bytes)
        totals_counted(db, lc, unfreed, unfreed_bytes);
    else if (!live_totals_valid(db) || live_by_class(db, lc) != 0)
        live_by_scan(db, lc);
    load_sites(db, lc);
    return lc;
}

void hl_leakclass_free(hl_leakclass_report_t *lc)
{
    if (!lc) return;
    free(lc->sites);
    free(lc);
}

void hl_leakclass_json_totals(struct hl_json_s *j, const uint64_t blocks[4],
                              const uint64_t bytes[4])
{
    static const char *const cn[] = {NULL, "definitely_lost", "indirectly_lost", "still_reachable"};
    hl_json_obj(j);
    for (int c = 1; c < 4; c++) {
        char key[40];
        snprintf(key, sizeof key, "%s_blocks", cn[c]);
        hl_json_key(j, key);
        hl_json_u64(j, blocks[c]);
        snprintf(key, sizeof key, "%s_bytes", cn[c]);
        hl_json_key(j, key);
        hl_json_u64(j, bytes[c]);
    }
    hl_json_obj_end(j);
}
