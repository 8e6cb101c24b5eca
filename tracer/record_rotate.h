/* tracer/record_rotate.h — `heapledger record` stores its trace chunk by chunk while the
 * program runs.
 *
 * The session rotates when record asks (record_schedule.h: 16, 32, then 64 MiB chunks, asked by
 * the rotor's watch thread): LTTng closes the current trace chunk into
 * <trace>/archives/BEGIN-END-INDEX/ and fills the next meanwhile.
 * The rotor stores each closed chunk in index order into the run database
 * (ingest_chunks.h) and deletes it (unless --keep-trace), so the disk holds the database,
 * the chunk being filled and the closed chunks not stored yet (the backlog), never the whole
 * trace. A store thread of the rotor's (hl_rotor_start) calls hl_rotor_poll while record's
 * main thread watches the program and the daemons, so that the program's end is seen at once
 * and the session's stop and destroy (about 0.5 s in the session daemon) overlap the storing
 * of the chunks still waiting, and of the last one (hl_rotor_final: read where it lies once the
 * session stopped); record calls hl_rotor_finish once the session is destroyed
 * (LTTng archives the last chunk then; a session that never rotated left its trace at
 * <trace> itself, stored as one chunk). Without the thread (it could not start) record's
 * wait loop calls hl_rotor_poll itself, between looks at the program.
 *
 * Throttling. When the program makes events faster than they are stored, the backlog would
 * grow with the run (599 MiB above the database at 100 M events, docs/PERFORMANCE.md). When
 * the closed chunks waiting (checked every 100 ms by a thread of its own) hold more than
 * HEAPLEDGER_BACKLOG_BYTES (default: 512 MiB less four chunks, 256 MiB: the chunk being filled,
 * one closing and LTTng's buffers may add about that much) the rotor pauses the program — SIGSTOP
 * to it and its descendants — until it is down to half of that, then SIGCONT. Nothing is lost (the
 * program makes no events while stopped), the disk stays within the database + 512 MiB, and the
 * program's wall time grows by the pauses (its CPU time does not). Stopping LTTng's consumer daemon
 * instead would make the program block in the tracer, but only for the blocking timeout (session.c,
 * 10 s), after which events are discarded.
 */
#ifndef HL_RECORD_ROTATE_H
#define HL_RECORD_ROTATE_H

#include "ingest_chunks.h"
#include "record_schedule.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

/* Default chunk size (bytes written since the last rotation): large enough that the
 * per-chunk cost (a decoder process, babeltrace2's set-up, a commit) stays below 5 % of
 * a chunk's ingest, small enough that the backlog stays far below the 512 MiB disk budget.
 * HEAPLEDGER_CHUNK_BYTES overrides (0: no rotation, the whole trace is stored after the
 * run, as before). */
#define HL_ROTOR_CHUNK_BYTES (64ull << 20)

typedef struct hl_rotor_s {
    char dir[4096];              /* the session's output directory */
    hl_ingest_chunks_t *ing;     /* the database being filled */
    int keep;                    /* --keep-trace: stored chunks stay on disk */
    long next;                   /* index of the next chunk to store */
    int failed;                  /* storing failed: later chunks stay on disk */
    int damaged;                 /* a chunk was damaged (kept on disk) */
    int stopped;                 /* a signal stopped the ingest: later chunks stay on disk */
    unsigned deleted;            /* chunks deleted once stored */
    uint64_t peak_waiting_bytes; /* largest backlog seen (bytes of closed chunks) */
    char err[512];               /* the first failure or damage */
    /* Called after each chunk is committed, before it is deleted (record tells its reaper:
     * that chunk is in the database). */
    void (*after_store)(void *arg, const char *path);
    /* Called once, before the first chunk is stored (record tells its reaper to keep the
     * trace directory from then on: the database no longer holds the whole recording). */
    void (*before_first)(void *arg);
    void *arg;
    int started; /* before_first was called */
    /* Throttling: the program's pid (0: none), the backlog that pauses it (0: never). */
    pid_t pid;
    uint64_t backlog_max;
    int paused, no_pause;   /* paused now; never again (a signal came, the program ended) */
    unsigned pauses;        /* times paused */
    double paused_s;        /* seconds paused in all */
    double paused_at;       /* when the current pause began */
    pid_t paused_pids[256]; /* the processes the current pause stopped */
    unsigned npaused;
    int throttling, thread_ok; /* the watch thread started (once: hl_rotor_start or the first
                                  poll) */
    /* The watch thread (every 100 ms while the program runs): the chunk schedule (NULL: LTTng's
     * own, or none) and the throttle; it ends at hl_rotor_watch_end. */
    hl_rsched_t *sched;
    int watch_end;
    pthread_cond_t watch_wake;
    /* Bytes of closed chunks that stay on disk once stored (--keep-trace, damaged): not
     * backlog, the throttle subtracts them. drained_no_more: storing failed or was stopped,
     * nothing will drain the backlog again, so the throttle resumes the program for good. */
    _Atomic uint64_t retained;
    _Atomic int drained_no_more;
    pthread_t thread;
    pthread_mutex_t mu; /* the pause state, between the throttle and record's thread; the
                           store thread's requests and counts below */
    /* The store thread (hl_rotor_start): stores closed chunks while record's main thread
     * watches the program, and goes on while the session is stopped and destroyed. */
    pthread_t store_thread;
    pthread_cond_t wake; /* the store thread waits on it between looks (with mu) */
    int store_ok;        /* the store thread runs (else record calls hl_rotor_poll) */
    int finishing;       /* store what is closed, then end (hl_rotor_finish) */
    int want_signals;    /* turn on the ingest's signal handling before the next chunk */
    int signals_on;      /* done (by the thread that owns r->ing) */
    /* Called once by the thread that owns r->ing, after the program ended and before the
     * next chunk is stored (record's test hook HEAPLEDGER_TEST_HOLD_INGEST); NULL: none. */
    void (*before_final)(hl_ingest_chunks_t *ing);
    int final_done;
    unsigned stored; /* chunks stored so far (read with mu) */
    /* Seconds the store thread waited with no closed chunk, while the program ran and after
     * it ended (--stats: where the store stood idle). */
    double idle_run_s, idle_end_s;
    /* CPU seconds of the store thread and of the watch thread, noted as each ends (--stats). */
    double store_thread_cpu, watch_cpu;
    /* The last chunk, read where it lies once the session stopped (hl_rotor_final): a tree of
     * hard links to it (dir/.final-INDEX) that the destroy's move into archives/ leaves alone.
     * final_ready (with mu): it may be stored once the archives before it are; final_taken: the
     * store took it; final_ok: stored, its archive (the same files) is not stored again. */
    char final_path[4400];
    long final_index;
    int final_ready, final_taken, final_ok;
} hl_rotor_t;

