/* tests/ingest/ingest_ledger_test.c — the block-lifetime rules of tracer/ingest_ledger.c on
 * hand-made records (no trace needed): realloc variants, failed allocations, lost frees,
 * orphans, stack renumbering, stacks that belong to their process and a forked child's
 * inheritance of its parent's stacks as of the fork. */
#include "db.h"
#include "ingest_internal.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[] = "/tmp/hl-ledger-test.XXXXXX";
static sqlite3 *db;
static hl_store_t *st;
static hl_ledger_t *led;
static hl_batch_t *batch;
static uint64_t seq;

static void setup(void)
{
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    char err[256];
    db = hl_db_create(path, 1, err, sizeof err);
    cr_assert_not_null(db, "%s", err);
    st = hl_store_open(db, 0, err, sizeof err);
    cr_assert_not_null(st, "%s", err);
    led = hl_ledger_new(st);
    batch = calloc(1, sizeof *batch);
    seq = 0;
}

static void teardown(void)
{
    hl_ledger_free(led);
    sqlite3_close(db);
    free(batch);
    unlink(path);
}

static hl_rec_t *rec(int kind, uint32_t pid, uint64_t a)
{
    hl_rec_t *r = &batch->rec[batch->n++];
    memset(r, 0, sizeof *r);
    r->kind = (uint8_t)kind;
    r->pid = pid;
    r->tid = pid;
    r->seq = seq++;
    r->ts = 1000 + r->seq;
    r->a = a;
    r->cycles = 10;
    r->cls = 255;
    r->tier = 2;
    return r;
}

static void alloc_(uint32_t pid, uint64_t p, uint64_t size, uint32_t stack)
{
    hl_rec_t *r = rec(HL_REC_ALLOC, pid, p);
    r->b = size;
    r->c = size;
    r->path = 4;
    r->stack = stack;
}

static void free_(uint32_t pid, uint64_t p)
{
    rec(HL_REC_FREE, pid, p)->path = 11;
}

static void realloc_(uint32_t pid, uint64_t old, uint64_t p, uint64_t size)
{
    hl_rec_t *r = rec(HL_REC_REALLOC, pid, old);
    r->d = p;
    r->b = size;
    r->c = size;
    r->path = 15;
}

static void stack_(uint32_t pid, uint32_t id)
{
    hl_rec_t *r = rec(HL_REC_STACK, pid, 0);
    r->stack = id;
    r->n = 2;
    uint64_t *ips = malloc(2 * sizeof *ips);
    ips[0] = 0x1000;
    ips[1] = 0x2000;
    r->ext = ips;
}

/* The config event of pid: forked without exec from parent at fork_ts (0, 0: not a fork). */
static void config_(uint32_t pid, uint32_t parent, uint64_t fork_ts)
{
    hl_rec_t *r = rec(HL_REC_CONFIG, pid, 2445000000ull);
    r->c = parent;
    r->d = fork_ts;
}

static uint64_t now_ts(void) /* the time of the next record */
{
    return 1000 + seq;
}

static void finish(void)
{
    batch->events = batch->n;
    cr_assert_eq(hl_ledger_batch(led, batch), 0);
    hl_run_row_t run = {.has_exit_status = 0};
    cr_assert_eq(hl_ledger_finish(led, &run), 0);
    char err[256];
    cr_assert_eq(hl_store_close(st, 1, err, sizeof err), 0, "%s", err);
    st = NULL;
}

static long long q1(const char *sql)
{
    if (st) hl_store_sync(st); /* the connection is the SQLite thread's while it has rows */
    sqlite3_stmt *s;
    cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK, "%s", sql);
    cr_assert_eq(sqlite3_step(s), SQLITE_ROW, "%s", sql);
    long long v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
}

TestSuite(ledger, .init = setup, .fini = teardown);

Test(ledger, realloc_variants)
{
    alloc_(1, 0x100, 8, 0);
    realloc_(1, 0x100, 0x100, 16); /* in place: still a new lifetime */
    realloc_(1, 0x100, 0x200, 32); /* move */
    realloc_(1, 0x200, 0, 64);     /* failed: 0x200 stays live */
    realloc_(1, 0, 0x300, 8);      /* realloc(NULL, n) */
    realloc_(1, 0x300, 0, 0);      /* realloc(p, 0): only ends */
    finish();
    cr_assert_eq(q1("SELECT count(*) FROM block"), 5);
    cr_assert_eq(q1("SELECT count(*) FROM block WHERE flags = 4 AND size = 8 AND ptr = 256"), 1);
    cr_assert_eq(q1("SELECT count(*) FROM block WHERE flags = 6 AND size = 16"), 1);
    cr_assert_eq(
        q1("SELECT count(*) FROM block WHERE flags = 2 AND ptr = 512 AND free_seq IS NULL"), 1,
        "moved block live at the end (the failed realloc did not end it)");
    cr_assert_eq(q1("SELECT count(*) FROM block WHERE flags = 3 AND ptr = 0 AND size = 64"), 1);
    cr_assert_eq(
        q1("SELECT count(*) FROM block WHERE ptr = 768 AND flags = 6 AND free_cycles = 10"), 1,
        "realloc(p, 0) keeps its cycles on the ended block");
    cr_assert_eq(q1("SELECT count(*) FROM block b JOIN block p ON b.prev_block = p.id"), 2);
    cr_assert_eq(q1("SELECT count(*) FROM live_at_exit"), 1);
}

