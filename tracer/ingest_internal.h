/* tracer/ingest_internal.h — the map of the ingest pipeline (internal to tracer/ingest_*.c).
 *
 *   ingest_source.c   babeltrace2 graph (src.ctf.fs or src.ctf.lttng-live → muxer → our
 *                     simple sink) decoding messages into compact records [decoder child]
 *   ingest_queue.c    bounded queue of record batches between the two threads
 *   ingest_ledger.c   records → rows: block lifetimes, stack renumbering, processes,
 *                     threads, modules                                          [store thread]
 *   ingest_salvage.c  readable part of a damaged trace (truncated stream files)
 *   ingest_decoder.c  the decode side in a child process (babeltrace2 hangs or crashes on
 *                     some corrupt traces): wire format over a pipe, watchdog
 *   ingest_map.c      open-addressing u64 → u64 hash map (live blocks, stacks, threads)
 *   ingest_symbols.c  ip → function/offset/file:line/module with elfutils libdw, cached
 *   ingest_demangle.c C++ names demangled (libstdc++'s __cxa_demangle, loaded on first use)
 *   ingest_store.c    rows → SQLite: prepared statements, large transactions
 *   ingest_progress.c progress bar on stderr
 *   ingest_run.c      hl_ingest_trace() and hl_ingest_live(): wires the above together
 *
 * Records carry everything the ledger needs and nothing else; strings and arrays (rare:
 * stacks, config, modules, errors, thread names) travel in one malloc'ed `ext` blob that the
 * consumer frees.
 */
#ifndef HL_INGEST_INTERNAL_H
#define HL_INGEST_INTERNAL_H

#include "hl_blockfmt.h"
#include "ingest.h"

#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* ---- records ------------------------------------------------------------------------ */

typedef enum hl_rec_kind_e {
    HL_REC_ALLOC = 1,   /* a=ptr b=size c=usable; tier cls path cycles stack */
    HL_REC_FREE,        /* a=ptr c=usable; tier cls path cycles stack */
    HL_REC_REALLOC,     /* a=old_ptr b=size c=usable d=ptr; tier cls path cycles stack */
    HL_REC_STACK,       /* stack=id n=depth ext=uint64_t ips[n] */
    HL_REC_OS_MAP,      /* a=addr b=len ext="purpose" */
    HL_REC_OS_UNMAP,    /* a=addr b=len ext="purpose" */
    HL_REC_ERROR,       /* a=addr b=size cycles=stack c=alloc_stack d=free_stack
                           ext="kind\0details" */
    HL_REC_CONFIG,      /* a=tsc_hz b=arena_size c=fork_parent d=fork_ts ext="version\0options" */
    HL_REC_MODULE,      /* a=baddr b=memsz ext="path" (statedump bin_info, dl dlopen) */
    HL_REC_BUILD_ID,    /* a=baddr n=length ext=bytes */
    HL_REC_DLCLOSE,     /* a=baddr */
    HL_REC_THREAD,      /* first event of (pid, tid), or its name changed: ext="procname" */
    HL_REC_LEAK_BLOCKS, /* leak scan classes: n words (ptr | class) in ext */
    HL_REC_LEAK_SCAN,   /* leak scan summary: n words (hl_leak_summary_t order) in ext */
} hl_rec_kind_t;

typedef struct hl_rec_s {
    uint8_t kind, tier, cls, path;
    uint32_t pid, tid;
    uint32_t cycles, stack;
    uint32_t n;
    uint64_t seq; /* index of the event among all decoded events */
    uint64_t ts;  /* trace clock value (ns, CLOCK_MONOTONIC) */
    uint64_t a, b, c, d;
    void *ext;
} hl_rec_t;

/* A live reader that receives nothing attaches again for this long (seconds) before it gives
 * up on a session the relay daemon does not have; its message then starts with
 * HL_LIVE_NO_SESSION (ingest_source.c, collectd.c). */
#define HL_LIVE_ATTACH_S   10
#define HL_LIVE_NO_SESSION "the relay daemon has no session"

#define HL_BATCH_RECS    8192
#define HL_QUEUE_BATCHES 8

typedef struct hl_batch_s {
    size_t n;
    uint64_t events;    /* events decoded since the previous batch (records or not) */
    uint64_t discarded; /* events reported lost since the previous batch */
    uint64_t filtered;  /* heapledger events of LTTng's own threads, dropped */
    int flush;          /* live mode: no more data for now, commit what you have */
    int last;           /* end of the stream: no batch follows */
    hl_rec_t rec[HL_BATCH_RECS];
} hl_batch_t;

