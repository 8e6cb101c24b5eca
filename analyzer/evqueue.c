/* analyzer/evqueue.c — see evqueue.h. */
#include "evqueue.h"

#include <pthread.h>
#include <stdlib.h>

struct hl_evq_s {
    pthread_mutex_t lock;
    pthread_cond_t not_full, not_empty;
    hl_evchunk_t *chunk; /* HL_EVQ_CHUNKS */
    size_t nfull;        /* filled, not yet taken (guarded by lock) */
    size_t prod, cons;   /* ring indices */
    int stop;            /* guarded by lock */
};

hl_evq_t *hl_evq_new(void)
{
    hl_evq_t *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    if (!(q->chunk = calloc(HL_EVQ_CHUNKS, sizeof *q->chunk))) {
        free(q);
        return NULL;
    }
    pthread_mutex_init(&q->lock, NULL);
    pthread_cond_init(&q->not_full, NULL);
    pthread_cond_init(&q->not_empty, NULL);
    return q;
}

hl_evchunk_t *hl_evq_fill_begin(hl_evq_t *q)
{
    pthread_mutex_lock(&q->lock);
    while (q->nfull == HL_EVQ_CHUNKS && !q->stop)
        pthread_cond_wait(&q->not_full, &q->lock);
    hl_evchunk_t *c = q->stop ? NULL : &q->chunk[q->prod];
    pthread_mutex_unlock(&q->lock);
    return c;
}

void hl_evq_fill_end(hl_evq_t *q)
{
    pthread_mutex_lock(&q->lock);
    q->nfull++;
    q->prod = (q->prod + 1) % HL_EVQ_CHUNKS;
    pthread_cond_signal(&q->not_empty);
    pthread_mutex_unlock(&q->lock);
}

hl_evchunk_t *hl_evq_take_begin(hl_evq_t *q)
{
    pthread_mutex_lock(&q->lock);
    while (q->nfull == 0)
        pthread_cond_wait(&q->not_empty, &q->lock);
    hl_evchunk_t *c = &q->chunk[q->cons];
    pthread_mutex_unlock(&q->lock);
    return c;
}

void hl_evq_take_end(hl_evq_t *q)
{
    pthread_mutex_lock(&q->lock);
    q->nfull--;
    q->cons = (q->cons + 1) % HL_EVQ_CHUNKS;
    pthread_cond_signal(&q->not_full);
    pthread_mutex_unlock(&q->lock);
}

void hl_evq_stop(hl_evq_t *q)
{
    pthread_mutex_lock(&q->lock);
    q->stop = 1;
    pthread_cond_signal(&q->not_full);
    pthread_mutex_unlock(&q->lock);
}

void hl_evq_free(hl_evq_t *q)
{
    if (!q) return;
    pthread_mutex_destroy(&q->lock);
    pthread_cond_destroy(&q->not_full);
    pthread_cond_destroy(&q->not_empty);
    free(q->chunk);
    free(q);
}