Test(ledger, orphans_and_lost_frees)
{
    free_(1, 0xdead);             /* never allocated */
    realloc_(1, 0xbeef, 0x10, 4); /* old side never allocated */
    alloc_(1, 0x500, 8, 0);
    alloc_(1, 0x500, 8, 0); /* again without a free: the first one's free was lost */
    free_(1, 0x500);
    free_(1, 0); /* free(NULL): nothing */
    finish();
    cr_assert_eq(q1("SELECT count(*) FROM orphan_free"), 2);
    cr_assert_eq(q1("SELECT count(*) FROM block WHERE ptr = 1280"), 2);
    cr_assert_eq(
        q1("SELECT count(*) FROM block WHERE ptr = 1280 AND flags = 8 AND free_path IS NULL"
           " AND free_seq IS NOT NULL"),
        1);
    cr_assert_eq(
        q1("SELECT count(*) FROM block WHERE ptr = 16 AND flags = 2 AND prev_block IS NULL"), 1);
}

Test(ledger, processes_are_separate_and_stacks_renumbered)
{
    stack_(1, 1);
    stack_(2, 1); /* same per-process id in another process: another database id */
    alloc_(1, 0x100, 8, 1);
    alloc_(2, 0x100, 8, 1); /* same pointer, other process: no clash */
    alloc_(3, 0x200, 8, 1); /* an unrelated process's undescribed id 1: unknown, not borrowed */
    alloc_(1, 0x300, 8, 9); /* never described */
    free_(2, 0x100);
    finish();
    cr_assert_eq(q1("SELECT count(*) FROM stack"), 2);
    cr_assert_eq(q1("SELECT count(DISTINCT alloc_stack) FROM block WHERE ptr = 256"), 2);
    cr_assert_eq(q1("SELECT count(*) FROM block WHERE ptr = 256 AND free_seq IS NULL"), 1);
    cr_assert_eq(q1("SELECT count(*) FROM block WHERE pid = 3 AND alloc_stack IS NULL"), 1);
    cr_assert_eq(q1("SELECT count(*) FROM block WHERE ptr = 768 AND alloc_stack IS NULL"), 1);
    cr_assert_eq(q1("SELECT value FROM meta WHERE key = 'unknown_stack_refs'"), 2);
    cr_assert_eq(q1("SELECT count(*) FROM block b JOIN stack s ON s.id = b.alloc_stack"
                    " WHERE s.pid != b.pid"),
                 0, "a block's stack is its own process's");
    cr_assert_eq(q1("SELECT count(*) FROM frame"), 4);
    cr_assert_eq(q1("SELECT count(*) FROM process"), 3);
}

