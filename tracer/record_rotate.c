/* tracer/record_rotate.c — trace chunks stored while the program runs (record_rotate.h). */
#include "record_rotate.h"
#include "fstree.h"
#include "procstat.h"
#include "thread_cpu.h"

/* The ingest may be absent from a partial build: record then keeps the trace (record.c). */
#pragma weak hl_ingest_chunks_add
#pragma weak hl_ingest_chunks_backlog
#pragma weak hl_ingest_chunks_interrupted

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

uint64_t hl_rotor_parse_size(const char *v)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    int shift = 0;
    if (*end == 'K' || *end == 'k') shift = 10;
    if (*end == 'M' || *end == 'm') shift = 20;
    if (*end == 'G' || *end == 'g') shift = 30;
    if (shift) end++;
    if (errno || end == v || *end || *v == '-' || (shift && n >> (63 - shift)) ||
        n == (unsigned long long)-1)
        return (uint64_t)-1;
    return (uint64_t)n << shift;
}

uint64_t hl_rotor_chunk_bytes(void)
{
    const char *v = getenv("HEAPLEDGER_CHUNK_BYTES");
    if (!v || !*v) return HL_ROTOR_CHUNK_BYTES;
    uint64_t n = hl_rotor_parse_size(v);
    if (n == (uint64_t)-1) {
        fprintf(stderr,
                "heapledger record: HEAPLEDGER_CHUNK_BYTES=%s: expected a size in bytes (K, M "
                "or G suffix; 0 turns the ingest during the run off), e.g. 64M\n",
                v);
        return (uint64_t)-1;
    }
    /* LTTng flushes every sub-buffer at a rotation: below 1 MiB a chunk is mostly padding. */
    if (n && n < (1ull << 20)) n = 1ull << 20;
    return n;
}