/* ---- queue (ingest_queue.c): two bounded lists, full and empty batches ---------------- */

typedef struct hl_queue_s {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    hl_batch_t *full[HL_QUEUE_BATCHES + 1];
    size_t head, count;
    hl_batch_t *empty[HL_QUEUE_BATCHES];
    size_t nempty;
    int aborted; /* the consumer failed: producers stop */
    int wfd;     /* pipe mode (decoder child): push writes the batch here; -1 otherwise */
} hl_queue_t;

int hl_queue_init(hl_queue_t *q);
void hl_queue_destroy(hl_queue_t *q);
/* Producer: an empty batch (blocks while all are in flight); NULL once aborted. */
hl_batch_t *hl_queue_get_empty(hl_queue_t *q);
/* Producer: hand a filled batch to the consumer. */
void hl_queue_push(hl_queue_t *q, hl_batch_t *b);
/* Consumer: the next full batch (blocks). */
hl_batch_t *hl_queue_pop(hl_queue_t *q);
/* Consumer: give a batch back (its ext blobs already freed). */
void hl_queue_release(hl_queue_t *q, hl_batch_t *b);
/* Consumer: stop the producer (it sees NULL from get_empty). */
void hl_queue_abort(hl_queue_t *q);
/* Pipe mode: every pushed batch is written to fd (hl_wire_write_batch) and reused. */
void hl_queue_set_pipe(hl_queue_t *q, int fd);

/* ---- decoder child (ingest_decoder.c): babeltrace2 in a child process + watchdog ------- */

typedef struct hl_decoder_s hl_decoder_t;

/* Start the decoder over the CTF dirs (exec'd: `heapledger collect --decoder-child PPID
 * SCRATCH DIR...`, which is hl_decoder_fs_child(); forked when that fails). Salvaged copies of
 * damaged dirs go below scratch (a private directory the caller removes). */
hl_decoder_t *hl_decoder_start(char **dirs, size_t n, const char *scratch, char *err,
                               size_t errlen);
int hl_decoder_fs_child(int argc, char **argv) __attribute__((noreturn));
/* Move the child's batches into q until its end, its death, its silence for the timeout or
 * *stop; always pushes a last batch. Returns like hl_source_run (2: stopped); lost receives
 * what salvage dropped, err what went wrong. The child is reaped before it returns. */
int hl_decoder_pump(hl_decoder_t *d, hl_queue_t *q, const volatile sig_atomic_t *stop, char *lost,
                    size_t lostlen, char *err, size_t errlen);
double hl_decoder_cpu(const hl_decoder_t *d); /* CPU seconds of the child (once reaped) */
void hl_decoder_free(hl_decoder_t *d);        /* kills and reaps the child if still there */
/* One live session's babeltrace2 reader in a process of its own (`heapledger collectd
 * --live-reader URL PPID`): pumped like a decoder, without a watchdog; its crash ends the
 * pump like a lost connection (1, or -1 before any event). hl_decoder_live_child() is that
 * process (it never returns). */
hl_decoder_t *hl_decoder_start_live(const char *url, char *err, size_t errlen);
int hl_decoder_live_child(const char *url, int fd, pid_t parent) __attribute__((noreturn));
/* Child side: one batch on the wire; a heartbeat (no-op outside the child). */
int hl_wire_write_batch(int fd, hl_batch_t *b);
void hl_decoder_heartbeat(void);

/* ---- source (ingest_source.c) --------------------------------------------------------- */

typedef struct hl_source_s hl_source_t;

/* Every directory under root holding a file named `metadata` (CTF traces), sorted.
 * Returns the count (0: none) and a malloc'ed array of malloc'ed paths in *dirs; -1 with a
 * message when root cannot be read. Also adds the stream files' total size to *bytes. */
int hl_source_find_ctf(const char *root, char ***dirs, uint64_t *bytes, char *err, size_t errlen);
/* The distinct trace roots (session output directories, see ingest_source.c) of n CTF dirs,
 * sorted, malloc'ed; returns their count, -1 when out of memory. */
int hl_source_trace_roots(char *const *dirs, int n, char ***roots);

/* A graph over the CTF dirs (src.ctf.fs, one component per dir) or over one live session
 * URL (src.ctf.lttng-live, session-not-found-action=end; in a process of its own, whose
 * records hl_source_run() pumps into q). NULL with a message on error. */
hl_source_t *hl_source_open_fs(char *const *dirs, size_t n, hl_queue_t *q, char *err,
                               size_t errlen);
