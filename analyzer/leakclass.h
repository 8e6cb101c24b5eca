/* analyzer/leakclass.h — the leak scan's classes of a run (tables leak_scan, leak_block).
 *
 * The preloaded library classifies every live block at exit (liballoc/leakscan.h); the
 * ingest stores one class per block. This reads them back for the reports: the totals per
 * class (requested bytes, as the rest of the report) over the blocks live at the end of the
 * processes that ran a scan, and the lost bytes (definitely + indirectly) per allocation
 * stack of the same blocks (the sites add up to the totals of classes 1 and 2). Suppressions
 * do not apply here: a class is a fact about reachability.
 */
#ifndef HL_LEAKCLASS_H
#define HL_LEAKCLASS_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "hmap.h"

typedef struct hl_leak_site_s {
    int64_t stack; /* -1: no stack */
    uint64_t definite_blocks, definite_bytes, indirect_blocks, indirect_bytes;
} hl_leak_site_t;

typedef struct hl_leakclass_report_s {
    uint64_t scans;  /* processes that ran a scan */
    uint64_t status; /* the worst status among them (leak_scan.status) */
    uint64_t threads, threads_scanned, unmatched;
    uint64_t blocks[4], bytes[4]; /* [1] definitely lost [2] indirectly lost [3] reachable,
                                     [0] live at the end without a class (allocated after the
                                     scan, or status above 1) */
    hl_leak_site_t *sites;        /* lost bytes descending */
    size_t nsites;
} hl_leakclass_report_t;

/* NULL when the run has no leak scan (or the database predates the tables). The totals take
 * one scan of the block table through SQLite. */
hl_leakclass_report_t *hl_leakclass_load(sqlite3 *db);
/* The same without that scan, from the blocks of every process that were never freed and did
 * not fail, pid -> blocks and pid -> requested bytes (hl_stream_take_unfreed); with NULL
 * maps, hl_leakclass_load(). */
hl_leakclass_report_t *hl_leakclass_load_counted(sqlite3 *db, const hl_hmap_t *unfreed,
                                                 const hl_hmap_t *unfreed_bytes);
void hl_leakclass_free(hl_leakclass_report_t *lc);
/* "complete", "partial (threads not scanned)", … for leak_scan.status. */
const char *hl_leakclass_status(uint64_t status);
extern const char *const hl_leakclass_labels[4]; /* "unclassified", "definitely lost", … */
/* {"definitely_lost_blocks": …, "definitely_lost_bytes": …, … "still_reachable_bytes": …}:
 * the classes' totals as diff and the fleet view write them (index as in blocks/bytes). */
struct hl_json_s;
void hl_leakclass_json_totals(struct hl_json_s *j, const uint64_t blocks[4],
                              const uint64_t bytes[4]);

#endif
