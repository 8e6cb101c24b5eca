/* analyzer/stream.c — see stream.h.
 *
 * One pass over the block table gives every lifetime's two ends. Rows are read in allocation
 * order; each row's allocation is an event now, and its free end (if any) waits in a radix
 * heap (radixq.h) keyed by free_seq until the merge reaches it. It holds exactly the blocks
 * allocated and not yet freed at the current point: memory is bounded by the live set.
 *
 * Allocation order: the recorder numbers blocks as it sees their allocations, so rowid order
 * is alloc_seq order and the scan is a plain sequential table walk (no index lookups). The
 * stream checks that promise row by row; when a database breaks it, hl_stream_next() fails
 * with HL_STREAM_REORDER and the caller reopens the stream with by_index set, which reads
 * through the block_alloc_seq index instead.
 */
#include "stream.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "blockreader.h"
#include "evqueue.h"
#include "hmap.h"
#include "radixq.h"
#include "rundb.h"

enum { CUR_BLOCK, CUR_ORPHAN, CUR_OS, CUR_N };

/* A pending free end, packed to 96 bytes (an hl_event_t is 160): the pool is read at random,
 * so its size decides the cache misses. Cycle counts above 2^31 - 1 are clamped. */
typedef struct hl_pend_s {
    int64_t seq, ts, block, alloc_ts, alloc_seq;
    uint64_t ptr, size, usable;
    int32_t pid, tid, cycles, alloc_cycles, stack, alloc_stack;
    int16_t path;
    int8_t tier, cls;
    uint8_t flags;
} hl_pend_t;

static inline int32_t clamp32(int64_t v)
{
    return v > INT32_MAX ? INT32_MAX : (int32_t)v;
}

static inline void pack(hl_pend_t *p, const hl_event_t *e)
{
    p->seq = e->seq;
    p->ts = e->ts;
    p->block = e->block;
    p->alloc_ts = e->alloc_ts;
    p->alloc_seq = e->alloc_seq;
    p->ptr = e->ptr;
    p->size = e->size;
    p->usable = e->usable;
    p->pid = (int32_t)e->pid;
    p->tid = (int32_t)e->tid;
    p->cycles = clamp32(e->cycles);
    p->alloc_cycles = clamp32(e->alloc_cycles);
    p->stack = clamp32(e->stack);
    p->alloc_stack = clamp32(e->alloc_stack);
    p->path = (int16_t)e->path;
    p->tier = (int8_t)e->tier;
    p->cls = (int8_t)e->cls;
    p->flags = (uint8_t)e->flags;
}

static inline void unpack(hl_event_t *e, const hl_pend_t *p)
{
    e->kind = HL_EV_FREE;
    e->seq = p->seq;
    e->ts = p->ts;
    e->block = p->block;
    e->pid = p->pid;
    e->tid = p->tid;
    e->ptr = p->ptr;
    e->size = p->size;
    e->usable = p->usable;
    e->tier = p->tier;
    e->cls = p->cls;
    e->path = p->path;
    e->cycles = p->cycles;
    e->stack = p->stack;
    e->alloc_stack = p->alloc_stack;
    e->flags = p->flags;
    e->alloc_ts = p->alloc_ts;
    e->alloc_seq = p->alloc_seq;
    e->alloc_cycles = p->alloc_cycles;
    e->prev_block = 0;
    e->purpose = HL_REG_OTHER;
}

struct hl_stream_s {
    sqlite3 *db;
    sqlite3_stmt *st[CUR_N];
    int has[CUR_N];                /* cursor holds a row in ev[] */
    hl_event_t ev[CUR_N];          /* head row of the SQL cursors */
    const hl_event_t *head[CUR_N]; /* head row of each cursor: ev[c], or the block row's alloc */
    int64_t last_alloc_seq;
    hl_pend_t *pool; /* pending free ends, packed */
    size_t npool, pool_cap;
    uint32_t *spare; /* free slots of pool */
    size_t nspare, spare_cap;
    hl_radixq_t rq; /* pending free ends by seq << 4 | rank: pool slots */
    /* The one pending free end while rq is empty (a short-lived block's, most often), kept
     * out of rq: rq's order is the same as if it had been pushed there, because it moves
     * into rq (before anything else is pushed) as soon as a second one comes. */
    hl_pend_t soon;
    uint64_t soon_key;                /* its rq key, clamped as rq would */
    int has_soon;                     /* invariant: has_soon implies rq is empty */
    hl_blockreader_t *blocks;         /* the block rows; s->db is its connection */
    const hl_block_row_t *row;        /* head block row: its alloc end is ev[CUR_BLOCK] */
    int all_pids;                     /* the stream reads every process's blocks */
    int blocks_done;                  /* the block cursor reached its end */
    hl_hmap_t unfreed, unfreed_bytes; /* pid -> blocks never freed (not failed), their bytes */
    /* The merge runs on its own thread and hands events over in chunks. */
    pthread_t thread;
    int started;
    hl_evq_t *q;
    double cpu_s; /* the merge thread's CPU time, when it ended */
    /* The consumer's side, on a cache line of its own: sharing one with the merge's fields
     * cost a cache miss per event on both threads. */
    struct {
        hl_evchunk_t *cur; /* consumer's chunk */
        size_t pos;
    } __attribute__((aligned(64))) c;
    char pad[64 - 2 * sizeof(void *)];
};

