/* analyzer/blockreader.c — see blockreader.h. */
#include "blockreader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "btree.h"
#include "hl_blockfmt.h"
#include "rundb.h"

struct hl_blockreader_s {
    sqlite3 *db;          /* the reader's own connection, in a read transaction */
    sqlite3_stmt *st;     /* the SQL reader (NULL while reading the file directly) */
    hl_btree_t *bt;       /* the direct reader */
    int fd;               /* the database file, for bt */
    int ncols;            /* columns of the block_data table */
    int cid[HL_BF_NCOLS]; /* position of each block_data column (hl_blockfmt.h) in a record */
    int cid_shift;        /* k > 0 when cid[i] = i + k for every column, else 0 */
    sqlite3_stmt *st_one; /* one row through the view (a row the direct reader leaves) */
    sqlite3_stmt *st_seg; /* a segment's bases */
    int64_t seg;          /* the segment of base; seg_state 0: none read yet */
    int seg_state;        /* 1: base holds it, 2: the segment has no (integer) bases */
    hl_bf_seg_t base;
    int64_t pid;        /* > 0: rows of that process only */
    int64_t last_id;    /* last rowid the direct reader returned */
    hl_block_row_t row; /* the row hl_blockreader_next returned */
    char err[256];
};

/* The block columns a row needs, in the order of the query and of f[] below, with the
 * value a NULL stands for. The SQL reader selects coalesce(column, null_value) from the view
 * `block`; the direct reader decodes block_data's packed records (hl_blockfmt.h), whose
 * columns it finds through PRAGMA table_info. */
enum { /* the view's columns, in hl_blockfmt.h's order (HL_BV_*) */
       F_ID = HL_BV_ID,
       F_PID = HL_BV_PID,
       F_PTR = HL_BV_PTR,
       F_SIZE = HL_BV_SIZE,
       F_USABLE = HL_BV_USABLE,
       F_TIER = HL_BV_TIER,
       F_CLASS = HL_BV_CLASS,
       F_ALLOC_SEQ = HL_BV_ALLOC_SEQ,
       F_ALLOC_TS = HL_BV_ALLOC_TS,
       F_ALLOC_TID = HL_BV_ALLOC_TID,
       F_ALLOC_PATH = HL_BV_ALLOC_PATH,
       F_ALLOC_CYCLES = HL_BV_ALLOC_CYCLES,
       F_ALLOC_STACK = HL_BV_ALLOC_STACK,
       F_FREE_SEQ = HL_BV_FREE_SEQ,
       F_FREE_TS = HL_BV_FREE_TS,
       F_FREE_TID = HL_BV_FREE_TID,
       F_FREE_PATH = HL_BV_FREE_PATH,
       F_FREE_CYCLES = HL_BV_FREE_CYCLES,
       F_FREE_STACK = HL_BV_FREE_STACK,
       F_PREV_BLOCK = HL_BV_PREV_BLOCK,
       F_FLAGS = HL_BV_FLAGS,
       F_N
};
static const struct {
    const char *name;
    int64_t null_value;
} fields[F_N] = {
    [F_ID] = {"id", 0},
    [F_PID] = {"pid", 0},
    [F_PTR] = {"ptr", 0},
    [F_SIZE] = {"size", 0},
    [F_USABLE] = {"usable", 0},
    [F_TIER] = {"tier", 0},
    [F_CLASS] = {"class", -1},
    [F_ALLOC_SEQ] = {"alloc_seq", 0},
    [F_ALLOC_TS] = {"alloc_ts", 0},
    [F_ALLOC_TID] = {"alloc_tid", -1},
    [F_ALLOC_PATH] = {"alloc_path", 0},
    [F_ALLOC_CYCLES] = {"alloc_cycles", -1},
    [F_ALLOC_STACK] = {"alloc_stack", -1},
    [F_FREE_SEQ] = {"free_seq", -1},
    [F_FREE_TS] = {"free_ts", 0},
    [F_FREE_TID] = {"free_tid", -1},
    [F_FREE_PATH] = {"free_path", 0},
    [F_FREE_CYCLES] = {"free_cycles", -1},
    [F_FREE_STACK] = {"free_stack", -1},
    [F_PREV_BLOCK] = {"prev_block", 0},
    [F_FLAGS] = {"flags", 0},
};

