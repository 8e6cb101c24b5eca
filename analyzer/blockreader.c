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
    int64_t base_pid, base_ptr, base_ts; /* block_base */
    int64_t pid;                         /* > 0: rows of that process only */
    int64_t last_id;                     /* last rowid the direct reader returned */
    hl_block_row_t row;                  /* the row hl_blockreader_next returned */
    char err[256];
};

/* The block columns a row needs, in the order of the query and of f[] below, with the
 * value a NULL stands for. The SQL reader selects coalesce(column, null_value) from the view
 * `block`; the direct reader decodes block_data's packed records (hl_blockfmt.h), whose
 * columns it finds through PRAGMA table_info. */
enum {
    F_ID,
    F_PID,
    F_PTR,
    F_SIZE,
    F_USABLE,
    F_TIER,
    F_CLASS,
    F_FLAGS,
    F_ALLOC_SEQ,
    F_ALLOC_TS,
    F_ALLOC_TID,
    F_ALLOC_PATH,
    F_ALLOC_CYCLES,
    F_ALLOC_STACK,
    F_PREV_BLOCK,
    F_FREE_SEQ,
    F_FREE_TS,
    F_FREE_TID,
    F_FREE_PATH,
    F_FREE_CYCLES,
    F_FREE_STACK,
    F_N
};
static const struct {
    const char *name;
    int64_t null_value;
} fields[F_N] = {
    {"id", 0},
    {"pid", 0},
    {"ptr", 0},
    {"size", 0},
    {"usable", 0},
    {"tier", 0},
    {"class", -1},
    {"flags", 0},
    {"alloc_seq", 0},
    {"alloc_ts", 0},
    {"alloc_tid", -1},
    {"alloc_path", 0},
    {"alloc_cycles", -1},
    {"alloc_stack", -1},
    {"prev_block", 0},
    {"free_seq", -1},
    {"free_ts", 0},
    {"free_tid", -1},
    {"free_path", 0},
    {"free_cycles", -1},
    {"free_stack", -1},
};

/* block_data's columns by name, in hl_blockfmt.h's order. */
static const char *const bf_names[HL_BF_NCOLS] = {
    "dpid",   "dptr", "size", "kind", "aseq", "ats",    "atid",  "acyc",
    "astack", "fseq", "fts",  "ftid", "fcyc", "fstack", "dprev",
};

/* A packed block_data record (rowid id, its columns c, NULL bits n) as the view `block`
 * reads it, with fields[]'s null values; the arithmetic wraps like the writer's. */
