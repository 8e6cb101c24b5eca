/* analyzer/blockreader.c — see blockreader.h. */
#include "blockreader.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HL_BR_CHUNKS 4
#define HL_BR_ROWS   2048

typedef struct chunk_s {
    hl_block_row_t rows[HL_BR_ROWS];
    size_t n;
    int end; /* last chunk: the query is done (rc says how) */
    int rc;  /* 0 or -1 */
} chunk_t;

struct hl_blockreader_s {
    sqlite3 *db; /* the reader's own connection */
    sqlite3_stmt *st;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t not_full, not_empty;
    chunk_t *chunk;    /* HL_BR_CHUNKS */
    size_t nfull;      /* chunks filled and not yet consumed (guarded by lock) */
    size_t prod, cons; /* ring indices */
    int stop;          /* consumer asks the reader to stop (guarded by lock) */
    chunk_t *cur;      /* consumer's chunk */
    size_t pos;
    char err[256]; /* reader's error message */
    double cpu_s;  /* reader thread's CPU time, set when it ends */
};

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Columns of the block query (see hl_blockreader_open): NULLs come back as -1 (0 for
 * paths) and tier, class and flags share one integer, so a row costs 16 column reads. */
static void decode(sqlite3_stmt *st, hl_block_row_t *row)
{
    hl_event_t *e = &row->alloc;
    int64_t packed = sqlite3_column_int64(st, 5);
    e->kind = HL_EV_ALLOC;
    e->block = sqlite3_column_int64(st, 0);
    e->pid = sqlite3_column_int64(st, 1);
    e->ptr = (uint64_t)sqlite3_column_int64(st, 2);
    e->size = (uint64_t)sqlite3_column_int64(st, 3);
    e->usable = (uint64_t)sqlite3_column_int64(st, 4);
    e->tier = (int)(packed & 0xff);
    e->cls = (int)((packed >> 8) & 0xffff) - 1;
    e->flags = (int)(packed >> 24);
    e->seq = e->alloc_seq = sqlite3_column_int64(st, 6);
    e->ts = e->alloc_ts = sqlite3_column_int64(st, 7);
    e->tid = sqlite3_column_int64(st, 8);
    e->path = sqlite3_column_int(st, 9);
    e->cycles = e->alloc_cycles = sqlite3_column_int64(st, 10);
    e->stack = e->alloc_stack = sqlite3_column_int64(st, 11);
    e->prev_block = sqlite3_column_int64(st, 12);
    e->purpose = HL_REG_OTHER;
    int64_t free_seq = sqlite3_column_int64(st, 13);
    row->has_free = free_seq >= 0;
    if (row->has_free) {
        hl_event_t *f = &row->free;
        *f = *e;
        f->kind = HL_EV_FREE;
        f->prev_block = 0;
        f->seq = free_seq;
        f->ts = sqlite3_column_int64(st, 14);
        f->tid = sqlite3_column_int64(st, 15);
        f->path = sqlite3_column_int(st, 16);
        f->cycles = sqlite3_column_int64(st, 17);
        f->stack = sqlite3_column_int64(st, 18);
    }
}

static void *reader_main(void *arg)
{
    hl_blockreader_t *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->lock);
        while (r->nfull == HL_BR_CHUNKS && !r->stop)
            pthread_cond_wait(&r->not_full, &r->lock);
        int stop = r->stop;
        chunk_t *c = &r->chunk[r->prod];
        pthread_mutex_unlock(&r->lock);
        if (stop) {
            r->cpu_s = thread_cpu();
            return NULL;
        }
        int rc = SQLITE_ROW;
        c->n = 0;
        while (c->n < HL_BR_ROWS && (rc = sqlite3_step(r->st)) == SQLITE_ROW)
            decode(r->st, &c->rows[c->n++]);
        c->end = rc != SQLITE_ROW;
        c->rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
        if (c->rc) snprintf(r->err, sizeof r->err, "reading blocks: %s", sqlite3_errmsg(r->db));
        pthread_mutex_lock(&r->lock);
        r->nfull++;
        r->prod = (r->prod + 1) % HL_BR_CHUNKS;
        pthread_cond_signal(&r->not_empty);
        pthread_mutex_unlock(&r->lock);
        if (c->end) {
            r->cpu_s = thread_cpu();
            return NULL;
        }
    }
}