hl_source_t *hl_source_open_live(const char *url, hl_queue_t *q, char *err, size_t errlen);
/* The live graph in this process (the live reader's side of hl_source_open_live). */
hl_source_t *hl_source_open_live_here(const char *url, hl_queue_t *q, char *err, size_t errlen);

/* Run to the end of the trace, or until *stop becomes nonzero. Always pushes a last batch.
 * Returns 0 at the end, 1 when decoding failed after the start (err: what and where; the
 * records decoded before are delivered), -1 when nothing could be decoded, 2 when stopped. */
int hl_source_run(hl_source_t *s, const volatile int *stop, char *err, size_t errlen);
uint64_t hl_source_events(const hl_source_t *s);
/* The first n events were delivered already (heapledger's CTF reader, ctf_source.h, stopped
 * there): count them and keep the thread-name state, but make no record of them. */
void hl_source_skip(hl_source_t *s, uint64_t n);
void hl_source_close(hl_source_t *s);

/* The lock every libbabeltrace2 call that loads plugins or creates, destroys or queries
 * objects holds (libbabeltrace2 is not thread-safe; see ingest_source.c). */
void hl_bt_lock(void);
void hl_bt_unlock(void);

/* Live sessions a relay daemon offers: calls fn(url, hostname, session, arg) for each.
 * Returns the number of sessions, or -1 with a message (relayd unreachable, …). */
int hl_source_live_sessions(const char *relay_url,
                            void (*fn)(const char *url, const char *host, const char *session,
                                       void *arg),
                            void *arg, char *err, size_t errlen);

/* ---- salvage (ingest_salvage.c) ------------------------------------------------------- */

/* 0 when src.ctf.fs accepts dir (its metadata and every stream file index). */
int hl_source_probe_fs(const char *dir);
/* A temporary copy (below the directory scratch) of a damaged CTF dir holding what can be
 * read (see the file comment); appends a description of what was lost to lost. NULL when
 * nothing can be salvaged. */
char *hl_salvage_ctf(const char *dir, const char *scratch, char *lost, size_t lostlen);
void hl_salvage_remove(const char *salvage_dir);

/* ---- map (ingest_map.c): u64 key → u64 value, key UINT64_MAX reserved ------------------ */

typedef struct hl_map_s {
    uint64_t *keys, *vals;
    size_t cap, count; /* cap a power of two, count <= cap/2 */
} hl_map_t;

int hl_map_init(hl_map_t *m, size_t cap);
void hl_map_destroy(hl_map_t *m);
/* Pointer to the value of key, or NULL. */
uint64_t *hl_map_find(const hl_map_t *m, uint64_t key);
/* Insert or replace; -1 when out of memory. */
int hl_map_put(hl_map_t *m, uint64_t key, uint64_t val);
/* Remove key; returns 1 when it was there (its value in *val when val != NULL). */
int hl_map_del(hl_map_t *m, uint64_t key, uint64_t *val);

/* ---- symbols (ingest_symbols.c) ------------------------------------------------------- */

typedef struct hl_symbols_s hl_symbols_t;

typedef struct hl_sym_s {
    const char *function; /* NULL when unknown */
    uint64_t offset;      /* from the function start (or from the module base when no function) */
    const char *file;     /* NULL without debug info */
    int line;
    const char *module; /* path of the module, NULL when the ip is in no known module */
} hl_sym_t;

hl_symbols_t *hl_symbols_new(void);
void hl_symbols_free(hl_symbols_t *s);
void hl_symbols_add_module(hl_symbols_t *s, uint32_t pid, uint64_t baddr, uint64_t memsz,
                           const char *path);
void hl_symbols_remove_module(hl_symbols_t *s, uint32_t pid, uint64_t baddr);
/* Resolve ip of process pid. caller_frame: ip is a return address (look up ip - 1).
 * Each distinct (module file, offset) goes to libdw once. Strings in *out stay valid until
 * hl_symbols_free. */
void hl_symbols_resolve(hl_symbols_t *s, uint32_t pid, uint64_t ip, int caller_frame,
                        hl_sym_t *out);
/* The demangled form of a C++ symbol name (malloc'd), or NULL when sym is not mangled or
 * cannot be demangled here (ingest_demangle.c). */
char *hl_demangle(const char *sym);

/* ---- store (ingest_store.c) ----------------------------------------------------------- */

typedef struct hl_store_s hl_store_t;

