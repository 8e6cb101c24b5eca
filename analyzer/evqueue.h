/* analyzer/evqueue.h — events handed from one producer thread to one consumer in chunks.
 *
 * A ring of HL_EVQ_CHUNKS chunks of HL_EVQ_EVENTS events: the producer fills a chunk while
 * the consumer works through another, and they meet on the lock once per chunk, not per
 * event. Memory is fixed (about 2.6 MiB) whatever the trace.
 */
#ifndef HL_EVQUEUE_H
#define HL_EVQUEUE_H

#include <stddef.h>

#include "stream.h"

#define HL_EVQ_CHUNKS 4
#define HL_EVQ_EVENTS 4096

typedef struct hl_evchunk_s {
    hl_event_t ev[HL_EVQ_EVENTS];
    size_t n;
    int end;        /* the producer's last chunk: rc says how it ended */
    int rc;         /* 0, or the producer's negative result */
    size_t pending; /* producer's figure when the chunk was filled (hl_stream_pending) */
    char err[256];  /* message when rc < 0 */
} hl_evchunk_t;

typedef struct hl_evq_s hl_evq_t;

hl_evq_t *hl_evq_new(void);
/* Producer: an empty chunk to fill (waits for one), or NULL once the consumer stopped. */
hl_evchunk_t *hl_evq_fill_begin(hl_evq_t *q);
void hl_evq_fill_end(hl_evq_t *q);
/* Consumer: the next filled chunk (waits for it). */
hl_evchunk_t *hl_evq_take_begin(hl_evq_t *q);
void hl_evq_take_end(hl_evq_t *q);
/* Consumer: tell the producer to stop (its next hl_evq_fill_begin returns NULL). */
void hl_evq_stop(hl_evq_t *q);
void hl_evq_free(hl_evq_t *q);

#endif