/* block_data's columns by name, in hl_blockfmt.h's order. */
static const char *const bf_names[HL_BF_NCOLS] = {
    "dptr", "kind", "ats", "cyc", "stk", "fr", "misc",
};

/* The bases of segment seg into r->base: 1, 0 when the segment has no integer bases (the
 * view's sums are NULL then: SQLite reads those rows), -1 on error. */
static int seg_base(hl_blockreader_t *r, int64_t seg)
{
    if (r->seg_state && r->seg == seg) return r->seg_state == 1;
    if (!r->st_seg &&
        sqlite3_prepare_v2(r->db, "SELECT pid, ptr, ts, seq FROM block_seg WHERE seg = ?", -1,
                           &r->st_seg, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_int64(r->st_seg, 1, seg);
    int rc = sqlite3_step(r->st_seg), ok = rc == SQLITE_ROW;
    for (int i = 0; ok && i < 4; i++)
        if (sqlite3_column_type(r->st_seg, i) != SQLITE_INTEGER) ok = 0;
    if (ok) {
        r->base.pid = sqlite3_column_int64(r->st_seg, 0);
        r->base.ptr = sqlite3_column_int64(r->st_seg, 1);
        r->base.ts = sqlite3_column_int64(r->st_seg, 2);
        r->base.seq = sqlite3_column_int64(r->st_seg, 3);
    }
    sqlite3_reset(r->st_seg);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return -1;
    r->seg = seg;
    r->seg_state = ok ? 1 : 2;
    return ok;
}

/* A packed block_data record (rowid id, its columns c, NULL bits n) as the view `block`
 * reads it, with fields[]'s null values: 1; 0 when the view's rules for it are not the
 * packed ones (a block_wide row, a NULL the writer never stores, a segment without bases):
 * SQLite reads that row; -1 on error. */
static int decode(hl_blockreader_t *r, int64_t id, const int64_t *c, uint64_t n, hl_bv_t *v)
{
    if (n & ~(1ull << HL_BF_FR)) return 0;
    int rc = seg_base(r, hl_bf_seg_of(id));
    if (rc <= 0) return rc;
    hl_bf_decode(id, c, (int)(n >> HL_BF_FR & 1), &r->base, v);
    for (uint32_t m = v->null; m; m &= m - 1) /* the NULL columns only */
        v->v[__builtin_ctz(m)] = fields[__builtin_ctz(m)].null_value;
    return 1;
}

static void fill(hl_block_row_t *row, const int64_t *f)
{
    hl_event_t *e = &row->alloc;
    e->kind = HL_EV_ALLOC;
    e->block = f[F_ID];
    e->pid = f[F_PID];
    e->ptr = (uint64_t)f[F_PTR];
    e->size = (uint64_t)f[F_SIZE];
    e->usable = (uint64_t)f[F_USABLE];
    e->tier = (int)f[F_TIER];
    e->cls = (int)f[F_CLASS];
    e->flags = (int)f[F_FLAGS];
    e->seq = e->alloc_seq = f[F_ALLOC_SEQ];
    e->ts = e->alloc_ts = hl_ts(f[F_ALLOC_TS]);
    e->tid = f[F_ALLOC_TID];
    e->path = (int)f[F_ALLOC_PATH];
    e->cycles = e->alloc_cycles = f[F_ALLOC_CYCLES];
    e->stack = e->alloc_stack = f[F_ALLOC_STACK];
    e->prev_block = f[F_PREV_BLOCK];
    e->purpose = HL_REG_OTHER;
    row->has_free = f[F_FREE_SEQ] >= 0;
    if (row->has_free) {
        hl_event_t *x = &row->free;
        x->kind = HL_EV_FREE;
        x->block = e->block;
        x->pid = e->pid;
        x->ptr = e->ptr;
        x->size = e->size;
        x->usable = e->usable;
        x->tier = e->tier;
        x->cls = e->cls;
        x->flags = e->flags;
        x->alloc_seq = e->alloc_seq;
        x->alloc_ts = e->alloc_ts;
        x->alloc_cycles = e->alloc_cycles;
        x->alloc_stack = e->alloc_stack;
        x->purpose = e->purpose;
        x->prev_block = 0;
        x->seq = f[F_FREE_SEQ];
        x->ts = hl_ts(f[F_FREE_TS]);
        x->tid = f[F_FREE_TID];
        x->path = (int)f[F_FREE_PATH];
        x->cycles = f[F_FREE_CYCLES];
        x->stack = f[F_FREE_STACK];
    }
}

/* Next row of st through SQLite: 1, 0 at the end, -1 on error. */
static int next_stmt(hl_blockreader_t *r, sqlite3_stmt *st, hl_block_row_t *row)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        int64_t f[F_N];
        for (int i = 0; i < F_N; i++)
            f[i] = sqlite3_column_int64(st, i);
        fill(row, f);
        return 1;
    }
    if (rc == SQLITE_DONE) return 0;
    snprintf(r->err, sizeof r->err, "reading blocks: %s", sqlite3_errmsg(r->db));
    return -1;
}

