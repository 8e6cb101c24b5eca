/* tracer/ingest_run.c — hl_ingest_trace() and hl_ingest_live(): the two threads wired up.
 *
 * The decode thread owns the babeltrace2 graph (created, run and destroyed there, so its
 * thread-local error state stays in one thread) and fills batches; the calling thread pops
 * them, runs the ledger and writes SQLite. If storing fails (disk full, …) the queue is
 * aborted, which makes the decoder stop at its next batch.
 */
#include "db.h"
#include "ingest_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct decode_arg_s {
    char **dirs;
    size_t ndirs;
    const char *url;
    hl_queue_t *q;
    const volatile int *stop;
    int rc;
    double cpu; /* CPU seconds of the decode thread */
    char err[256];
} decode_arg_t;

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *decode_main(void *p)
{
    decode_arg_t *a = p;
    hl_source_t *s = a->url ? hl_source_open_live(a->url, a->q, a->err, sizeof a->err)
                            : hl_source_open_fs(a->dirs, a->ndirs, a->q, a->err, sizeof a->err);
    if (!s) {
        a->rc = -1;
        hl_batch_t *b = hl_queue_get_empty(a->q);
        if (b) {
            b->last = 1;
            hl_queue_push(a->q, b);
        }
        return NULL;
    }
    a->rc = hl_source_run(s, a->stop, a->err, sizeof a->err);
    hl_source_close(s);
    a->cpu = thread_cpu();
    return NULL;
}

typedef struct session_s {
    sqlite3 *db;
    hl_store_t *st;
    hl_ledger_t *led;
    hl_queue_t q;
    int qok;
    hl_run_row_t run;
    char host[256];
} session_t;

