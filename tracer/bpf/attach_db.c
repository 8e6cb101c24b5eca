/* tracer/bpf/attach_db.c — write an attach session as a run database (schemas/heapledger.sql).
 *
 * Rows: one run, one process, its threads, the path table, every block and orphan free,
 * stacks with frames symbolised from the process's mappings (module, function, offset), the
 * executable modules, and meta (source, writer, ingest_status). Then the indexes.
 */
#include "attach.h"
#include "db.h"
#include "elfsym.h"
#include "hl_schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The run-database module (tracer/db.c) may be absent from a partial build. */
#pragma weak hl_db_create
#pragma weak hl_db_create_indexes
#pragma weak hl_db_exec

typedef struct writer_s {
    sqlite3 *db;
    char *err;
    size_t errlen;
} writer_t;

static int prepare(writer_t *w, sqlite3_stmt **st, const char *sql)
{
    if (sqlite3_prepare_v2(w->db, sql, -1, st, NULL) == SQLITE_OK) return 0;
    snprintf(w->err, w->errlen, "preparing '%.40s…': %s", sql, sqlite3_errmsg(w->db));
    return -1;
}

static int step(writer_t *w, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc == SQLITE_DONE) return 0;
    snprintf(w->err, w->errlen, "writing %s: %s", what, sqlite3_errmsg(w->db));
    return -1;
}

static void bind_u64_or_null(sqlite3_stmt *st, int i, uint64_t v, int present)
{
    if (present)
        sqlite3_bind_int64(st, i, (sqlite3_int64)v);
    else
        sqlite3_bind_null(st, i);
}

/* Database stack ids are the session's stack indexes + 1. */
static void bind_stack(sqlite3_stmt *st, int i, int32_t s)
{
    bind_u64_or_null(st, i, (uint64_t)s + 1, s >= 0);
}

static int write_run(writer_t *w, const hl_attach_t *a)
{
    sqlite3_stmt *st;
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    if (prepare(w, &st,
                "INSERT INTO run(id, command, options, host, version, tsc_hz, start_ts, end_ts, "
                "exit_status, events, discarded_events, arena_size) "
                "VALUES(1, ?, NULL, ?, ?, NULL, ?, ?, NULL, ?, ?, 0)") < 0)
        return -1;
    sqlite3_bind_text(st, 1, a->cmdline[0] ? a->cmdline : a->comm, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, host, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, HL_VERSION, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)a->start_ts);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)a->end_ts);
    sqlite3_bind_int64(st, 6, (sqlite3_int64)a->events);
    sqlite3_bind_int64(st, 7, (sqlite3_int64)a->dropped);
    int rc = step(w, st, "run");
    sqlite3_finalize(st);
    if (rc < 0 || prepare(w, &st,
                          "INSERT INTO process(pid, ppid, procname, options, tsc_hz, start_ts, "
                          "end_ts) VALUES(?, ?, ?, NULL, NULL, ?, ?)") < 0)
        return -1;
    sqlite3_bind_int64(st, 1, a->pid);
    sqlite3_bind_int64(st, 2, a->ppid);
    sqlite3_bind_text(st, 3, a->comm, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, (sqlite3_int64)a->start_ts);
    sqlite3_bind_int64(st, 5, (sqlite3_int64)a->end_ts);
    rc = step(w, st, "process");
    sqlite3_finalize(st);
    if (rc < 0 ||
        prepare(w, &st, "INSERT OR IGNORE INTO thread(pid, tid, name) VALUES(?, ?, ?)") < 0)
        return -1;
    for (size_t i = 0; i < a->ntids && rc == 0; i++) {
        char path[96], name[64] = "";
        snprintf(path, sizeof path, "/proc/%d/task/%u/comm", (int)a->pid, a->tids[i]);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fgets(name, sizeof name, f)) name[strcspn(name, "\n")] = '\0';
            fclose(f);
        }
        sqlite3_bind_int64(st, 1, a->pid);
        sqlite3_bind_int64(st, 2, a->tids[i]);
        if (name[0]) sqlite3_bind_text(st, 3, name, -1, SQLITE_TRANSIENT);
        rc = step(w, st, "thread");
    }
    sqlite3_finalize(st);
    return rc;
}

static int write_paths(writer_t *w)
{
    static const struct {
        const char *name, *op;
    } paths[] = {
#define HL_PATH(e, name, op) {name, #op},
#include "paths.def"
#undef HL_PATH
    };
    sqlite3_stmt *st;
    if (prepare(w, &st, "INSERT OR IGNORE INTO path(id, name, op) VALUES(?, ?, lower(?))") < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < sizeof paths / sizeof paths[0] && rc == 0; i++) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)i + 1);
        sqlite3_bind_text(st, 2, paths[i].name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, paths[i].op, -1, SQLITE_STATIC);
        rc = step(w, st, "path");
    }
    sqlite3_finalize(st);
    return rc;
}