Test(ledger, fork_child_inherits_stacks_as_of_the_fork)
{
    config_(1, 0, 0);
    stack_(1, 1);
    stack_(1, 2);
    uint64_t fork1 = now_ts() - 1; /* the fork: before the next record */
    stack_(1, 3);                  /* after the fork: the child's table never had it */
    config_(2, 1, fork1);
    alloc_(2, 0x100, 8, 1); /* inherited: the parent's stack 1 */
    alloc_(2, 0x200, 8, 3); /* parent described it after the fork: unknown */
    stack_(2, 7);
    alloc_(2, 0x300, 8, 7); /* its own */
    uint64_t fork2 = now_ts() - 1;
    stack_(2, 8);
    config_(4, 2, fork2);   /* grandchild, forked from 2 */
    alloc_(4, 0x100, 8, 2); /* the grandparent's, through the child's inherited table */
    alloc_(4, 0x200, 8, 7); /* the child's own, described before this fork */
    alloc_(4, 0x300, 8, 8); /* the child's, described after this fork: unknown */
    config_(5, 0, 0);       /* exec'ed or unrelated: inherits nothing */
    alloc_(5, 0x100, 8, 1);
    config_(6, 99, fork1); /* forked from a process not in the trace */
    alloc_(6, 0x100, 8, 1);
    alloc_(1, 0x900, 8, 2); /* the parent's own use after the fork */
    finish();
    long long p1 = q1("SELECT id FROM stack WHERE pid = 1 ORDER BY id LIMIT 1");
    cr_assert_eq(q1("SELECT alloc_stack FROM block WHERE pid = 2 AND ptr = 256"), p1);
    cr_assert_eq(q1("SELECT count(*) FROM block WHERE pid = 2 AND ptr = 512 AND alloc_stack IS "
                    "NULL"),
                 1);
    cr_assert_eq(q1("SELECT count(*) FROM block b JOIN stack s ON s.id = b.alloc_stack"
                    " WHERE b.pid = 2 AND b.ptr = 768 AND s.pid = 2"),
                 1);
    cr_assert_eq(q1("SELECT alloc_stack FROM block WHERE pid = 4 AND ptr = 256"), p1 + 1);
    cr_assert_eq(q1("SELECT count(*) FROM block b JOIN stack s ON s.id = b.alloc_stack"
                    " WHERE b.pid = 4 AND b.ptr = 512 AND s.pid = 2"),
                 1);
    cr_assert_eq(q1("SELECT count(*) FROM block WHERE pid = 4 AND ptr = 768 AND alloc_stack IS "
                    "NULL"),
                 1);
    cr_assert_eq(q1("SELECT count(*) FROM block WHERE pid IN (5, 6) AND alloc_stack IS NULL"), 2);
    cr_assert_eq(q1("SELECT alloc_stack FROM block WHERE pid = 1 AND ptr = 2304"), p1 + 1);
    cr_assert_eq(q1("SELECT value FROM meta WHERE key = 'unknown_stack_refs'"), 4);
    cr_assert_eq(q1("SELECT ppid FROM process WHERE pid = 2"), 1);
    cr_assert_eq(q1("SELECT ppid FROM process WHERE pid = 4"), 2);
    cr_assert_eq(q1("SELECT count(*) FROM process WHERE pid IN (1, 5) AND ppid IS NULL"), 2);
}

/* Schema version 3 stores pid, pointer, time and sequence as differences from the bases of
 * the row's segment (block_seg: the first row stored of ids seg << 11 ...). A second store on
 * the same file (successive chunks of one recording) must take the differences from the
 * bases in the file, not from its own first row. */
Test(ledger, a_second_store_on_the_file_keeps_its_segment_bases)
{
    alloc_(100, 0x7f0000001000, 32, 0);
    free_(100, 0x7f0000001000);
    finish();
    char err[256];
    st = hl_store_open(db, 0, err, sizeof err);
    cr_assert_not_null(st, "%s", err);
    hl_block_row_t r = {.id = 50,
                        .pid = 4242,
                        .ptr = 0x5500000000f0,
                        .size = 7,
                        .usable = 16,
                        .tier = 1,
                        .cls = 0,
                        .alloc_seq = 900,
                        .alloc_ts = 123456789012345,
                        .alloc_tid = 4243,
                        .alloc_path = 1,
                        .alloc_cycles = -1,
                        .has_free = 1,
                        .free_seq = 901,
                        .free_ts = 123456789012399,
                        .free_tid = 4244,
                        .free_path = 11,
                        .free_cycles = 5,
                        .free_stack = 0};
    cr_assert_eq(hl_store_block(st, &r), 0);
    cr_assert_eq(hl_store_close(st, 0, err, sizeof err), 0, "%s", err);
    st = NULL;
    cr_assert_eq(q1("SELECT count(*) FROM block_seg"), 1);
    cr_assert_eq(q1("SELECT pid FROM block_seg WHERE seg = 0"), 100);
    cr_assert_eq(q1("SELECT count(*) FROM block_wide"), 0, "both rows fit the packing");
    cr_assert_eq(q1("SELECT count(*) FROM block WHERE id = 50 AND pid = 4242 AND ptr = "
                    "0x5500000000f0 AND usable = 16 AND tier = 1 AND class = 0 AND alloc_seq = "
                    "900 AND alloc_ts = 123456789012345 AND alloc_tid = 4243 AND alloc_path = 1 "
                    "AND alloc_cycles IS NULL AND free_seq = 901 AND free_ts = 123456789012399 "
                    "AND free_tid = 4244 AND free_path = 11 AND free_cycles = 5 AND free_stack "
                    "IS NULL AND prev_block IS NULL AND flags = 0"),
                 1);
    cr_assert_eq(q1("SELECT count(*) FROM block WHERE pid = 100 AND ptr = 0x7f0000001000"), 1);
}

