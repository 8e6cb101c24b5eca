/* analyzer/rundb.h — the analyzer's read side of a run database (schemas/heapledger.sql).
 *
 * hl_an_open() opens a file read-only and refuses anything that is not a heapledger run
 * database of schema version 1, with a one-line message naming the file. hl_run_load()
 * reads the run summary. Nothing here writes to the database.
 */
#ifndef HL_RUNDB_H
#define HL_RUNDB_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* Open path read-only (hl_db_open_read: the file, the schema version), check the tables
 * the analyzer reads, set read pragmas. NULL with a one-line message in err on failure. */
sqlite3 *hl_an_open(const char *path, char *err, size_t errlen);

typedef struct hl_run_s {
    char *path; /* database file */
    char *command, *options, *host, *version;
    int64_t tsc_hz;
    int64_t start_ts, end_ts; /* ns; filled from the events when the run row lacks them */
    int64_t exit_status;
    int64_t events, discarded;
    int64_t arena_size;
    int64_t processes, threads;
    int64_t has_blocks; /* 1 when the run (or pid) has a block row: counting them would read
                           the whole table, which the stream reads anyway */
    int64_t orphan_frees, os_regions, errors;
    int64_t max_seq; /* largest allocation or orphan-free seq (progress) */
} hl_run_t;

/* Read the run row (the first one) and counts; pid > 0 restricts the counts to a process.
 * Returns 0 or -1 with a message. */
int hl_run_load(sqlite3 *db, const char *path, int64_t pid, hl_run_t *run, char *err,
                size_t errlen);
void hl_run_free(hl_run_t *run);

/* Every timestamp read from a run database goes through hl_ts(): clamped to [0, HL_TS_MAX]
 * (146 years of nanoseconds), so that the sum or difference of any two is an int64 whatever
 * a damaged or hostile database holds. */
#define HL_TS_MAX ((INT64_C(1) << 62) - 1)
static inline int64_t hl_ts(int64_t ts)
{
    return ts < 0 ? 0 : ts > HL_TS_MAX ? HL_TS_MAX : ts;
}

/* The k-th of n timeline edges (0 <= k <= n < 1024) of a window span >= 0 ns long, from its start:
 * floor(span * k / n) without the product (which overflows an int64 for long spans) and
 * without a 128-bit division on the per-event path (n is a constant at the call sites). */
static inline int64_t hl_timeline_edge(int64_t span, int k, int n)
{
    uint64_t s = (uint64_t)span;
    if (s <= UINT64_MAX / 1024) return (int64_t)(s * (uint64_t)k / (uint64_t)n); /* n < 1024 */
    uint64_t q = s / (uint64_t)n, r = s % (uint64_t)n;
    return (int64_t)(q * (uint64_t)k + r * (uint64_t)k / (uint64_t)n);
}

/* Run one query returning a single integer (def when NULL or no row). */
int64_t hl_an_int(sqlite3 *db, const char *sql, int64_t def);

/* Column i of the current row: its integer, or def when it is NULL. */
static inline int64_t hl_col_i64(sqlite3_stmt *st, int i, int64_t def)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? def : sqlite3_column_int64(st, i);
}
/* Column i of the current row as a new string ("" when NULL); NULL only when out of memory. */
char *hl_col_strdup(sqlite3_stmt *st, int i);

#endif