static int next_sql(hl_blockreader_t *r, hl_block_row_t *row)
{
    return next_stmt(r, r->st, row);
}

/* The SELECT of fields[] from the view, into q. */
static char *select_fields(char *q, char *end)
{
    char *p = q;
    p += snprintf(p, (size_t)(end - p), "SELECT ");
    for (int i = 0; i < F_N; i++)
        p += snprintf(p, (size_t)(end - p), "%scoalesce(%s, %lld)", i ? ", " : "", fields[i].name,
                      (long long)fields[i].null_value);
    p += snprintf(p, (size_t)(end - p), " FROM block WHERE 1");
    return p;
}

/* Row id through the view (a row the direct reader cannot decode itself): 1, 0 when the
 * view has no such row, -1 on error. */
static int one_sql(hl_blockreader_t *r, int64_t id, hl_block_row_t *row)
{
    if (!r->st_one) {
        char q[1024];
        char *p = select_fields(q, q + sizeof q);
        snprintf(p, (size_t)(q + sizeof q - p), " AND id = ?");
        if (sqlite3_prepare_v2(r->db, q, -1, &r->st_one, NULL) != SQLITE_OK) {
            snprintf(r->err, sizeof r->err, "preparing the block query: %s", sqlite3_errmsg(r->db));
            return -1;
        }
    }
    sqlite3_bind_int64(r->st_one, 1, id);
    int rc = next_stmt(r, r->st_one, row);
    sqlite3_reset(r->st_one);
    return rc;
}

/* Prepare the SQL reader: the rows of r->pid (all when <= 0) with ids above after_id
 * (INT64_MIN: all), in rowid or alloc_seq order. */
static int prepare_sql(hl_blockreader_t *r, int by_index, int64_t after_id)
{
    char q[1024], *end = q + sizeof q, *p = select_fields(q, end);
    if (after_id != INT64_MIN)
        p += snprintf(p, (size_t)(end - p), " AND id > %lld", (long long)after_id);
    if (r->pid > 0) p += snprintf(p, (size_t)(end - p), " AND pid = %lld", (long long)r->pid);
    snprintf(p, (size_t)(end - p), " ORDER BY %s", by_index ? "alloc_seq" : "id");
    sqlite3_finalize(r->st);
    r->st = NULL;
    return sqlite3_prepare_v2(r->db, q, -1, &r->st, NULL) == SQLITE_OK ? 0 : -1;
}

/* Next row straight from the file: 1, 0 at the end; when the walker cannot go on, the rest
 * comes through SQLite from the last row read. */
