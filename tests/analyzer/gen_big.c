/* tests/analyzer/gen_big.c — a large synthetic run database for the analyzer benchmark:
 * `gen_big OUT.db EVENTS SCHEMA.sql INDEX.sql [LIVE]`.
 *
 * One process, four threads, a steady live set of about LIVE blocks (default 100 000): each
 * step frees a random live block or allocates a new one (sizes 70 % tiny, 28 % mid, 2 %
 * large), so the run has EVENTS alloc and free events. Tiny blocks take 1040-byte slots in
 * 64 KiB slab segments, mid blocks 68 KiB slots in 4 MiB 'tlsf_pool' regions; freed slots
 * are reused last-in first-out, so the heap stays the size of the live set like a real one.
 * Large blocks get a mapping each. 1000 distinct stacks of depth 4.
 * Rows are written the way the recorder writes them: when the block is freed (live ones at
 * the end), in one transaction, indexes after the load.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hl_schema.h"

typedef struct live_s {
    int64_t id, seq, ts;
    uint64_t ptr, size, usable;
    int tier, cls, path, tid, stack;
    int64_t cycles;
} live_t;

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static sqlite3 *db;
static void die(const char *w)
{
    fprintf(stderr, "gen_big: %s: %s\n", w, sqlite3_errmsg(db));
    exit(1);
}

static void exec_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(1);
    }
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    if (sqlite3_exec(db, buf, NULL, NULL, NULL) != SQLITE_OK) die(path);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: gen_big OUT.db EVENTS SCHEMA.sql INDEX.sql [LIVE]\n");
        return 2;
    }
    long long events = atoll(argv[2]);
    size_t cap = argc > 5 ? (size_t)atol(argv[5]) : 100000;
    remove(argv[1]);
    if (sqlite3_open(argv[1], &db) != SQLITE_OK) die("open");
    sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-200000;",
                 NULL, NULL, NULL);
    exec_file(argv[3]);
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    sqlite3_stmt *ins, *reg;
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO block VALUES (?1, 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
                           "?11, ?12, ?13, ?14, ?9, ?15, ?16, ?12, NULL, 0)",
                           -1, &ins, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO os_region VALUES (?1, ?2, 1, 1, ?3, ?4, ?5, ?6)", -1,
                           &reg, NULL) != SQLITE_OK)
        die("prepare");
    /* Stacks: 1000 of depth 4 (alloc wrapper, site, caller, main). */
    for (int s = 1; s <= 1000; s++) {
        char q[512];
        snprintf(q, sizeof q,
                 "INSERT INTO stack VALUES (%d, 1, 4);"
                 "INSERT INTO frame VALUES (%d, 0, 4096, 'malloc', 16, '', 0, 'libheapledger.so');"
                 "INSERT INTO frame VALUES (%d, 1, %d, 'site_%d', 8, 'gen.c', %d, 'gen');"
                 "INSERT INTO frame VALUES (%d, 2, %d, 'caller_%d', 8, 'gen.c', %d, 'gen');"
                 "INSERT INTO frame VALUES (%d, 3, 8192, 'main', 64, 'gen.c', 1, 'gen');",
                 s, s, s, 65536 + s * 64, s, s, s, 1048576 + (s % 50) * 64, s % 50, s % 50, s);
        sqlite3_exec(db, q, NULL, NULL, NULL);
    }
    live_t *live = calloc(cap, sizeof *live);
    size_t nlive = 0;
    int64_t seq = 0, id = 0, ts = 1000000;
    uint64_t mid_next = 0, mid_end = 0, tiny_next = 0, tiny_end = 0, large_next = 1ull << 40;
    uint64_t *tiny_free = malloc(cap * sizeof *tiny_free),
             *mid_free = malloc(cap * sizeof *mid_free);
    size_t ntiny_free = 0, nmid_free = 0;
    long long done = 0;
    while (done < events) {
        seq++;
        ts += 50 + next() % 200;
        int do_free = nlive && (nlive >= cap || (nlive > cap / 2 && next() % 2));
        if (do_free) {
            size_t k = next() % nlive;
            live_t *b = &live[k];
            int fpath = b->tier == HL_TIER_TINY ? HL_PATH_TINY_CACHE_PUSH
                        : b->tier == HL_TIER_MID
                            ? (next() % 3 ? HL_PATH_TLSF_FREE : HL_PATH_TLSF_COALESCE)
                            : HL_PATH_LARGE_MUNMAP;
            sqlite3_reset(ins);
            sqlite3_bind_int64(ins, 1, b->id);
            sqlite3_bind_int64(ins, 2, (int64_t)b->ptr);
            sqlite3_bind_int64(ins, 3, (int64_t)b->size);
            sqlite3_bind_int64(ins, 4, (int64_t)b->usable);
            sqlite3_bind_int(ins, 5, b->tier);
            sqlite3_bind_int(ins, 6, b->cls);
            sqlite3_bind_int64(ins, 7, b->seq);
            sqlite3_bind_int64(ins, 8, b->ts);
            sqlite3_bind_int(ins, 9, b->tid);
            sqlite3_bind_int(ins, 10, b->path);
            sqlite3_bind_int64(ins, 11, b->cycles);
            sqlite3_bind_int(ins, 12, b->stack);
            sqlite3_bind_int64(ins, 13, seq);
            sqlite3_bind_int64(ins, 14, ts);
            sqlite3_bind_int(ins, 15, fpath);
            sqlite3_bind_int64(ins, 16, 20 + (int64_t)(next() % 400));
            if (sqlite3_step(ins) != SQLITE_DONE) die("insert");
            if (b->tier == HL_TIER_LARGE) { /* the mapping goes back to the OS */
                seq++;
                sqlite3_reset(reg);
                sqlite3_bind_int64(reg, 1, seq);
                sqlite3_bind_int64(reg, 2, ts);
                sqlite3_bind_text(reg, 3, "unmap", -1, SQLITE_STATIC);
                sqlite3_bind_int64(reg, 4, (int64_t)b->ptr - 16);
                sqlite3_bind_int64(reg, 5, (int64_t)b->usable + 16);
                sqlite3_bind_text(reg, 6, "large", -1, SQLITE_STATIC);
                sqlite3_step(reg);
            }
            if (b->tier == HL_TIER_TINY)
                tiny_free[ntiny_free++] = b->ptr;
            else if (b->tier == HL_TIER_MID)
                mid_free[nmid_free++] = b->ptr;
            live[k] = live[--nlive];
        } else {
            live_t *b = &live[nlive++];
            uint64_t r = next() % 100;
            b->id = ++id;
            b->seq = seq;
            b->ts = ts;
            b->tid = 1 + (int)(next() % 4);
            b->stack = 1 + (int)(next() % 1000);
            b->cycles = 20 + (int64_t)(next() % 2000);
            if (r < 70) {
                b->size = 1 + next() % 1024;
                b->cls = 0;
                while (hl_class_slot((unsigned)b->cls) - 1 < b->size)
                    b->cls++;
                b->usable = hl_class_slot((unsigned)b->cls) - 1;
                b->tier = HL_TIER_TINY;
                b->path = next() % 10 ? HL_PATH_TINY_CACHE_HIT : HL_PATH_TINY_REFILL;
                if (ntiny_free) {
                    b->ptr = tiny_free[--ntiny_free];
                } else {
                    if (tiny_next + 1040 > tiny_end) {
                        tiny_next = tiny_end = (tiny_end ? tiny_end : (1ull << 32)) + 65536;
                        tiny_end += 65536;
                        sqlite3_reset(reg);
                        sqlite3_bind_int64(reg, 1, seq);
                        sqlite3_bind_int64(reg, 2, ts);
                        sqlite3_bind_text(reg, 3, "map", -1, SQLITE_STATIC);
                        sqlite3_bind_int64(reg, 4, (int64_t)tiny_next);
                        sqlite3_bind_int64(reg, 5, 65536);
                        sqlite3_bind_text(reg, 6, "slab_segment", -1, SQLITE_STATIC);
                        sqlite3_step(reg);
                        seq++;
                    }
                    b->ptr = tiny_next + 16;
                    tiny_next += 1040;
                }
            } else if (r < 98) {
                b->size = 1025 + next() % (64 * 1024);
                b->usable = (b->size + 15) & ~15ull;
                b->cls = -1;
                b->tier = HL_TIER_MID;
                b->path = next() % 4 ? HL_PATH_TLSF_SPLIT : HL_PATH_TLSF;
                if (nmid_free) {
                    b->ptr = mid_free[--nmid_free];
                } else {
                    if (mid_next + 69632 > mid_end) {
                        mid_next = mid_end = (mid_end ? mid_end : (1ull << 36)) + (4u << 20);
                        mid_end += 4u << 20;
                        sqlite3_reset(reg);
                        sqlite3_bind_int64(reg, 1, seq);
                        sqlite3_bind_int64(reg, 2, ts);
                        sqlite3_bind_text(reg, 3, "map", -1, SQLITE_STATIC);
                        sqlite3_bind_int64(reg, 4, (int64_t)mid_next);
                        sqlite3_bind_int64(reg, 5, 4 << 20);
                        sqlite3_bind_text(reg, 6, "tlsf_pool", -1, SQLITE_STATIC);
                        sqlite3_step(reg);
                        seq++;
                    }
                    b->ptr = mid_next + 16;
                    mid_next += 69632;
                }
            } else {
                b->size = 300000 + next() % 700000;
                b->usable = (b->size + 4095) & ~4095ull;
                b->cls = -1;
                b->tier = HL_TIER_LARGE;
                b->path = HL_PATH_LARGE_MMAP;
                b->ptr = large_next + 16;
                large_next += b->usable + 4096;
                sqlite3_reset(reg);
                sqlite3_bind_int64(reg, 1, seq);
                sqlite3_bind_int64(reg, 2, ts);
                sqlite3_bind_text(reg, 3, "map", -1, SQLITE_STATIC);
                sqlite3_bind_int64(reg, 4, (int64_t)b->ptr - 16);
                sqlite3_bind_int64(reg, 5, (int64_t)b->usable + 16);
                sqlite3_bind_text(reg, 6, "large", -1, SQLITE_STATIC);
                sqlite3_step(reg);
                b->seq = ++seq;
            }
        }
        done++;
    }
    for (size_t k = 0; k < nlive; k++) {
        live_t *b = &live[k];
        sqlite3_reset(ins);
        sqlite3_clear_bindings(ins);
        sqlite3_bind_int64(ins, 1, b->id);
        sqlite3_bind_int64(ins, 2, (int64_t)b->ptr);
        sqlite3_bind_int64(ins, 3, (int64_t)b->size);
        sqlite3_bind_int64(ins, 4, (int64_t)b->usable);
        sqlite3_bind_int(ins, 5, b->tier);
        sqlite3_bind_int(ins, 6, b->cls);
        sqlite3_bind_int64(ins, 7, b->seq);
        sqlite3_bind_int64(ins, 8, b->ts);
        sqlite3_bind_int(ins, 9, b->tid);
        sqlite3_bind_int(ins, 10, b->path);
        sqlite3_bind_int64(ins, 11, b->cycles);
        sqlite3_bind_int(ins, 12, b->stack);
        if (sqlite3_step(ins) != SQLITE_DONE) die("insert live");
    }
    char q[512];
    snprintf(q, sizeof q,
             "INSERT INTO run VALUES (1, 'gen_big %lld', '', 'bench', '0.1.0', 2445000000, "
             "1000000, %lld, 0, %lld, 0, 0);"
             "INSERT INTO process VALUES (1, 0, 'gen_big', '', 2445000000, 1000000, %lld);"
             "INSERT INTO thread VALUES (1,1,'t1'),(1,2,'t2'),(1,3,'t3'),(1,4,'t4');",
             events, (long long)ts, events, (long long)ts);
    if (sqlite3_exec(db, q, NULL, NULL, NULL) != SQLITE_OK) die("run");
    sqlite3_finalize(ins);
    sqlite3_finalize(reg);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    exec_file(argv[4]);
    sqlite3_close(db);
    fprintf(stderr, "gen_big: %lld events, %lld blocks, %zu live at the end\n", events,
            (long long)id, nlive);
    return 0;
}
