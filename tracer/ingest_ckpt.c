/* tracer/ingest_ckpt.c — WAL checkpoints beside the chunked store (ingest_ckpt.h). */
#include "ingest_ckpt.h"
#include "thread_cpu.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>

struct hl_ckpt_s {
    sqlite3 *db;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int want, busy, end;
    int64_t log_bytes; /* the WAL's frames at the last checkpoint, in bytes */
    int64_t page;
    double cpu; /* the thread's CPU seconds, noted as it ends */
};

static void *ckpt_main(void *arg)
{
    hl_ckpt_t *c = arg;
    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->want && !c->end)
            pthread_cond_wait(&c->cv, &c->mu);
        if (!c->want) break;
        c->want = 0;
        c->busy = 1;
        pthread_mutex_unlock(&c->mu);
        int nlog = 0, nckpt = 0;
        int rc = sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &nlog, &nckpt);
        pthread_mutex_lock(&c->mu);
        c->busy = 0;
        if (rc == SQLITE_OK && nlog >= 0) c->log_bytes = (int64_t)nlog * c->page;
        pthread_cond_broadcast(&c->cv);
    }
    c->cpu = hl_thread_cpu();
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* Ask the checkpoint thread to end and wait for it. */
static void ckpt_join(hl_ckpt_t *c)
{
    pthread_mutex_lock(&c->mu);
    c->end = 1;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->thread, NULL);
}

hl_ckpt_t *hl_ckpt_start(sqlite3 *writer, const char *path)
{
    hl_ckpt_t *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK ||
        sqlite3_exec(c->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL) != SQLITE_OK) {
        sqlite3_close(c->db);
        free(c);
        return NULL;
    }
    sqlite3_busy_timeout(c->db, 10000);
    sqlite3_stmt *st;
    c->page = 4096;
    if (sqlite3_prepare_v2(c->db, "PRAGMA page_size", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) c->page = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* signals stay the caller's */
    int ok = pthread_create(&c->thread, NULL, ckpt_main, c) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!ok ||
        sqlite3_exec(writer, "PRAGMA wal_autocheckpoint = 0", NULL, NULL, NULL) != SQLITE_OK) {
        if (ok) ckpt_join(c);
        sqlite3_close(c->db);
        free(c);
        return NULL;
    }
    return c;
}

void hl_ckpt_committed(hl_ckpt_t *c)
{
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    int wait = c->log_bytes > (int64_t)HL_CKPT_WAL_MAX;
    if (wait) /* the checkpoint in progress first: it may not have copied the last commit */
        while (c->busy || c->want)
            pthread_cond_wait(&c->cv, &c->mu);
    c->want = 1;
    pthread_cond_signal(&c->cv);
    if (wait) {
        while (c->busy || c->want)
            pthread_cond_wait(&c->cv, &c->mu);
        c->log_bytes = 0; /* the next write restarts the WAL */
    }
    pthread_mutex_unlock(&c->mu);
}

double hl_ckpt_stop(hl_ckpt_t *c)
{
    if (!c) return 0;
    ckpt_join(c);
    sqlite3_close(c->db);
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv);
    double cpu = c->cpu;
    free(c);
    return cpu;
}
