/* tracer/ingest_writer.h — the store's SQLite thread: fixed-size items handed from the store
 * thread to a thread of their own, in slots, in order (tracer/ingest_writer.c).
 *
 * The producer (the store thread) puts items; a full slot is handed to the writer thread,
 * which calls fn(ctx, items, n) for it. HL_WRITER_SLOTS slots exist, so memory is bounded
 * and a slow writer slows the producer down. hl_writer_sync() hands on the slot being filled
 * and waits until the writer has finished every slot: from then until the next put the
 * producer may use what fn uses (the SQLite connection) itself.
 */
#ifndef HL_INGEST_WRITER_H
#define HL_INGEST_WRITER_H

#include <stddef.h>

#define HL_WRITER_SLOTS 4

typedef struct hl_writer_s hl_writer_t;
/* Runs in the writer thread, for the items of one slot in the order they were put. */
typedef void (*hl_writer_fn)(void *ctx, void *items, size_t n);

/* A writer of slots of per items of isz bytes; NULL when out of memory or no thread. */
hl_writer_t *hl_writer_new(size_t isz, size_t per, hl_writer_fn fn, void *ctx);
/* The next item (isz bytes) to fill; hl_writer_put() hands it on. Blocks while every slot
 * is with the writer. */
void *hl_writer_next(hl_writer_t *w);
void hl_writer_put(hl_writer_t *w);
/* Hand on what was put and wait until the writer has done all of it. */
void hl_writer_sync(hl_writer_t *w);
/* CPU seconds the writer thread has used so far. */
double hl_writer_cpu(const hl_writer_t *w);
/* Sync, stop and free (NULL: nothing). */
void hl_writer_free(hl_writer_t *w);

#endif