static int write_blocks(writer_t *w, const hl_attach_t *a)
{
    sqlite3_stmt *st;
    if (prepare(w, &st,
                "INSERT INTO block(id, pid, ptr, size, usable, tier, class, alloc_seq, alloc_ts, "
                "alloc_tid, alloc_path, alloc_cycles, alloc_stack, free_seq, free_ts, free_tid, "
                "free_path, free_cycles, free_stack, prev_block, flags) "
                "VALUES(?, ?, ?, ?, ?, 0, -1, ?, ?, ?, 0, NULL, ?, ?, ?, ?, ?, NULL, ?, ?, ?)") < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < a->nblocks && rc == 0; i++) {
        const hl_ablock_t *b = &a->blocks[i];
        int freed = b->ended && b->ptr, inferred = (b->flags & 8) != 0;
        sqlite3_bind_int64(st, 1, (sqlite3_int64)i + 1);
        sqlite3_bind_int64(st, 2, a->pid);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)b->ptr);
        sqlite3_bind_int64(st, 4, (sqlite3_int64)b->size);
        sqlite3_bind_int64(st, 5, (sqlite3_int64)b->size);
        sqlite3_bind_int64(st, 6, (sqlite3_int64)b->alloc_seq);
        sqlite3_bind_int64(st, 7, (sqlite3_int64)b->alloc_ts);
        sqlite3_bind_int64(st, 8, b->alloc_tid);
        bind_stack(st, 9, b->alloc_stack);
        bind_u64_or_null(st, 10, b->free_seq, freed);
        bind_u64_or_null(st, 11, b->free_ts, freed);
        bind_u64_or_null(st, 12, b->free_tid, freed && !inferred);
        bind_u64_or_null(st, 13, 0, freed && !inferred);
        bind_stack(st, 14, freed ? b->free_stack : -1);
        bind_u64_or_null(st, 15, (uint64_t)b->prev + 1, b->prev >= 0);
        sqlite3_bind_int64(st, 16, b->flags);
        rc = step(w, st, "block");
    }
    sqlite3_finalize(st);
    if (rc < 0 || prepare(w, &st,
                          "INSERT INTO orphan_free(seq, ts, pid, tid, ptr, path, cycles, stack) "
                          "VALUES(?, ?, ?, ?, ?, 0, NULL, ?)") < 0)
        return -1;
    for (size_t i = 0; i < a->norphans && rc == 0; i++) {
        const hl_aorphan_t *o = &a->orphans[i];
        sqlite3_bind_int64(st, 1, (sqlite3_int64)o->seq);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)o->ts);
        sqlite3_bind_int64(st, 3, a->pid);
        sqlite3_bind_int64(st, 4, o->tid);
        sqlite3_bind_int64(st, 5, (sqlite3_int64)o->ptr);
        bind_stack(st, 6, o->stack);
        rc = step(w, st, "orphan_free");
    }
    sqlite3_finalize(st);
    return rc;
}

/* Symbol tables of the mapped objects, opened lazily, one per distinct path. */
typedef struct symcache_s {
    const char *path;
    hl_elfsym_t *syms;
} symcache_t;

static const hl_amap_t *map_of(const hl_attach_t *a, uint64_t ip)
{
    for (size_t i = 0; i < a->nmaps; i++)
        if (ip >= a->maps[i].start && ip < a->maps[i].end) return &a->maps[i];
    return NULL;
}

static hl_elfsym_t *syms_of(symcache_t *cache, size_t *n, size_t cap, const char *path)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(cache[i].path, path)) return cache[i].syms;
    if (*n == cap) return NULL;
    cache[*n] = (symcache_t){path, hl_elfsym_open(path)};
    return cache[(*n)++].syms;
}