typedef struct hl_block_row_s {
    int64_t id;
    uint32_t pid;
    uint64_t ptr, size, usable;
    int tier, cls; /* cls -1 for mid/large */
    uint64_t alloc_seq, alloc_ts;
    uint32_t alloc_tid;
    int alloc_path;
    int64_t alloc_cycles; /* -1: NULL */
    int64_t alloc_stack;  /* 0: NULL */
    int has_free;
    uint64_t free_seq, free_ts;
    uint32_t free_tid;
    int free_path;       /* 0: NULL */
    int64_t free_cycles; /* -1: NULL */
    int64_t free_stack;  /* 0: NULL */
    int64_t prev_block;  /* 0: NULL */
    int flags;
} hl_block_row_t;

#define HL_BLOCK_FAILED       1
#define HL_BLOCK_FROM_REALLOC 2
#define HL_BLOCK_TO_REALLOC   4
#define HL_BLOCK_END_INFERRED 8

typedef struct hl_run_row_s {
    const char *command, *options, *host, *version;
    uint64_t tsc_hz, start_ts, end_ts, events, discarded, arena_size;
    int has_exit_status, exit_status, has_ts;
} hl_run_row_t;

/* The block rows' totals per (alloc path, free path, flags), kept as the store writes them
 * and added into block_totals (tracer/ingest_totals.c). */
typedef struct hl_totals_s hl_totals_t;
hl_totals_t *hl_totals_new(void);
void hl_totals_free(hl_totals_t *t);
void hl_totals_block(hl_totals_t *t, const hl_block_row_t *r);
/* Add the totals since the last write into block_totals and start again from zero; -1 on
 * an sqlite error (the database's error message says which). */
int hl_totals_write(hl_totals_t *t, sqlite3 *db);

/* The store's reorder window (ingest_order.c): block rows back into id order. A row as the
 * store keeps it: the packed columns of block_data (hl_blockfmt.h), or, when wide is set,
 * the whole row for block_wide (malloc'd; whoever holds the row owns it). */
typedef struct hl_orow_s {
    int64_t id, c[HL_BF_NCOLS];
    int fr_null;
    hl_bv_t *wide;
} hl_orow_t;
typedef struct hl_order_s hl_order_t;
/* Called with each row handed on; takes over r->wide. 0, or -1 to stop (an error). */
typedef int (*hl_order_emit_fn)(void *ctx, const hl_orow_t *r);
/* A window of cap rows whose first expected id is next; NULL when out of memory. */
hl_order_t *hl_order_new(size_t cap, int64_t next);
/* Frees the window and the wide rows it still holds (after an error: not handed on). */
void hl_order_free(hl_order_t *o);
/* Place r (the window takes over r->wide); hands on every row that is then in order, and r
 * itself at once when its id is below the window. Returns emit's first -1. */
int hl_order_put(hl_order_t *o, const hl_orow_t *r, hl_order_emit_fn emit, void *ctx);
/* Hand on every row the window holds, in id order (the ids not there are skipped). */
int hl_order_drain(hl_order_t *o, hl_order_emit_fn emit, void *ctx);
/* Rows handed on out of order (late), ids the window moved past without their row. */
void hl_order_counts(const hl_order_t *o, uint64_t *late, uint64_t *skipped);

/* Prepare the statements and begin the first transaction. live: durable commits
 * (synchronous=NORMAL), else bulk settings. */
hl_store_t *hl_store_open(sqlite3 *db, int live, char *err, size_t errlen);
int hl_store_block(hl_store_t *st, const hl_block_row_t *r);
int hl_store_orphan(hl_store_t *st, uint64_t seq, uint64_t ts, uint32_t pid, uint32_t tid,
                    uint64_t ptr, int path, int64_t cycles, int64_t stack);
int hl_store_stack(hl_store_t *st, int64_t id, uint32_t pid, int depth);
int hl_store_frame(hl_store_t *st, int64_t stack_id, int depth, uint64_t ip, const hl_sym_t *sym);
int hl_store_os(hl_store_t *st, const hl_rec_t *r, const char *op);
int hl_store_error(hl_store_t *st, const hl_rec_t *r, int64_t stack, int64_t alloc_stack,
                   int64_t free_stack);
int hl_store_module(hl_store_t *st, uint32_t pid, uint64_t baddr, uint64_t memsz, const char *path,
                    uint64_t ts);
int hl_store_module_build_id(hl_store_t *st, uint32_t pid, uint64_t baddr, const char *hex);
int hl_store_module_unload(hl_store_t *st, uint32_t pid, uint64_t baddr, uint64_t ts);
int hl_store_thread(hl_store_t *st, uint32_t pid, uint32_t tid, const char *name);
/* ppid 0: NULL (not known: only children forked without exec name their parent). */
int hl_store_process(hl_store_t *st, uint32_t pid, uint32_t ppid, const char *procname,
                     const char *options, uint64_t tsc_hz, uint64_t start_ts, uint64_t end_ts);
