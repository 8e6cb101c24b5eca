/* tracer/ingest_totals.c — the block rows' totals, kept while they are stored.
 *
 * record's end-of-run summary needs, per (alloc path, free path, flags), the number of
 * block rows, how many were freed, their cycles and their bytes (tracer/record_summary.c).
 * Read back from the database that is one GROUP BY over every row of the block view (20 s
 * after a 10 M-event run); the store sees every row it writes, so it adds them up here and
 * writes the few resulting rows into block_totals (docs/schema.md) when it closes (live
 * mode: at every commit). The grouping is that of the block view: alloc_path and free_path
 * are the 6-bit fields of block_data.kind (free_path 0 when the block was not freed), flags
 * its low 4 bits. A sum that would overflow 64 bits writes nothing: block_totals then
 * covers fewer rows than block_data holds and its readers go back to the block rows.
 *
 * The live rows (no free, not failed: the rows of the view live_at_exit) are also added up
 * per (pid, allocation stack) into live_totals: the summary's live sites and the leak
 * classes' per-process totals (one scan of every block row for the few live ones before:
 * 19 s at 100 M events). A map from pid << 40 | stack (0: no stack) to an entry. An
 * overflowing sum (or a key out of that range, or no memory) writes no live_totals; its
 * readers then go back to the rows.
 */
#include "hl_blockfmt.h"
#include "ingest_internal.h"

#include <stdlib.h>
#include <string.h>

#define KEYS (1u << 16) /* alloc_path (6 bits) << 10 | free_path (6) << 4 | flags (4) */

typedef struct tot_s {
    int64_t n, freed, alloc_cycles, free_cycles, free_cycles_n, bytes, live_bytes;
} tot_t;

typedef struct live_tot_s {
    uint32_t pid;
    int64_t stack, blocks, bytes;
} live_tot_t;

struct hl_totals_s {
    tot_t *t; /* KEYS entries, calloc'ed: only the pages of used keys are ever touched */
    int overflow;
    int used;          /* any row since the last write */
    hl_map_t live_idx; /* pid << 40 | alloc_stack → index in live */
    live_tot_t *live;  /* per (pid, alloc_stack) */
    size_t nlive, caplive;
    int live_overflow; /* a live sum overflowed, or no memory: no live_totals */
    int live_used;     /* any live row since the last write */
};

hl_totals_t *hl_totals_new(void)
{
    hl_totals_t *x = calloc(1, sizeof *x);
    if (!x) return NULL;
    x->t = calloc(KEYS, sizeof *x->t);
    if (!x->t || hl_map_init(&x->live_idx, 64) != 0) {
        free(x->t);
        free(x);
        return NULL;
    }
    return x;
}

void hl_totals_free(hl_totals_t *x)
{
    if (!x) return;
    free(x->t);
    hl_map_destroy(&x->live_idx);
    free(x->live);
    free(x);
}

static inline void add(hl_totals_t *x, int64_t *to, int64_t v)
{
    if (__builtin_add_overflow(*to, v, to)) x->overflow = 1;
}

/* One more live row of (pid, stack) (stack 0: none). */
static void live_block(hl_totals_t *x, uint32_t pid, int64_t stack, int64_t size)
{
    if (x->live_overflow) return;
    if (stack < 0 || stack >= (1ll << 40) || pid >= (1u << 23)) {
        x->live_overflow = 1;
        return;
    }
    uint64_t key = (uint64_t)pid << 40 | (uint64_t)stack;
    uint64_t *v = hl_map_find(&x->live_idx, key);
    live_tot_t *t;
    if (v) {
        t = &x->live[*v];
    } else {
        if (x->nlive == x->caplive) {
            size_t n = x->caplive ? 2 * x->caplive : 64;
            live_tot_t *nl = realloc(x->live, n * sizeof *nl);
            if (!nl) {
                x->live_overflow = 1;
                return;
            }
            x->live = nl;
            x->caplive = n;
        }
        if (hl_map_put(&x->live_idx, key, x->nlive) != 0) {
            x->live_overflow = 1;
            return;
        }
        t = &x->live[x->nlive++];
        *t = (live_tot_t){.pid = pid, .stack = stack};
    }
    x->live_used = 1;
    t->blocks++;
    if (__builtin_add_overflow(t->bytes, size, &t->bytes)) x->live_overflow = 1;
}