/* The store (hl_bf_encode in C) and the view's INSERT trigger (the same rules in SQL) make
 * the same choices: the same block_data, block_seg and block_wide rows for the same block
 * rows — those that fit the packing (several segments, processes, threads, a live row, a
 * realloc chain) and those that do not (cycles, stacks, differences too wide for pack2, a
 * difference that overflows 64 bits, a path above 63) — and the view gives every value back. */
static const hl_block_row_t fmt_rows[] = {
    {1, 100, 0x7f0000001000, 32,  47, 1,  2, 10, 1000, 101, 3, 22, 2,
     1, 11,  1500,           101, 9,  20, 3, 0,  0},
    {2, 100, 0x7f0000000ff0, 40, 47, 1, 2, 12, 1100, 103, 3, 0, 0, 0, 0, 0, 0, 0, -1, 0, 0, 0},
    {3, 200, 0x7f0000101000, 5000, 5120, 2,  -1, 14, 1200, 250, 5, -1, 7,
     1, 15,  1300,           240,  0,    -1, 0,  0,  0},
    {4, 200, 0x7f0000101000, 6000, 6144, 2,  -1, 15, 1300, 240, 5, 30, 8,
     1, 40,  2000,           200,  12,   31, 9,  3,  6},
    {5000, 100, 0x10, 8, 15, 1, 0, 10001, 99000, 100, 1, 5, 1, 0, 0, 0, 0, 0, -1, 0, 0, 1},
    {5001, 100, 0x20, 8,     15,    1,   0, 10003, 99100, 100, 1,
     5,    1,   1,    10004, 99200, 100, 9, -1,    0,     0,   0},
    /* too wide: alloc_cycles >= 2^31 - 1, a stack >= 2^31, pack2's second half past 58 bits */
    {6, 100, 0x7f0000002000, 16,  31, 1, 0, 20, 1400, 101, 3, 1ll << 40, 2,
     1, 21,  1401,           101, 9,  1, 1, 0,  0},
    {7, 100, 0x7f0000002000, 16,  31, 1, 0, 22, 1410, 101, 3, 1, 1ll << 33,
     1, 23,  1411,           101, 9,  1, 1, 0,  0},
    {8, 100, 0x7f0000002000, 16,  31, 1, 0, 24, 1420, 101, 3, 1, 2,
     1, 25,  1ull << 62,     101, 9,  1, 1, 0,  0},
    /* a difference that overflows 64 bits (pointer from 0x7f... to the top of the range) */
    {9, 100, 0x8000000000000010, 16, 31, 1, 0, 26, 1430, 101, 3, 1, 2, 1, 27, 1431, 101, 9, 1, 1,
     0, 0},
    /* a thread far from its process: zz(free_tid - alloc_tid) above 2^31 */
    {10, 100, 0x7f0000003000, 16,          31, 1, 0, 28, 1440, 101, 3, 1, 2,
     1,  29,  1441,           4000000000u, 9,  1, 1, 0,  0},
    /* a path above 63 */
    {11, 100, 0x7f0000003000, 16, 31, 1, 0, 30, 1450, 101, 70, 1, 2, 0, 0, 0, 0, 0, -1, 0, 0, 0},
    /* version 4's misc chain: alloc_seq below 2 * id + seg.seq, a thread below its pid, freed
     * by another thread, born of a realloc 11 ids back (fits) */
    {12, 100, 0x7f0000004000, 16, 31, 1, 0, 19, 1460, 50, 3, 1, 2, 1, 40, 1470, 60, 9, 1, 1, 1, 2},
    /* size in kind: 2^34 does not fit with usable == size, 2^34 - 1 does */
    {13,        100,       0x7f0000005000,
     1ll << 34, 1ll << 34, 3,
     -1,        32,        1480,
     101,       3,         1,
     2,         0,         0,
     0,         0,         0,
     -1,        0,         0,
     0},
    {14,
     100,
     0x7f0000006000,
     (1ll << 34) - 1,
     (1ll << 34) - 1,
     3,
     -1,
     34,
     1490,
     101,
     3,
     1,
     2,
     0,
     0,
     0,
     0,
     0,
     -1,
     0,
     0,
     0},
    /* a failed allocation of 2^31 bytes: zz(usable - size) past 2^31 */
    {15, 100, 0, 1ll << 31, 0, 0, -1, 36, 1500, 101, 3, 1, 2, 0, 0, 0, 0, 0, -1, 0, 0, 1},
    /* alloc_seq 2^31 past 2 * id + seg.seq: zz(aseq) past 2^31 */
    {16,
     100,
     0x7f0000007000,
     16,
     31,
     1,
     0,
     40 + (1ll << 31),
     1510,
     101,
     3,
     1,
     2,
     0,
     0,
     0,
     0,
     0,
     -1,
     0,
     0,
     0},
};

