/* analyzer/blockreader.h — the block table decoded on a second thread.
 *
 * Stepping SQLite and decoding 21 columns a row is about half of an analysis; a reader
 * thread with its own read-only connection does it ahead of the consumer, passing rows in
 * chunks through a ring of HL_BR_CHUNKS buffers (memory: a few MiB, whatever the trace).
 * Rows come in rowid order, or in alloc_seq order through the index (by_index).
 */
#ifndef HL_BLOCKREADER_H
#define HL_BLOCKREADER_H

#include <sqlite3.h>
#include <stddef.h>

#include "stream.h"

typedef struct hl_block_row_s {
    hl_event_t alloc; /* the allocation end */
    hl_event_t free;  /* the free end, when has_free */
    int has_free;
} hl_block_row_t;

typedef struct hl_blockreader_s hl_blockreader_t;

/* Start reading the blocks of db's file (pid > 0: one process). NULL with a message. */
hl_blockreader_t *hl_blockreader_open(sqlite3 *db, int64_t pid, int by_index, char *err,
                                      size_t errlen);
/* Next row: 1 (*row valid until the next call), 0 at the end, -1 on a database error. */
int hl_blockreader_next(hl_blockreader_t *r, const hl_block_row_t **row, char *err, size_t errlen);
/* CPU time the reader thread used (valid once it reached the end). */
double hl_blockreader_cpu(const hl_blockreader_t *r);
/* Stop the thread (also before the end) and free everything. */
void hl_blockreader_close(hl_blockreader_t *r);

#endif
