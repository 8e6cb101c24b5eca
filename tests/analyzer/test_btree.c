/* tests/analyzer/test_btree.c — the direct file reader (analyzer/btree.c) against SQLite's
 * own reading of the same files, and the block reader's choice between the two
 * (analyzer/blockreader.c): tables of every shape and page size, every integer width, rows
 * spilling to overflow pages, text where integers belong, corrupt pages, a write-ahead log
 * holding data, a failure in the middle of a scan. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "blockreader.h"
#include "btree.h"

#include "../test_rand.h"

static char dir[] = "/tmp/hl-btree-test.XXXXXX";

static void setup(void)
{
    cr_assert(mkdtemp(dir) != NULL);
}

static void teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(btree, .init = setup, .fini = teardown);

static const char *path(const char *name)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

static void exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, &msg), SQLITE_OK, "%s: %s", sql, msg);
}

static uint32_t root_of(sqlite3 *db, const char *table)
{
    sqlite3_stmt *st;
    cr_assert_eq(
        sqlite3_prepare_v2(db, "SELECT rootpage FROM sqlite_schema WHERE name = ?", -1, &st, NULL),
        SQLITE_OK);
    sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
    cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
    uint32_t root = (uint32_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return root;
}

/* Integers of every serial type width, and NULLs. */
static int64_t pick(uint64_t *rng)
{
    static const int64_t edge[] = {0,
                                   1,
                                   -1,
                                   127,
                                   -128,
                                   128,
                                   32767,
                                   -32768,
                                   8388607,
                                   -8388608,
                                   2147483647,
                                   -2147483648LL,
                                   140737488355327LL,
                                   INT64_MAX,
                                   INT64_MIN};
    uint64_t r = hl_test_rand(rng);
    if (r % 4 == 0) return edge[(r >> 8) % (sizeof edge / sizeof *edge)];
    int shift = (int)((r >> 16) % 63);
    return (int64_t)(hl_test_rand(rng) >> shift) * ((r >> 24) & 1 ? -1 : 1);
}