static int next_direct(hl_blockreader_t *r, hl_block_row_t *row)
{
    for (;;) {
        int64_t rowid, v[64];
        uint64_t nulls;
        const uint8_t *rec;
        uint32_t len;
        char why[200];
        int rc = hl_btree_next(r->bt, &rowid, &rec, &len, why, sizeof why);
        int ri = rc == 1 ? hl_record_ints_padded(rec, len, r->ncols, v, &nulls) : 0;
        if (ri < 0) {
            /* SQLite reads the same row next: it stores what is not an integer, and it
             * refuses a malformed record with its own error (the query selects the table's
             * every column, so it checks the whole record). */
            snprintf(why, sizeof why, "block_data row %lld: %s", (long long)rowid,
                     ri == HL_RECORD_MALFORMED
                         ? "malformed record (its column widths do not add up to its payload)"
                         : "a column is not an integer");
            rc = -1;
        }
        if (rc == 0) return 0;
        if (rc < 0) {
            if (getenv("HEAPLEDGER_STATS"))
                fprintf(stderr, "heapledger: block reader: %s; going on through SQLite\n", why);
            hl_btree_close(r->bt);
            r->bt = NULL;
            if (prepare_sql(r, 0, r->last_id) < 0) {
                snprintf(r->err, sizeof r->err, "preparing the block query: %s",
                         sqlite3_errmsg(r->db));
                return -1;
            }
            return next_sql(r, row);
        }
        r->last_id = rowid;
        int64_t cbuf[HL_BF_NCOLS];
        const int64_t *c = v + r->cid_shift;
        uint64_t n = 0;
        if (r->cid_shift) {
            /* The columns in hl_blockfmt.h's order right after the id: no permutation. */
            n = nulls >> r->cid_shift & ((1ull << HL_BF_NCOLS) - 1);
        } else {
            for (int i = 0; i < HL_BF_NCOLS; i++) {
                cbuf[i] = v[r->cid[i]];
                n |= (nulls >> r->cid[i] & 1) << i;
            }
            c = cbuf;
        }
        hl_bv_t bv;
        int d = decode(r, rowid, c, n, &bv);
        if (d < 0) {
            snprintf(r->err, sizeof r->err, "reading block_seg: %s", sqlite3_errmsg(r->db));
            return -1;
        }
        if (d == 0) {
            /* A row the view gives by other rules (block_wide, NULLs): SQLite reads it. */
            int o = one_sql(r, rowid, row);
            if (o < 0) return -1;
            if (o == 0 || (r->pid > 0 && row->alloc.pid != r->pid)) continue;
            return 1;
        }
        if (r->pid > 0 && bv.v[F_PID] != r->pid) continue;
        fill(row, bv.v);
        return 1;
    }
}

/* Whether the database file itself holds the snapshot of r's read transaction: in rollback
 * mode the shared lock keeps writers out; in WAL mode the write-ahead log must hold no
 * frames (checked after the snapshot is taken: a log emptied since can only have been
 * checkpointed into the file). Then find the block table's root page and its columns. */
