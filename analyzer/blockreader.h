/* analyzer/blockreader.h — the rows of the block table, decoded, in rowid or alloc_seq order.
 *
 * The reader has its own read-only connection and holds one read transaction for its whole
 * life: every query made through hl_blockreader_db() sees the same snapshot. Rowid order is
 * read straight from the database file when that is safe (btree.h: ~10x cheaper than
 * stepping SQLite), else through SQLite; alloc_seq order goes through the index.
 * HEAPLEDGER_READER=sqlite forces SQLite; HEAPLEDGER_STATS=1 says which reader ran and why.
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

/* Start reading the blocks of db's file (pid > 0: one process). NULL with a message. The
 * reader is used by one thread at a time. */
hl_blockreader_t *hl_blockreader_open(sqlite3 *db, int64_t pid, int by_index, char *err,
                                      size_t errlen);
/* Next row: 1 (*row valid until the next call), 0 at the end, -1 on a database error. */
int hl_blockreader_next(hl_blockreader_t *r, const hl_block_row_t **row, char *err, size_t errlen);
/* Whether rows are coming straight from the database file now (1) or through SQLite (0). */
int hl_blockreader_direct(const hl_blockreader_t *r);
/* The reader's connection, inside its read transaction. */
sqlite3 *hl_blockreader_db(hl_blockreader_t *r);
/* End the read transaction and free everything. */
void hl_blockreader_close(hl_blockreader_t *r);

#endif