/* Walk table t (id, a, b, c [, d]) directly and through SQLite; every row must agree. */
static void compare(sqlite3 *db, const char *file, int ncols, int64_t expect_rows)
{
    int fd = open(file, O_RDONLY);
    cr_assert(fd >= 0);
    char err[256] = "";
    hl_btree_t *t = hl_btree_open(fd, root_of(db, "t"), err, sizeof err);
    cr_assert(t != NULL, "%s", err);
    sqlite3_stmt *st;
    char q[128];
    snprintf(q, sizeof q, "SELECT id, a, b, c%s FROM t ORDER BY id", ncols == 5 ? ", d" : "");
    cr_assert_eq(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
    int64_t n = 0, rowid;
    const uint8_t *rec;
    uint32_t len;
    int rc;
    while ((rc = hl_btree_next(t, &rowid, &rec, &len, err, sizeof err)) == 1) {
        cr_assert_eq(sqlite3_step(st), SQLITE_ROW, "row %lld: SQLite has no more rows",
                     (long long)n);
        int64_t v[8];
        uint64_t nulls;
        cr_assert_eq(hl_record_ints(rec, len, ncols, v, &nulls), 0);
        cr_assert_eq(rowid, sqlite3_column_int64(st, 0));
        cr_assert(nulls & 1, "the rowid alias is NULL in the record");
        for (int i = 1; i < ncols; i++) {
            int null = sqlite3_column_type(st, i) == SQLITE_NULL;
            if (i == 4 && (nulls >> i & 1) && !null) {
                /* Beyond the record's end: SQLite supplies the column's default. */
                cr_assert_eq(sqlite3_column_int64(st, i), 5);
                continue;
            }
            cr_assert_eq((int)(nulls >> i & 1), null, "row %lld col %d null", (long long)rowid, i);
            if (!null)
                cr_assert_eq(v[i], sqlite3_column_int64(st, i), "row %lld col %d", (long long)rowid,
                             i);
        }
        n++;
    }
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_eq(sqlite3_step(st), SQLITE_DONE);
    cr_assert_eq(n, expect_rows);
    sqlite3_finalize(st);
    hl_btree_close(t);
    close(fd);
}

static sqlite3 *create(const char *file, int page_size)
{
    sqlite3 *db;
    unlink(file);
    cr_assert_eq(sqlite3_open(file, &db), SQLITE_OK);
    char q[64];
    snprintf(q, sizeof q, "PRAGMA page_size = %d", page_size);
    exec(db, q);
    exec(db, "CREATE TABLE t (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER, c INTEGER)");
    return db;
}

static void fill(sqlite3 *db, int rows, uint64_t *rng, int random_ids)
{
    sqlite3_stmt *st;
    exec(db, "BEGIN");
    cr_assert_eq(
        sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO t VALUES (?, ?, ?, ?)", -1, &st, NULL),
        SQLITE_OK);
    for (int i = 0; i < rows; i++) {
        if (random_ids)
            sqlite3_bind_int64(st, 1, (int64_t)(hl_test_rand(rng) % 10000000));
        else
            sqlite3_bind_null(st, 1);
        for (int c = 2; c <= 4; c++) {
            if (hl_test_rand(rng) % 10 == 0)
                sqlite3_bind_null(st, c);
            else
                sqlite3_bind_int64(st, c, pick(rng));
        }
        cr_assert_eq(sqlite3_step(st), SQLITE_DONE);
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    exec(db, "COMMIT");
}

static int64_t count(sqlite3 *db)
{
    sqlite3_stmt *st;
    sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &st, NULL);
    sqlite3_step(st);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

Test(btree, tables_of_every_shape_and_page_size_read_as_sqlite_reads_them)
{
    static const int sizes[] = {512, 4096, 65536};
    static const int rows[] = {0, 1, 60, 5000, 120000};
    uint64_t rng = 42;
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
        for (size_t r = 0; r < sizeof rows / sizeof *rows; r++) {
            const char *file = path("shape.db");
            sqlite3 *db = create(file, sizes[s]);
            fill(db, rows[r], &rng, 0);
            compare(db, file, 4, rows[r]);
            sqlite3_close(db);
        }
}

Test(btree, random_ids_deletes_and_an_added_column)
{
    /* Inserts in random key order split pages everywhere, deletes leave holes and
     * underfull pages: leaves are no longer contiguous in the file. */
    uint64_t rng = 7;
    const char *file = path("holes.db");
    sqlite3 *db = create(file, 1024);
    fill(db, 60000, &rng, 1);
    exec(db, "DELETE FROM t WHERE id % 7 = 3 OR (id > 2000000 AND id < 2600000)");
    exec(db, "ALTER TABLE t ADD COLUMN d INTEGER DEFAULT 5");
    exec(db, "UPDATE t SET d = a WHERE id % 5 = 0");
    compare(db, file, 5, count(db));
    sqlite3_close(db);
}

Test(btree, stops_with_a_message_at_rows_it_does_not_read)
{
    const char *file = path("odd.db");
    sqlite3 *db = create(file, 4096);
    exec(db, "INSERT INTO t VALUES (1, 1, 2, 3), (2, 'text', 2, 3), (3, 1.5, 2, 3),"
             "(4, zeroblob(20000), 0, 0), (5, 5, 5, 5)");
    int fd = open(file, O_RDONLY);
    char err[256];
    hl_btree_t *t = hl_btree_open(fd, root_of(db, "t"), err, sizeof err);
    cr_assert(t != NULL, "%s", err);
    int64_t rowid, v[4];
    uint64_t nulls;
    const uint8_t *rec;
    uint32_t len;
    cr_assert_eq(hl_btree_next(t, &rowid, &rec, &len, err, sizeof err), 1);
    cr_assert_eq(hl_record_ints(rec, len, 4, v, &nulls), 0);
    cr_assert_eq(v[3], 3);
    cr_assert_eq(hl_btree_next(t, &rowid, &rec, &len, err, sizeof err), 1);
    cr_assert_eq(hl_record_ints(rec, len, 4, v, &nulls), -1, "text is not an integer");
    cr_assert_eq(hl_btree_next(t, &rowid, &rec, &len, err, sizeof err), 1);
    cr_assert_eq(hl_record_ints(rec, len, 4, v, &nulls), -1, "a float is not an integer");
    cr_assert_eq(hl_btree_next(t, &rowid, &rec, &len, err, sizeof err), -1);
    cr_assert(strstr(err, "overflow"), "%s", err);
    hl_btree_close(t);
    close(fd);
    sqlite3_close(db);
}

Test(btree, corrupt_pages_give_errors_not_crashes)
{
    uint64_t rng = 99;
    const char *file = path("corrupt.db");
    sqlite3 *db = create(file, 1024);
    fill(db, 20000, &rng, 1);
    uint32_t root = root_of(db, "t");
    sqlite3_close(db);
    int fd = open(file, O_RDWR);
    off_t size = lseek(fd, 0, SEEK_END);
    int errors = 0;
    for (int round = 0; round < 300; round++) {
        /* Scribble on a few bytes of a random page past the header page, walk, restore. */
        uint8_t save[16], junk[16];
        off_t at = 1024 + (off_t)(hl_test_rand(&rng) % (uint64_t)(size - 1024 - 16));
        if (round % 3 == 0) at -= at % 1024; /* often the page header itself */
        cr_assert_eq(pread(fd, save, sizeof save, at), (ssize_t)sizeof save);
        for (size_t i = 0; i < sizeof junk; i++)
            junk[i] = (uint8_t)hl_test_rand(&rng);
        cr_assert_eq(pwrite(fd, junk, sizeof junk, at), (ssize_t)sizeof junk);
        char err[256] = "";
        hl_btree_t *t = hl_btree_open(fd, root, err, sizeof err);
        int rc = t ? 1 : -1;
        int64_t rowid, v[4];
        uint64_t nulls;
        const uint8_t *rec;
        uint32_t len;
        long n = 0;
        while (t && (rc = hl_btree_next(t, &rowid, &rec, &len, err, sizeof err)) == 1 &&
               n < 1000000) {
            hl_record_ints(rec, len, 4, v, &nulls);
            n++;
        }
        cr_assert(n < 1000000, "the walk must end");
        if (rc < 0) {
            cr_assert(strstr(err, "page") || strstr(err, "database"), "%s", err);
            errors++;
        }
        hl_btree_close(t);
        cr_assert_eq(pwrite(fd, save, sizeof save, at), (ssize_t)sizeof save);
    }
    cr_assert(errors > 0, "some scribbles must be noticed");
    close(fd);
}

/* A v1 run database with n blocks, row i allocated at seq 2i and freed at 2i+1. */
static sqlite3 *run_db(const char *file, int n)
{
    sqlite3 *db;
    unlink(file);
    cr_assert_eq(sqlite3_open(file, &db), SQLITE_OK);
    FILE *f = fopen("schemas/heapledger.sql", "r");
    cr_assert(f != NULL, "run from the source tree");
    static char schema[65536];
    size_t len = fread(schema, 1, sizeof schema - 1, f);
    schema[len] = 0;
    fclose(f);
    exec(db, schema);
    exec(db, "BEGIN");
    for (int i = 1; i <= n; i++) {
        char q[512];
        snprintf(
            q, sizeof q,
            "INSERT INTO block (id, pid, ptr, size, usable, tier, class, alloc_seq, alloc_ts,"
            " alloc_tid, alloc_path, alloc_cycles, free_seq, free_ts, free_tid, free_path,"
            " free_cycles) VALUES (%d, 7, %d, 32, 32, 1, 2, %d, %d, 8, 1, 40, %d, %d, 8, 2, %s)",
            i, 4096 + 48 * i, 2 * i, 10 * i, 2 * i + 1, 10 * i + 5, i % 3 ? "30" : "NULL");
        exec(db, q);
    }
    exec(db, "COMMIT");
    return db;
}

/* Read every block through a block reader; returns the rows and checks each. */
static int read_all(sqlite3 *db, int *direct)
{
    char err[256];
    hl_blockreader_t *r = hl_blockreader_open(db, 0, 0, err, sizeof err);
    cr_assert(r != NULL, "%s", err);
    *direct = hl_blockreader_direct(r);
    const hl_block_row_t *row;
    int n = 0, rc;
    while ((rc = hl_blockreader_next(r, &row, err, sizeof err)) == 1) {
        n++;
        cr_assert_eq(row->alloc.block, n);
        cr_assert_eq(row->alloc.pid, 7);
        cr_assert_eq(row->alloc.seq, 2 * n);
        cr_assert_eq(row->alloc.cls, 2);
        cr_assert_eq(row->alloc.stack, -1, "NULL stacks read as -1");
        cr_assert(row->has_free);
        cr_assert_eq(row->free.seq, 2 * n + 1);
        cr_assert_eq(row->free.path, 2);
        cr_assert_eq(row->free.cycles, n % 3 ? 30 : -1);
    }
    cr_assert_eq(rc, 0, "%s", err);
    hl_blockreader_close(r);
    return n;
}

Test(btree, block_reader_reads_the_file_and_goes_on_through_sqlite_when_it_must)
{
    const char *file = path("run.db");
    sqlite3 *db = run_db(file, 3000);
    int direct;
    cr_assert_eq(read_all(db, &direct), 3000);
    cr_assert(direct, "a quiet database is read straight from the file");
    setenv("HEAPLEDGER_READER", "sqlite", 1);
    cr_assert_eq(read_all(db, &direct), 3000);
    cr_assert(!direct);
    unsetenv("HEAPLEDGER_READER");
    /* A text value in row 1500 of block_data: the direct reader stops there and SQLite reads
     * the rest through the view (the text reads as 0 there, as SQLite converts it: size and
     * usable - size are both in kind's top bits, 0). */
    exec(db, "UPDATE block_data SET kind = 'thirty-two' WHERE id = 1500");
    char err[256];
    hl_blockreader_t *r = hl_blockreader_open(db, 0, 0, err, sizeof err);
    cr_assert(r != NULL, "%s", err);
    const hl_block_row_t *row;
    int n = 0;
    while (hl_blockreader_next(r, &row, err, sizeof err) == 1) {
        n++;
        cr_assert_eq(row->alloc.block, n);
        cr_assert_eq(row->alloc.usable, n == 1500 ? 0u : 32u);
        cr_assert_eq(hl_blockreader_direct(r), n < 1500);
    }
    cr_assert_eq(n, 3000);
    hl_blockreader_close(r);
    sqlite3_close(db);
}

Test(btree, a_write_ahead_log_holding_data_sends_the_reader_through_sqlite)
{
    const char *file = path("wal.db");
    sqlite3 *db = run_db(file, 100);
    exec(db, "PRAGMA journal_mode = WAL");
    exec(db, "PRAGMA wal_autocheckpoint = 0");
    /* Rows only in the log: the file alone would miss them. */
    exec(db, "UPDATE block SET free_cycles = 30 WHERE id % 3 = 0");
    exec(db, "UPDATE block SET free_cycles = NULL WHERE id % 3 = 0");
    int direct;
    cr_assert_eq(read_all(db, &direct), 100);
    cr_assert(!direct, "the log holds pages the file does not");
    exec(db, "PRAGMA wal_checkpoint(TRUNCATE)");
    cr_assert_eq(read_all(db, &direct), 100);
    cr_assert(direct, "an empty log: the file holds everything");
    sqlite3_close(db);
}

/* SQLite calls a record malformed when its serial types' widths do not add up to its
 * payload (checking every column, also those after the ones asked for): so does the reader,
 * and the caller then goes on through SQLite, which says "database disk image is malformed". */
Test(btree, record_widths_must_add_up)
{
    int64_t v[2];
    uint64_t nulls;
    /* header size 4: int8, int8, text of 1 byte (type 14); then 5, 6, 'x' */
    const uint8_t good[] = {4, 1, 1, 14, 5, 6, 'x'};
    cr_assert_eq(hl_record_ints(good, sizeof good, 2, v, &nulls), 0);
    cr_assert_eq(v[0], 5);
    cr_assert_eq(v[1], 6);
    const uint8_t extra[] = {4, 1, 1, 14, 5, 6, 'x', 0}; /* one byte more than described */
    cr_assert_eq(hl_record_ints(extra, sizeof extra, 2, v, &nulls), HL_RECORD_MALFORMED);
    const uint8_t shortv[] = {4, 1, 2, 14, 5, 6, 'x'}; /* one byte less */
    cr_assert_eq(hl_record_ints(shortv, sizeof shortv, 2, v, &nulls), HL_RECORD_MALFORMED);
    const uint8_t text_short[] = {4, 1, 1, 16, 5, 6, 'x'}; /* the text past the end */
    cr_assert_eq(hl_record_ints(text_short, sizeof text_short, 2, v, &nulls), HL_RECORD_MALFORMED);
    const uint8_t reserved[] = {3, 1, 10, 5};
    cr_assert_eq(hl_record_ints(reserved, sizeof reserved, 2, v, &nulls), HL_RECORD_MALFORMED);
    const uint8_t hdr_past[] = {9, 1, 1, 5, 6};
    cr_assert_eq(hl_record_ints(hdr_past, sizeof hdr_past, 2, v, &nulls), HL_RECORD_MALFORMED);
    /* Fewer columns than asked for (added to the table later): NULLs, not malformed. */
    const uint8_t old_row[] = {2, 1, 7};
    cr_assert_eq(hl_record_ints(old_row, sizeof old_row, 2, v, &nulls), 0);
    cr_assert_eq(v[0], 7);
    cr_assert_eq(nulls, 2);
    /* A text column among the first n: not an integer, but well formed. */
    const uint8_t text[] = {3, 15, 1, 'a', 4};
    cr_assert_eq(hl_record_ints(text, sizeof text, 2, v, &nulls), HL_RECORD_NOT_INT);
}

/* The fast record decoders (one-byte serial types, header 16 at a time, values in 8-byte
 * loads) give the plain decoder's answer on every record: random headers of integer, NULL,
 * float, text and blob types, one- and two-byte serial types, reserved types, payloads of the
 * right length and one byte off either way, fewer or more columns than asked for. */
Test(btree, fast_record_decoder_agrees_with_the_plain_one)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int iter = 0; iter < 200000; iter++) {
        uint8_t rec[600 + HL_RECORD_PAD];
        int nh = (int)(hl_test_rand(&seed) % 22);
        uint8_t types[40][2];
        int tlen[40];
        uint32_t data = 0;
        for (int i = 0; i < nh; i++) {
            uint64_t r = hl_test_rand(&seed) % 100;
            unsigned t = r < 70   ? (unsigned)(r % 7)
                         : r < 80 ? 8 + (unsigned)(r % 2)
                         : r < 84 ? 7
                         : r < 86 ? 10 + (unsigned)(r % 2)
                         : r < 95 ? 12 + (unsigned)(r % 40)
                                  : 128 + (unsigned)(r % 30);
            static const uint8_t w[12] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0};
            if (t < 128) {
                types[i][0] = (uint8_t)t;
                tlen[i] = 1;
                data += t < 12 ? w[t] : (t - 12) / 2;
            } else { /* a two-byte varint: text of (t - 13) / 2 bytes */
                types[i][0] = 0x81;
                types[i][1] = (uint8_t)(t & 0x7f);
                tlen[i] = 2;
                data += (t - 12) / 2;
            }
        }
        uint32_t h = 1;
        for (int i = 0; i < nh; i++)
            for (int k = 0; k < tlen[i]; k++)
                rec[h++] = types[i][k];
        if (h >= 128) continue;
        rec[0] = (uint8_t)h;
        int off = (int)(hl_test_rand(&seed) % 8) - 1; /* mostly exact, sometimes one off */
        if (off > 1) off = 0;
        uint32_t len = h + data + (uint32_t)off;
        if ((int)len < (int)h || len > 600) continue;
        for (uint32_t i = h; i < len + HL_RECORD_PAD; i++)
            rec[i] = (uint8_t)hl_test_rand(&seed);
        int n = 1 + (int)(hl_test_rand(&seed) % 24);
        int64_t va[64], vb[64], vc[64];
        uint64_t na = 7, nb = 7, nc = 7;
        int ra = hl_record_ints_padded(rec, len, n, va, &na);
        int rb = hl_record_ints_ref(rec, len, n, vb, &nb);
        int rc = hl_record_ints(rec, len, n, vc, &nc);
        cr_assert_eq(ra, rb, "iteration %d: %d, the plain decoder %d", iter, ra, rb);
        cr_assert_eq(rc, rb, "iteration %d", iter);
        if (rb == 0) {
            cr_assert_eq(na, nb, "iteration %d", iter);
            cr_assert_eq(nc, nb, "iteration %d", iter);
            for (int i = 0; i < n; i++) {
                cr_assert_eq(va[i], vb[i], "iteration %d column %d", iter, i);
                cr_assert_eq(vc[i], vb[i], "iteration %d column %d", iter, i);
            }
        }
    }
}
