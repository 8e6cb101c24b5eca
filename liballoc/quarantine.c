/* liballoc/quarantine.c — the quarantine FIFO (see quarantine.h). */
#include "quarantine.h"

int hl_quarantine_init(hl_quarantine_t *q, size_t budget, size_t cap)
{
    hl_lock_init(&q->lock);
    q->head = q->count = q->bytes = 0;
    q->budget = budget;
    q->cap = cap;
    q->ring = NULL;
    if (!cap) return 0;
    q->ring =
        hl_os_map(hl_align_up(cap * sizeof(hl_qentry_t), hl_page_size), hl_page_size, "quarantine");
    return q->ring ? 0 : -1;
}

void hl_quarantine_fini(hl_quarantine_t *q)
{
    if (q->ring)
        hl_os_unmap(q->ring, hl_align_up(q->cap * sizeof(hl_qentry_t), hl_page_size), "quarantine");
    q->ring = NULL;
    q->cap = q->count = 0;
}

/* Pop the oldest entry. Caller holds the lock; count > 0. */
static void *pop_locked(hl_quarantine_t *q)
{
    hl_qentry_t *e = &q->ring[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    q->bytes -= e->bytes;
    return e->p;
}

size_t hl_quarantine_push(hl_quarantine_t *q, void *p, size_t bytes, void **out, size_t max)
{
    if (!q->ring || bytes > q->budget || !max) {
        if (max) out[0] = p;
        return max ? 1 : 0;
    }
    size_t n = 0;
    hl_lock(&q->lock);
    while (n + 1 < max && q->count && (q->count == q->cap || q->bytes + bytes > q->budget))
        out[n++] = pop_locked(q);
    if (q->count == q->cap) { /* could not make room within max: this block skips the FIFO */
        hl_unlock(&q->lock);
        out[n++] = p;
        return n;
    }
    hl_qentry_t *e = &q->ring[(q->head + q->count) % q->cap];
    e->p = p;
    e->bytes = bytes;
    q->count++;
    q->bytes += bytes;
    hl_unlock(&q->lock);
    return n;
}

size_t hl_quarantine_drain(hl_quarantine_t *q, void **out, size_t max)
{
    size_t n = 0;
    if (!q->ring) return 0;
    hl_lock(&q->lock);
    while (n < max && q->count)
        out[n++] = pop_locked(q);
    hl_unlock(&q->lock);
    return n;
}

void hl_quarantine_walk(hl_quarantine_t *q, void (*cb)(void *p, void *arg), void *arg)
{
    if (!q->ring) return;
    hl_lock(&q->lock);
    for (size_t i = 0; i < q->count; i++)
        cb(q->ring[(q->head + i) % q->cap].p, arg);
    hl_unlock(&q->lock);
}
