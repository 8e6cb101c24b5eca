/* tracer/record_stats.c — `heapledger record --stats` (record_stats.h). */
#include "record_stats.h"
#include "session.h"

#include <ctype.h>
#include <dirent.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void hl_rstats_mark(hl_rstats_t *s, int which)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    s->mark[which] = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ppid, command name and CPU seconds (user + system, reaped children included) of pid from
 * /proc/PID/stat. Returns 0, or -1 when it is gone. */
static int proc_cpu(pid_t pid, pid_t *ppid, char *comm, size_t len, double *cpu)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *open = strchr(buf, '('), *close = strrchr(buf, ')');
    if (!open || !close || close < open) return -1;
    snprintf(comm, len, "%.*s", (int)(close - open - 1), open + 1);
    /* After ") ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime
     * stime cutime cstime (fields 3 to 17 of proc(5)). */
    long v[15];
    char *p = close + 2;
    for (int i = 0; i < 15; i++) {
        while (*p == ' ')
            p++;
        v[i] = i == 0 ? 0 : strtol(p, &p, 10);
        if (i == 0) p++; /* the state letter */
    }
    *ppid = (pid_t)v[1];
    *cpu = (double)(v[11] + v[12] + v[13] + v[14]) / (double)sysconf(_SC_CLK_TCK);
    return 0;
}

void hl_rstats_daemons(hl_rstats_t *s, pid_t sessiond)
{
    if (!s->on || sessiond <= 0) return;
    /* The daemon first, then its descendants, found by parent pid (a few rounds, so that
     * children of children come too). */
    char comm[32];
    pid_t pp;
    double cpu;
    s->ndaemons = 0;
    if (proc_cpu(sessiond, &pp, comm, sizeof comm, &cpu)) return;
    s->daemon[0].pid = sessiond;
    snprintf(s->daemon[0].comm, sizeof s->daemon[0].comm, "%s", comm);
    s->daemon[0].cpu = cpu;
    s->ndaemons = 1;
    for (int round = 0, found = 1; found && round < 4; round++) {
        found = 0;
        DIR *d = opendir("/proc");
        struct dirent *e;
        while (d && (e = readdir(d)) && s->ndaemons < HL_RS_DAEMONS) {
            if (!isdigit((unsigned char)e->d_name[0])) continue;
            pid_t p = (pid_t)atoi(e->d_name);
            if (proc_cpu(p, &pp, comm, sizeof comm, &cpu)) continue;
            int parent = 0, known = 0;
            for (unsigned i = 0; i < s->ndaemons; i++) {
                if (s->daemon[i].pid == pp) parent = 1;
                if (s->daemon[i].pid == p) known = 1;
            }
            if (!parent || known) continue;
            s->daemon[s->ndaemons].pid = p;
            snprintf(s->daemon[s->ndaemons].comm, sizeof s->daemon[0].comm, "%s", comm);
            s->daemon[s->ndaemons].cpu = cpu;
            s->ndaemons++;
            found = 1;
        }
        if (d) closedir(d);
    }
}

static double tv(struct timeval t)
{
    return (double)t.tv_sec + (double)t.tv_usec * 1e-6;
}

/* The run's first and last event times (CLOCK_MONOTONIC seconds), 0 when unknown. */
static void run_times(const char *db, double *first, double *last)
{
    *first = *last = 0;
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, "SELECT start_ts, end_ts FROM run", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        *first = (double)sqlite3_column_int64(st, 0) * 1e-9;
        *last = (double)sqlite3_column_int64(st, 1) * 1e-9;
    }
    sqlite3_finalize(st);
    sqlite3_close(h);
}

