/* tracer/ingest_store.c — the storage side: rows into SQLite.
 *
 * One prepared statement per row kind, bound and stepped for each row; rows go into large
 * transactions (bulk: HL_STORE_TXN_ROWS rows, live: whatever arrived until the next
 * checkpoint). Bulk mode turns synchronous off (the file is new and only valid once the
 * ingest ends: a crash loses the whole ingest, never half a table) and journals nothing until
 * the end, when the file is switched to WAL like every run database; live mode keeps
 * synchronous=NORMAL in WAL, so every commit survives a crash or SIGKILL of collectd.
 * The first error is sticky: later calls return -1 at once and hl_store_errmsg() says what
 * failed ("disk full", "readonly", …).
 */
#include "db.h"
#include "hl_blockfmt.h"
#include "ingest_internal.h"
#include "ingest_writer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HL_STORE_TXN_ROWS 1000000
/* Segment bases kept (direct-mapped, 48 bytes each: 768 KiB): the rows of the last 33 M ids.
 * A row of a segment not kept waits for the SQLite thread and reads its base back from
 * block_seg; with 64 a block that lived more than 131,072 allocations did, and random
 * lifetimes over 100,000 blocks made a quarter of the rows wait (docs/PERFORMANCE.md). */
#define HL_STORE_SEGS 16384
/* Packed block rows per INSERT: one statement (its cursor opened once) for this many rows
 * appended in id order (32: 3,888 instructions per row in hl_store_block, 128: 3,558; of the
 * 330, 56 in the statement and 257 in binds, because record_bench's sizes repeat every 64
 * rows, so that a parameter holds the same size as 128 rows before: docs/PERFORMANCE.md). */
#define HL_STORE_BATCH 128
/* The reorder window (ingest_order.c), in rows: 65,536 rows of 104 bytes, 6.8 MB. */
#define HL_STORE_WINDOW 65536
/* Jobs per slot handed to the SQLite thread (ingest_writer.c): HL_WRITER_SLOTS slots of
 * 1,024 jobs of 112 bytes, 448 KiB. */
#define HL_STORE_JOBS 1024

enum {
    S_BLOCK,
    S_BLOCK_APPEND,
    S_BLOCK_SEG,
    S_BLOCK_SEG_GET,
    S_BLOCK_WIDE,
    S_BLOCK_WIDE_MARK,
    S_ORPHAN,
    S_STACK,
    S_FRAME,
    S_OS,
    S_ERROR,
    S_MODULE,
    S_MODULE_BID,
    S_MODULE_UNLOAD,
    S_THREAD,
    S_PROCESS,
    S_RUN,
    S_META,
    S_COUNT
};

static const char *const sql[S_COUNT] = {
    /* The packed row of schema version 4 (schemas/hl_blockfmt.h), not the view. */
    [S_BLOCK] = "INSERT INTO block_data(id, dptr, kind, ats, cyc, stk, fr, misc)"
                " VALUES (?,?,?,?,?,?,?,?)",
    /* The same without the rowid: the next one after the table's largest (OP_NewRowid, no
     * seek from the root); used only for the row of id tmax + 1. */
    [S_BLOCK_APPEND] =
        "INSERT INTO block_data(dptr, kind, ats, cyc, stk, fr, misc) VALUES (?,?,?,?,?,?,?)",
    [S_BLOCK_SEG] = "INSERT OR IGNORE INTO block_seg(seg, pid, ptr, ts, seq) VALUES (?,?,?,?,?)",
    [S_BLOCK_SEG_GET] = "SELECT pid, ptr, ts, seq FROM block_seg WHERE seg = ?",
    [S_BLOCK_WIDE] = "INSERT INTO block_wide VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [S_BLOCK_WIDE_MARK] = "INSERT INTO block_data(id) VALUES (?)",
    [S_ORPHAN] = "INSERT INTO orphan_free(seq, ts, pid, tid, ptr, path, cycles, stack)"
                 " VALUES (?,?,?,?,?,?,?,?)",
    [S_STACK] = "INSERT INTO stack(id, pid, depth) VALUES (?,?,?)",
    [S_FRAME] = "INSERT OR REPLACE INTO frame(stack_id, depth, ip, function, offset, file, line,"
                " module) VALUES (?,?,?,?,?,?,?,?)",
    [S_OS] = "INSERT INTO os_region(seq, ts, pid, tid, op, addr, len, purpose)"
             " VALUES (?,?,?,?,?,?,?,?)",
    [S_ERROR] = "INSERT INTO error(ts, pid, tid, kind, addr, size, details, stack, alloc_stack,"
                " free_stack) VALUES (?,?,?,?,?,?,?,?,?,?)",
    [S_MODULE] = "INSERT INTO module(pid, baddr, memsz, path, load_ts) VALUES (?,?,?,?,?)",
    [S_MODULE_BID] = "UPDATE module SET build_id = ?3 WHERE rowid = (SELECT max(rowid) FROM"
                     " module WHERE pid = ?1 AND baddr = ?2)",
    [S_MODULE_UNLOAD] = "UPDATE module SET unload_ts = ?3 WHERE rowid = (SELECT max(rowid) FROM"
                        " module WHERE pid = ?1 AND baddr = ?2 AND unload_ts IS NULL)",
    [S_THREAD] = "INSERT OR REPLACE INTO thread(pid, tid, name) VALUES (?,?,?)",
    [S_PROCESS] = "INSERT OR REPLACE INTO process(pid, procname, options, tsc_hz, start_ts,"
                  " end_ts, ppid) VALUES (?,?,?,?,?,?,?)",
    [S_RUN] = "INSERT OR REPLACE INTO run(id, command, options, host, version, tsc_hz, start_ts,"
              " end_ts, exit_status, events, discarded_events, arena_size)"
              " VALUES (1,?,?,?,?,?,?,?,?,?,?,?)",
    [S_META] = "INSERT OR REPLACE INTO meta(key, value) VALUES (?,?)",
};

