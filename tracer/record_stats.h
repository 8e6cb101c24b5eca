/* tracer/record_stats.h — `heapledger record --stats`: where a recording's time and CPU go.
 *
 * record marks the moments of its sequence (record.c's header) on CLOCK_MONOTONIC, which is
 * also LTTng's trace clock, so the first and last events of the run (run.start_ts, end_ts)
 * fall on the same time line. At the end it prints, on stderr, the time line from record's
 * start and the CPU seconds (user + system) of every process and thread of the recording:
 * the traced program (its wait4 rusage, its waited-for children included), the private
 * session daemon and each of its descendants (lttng-consumerd, run-as helpers: their
 * /proc/PID/stat, read once the session is destroyed, when they have nothing left to write),
 * the decoder children (summed over the chunks), record's store thread (the ledger and
 * SQLite: the rotor's store thread, record_rotate.h), and record as a whole (getrusage: every
 * thread of record, and the final commit and summary); then record's total thread by thread
 * (main, store, SQLite, pipe readers, checkpoints, watch: each read as the thread ends), so
 * that every CPU second of it is named. Nothing is measured when --stats is not given but the
 * few clock reads of the marks and one per thread at its end.
 */
#ifndef HL_RECORD_STATS_H
#define HL_RECORD_STATS_H

#include "ingest.h"

#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>

/* The moments, in the order they happen. */
enum {
    HL_RS_START,       /* record's command line parsed, its checks done */
    HL_RS_SESSIOND,    /* the private session daemon answers */
    HL_RS_SESSION,     /* the session is created and started */
    HL_RS_FORK,        /* the program is forked (released to exec) */
    HL_RS_FIRST_CHUNK, /* the store begins the first chunk (the session rotated once) */
    HL_RS_END,         /* the program ended (reaped) */
    HL_RS_STOPPED,     /* the session is stopped: every event on disk */
    HL_RS_DESTROYED,   /* the session is destroyed: the last chunk archived */
    HL_RS_STORED,      /* every chunk is stored */
    HL_RS_READY,       /* the database is finished (run row, indexes, committed) */
    HL_RS_SUMMARY,     /* the summary is printed */
    HL_RS_N
};

/* Up to this many processes below the session daemon are listed. */
#define HL_RS_DAEMONS 8

typedef struct hl_rstats_s {
    int on;                /* --stats */
    double mark[HL_RS_N];  /* CLOCK_MONOTONIC seconds, 0 = not reached */
    struct rusage program; /* the program's, from wait4 */
    int have_program;
    unsigned ndaemons;
    struct {
        pid_t pid;
        char comm[32];
        double cpu; /* user + system seconds, its reaped children included */
    } daemon[HL_RS_DAEMONS];
    /* The chunked store (record_rotate.h): the chunks record closed (record_schedule.h), the
     * first one's size, and the seconds the store thread waited with no closed chunk. */
    int have_store;
    unsigned rotations;
    double first_chunk_mib;
    double store_idle_run, store_idle_end;
    int final_early; /* the last chunk was read once the session stopped (hl_rotor_final) */
    /* record's own threads (CPU seconds; the SQLite thread and the pipe readers come in the
     * ingest's result): the rotor's store thread and watch thread. */
    double store_thread_cpu, watch_cpu;
    unsigned stop_polls; /* hl_session_stop's looks at the consumer still writing */
} hl_rstats_t;

/* Note moment `which` now (cheap: a clock read). */
void hl_rstats_mark(hl_rstats_t *s, int which);

/* Read the CPU of the session daemon `sessiond` and of every process below it (only with
 * --stats; call once the session is destroyed, before the daemon is stopped). */
void hl_rstats_daemons(hl_rstats_t *s, pid_t sessiond);

/* Print the time line and the CPU table (only with --stats). db: the run database (for the
 * first and last event times), r: the ingest's result (decoder and store CPU). */
void hl_rstats_print(FILE *f, const hl_rstats_t *s, const char *db, const hl_ingest_result_t *r);

#endif