void hl_totals_block(hl_totals_t *x, const hl_block_row_t *r)
{
    unsigned ap = (unsigned)r->alloc_path & HL_BF_FIELD_MASK;
    unsigned fp = r->has_free ? (unsigned)r->free_path & HL_BF_FIELD_MASK : 0;
    unsigned key = ap << 10 | fp << 4 | ((unsigned)r->flags & HL_BF_FLAGS_MASK);
    tot_t *t = &x->t[key];
    int64_t size = (int64_t)r->size; /* as bound into block_data.size */
    x->used = 1;
    t->n++;
    add(x, &t->bytes, size);
    if (r->alloc_cycles >= 0) add(x, &t->alloc_cycles, r->alloc_cycles);
    if (r->has_free) {
        t->freed++;
        if (r->free_cycles >= 0) {
            t->free_cycles_n++;
            add(x, &t->free_cycles, r->free_cycles);
        }
    } else {
        add(x, &t->live_bytes, size);
        if (!(r->flags & HL_BLOCK_FAILED)) live_block(x, r->pid, r->alloc_stack, size);
    }
}

/* Prepare an upsert of a totals table into *st; *st is NULL when the sums are not to be
 * written (skip: a sum overflowed, the readers use the rows) or the database was made before
 * the table existed (its readers use the rows too). -1 on any other error. */
static int prepare_upsert(sqlite3 *db, int skip, const char *sql, sqlite3_stmt **st)
{
    *st = NULL;
    if (skip || sqlite3_prepare_v2(db, sql, -1, st, NULL) == SQLITE_OK) return 0;
    *st = NULL;
    return strstr(sqlite3_errmsg(db), "no such table") ? 0 : -1;
}

/* The live rows' totals into live_totals (alloc_stack 0: no stack), then start again. */
static int write_live(hl_totals_t *x, sqlite3 *db)
{
    if (!x->live_used) return 0;
    sqlite3_stmt *st;
    if (prepare_upsert(db, x->live_overflow,
                       "INSERT INTO live_totals(pid, alloc_stack, blocks, bytes) VALUES "
                       "(?,?,?,?) ON CONFLICT(pid, alloc_stack) DO UPDATE SET blocks = "
                       "blocks + excluded.blocks, bytes = bytes + excluded.bytes",
                       &st) != 0)
        return -1;
    int rc = 0;
    for (size_t k = 0; st && !rc && k < x->nlive; k++) {
        const live_tot_t *t = &x->live[k];
        sqlite3_bind_int64(st, 1, t->pid);
        sqlite3_bind_int64(st, 2, t->stack);
        sqlite3_bind_int64(st, 3, t->blocks);
        sqlite3_bind_int64(st, 4, t->bytes);
        if (sqlite3_step(st) != SQLITE_DONE) rc = -1;
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    hl_map_destroy(&x->live_idx);
    x->nlive = 0;
    x->live_used = 0;
    if (hl_map_init(&x->live_idx, 64) != 0) x->live_overflow = 1;
    return rc;
}

int hl_totals_write(hl_totals_t *x, sqlite3 *db)
{
    if (!x->used) return 0;
    sqlite3_stmt *st;
    if (prepare_upsert(
            db, x->overflow,
            "INSERT INTO block_totals(alloc_path, free_path, flags, blocks, freed, "
            "alloc_cycles, free_cycles, free_cycles_n, bytes, live_bytes) "
            "VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT(alloc_path, free_path, flags) DO "
            "UPDATE SET blocks = blocks + excluded.blocks, freed = freed + excluded.freed, "
            "alloc_cycles = alloc_cycles + excluded.alloc_cycles, "
            "free_cycles = free_cycles + excluded.free_cycles, "
            "free_cycles_n = free_cycles_n + excluded.free_cycles_n, "
            "bytes = bytes + excluded.bytes, live_bytes = live_bytes + excluded.live_bytes",
            &st) != 0)
        return -1;
    int rc = 0;
    /* Every used key is written (unless a sum overflowed) and zeroed; the unused ones are
     * only read, so their pages stay the shared zero page. */
    for (unsigned k = 0; k < KEYS; k++) {
        tot_t *t = &x->t[k];
        if (!t->n) continue;
        if (st && !rc) {
            sqlite3_bind_int(st, 1, (int)(k >> 10));
            sqlite3_bind_int(st, 2, (int)(k >> 4 & HL_BF_FIELD_MASK));
            sqlite3_bind_int(st, 3, (int)(k & HL_BF_FLAGS_MASK));
            const int64_t v[7] = {t->n,           t->freed,         t->alloc_cycles,
                                  t->free_cycles, t->free_cycles_n, t->bytes,
                                  t->live_bytes};
            for (int i = 0; i < 7; i++)
                sqlite3_bind_int64(st, 4 + i, v[i]);
            if (sqlite3_step(st) != SQLITE_DONE) rc = -1;
            sqlite3_reset(st);
        }
        memset(t, 0, sizeof *t);
    }
    sqlite3_finalize(st);
    x->used = 0;
    if (rc == 0) rc = write_live(x, db);
    return rc;
}
