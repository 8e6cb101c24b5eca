/* tracer/ingest.h — CTF trace (LTTng, provider "heapledger") → SQLite run database.
 *
 * The one entry point the recorder (`heapledger record`) and `heapledger collect` call.
 * It finds every CTF directory (a directory holding a `metadata` file) under trace_dir,
 * decodes them with libbabeltrace2 (src.ctf.fs → muxer → our sink) in a child process with a
 * watchdog (a corrupt trace can hang or crash babeltrace2), stores on the calling thread,
 * and writes one run database (schemas/heapledger.sql, schema v2): one `block` row
 * per block lifetime, symbolised stacks, OS regions, errors, run/process/thread rows.
 *
 * Return value:
 *   0   complete: every event of the trace is in the database.
 *   1   partial: the database holds what decoded, but the trace was truncated or corrupt
 *       (r->error says where and what was lost), or SIGINT/SIGTERM stopped the ingest
 *       (r->interrupted; r->error says how to ingest again). The database is valid and
 *       indexed. hl_ingest_trace handles SIGINT and SIGTERM for its duration (the caller's
 *       handlers are restored when it returns); a second signal has its default effect.
 *  -1   failure: nothing usable written (r->error says why: not a trace, output exists,
 *       unwritable, disk full, …). A database file created by this call is removed.
 * Thread-safety: calls may run concurrently on different databases.
 */
#ifndef HL_INGEST_H
#define HL_INGEST_H

#include <stddef.h>
#include <stdint.h>

/* Seconds the trace decoder may make no progress before it is stopped (a corrupt trace can
 * make babeltrace2 hang); the environment variable HEAPLEDGER_DECODE_TIMEOUT overrides. */
#define HL_DECODE_TIMEOUT 30

/* Exit status not known (e.g. a trace recorded by hand): run.exit_status stays NULL. */
#define HL_EXIT_UNKNOWN (-1000)

typedef struct hl_ingest_opts_s {
    const char *command; /* run.command, NULL when unknown */
    const char *options; /* run.options (HEAPLEDGER_OPTIONS); NULL: taken from config events */
    const char *host;    /* run.host; NULL: this machine's hostname */
    int exit_status;     /* run.exit_status, HL_EXIT_UNKNOWN when unknown */
    int progress;        /* nonzero: progress bar on stderr when stderr is a tty */
    int force;           /* nonzero: replace an existing db_path instead of failing */
    int all_traces;      /* nonzero: merge the traces of several sessions found below trace_dir
                            (else such a trace_dir is refused, see hl_ingest_find_traces) */
} hl_ingest_opts_t;

/* Defaults: everything unknown, no progress, no force, one session only. */
#define HL_INGEST_OPTS_INIT                                                                        \
    {                                                                                              \
        NULL, NULL, NULL, HL_EXIT_UNKNOWN, 0, 0, 0                                                 \
    }

typedef struct hl_ingest_result_s {
    uint64_t events;       /* events decoded and ingested (all providers) */
    uint64_t discarded;    /* events the tracer reported lost (discarded-event messages) */
    uint64_t blocks;       /* block rows written (lifetimes, failed allocations included) */
    uint64_t orphan_frees; /* frees of pointers never seen allocated */
    uint64_t stacks;       /* distinct stacks stored */
    double seconds;        /* wall time of the ingest */
    double decode_cpu;     /* CPU seconds of the decoder (babeltrace2; its child process) */
    double store_cpu;      /* CPU seconds of the store during the load (its threads) */
    double store_sql_cpu;  /* of it the store's SQLite thread (tracer/ingest_writer.c) */
    double pump_cpu;       /* CPU seconds of the threads that read the decoder's pipe */
    double commit_cpu;     /* chunk by chunk: CPU seconds of each chunk's stacks and commit */
    double ckpt_cpu;       /* chunk by chunk: CPU seconds of the WAL checkpoints' thread */
    double index_seconds;  /* wall time of the final commit and index creation */
    double index_cpu;      /* CPU seconds of the calling thread in that phase */
    int interrupted;       /* SIGINT or SIGTERM when a signal stopped the ingest (then the
                              return value is 1 and meta.ingest_status 'interrupted'), else 0 */
    char error[512];       /* message when the return value is not 0 ("" otherwise) */
} hl_ingest_result_t;

/* The trace roots below trace_dir: the session output directories (the directory holding
 * `ust/`, or a bare CTF directory) of the CTF traces found there, sorted. Returns their
 * count (0: no trace) with a malloc'ed array of malloc'ed paths in *roots, or -1 with a
 * message. hl_ingest_trace refuses a trace_dir with more than one unless o->all_traces. */
int hl_ingest_find_traces(const char *trace_dir, char ***roots, char *err, size_t errlen);

/* Ingest the LTTng session output under trace_dir into a new database db_path.
 * o may be NULL (defaults); r must not be NULL. */
int hl_ingest_trace(const char *trace_dir, const char *db_path, const hl_ingest_opts_t *o,
                    hl_ingest_result_t *r);

#endif