/* Column lists are fixed: the loaders below read them by position. */
static const char *const sql_orphan =
    "SELECT seq, ts, pid, tid, ptr, path, cycles, stack FROM orphan_free %s ORDER BY seq";
static const char *const sql_os =
    "SELECT seq, ts, pid, tid, op, addr, len, purpose FROM os_region %s ORDER BY seq";

hl_region_t hl_region_parse(const char *p)
{
    if (!p) return HL_REG_OTHER;
    if (!strcmp(p, "slab_segment") || !strcmp(p, "slab")) return HL_REG_SLAB;
    if (!strcmp(p, "tlsf_pool")) return HL_REG_TLSF_POOL;
    if (!strcmp(p, "large")) return HL_REG_LARGE;
    if (!strcmp(p, "arena")) return HL_REG_ARENA;
    return HL_REG_OTHER;
}

/* Free ends: ordered by seq; on equal seq a free comes before an allocation (the two sides
 * of a realloc may share one seq), except the free of a block allocated at that very seq. */
static inline int rank(const hl_event_t *e)
{
    if (e->kind == HL_EV_FREE) return e->alloc_seq == e->seq ? 9 : 0;
    return 1 + (int)e->kind;
}

/* The pool is read at random (frees come in another order than allocations): on 4 KiB
 * pages most reads also miss the TLB. Ask for transparent huge pages where they fit. */
