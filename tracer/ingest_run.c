/* tracer/ingest_run.c — hl_ingest_trace() and hl_ingest_live(): the two threads wired up.
 *
 * Traces on disk (hl_ingest_trace): babeltrace2 runs in a decoder child process
 * (ingest_decoder.c); the pump thread moves its batches from the pipe into the queue.
 * Live sessions (hl_ingest_live, collectd): the decode thread owns the babeltrace2 graph
 * (created, run and destroyed there, so its thread-local error state stays in one thread)
 * and fills batches. Either way the calling thread pops them, runs the ledger and writes
 * SQLite. If storing fails (disk full, …) the queue is aborted, which makes the decoder
 * stop at its next batch.
 */
#include "db.h"
#include "fstree.h"
#include "ingest_ckpt.h"
#include "ingest_chunks.h"
#include "ingest_internal.h"
#include "thread_cpu.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
    a->cpu = hl_thread_cpu();
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
 * live: checkpoint and commit at flush batches and every commit_ms. seq_base is added to
 * every record's seq (the events of the chunks stored before: hl_ingest_chunks_add); the
 * events the batches report are added to *events. */
static int consume_all(session_t *s, hl_iprogress_t *pr, int live, int commit_ms, uint64_t seq_base,
                       uint64_t *events)
{
    double last_commit = hl_ingest_now();
    for (;;) {
        hl_batch_t *b = hl_queue_pop(&s->q);
        int last = b->last, flush = b->flush;
        *events += b->events;
        if (seq_base)
            for (size_t i = 0; i < b->n; i++)
                b->rec[i].seq += seq_base;
        int rc = hl_ledger_batch(s->led, b);
        hl_queue_release(&s->q, b);
        if (rc != 0) {
            hl_queue_abort(&s->q);
            return -1;
        }
        if (pr) hl_iprogress_update(pr, *events);
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

static void free_dirs(char **dirs, int n)
{
    for (int i = 0; i < n; i++)
        free(dirs[i]);
    free(dirs);
}

int hl_ingest_find_traces(const char *trace_dir, char ***roots, char *err, size_t errlen)
{
    char **dirs = NULL;
    int n = hl_source_find_ctf(trace_dir, &dirs, NULL, err, errlen);
    if (n < 0) return -1;
    int k = hl_source_trace_roots(dirs, n, roots);
    free_dirs(dirs, n);
    if (k < 0) snprintf(err, errlen, "out of memory");
    return k;
}

typedef struct pump_arg_s {
    hl_decoder_t *dec;
    hl_queue_t *q;
    const volatile sig_atomic_t *stop;
    int rc;
    double cpu; /* CPU seconds of the pump thread (reading the pipe into the batches) */
    char err[256];
    char lost[192];
} pump_arg_t;

static void *pump_main(void *p)
{
    pump_arg_t *a = p;
    a->rc = hl_decoder_pump(a->dec, a->q, a->stop, a->lost, sizeof a->lost, a->err, sizeof a->err);
    a->cpu = hl_thread_cpu();
    return NULL;
}

/* One decode of a set of CTF dirs into the open session: the decoder child, the pump thread,
 * the store on this thread. */
typedef struct pass_s {
    int rc;          /* the decoder's: 0 end, 1 damaged (derr), -1 nothing decoded, 2 stopped */
    int crc;         /* the store's: 0, or -1 (hl_store_errmsg) */
    uint64_t events; /* events of this pass */
    double store_cpu, store_sql_cpu, decode_cpu, pump_cpu;
    char derr[512]; /* what the decoder said, with what salvage lost */
} pass_t;

/* Decode dirs[0..n) into s (records' seq offset by seq_base). Returns 0 with p filled, or -1
 * when the decoder could not start (err says why). The decoder forks: call it with no other
 * ingest thread at work (the store's SQLite thread, ingest_writer.c, may exist but is idle
 * between passes; the child uses neither SQLite nor the writer's lock). */
static int decode_pass(session_t *s, char **dirs, size_t n, const char *scratch, hl_iprogress_t *pr,
                       uint64_t seq_base, const volatile sig_atomic_t *stop, pass_t *p, char *err,
                       size_t errlen)
{
    memset(p, 0, sizeof *p);
    hl_decoder_t *dec = hl_decoder_start(dirs, n, scratch, err, errlen);
    if (!dec) return -1;
    pump_arg_t a = {.dec = dec, .q = &s->q, .stop = stop};
    pthread_t th;
    double cpu0 = hl_thread_cpu(), sql0 = hl_store_sql_cpu(s->st);
    pthread_create(&th, NULL, pump_main, &a);
    p->crc = consume_all(s, pr, 0, 0, seq_base, &p->events);
    pthread_join(th, NULL);
    p->store_sql_cpu = hl_store_sql_cpu(s->st) - sql0;
    p->store_cpu = hl_thread_cpu() - cpu0 + p->store_sql_cpu;
    p->decode_cpu = hl_decoder_cpu(dec); /* reaped by the pump already */
    p->pump_cpu = a.cpu;
    hl_decoder_free(dec);
    /* The decoder's message, with what salvage lost when it lost something. */
    if (a.lost[0] && a.rc == 0) { /* decoded all that was salvaged: still partial */
        a.rc = 1;
        snprintf(p->derr, sizeof p->derr, "trace damaged, %s", a.lost);
    } else if (a.lost[0] && a.rc == 1) {
        snprintf(p->derr, sizeof p->derr, "%s; %s", a.err, a.lost);
    } else {
        snprintf(p->derr, sizeof p->derr, "%s", a.err);
    }
    if (a.lost[0] && a.rc >= 0 && a.rc != 2 && !p->events) a.rc = -1; /* nothing readable */
    p->rc = a.rc;
    return 0;
}

/* SIGINT/SIGTERM during hl_ingest_trace: the first stops the ingest (the pump sees the
 * flag within 0.2 s, kills the decoder; the store finishes with what it has and marks the
 * database interrupted); the handler resets itself (SA_RESETHAND), so a second signal acts
 * as it would without heapledger. The caller's handlers are restored at the end. */
static volatile sig_atomic_t ingest_stop;

static void on_stop(int sig)
{
    ingest_stop = sig;
}

typedef struct stop_handlers_s {
    struct sigaction old_int, old_term;
} stop_handlers_t;

static void stop_handlers_install(stop_handlers_t *h)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    ingest_stop = 0;
    sigaction(SIGINT, &sa, &h->old_int);
    sigaction(SIGTERM, &sa, &h->old_term);
}

static void stop_handlers_restore(const stop_handlers_t *h)
{
    sigaction(SIGINT, &h->old_int, NULL);
    sigaction(SIGTERM, &h->old_term, NULL);
}

/* Several sessions' traces below trace_dir: refused unless o->all_traces (a directory such
 * as /tmp may hold any number of unrelated traces). */
static int check_roots(const char *trace_dir, char **dirs, int n, const hl_ingest_opts_t *o,
                       char *err, size_t errlen)
{
    if (o->all_traces) return 0;
    char **roots = NULL;
    int k = hl_source_trace_roots(dirs, n, &roots);
    if (k > 1)
        snprintf(err, errlen,
                 "%s holds the traces of %d sessions (%s, %s%s): give one of them as the trace "
                 "directory, or ask for all of them (collect --all)",
                 trace_dir, k, roots[0], roots[1], k > 2 ? ", …" : "");
    for (int i = 0; i < (k > 0 ? k : 0); i++)
        free(roots[i]);
    free(roots);
    return k > 1 ? -1 : 0;
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
    if (check_roots(trace_dir, dirs, n, o, r->error, sizeof r->error) != 0) {
        free_dirs(dirs, n);
        return -1;
    }
    session_t s;
    char scratch[] = "/tmp/heapledger-ingest.XXXXXX"; /* salvage copies; mode 0700 */
    int have_scratch = 0;
    hl_iprogress_t pr;
    hl_iprogress_start(&pr, o->progress, bytes / 36); /* ~36 bytes per event with contexts */
    stop_handlers_t sh;
    stop_handlers_install(&sh);
    pass_t p;
    if (session_open(&s, db_path, o, 0, trace_dir, r->error, sizeof r->error) != 0 ||
        !(have_scratch = mkdtemp(scratch) != NULL) ||
        decode_pass(&s, dirs, (size_t)n, scratch, &pr, 0, &ingest_stop, &p, r->error,
                    sizeof r->error) != 0) {
        if (s.db && s.st && !have_scratch)
            snprintf(r->error, sizeof r->error, "cannot create a directory %s: %s", scratch,
                     strerror(errno));
        int created = s.db != NULL;
        session_close(&s, 0, 0, NULL, 0);
        if (created) remove_db(db_path);
        if (have_scratch) rmdir(scratch);
        free_dirs(dirs, n);
        stop_handlers_restore(&sh);
        return -1;
    }
    free_dirs(dirs, n);
    r->store_cpu = p.store_cpu;
    r->store_sql_cpu = p.store_sql_cpu;
    r->pump_cpu = p.pump_cpu;
    r->decode_cpu = p.decode_cpu;
    hl_tree_remove(scratch);
    hl_ledger_counts(s.led, r);
    if (p.rc == 2) { /* stopped by a signal: keep what was stored, say how to redo it */
        r->interrupted = ingest_stop;
        hl_ledger_raw_frames(s.led);
        snprintf(p.derr, sizeof p.derr,
                 "interrupted by %s after %llu events: %s holds them (ingest_status "
                 "'interrupted'); to ingest the whole trace again: heapledger collect %s -o %s "
                 "--force",
                 ingest_stop == SIGINT ? "SIGINT" : "SIGTERM", (unsigned long long)r->events,
                 db_path, trace_dir, db_path);
    }
    int rc = 0;
    if (p.crc != 0) {
        snprintf(r->error, sizeof r->error, "%s: %s", db_path, hl_store_errmsg(s.st));
        rc = -1;
    } else if (p.rc < 0) {
        snprintf(r->error, sizeof r->error, "%s", p.derr);
        rc = -1;
    } else {
        const char *status = p.rc == 2 ? "interrupted" : p.rc == 1 ? "partial" : "complete";
        if (p.rc == 1 || p.rc == 2) {
            snprintf(r->error, sizeof r->error, "%s", p.derr);
            hl_store_meta(s.st, "ingest_warning", p.derr);
        }
        if (hl_ledger_finish(s.led, &s.run) != 0 ||
            hl_store_meta(s.st, "ingest_status", status) != 0) {
            snprintf(r->error, sizeof r->error, "%s: %s", db_path, hl_store_errmsg(s.st));
            rc = -1;
        } else {
            rc = p.rc == 1 || p.rc == 2 ? 1 : 0;
        }
    }
    hl_ledger_counts(s.led, r);
    char cerr[192];
    double t1 = hl_ingest_now(), c1 = hl_thread_cpu();
    if (session_close(&s, rc >= 0, 1, cerr, sizeof cerr) != 0 && rc >= 0) {
        snprintf(r->error, sizeof r->error, "%s: %s", db_path, cerr);
        rc = -1;
    }
    r->index_seconds = hl_ingest_now() - t1;
    r->index_cpu = hl_thread_cpu() - c1;
    if (rc < 0) remove_db(db_path);
    stop_handlers_restore(&sh);
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
    uint64_t events = 0;
    int crc = consume_all(&s, NULL, 1, commit_ms, 0, &events);
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

/* ---- chunk by chunk (ingest_chunks.h) ------------------------------------------------- */

struct hl_ingest_chunks_s {
    session_t s;
    hl_ckpt_t *ck; /* the WAL's checkpoints beside the store (ingest_ckpt.h), or NULL */
    int open;      /* the database exists (the first chunk came) */
    int failed;    /* storing failed: no more chunks */
    int damaged;
    unsigned chunks;
    uint64_t seq_base; /* events of the chunks stored so far */
    hl_ingest_opts_t o;
    hl_iprogress_t pr;
    double t0, decode_cpu, store_cpu, store_sql_cpu, pump_cpu, commit_cpu;
    char scratch[64];
    int sig_on;      /* SIGINT/SIGTERM stop the ingest (hl_ingest_chunks_signals) */
    int interrupted; /* the signal that stopped it */
    stop_handlers_t sh;
    char warn[1024]; /* what damaged chunks lost (the first), or how it was interrupted */
    char err[512];   /* why storing failed */
    char db_path[4096];
    char source[4096];
};

static const volatile sig_atomic_t chunks_no_stop; /* record forwards signals to the program */

hl_ingest_chunks_t *hl_ingest_chunks_new(const char *db_path, const char *source,
                                         const hl_ingest_opts_t *o)
{
    static const hl_ingest_opts_t defaults = HL_INGEST_OPTS_INIT;
    hl_ingest_chunks_t *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->o = o ? *o : defaults;
    snprintf(c->db_path, sizeof c->db_path, "%s", db_path);
    snprintf(c->source, sizeof c->source, "%s", source);
    c->t0 = hl_ingest_now();
    hl_iprogress_start(&c->pr, c->o.progress, 0);
    c->pr.recording = 1;
    return c;
}

uint64_t hl_ingest_chunks_events(const hl_ingest_chunks_t *c)
{
    return c->seq_base;
}

unsigned hl_ingest_chunks_count(const hl_ingest_chunks_t *c)
{
    return c->chunks;
}

void hl_ingest_chunks_backlog(hl_ingest_chunks_t *c, unsigned chunks, uint64_t bytes)
{
    c->pr.backlog_chunks = chunks;
    c->pr.backlog_bytes = bytes;
    c->pr.base = c->seq_base;
    hl_iprogress_update(&c->pr, 0);
}

void hl_ingest_chunks_signals(hl_ingest_chunks_t *c, int on)
{
    if (on && !c->sig_on) stop_handlers_install(&c->sh);
    if (!on && c->sig_on) stop_handlers_restore(&c->sh);
    c->sig_on = on;
}

int hl_ingest_chunks_interrupted(const hl_ingest_chunks_t *c)
{
    return c->interrupted ? c->interrupted : c->sig_on ? (int)ingest_stop : 0;
}

/* The database, WAL from the start: every chunk's commit survives a crash of record. */
static int chunks_open(hl_ingest_chunks_t *c)
{
    if (session_open(&c->s, c->db_path, &c->o, 1, c->source, c->err, sizeof c->err) != 0 ||
        hl_store_meta(c->s.st, "ingest_status", "recording") != 0 ||
        hl_store_commit(c->s.st) != 0) {
        if (!c->err[0] && c->s.st) snprintf(c->err, sizeof c->err, "%s", hl_store_errmsg(c->s.st));
        int created = c->s.db != NULL;
        session_close(&c->s, 0, 0, NULL, 0);
        if (created) remove_db(c->db_path);
        memset(&c->s, 0, sizeof c->s);
        return -1;
    }
    snprintf(c->scratch, sizeof c->scratch, "/tmp/heapledger-ingest.XXXXXX");
    if (!mkdtemp(c->scratch)) {
        snprintf(c->err, sizeof c->err, "cannot create a directory %s: %s", c->scratch,
                 strerror(errno));
        c->scratch[0] = 0;
        session_close(&c->s, 0, 0, NULL, 0);
        remove_db(c->db_path);
        return -1;
    }
    c->open = 1;
    const char *ct = getenv("HEAPLEDGER_CKPT_THREAD");
    if (!ct || strcmp(ct, "0")) c->ck = hl_ckpt_start(c->s.db, c->db_path);
    return 0;
}

static void chunks_result(hl_ingest_chunks_t *c, hl_ingest_result_t *r)
{
    if (c->open) hl_ledger_counts(c->s.led, r);
    r->decode_cpu = c->decode_cpu;
    r->store_cpu = c->store_cpu;
    r->store_sql_cpu = c->store_sql_cpu;
    r->pump_cpu = c->pump_cpu;
    r->commit_cpu = c->commit_cpu;
    r->seconds = hl_ingest_now() - c->t0;
}

int hl_ingest_chunks_add(hl_ingest_chunks_t *c, const char *dir, hl_ingest_result_t *r)
{
    memset(r, 0, sizeof *r);
    if (c->failed) {
        snprintf(r->error, sizeof r->error, "%s", c->err);
        return -1;
    }
    char **dirs = NULL;
    int n = hl_source_find_ctf(dir, &dirs, NULL, r->error, sizeof r->error);
    if (n <= 0) { /* an empty chunk (nothing was written in it) */
        free(dirs);
        chunks_result(c, r);
        return n < 0 ? 1 : 0;
    }
    if (!c->open && chunks_open(c) != 0) {
        free_dirs(dirs, n);
        c->failed = 1;
        snprintf(r->error, sizeof r->error, "%s", c->err);
        return -1;
    }
    c->pr.base = c->seq_base;
    pass_t p;
    int rc = decode_pass(&c->s, dirs, (size_t)n, c->scratch, &c->pr, c->seq_base,
                         c->sig_on ? &ingest_stop : &chunks_no_stop, &p, c->err, sizeof c->err);
    free_dirs(dirs, n);
    hl_tree_remove(c->scratch); /* salvage copies of this chunk */
    mkdir(c->scratch, 0700);
    /* Interrupted: end at once, symbolising can take seconds (as in hl_ingest_trace). */
    if (rc == 0 && p.rc == 2) hl_ledger_raw_frames(c->s.led);
    double commit0 = hl_thread_cpu();
    /* meta.last_chunk commits with the chunk's rows: a record killed after this commit but
     * before the chunk was deleted leaves it on disk, and this names it as stored. */
    if (rc != 0 || p.crc != 0 ||
        (hl_ledger_checkpoint(c->s.led, &c->s.run) != 0 ||
         hl_store_meta(c->s.st, "last_chunk", dir) != 0 || hl_store_commit(c->s.st) != 0)) {
        if (rc == 0)
            snprintf(c->err, sizeof c->err, "%.300s: %.200s", c->db_path, hl_store_errmsg(c->s.st));
        c->failed = 1;
        snprintf(r->error, sizeof r->error, "%s", c->err);
        chunks_result(c, r);
        return -1;
    }
    c->decode_cpu += p.decode_cpu;
    c->store_cpu += p.store_cpu;
    c->store_sql_cpu += p.store_sql_cpu;
    c->pump_cpu += p.pump_cpu;
    c->commit_cpu += hl_thread_cpu() - commit0;
    hl_ckpt_committed(c->ck);
    c->seq_base += p.events;
    c->chunks++;
    chunks_result(c, r);
    if (p.rc == 2) { /* stopped by a signal: what was stored stays, the chunk too */
        c->interrupted = r->interrupted = ingest_stop;
        return 1;
    }
    if (p.rc != 0) { /* damaged, or nothing decodable: what decoded is stored */
        if (!c->damaged)
            snprintf(c->warn, sizeof c->warn, "trace chunk %.200s: %.280s", dir, p.derr);
        c->damaged = 1;
        snprintf(r->error, sizeof r->error, "trace chunk %.200s: %.280s", dir, p.derr);
        return 1;
    }
    return 0;
}

int hl_ingest_chunks_close(hl_ingest_chunks_t *c, int exit_status, const char *trace, int deleted,
                           hl_ingest_result_t *r)
{
    memset(r, 0, sizeof *r);
    int rc;
    if (!c->interrupted && c->sig_on && ingest_stop) c->interrupted = ingest_stop;
    if (c->interrupted && c->open) { /* as hl_ingest_trace: end at once, say how to redo it */
        hl_ledger_raw_frames(c->s.led);
        const char *sig = c->interrupted == SIGINT ? "SIGINT" : "SIGTERM";
        if (deleted)
            snprintf(c->warn, sizeof c->warn,
                     "interrupted by %s after %llu events: %.200s holds them (ingest_status "
                     "'interrupted'); the trace chunks not stored are kept in %.200s "
                     "(heapledger collect --all %.200s -o OTHER.db stores them)",
                     sig, (unsigned long long)c->seq_base, c->db_path, trace, trace);
        else
            snprintf(c->warn, sizeof c->warn,
                     "interrupted by %s after %llu events: %.200s holds them (ingest_status "
                     "'interrupted'); to ingest the whole trace again: heapledger collect --all "
                     "%.200s -o %.200s --force",
                     sig, (unsigned long long)c->seq_base, c->db_path, trace, c->db_path);
        c->damaged = 1;
    }
    double ckpt_cpu = hl_ckpt_stop(c->ck); /* before the journal mode changes at the close */
    c->ck = NULL;
    if (!c->open) {
        snprintf(r->error, sizeof r->error, "%s", c->failed ? c->err : "no trace chunk was stored");
        rc = -1;
    } else if (c->failed) {
        chunks_result(c, r);
        snprintf(r->error, sizeof r->error, "%s", c->err);
        session_close(&c->s, 0, 0, NULL, 0);
        if (!c->chunks) remove_db(c->db_path);
        rc = -1;
    } else {
        c->s.run.has_exit_status = exit_status != HL_EXIT_UNKNOWN;
        c->s.run.exit_status = exit_status;
        rc = c->damaged ? 1 : 0;
        if ((c->damaged && hl_store_meta(c->s.st, "ingest_warning", c->warn) != 0) ||
            hl_ledger_finish(c->s.led, &c->s.run) != 0 ||
            hl_store_meta(c->s.st, "ingest_status",
                          c->interrupted ? "interrupted"
                          : c->damaged   ? "partial"
                                         : "complete") != 0) {
            snprintf(r->error, sizeof r->error, "%.300s: %.200s", c->db_path,
                     hl_store_errmsg(c->s.st));
            rc = -1;
        } else if (c->damaged) {
            snprintf(r->error, sizeof r->error, "%.500s", c->warn);
        }
        hl_ledger_counts(c->s.led, r);
        char cerr[192];
        double t1 = hl_ingest_now(), c1 = hl_thread_cpu();
        if (session_close(&c->s, rc >= 0, 1, cerr, sizeof cerr) != 0 && rc >= 0) {
            snprintf(r->error, sizeof r->error, "%.300s: %.190s", c->db_path, cerr);
            rc = -1;
        }
        r->index_seconds = hl_ingest_now() - t1;
        r->index_cpu = hl_thread_cpu() - c1;
        r->decode_cpu = c->decode_cpu;
        r->store_cpu = c->store_cpu;
        r->store_sql_cpu = c->store_sql_cpu;
        r->pump_cpu = c->pump_cpu;
        r->commit_cpu = c->commit_cpu;
        r->seconds = hl_ingest_now() - c->t0;
    }
    if (c->scratch[0]) hl_tree_remove(c->scratch);
    hl_iprogress_end(&c->pr, r->events);
    r->ckpt_cpu = ckpt_cpu;
    r->interrupted = c->interrupted;
    hl_ingest_chunks_signals(c, 0);
    free(c);
    return rc;
}