uint64_t hl_rotor_backlog_bytes(uint64_t chunk_bytes)
{
    const char *v = getenv("HEAPLEDGER_BACKLOG_BYTES");
    if (v && *v) {
        uint64_t n = hl_rotor_parse_size(v);
        if (n == (uint64_t)-1)
            fprintf(stderr,
                    "heapledger record: HEAPLEDGER_BACKLOG_BYTES=%s: expected a size in bytes (K, "
                    "M or G suffix; 0 never pauses the program), e.g. 320M\n",
                    v);
        return n;
    }
    const uint64_t budget = 512ull << 20;
    /* What may come on top of the closed chunks at a pause: the chunk that closed since the
     * last look, the one being filled, and what LTTng's buffers (8 x 8 MiB per CPU) still
     * write into it: about four chunks of the default size. */
    return chunk_bytes && 4 * chunk_bytes < budget ? budget - 4 * chunk_bytes
                                                   : (chunk_bytes ? chunk_bytes : budget);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Stop the program and its descendants (found through /proc's parent pids, a few rounds
 * so that the children of children are found too). */
static void pause_program(hl_rotor_t *r)
{
    r->npaused = 0;
    if (kill(r->pid, SIGSTOP) != 0) return;
    r->paused_pids[r->npaused++] = r->pid;
    for (int round = 0, found = 1; found && round < 8; round++) {
        found = 0;
        DIR *d = opendir("/proc");
        struct dirent *e;
        while (d && (e = readdir(d)) &&
               r->npaused < sizeof r->paused_pids / sizeof *r->paused_pids) {
            if (!isdigit((unsigned char)e->d_name[0])) continue;
            pid_t p = (pid_t)atoi(e->d_name), pp;
            char state;
            if (hl_proc_stat(p, &pp, &state, NULL, 0) != 0) continue;
            int parent_stopped = 0, known = 0;
            for (unsigned i = 0; i < r->npaused; i++) {
                if (r->paused_pids[i] == pp) parent_stopped = 1;
                if (r->paused_pids[i] == p) known = 1;
            }
            if (parent_stopped && !known && kill(p, SIGSTOP) == 0) {
                r->paused_pids[r->npaused++] = p;
                found = 1;
            }
        }
        if (d) closedir(d);
    }
    r->paused = 1;
    r->pauses++;
    r->paused_at = now_s();
}

static void resume_locked(hl_rotor_t *r)
{
    if (!r->paused) return;
    for (unsigned i = 0; i < r->npaused; i++)
        kill(r->paused_pids[i], SIGCONT);
    r->npaused = 0;
    r->paused = 0;
    r->paused_s += now_s() - r->paused_at;
}

/* The watch thread, every 100 ms while the program runs: the chunk schedule
 * (record_schedule.h; not while the program is paused: LTTng completes no rotation then) and
 * the throttle, the closed chunks' size against backlog_max; independent of the store, which
 * spends seconds per chunk. Chunks already stored but left on disk (--keep-trace, damaged ones)
 * are not backlog and do not count. Only the closed chunks: LTTng completes no rotation while
 * the program is stopped (the chunk being filled stays open), and the closed ones are what the
 * store drains. */
static void *watch_main(void *arg)
{
    hl_rotor_t *r = arg;
    char archives[4200];
    snprintf(archives, sizeof archives, "%s/archives", r->dir);
    pthread_mutex_lock(&r->mu);
    while (!r->watch_end) {
        int throttle = !r->no_pause && r->pid > 0 && r->backlog_max, paused = r->paused;
        pthread_mutex_unlock(&r->mu);
        int closed = r->sched && !paused && hl_rsched_tick(r->sched);
        uint64_t bytes = 0;
        if (throttle) {
            uint64_t kept = atomic_load(&r->retained);
            bytes = hl_rotor_du(archives);
            bytes = bytes > kept ? bytes - kept : 0;
        }
        pthread_mutex_lock(&r->mu);
        if (r->watch_end) break;
        if (closed) pthread_cond_signal(&r->wake); /* the store need not wait for its look */
        if (throttle && !r->no_pause) {
            if (atomic_load(&r->drained_no_more)) {
                r->no_pause = 1; /* a pause would never end */
                resume_locked(r);
            } else if (!r->paused && bytes > r->backlog_max)
                pause_program(r);
            else if (r->paused && bytes <= r->backlog_max / 2)
                resume_locked(r);
        }
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 100 * 1000 * 1000;
        if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
        if (!r->watch_end) pthread_cond_timedwait(&r->watch_wake, &r->mu, &t);
    }
    resume_locked(r);
    r->watch_cpu = hl_thread_cpu();
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

static void watch_start(hl_rotor_t *r)
{
    if (r->throttling || !(r->sched || (r->pid > 0 && r->backlog_max))) return;
    r->throttling = 1;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* signals stay record's main thread's */
    r->thread_ok = pthread_create(&r->thread, NULL, watch_main, r) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void hl_rotor_watch_end(hl_rotor_t *r)
{
    pthread_mutex_lock(&r->mu);
    r->watch_end = 1;
    pthread_cond_signal(&r->watch_wake);
    pthread_mutex_unlock(&r->mu);
    if (r->thread_ok) {
        pthread_join(r->thread, NULL);
        r->thread_ok = 0;
    }
}

void hl_rotor_resume(hl_rotor_t *r, int forever)
{
    pthread_mutex_lock(&r->mu);
    if (forever) r->no_pause = 1;
    resume_locked(r);
    pthread_mutex_unlock(&r->mu);
}

void hl_rotor_init(hl_rotor_t *r, const char *dir, hl_ingest_chunks_t *ing, int keep)
{
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    r->ing = ing;
    r->keep = keep;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->wake, NULL);
    pthread_cond_init(&r->watch_wake, NULL);
}

typedef struct chunk_s {
    long index;
    char name[256];
} chunk_t;

static int chunk_cmp(const void *a, const void *b)
{
    long x = ((const chunk_t *)a)->index, y = ((const chunk_t *)b)->index;
    return x < y ? -1 : x > y;
}

static __thread uint64_t du_total; /* the rotor's thread and the throttle's */

static int du_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)path, (void)ftw;
    if (flag == FTW_F) du_total += (uint64_t)st->st_size;
    return 0;
}

uint64_t hl_rotor_du(const char *dir)
{
    du_total = 0;
    nftw(dir, du_entry, 16, FTW_PHYS);
    return du_total;
}

/* The closed chunks not stored yet, oldest first (at most max). */
static size_t scan(hl_rotor_t *r, chunk_t *v, size_t max)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/archives", r->dir);
    DIR *d = opendir(path);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        long i = hl_trace_chunk_index(e->d_name);
        if (e->d_name[0] == '.' || i < r->next || strlen(e->d_name) >= sizeof v->name) continue;
        v[n].index = i;
        snprintf(v[n].name, sizeof v[n].name, "%s", e->d_name);
        n++;
    }
    closedir(d);
    qsort(v, n, sizeof *v, chunk_cmp);
    return n;
}

/* Store one chunk directory; delete it once stored (kept: --keep-trace, damaged). */
static void store(hl_rotor_t *r, const char *path)
{
    hl_ingest_result_t res;
    if (!r->started && r->before_first) r->before_first(r->arg);
    r->started = 1;
    int rc = hl_ingest_chunks_add(r->ing, path, &res);
    if (rc < 0) {
        r->failed = 1;
        atomic_store(&r->drained_no_more, 1);
        snprintf(r->err, sizeof r->err, "%s", res.error);
        return;
    }
    if (rc > 0 && hl_ingest_chunks_interrupted(r->ing)) {
        r->stopped = 1;
        atomic_store(&r->drained_no_more, 1);
        return;
    }
    if (rc > 0) {
        if (!r->damaged) snprintf(r->err, sizeof r->err, "%s", res.error);
        r->damaged = 1;
        atomic_fetch_add(&r->retained, hl_rotor_du(path)); /* kept on disk: not waiting any more */
        return;
    }
    if (r->after_store) r->after_store(r->arg, path);
    if (!r->keep && hl_tree_remove(path) == 0)
        r->deleted++;
    else
        atomic_fetch_add(&r->retained, hl_rotor_du(path));
    pthread_mutex_lock(&r->mu);
    r->stored++;
    pthread_mutex_unlock(&r->mu);
}