static int session_open(session_t *s, const char *db_path, const hl_ingest_opts_t *o, int live,
                        const char *source, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->db = hl_db_create(db_path, o->force, err, errlen);
    if (!s->db) return -1;
    s->st = hl_store_open(s->db, live, err, errlen);
    if (!s->st) return -1;
    s->led = hl_ledger_new(s->st);
    if (!s->led || hl_queue_init(&s->q) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->qok = 1;
    if (o->host) {
        snprintf(s->host, sizeof s->host, "%s", o->host);
    } else if (gethostname(s->host, sizeof s->host - 1) != 0) {
        s->host[0] = 0;
    }
    s->run.command = o->command;
    s->run.options = o->options;
    s->run.host = s->host[0] ? s->host : NULL;
    s->run.has_exit_status = o->exit_status != HL_EXIT_UNKNOWN;
    s->run.exit_status = o->exit_status;
    if (hl_store_meta(s->st, "writer", "heapledger " HL_VERSION) != 0 ||
        hl_store_meta(s->st, "source", source) != 0 ||
        hl_store_meta(s->st, "ingest_status", live ? "live" : "running") != 0 ||
        (live && hl_store_commit(s->st) != 0)) {
        snprintf(err, errlen, "%s", hl_store_errmsg(s->st));
        return -1;
    }
    return 0;
}

/* Frees everything; returns -1 with a message when the final commit or indexing failed. */
static int session_close(session_t *s, int ok, int indexes, char *err, size_t errlen)
{
    int rc = 0;
    if (s->st && hl_store_close(s->st, ok && indexes, err, errlen) != 0) rc = -1;
    s->st = NULL;
    hl_ledger_free(s->led);
    if (s->qok) hl_queue_destroy(&s->q);
    if (s->db) sqlite3_close(s->db);
    return rc;
}

static void remove_db(const char *path)
{
    char side[4200];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

/* Consume batches until the last one, or until the store fails (then abort the decoder).
 * live: checkpoint and commit at flush batches and every commit_ms. */
static int consume_all(session_t *s, hl_iprogress_t *pr, int live, int commit_ms)
{
    uint64_t events = 0;
    double last_commit = hl_ingest_now();
    for (;;) {
        hl_batch_t *b = hl_queue_pop(&s->q);
        int last = b->last, flush = b->flush;
        events += b->events;
        int rc = hl_ledger_batch(s->led, b);
        hl_queue_release(&s->q, b);
        if (rc != 0) {
            hl_queue_abort(&s->q);
            return -1;
        }
        if (pr) hl_iprogress_update(pr, events);
        if (last) return 0;
        if (live && (flush || (hl_ingest_now() - last_commit) * 1000 >= commit_ms)) {
            if (hl_ledger_checkpoint(s->led, &s->run) != 0 || hl_store_commit(s->st) != 0) {
                hl_queue_abort(&s->q);
                return -1;
            }
            last_commit = hl_ingest_now();
        }
    }
}

/* Remove the salvage copies and put the original paths back (then freed by free_dirs). */
static void cleanup_salvage(char **dirs, char **salvaged, int n)
{
    for (int i = 0; salvaged && i < n; i++)
        if (salvaged[i]) {
            hl_salvage_remove(dirs[i]);
            free(dirs[i]);
            dirs[i] = salvaged[i];
        }
    free(salvaged);
}

static void free_dirs(char **dirs, int n)
{
    for (int i = 0; i < n; i++)
        free(dirs[i]);
    free(dirs);
}

int hl_ingest_trace(const char *trace_dir, const char *db_path, const hl_ingest_opts_t *o,
                    hl_ingest_result_t *r)
{
    static const hl_ingest_opts_t defaults = HL_INGEST_OPTS_INIT;
    if (!o) o = &defaults;
    memset(r, 0, sizeof *r);
    double t0 = hl_ingest_now();
    char **dirs = NULL;
    uint64_t bytes = 0;
    int n = hl_source_find_ctf(trace_dir, &dirs, &bytes, r->error, sizeof r->error);
    if (n < 0) return -1;
    if (n == 0) {
        snprintf(r->error, sizeof r->error,
                 "%s: not an LTTng trace (no CTF 'metadata' file below it)", trace_dir);
        free(dirs);
        return -1;
    }
    /* Damaged CTF dirs are replaced by a salvaged copy of what can be read. */
    char lost[512] = "";
    char **salvaged = calloc((size_t)n, sizeof *salvaged);
    for (int i = 0; salvaged && i < n; i++) {
        if (hl_source_probe_fs(dirs[i]) == 0) continue;
        char *sd = hl_salvage_ctf(dirs[i], lost, sizeof lost);
        if (sd && hl_source_probe_fs(sd) == 0) {
            salvaged[i] = dirs[i];
            dirs[i] = sd;
        } else if (sd) {
            hl_salvage_remove(sd);
            free(sd);
        }
    }
    session_t s;
    if (session_open(&s, db_path, o, 0, trace_dir, r->error, sizeof r->error) != 0) {
        int created = s.db != NULL;
        session_close(&s, 0, 0, NULL, 0);
        if (created) remove_db(db_path);
        cleanup_salvage(dirs, salvaged, n);
        free_dirs(dirs, n);
        return -1;
    }
    hl_iprogress_t pr;
    hl_iprogress_start(&pr, o->progress, bytes / 36); /* ~36 bytes per event with contexts */
    decode_arg_t a = {.dirs = dirs, .ndirs = (size_t)n, .q = &s.q};
    pthread_t th;
    double cpu0 = thread_cpu();
    pthread_create(&th, NULL, decode_main, &a);
    int crc = consume_all(&s, &pr, 0, 0);
    pthread_join(th, NULL);
    r->store_cpu = thread_cpu() - cpu0;
    r->decode_cpu = a.cpu;
    cleanup_salvage(dirs, salvaged, n);
    free_dirs(dirs, n);
    if (lost[0] && a.rc == 0) { /* decoded all that was salvaged: still partial */
        a.rc = 1;
        snprintf(a.err, sizeof a.err, "trace damaged, %s", lost);
    } else if (lost[0] && a.rc == 1) {
        size_t l = strlen(a.err);
        snprintf(a.err + l, sizeof a.err - l, "; %s", lost);
    }
    int rc = 0;
    if (crc != 0) {
        snprintf(r->error, sizeof r->error, "%s: %s", db_path, hl_store_errmsg(s.st));
        rc = -1;
    } else if (a.rc < 0) {
        snprintf(r->error, sizeof r->error, "%s", a.err);
        rc = -1;
    } else {
        const char *status = a.rc == 1 ? "partial" : "complete";
        if (a.rc == 1) {
            snprintf(r->error, sizeof r->error, "%s", a.err);
            hl_store_meta(s.st, "ingest_warning", a.err);
        }
        if (hl_ledger_finish(s.led, &s.run) != 0 ||
            hl_store_meta(s.st, "ingest_status", status) != 0) {
            snprintf(r->error, sizeof r->error, "%s: %s", db_path, hl_store_errmsg(s.st));
            rc = -1;
        } else {
            rc = a.rc == 1 ? 1 : 0;
        }
    }
    hl_ledger_counts(s.led, r);
    char cerr[192];
    double t1 = hl_ingest_now(), c1 = thread_cpu();
    if (session_close(&s, rc >= 0, 1, cerr, sizeof cerr) != 0 && rc >= 0) {
        snprintf(r->error, sizeof r->error, "%s: %s", db_path, cerr);
        rc = -1;
    }
    r->index_seconds = hl_ingest_now() - t1;
    r->index_cpu = thread_cpu() - c1;
    if (rc < 0) remove_db(db_path);
    hl_iprogress_end(&pr, r->events);
    r->seconds = hl_ingest_now() - t0;
    return rc;
}

int hl_ingest_live(const char *url, const char *db_path, const hl_ingest_opts_t *o,
                   const volatile int *stop, int commit_ms, hl_ingest_result_t *r)
{
    static const hl_ingest_opts_t defaults = HL_INGEST_OPTS_INIT;
    if (!o) o = &defaults;
    memset(r, 0, sizeof *r);
    double t0 = hl_ingest_now();
    session_t s;
    if (session_open(&s, db_path, o, 1, url, r->error, sizeof r->error) != 0) {
        int created = s.db != NULL;
        session_close(&s, 0, 0, NULL, 0);
        if (created) remove_db(db_path);
        return -1;
    }
    decode_arg_t a = {.url = url, .q = &s.q, .stop = stop};
    pthread_t th;
    pthread_create(&th, NULL, decode_main, &a);
    int crc = consume_all(&s, NULL, 1, commit_ms);
    pthread_join(th, NULL);
    int rc;
    const char *status;
    if (crc != 0) {
        snprintf(r->error, sizeof r->error, "%s: %s", db_path, hl_store_errmsg(s.st));
        rc = -1;
        status = "failed";
    } else if (a.rc < 0 || a.rc == 1) {
        snprintf(r->error, sizeof r->error, "%s", a.err);
        rc = 1;
        status = "partial";
    } else {
        rc = 0;
        status = a.rc == 2 ? "interrupted" : "complete";
    }
    if (crc == 0) {
        if (rc == 1) hl_store_meta(s.st, "ingest_warning", a.err);
        if (hl_ledger_finish(s.led, &s.run) != 0 ||
            hl_store_meta(s.st, "ingest_status", status) != 0) {
            snprintf(r->error, sizeof r->error, "%s: %s", db_path, hl_store_errmsg(s.st));
            rc = -1;
        }
    }
    hl_ledger_counts(s.led, r);
    char cerr[192];
    if (session_close(&s, crc == 0, 1, cerr, sizeof cerr) != 0 && rc >= 0) {
        snprintf(r->error, sizeof r->error, "%s: %s", db_path, cerr);
        rc = -1;
    }
    r->seconds = hl_ingest_now() - t0;
    return rc;
}