static void huge_pages(void *p, size_t len)
{
    uintptr_t lo = ((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1);
    uintptr_t hi = ((uintptr_t)p + len) & ~(uintptr_t)((2u << 20) - 1);
    if (hi > lo) madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

static void pending_push_rq(hl_stream_t *s, const hl_pend_t *p, uint64_t key)
{
    uint32_t slot;
    if (s->nspare) {
        slot = s->spare[--s->nspare];
    } else {
        size_t old_cap = s->pool_cap;
        HL_VEC_PUSH(s->pool, s->npool, s->pool_cap);
        slot = (uint32_t)(s->npool - 1);
        if (s->pool_cap != old_cap) huge_pages(s->pool, s->pool_cap * sizeof *s->pool);
    }
    s->pool[slot] = *p;
    hl_radixq_push(&s->rq, key, slot);
}

static void pending_push(hl_stream_t *s, const hl_event_t *e)
{
    uint64_t key = (uint64_t)e->seq << 4 | (uint64_t)rank(e);
    if (!s->has_soon && !s->rq.size) {
        pack(&s->soon, e);
        s->soon_key = key < s->rq.last ? s->rq.last : key;
        s->has_soon = 1;
        return;
    }
    if (s->has_soon) {
        s->has_soon = 0;
        pending_push_rq(s, &s->soon, s->soon_key);
    }
    hl_pend_t p;
    pack(&p, e);
    pending_push_rq(s, &p, key);
}

static void pending_pop(hl_stream_t *s, hl_event_t *out)
{
    if (s->has_soon) {
        s->has_soon = 0;
        unpack(out, &s->soon);
        return;
    }
    uint32_t slot = hl_radixq_pop(&s->rq).slot;
    unpack(out, &s->pool[slot]);
    *HL_VEC_PUSH(s->spare, s->nspare, s->spare_cap) = slot;
}

static void load_orphan(hl_stream_t *s)
{
    sqlite3_stmt *st = s->st[CUR_ORPHAN];
    hl_event_t *e = &s->ev[CUR_ORPHAN];
    memset(e, 0, sizeof *e);
    e->kind = HL_EV_ORPHAN;
    e->seq = sqlite3_column_int64(st, 0);
    e->ts = hl_ts(sqlite3_column_int64(st, 1));
    e->pid = sqlite3_column_int64(st, 2);
    e->tid = hl_col_i64(st, 3, -1);
    e->ptr = (uint64_t)sqlite3_column_int64(st, 4);
    e->path = (int)hl_col_i64(st, 5, 0);
    e->cycles = hl_col_i64(st, 6, -1);
    e->stack = hl_col_i64(st, 7, -1);
    e->alloc_stack = e->alloc_cycles = -1;
}

static void load_os(hl_stream_t *s)
{
    sqlite3_stmt *st = s->st[CUR_OS];
    hl_event_t *e = &s->ev[CUR_OS];
    memset(e, 0, sizeof *e);
    const char *op = (const char *)sqlite3_column_text(st, 4);
    e->kind = op && !strcmp(op, "unmap") ? HL_EV_UNMAP : HL_EV_MAP;
    e->seq = sqlite3_column_int64(st, 0);
    e->ts = hl_ts(sqlite3_column_int64(st, 1));
    e->pid = sqlite3_column_int64(st, 2);
    e->tid = hl_col_i64(st, 3, -1);
    e->ptr = (uint64_t)sqlite3_column_int64(st, 5);
    e->size = (uint64_t)sqlite3_column_int64(st, 6);
    e->purpose = hl_region_parse((const char *)sqlite3_column_text(st, 7));
    e->stack = e->alloc_stack = e->cycles = e->alloc_cycles = -1;
}

/* Step cursor c: 0, or -1 on a database error, or HL_STREAM_REORDER. */
static int advance(hl_stream_t *s, int c, char *err, size_t errlen)
{
    if (c == CUR_BLOCK) {
        int rc = hl_blockreader_next(s->blocks, &s->row, err, errlen);
        s->has[c] = rc > 0;
        if (rc == 0) s->blocks_done = 1;
        if (rc <= 0) return rc;
        s->head[c] = &s->row->alloc;
        if (!s->row->has_free && !(s->row->alloc.flags & HL_BF_FAILED)) {
            uint64_t pid = (uint64_t)s->row->alloc.pid;
            ++*hl_hmap_put(&s->unfreed, pid, 0, NULL);
            *hl_hmap_put(&s->unfreed_bytes, pid, 0, NULL) += s->row->alloc.size;
        }
        if (s->row->alloc.seq < s->last_alloc_seq) {
            snprintf(err, errlen, "block ids are not in allocation order");
            return HL_STREAM_REORDER;
        }
        s->last_alloc_seq = s->row->alloc.seq;
        return 0;
    }
    int rc = sqlite3_step(s->st[c]);
    if (rc == SQLITE_ROW) {
        s->has[c] = 1;
        if (c == CUR_ORPHAN)
            load_orphan(s);
        else
            load_os(s);
        return 0;
    }
    s->has[c] = 0;
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "reading events: %s", sqlite3_errmsg(s->db));
        return -1;
    }
    return 0;
}

static void *merge_main(void *arg);

hl_stream_t *hl_stream_open(sqlite3 *db, int64_t pid, int by_index, char *err, size_t errlen)
{
    hl_stream_t *s = aligned_alloc(64, sizeof *s);
    if (!s) return NULL;
    memset(s, 0, sizeof *s);
    s->rq = (hl_radixq_t)HL_RADIXQ_INIT;
    s->last_alloc_seq = INT64_MIN;
    s->all_pids = pid <= 0;
    for (int c = 0; c < CUR_N; c++)
        s->head[c] = &s->ev[c];
    char where[64] = "", q[512];
    if (pid > 0) snprintf(where, sizeof where, "WHERE pid = %lld", (long long)pid);
    s->blocks = hl_blockreader_open(db, pid, by_index, err, errlen);
    if (!s->blocks) {
        hl_stream_close(s);
        return NULL;
    }
    /* The other cursors use the block reader's connection: one snapshot for all. */
    s->db = hl_blockreader_db(s->blocks);
    for (int c = 0; c < CUR_N; c++) {
        if (c != CUR_BLOCK) {
            snprintf(q, sizeof q, c == CUR_ORPHAN ? sql_orphan : sql_os, where);
            if (sqlite3_prepare_v2(s->db, q, -1, &s->st[c], NULL) != SQLITE_OK) {
                snprintf(err, errlen, "preparing the event query: %s", sqlite3_errmsg(s->db));
                hl_stream_close(s);
                return NULL;
            }
        }
        if (advance(s, c, err, errlen) != 0) {
            hl_stream_close(s);
            return NULL;
        }
    }
    if (!(s->q = hl_evq_new())) {
        snprintf(err, errlen, "out of memory");
        hl_stream_close(s);
        return NULL;
    }
    if (pthread_create(&s->thread, NULL, merge_main, s) != 0) {
        snprintf(err, errlen, "cannot start the stream thread");
        hl_stream_close(s);
        return NULL;
    }
    s->started = 1;
    return s;
}

