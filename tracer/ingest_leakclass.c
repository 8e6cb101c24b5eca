/* tracer/ingest_leakclass.c — the leak scan's results into leak_block and leak_scan.
 *
 * The preloaded library classifies every live block at exit (liballoc/leakscan.h) and emits
 * leak_blocks events (user pointer | class) and one leak_scan summary per process. The ledger
 * resolves each pointer to the block live at that moment (ingest_ledger.c, its live map) and
 * hands the id here; a pointer it does not know (a block allocated before tracing began) is
 * counted in the process's summary row as unmatched. Statements are prepared on the store's
 * connection and run inside its open transaction.
 */
#include "ingest_internal.h"

#include <stdio.h>
#include <stdlib.h>

#define LEAK_PIDS 64 /* processes with a scan under way at once (unmatched counters) */

struct hl_ileak_s {
    sqlite3 *db;
    sqlite3_stmt *ins_block, *ins_scan;
    struct {
        uint32_t pid;
        uint64_t unmatched;
    } pend[LEAK_PIDS];
};

hl_ileak_t *hl_ileak_new(sqlite3 *db)
{
    hl_ileak_t *lc = calloc(1, sizeof *lc);
    if (!lc) return NULL;
    lc->db = db;
    return lc;
}

void hl_ileak_free(hl_ileak_t *lc)
{
    if (!lc) return;
    sqlite3_finalize(lc->ins_block);
    sqlite3_finalize(lc->ins_scan);
    free(lc);
}

/* Prepared at the first use: runs without a scan never touch these tables. */
static int prepare(hl_ileak_t *lc)
{
    if (lc->ins_block) return 0;
    if (sqlite3_prepare_v2(lc->db, "INSERT OR REPLACE INTO leak_block(block, class) VALUES (?, ?)",
                           -1, &lc->ins_block, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(lc->db,
                           "INSERT INTO leak_scan(pid, ts, status, threads, threads_scanned, "
                           "root_bytes, heap_bytes, blocks, definite_blocks, definite_bytes, "
                           "indirect_blocks, indirect_bytes, reachable_blocks, reachable_bytes, "
                           "ns, unmatched) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           -1, &lc->ins_scan, NULL) != SQLITE_OK) {
        fprintf(stderr, "heapledger: cannot store leak classes: %s\n", sqlite3_errmsg(lc->db));
        sqlite3_finalize(lc->ins_block);
        lc->ins_block = NULL;
        return -1;
    }
    return 0;
}

static uint64_t *unmatched_of(hl_ileak_t *lc, uint32_t pid)
{
    for (size_t i = 0; i < LEAK_PIDS; i++)
        if (lc->pend[i].pid == pid) return &lc->pend[i].unmatched;
    for (size_t i = 0; i < LEAK_PIDS; i++)
        if (!lc->pend[i].pid) {
            lc->pend[i].pid = pid;
            lc->pend[i].unmatched = 0;
            return &lc->pend[i].unmatched;
        }
    return NULL;
}

static int step(hl_ileak_t *lc, sqlite3_stmt *s)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc == SQLITE_DONE) return 0;
    fprintf(stderr, "heapledger: cannot store leak classes: %s\n", sqlite3_errmsg(lc->db));
    return -1;
}

int hl_ileak_block(hl_ileak_t *lc, uint32_t pid, int64_t block, unsigned cls)
{
    if (cls < 1 || cls > 3) return 0; /* not a class of this version: ignored */
    if (!block) {
        uint64_t *u = unmatched_of(lc, pid);
        if (u) ++*u;
        return 0;
    }
    if (prepare(lc) != 0) return -1;
    sqlite3_bind_int64(lc->ins_block, 1, block);
    sqlite3_bind_int(lc->ins_block, 2, (int)cls);
    return step(lc, lc->ins_block);
}

int hl_ileak_scan(hl_ileak_t *lc, uint32_t pid, uint64_t ts, const uint64_t *w, size_t n)
{
    if (n < 13) return 0; /* not the summary of this version */
    if (prepare(lc) != 0) return -1;
    sqlite3_stmt *s = lc->ins_scan;
    sqlite3_bind_int64(s, 1, pid);
    sqlite3_bind_int64(s, 2, (sqlite3_int64)ts);
    for (int i = 0; i < 13; i++)
        sqlite3_bind_int64(s, 3 + i, (sqlite3_int64)w[i]);
    uint64_t *u = unmatched_of(lc, pid);
    sqlite3_bind_int64(s, 16, u ? (sqlite3_int64)*u : 0);
    for (size_t i = 0; i < LEAK_PIDS; i++) /* the pid may be reused: start again */
        if (lc->pend[i].pid == pid) lc->pend[i].pid = 0;
    return step(lc, s);
}
