/* analyzer/stream.c — see stream.h. */
#include "stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CUR_ALLOC, CUR_FREE, CUR_ORPHAN, CUR_OS, CUR_N };

struct hl_stream_s {
    sqlite3 *db;
    sqlite3_stmt *st[CUR_N];
    int has[CUR_N];       /* cursor holds a row in ev[] */
    hl_event_t ev[CUR_N]; /* head row of each cursor */
};

/* Column lists are fixed: the loaders below read them by position. */
static const char *const sql_all[CUR_N] = {
    "SELECT id, pid, ptr, size, usable, tier, class, alloc_seq, alloc_ts, alloc_tid, alloc_path,"
    " alloc_cycles, alloc_stack, flags, prev_block FROM block %s ORDER BY alloc_seq",
    "SELECT id, pid, ptr, size, usable, tier, class, free_seq, free_ts, free_tid, free_path,"
    " free_cycles, free_stack, flags, alloc_ts, alloc_stack, alloc_seq, alloc_cycles FROM block"
    " WHERE free_seq IS NOT NULL %s ORDER BY free_seq",
    "SELECT seq, ts, pid, tid, ptr, path, cycles, stack FROM orphan_free %s ORDER BY seq",
    "SELECT seq, ts, pid, tid, op, addr, len, purpose FROM os_region %s ORDER BY seq",
};

hl_region_t hl_region_parse(const char *p)
{
    if (!p) return HL_REG_OTHER;
    if (!strcmp(p, "slab_segment") || !strcmp(p, "slab")) return HL_REG_SLAB;
    if (!strcmp(p, "tlsf_pool")) return HL_REG_TLSF_POOL;
    if (!strcmp(p, "large")) return HL_REG_LARGE;
    if (!strcmp(p, "arena")) return HL_REG_ARENA;
    return HL_REG_OTHER;
}

static int64_t i64(sqlite3_stmt *st, int i, int64_t def)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? def : sqlite3_column_int64(st, i);
}

static void load(hl_stream_t *s, int c)
{
    sqlite3_stmt *st = s->st[c];
    hl_event_t *e = &s->ev[c];
    memset(e, 0, sizeof *e);
    switch (c) {
    case CUR_ALLOC:
    case CUR_FREE:
        e->kind = c == CUR_ALLOC ? HL_EV_ALLOC : HL_EV_FREE;
        e->block = sqlite3_column_int64(st, 0);
        e->pid = sqlite3_column_int64(st, 1);
        e->ptr = (uint64_t)sqlite3_column_int64(st, 2);
        e->size = (uint64_t)sqlite3_column_int64(st, 3);
        e->usable = (uint64_t)sqlite3_column_int64(st, 4);
        e->tier = sqlite3_column_int(st, 5);
        e->cls = sqlite3_column_int(st, 6);
        e->seq = sqlite3_column_int64(st, 7);
        e->ts = sqlite3_column_int64(st, 8);
        e->tid = i64(st, 9, -1);
        e->path = (int)i64(st, 10, 0);
        e->cycles = i64(st, 11, -1);
        e->stack = i64(st, 12, -1);
        e->flags = sqlite3_column_int(st, 13);
        if (c == CUR_ALLOC) {
            e->prev_block = i64(st, 14, 0);
            e->alloc_stack = e->stack;
            e->alloc_ts = e->ts;
            e->alloc_seq = e->seq;
            e->alloc_cycles = e->cycles;
        } else {
            e->alloc_ts = sqlite3_column_int64(st, 14);
            e->alloc_stack = i64(st, 15, -1);
            e->alloc_seq = sqlite3_column_int64(st, 16);
            e->alloc_cycles = i64(st, 17, -1);
        }
        break;
    case CUR_ORPHAN:
        e->kind = HL_EV_ORPHAN;
        e->seq = sqlite3_column_int64(st, 0);
        e->ts = sqlite3_column_int64(st, 1);
        e->pid = sqlite3_column_int64(st, 2);
        e->tid = i64(st, 3, -1);
        e->ptr = (uint64_t)sqlite3_column_int64(st, 4);
        e->path = (int)i64(st, 5, 0);
        e->cycles = i64(st, 6, -1);
        e->stack = i64(st, 7, -1);
        e->alloc_stack = e->alloc_cycles = -1;
        break;
    case CUR_OS: {
        const char *op = (const char *)sqlite3_column_text(st, 4);
        e->kind = op && !strcmp(op, "unmap") ? HL_EV_UNMAP : HL_EV_MAP;
        e->seq = sqlite3_column_int64(st, 0);
        e->ts = sqlite3_column_int64(st, 1);
        e->pid = sqlite3_column_int64(st, 2);
        e->tid = i64(st, 3, -1);
        e->ptr = (uint64_t)sqlite3_column_int64(st, 5);
        e->size = (uint64_t)sqlite3_column_int64(st, 6);
        e->purpose = hl_region_parse((const char *)sqlite3_column_text(st, 7));
        e->stack = e->alloc_stack = e->cycles = e->alloc_cycles = -1;
        break;
    }
    }
}

static int advance(hl_stream_t *s, int c, char *err, size_t errlen)
{
    int rc = sqlite3_step(s->st[c]);
    if (rc == SQLITE_ROW) {
        load(s, c);
        s->has[c] = 1;
        return 0;
    }
    s->has[c] = 0;
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "reading events: %s", sqlite3_errmsg(s->db));
        return -1;
    }
    return 0;
}

hl_stream_t *hl_stream_open(sqlite3 *db, int64_t pid, char *err, size_t errlen)
{
    hl_stream_t *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->db = db;
    for (int c = 0; c < CUR_N; c++) {
        char where[64] = "", q[512];
        if (pid > 0)
            snprintf(where, sizeof where, "%s pid = %lld", c == CUR_FREE ? "AND" : "WHERE",
                     (long long)pid);
        snprintf(q, sizeof q, sql_all[c], where);
        if (sqlite3_prepare_v2(db, q, -1, &s->st[c], NULL) != SQLITE_OK) {
            snprintf(err, errlen, "preparing the event query: %s", sqlite3_errmsg(db));
            hl_stream_close(s);
            return NULL;
        }
        if (advance(s, c, err, errlen) < 0) {
            hl_stream_close(s);
            return NULL;
        }
    }
    return s;
}

/* Order of the head rows: by seq; on equal seq a free comes first (the two sides of a
 * realloc may share one seq: the old block ends, then the new one starts), unless it is the
 * free of a block allocated at that very seq. */
static int before(const hl_event_t *a, int ca, const hl_event_t *b, int cb)
{
    if (a->seq != b->seq) return a->seq < b->seq;
    int ra = ca == CUR_FREE ? (a->alloc_seq == a->seq ? CUR_N : -1) : ca;
    int rb = cb == CUR_FREE ? (b->alloc_seq == b->seq ? CUR_N : -1) : cb;
    return ra < rb;
}

int hl_stream_next(hl_stream_t *s, hl_event_t *ev, char *err, size_t errlen)
{
    int best = -1;
    for (int c = 0; c < CUR_N; c++)
        if (s->has[c] && (best < 0 || before(&s->ev[c], c, &s->ev[best], best))) best = c;
    if (best < 0) return 0;
    *ev = s->ev[best];
    return advance(s, best, err, errlen) < 0 ? -1 : 1;
}

void hl_stream_close(hl_stream_t *s)
{
    if (!s) return;
    for (int c = 0; c < CUR_N; c++)
        sqlite3_finalize(s->st[c]);
    free(s);
}