static void decode(const hl_blockreader_t *r, int64_t id, const int64_t *c, uint64_t n, int64_t *f)
{
#define NUL(i) ((n >> (i)) & 1)
    int64_t kind = NUL(HL_BF_KIND) ? 0 : c[HL_BF_KIND];
    int64_t pid = hl_bf_add(r->base_pid, NUL(HL_BF_DPID) ? 0 : c[HL_BF_DPID]);
    int64_t size = NUL(HL_BF_SIZE) ? 0 : c[HL_BF_SIZE];
    int64_t aseq = hl_bf_add(hl_bf_add(id, id), NUL(HL_BF_ASEQ) ? 0 : c[HL_BF_ASEQ]);
    int64_t ats = hl_bf_add(r->base_ts, NUL(HL_BF_ATS) ? 0 : c[HL_BF_ATS]);
    int64_t atid = hl_bf_add(pid, c[HL_BF_ATID]);
    int fpath = (int)((uint64_t)kind >> HL_BF_FPATH_SHIFT & HL_BF_FIELD_MASK);
    f[F_ID] = id;
    f[F_PID] = pid;
    f[F_PTR] = hl_bf_add(r->base_ptr, NUL(HL_BF_DPTR) ? 0 : c[HL_BF_DPTR]);
    f[F_SIZE] = size;
    f[F_USABLE] = hl_bf_add(size, hl_bf_kind_usable_delta(kind));
    f[F_TIER] = (int64_t)((uint64_t)kind >> HL_BF_TIER_SHIFT & HL_BF_TIER_MASK);
    f[F_CLASS] = (int64_t)((uint64_t)kind >> HL_BF_CLASS_SHIFT & HL_BF_FIELD_MASK) - 1;
    f[F_FLAGS] = kind & HL_BF_FLAGS_MASK;
    f[F_ALLOC_SEQ] = aseq;
    f[F_ALLOC_TS] = ats;
    f[F_ALLOC_TID] = NUL(HL_BF_ATID) ? fields[F_ALLOC_TID].null_value : atid;
    f[F_ALLOC_PATH] = (int64_t)((uint64_t)kind >> HL_BF_APATH_SHIFT & HL_BF_FIELD_MASK);
    f[F_ALLOC_CYCLES] = NUL(HL_BF_ACYC) ? fields[F_ALLOC_CYCLES].null_value : c[HL_BF_ACYC];
    f[F_ALLOC_STACK] = NUL(HL_BF_ASTACK) ? fields[F_ALLOC_STACK].null_value : c[HL_BF_ASTACK];
    f[F_PREV_BLOCK] = NUL(HL_BF_DPREV) ? 0 : hl_bf_sub(id, c[HL_BF_DPREV]);
    if (NUL(HL_BF_FSEQ)) {
        f[F_FREE_SEQ] = fields[F_FREE_SEQ].null_value;
        f[F_FREE_PATH] = 0;
    } else {
        f[F_FREE_SEQ] = hl_bf_add(aseq, c[HL_BF_FSEQ]);
        f[F_FREE_PATH] = fpath;
    }
    /* The view's sums are NULL as soon as one term is. */
    f[F_FREE_TS] = NUL(HL_BF_FTS) ? 0 : hl_bf_add(ats, c[HL_BF_FTS]);
    f[F_FREE_TID] = NUL(HL_BF_FTID) || NUL(HL_BF_ATID) ? fields[F_FREE_TID].null_value
                                                       : hl_bf_add(atid, c[HL_BF_FTID]);
    f[F_FREE_CYCLES] = NUL(HL_BF_FCYC) ? fields[F_FREE_CYCLES].null_value : c[HL_BF_FCYC];
    f[F_FREE_STACK] = NUL(HL_BF_FSTACK) ? fields[F_FREE_STACK].null_value : c[HL_BF_FSTACK];
#undef NUL
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

/* Next row through SQLite: 1, 0 at the end, -1 on error. */
static int next_sql(hl_blockreader_t *r, hl_block_row_t *row)
{
    int rc = sqlite3_step(r->st);
    if (rc == SQLITE_ROW) {
        int64_t f[F_N];
        for (int i = 0; i < F_N; i++)
            f[i] = sqlite3_column_int64(r->st, i);
        fill(row, f);
        return 1;
    }
    if (rc == SQLITE_DONE) return 0;
    snprintf(r->err, sizeof r->err, "reading blocks: %s", sqlite3_errmsg(r->db));
    return -1;
}

/* Prepare the SQL reader: the rows of r->pid (all when <= 0) with ids above after_id
 * (INT64_MIN: all), in rowid or alloc_seq order. */
static int prepare_sql(hl_blockreader_t *r, int by_index, int64_t after_id)
{
    char q[1024], *p = q, *end = q + sizeof q;
    p += snprintf(p, (size_t)(end - p), "SELECT ");
    for (int i = 0; i < F_N; i++)
        p += snprintf(p, (size_t)(end - p), "%scoalesce(%s, %lld)", i ? ", " : "", fields[i].name,
                      (long long)fields[i].null_value);
    p += snprintf(p, (size_t)(end - p), " FROM block WHERE 1");
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
        int64_t rowid, v[64], f[F_N];
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
        if (r->cid_shift) {
            /* The columns in hl_blockfmt.h's order right after the id: no permutation. */
            decode(r, rowid, v + r->cid_shift, nulls >> r->cid_shift, f);
        } else {
            int64_t c[HL_BF_NCOLS];
            uint64_t n = 0;
            for (int i = 0; i < HL_BF_NCOLS; i++) {
                c[i] = v[r->cid[i]];
                n |= (nulls >> r->cid[i] & 1) << i;
            }
            decode(r, rowid, c, n, f);
        }
        if (r->pid > 0 && f[F_PID] != r->pid) continue;
        fill(row, f);
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
    /* The differences' bases; without a block_base row the view has no rows to give
     * (its sums are NULL): let SQLite read it. */
    int base = 0;
    if (sqlite3_prepare_v2(r->db, "SELECT pid, ptr, ts FROM block_base WHERE id = 1", -1, &st,
                           NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        base = 1;
        for (int i = 0; i < 3; i++)
            if (sqlite3_column_type(st, i) != SQLITE_INTEGER) base = 0;
        r->base_pid = sqlite3_column_int64(st, 0);
        r->base_ptr = sqlite3_column_int64(st, 1);
        r->base_ts = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    if (!base) {
        snprintf(why, whylen, "no integer block_base row");
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