static void fmt_trigger_insert(sqlite3 *d, const hl_block_row_t *r)
{
    char q[1024], fr[200] = "NULL, NULL, NULL, NULL, NULL, NULL";
    char ap[8] = "NULL", ac[24] = "NULL", as[24] = "NULL", fp[8] = "NULL", fc[24] = "NULL",
         fs[24] = "NULL", pb[24] = "NULL";
    if (r->alloc_path) snprintf(ap, sizeof ap, "%d", r->alloc_path);
    if (r->alloc_cycles >= 0) snprintf(ac, sizeof ac, "%lld", (long long)r->alloc_cycles);
    if (r->alloc_stack) snprintf(as, sizeof as, "%lld", (long long)r->alloc_stack);
    if (r->has_free && r->free_path) snprintf(fp, sizeof fp, "%d", r->free_path);
    if (r->has_free && r->free_cycles >= 0)
        snprintf(fc, sizeof fc, "%lld", (long long)r->free_cycles);
    if (r->has_free && r->free_stack) snprintf(fs, sizeof fs, "%lld", (long long)r->free_stack);
    if (r->prev_block) snprintf(pb, sizeof pb, "%lld", (long long)r->prev_block);
    if (r->has_free)
        snprintf(fr, sizeof fr, "%lld, %lld, %lld, %s, %s, %s", (long long)r->free_seq,
                 (long long)r->free_ts, (long long)r->free_tid, fp, fc, fs);
    snprintf(
        q, sizeof q,
        "INSERT INTO block VALUES (%lld, %u, %lld, %lld, %lld, %d, %d, %lld, %lld, %u, %s, %s, "
        "%s, %s, %s, %d)",
        (long long)r->id, r->pid, (long long)r->ptr, (long long)r->size, (long long)r->usable,
        r->tier, r->cls, (long long)r->alloc_seq, (long long)r->alloc_ts, r->alloc_tid, ap, ac, as,
        fr, pb, r->flags);
    char *e = NULL;
    cr_assert_eq(sqlite3_exec(d, q, NULL, NULL, &e), SQLITE_OK, "%s: %s", q, e);
}

Test(ledger, the_store_and_the_insert_trigger_pack_rows_alike)
{
    char err[256], p2[64];
    size_t n = sizeof fmt_rows / sizeof fmt_rows[0];
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(hl_store_block(st, &fmt_rows[i]), 0);
    cr_assert_eq(hl_store_close(st, 0, err, sizeof err), 0, "%s", err);
    st = NULL;
    snprintf(p2, sizeof p2, "%s.sql", path);
    sqlite3 *d2 = hl_db_create(p2, 1, err, sizeof err);
    cr_assert_not_null(d2, "%s", err);
    for (size_t i = 0; i < n; i++)
        fmt_trigger_insert(d2, &fmt_rows[i]);
    sqlite3_close(d2);
    char q[512];
    snprintf(q, sizeof q, "ATTACH '%s' AS t", p2);
    cr_assert_eq(sqlite3_exec(db, q, NULL, NULL, NULL), SQLITE_OK);
    cr_assert_eq(q1("SELECT count(*) FROM block_wide"), 9, "the nine rows that do not fit");
    cr_assert_eq(q1("SELECT count(*) FROM block_wide WHERE id IN (13, 15, 16)"), 3);
    cr_assert_eq(q1("SELECT count(*) FROM block_seg"), 2, "segments 0 and 2");
    static const char *const tables[] = {"block_data", "block_seg", "block_wide", "block"};
    for (int i = 0; i < 4; i++) {
        snprintf(q, sizeof q,
                 "SELECT (SELECT count(*) FROM (SELECT * FROM main.%s EXCEPT SELECT * FROM t.%s))"
                 " + (SELECT count(*) FROM (SELECT * FROM t.%s EXCEPT SELECT * FROM main.%s))",
                 tables[i], tables[i], tables[i], tables[i]);
        cr_assert_eq(q1(q), 0, "%s differs between the store and the trigger", tables[i]);
    }
    /* The view gives each row back as stored. */
    cr_assert_eq(q1("SELECT count(*) FROM block"), (long long)n);
    cr_assert_eq(q1("SELECT alloc_cycles FROM block WHERE id = 6"), 1ll << 40);
    cr_assert_eq(q1("SELECT alloc_stack FROM block WHERE id = 7"), 1ll << 33);
    cr_assert_eq(q1("SELECT ptr FROM block WHERE id = 9"), (long long)0x8000000000000010ull);
    cr_assert_eq(q1("SELECT free_tid FROM block WHERE id = 10"), 4000000000ll);
    cr_assert_eq(q1("SELECT alloc_path FROM block WHERE id = 11"), 70);
    cr_assert_eq(q1("SELECT prev_block FROM block WHERE id = 4"), 3);
    cr_assert_eq(q1("SELECT count(*) FROM block WHERE id = 2 AND free_seq IS NULL AND free_ts IS "
                    "NULL AND free_tid IS NULL AND free_path IS NULL AND free_cycles IS NULL"),
                 1);
    cr_assert_eq(q1("SELECT free_tid - alloc_tid FROM block WHERE id = 3"), -10);
    cr_assert_eq(q1("SELECT pid FROM block WHERE id = 5001"), 100);
    cr_assert_eq(q1("SELECT alloc_seq - 2 * id FROM block WHERE id = 12"), -5);
    cr_assert_eq(
        q1("SELECT alloc_tid + 10 * free_tid + 1000 * prev_block FROM block WHERE id = 12"),
        50 + 600 + 1000);
    cr_assert_eq(q1("SELECT size FROM block WHERE id = 14"), (1ll << 34) - 1);
    cr_assert_eq(q1("SELECT size - usable FROM block WHERE id = 15"), 1ll << 31);
    unlink(p2);
}

