/* liballoc/harden_cache.h — per-thread buffers of a hardened heap (docs/hardening.md,
 * "Thread buffers").
 *
 * A hardened heap gives its threads no tiny caches (every operation reaches harden.c), but
 * two per-thread buffers take the locks off the common operations:
 *
 *   quarantine buffer  freed tiny and mid blocks (poisoned, state FREED, state byte clear), up
 *                      to HL_HCACHE_QBUF of them and HL_HCACHE_QBYTES bytes, handed to the
 *                      heap's shared quarantine in one locked batch when it is full;
 *   reuse cache        per tiny class, up to HL_HCACHE_SLOTS blocks that left the shared
 *                      quarantine (validated, still FREED and poisoned, never written since
 *                      their free: the cache is an array, not a list through the blocks), handed
 *                      out again without the class lock; their poison is verified in full when
 *                      they are handed out.
 *
 * Both hold only blocks that are free as far as every check is concerned, so a double free or
 * an invalid free of one is reported exactly as before. The buffers belong to a thread bound to
 * the heap (hl_tls_t state BOUND): thread exit flushes them (thread.c calls
 * hl_harden_thread_flush, which unmaps them: hl_hcache_drop), a thread that is not bound (never
 * allocated, or exiting) uses the shared quarantine directly. Fixed arenas do not use them
 * (their quarantine is drained at exhaustion). This file is the data structure only; harden.c
 * validates and moves blocks.
 */
#ifndef HL_HARDEN_CACHE_H
#define HL_HARDEN_CACHE_H

#include "internal.h"
#include "quarantine.h"

#define HL_HCACHE_QBUF   32u                /* quarantine buffer entries */
#define HL_HCACHE_QBYTES ((size_t)64 << 10) /* quarantine buffer bytes (bigger blocks skip it) */
#define HL_HCACHE_SLOTS  255u               /* reuse cache entries, shared by the classes */
#define HL_HCACHE_EPOCH  256u /* quarantine batches between two full releases of the cache */

_Static_assert(HL_HCACHE_SLOTS < 256, "entry links are bytes");

typedef struct hl_hcache_s {
    hl_heap_t *heap; /* heap the buffers belong to (NULL: empty, unbound) */
    uint64_t uid;    /* its uid (a destroyed heap's buffers are dropped) */
    uint32_t nq;     /* entries in q */
    uint32_t epoch;  /* quarantine batches handed over (the cache is released every EPOCH) */
    size_t qbytes;   /* their bytes */
    int64_t live;    /* usable bytes this thread allocated minus those it freed, not yet added
                        to the heap's estimate of its live bytes (harden.c: the quarantine's
                        budget follows it) */
    void *q[HL_HCACHE_QBUF];
    uint32_t qsz[HL_HCACHE_QBUF];
    /* The thread's own quarantine: the full buffers go here, and the blocks pushed out come
     * back to this thread's reuse cache, so that a block is poisoned and verified on the same
     * core (harden.c; its ring is mapped at the first full buffer, unmapped at thread exit,
     * handed to the heap's shared quarantine when the thread exits or changes heap). */
    hl_quarantine_t own;
    int own_counted; /* on the heap's list of own quarantines (harden.c, hl_hcache_list_t) */
    struct hl_hcache_s *own_next, *own_prev; /* that list's links */
    /* The reuse cache: per class a LIFO of entries linked by index (1 + index, 0 ends), so
     * that any mix of classes shares the entries; unused entries are on `spare` or past
     * `used`. */
    uint8_t head[HL_CLASS_COUNT];
    uint8_t next[HL_HCACHE_SLOTS];
    uint8_t spare, used;
    void *slot[HL_HCACHE_SLOTS];
} hl_hcache_t;

/* A heap's threads with an own quarantine (hl_hcache_t.own), so that a heap check can walk
 * every live thread's ring, not only the caller's: each ring is linked when its thread first
 * uses it and unlinked, under the lock, before its blocks go to the shared quarantine (the
 * thread leaves the heap or exits) — a block in a ring is always on a listed ring, never in
 * the hand-over between the two. Lock order: the list's lock, then a ring's or the shared
 * quarantine's; no tier lock is taken while the list's is held (a fork's prepare takes the
 * tiers' first, heap.c), except by a heap check's error reports (as with the quarantine's). */
typedef struct hl_hcache_list_s {
    hl_lock_t lock;
    struct hl_hcache_s *first;
    int n; /* threads on the list (read without the lock for the budget shares) */
} hl_hcache_list_t;