static int write_stacks(writer_t *w, const hl_attach_t *a)
{
    sqlite3_stmt *st, *fr;
    if (prepare(w, &st, "INSERT INTO stack(id, pid, depth) VALUES(?, ?, ?)") < 0) return -1;
    if (prepare(w, &fr,
                "INSERT INTO frame(stack_id, depth, ip, function, offset, file, line, module) "
                "VALUES(?, ?, ?, ?, ?, NULL, NULL, ?)") < 0) {
        sqlite3_finalize(st);
        return -1;
    }
    symcache_t cache[128];
    size_t ncache = 0;
    int rc = 0;
    for (size_t i = 0; i < a->nstacks && rc == 0; i++) {
        const hl_astack_t *s = &a->stacks[i];
        sqlite3_bind_int64(st, 1, (sqlite3_int64)i + 1);
        sqlite3_bind_int64(st, 2, a->pid);
        sqlite3_bind_int64(st, 3, s->depth);
        rc = step(w, st, "stack");
        for (uint32_t d = 0; d < s->depth && rc == 0; d++) {
            /* A return address points after the call: look up ip - 1, the call itself. The
             * offset is from the function, else from the module (its file offset). */
            uint64_t ip = s->ips[d], delta = 0;
            const hl_amap_t *m = map_of(a, ip - 1);
            const char *fn = NULL;
            if (m)
                fn = hl_elfsym_lookup(syms_of(cache, &ncache, 128, m->path),
                                      ip - 1 - m->start + m->off, &delta);
            sqlite3_bind_int64(fr, 1, (sqlite3_int64)i + 1);
            sqlite3_bind_int64(fr, 2, d);
            sqlite3_bind_int64(fr, 3, (sqlite3_int64)ip);
            if (fn) {
                sqlite3_bind_text(fr, 4, fn, -1, SQLITE_TRANSIENT);
                sqlite3_bind_int64(fr, 5, (sqlite3_int64)delta + 1);
            } else if (m) {
                sqlite3_bind_int64(fr, 5, (sqlite3_int64)(ip - m->start + m->off));
            }
            if (m) sqlite3_bind_text(fr, 6, m->path, -1, SQLITE_TRANSIENT);
            rc = step(w, fr, "frame");
        }
    }
    for (size_t i = 0; i < ncache; i++)
        hl_elfsym_close(cache[i].syms);
    sqlite3_finalize(st);
    sqlite3_finalize(fr);
    return rc;
}

static int write_modules(writer_t *w, const hl_attach_t *a)
{
    sqlite3_stmt *st;
    if (prepare(w, &st,
                "INSERT INTO module(pid, baddr, memsz, path, build_id, load_ts, unload_ts) "
                "VALUES(?, ?, ?, ?, NULL, NULL, NULL)") < 0)
        return -1;
    int rc = 0;
    for (size_t i = 0; i < a->nmaps && rc == 0; i++) {
        const hl_amap_t *m = &a->maps[i];
        sqlite3_bind_int64(st, 1, a->pid);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)(m->start - m->off));
        sqlite3_bind_int64(st, 3, (sqlite3_int64)(m->end - m->start + m->off));
        sqlite3_bind_text(st, 4, m->path, -1, SQLITE_STATIC);
        rc = step(w, st, "module");
    }
    sqlite3_finalize(st);
    return rc;
}

static int write_meta(writer_t *w, const hl_attach_t *a)
{
    char source[600];
    snprintf(source, sizeof source, "attach:pid %d:%s", (int)a->pid, a->library);
    const char *kv[][2] = {
        {"writer", "heapledger " HL_VERSION},
        {"source", source},
        {"ingest_status", a->dropped || a->oom ? "partial" : "complete"},
        {"ingest_warning",
         a->dropped || a->oom ? "calls were lost (ring buffer full or out of memory)" : NULL},
    };
    sqlite3_stmt *st;
    if (prepare(w, &st, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)") < 0) return -1;
    int rc = 0;
    for (size_t i = 0; i < sizeof kv / sizeof kv[0] && rc == 0; i++) {
        if (!kv[i][1]) continue;
        sqlite3_bind_text(st, 1, kv[i][0], -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, kv[i][1], -1, SQLITE_STATIC);
        rc = step(w, st, "meta");
    }
    sqlite3_finalize(st);
    return rc;
}

int hl_attach_write_db(const hl_attach_t *a, const char *path, int force, char *err, size_t errlen)
{
    if (!hl_db_create || !hl_db_create_indexes || !hl_db_exec) {
        snprintf(err, errlen, "this build of heapledger cannot write run databases");
        return -1;
    }
    sqlite3 *db = hl_db_create(path, force, err, errlen);
    if (!db) return -1;
    writer_t w = {db, err, errlen};
    int rc = hl_db_exec(db, "BEGIN", "starting the transaction", err, errlen);
    if (rc == 0) rc = write_run(&w, a);
    if (rc == 0) rc = write_paths(&w);
    if (rc == 0) rc = write_blocks(&w, a);
    if (rc == 0) rc = write_stacks(&w, a);
    if (rc == 0) rc = write_modules(&w, a);
    if (rc == 0) rc = write_meta(&w, a);
    if (rc == 0) rc = hl_db_exec(db, "COMMIT", "committing", err, errlen);
    if (rc == 0) rc = hl_db_create_indexes(db, err, errlen);
    sqlite3_close(db);
    return rc;
}
