/* tracer/ingest_order.c — the store's reorder window: block rows back into id order.
 *
 * Block ids are given at allocation, rows are written at the free, so rows reach the store
 * in free order. SQLite appends a row whose rowid is one more than the table's largest
 * without a seek from the root (OP_NewRowid: the cursor stays at the last entry), but an
 * explicit rowid costs a seek from the root for the uniqueness check however close the row
 * is to the end. The window puts rows back into id order so that the store can use the
 * append path for most of them:
 *
 *   ring[id % cap] holds the rows of ids next .. next + cap - 1 that arrived;
 *   rows are handed on (emit) in id order as soon as the row of `next` is there;
 *   a row of an id below next (a block that lived longer than the window) is handed on at
 *   once, out of order (the store inserts it with its rowid);
 *   a row of an id at or beyond next + cap moves the window: the ids it passes are skipped
 *   (their rows come later, out of order), the rows it holds there are handed on.
 *
 * Invariants: every slot holds nothing or the row of the one id in [next, next + cap) that
 * maps to it; hi is the largest id placed (next - 1 when the ring is empty). Memory is cap
 * rows, whatever the trace. The rows a window holds are handed on by hl_order_drain (the
 * store drains before every commit, so a committed database holds every row given to it).
 */
#include "ingest_internal.h"

#include <stdlib.h>
#include <string.h>

struct hl_order_s {
    hl_orow_t *ring;
    uint8_t *used;
    size_t cap;
    int64_t next, hi;
    uint64_t late, skipped; /* rows handed on below next; ids the window passed unseen */
};

hl_order_t *hl_order_new(size_t cap, int64_t next)
{
    hl_order_t *o = calloc(1, sizeof *o);
    if (!o) return NULL;
    o->ring = malloc(cap * sizeof *o->ring);
    o->used = calloc(cap, 1);
    if (!o->ring || !o->used) {
        hl_order_free(o);
        return NULL;
    }
    o->cap = cap;
    o->next = next;
    o->hi = next - 1;
    return o;
}

void hl_order_free(hl_order_t *o)
{
    if (!o) return;
    if (o->ring && o->used)
        for (size_t i = 0; i < o->cap; i++)
            if (o->used[i]) free(o->ring[i].wide);
    free(o->ring);
    free(o->used);
    free(o);
}

/* Hand on the rows of ids next .. to (inclusive) that are there, skip the others; next is
 * to + 1 afterwards. */
static int drain_to(hl_order_t *o, int64_t to, hl_order_emit_fn emit, void *ctx)
{
    for (; o->next <= to; o->next++) {
        size_t i = (size_t)((uint64_t)o->next % o->cap);
        if (!o->used[i]) {
            o->skipped++;
            continue;
        }
        o->used[i] = 0;
        if (emit(ctx, &o->ring[i]) != 0) return -1;
    }
    if (o->hi < o->next - 1) o->hi = o->next - 1;
    return 0;
}

int hl_order_put(hl_order_t *o, const hl_orow_t *r, hl_order_emit_fn emit, void *ctx)
{
    if (r->id < o->next) { /* its window has passed: out of order */
        o->late++;
        return emit(ctx, r);
    }
    if ((uint64_t)(r->id - o->next) >= o->cap &&
        drain_to(o, r->id - (int64_t)o->cap, emit, ctx) != 0)
        return -1;
    size_t i = (size_t)((uint64_t)r->id % o->cap);
    if (o->used[i]) { /* the same id twice: the ledger never does it; keep both rows */
        o->late++;
        return emit(ctx, r);
    }
    o->ring[i] = *r;
    o->used[i] = 1;
    if (r->id > o->hi) o->hi = r->id;
    /* The run that starts at next, in order. */
    while (o->used[(size_t)((uint64_t)o->next % o->cap)]) {
        size_t j = (size_t)((uint64_t)o->next % o->cap);
        o->used[j] = 0;
        o->next++;
        if (emit(ctx, &o->ring[j]) != 0) return -1;
    }
    return 0;
}

int hl_order_drain(hl_order_t *o, hl_order_emit_fn emit, void *ctx)
{
    return drain_to(o, o->hi, emit, ctx);
}

void hl_order_counts(const hl_order_t *o, uint64_t *late, uint64_t *skipped)
{
    *late = o->late;
    *skipped = o->skipped;
}