enum { MAX_SCAN = 4096 };

/* May the last chunk (hl_rotor_final) be stored now, no archive before it waiting? Takes it. */
static int final_due(hl_rotor_t *r, const chunk_t *v, size_t n)
{
    pthread_mutex_lock(&r->mu);
    int due = r->final_ready && !r->final_taken && (!n || v[0].index >= r->final_index);
    if (due) r->final_taken = 1;
    pthread_mutex_unlock(&r->mu);
    return due;
}

/* Store the last chunk from its links; its archive (index final_index) is skipped from now on. */
static void store_final(hl_rotor_t *r)
{
    int damaged = r->damaged;
    r->next = r->final_index + 1;
    store(r, r->final_path);
    r->final_ok = !r->failed && !r->stopped && r->damaged == damaged;
}

unsigned hl_rotor_poll(hl_rotor_t *r)
{
    static chunk_t v[MAX_SCAN];
    char path[4600];
    size_t n = r->failed || r->stopped ? 0 : scan(r, v, MAX_SCAN);
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/archives/%s", r->dir, v[i].name);
        bytes += hl_rotor_du(path);
    }
    if (bytes > r->peak_waiting_bytes) r->peak_waiting_bytes = bytes;
    watch_start(r);
    hl_ingest_chunks_backlog(r->ing, (unsigned)n, bytes);
    if (!r->failed && !r->stopped && final_due(r, v, n)) {
        store_final(r);
        return 0;
    }
    if (!n) return 0;
    snprintf(path, sizeof path, "%s/archives/%s", r->dir, v[0].name);
    r->next = v[0].index + 1;
    store(r, path);
    return r->failed || r->stopped ? 0 : (unsigned)(n - 1);
}

/* Does dir hold a trace (a CTF metadata file below it)? */
static int has_trace(const char *dir)
{
    return hl_tree_has_trace(dir);
}

/* Chunk directories of dir (names NAME-INDEX, not hidden, not archives), oldest first. */
static size_t scan_open(const char *dir, chunk_t *v, size_t max)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        long i = hl_trace_chunk_index(e->d_name);
        if (e->d_name[0] == '.' || i < 0 || !strcmp(e->d_name, "archives") ||
            strlen(e->d_name) >= sizeof v->name)
            continue;
        v[n].index = i;
        snprintf(v[n].name, sizeof v[n].name, "%s", e->d_name);
        n++;
    }
    closedir(d);
    qsort(v, n, sizeof *v, chunk_cmp);
    return n;
}

/* The last chunk was stored from its links: they go (--keep-trace keeps its archive, the same
 * files), and so does its archive unless --keep-trace. */
static void final_done(hl_rotor_t *r)
{
    hl_tree_remove(r->final_path);
    if (!r->keep) hl_trace_remove_chunk(r->dir, r->final_index);
}

int hl_rotor_final(hl_rotor_t *r)
{
    chunk_t v[2];
    char path[4600];
    if (scan_open(r->dir, v, 2) != 1) return -1; /* none (never rotated), or a rotation under way */
    static const char *const moving[] = {".tmp_old_chunk", ".tmp_new_chunk"};
    for (size_t i = 0; i < sizeof moving / sizeof *moving; i++) {
        snprintf(path, sizeof path, "%s/%s", r->dir, moving[i]);
        if (access(path, F_OK) == 0) return -1;
    }
    snprintf(path, sizeof path, "%s/%s", r->dir, v[0].name);
    if (!has_trace(path)) return -1;
    char dst[sizeof r->final_path];
    snprintf(dst, sizeof dst, "%s/" HL_TRACE_FINAL "%ld", r->dir, v[0].index);
    hl_tree_remove(dst);
    if (hl_tree_link(path, dst) != 0) {
        hl_tree_remove(dst);
        return -1;
    }
    pthread_mutex_lock(&r->mu);
    snprintf(r->final_path, sizeof r->final_path, "%s", dst);
    r->final_index = v[0].index;
    r->final_ready = 1;
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->mu);
    return 0;
}

/* How often the store thread looks for closed chunks when none waits (the session daemon
 * archives one at most every second: its size check). */
#define HL_ROTOR_LOOK_MS 100

/* The program ended (hl_rotor_signals): signals stop the ingest from now on, and the test
 * hook runs, once, on the thread that owns r->ing. Called and returns with r->mu held. */