/* The merge: the next event in seq order, on the merge thread. */
static int merge_next(hl_stream_t *s, hl_event_t *ev, char *err, size_t errlen)
{
    int from = -1; /* -1: the pending free ends */
    int64_t best_seq = 0;
    int best_rank = 0;
    const hl_radixq_ent_t *top = s->has_soon ? NULL : hl_radixq_top(&s->rq);
    int pending = s->has_soon || top;
    if (s->has_soon) {
        best_seq = (int64_t)(s->soon_key >> 4);
        best_rank = (int)(s->soon_key & 15);
    } else if (top) {
        best_seq = (int64_t)(top->key >> 4);
        best_rank = (int)(top->key & 15);
        __builtin_prefetch(&s->pool[top->slot]);
    }
    for (int c = 0; c < CUR_N; c++) {
        if (!s->has[c]) continue;
        const hl_event_t *e = s->head[c];
        if ((from == -1 && !pending) || e->seq < best_seq ||
            (e->seq == best_seq && rank(e) < best_rank)) {
            best_seq = e->seq;
            best_rank = rank(e);
            from = c;
        }
    }
    if (from < 0) {
        if (!pending) return 0;
        pending_pop(s, ev);
        return 1;
    }
    *ev = *s->head[from];
    if (from == CUR_BLOCK && s->row->has_free) pending_push(s, &s->row->free);
    int rc = advance(s, from, err, errlen);
    return rc < 0 ? rc : 1;
}

static void *merge_main(void *arg)
{
    hl_stream_t *s = arg;
    hl_evchunk_t *c;
    while ((c = hl_evq_fill_begin(s->q))) {
        int rc = 1;
        c->n = 0;
        while (c->n < HL_EVQ_EVENTS &&
               (rc = merge_next(s, &c->ev[c->n], c->err, sizeof c->err)) > 0)
            c->n++;
        c->end = rc <= 0;
        c->rc = rc < 0 ? rc : 0;
        c->pending = s->rq.size + (size_t)s->has_soon;
        hl_evq_fill_end(s->q);
        if (c->end) break;
    }
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    s->cpu_s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    return NULL;
}

int hl_stream_next(hl_stream_t *s, hl_event_t *ev, char *err, size_t errlen)
{
    const hl_event_t *e;
    int rc = hl_stream_next_ref(s, &e, err, errlen);
    if (rc > 0) *ev = *e;
    return rc;
}

int hl_stream_next_ref(hl_stream_t *s, const hl_event_t **ev, char *err, size_t errlen)
{
    for (;;) {
        if (!s->c.cur) {
            s->c.cur = hl_evq_take_begin(s->q);
            s->c.pos = 0;
        }
        if (s->c.pos < s->c.cur->n) {
            *ev = &s->c.cur->ev[s->c.pos++];
            return 1;
        }
        if (s->c.cur->end) {
            if (s->c.cur->rc < 0) snprintf(err, errlen, "%s", s->c.cur->err);
            return s->c.cur->rc;
        }
        hl_evq_take_end(s->q);
        s->c.cur = NULL;
    }
}

int hl_stream_take_unfreed(hl_stream_t *s, hl_hmap_t *blocks, hl_hmap_t *bytes)
{
    /* The merge thread is done with the maps: it filled the last chunk after its last row. */
    if (!s->all_pids || !s->blocks_done || !s->c.cur || !s->c.cur->end || s->c.cur->rc != 0)
        return 0;
    *blocks = s->unfreed;
    *bytes = s->unfreed_bytes;
    memset(&s->unfreed, 0, sizeof s->unfreed);
    memset(&s->unfreed_bytes, 0, sizeof s->unfreed_bytes);
    return 1;
}

size_t hl_stream_pending(const hl_stream_t *s)
{
    return s->c.cur ? s->c.cur->pending : 0;
}

void hl_stream_close(hl_stream_t *s)
{
    if (!s) return;
    if (s->started) {
        hl_evq_stop(s->q);
        pthread_join(s->thread, NULL);
        if (getenv("HEAPLEDGER_STATS"))
            fprintf(stderr, "heapledger: stream reader thread: %.3f s CPU\n", s->cpu_s);
    }
    hl_evq_free(s->q);
    for (int c = 0; c < CUR_N; c++)
        sqlite3_finalize(s->st[c]);
    hl_blockreader_close(s->blocks);
    hl_radixq_free(&s->rq);
    hl_hmap_free(&s->unfreed);
    hl_hmap_free(&s->unfreed_bytes);
    free(s->pool);
    free(s->spare);
    free(s);
}