/* block_totals (tracer/ingest_totals.c) equals the block view grouped by (alloc_path,
 * free_path, flags), every column, also after a second store added rows to the file. */
static const char totals_diff[] =
    "SELECT count(*) FROM (SELECT coalesce(alloc_path, 0), coalesce(free_path, 0), flags, "
    "count(*), count(free_seq), total(alloc_cycles), total(free_cycles), count(free_cycles), "
    "total(size), total(CASE WHEN free_seq IS NULL THEN size END) FROM block GROUP BY 1, 2, 3 "
    "EXCEPT SELECT alloc_path, free_path, flags, blocks, freed, 1.0 * alloc_cycles, "
    "1.0 * free_cycles, free_cycles_n, 1.0 * bytes, 1.0 * live_bytes FROM block_totals)";

/* live_totals (ingest_totals.c) equals live_at_exit grouped by (pid, alloc_stack), both ways. */
static const char live_diff[] =
    "WITH a AS (SELECT pid, coalesce(alloc_stack, 0), count(*), sum(size) FROM live_at_exit "
    "GROUP BY 1, 2), b AS (SELECT pid, alloc_stack, blocks, bytes FROM live_totals) "
    "SELECT (SELECT count(*) FROM (SELECT * FROM a EXCEPT SELECT * FROM b)) + "
    "(SELECT count(*) FROM (SELECT * FROM b EXCEPT SELECT * FROM a))";

Test(ledger, block_totals_are_the_block_rows_grouped)
{
    alloc_(100, 0x7f0000001000, 32, 0);
    alloc_(100, 0x7f0000002000, 64, 0);
    alloc_(100, 0, 1 << 20, 0); /* failed */
    free_(100, 0x7f0000001000);
    realloc_(100, 0x7f0000002000, 0x7f0000003000, 128);
    realloc_(100, 0, 0x7f0000004000, 8);
    alloc_(100, 0x7f0000005000, 16, 0);
    alloc_(100, 0x7f0000005000, 24, 0); /* lost free: end inferred */
    finish();
    cr_assert_gt(q1("SELECT count(*) FROM block_totals"), 3);
    cr_assert_eq(q1("SELECT total(blocks) FROM block_totals"), q1("SELECT count(*) FROM block"));
    cr_assert_eq(q1(totals_diff), 0);
    cr_assert_gt(q1("SELECT count(*) FROM live_totals"), 0);
    cr_assert_eq(q1(live_diff), 0);
    char err[256];
    st = hl_store_open(db, 0, err, sizeof err);
    cr_assert_not_null(st, "%s", err);
    hl_block_row_t r = {.id = 50,
                        .pid = 100,
                        .ptr = 0x7f0000009000,
                        .size = 7,
                        .usable = 16,
                        .alloc_seq = 900,
                        .alloc_ts = 5000,
                        .alloc_tid = 100,
                        .alloc_path = 4,
                        .alloc_cycles = 3,
                        .has_free = 1,
                        .free_seq = 901,
                        .free_ts = 5001,
                        .free_tid = 100,
                        .free_path = 11,
                        .free_cycles = 5};
    cr_assert_eq(hl_store_block(st, &r), 0);
    cr_assert_eq(hl_store_close(st, 0, err, sizeof err), 0, "%s", err);
    st = NULL;
    cr_assert_eq(q1("SELECT total(blocks) FROM block_totals"), q1("SELECT count(*) FROM block"));
    cr_assert_eq(q1(totals_diff), 0);
    cr_assert_eq(q1(live_diff), 0);
}