/* The chunk size to rotate at: HEAPLEDGER_CHUNK_BYTES (bytes; K, M, G suffixes) or the
 * default. Returns 0 when rotation is off, (uint64_t)-1 with a message printed when the
 * variable is malformed. */
uint64_t hl_rotor_chunk_bytes(void);
/* The backlog above which the program is paused: HEAPLEDGER_BACKLOG_BYTES (K, M, G; 0:
 * never) or 512 MiB less four chunks of chunk_bytes (at least one chunk). Returns
 * (uint64_t)-1 with a message printed when the variable is malformed. */
uint64_t hl_rotor_backlog_bytes(uint64_t chunk_bytes);
/* A size in bytes with an optional K, M or G suffix; (uint64_t)-1 when malformed. */
uint64_t hl_rotor_parse_size(const char *v);
/* Bytes of the regular files under dir (not following symbolic links). */
uint64_t hl_rotor_du(const char *dir);
void hl_rotor_init(hl_rotor_t *r, const char *dir, hl_ingest_chunks_t *ing, int keep);
/* The program ended: the watch thread (chunk schedule, throttle) ends; waits for it. After it,
 * record's main thread may call liblttng-ctl again. Safe twice and without the thread. */
void hl_rotor_watch_end(hl_rotor_t *r);
/* Let a paused program go on (SIGCONT to what the pause stopped); forever: no more pauses
 * (the chunk schedule goes on until hl_rotor_watch_end). */
void hl_rotor_resume(hl_rotor_t *r, int forever);
/* Store the oldest closed chunk waiting below dir/archives, if any. Returns how many more
 * wait (call again at once), 0 when none (or storing failed). */
unsigned hl_rotor_poll(hl_rotor_t *r);
/* Start the store thread: from now on it calls hl_rotor_poll (and so everything of r->ing)
 * until hl_rotor_finish or hl_rotor_join; record's thread only watches. Returns 0, or -1
 * (then record keeps calling hl_rotor_poll itself). */
int hl_rotor_start(hl_rotor_t *r);
/* Chunks stored so far (any thread). */
unsigned hl_rotor_stored(hl_rotor_t *r);
/* The program ended: SIGINT/SIGTERM stop the ingest from the next chunk on
 * (hl_ingest_chunks_signals, applied by the thread that owns r->ing). */
void hl_rotor_signals(hl_rotor_t *r);
/* Let the store thread store what is closed and end; wait for it. r->ing is the caller's
 * again afterwards. Safe without a store thread, and twice. */
void hl_rotor_join(hl_rotor_t *r);
/* The session stopped (its whole trace is on disk, nothing is written to it any more): let the
 * store read the chunk it was filling now, from links to its files, instead of after the
 * destroy archived it (the session daemon's rotation check, about 0.5 s). Call before the
 * destroy, with no rotation in progress. Returns 0, or -1 when the trace is not one chunk
 * directory in place (a session that never rotated, a rotation under way, links failed): the
 * destroy's archive is stored as before. */
int hl_rotor_final(hl_rotor_t *r);
/* After the session was destroyed: store what is left (joins the store thread first). */
void hl_rotor_finish(hl_rotor_t *r);

#endif