/* A job for the SQLite thread: a block row the window handed on (emit_row), or the base of
 * a new segment (a row of block_seg). */
typedef struct job_s {
    int kind; /* J_ROW, J_SEG */
    union {
        hl_orow_t row;
        struct {
            int64_t seg;
            hl_bf_seg_t base;
        } seg;
    } u;
} job_t;
enum { J_ROW, J_SEG };

/* A value bound to a statement's parameter (it keeps it across sqlite3_reset). */
typedef struct bound_s {
    int64_t v;
    uint8_t set; /* 0 unknown, 1 the integer v, 2 NULL */
} bound_t;

struct hl_store_s {
    sqlite3 *db;
    sqlite3_stmt *st[S_COUNT];
    int live, in_txn;
    /* The first error: failed is read by both threads (FAILED), claimed by the first to
     * fail, which writes err before it sets failed. */
    int failed, claimed;
    /* The SQLite thread (ingest_writer.c): while it holds jobs, it alone uses the connection
     * and what the block rows' statements use (the batch, tmax, rows); every other use of
     * the connection first waits for it (own). NULL: the store thread does everything. */
    hl_writer_t *w;
    int64_t seg_hi; /* the largest segment block_seg can hold a row of */
    /* The segment bases (block_seg) used last, direct-mapped by segment number: rows come
     * nearly in id order, so one or two segments are in use at a time, and a few old ones
     * for the blocks that live long. */
    struct {
        int64_t seg;
        int state; /* 0 unknown, 1 base, 2 no base (the segment's rows go to block_wide) */
        hl_bf_seg_t base;
    } seg[HL_STORE_SEGS];
    uint64_t rows;
    hl_totals_t *totals; /* the block rows' totals, into block_totals (ingest_totals.c) */
    hl_order_t *order;   /* block rows back into id order (ingest_order.c) */
    /* block_data's largest rowid; the batch holds the rows of ids tmax + 1 .. tmax + nbatch,
     * which S_BLOCK_APPEND's rowid gives them. */
    int64_t tmax;
    sqlite3_stmt *st_batch; /* S_BLOCK_APPEND for HL_STORE_BATCH rows */
    int nbatch;             /* packed rows waiting in batch[] */
    hl_orow_t batch[HL_STORE_BATCH];
    /* What st_batch's and S_BLOCK_APPEND's parameters hold: a bind only where the value
     * changed (the constant and slowly changing columns are bound once in a while). */
    bound_t bound_batch[HL_STORE_BATCH * HL_BF_NCOLS], bound_one[HL_BF_NCOLS];
    uint64_t appended, placed; /* block_data rows stored without / with their rowid */
    char err[256];
};

#define FAILED(s) __atomic_load_n(&(s)->failed, __ATOMIC_ACQUIRE)

/* 1 for the first caller to fail: it writes err, then calls failed_set. */
static int claim(hl_store_t *s)
{
    return !__atomic_exchange_n(&s->claimed, 1, __ATOMIC_ACQ_REL);
}

static void failed_set(hl_store_t *s)
{
    __atomic_store_n(&s->failed, 1, __ATOMIC_RELEASE);
}

/* The store's first error, a message of its own (fail: SQLite's). Returns -1. */
static __attribute__((format(printf, 2, 3))) int fail_text(hl_store_t *s, const char *fmt, ...)
{
    if (!claim(s)) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    failed_set(s);
    return -1;
}

static void run_jobs(void *ctx, void *jobs, size_t n);