void hl_rstats_print(FILE *f, const hl_rstats_t *s, const char *db, const hl_ingest_result_t *r)
{
    if (!s->on) return;
    static const char *const name[HL_RS_N] = {
        [HL_RS_START] = "record started",
        [HL_RS_SESSIOND] = "session daemon ready",
        [HL_RS_SESSION] = "session started",
        [HL_RS_FORK] = "program forked",
        [HL_RS_FIRST_CHUNK] = "first chunk to store",
        [HL_RS_END] = "program ended",
        [HL_RS_STOPPED] = "session stopped",
        [HL_RS_DESTROYED] = "session destroyed",
        [HL_RS_STORED] = "last chunk stored",
        [HL_RS_READY] = "database ready",
        [HL_RS_SUMMARY] = "summary printed",
    };
    double t0 = s->mark[HL_RS_START], first, last;
    run_times(db, &first, &last);
    /* The moments and the run's first and last events, in the order they happened. */
    struct {
        const char *name;
        double t;
    } m[HL_RS_N + 2];
    unsigned n = 0;
    for (int i = 0; i < HL_RS_N; i++)
        if (s->mark[i]) m[n].name = name[i], m[n++].t = s->mark[i];
    if (first > 0) m[n].name = "first event", m[n++].t = first;
    if (last > 0) m[n].name = "last event", m[n++].t = last;
    for (unsigned i = 1; i < n; i++) /* insertion sort, stable: a few entries */
        for (unsigned j = i; j > 0 && m[j].t < m[j - 1].t; j--) {
            __typeof__(m[0]) x = m[j];
            m[j] = m[j - 1];
            m[j - 1] = x;
        }
    fprintf(f, "heapledger record: stats: time line (s from record's start)\n");
    for (unsigned i = 0; i < n; i++)
        fprintf(f, "  %-22s %8.3f\n", m[i].name, m[i].t - t0);
    struct rusage self;
    getrusage(RUSAGE_SELF, &self);
    fprintf(f, "heapledger record: stats: CPU seconds (user + system)\n");
    if (s->have_program)
        fprintf(f, "  %-22s %8.3f  (user %.3f, system %.3f)\n", "program",
                tv(s->program.ru_utime) + tv(s->program.ru_stime), tv(s->program.ru_utime),
                tv(s->program.ru_stime));
    for (unsigned i = 0; i < s->ndaemons; i++)
        fprintf(f, "  %-22s %8.3f  (pid %d)\n", s->daemon[i].comm, s->daemon[i].cpu,
                (int)s->daemon[i].pid);
    fprintf(f, "  %-22s %8.3f\n", "decoder processes", r->decode_cpu);
    fprintf(f, "  %-22s %8.3f\n", "store (ledger, SQLite)", r->store_cpu);
    fprintf(f, "  %-22s %8.3f  (final commit and indexes)\n", "finish", r->index_cpu);
    fprintf(f,
            "  %-22s %8.3f  (user %.3f, system %.3f: all its threads, the store, finish and "
            "summary included)\n",
            "record", tv(self.ru_utime) + tv(self.ru_stime), tv(self.ru_utime), tv(self.ru_stime));
    /* record's threads, so that its total is accounted for: the main thread (session, program,
     * the chunks left at the end, finish, summary), the store thread (the ledger and the rows
     * while a chunk is decoded, and between chunks the commits, new stacks' symbols, the
     * chunks' deletion), the SQLite thread, the pipe readers (the decoders' records copied
     * from their pipes), the WAL's checkpoints (ingest_ckpt.h) and the watch thread (rotation
     * schedule, throttle). */
    struct rusage main_ru;
    getrusage(RUSAGE_THREAD, &main_ru);
    double main_cpu = tv(main_ru.ru_utime) + tv(main_ru.ru_stime);
    double in_passes = r->store_cpu - r->store_sql_cpu;
    fprintf(f, "heapledger record: stats: record's threads (CPU seconds)\n");
    fprintf(f, "  %-22s %8.3f\n", "main thread", main_cpu);
    if (s->have_store)
        fprintf(f,
                "  %-22s %8.3f  (%.3f while decoding; between chunks %.3f in commits and new "
                "stacks, %.3f other)\n",
                "store thread", s->store_thread_cpu, in_passes, r->commit_cpu,
                s->store_thread_cpu > in_passes + r->commit_cpu
                    ? s->store_thread_cpu - in_passes - r->commit_cpu
                    : 0.0);
    fprintf(f, "  %-22s %8.3f\n", "SQLite thread", r->store_sql_cpu);
    fprintf(f, "  %-22s %8.3f\n", "pipe readers", r->pump_cpu);
    if (s->have_store) fprintf(f, "  %-22s %8.3f\n", "checkpoint thread", r->ckpt_cpu);
    if (s->have_store) fprintf(f, "  %-22s %8.3f\n", "watch thread", s->watch_cpu);
    if (s->have_store)
        fprintf(f,
                "heapledger record: stats: store thread idle %.3f s while the program ran, %.3f "
                "s after it ended (no closed chunk waiting); %u rotations asked by record (the "
                "first at %.0f MiB); the last chunk read %s\n",
                s->store_idle_run, s->store_idle_end, s->rotations, s->first_chunk_mib,
                s->final_early ? "once the session stopped" : "once the session was destroyed");
    if (s->mark[HL_RS_STOPPED] > 0)
        fprintf(f,
                "heapledger record: stats: the session stopped after %u looks at the consumer "
                "still writing, %d ms apart\n",
                s->stop_polls, HL_STOP_POLL_MS);
}