static int direct_setup(hl_blockreader_t *r, const char *file, char *why, size_t whylen)
{
    sqlite3_stmt *st = NULL;
    int wal = 0;
    if (sqlite3_prepare_v2(r->db, "PRAGMA journal_mode", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        const char *m = (const char *)sqlite3_column_text(st, 0);
        wal = m && !strcmp(m, "wal");
    }
    sqlite3_finalize(st);
    if (wal) {
        char walfile[4096];
        struct stat sb;
        snprintf(walfile, sizeof walfile, "%s-wal", file);
        if (stat(walfile, &sb) == 0 && sb.st_size > 0) {
            snprintf(why, whylen, "the write-ahead log holds data");
            return -1;
        }
    }
    uint32_t root = 0;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT rootpage, sql FROM sqlite_schema WHERE type = 'table' AND "
                           "name = 'block_data'",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        const char *sql = (const char *)sqlite3_column_text(st, 1);
        if (sql && !strcasestr(sql, "without rowid")) root = (uint32_t)sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    if (!root) {
        snprintf(why, whylen, "no rowid table 'block_data'");
        return -1;
    }
    for (int i = 0; i < HL_BF_NCOLS; i++)
        r->cid[i] = -1;
    r->ncols = 0;
    int id_alias = 0;
    if (sqlite3_prepare_v2(r->db, "SELECT cid, name, type, pk FROM pragma_table_info('block_data')",
                           -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW) {
            int cid = sqlite3_column_int(st, 0);
            const char *name = (const char *)sqlite3_column_text(st, 1);
            const char *type = (const char *)sqlite3_column_text(st, 2);
            if (cid + 1 > r->ncols) r->ncols = cid + 1;
            for (int i = 0; name && i < HL_BF_NCOLS; i++)
                if (!strcmp(name, bf_names[i])) r->cid[i] = cid;
            if (name && !strcmp(name, "id"))
                id_alias = sqlite3_column_int(st, 3) == 1 && type && !strcasecmp(type, "integer");
        }
    }
    sqlite3_finalize(st);
    for (int i = 0; i < HL_BF_NCOLS; i++)
        if (r->cid[i] < 0) {
            snprintf(why, whylen, "the block_data table has no column '%s'", bf_names[i]);
            return -1;
        }
    r->cid_shift = r->cid[0] > 0 ? r->cid[0] : 0;
    for (int i = 0; i < HL_BF_NCOLS; i++)
        if (r->cid[i] != i + r->cid_shift) r->cid_shift = 0;
    if (!id_alias || r->ncols > 64) {
        snprintf(why, whylen, "unexpected block_data table layout");
        return -1;
    }
    if ((r->fd = open(file, O_RDONLY | O_CLOEXEC)) < 0) {
        snprintf(why, whylen, "%s: %s", file, strerror(errno));
        return -1;
    }
    posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    if (!(r->bt = hl_btree_open(r->fd, root, why, whylen))) return -1;
    return 0;
}

static void reader_free(hl_blockreader_t *r)
{
    sqlite3_finalize(r->st);
    sqlite3_finalize(r->st_one);
    sqlite3_finalize(r->st_seg);
    hl_btree_close(r->bt);
    if (r->fd >= 0) close(r->fd);
    if (r->db) sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(r->db);
    free(r);
}

hl_blockreader_t *hl_blockreader_open(sqlite3 *db, int64_t pid, int by_index, char *err,
                                      size_t errlen)
{
    const char *file = sqlite3_db_filename(db, "main");
    hl_blockreader_t *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    r->fd = -1;
    r->pid = pid;
    if (!file || !*file ||
        sqlite3_open_v2(file, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK) {
        snprintf(err, errlen, "opening a second connection: %s",
                 r->db ? sqlite3_errmsg(r->db) : "no file name");
        reader_free(r);
        return NULL;
    }
    sqlite3_exec(r->db, "PRAGMA cache_size=-32768;", NULL, NULL, NULL);
    /* One read transaction for the whole scan: the snapshot both readers see. */
    if (sqlite3_exec(r->db, "BEGIN; SELECT count(*) FROM (SELECT 1 FROM block LIMIT 1);", NULL,
                     NULL, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "reading blocks: %s", sqlite3_errmsg(r->db));
        reader_free(r);
        return NULL;
    }
    /* Rowid order goes straight to the file when that is safe (HEAPLEDGER_READER=sqlite
     * forces SQLite); alloc_seq order always goes through SQLite, which sorts. */
    const char *force = getenv("HEAPLEDGER_READER");
    char why[256] = "";
    if (by_index)
        snprintf(why, sizeof why, "allocation order through the index");
    else if (force && !strcmp(force, "sqlite"))
        snprintf(why, sizeof why, "HEAPLEDGER_READER=sqlite");
    else if (direct_setup(r, file, why, sizeof why) == 0)
        why[0] = 0;
    if (r->bt == NULL && prepare_sql(r, by_index, INT64_MIN) < 0) {
        snprintf(err, errlen, "preparing the block query: %s", sqlite3_errmsg(r->db));
        reader_free(r);
        return NULL;
    }
    if (getenv("HEAPLEDGER_STATS"))
        fprintf(stderr, "heapledger: block reader: %s%s\n",
                r->bt ? "database file" : "SQLite: ", why);
    return r;
}

int hl_blockreader_next(hl_blockreader_t *r, const hl_block_row_t **row, char *err, size_t errlen)
{
    int rc = r->bt ? next_direct(r, &r->row) : next_sql(r, &r->row);
    if (rc < 0) snprintf(err, errlen, "%s", r->err);
    *row = &r->row;
    return rc;
}

int hl_blockreader_direct(const hl_blockreader_t *r)
{
    return r->bt != NULL;
}

sqlite3 *hl_blockreader_db(hl_blockreader_t *r)
{
    return r->db;
}

void hl_blockreader_close(hl_blockreader_t *r)
{
    if (r) reader_free(r);
}