static int fail(hl_store_t *s, const char *what)
{
    if (!claim(s)) return -1;
    int code = sqlite3_extended_errcode(s->db);
    int sys = sqlite3_system_errno(s->db);
    if ((code & 0xff) == SQLITE_FULL)
        snprintf(s->err, sizeof s->err, "%s: disk full", what);
    else if (sys)
        snprintf(s->err, sizeof s->err, "%s: %s (%s)", what, sqlite3_errmsg(s->db), strerror(sys));
    else
        snprintf(s->err, sizeof s->err, "%s: %s", what, sqlite3_errmsg(s->db));
    failed_set(s);
    return -1;
}

/* The connection to this thread: wait until the SQLite thread has done every job given to
 * it. -1 when the store has failed. */
static int own(hl_store_t *s)
{
    if (s->w) hl_writer_sync(s->w);
    return FAILED(s) ? -1 : 0;
}

int hl_store_sync(hl_store_t *s)
{
    return own(s);
}

double hl_store_sql_cpu(const hl_store_t *s)
{
    return s->w ? hl_writer_cpu(s->w) : 0;
}

const char *hl_store_errmsg(const hl_store_t *s)
{
    return s->err;
}

static int exec(hl_store_t *s, const char *q)
{
    if (FAILED(s)) return -1;
    if (sqlite3_exec(s->db, q, NULL, NULL, NULL) != SQLITE_OK)
        return fail(s, strcmp(q, "COMMIT") ? q : "writing the database");
    return 0;
}

void hl_store_counts(const hl_store_t *s, uint64_t *appended, uint64_t *placed)
{
    *appended = s->appended;
    *placed = s->placed;
}

sqlite3 *hl_store_db(hl_store_t *st)
{
    own(st);
    return st->db;
}