/* A sum past 64 bits writes no totals: they then cover fewer rows than the table holds and
 * the summary scans the rows. */
Test(ledger, block_totals_overflow_writes_none)
{
    hl_block_row_t r = {.id = 1,
                        .pid = 100,
                        .ptr = 0x7f0000009000,
                        .size = INT64_MAX,
                        .usable = INT64_MAX,
                        .alloc_seq = 2,
                        .alloc_ts = 5000,
                        .alloc_tid = 100,
                        .alloc_path = 4,
                        .alloc_cycles = -1};
    cr_assert_eq(hl_store_block(st, &r), 0);
    r.id = 2;
    r.alloc_seq = 4;
    cr_assert_eq(hl_store_block(st, &r), 0);
    char err[256];
    cr_assert_eq(hl_store_close(st, 0, err, sizeof err), 0, "%s", err);
    st = NULL;
    cr_assert_eq(q1("SELECT count(*) FROM block_data"), 2);
    cr_assert_eq(q1("SELECT count(*) FROM block_totals"), 0);
}

/* ---- the store's reorder window (ingest_order.c) ------------------------------------- */

static int64_t emitted[16];
static int nemitted;

static int collect_emit(void *ctx, const hl_orow_t *r)
{
    (void)ctx;
    cr_assert_lt(nemitted, 16);
    emitted[nemitted++] = r->id;
    free(r->wide);
    return 0;
}

Test(order, rows_come_out_in_id_order_within_the_window)
{
    hl_order_t *o = hl_order_new(4, 1);
    cr_assert_not_null(o);
    nemitted = 0;
    static const int64_t in[] = {3, 2, 1, 9, 6, 7, 5};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        hl_orow_t r = {.id = in[i]};
        if (in[i] == 7) r.wide = calloc(1, sizeof *r.wide); /* owned by the window, then emit */
        cr_assert_eq(hl_order_put(o, &r, collect_emit, NULL), 0);
    }
    cr_assert_eq(hl_order_drain(o, collect_emit, NULL), 0);
    /* 9 moves the window past 4 and 5 (not there); 5 comes after its window: at once; the
     * drain passes 8 and hands on 9. */
    static const int64_t want[] = {1, 2, 3, 6, 7, 5, 9};
    cr_assert_eq(nemitted, 7);
    for (int i = 0; i < 7; i++)
        cr_assert_eq(emitted[i], want[i], "row %d: %lld", i, (long long)emitted[i]);
    uint64_t late, skipped;
    hl_order_counts(o, &late, &skipped);
    cr_assert_eq(late, 1);
    cr_assert_eq(skipped, 3);
    hl_order_free(o);
}

static void put_batch(int force)
{
    if (!force && batch->n < HL_BATCH_RECS - 8) return;
    batch->events = batch->n;
    cr_assert_eq(hl_ledger_batch(led, batch), 0);
}

/* Frees in another order than the allocations, blocks that outlive the window, wide rows
 * among them: every row keeps its id (its pointer and size say which allocation it is),
 * and the rows in order take the append path. */
Test(ledger, rows_out_of_order_keep_their_ids)
{
    enum { N = 150000, GROUP = 8 }; /* more than the store's window (65,536 rows) */
    long wide = 0, live = 0;
    for (long g = 0; g < N; g += GROUP) {
        for (long i = g; i < g + GROUP; i++) {
            alloc_(100, 0x10000 + 64 * (uint64_t)i, 16 + (uint64_t)(i % 7), 0);
            if (i % 5000 == 17) { /* a path above 63: the row goes to block_wide */
                batch->rec[batch->n - 1].path = 64;
                wide++;
            }
        }
        for (long i = g + GROUP - 1; i >= g; i--) /* freed newest first */
            if (i % 1000 != 3 && i % 20000 != 11) free_(100, 0x10000 + 64 * (uint64_t)i);
        put_batch(0);
    }
    put_batch(1);
    for (long i = 3; i < N; i += 1000) /* the long-lived ones, last */
        if (i % 20000 != 11) free_(100, 0x10000 + 64 * (uint64_t)i);
    for (long i = 11; i < N; i += 20000) /* never freed */
        live++;
    put_batch(1);
    hl_run_row_t run = {.has_exit_status = 0};
    cr_assert_eq(hl_ledger_finish(led, &run), 0);
    cr_assert_eq(hl_store_commit(st), 0); /* the window's last rows too */
    uint64_t appended, placed;
    hl_store_counts(st, &appended, &placed);
    char err[256];
    cr_assert_eq(hl_store_close(st, 1, err, sizeof err), 0, "%s", err);
    st = NULL;
    cr_assert_eq(appended + placed, N);
    /* Each block outliving the window costs its own row and the first row after it: 150
     * long-lived, 8 never freed, 30 wide. */
    cr_assert_lt(placed, 400, "%llu rows stored with their rowid", (unsigned long long)placed);
    cr_assert_eq(q1("SELECT count(*) FROM block"), N);
    cr_assert_eq(q1("SELECT count(*) FROM block WHERE ptr = 0x10000 + 64 * (id - 1) AND size = "
                    "16 + (id - 1) % 7 AND alloc_seq < free_seq"),
                 N - live);
    cr_assert_eq(q1("SELECT count(*) FROM block WHERE free_seq IS NULL AND ptr = 0x10000 + 64 * "
                    "(id - 1)"),
                 live);
    cr_assert_eq(q1("SELECT count(*) FROM block_wide"), wide);
    cr_assert_eq(q1("SELECT count(*) FROM block WHERE alloc_path = 64"), wide);
}

