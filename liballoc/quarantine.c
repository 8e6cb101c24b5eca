/* liballoc/quarantine.c — the quarantine FIFO (see quarantine.h). */
#include "quarantine.h"

int hl_quarantine_init(hl_quarantine_t *q, size_t budget, size_t cap)
{
    hl_lock_init(&q->lock);
    q->head = q->count = q->bytes = 0;
    q->budget = budget;
    q->cap = q->lcap = q->want = cap;
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
    q->cap = q->lcap = q->want = q->count = 0;
}

/* Pop the oldest entry. Caller holds the lock; count > 0. */
static void *pop_locked(hl_quarantine_t *q)
{
    hl_qentry_t *e = &q->ring[q->head];
    if (++q->head == q->lcap) q->head = 0; /* no division on the way */
    q->count--;
    q->bytes -= e->bytes;
    return e->p;
}

size_t hl_quarantine_push_batch(hl_quarantine_t *q, void *const *p, const uint32_t *bytes, size_t n,
                                void **out, size_t max)
{
    size_t k = 0;
    if (!q->ring || n > max) { /* nothing is kept: every block goes back at once */
        for (size_t i = 0; i < n && i < max; i++)
            out[k++] = p[i];
        return k;
    }
    hl_lock(&q->lock);
    size_t budget = __atomic_load_n(&q->budget, __ATOMIC_RELAXED);
    size_t want = __atomic_load_n(&q->want, __ATOMIC_RELAXED);
    /* A new wrap point: when the entries in use lie below both (the ring is not wrapped). */
    if (want != q->lcap) {
        if (!q->count) q->head = 0;
        if (q->head + q->count <= (want < q->lcap ? want : q->lcap)) q->lcap = want;
    }
    size_t limit = want < q->lcap ? want : q->lcap; /* entries kept at most */
    /* Invariant at entry i: k + (n - i) <= max, room for every remaining block to skip. */
    for (size_t i = 0; i < n; i++) {
        if (bytes[i] > budget) {
            out[k++] = p[i];
            continue;
        }
        while (k + (n - i) < max && q->count && (q->count >= limit || q->bytes + bytes[i] > budget))
            out[k++] = pop_locked(q);
        if (q->count >= limit) { /* could not make room within max: skips the FIFO */
            out[k++] = p[i];
            continue;
        }
        size_t tail = q->head + q->count;
        hl_qentry_t *e = &q->ring[tail < q->lcap ? tail : tail - q->lcap];
        e->p = p[i];
        e->bytes = bytes[i];
        q->count++;
        q->bytes += bytes[i];
    }
    hl_unlock(&q->lock);
    return k;
}

size_t hl_quarantine_push(hl_quarantine_t *q, void *p, size_t bytes, void **out, size_t max)
{
    uint32_t b = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
    if (bytes > __atomic_load_n(&q->budget, __ATOMIC_RELAXED) && q->ring &&
        max) { /* not kept (b may be clamped) */
        out[0] = p;
        return 1;
    }
    return hl_quarantine_push_batch(q, &p, &b, 1, out, max);
}

void hl_quarantine_set_budget(hl_quarantine_t *q, size_t budget, size_t entries)
{
    if (!q->ring) return;
    if (entries > q->cap) entries = q->cap;
    if (entries < 1) entries = 1;
    __atomic_store_n(&q->budget, budget, __ATOMIC_RELAXED);
    __atomic_store_n(&q->want, entries, __ATOMIC_RELAXED);
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

size_t hl_quarantine_take(hl_quarantine_t *q, void **out, uint32_t *bytes, size_t max)
{
    size_t n = 0;
    if (!q->ring) return 0;
    hl_lock(&q->lock);
    while (n < max && q->count) {
        size_t b = q->ring[q->head].bytes;
        bytes[n] = b > UINT32_MAX ? UINT32_MAX : (uint32_t)b;
        out[n++] = pop_locked(q);
    }
    hl_unlock(&q->lock);
    return n;
}

void hl_quarantine_walk(hl_quarantine_t *q, void (*cb)(void *p, void *arg), void *arg)
{
    if (!q->ring) return;
    hl_lock(&q->lock);
    for (size_t i = 0; i < q->count; i++)
        cb(q->ring[(q->head + i) % q->lcap].p, arg);
    hl_unlock(&q->lock);
}