int hl_store_run(hl_store_t *st, const hl_run_row_t *r);
int hl_store_meta(hl_store_t *st, const char *key, const char *value);
/* Commit the open transaction and begin the next. */
int hl_store_commit(hl_store_t *st);
/* Commit (or roll back after an error), optionally create the indexes, finalize the
 * statements and free st (the db stays open). Returns -1 with the first error in err. */
int hl_store_close(hl_store_t *st, int indexes, char *err, size_t errlen);
/* First error met (sticky), "" when none. */
const char *hl_store_errmsg(const hl_store_t *st);
/* Block rows stored so far on the append path (ids in order, no rowid given) and with their
 * rowid (out of order, or wide); the rows still in the window or the batch are in neither. */
void hl_store_counts(const hl_store_t *st, uint64_t *appended, uint64_t *placed);

/* The store's database connection (for the writers of additive tables: ingest_leakclass.c).
 * The block rows' statements run in a thread of their own (ingest_writer.c): call
 * hl_store_sync() before each use of the connection outside ingest_store.c. */
sqlite3 *hl_store_db(hl_store_t *st);
/* Wait until the store's SQLite thread has done everything given to it; -1 when the store
 * has failed. */
int hl_store_sync(hl_store_t *st);
/* CPU seconds of the store's SQLite thread so far (0 without one). */
double hl_store_sql_cpu(const hl_store_t *st);

/* ---- leak classes (ingest_leakclass.c): tables leak_block and leak_scan ---------------- */

typedef struct hl_ileak_s hl_ileak_t;

hl_ileak_t *hl_ileak_new(sqlite3 *db);
void hl_ileak_free(hl_ileak_t *lc);
/* A class for block id (found live) of process pid, or a pointer the ledger did not know
 * (block 0: counted as unmatched). */
int hl_ileak_block(hl_ileak_t *lc, uint32_t pid, int64_t block, unsigned cls);
/* The summary of pid's scan (n words of the leak_scan event). */
int hl_ileak_scan(hl_ileak_t *lc, uint32_t pid, uint64_t ts, const uint64_t *w, size_t n);

/* ---- ledger (ingest_ledger.c) --------------------------------------------------------- */

typedef struct hl_ledger_s hl_ledger_t;

hl_ledger_t *hl_ledger_new(hl_store_t *st);
void hl_ledger_free(hl_ledger_t *l);
/* Interpret one batch (frees its ext blobs). Returns 0, or -1 on a store error. */
int hl_ledger_batch(hl_ledger_t *l, hl_batch_t *b);
/* Write what is pending and durable now (live mode checkpoints): new stacks with their
 * frames, process rows, the run row. */
int hl_ledger_checkpoint(hl_ledger_t *l, const hl_run_row_t *run);
/* End of the trace: write the blocks still live, then as checkpoint. */
int hl_ledger_finish(hl_ledger_t *l, const hl_run_row_t *run);
void hl_ledger_counts(const hl_ledger_t *l, hl_ingest_result_t *r);
/* Stacks written from now on get unsymbolised frames (ip only): an interrupted ingest must
 * end at once, and symbolising can take seconds (debug info of large modules). */
void hl_ledger_raw_frames(hl_ledger_t *l);

/* ---- progress (ingest_progress.c) ----------------------------------------------------- */

typedef struct hl_iprogress_s {
    int enabled;
    uint64_t expect; /* expected events (estimate), 0 when unknown */
    double start, last;
    int recording; /* record's chunked ingest: stored, rate, backlog instead of a bar */
    uint64_t base; /* events stored before the current pass (added to update's count) */
    unsigned backlog_chunks;
    uint64_t backlog_bytes; /* trace chunks closed but not stored yet */
} hl_iprogress_t;

void hl_iprogress_start(hl_iprogress_t *p, int want, uint64_t expect);
void hl_iprogress_update(hl_iprogress_t *p, uint64_t events);
void hl_iprogress_end(hl_iprogress_t *p, uint64_t events);
double hl_ingest_now(void);

/* ---- live ingest (ingest_run.c), used by collectd -------------------------------------- */

/* Follow one live session URL into db_path until the session ends or *stop. Commits at
 * least every commit_ms. Returns like hl_ingest_trace (1: connection lost, data kept). */
int hl_ingest_live(const char *url, const char *db_path, const hl_ingest_opts_t *o,
                   const volatile int *stop, int commit_ms, hl_ingest_result_t *r);

#endif