/* A commit holds every row given to the store, also those the window still waited with. */
Test(ledger, a_commit_holds_the_rows_of_the_window)
{
    for (uint64_t i = 0; i < 100; i++)
        alloc_(100, 0x10000 + 64 * i, 32, 0);
    for (uint64_t i = 1; i < 100; i++) /* block 1 stays live: 2..100 wait behind it */
        free_(100, 0x10000 + 64 * i);
    put_batch(1);
    cr_assert_eq(q1("SELECT count(*) FROM block_data"), 0);
    cr_assert_eq(hl_store_commit(st), 0);
    cr_assert_eq(q1("SELECT count(*) FROM block_data"), 99);
    cr_assert_eq(q1("SELECT count(*) FROM block WHERE ptr = 0x10000 + 64 * (id - 1)"), 99);
    finish();
    st = NULL;
    cr_assert_eq(q1("SELECT count(*) FROM block WHERE ptr = 0x10000 + 64 * (id - 1)"), 100);
}

/* The append path relies on block_data's largest rowid as the store knows it: a row written
 * behind the store's back (here by hand, on its connection) is found at the next statement,
 * with a message, not stored under wrong ids. The statement runs in the store's SQLite
 * thread: the error reaches the store thread at the latest at the next commit. */
Test(ledger, a_row_written_behind_the_store_is_noticed)
{
    cr_assert_eq(sqlite3_exec(db, "INSERT INTO block_data(id) VALUES (5000)", NULL, NULL, NULL),
                 SQLITE_OK);
    for (uint64_t i = 0; i < 300; i++) {
        alloc_(100, 0x10000 + 64 * i, 32, 0);
        free_(100, 0x10000 + 64 * i);
    }
    batch->events = batch->n;
    hl_ledger_batch(led, batch); /* -1 or not, as the SQLite thread is quick or not */
    cr_assert_eq(hl_store_commit(st), -1);
    cr_assert(strstr(hl_store_errmsg(st), "block_data row 128 stored as 5128 (internal error)"),
              "%s", hl_store_errmsg(st));
    char err[256];
    cr_assert_eq(hl_store_close(st, 0, err, sizeof err), -1);
    st = NULL;
}

/* An error in the store's SQLite thread (here a trigger that refuses block_data's 3,000th
 * row) stops the store: later rows are refused at once (the sticky error, its message the
 * SQLite thread's), the commit fails, and no row after the error is written. */
Test(ledger, an_error_in_the_sqlite_thread_stops_the_store)
{
    cr_assert_eq(sqlite3_exec(db,
                              "CREATE TRIGGER refuse AFTER INSERT ON block_data WHEN NEW.rowid = "
                              "3000 BEGIN SELECT RAISE(ABORT, 'row 3000 refused'); END",
                              NULL, NULL, NULL),
                 SQLITE_OK);
    int failed_at = -1;
    for (uint64_t i = 0; i < 100000 && failed_at < 0; i++) {
        alloc_(100, 0x10000 + 64 * (i % 1000), 32, 0);
        free_(100, 0x10000 + 64 * (i % 1000));
        if (batch->n >= 1000) {
            batch->events = batch->n;
            if (hl_ledger_batch(led, batch) != 0) failed_at = (int)i;
            batch->n = 0;
        }
    }
    cr_assert_geq(failed_at, 0, "the store went on after the SQLite thread failed");
    cr_assert(strstr(hl_store_errmsg(st), "writing blocks: row 3000 refused"), "%s",
              hl_store_errmsg(st));
    cr_assert_eq(hl_store_commit(st), -1);
    char err[256];
    cr_assert_eq(hl_store_close(st, 0, err, sizeof err), -1);
    st = NULL;
    cr_assert(strstr(err, "row 3000 refused"), "%s", err);
}