static void program_ended_locked(hl_rotor_t *r)
{
    if (!r->want_signals || (r->signals_on && (r->final_done || !r->before_final))) return;
    pthread_mutex_unlock(&r->mu);
    if (!r->signals_on) hl_ingest_chunks_signals(r->ing, 1);
    r->signals_on = 1;
    if (r->before_final && !r->final_done) {
        r->final_done = 1;
        r->before_final(r->ing);
    }
    pthread_mutex_lock(&r->mu);
}

/* The store thread: the oldest closed chunk, again at once while more wait, else a look
 * every HL_ROTOR_LOOK_MS; once finishing, until none waits. */
static void *store_main(void *arg)
{
    hl_rotor_t *r = arg;
    pthread_mutex_lock(&r->mu);
    for (;;) {
        program_ended_locked(r);
        int finishing = r->finishing;
        pthread_mutex_unlock(&r->mu);
        unsigned before = hl_rotor_stored(r);
        unsigned waiting = hl_rotor_poll(r);
        int stored = hl_rotor_stored(r) != before;
        pthread_mutex_lock(&r->mu);
        if (waiting || (stored && !r->failed && !r->stopped)) continue;
        if (finishing || r->failed || r->stopped) break;
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += HL_ROTOR_LOOK_MS * 1000000L;
        if (t.tv_nsec >= 1000000000L) t.tv_sec++, t.tv_nsec -= 1000000000L;
        double idle = now_s();
        if (!r->finishing) pthread_cond_timedwait(&r->wake, &r->mu, &t);
        *(r->want_signals ? &r->idle_end_s : &r->idle_run_s) += now_s() - idle;
    }
    r->store_thread_cpu = hl_thread_cpu();
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

int hl_rotor_start(hl_rotor_t *r)
{
    watch_start(r);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* signals stay record's main thread's */
    r->store_ok = pthread_create(&r->store_thread, NULL, store_main, r) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return r->store_ok ? 0 : -1;
}

unsigned hl_rotor_stored(hl_rotor_t *r)
{
    pthread_mutex_lock(&r->mu);
    unsigned n = r->stored;
    pthread_mutex_unlock(&r->mu);
    return n;
}

void hl_rotor_signals(hl_rotor_t *r)
{
    pthread_mutex_lock(&r->mu);
    r->want_signals = 1;
    if (r->store_ok)
        pthread_cond_signal(&r->wake);
    else
        program_ended_locked(r);
    pthread_mutex_unlock(&r->mu);
}

void hl_rotor_join(hl_rotor_t *r)
{
    if (!r->store_ok) return;
    pthread_mutex_lock(&r->mu);
    r->finishing = 1;
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->store_thread, NULL);
    r->store_ok = 0;
    pthread_mutex_lock(&r->mu);
    program_ended_locked(r); /* when the thread ended before it saw the request */
    pthread_mutex_unlock(&r->mu);
}

void hl_rotor_finish(hl_rotor_t *r)
{
    hl_rotor_join(r);
    hl_rotor_resume(r, 1);
    hl_rotor_watch_end(r);
    while (hl_rotor_poll(r) > 0)
        ;
    if (r->failed || r->stopped) return;
    char path[4600];
    struct stat st;
    if (r->final_ok) final_done(r);
    /* A session that never rotated left its trace at dir/ust; one whose daemon died mid-run
     * left the chunk it was filling at dir/BEGIN-INDEX (never archived). */
    snprintf(path, sizeof path, "%s/ust", r->dir);
    if (stat(path, &st) == 0) store(r, path);
    if (r->failed || r->stopped) return;
    /* One whose daemon died during its first rotation left the first chunk in .tmp_old_chunk
     * and the next in .tmp_new_chunk (LTTng's names while it moves them), oldest first. */
    static const char *const moving[] = {".tmp_old_chunk", ".tmp_new_chunk"};
    for (size_t i = 0; i < sizeof moving / sizeof *moving && !r->failed && !r->stopped; i++) {
        snprintf(path, sizeof path, "%s/%s", r->dir, moving[i]);
        if (has_trace(path)) store(r, path);
    }
    if (r->failed || r->stopped) return;
    static chunk_t v[MAX_SCAN];
    size_t n = scan_open(r->dir, v, MAX_SCAN);
    for (size_t i = 0; i < n && !r->failed && !r->stopped; i++) {
        snprintf(path, sizeof path, "%s/%s", r->dir, v[i].name);
        if (r->final_ok && v[i].index <= r->final_index) { /* stored from its links */
            if (!r->keep) hl_tree_remove(path);
            continue;
        }
        store(r, path);
    }
    snprintf(path, sizeof path, "%s/archives", r->dir);
    if (!r->keep && !r->failed && !r->damaged && !r->stopped) rmdir(path);
}
