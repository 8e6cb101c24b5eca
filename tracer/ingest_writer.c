/* tracer/ingest_writer.c — the store's SQLite thread (see ingest_writer.h).
 *
 *   slot[fill] is the producer's: it fills it without the lock (nfill items so far);
 *   slots head .. head + count - 1 (mod HL_WRITER_SLOTS) are the writer's, in order; the
 *   writer gives slot head back only once fn has returned, so count == 0 means the writer
 *   is idle and touches nothing fn touches.
 *
 * A slot holds hundreds of items, so the lock is taken once per slot, not per item.
 */
#include "ingest_writer.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct hl_writer_s {
    pthread_mutex_t lock;
    pthread_cond_t work, room; /* the writer waits for a slot; the producer for room */
    pthread_t thread;
    size_t isz, per;
    unsigned char *slot[HL_WRITER_SLOTS];
    size_t n[HL_WRITER_SLOTS];
    unsigned head, count, fill; /* count and head under the lock; fill is the producer's */
    size_t nfill;
    int quit;
    hl_writer_fn fn;
    void *ctx;
};

static void *run(void *arg)
{
    hl_writer_t *w = arg;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (!w->count && !w->quit)
            pthread_cond_wait(&w->work, &w->lock);
        if (!w->count) break;
        unsigned i = w->head;
        pthread_mutex_unlock(&w->lock);
        w->fn(w->ctx, w->slot[i], w->n[i]);
        pthread_mutex_lock(&w->lock);
        w->head = (w->head + 1) % HL_WRITER_SLOTS;
        w->count--;
        pthread_cond_signal(&w->room);
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

hl_writer_t *hl_writer_new(size_t isz, size_t per, hl_writer_fn fn, void *ctx)
{
    hl_writer_t *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->isz = isz;
    w->per = per;
    w->fn = fn;
    w->ctx = ctx;
    for (int i = 0; i < HL_WRITER_SLOTS; i++)
        if (!(w->slot[i] = malloc(isz * per))) goto fail;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->work, NULL);
    pthread_cond_init(&w->room, NULL);
    if (pthread_create(&w->thread, NULL, run, w) != 0) {
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->work);
        pthread_cond_destroy(&w->room);
        goto fail;
    }
    return w;
fail:
    for (int i = 0; i < HL_WRITER_SLOTS; i++)
        free(w->slot[i]);
    free(w);
    return NULL;
}

void *hl_writer_next(hl_writer_t *w)
{
    return w->slot[w->fill] + w->nfill * w->isz;
}

/* Hand slot fill to the writer and wait for a free one (lock held). */
static void hand_on(hl_writer_t *w)
{
    w->n[w->fill] = w->nfill;
    w->count++;
    pthread_cond_signal(&w->work);
    while (w->count == HL_WRITER_SLOTS)
        pthread_cond_wait(&w->room, &w->lock);
    w->fill = (w->head + w->count) % HL_WRITER_SLOTS;
    w->nfill = 0;
}

void hl_writer_put(hl_writer_t *w)
{
    if (++w->nfill < w->per) return;
    pthread_mutex_lock(&w->lock);
    hand_on(w);
    pthread_mutex_unlock(&w->lock);
}

void hl_writer_sync(hl_writer_t *w)
{
    pthread_mutex_lock(&w->lock);
    if (w->nfill) hand_on(w);
    while (w->count)
        pthread_cond_wait(&w->room, &w->lock);
    pthread_mutex_unlock(&w->lock);
}

double hl_writer_cpu(const hl_writer_t *w)
{
    clockid_t id;
    struct timespec ts;
    if (pthread_getcpuclockid(w->thread, &id) != 0 || clock_gettime(id, &ts) != 0) return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void hl_writer_free(hl_writer_t *w)
{
    if (!w) return;
    hl_writer_sync(w);
    pthread_mutex_lock(&w->lock);
    w->quit = 1;
    pthread_cond_signal(&w->work);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->work);
    pthread_cond_destroy(&w->room);
    for (int i = 0; i < HL_WRITER_SLOTS; i++)
        free(w->slot[i]);
    free(w);
}