/* The integer in the first column of query q's first row; 0 after fail(s, what). */
static int64_t first_int(hl_store_t *s, const char *q, const char *what)
{
    sqlite3_stmt *st = NULL;
    int64_t v = 0;
    if (sqlite3_prepare_v2(s->db, q, -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW)
        fail(s, what);
    else
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

hl_store_t *hl_store_open(sqlite3 *db, int live, char *err, size_t errlen)
{
    hl_store_t *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->db = db;
    s->live = live;
    s->totals = hl_totals_new();
    if (!s->totals) {
        free(s);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    /* Bulk: no journal at all while loading (the file is new and removed if the ingest
     * fails, so there is nothing to roll back to), a rollback journal at the end: every page
     * is written once instead of to the WAL and then to the database. */
    exec(s, live ? "PRAGMA synchronous = NORMAL" : "PRAGMA synchronous = OFF");
    if (!live) exec(s, "PRAGMA journal_mode = OFF");
    /* Bulk: 16 MiB. Rows arrive nearly in rowid order (a block's row is written at its
     * free), so the cache holds the b-tree's right edge and little else: 256 MiB made no
     * difference to the store thread's CPU (1 M pairs: 1.46-1.55 s either way) and made
     * the ingest's RSS grow with the database up to that size (`collect` of 1 M pairs:
     * 76 MiB peak with 256 MiB, 50 MiB with 16 MiB; docs/PERFORMANCE.md). Live (collectd,
     * one connection per session): the same 16 MiB, for the same reason; with 64 MiB
     * collectd's RSS grew with each session's database until the cache was full (36 MiB
     * after 0.8 M events, 101 MiB after 4 M; docs/collect.md). */
    exec(s, "PRAGMA cache_size = -16384");
    exec(s, "PRAGMA temp_store = MEMORY");
    for (int i = 0; i < S_COUNT && !s->failed; i++)
        if (sqlite3_prepare_v3(db, sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL) !=
            SQLITE_OK)
            fail(s, "preparing statements");
    if (!s->failed) {
        const char *one = strstr(sql[S_BLOCK_APPEND], " VALUES ") + 8, *head = sql[S_BLOCK_APPEND];
        size_t hl = (size_t)(one - head), ol = strlen(one);
        char *q = malloc(hl + HL_STORE_BATCH * (ol + 1) + 1);
        if (!q) {
            fail_text(s, "out of memory");
        } else {
            char *p = q + hl;
            memcpy(q, head, hl);
            for (int i = 0; i < HL_STORE_BATCH; i++) {
                if (i) *p++ = ',';
                memcpy(p, one, ol);
                p += ol;
            }
            *p = 0;
            if (sqlite3_prepare_v3(db, q, -1, SQLITE_PREPARE_PERSISTENT, &s->st_batch, NULL) !=
                SQLITE_OK)
                fail(s, "preparing statements");
            free(q);
        }
    }
    if (!s->failed && exec(s, "BEGIN") == 0) s->in_txn = 1;
    /* The append path needs the table's largest rowid (0 in a new database); a segment above
     * the largest in block_seg has no row there yet (seg_base). */
    s->seg_hi = -1;
    if (!s->failed)
        s->tmax = first_int(s, "SELECT coalesce(max(id), 0) FROM block_data", "reading block_data");
    if (!s->failed)
        s->seg_hi =
            first_int(s, "SELECT coalesce(max(seg), -1) FROM block_seg", "reading block_seg");
    if (!s->failed && !(s->order = hl_order_new(HL_STORE_WINDOW, s->tmax + 1)))
        fail_text(s, "out of memory");
    if (s->failed) {
        snprintf(err, errlen, "%s", s->err);
        hl_store_close(s, 0, NULL, 0);
        return NULL;
    }
    /* The block rows' statements in a thread of their own (HEAPLEDGER_STORE_THREAD=0: in
     * this one; also when the thread cannot be made). */
    const char *t = getenv("HEAPLEDGER_STORE_THREAD");
    if (!t || strcmp(t, "0") != 0) s->w = hl_writer_new(sizeof(job_t), HL_STORE_JOBS, run_jobs, s);
    return s;
}

/* The totals since the last write into block_totals, in the open transaction. */
static int write_totals(hl_store_t *s)
{
    if (own(s) != 0) return -1;
    if (hl_totals_write(s->totals, s->db) != 0) return fail(s, "writing block_totals");
    return 0;
}

static int flush_all(hl_store_t *s);

/* Commit the open transaction and begin the next; the rows still in the window and the
 * batch wait (bulk: a database is valid only once the ingest has ended). */
static int txn_restart(hl_store_t *s)
{
    if (s->in_txn && exec(s, "COMMIT") != 0) return -1;
    s->in_txn = 0;
    if (exec(s, "BEGIN") != 0) return -1;
    s->in_txn = 1;
    s->rows = 0;
    return 0;
}

int hl_store_commit(hl_store_t *s)
{
    /* Every row given so far is in the commit: the window is drained. */
    if (own(s) != 0 || flush_all(s) != 0) return -1;
    /* Live: every commit is a consistent database, its totals included. */
    if (s->live && s->in_txn && write_totals(s) != 0) return -1;
    return txn_restart(s);
}

int hl_store_close(hl_store_t *s, int indexes, char *err, size_t errlen)
{
    if (!s) return -1;
    /* The SQLite thread's jobs done, its thread ended: the rest happens here. */
    hl_writer_free(s->w);
    s->w = NULL;
    if (!s->failed) flush_all(s);
    if (getenv("HEAPLEDGER_STATS") && s->order) {
        uint64_t late, skipped;
        hl_order_counts(s->order, &late, &skipped);
        fprintf(stderr,
                "heapledger: store: %llu block rows appended in id order, %llu stored with their "
                "rowid (%llu after their window, %llu ids passed by it)\n",
                (unsigned long long)s->appended, (unsigned long long)s->placed,
                (unsigned long long)late, (unsigned long long)skipped);
    }
    if (!s->failed && s->in_txn) write_totals(s);
    if (!s->failed && s->in_txn)
        exec(s, "COMMIT");
    else if (s->in_txn)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    s->in_txn = 0;
    if (!s->failed && indexes) {
        char e[256];
        if (hl_db_create_indexes(s->db, e, sizeof e) != 0) fail_text(s, "%s", e);
    }
    /* A finished database is one file (bulk: journal off until now; record's chunks and
     * collectd: WAL while it fills): in WAL mode every read-only reader (report, diff, the
     * direct b-tree reader) would leave an empty -wal and a -shm behind, which record -o then
     * refuses as another database's side files. Best effort and without waiting: while a
     * reader has it open (the fleet view, a user's sqlite3) it stays in WAL mode (SQLITE_BUSY),
     * which loses nothing. */
    if (!s->failed) {
        sqlite3_busy_timeout(s->db, 0);
        sqlite3_exec(s->db, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL);
        sqlite3_busy_timeout(s->db, HL_DB_BUSY_MS);
    }
    for (int i = 0; i < S_COUNT; i++)
        sqlite3_finalize(s->st[i]);
    sqlite3_finalize(s->st_batch);
    hl_totals_free(s->totals);
    hl_order_free(s->order);
    for (int i = 0; i < s->nbatch; i++)
        free(s->batch[i].wide);
    int rc = s->failed ? -1 : 0;
    if (rc && err) snprintf(err, errlen, "%s", s->err);
    free(s);
    return rc;
}

/* Step a bound statement; counts the row toward the bulk transaction size. */
static int step(hl_store_t *s, int which, const char *what)
{
    sqlite3_stmt *st = s->st[which];
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return fail(s, what);
    if (++s->rows >= HL_STORE_TXN_ROWS && !s->live) return txn_restart(s);
    return 0;
}

static inline void bind_i(sqlite3_stmt *st, int i, int64_t v)
{
    sqlite3_bind_int64(st, i, v);
}

static inline void bind_opt(sqlite3_stmt *st, int i, int64_t v, int present)
{
    if (present)
        sqlite3_bind_int64(st, i, v);
    else
        sqlite3_bind_null(st, i);
}

static inline void bind_s(sqlite3_stmt *st, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

/* A row of block_seg (INSERT OR IGNORE: a row there already stays). */
static int insert_seg(hl_store_t *s, int64_t seg, const hl_bf_seg_t *b)
{
    sqlite3_stmt *st = s->st[S_BLOCK_SEG];
    bind_i(st, 1, seg);
    bind_i(st, 2, b->pid);
    bind_i(st, 3, b->ptr);
    bind_i(st, 4, b->ts);
    bind_i(st, 5, b->seq);
    return step(s, S_BLOCK_SEG, "writing blocks");
}

static int emit_row(void *ctx, const hl_orow_t *r);

/* A job to the SQLite thread, or done here when there is none. */
static int put_job(hl_store_t *s, const job_t *j)
{
    if (!s->w)
        return j->kind == J_ROW ? emit_row(s, &j->u.row)
                                : insert_seg(s, j->u.seg.seg, &j->u.seg.base);
    if (FAILED(s)) {
        if (j->kind == J_ROW) free(j->u.row.wide);
        return -1;
    }
    *(job_t *)hl_writer_next(s->w) = *j;
    hl_writer_put(s->w);
    return 0;
}

/* A row the window hands on (hl_order_emit_fn), to the SQLite thread. */
static int queue_row(void *ctx, const hl_orow_t *r)
{
    job_t j = {.kind = J_ROW, .u.row = *r};
    return put_job(ctx, &j);
}

/* The base of row r's segment: the row in block_seg, or r's own values when it is the first
 * row stored of its segment (a database that has the row already — a store opened again on
 * the same file — keeps it: the differences are taken from the row in the file). 1: *out
 * holds it; 0: the segment has none (r goes to block_wide); -1: error. */
static int seg_base(hl_store_t *s, const hl_bv_t *r, const hl_bf_seg_t **out)
{
    int64_t seg = hl_bf_seg_of(r->v[HL_BV_ID]);
    __typeof__(&s->seg[0]) c = &s->seg[(uint64_t)seg % HL_STORE_SEGS];
    if (c->state && c->seg == seg) {
        *out = &c->base;
        return c->state == 1;
    }
    hl_bf_seg_t b;
    int from = hl_bf_seg_from(r, &b);
    if (seg > s->seg_hi) {
        /* A segment new to block_seg: r makes its base (or none); the row goes in with the
         * block rows (the SQLite thread's jobs), no need to read it back. */
        s->seg_hi = seg;
        c->seg = seg;
        c->state = from ? 1 : 2;
        c->base = b;
        *out = &c->base;
        if (!from) return 0;
        job_t j = {.kind = J_SEG, .u.seg = {seg, b}};
        return put_job(s, &j) == 0 ? 1 : -1;
    }
    /* A segment seen before (its row left the cache) or in the file already. */
    if (own(s) != 0) return -1;
    if (from) {
        if (insert_seg(s, seg, &b) != 0) return -1;
    }
    sqlite3_stmt *st = s->st[S_BLOCK_SEG_GET];
    bind_i(st, 1, seg);
    int rc = sqlite3_step(st), ok = 0;
    if (rc == SQLITE_ROW) {
        ok = 1;
        for (int i = 0; i < 4; i++)
            if (sqlite3_column_type(st, i) != SQLITE_INTEGER) ok = 0;
        c->base.pid = sqlite3_column_int64(st, 0);
        c->base.ptr = sqlite3_column_int64(st, 1);
        c->base.ts = sqlite3_column_int64(st, 2);
        c->base.seq = sqlite3_column_int64(st, 3);
    }
    sqlite3_reset(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return fail(s, "reading block_seg");
    c->seg = seg;
    c->state = ok ? 1 : 2;
    *out = &c->base;
    return ok;
}

/* A row that does not fit the packing: whole into block_wide, a row of NULLs in block_data. */
static int store_wide(hl_store_t *s, const hl_bv_t *r)
{
    sqlite3_stmt *st = s->st[S_BLOCK_WIDE];
    for (int i = 0; i < HL_BV_NCOLS; i++)
        bind_opt(st, i + 1, r->v[i], !HL_BV_NUL(r, i));
    if (step(s, S_BLOCK_WIDE, "writing blocks") != 0) return -1;
    st = s->st[S_BLOCK_WIDE_MARK];
    bind_i(st, 1, r->v[HL_BV_ID]);
    return step(s, S_BLOCK_WIDE_MARK, "writing blocks");
}

/* Bind the packed columns of r from parameter k on; with b (what those parameters hold),
 * only those that change. Inlined and unrolled, the value compared first (it is what
 * differs): the SQLite thread's loop over a batch took 114 instructions per row, now 63
 * (docs/PERFORMANCE.md, "SQLite's fixed cost per block row"). */
_Static_assert(HL_BF_NCOLS == 7, "the unroll count below is block_data's packed columns");
static inline __attribute__((always_inline)) void bind_packed(sqlite3_stmt *st, int k,
                                                              const hl_orow_t *r, bound_t *b)
{
#pragma GCC unroll 7
    for (int col = 0; col < HL_BF_NCOLS; col++, k++) {
        int present = col != HL_BF_FR || !r->fr_null;
        int64_t v = present ? r->c[col] : 0;
        if (b) {
            uint8_t want = present ? 1 : 2;
            if (b[col].v == v && b[col].set == want) continue;
            b[col].set = want;
            b[col].v = v;
        }
        bind_opt(st, k, v, present);
    }
}

/* The rows waiting in the batch (ids tmax + 1 ...) into block_data without their rowid: one
 * statement for a full batch, one per row for the rest (at a commit). */
static int flush_blocks(hl_store_t *s)
{
    if (FAILED(s)) return -1;
    int n = s->nbatch;
    s->nbatch = 0;
    if (!n) return 0;
    int full = n == HL_STORE_BATCH, per = full ? n : 1; /* rows per statement */
    sqlite3_stmt *st = full ? s->st_batch : s->st[S_BLOCK_APPEND];
    for (int i = 0; i < n;) {
        bound_t *b = full ? s->bound_batch : s->bound_one;
        for (int j = 0, k = 1; j < per; j++, i++, k += HL_BF_NCOLS, b += HL_BF_NCOLS)
            bind_packed(st, k, &s->batch[i], b);
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) return fail(s, "writing blocks");
    }
    s->tmax += n;
    /* The rowids SQLite gave are the ids (tmax was the largest rowid): a check per batch. */
    if (sqlite3_last_insert_rowid(s->db) != s->tmax) {
        return fail_text(s, "writing blocks: block_data row %lld stored as %lld (internal error)",
                         (long long)s->tmax, (long long)sqlite3_last_insert_rowid(s->db));
    }
    s->appended += (uint64_t)n;
    /* Counted toward the bulk transaction size like the rows of step() (hl_store_block
     * restarts the transaction when it is reached). */
    s->rows += (uint64_t)n;
    return 0;
}

/* A row handed on by the window (hl_order_emit_fn): the next id of the batch joins it, any
 * other is stored with its rowid (after the batch, when it is beyond the table's end). */
static int emit_row(void *ctx, const hl_orow_t *r)
{
    hl_store_t *s = ctx;
    int rc = -1;
    if (FAILED(s)) goto out;
    if (!r->wide && r->id == s->tmax + 1 + s->nbatch) {
        s->batch[s->nbatch++] = *r;
        return s->nbatch == HL_STORE_BATCH ? flush_blocks(s) : 0;
    }
    if (r->id > s->tmax && flush_blocks(s) != 0) goto out;
    if (r->wide) {
        rc = store_wide(s, r->wide);
    } else {
        sqlite3_stmt *st = s->st[S_BLOCK];
        bind_i(st, 1, r->id);
        bind_packed(st, 2, r, NULL);
        rc = step(s, S_BLOCK, "writing blocks");
    }
    if (rc == 0) {
        s->placed++;
        if (r->id > s->tmax) s->tmax = r->id;
    }
out:
    free(r->wide);
    return rc;
}

/* Every row of the window, then the batch, into block_data. */
static int flush_all(hl_store_t *s)
{
    if (FAILED(s) || hl_order_drain(s->order, emit_row, s) != 0) return -1;
    return flush_blocks(s);
}

/* The SQLite thread: one slot of jobs, in order; then the bulk transaction's size (the
 * rows of flush_blocks count toward it). After an error the rows' wide parts are freed. */
static void run_jobs(void *ctx, void *jobs, size_t n)
{
    hl_store_t *s = ctx;
    job_t *j = jobs;
    for (size_t i = 0; i < n; i++) {
        if (j[i].kind == J_ROW)
            emit_row(s, &j[i].u.row);
        else if (!FAILED(s))
            insert_seg(s, j[i].u.seg.seg, &j[i].u.seg.base);
    }
    if (!FAILED(s) && s->rows >= HL_STORE_TXN_ROWS && !s->live) txn_restart(s);
}

/* The row as the view `block` gives it back. */
static void view_row(const hl_block_row_t *b, hl_bv_t *r)
{
    int64_t *v = r->v;
    r->null = 0;
#define OPT(i, val, present)                                                                       \
    do {                                                                                           \
        v[i] = (val);                                                                              \
        if (!(present)) r->null |= 1u << (i);                                                      \
    } while (0)
    v[HL_BV_ID] = b->id;
    v[HL_BV_PID] = b->pid;
    v[HL_BV_PTR] = (int64_t)b->ptr;
    v[HL_BV_SIZE] = (int64_t)b->size;
    v[HL_BV_USABLE] = (int64_t)b->usable;
    v[HL_BV_TIER] = b->tier;
    v[HL_BV_CLASS] = b->cls;
    v[HL_BV_ALLOC_SEQ] = (int64_t)b->alloc_seq;
    v[HL_BV_ALLOC_TS] = (int64_t)b->alloc_ts;
    v[HL_BV_ALLOC_TID] = b->alloc_tid;
    OPT(HL_BV_ALLOC_PATH, b->alloc_path, b->alloc_path != 0);
    OPT(HL_BV_ALLOC_CYCLES, b->alloc_cycles, b->alloc_cycles >= 0);
    OPT(HL_BV_ALLOC_STACK, b->alloc_stack, b->alloc_stack != 0);
    OPT(HL_BV_FREE_SEQ, (int64_t)b->free_seq, b->has_free);
    OPT(HL_BV_FREE_TS, (int64_t)b->free_ts, b->has_free);
    OPT(HL_BV_FREE_TID, b->free_tid, b->has_free);
    OPT(HL_BV_FREE_PATH, b->free_path, b->has_free && b->free_path != 0);
    OPT(HL_BV_FREE_CYCLES, b->free_cycles, b->has_free && b->free_cycles >= 0);
    OPT(HL_BV_FREE_STACK, b->free_stack, b->has_free && b->free_stack != 0);
    OPT(HL_BV_PREV_BLOCK, b->prev_block, b->prev_block != 0);
    v[HL_BV_FLAGS] = b->flags;
#undef OPT
}

int hl_store_block(hl_store_t *s, const hl_block_row_t *b)
{
    if (FAILED(s)) return -1;
    hl_bv_t r;
    view_row(b, &r);
    const hl_bf_seg_t *base;
    hl_orow_t o = {.id = b->id};
    int rc = seg_base(s, &r, &base);
    if (rc < 0) return -1;
    if (rc == 0 || !hl_bf_encode(&r, base, o.c, &o.fr_null)) {
        o.wide = malloc(sizeof *o.wide);
        if (!o.wide) return fail_text(s, "writing blocks: out of memory");
        *o.wide = r;
    }
    if (hl_order_put(s->order, &o, queue_row, s) != 0) return -1;
    if (!s->w && s->rows >= HL_STORE_TXN_ROWS && !s->live && txn_restart(s) != 0) return -1;
    hl_totals_block(s->totals, b);
    return 0;
}

int hl_store_orphan(hl_store_t *s, uint64_t seq, uint64_t ts, uint32_t pid, uint32_t tid,
                    uint64_t ptr, int path, int64_t cycles, int64_t stack)
{
    if (own(s) != 0) return -1;
    sqlite3_stmt *st = s->st[S_ORPHAN];
    bind_i(st, 1, (int64_t)seq);
    bind_i(st, 2, (int64_t)ts);
    bind_i(st, 3, pid);
    bind_i(st, 4, tid);
    bind_i(st, 5, (int64_t)ptr);
    bind_opt(st, 6, path, path != 0);
    bind_opt(st, 7, cycles, cycles >= 0);
    bind_opt(st, 8, stack, stack != 0);
    return step(s, S_ORPHAN, "writing orphan frees");
}

int hl_store_stack(hl_store_t *s, int64_t id, uint32_t pid, int depth)
{
    if (own(s) != 0) return -1;
    sqlite3_stmt *st = s->st[S_STACK];
    bind_i(st, 1, id);
    bind_i(st, 2, pid);
    bind_i(st, 3, depth);
    return step(s, S_STACK, "writing stacks");
}

int hl_store_frame(hl_store_t *s, int64_t stack_id, int depth, uint64_t ip, const hl_sym_t *y)
{
    if (own(s) != 0) return -1;
    sqlite3_stmt *st = s->st[S_FRAME];
    bind_i(st, 1, stack_id);
    bind_i(st, 2, depth);
    bind_i(st, 3, (int64_t)ip);
    bind_s(st, 4, y->function);
    bind_opt(st, 5, (int64_t)y->offset, y->module != NULL);
    bind_s(st, 6, y->file);
    bind_opt(st, 7, y->line, y->file != NULL);
    bind_s(st, 8, y->module);
    return step(s, S_FRAME, "writing frames");
}

int hl_store_os(hl_store_t *s, const hl_rec_t *r, const char *op)
{
    if (own(s) != 0) return -1;
    sqlite3_stmt *st = s->st[S_OS];
    bind_i(st, 1, (int64_t)r->seq);
    bind_i(st, 2, (int64_t)r->ts);
    bind_i(st, 3, r->pid);
    bind_i(st, 4, r->tid);
    bind_s(st, 5, op);
    bind_i(st, 6, (int64_t)r->a);
    bind_i(st, 7, (int64_t)r->b);
    bind_s(st, 8, r->ext);
    return step(s, S_OS, "writing OS regions");
}

int hl_store_error(hl_store_t *s, const hl_rec_t *r, int64_t stack, int64_t alloc_stack,
                   int64_t free_stack)
{
    if (own(s) != 0) return -1;
    const char *kind = r->ext ? r->ext : "";
    const char *details = r->ext ? kind + strlen(kind) + 1 : NULL;
    sqlite3_stmt *st = s->st[S_ERROR];
    bind_i(st, 1, (int64_t)r->ts);
    bind_i(st, 2, r->pid);
    bind_i(st, 3, r->tid);
    bind_s(st, 4, kind);
    bind_i(st, 5, (int64_t)r->a);
    bind_i(st, 6, (int64_t)r->b);
    bind_s(st, 7, details && *details ? details : NULL);
    bind_opt(st, 8, stack, stack != 0);
    bind_opt(st, 9, alloc_stack, alloc_stack != 0);
    bind_opt(st, 10, free_stack, free_stack != 0);
    return step(s, S_ERROR, "writing errors");
}

int hl_store_module(hl_store_t *s, uint32_t pid, uint64_t baddr, uint64_t memsz, const char *path,
                    uint64_t ts)
{
    if (own(s) != 0) return -1;
    sqlite3_stmt *st = s->st[S_MODULE];
    bind_i(st, 1, pid);
    bind_i(st, 2, (int64_t)baddr);
    bind_i(st, 3, (int64_t)memsz);
    bind_s(st, 4, path);
    bind_i(st, 5, (int64_t)ts);
    return step(s, S_MODULE, "writing modules");
}

int hl_store_module_build_id(hl_store_t *s, uint32_t pid, uint64_t baddr, const char *hex)
{
    if (own(s) != 0) return -1;
    sqlite3_stmt *st = s->st[S_MODULE_BID];
    bind_i(st, 1, pid);
    bind_i(st, 2, (int64_t)baddr);
    bind_s(st, 3, hex);
    return step(s, S_MODULE_BID, "writing build ids");
}

int hl_store_module_unload(hl_store_t *s, uint32_t pid, uint64_t baddr, uint64_t ts)
{
    if (own(s) != 0) return -1;
    sqlite3_stmt *st = s->st[S_MODULE_UNLOAD];
    bind_i(st, 1, pid);
    bind_i(st, 2, (int64_t)baddr);
    bind_i(st, 3, (int64_t)ts);
    return step(s, S_MODULE_UNLOAD, "writing module unloads");
}

int hl_store_thread(hl_store_t *s, uint32_t pid, uint32_t tid, const char *name)
{
    if (own(s) != 0) return -1;
    sqlite3_stmt *st = s->st[S_THREAD];
    bind_i(st, 1, pid);
    bind_i(st, 2, tid);
    bind_s(st, 3, name);
    return step(s, S_THREAD, "writing threads");
}

int hl_store_process(hl_store_t *s, uint32_t pid, uint32_t ppid, const char *procname,
                     const char *options, uint64_t tsc_hz, uint64_t start_ts, uint64_t end_ts)
{
    if (own(s) != 0) return -1;
    sqlite3_stmt *st = s->st[S_PROCESS];
    bind_i(st, 1, pid);
    bind_s(st, 2, procname);
    bind_s(st, 3, options);
    bind_opt(st, 4, (int64_t)tsc_hz, tsc_hz != 0);
    bind_i(st, 5, (int64_t)start_ts);
    bind_i(st, 6, (int64_t)end_ts);
    bind_opt(st, 7, ppid, ppid != 0);
    return step(s, S_PROCESS, "writing processes");
}

int hl_store_run(hl_store_t *s, const hl_run_row_t *r)
{
    if (own(s) != 0) return -1;
    sqlite3_stmt *st = s->st[S_RUN];
    bind_s(st, 1, r->command);
    bind_s(st, 2, r->options);
    bind_s(st, 3, r->host);
    bind_s(st, 4, r->version);
    bind_opt(st, 5, (int64_t)r->tsc_hz, r->tsc_hz != 0);
    bind_opt(st, 6, (int64_t)r->start_ts, r->has_ts);
    bind_opt(st, 7, (int64_t)r->end_ts, r->has_ts);
    bind_opt(st, 8, r->exit_status, r->has_exit_status);
    bind_i(st, 9, (int64_t)r->events);
    bind_i(st, 10, (int64_t)r->discarded);
    bind_i(st, 11, (int64_t)r->arena_size);
    return step(s, S_RUN, "writing the run");
}

int hl_store_meta(hl_store_t *s, const char *key, const char *value)
{
    if (own(s) != 0) return -1;
    sqlite3_stmt *st = s->st[S_META];
    bind_s(st, 1, key);
    bind_s(st, 2, value);
    return step(s, S_META, "writing meta");
}
