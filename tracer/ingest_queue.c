/* tracer/ingest_queue.c — the bounded hand-off between the decode and store threads.
 *
 * HL_QUEUE_BATCHES batches exist; the decoder takes an empty one, fills it, pushes it; the
 * store pops, interprets and releases it. Memory is therefore bounded and a slow store
 * slows the decoder down instead of growing a backlog. One mutex and one condition variable:
 * batches are large (8192 records), so the lock is taken a few hundred times a second.
 * In the decoder child (ingest_decoder.c) the queue is in pipe mode: a pushed batch is
 * written to the pipe and is at once empty again.
 */
#include "ingest_internal.h"

#include <stdlib.h>

int hl_queue_init(hl_queue_t *q)
{
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->cond, NULL);
    q->head = q->count = 0;
    q->aborted = 0;
    q->nempty = 0;
    q->wfd = -1;
    for (size_t i = 0; i < HL_QUEUE_BATCHES; i++) {
        hl_batch_t *b = malloc(sizeof *b);
        if (!b) return -1;
        q->empty[q->nempty++] = b;
    }
    return 0;
}

void hl_queue_destroy(hl_queue_t *q)
{
    /* Batches still queued are freed with their blobs (aborted runs). */
    while (q->count) {
        hl_batch_t *b = q->full[q->head];
        q->head = (q->head + 1) % (HL_QUEUE_BATCHES + 1);
        q->count--;
        for (size_t i = 0; i < b->n; i++)
            free(b->rec[i].ext);
        free(b);
    }
    while (q->nempty)
        free(q->empty[--q->nempty]);
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->cond);
}

hl_batch_t *hl_queue_get_empty(hl_queue_t *q)
{
    pthread_mutex_lock(&q->lock);
    while (!q->nempty && !q->aborted)
        pthread_cond_wait(&q->cond, &q->lock);
    hl_batch_t *b = q->aborted ? NULL : q->empty[--q->nempty];
    pthread_mutex_unlock(&q->lock);
    if (b) {
        b->n = 0;
        b->events = b->discarded = b->filtered = 0;
        b->flush = b->last = 0;
    }
    return b;
}

void hl_queue_set_pipe(hl_queue_t *q, int fd)
{
    q->wfd = fd;
}

void hl_queue_push(hl_queue_t *q, hl_batch_t *b)
{
    if (q->wfd >= 0) { /* the decoder child: the batch goes down the pipe, at once reusable */
        int rc = hl_wire_write_batch(q->wfd, b);
        for (size_t i = 0; i < b->n; i++)
            if (b->rec[i].ext) free(b->rec[i].ext);
        b->n = 0;
        pthread_mutex_lock(&q->lock);
        q->empty[q->nempty++] = b;
        if (rc != 0) q->aborted = 1; /* the parent is gone */
        pthread_mutex_unlock(&q->lock);
        return;
    }
    pthread_mutex_lock(&q->lock);
    q->full[(q->head + q->count) % (HL_QUEUE_BATCHES + 1)] = b;
    q->count++;
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->lock);
}

hl_batch_t *hl_queue_pop(hl_queue_t *q)
{
    pthread_mutex_lock(&q->lock);
    while (!q->count)
        pthread_cond_wait(&q->cond, &q->lock);
    hl_batch_t *b = q->full[q->head];
    q->head = (q->head + 1) % (HL_QUEUE_BATCHES + 1);
    q->count--;
    pthread_mutex_unlock(&q->lock);
    return b;
}

void hl_queue_release(hl_queue_t *q, hl_batch_t *b)
{
    pthread_mutex_lock(&q->lock);
    q->empty[q->nempty++] = b;
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->lock);
}

void hl_queue_abort(hl_queue_t *q)
{
    pthread_mutex_lock(&q->lock);
    q->aborted = 1;
    pthread_cond_broadcast(&q->cond);
    pthread_mutex_unlock(&q->lock);
}