hl_blockreader_t *hl_blockreader_open(sqlite3 *db, int64_t pid, int by_index, char *err,
                                      size_t errlen)
{
    const char *file = sqlite3_db_filename(db, "main");
    hl_blockreader_t *r = calloc(1, sizeof *r);
    if (!r || !(r->chunk = calloc(HL_BR_CHUNKS, sizeof *r->chunk))) {
        snprintf(err, errlen, "out of memory");
        free(r);
        return NULL;
    }
    if (!file || sqlite3_open_v2(file, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
                     SQLITE_OK) {
        snprintf(err, errlen, "opening a second connection: %s",
                 r->db ? sqlite3_errmsg(r->db) : "no file name");
        sqlite3_close(r->db);
        free(r->chunk);
        free(r);
        return NULL;
    }
    sqlite3_exec(r->db, "PRAGMA cache_size=-32768;", NULL, NULL, NULL);
    char q[512], where[64] = "";
    if (pid > 0) snprintf(where, sizeof where, "WHERE pid = %lld", (long long)pid);
    snprintf(q, sizeof q,
             "SELECT id, pid, ptr, size, usable, "
             "tier | ((class + 1) << 8) | (flags << 24), alloc_seq, alloc_ts, "
             "coalesce(alloc_tid, -1), coalesce(alloc_path, 0), coalesce(alloc_cycles, -1), "
             "coalesce(alloc_stack, -1), coalesce(prev_block, 0), coalesce(free_seq, -1), "
             "free_ts, coalesce(free_tid, -1), coalesce(free_path, 0), "
             "coalesce(free_cycles, -1), coalesce(free_stack, -1) FROM block %s ORDER BY %s",
             where, by_index ? "alloc_seq" : "id");
    if (sqlite3_prepare_v2(r->db, q, -1, &r->st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "preparing the block query: %s", sqlite3_errmsg(r->db));
        sqlite3_close(r->db);
        free(r->chunk);
        free(r);
        return NULL;
    }
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->not_full, NULL);
    pthread_cond_init(&r->not_empty, NULL);
    if (pthread_create(&r->thread, NULL, reader_main, r) != 0) {
        snprintf(err, errlen, "cannot start the reader thread");
        sqlite3_finalize(r->st);
        sqlite3_close(r->db);
        free(r->chunk);
        free(r);
        return NULL;
    }
    return r;
}

int hl_blockreader_next(hl_blockreader_t *r, const hl_block_row_t **row, char *err, size_t errlen)
{
    for (;;) {
        if (r->cur && r->pos < r->cur->n) {
            *row = &r->cur->rows[r->pos++];
            return 1;
        }
        if (r->cur) {
            if (r->cur->end) {
                if (r->cur->rc) {
                    snprintf(err, errlen, "%s", r->err);
                    return -1;
                }
                return 0;
            }
            pthread_mutex_lock(&r->lock);
            r->nfull--;
            r->cons = (r->cons + 1) % HL_BR_CHUNKS;
            pthread_cond_signal(&r->not_full);
            pthread_mutex_unlock(&r->lock);
            r->cur = NULL;
        }
        pthread_mutex_lock(&r->lock);
        while (r->nfull == 0)
            pthread_cond_wait(&r->not_empty, &r->lock);
        r->cur = &r->chunk[r->cons];
        pthread_mutex_unlock(&r->lock);
        r->pos = 0;
    }
}

double hl_blockreader_cpu(const hl_blockreader_t *r)
{
    return r->cpu_s;
}

void hl_blockreader_close(hl_blockreader_t *r)
{
    if (!r) return;
    pthread_mutex_lock(&r->lock);
    r->stop = 1;
    pthread_cond_signal(&r->not_full);
    pthread_mutex_unlock(&r->lock);
    pthread_join(r->thread, NULL);
    if (getenv("HEAPLEDGER_STATS"))
        fprintf(stderr, "heapledger: block reader thread: %.3f s CPU\n", r->cpu_s);
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->not_full);
    pthread_cond_destroy(&r->not_empty);
    sqlite3_finalize(r->st);
    sqlite3_close(r->db);
    free(r->chunk);
    free(r);
}
