/* tracer/ingest_ckpt.h — the WAL checkpoints of a database stored chunk by chunk, on a
 * connection and a thread of their own.
 *
 * A chunk's commit used to checkpoint the WAL on the store's connection (SQLite's
 * autocheckpoint): the copy of the chunk's pages from the WAL into the database, 0.07–0.28 s
 * of wall time per chunk on a loaded machine while the store and its SQLite thread wait. Here
 * the store's connection does not checkpoint (`wal_autocheckpoint = 0`); after each commit
 * this thread copies the committed frames (a PASSIVE checkpoint: it never blocks the writer)
 * while the next chunk is decoded and stored. SQLite restarts the WAL from its beginning only
 * when a write transaction begins after a checkpoint that copied every frame, which
 * back-to-back chunks never allow; so once the WAL holds more than HL_CKPT_WAL_MAX bytes the
 * commit waits for a checkpoint of everything (as it did at every chunk before), and the next
 * chunk's first write restarts the WAL: the WAL stays below about HL_CKPT_WAL_MAX plus one
 * chunk's pages.
 */
#ifndef HL_INGEST_CKPT_H
#define HL_INGEST_CKPT_H

#include <sqlite3.h>

#define HL_CKPT_WAL_MAX (48ull << 20)

typedef struct hl_ckpt_s hl_ckpt_t;

/* Turn the autocheckpoint of writer off and start the checkpointer on a connection of its
 * own to path; NULL (and writer left as it was) when that fails. */
hl_ckpt_t *hl_ckpt_start(sqlite3 *writer, const char *path);
/* After a commit of the writer's: a checkpoint in the background, or, when the WAL has grown
 * beyond HL_CKPT_WAL_MAX, one waited for (call it before the writer's next transaction
 * writes). */
void hl_ckpt_committed(hl_ckpt_t *c);
/* Wait for a checkpoint in progress, end the thread, close its connection (before the writer
 * changes its journal mode). NULL is fine. Returns the thread's CPU seconds. */
double hl_ckpt_stop(hl_ckpt_t *c);

#endif
