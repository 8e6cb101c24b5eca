/* tracer/ingest_chunks.h — one run database filled chunk by chunk while the program runs.
 *
 * `heapledger record` rotates its LTTng session (record_schedule.h, session.h): each
 * closed trace chunk is a complete CTF trace of its own. hl_ingest_chunks_add decodes one
 * such chunk into the open ledger, which carries everything across chunks (live blocks,
 * stacks, threads, module maps, the config event), numbers its events after those of the
 * chunks before (block.alloc_seq and the other seq columns are those of one pass over all
 * chunks), and commits (with meta.last_chunk = dir, in the same transaction): a stored chunk
 * survives a crash of record (the database is in WAL mode from its first commit,
 * synchronous=NORMAL). hl_ingest_chunks_close writes what only the end knows (blocks live at exit,
 * the run row with the exit status) and the indexes.
 *
 * The database file is created by the first chunk (none: no file). Not thread-safe; one
 * thread calls everything, and no other ingest thread may run meanwhile (each chunk forks a
 * decoder child, ingest_decoder.c).
 */
#ifndef HL_INGEST_CHUNKS_H
#define HL_INGEST_CHUNKS_H

#include "ingest.h"

typedef struct hl_ingest_chunks_s hl_ingest_chunks_t;

/* For db_path (checked by the caller: hl_ingest_trace's rules apply at the first chunk).
 * o is copied (its strings must outlive the handle); o->exit_status is ignored (close takes
 * it). source: meta.source (the trace directory). NULL when out of memory. */
hl_ingest_chunks_t *hl_ingest_chunks_new(const char *db_path, const char *source,
                                         const hl_ingest_opts_t *o);
/* Decode the trace chunk below dir (one or more CTF dirs) and store it. Returns 0; 1 when
 * the chunk was damaged (what decoded is stored; r->error says what was lost, and the final
 * status is 'partial') or a signal stopped it (hl_ingest_chunks_signals; r->interrupted); -1 when
 * storing failed (r->error): the handle then refuses more chunks and close reports the failure. r
 * receives the counts so far. */
int hl_ingest_chunks_add(hl_ingest_chunks_t *c, const char *dir, hl_ingest_result_t *r);
/* Events stored so far (all chunks). */
uint64_t hl_ingest_chunks_events(const hl_ingest_chunks_t *c);
/* Chunks stored so far. */
unsigned hl_ingest_chunks_count(const hl_ingest_chunks_t *c);
/* The progress line (on a terminal, o->progress): what waits to be stored. */
void hl_ingest_chunks_backlog(hl_ingest_chunks_t *c, unsigned chunks, uint64_t bytes);
/* From on = 1 until on = 0, SIGINT and SIGTERM stop the ingest as in hl_ingest_trace (the
 * chunk being stored stops within 0.2 s and stays on disk, later chunks are not stored, the
 * database is finished 'interrupted' with unsymbolised frames for the stacks not written
 * yet; a second signal has its default effect). record turns this on once the program ended
 * (before, its signals go to the program). */
void hl_ingest_chunks_signals(hl_ingest_chunks_t *c, int on);
/* The signal that interrupted the ingest, 0 when none. */
int hl_ingest_chunks_interrupted(const hl_ingest_chunks_t *c);
/* Finish the database (exit_status as in hl_ingest_opts_t) and free c. Returns like
 * hl_ingest_trace: 0 complete, 1 partial (r->error), -1 failure (r->error; a database that
 * holds no committed chunk is removed, one that does is left as it is, ingest_status
 * 'recording'). With no chunk added: -1, "no trace chunk". trace: the trace directory named
 * in the message of an interrupted ingest; deleted: chunks were deleted once stored (so the
 * trace no longer holds them all). */
int hl_ingest_chunks_close(hl_ingest_chunks_t *c, int exit_status, const char *trace, int deleted,
                           hl_ingest_result_t *r);

#endif
