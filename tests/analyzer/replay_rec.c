/* tests/analyzer/replay_rec.c — make a run database by driving a heap object through the
 * public API: `replay_rec OUT.db OPTIONS OPS SEED SCHEMA.sql INDEX.sql`.
 *
 * A deterministic pseudo-random mix of malloc, realloc and free over 512 slots (70 % of the
 * requests tiny, 25 % mid, 5 % up to 512 KiB) is run on hl_heap_create(OPTIONS), and every
 * block lifetime is written the way the recorder writes it (schemas/heapledger.sql): real
 * pointers, usable sizes, paths from the heap's path counters, cycles. In fixed-arena mode
 * the arena is mapped here and recorded as an 'arena' os_region. The replay test then
 * checks that `heapledger replay` with the same options reproduces the live set exactly.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <x86intrin.h>

#include "heapledger.h"
#include "hl_schema.h"

#define SLOTS 512

typedef struct slot_s {
    void *p;
    int64_t id, seq, ts, cycles;
    uint64_t size, usable;
    int tier, cls, path, flags;
    int64_t prev;
} slot_t;

static sqlite3 *db;
static sqlite3_stmt *ins;
static hl_heap_t *heap;
static uint64_t before[HL_PATH_COUNT], after[HL_PATH_COUNT];
static uint64_t rng;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void die(const char *what)
{
    fprintf(stderr, "replay_rec: %s: %s\n", what, db ? sqlite3_errmsg(db) : "?");
    exit(1);
}

static void exec_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) die(path);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    if (sqlite3_exec(db, buf, NULL, NULL, NULL) != SQLITE_OK) die(path);
}

static int path_taken(int want_op)
{
    hl_heap_path_counts(heap, after, HL_PATH_COUNT);
    int first = 0;
    for (int p = 1; p < (int)HL_PATH_COUNT; p++) {
        if (after[p] == before[p]) continue;
        if ((int)hl_path_op((unsigned)p) == want_op) return p;
        if (!first) first = p;
    }
    return first;
}

static int tier_of(int path)
{
    if (path == HL_PATH_TINY_CACHE_HIT || path == HL_PATH_TINY_REFILL ||
        path == HL_PATH_TINY_NEW_SLAB)
        return HL_TIER_TINY;
    if (path == HL_PATH_LARGE_MMAP) return HL_TIER_LARGE;
    return HL_TIER_MID;
}

static int class_of(uint64_t u)
{
    for (unsigned c = 0; c < HL_CLASS_COUNT; c++)
        if (hl_class_slot(c) - 1 == u) return (int)c;
    return -1;
}

/* Write a block row; free_seq < 0: live at the end. */
static void put(const slot_t *s, int64_t free_seq, int free_path, int64_t free_cycles, int flags)
{
    sqlite3_reset(ins);
    sqlite3_bind_int64(ins, 1, s->id);
    sqlite3_bind_int64(ins, 2, (int64_t)(uintptr_t)s->p);
    sqlite3_bind_int64(ins, 3, (int64_t)s->size);
    sqlite3_bind_int64(ins, 4, (int64_t)s->usable);
    sqlite3_bind_int(ins, 5, s->tier);
    sqlite3_bind_int(ins, 6, s->cls);
    sqlite3_bind_int64(ins, 7, s->seq);
    sqlite3_bind_int64(ins, 8, s->ts);
    sqlite3_bind_int(ins, 9, s->path);
    sqlite3_bind_int64(ins, 10, s->cycles);
    if (free_seq >= 0) {
        sqlite3_bind_int64(ins, 11, free_seq);
        sqlite3_bind_int64(ins, 12, free_seq * 100);
        sqlite3_bind_int(ins, 13, free_path);
        sqlite3_bind_int64(ins, 14, free_cycles);
    } else {
        for (int i = 11; i <= 14; i++)
            sqlite3_bind_null(ins, i);
    }
    if (s->prev)
        sqlite3_bind_int64(ins, 15, s->prev);
    else
        sqlite3_bind_null(ins, 15);
    sqlite3_bind_int(ins, 16, s->flags | flags);
    if (sqlite3_step(ins) != SQLITE_DONE) die("insert block");
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: replay_rec OUT.db OPTIONS OPS SEED SCHEMA.sql INDEX.sql\n");
        return 2;
    }
    hl_options_t o;
    hl_options_default(&o);
    char err[256];
    if (hl_options_parse(&o, argv[2], err, sizeof err) < 0) {
        fprintf(stderr, "replay_rec: %s\n", err);
        return 2;
    }
    long ops = atol(argv[3]);
    rng = strtoull(argv[4], NULL, 10) | 1;
    remove(argv[1]);
    if (sqlite3_open(argv[1], &db) != SQLITE_OK) die("open");
    exec_file(argv[5]);
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    void *arena = NULL;
    size_t arena_len = 0;
    if (o.arena_size) {
        arena_len = (o.arena_size + 4095) & ~(size_t)4095;
        arena = mmap(NULL, arena_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        o.arena_base = arena;
        char q[256];
        snprintf(q, sizeof q,
                 "INSERT INTO os_region VALUES (0, 0, 1, 1, 'map', %lld, %zu, 'arena')",
                 (long long)(uintptr_t)arena, o.arena_size);
        sqlite3_exec(db, q, NULL, NULL, NULL);
    }
    heap = hl_heap_create(&o);
    if (!heap) {
        perror("replay_rec: hl_heap_create");
        return 1;
    }
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO block (id, pid, ptr, size, usable, tier, class, "
                           "alloc_seq, alloc_ts, alloc_tid, alloc_path, alloc_cycles, free_seq, "
                           "free_ts, free_tid, free_path, free_cycles, prev_block, flags) VALUES "
                           "(?1, 1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1, ?9, ?10, ?11, ?12, 1, ?13, "
                           "?14, ?15, ?16)",
                           -1, &ins, NULL) != SQLITE_OK)
        die("prepare");
    static slot_t slot[SLOTS];
    int64_t seq = 1, id = 0;
    for (long i = 0; i < ops; i++, seq++) {
        slot_t *s = &slot[next() % SLOTS];
        uint64_t r = next() % 100;
        uint64_t size = r < 70   ? 1 + next() % 1024
                        : r < 95 ? 1025 + next() % 65536
                                 : 65536 + next() % (448 * 1024);
        hl_heap_path_counts(heap, before, HL_PATH_COUNT);
        if (!s->p) {
            uint64_t t0 = __rdtsc();
            void *p = hl_heap_malloc(heap, size);
            uint64_t t1 = __rdtsc();
            slot_t n = {p,    ++id, seq, seq * 100, (int64_t)(t1 - t0),
                        size, 0,    0,   -1,        path_taken(HL_OP_ALLOC),
                        0,    0};
            if (!p) {
                n.flags = 1;
                n.tier = HL_TIER_MID;
                put(&n, -1, 0, 0, 0);
                continue;
            }
            n.usable = hl_heap_usable_size(heap, p);
            n.tier = tier_of(n.path);
            n.cls = n.tier == HL_TIER_TINY ? class_of(n.usable) : -1;
            *s = n;
        } else if (next() % 5 == 0) {
            uint64_t t0 = __rdtsc();
            void *p = hl_heap_realloc(heap, s->p, size);
            uint64_t t1 = __rdtsc();
            if (!p) { /* a failed realloc: a failed row born of realloc; the old block stays */
                slot_t f = {NULL,  ++id, seq,         seq * 100, (int64_t)(t1 - t0),
                            size,  0,    HL_TIER_MID, -1,        path_taken(HL_OP_REALLOC),
                            1 | 2, s->id};
                put(&f, -1, 0, 0, 0);
                continue;
            }
            int path = path_taken(HL_OP_REALLOC);
            put(s, seq, path, (int64_t)(t1 - t0), 4);
            slot_t n = {
                p,  ++id, seq, seq * 100, (int64_t)(t1 - t0), size, hl_heap_usable_size(heap, p), 0,
                -1, path, 2,   s->id};
            n.tier = tier_of(path);
            n.cls = n.tier == HL_TIER_TINY ? class_of(n.usable) : -1;
            if (n.tier == HL_TIER_TINY && n.cls < 0) n.tier = HL_TIER_MID;
            *s = n;
        } else {
            uint64_t t0 = __rdtsc();
            hl_heap_free(heap, s->p);
            uint64_t t1 = __rdtsc();
            put(s, seq, path_taken(HL_OP_FREE), (int64_t)(t1 - t0), 0);
            memset(s, 0, sizeof *s);
        }
    }
    for (int i = 0; i < SLOTS; i++)
        if (slot[i].p) put(&slot[i], -1, 0, 0, 0);
    hl_heap_info_t hi;
    hl_heap_info(heap, &hi);
    char q[1024];
    snprintf(q, sizeof q,
             "INSERT INTO run VALUES (1, 'replay_rec %s %ld', '%s', 'localhost', '%s', 0, 0, "
             "%lld, 0, %lld, 0, %zu);"
             "INSERT INTO process VALUES (1, 0, 'replay_rec', '%s', 0, 0, %lld);"
             "INSERT INTO thread VALUES (1, 1, 'replay_rec');",
             argv[2], ops, argv[2], "core", (long long)seq * 100, (long long)(2 * ops),
             o.arena_size, argv[2], (long long)seq * 100);
    if (sqlite3_exec(db, q, NULL, NULL, NULL) != SQLITE_OK) die("run row");
    sqlite3_finalize(ins);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    exec_file(argv[6]);
    sqlite3_close(db);
    printf("replay_rec: %ld operations, %lld blocks, heap used %zu\n", ops, (long long)id, hi.used);
    hl_heap_destroy(heap);
    if (arena) munmap(arena, arena_len);
    return 0;
}