/* The calling thread's buffers for heap h (the default heap and the last other heap, like
 * hl_tls_of); NULL when h may not use them (fixed arena, thread not bound to h). When they
 * belong to another heap they are emptied first: handed to that heap through flush when it is
 * still alive, dropped when it is gone. */
hl_hcache_t *hl_hcache_of(hl_heap_t *h, void (*flush)(hl_heap_t *, hl_hcache_t *));
/* The calling thread's two buffers (harden_cache.c): NULL until hl_hcache_of first needs
 * one, then a page of their own mapped for it, unmapped at thread exit (hl_hcache_drop). Not
 * static TLS: glibc clears every module's static TLS in each new thread's stack, so 5.6 KiB of
 * buffers there were two resident pages in every thread of every program, hardened or not. One
 * dropped page is kept for the next thread (harden_cache.c). */
extern __thread hl_hcache_t *hl_hcache_main __attribute__((tls_model("initial-exec")));
extern __thread hl_hcache_t *hl_hcache_x __attribute__((tls_model("initial-exec")));

/* The calling thread's buffers when they belong to h (no binding), else NULL. */
static inline hl_hcache_t *hl_hcache_peek(hl_heap_t *h)
{
    hl_hcache_t *c = h == &hl_main_heap ? hl_hcache_main : hl_hcache_x;
    return c && c->heap == h && c->uid == h->uid ? c : NULL;
}
/* The calling thread's buffers of h's kind (default heap, or other heaps) when they hold
 * blocks of a live heap (h, or the other heap they still belong to), else NULL. */
hl_hcache_t *hl_hcache_slot_of(hl_heap_t *h);
/* Link c (own_counted clear) onto l / unlink it (own_counted set); the caller holds l->lock. */
void hl_hcache_list_add(hl_hcache_list_t *l, hl_hcache_t *c);
void hl_hcache_list_del(hl_hcache_list_t *l, hl_hcache_t *c);
/* Visit the blocks of every listed thread's own quarantine (the caller holds l->lock; each
 * ring is walked under its own lock). */
void hl_hcache_list_walk(hl_hcache_list_t *l, void (*cb)(void *p, void *arg), void *arg);
/* Forget every block in c (they belong to a heap that is gone). */
void hl_hcache_reset(hl_hcache_t *c);
/* Thread exit: release the calling thread's buffers of h's kind (emptied before; their own
 * quarantine's ring is unmapped): the page is kept for the next thread's first use when no
 * other is kept, else unmapped. A later operation of the thread finds none. */
void hl_hcache_drop(hl_heap_t *h);
/* Buffers threads hold (mapped at a first use and not dropped), over all threads (tests). */
size_t hl_hcache_live(void);
/* Pages mapped for buffers so far (a reused page is not counted again; tests). */
size_t hl_hcache_mapped(void);

/* Add a freed block to the quarantine buffer: 1, or 0 when it is full (flush it first). */
static inline int hl_hcache_qpush(hl_hcache_t *c, void *p, size_t bytes)
{
    if (c->nq == HL_HCACHE_QBUF || c->qbytes + bytes > HL_HCACHE_QBYTES) return 0;
    c->q[c->nq] = p;
    c->qsz[c->nq] = (uint32_t)bytes;
    c->nq++;
    c->qbytes += bytes;
    return 1;
}

/* Take a block of class cls from the reuse cache, or NULL. */
static inline void *hl_hcache_pop(hl_hcache_t *c, unsigned cls)
{
    unsigned i = c->head[cls];
    if (!i) return NULL;
    c->head[cls] = c->next[i - 1];
    c->next[i - 1] = c->spare;
    c->spare = (uint8_t)i;
    return c->slot[i - 1];
}

/* Keep a block of class cls in the reuse cache: 1, or 0 when every entry is taken. */
static inline int hl_hcache_put(hl_hcache_t *c, unsigned cls, void *p)
{
    unsigned i = c->spare;
    if (i)
        c->spare = c->next[i - 1];
    else if (c->used < HL_HCACHE_SLOTS)
        i = ++c->used;
    else
        return 0;
    c->slot[i - 1] = p;
    c->next[i - 1] = c->head[cls];
    c->head[cls] = (uint8_t)i;
    return 1;
}

/* Visit the blocks of the reuse cache (class by class, newest first). */
static inline void hl_hcache_each(const hl_hcache_t *c, void (*cb)(void *p, void *arg), void *arg)
{
    for (unsigned cls = 0; cls < HL_CLASS_COUNT; cls++)
        for (unsigned i = c->head[cls]; i; i = c->next[i - 1])
            cb(c->slot[i - 1], arg);
}

#endif
