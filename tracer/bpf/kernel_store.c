/* tracer/bpf/kernel_store.c — spooled kernel events → kernel_event rows (SQLite).
 *
 * One transaction, one prepared statement per table. The extra argument of an event goes
 * to kernel_event_arg (schemas/kernel_views.sql, embedded at build time) only when it is not
 * zero. The counters go to meta: kernel_events, kernel_dropped.
 */
#include "events.h"
#include "kernel_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

static const char kernel_views_sql[] =
#include "kernel_views_sql.h"
    ;

const char *hl_kevent_kind_name(unsigned kind)
{
    static const char *const names[HL_KEV_COUNT] = {
        [HL_KEV_MMAP] = "mmap", [HL_KEV_MUNMAP] = "munmap",   [HL_KEV_MREMAP] = "mremap",
        [HL_KEV_BRK] = "brk",   [HL_KEV_MADVISE] = "madvise", [HL_KEV_PAGE_FAULT] = "page_fault",
        [HL_KEV_RSS] = "rss",
    };
    return kind < HL_KEV_COUNT ? names[kind] : "unknown";
}

static int fail(sqlite3 *db, const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s: %s", what, db ? sqlite3_errmsg(db) : "out of memory");
    return -1;
}

static int has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st;
    int found = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", -1, &st,
                           NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return found;
}

static int put_meta(sqlite3 *db, const char *key, uint64_t v)
{
    char sql[160];
    snprintf(sql, sizeof sql, "INSERT OR REPLACE INTO meta(key, value) VALUES('%s', '%" PRIu64 "')",
             key, v);
    return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

static long insert_all(sqlite3 *db, FILE *spool, char *err, size_t errlen)
{
    sqlite3_stmt *ev = NULL, *arg = NULL;
    long rows = 0;
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO kernel_event(ts, pid, tid, kind, addr, len, ret) "
                           "VALUES(?, ?, ?, ?, ?, ?, ?)",
                           -1, &ev, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO kernel_event_arg(event, arg) VALUES(?, ?)", -1, &arg,
                           NULL) != SQLITE_OK) {
        rows = fail(db, "preparing kernel_event inserts", err, errlen);
        goto out;
    }
    struct hl_kevent e;
    rewind(spool);
    while (fread(&e, sizeof e, 1, spool) == 1) {
        sqlite3_bind_int64(ev, 1, (sqlite3_int64)e.ts);
        sqlite3_bind_int64(ev, 2, e.pid);
        sqlite3_bind_int64(ev, 3, e.tid);
        sqlite3_bind_text(ev, 4, hl_kevent_kind_name(e.kind), -1, SQLITE_STATIC);
        if (e.kind == HL_KEV_RSS)
            sqlite3_bind_null(ev, 5);
        else
            sqlite3_bind_int64(ev, 5, (sqlite3_int64)e.addr);
        sqlite3_bind_int64(ev, 6, (sqlite3_int64)e.len);
        sqlite3_bind_int64(ev, 7, e.ret);
        if (sqlite3_step(ev) != SQLITE_DONE) {
            rows = fail(db, "inserting into kernel_event", err, errlen);
            goto out;
        }
        sqlite3_reset(ev);
        if (e.arg) {
            sqlite3_bind_int64(arg, 1, sqlite3_last_insert_rowid(db));
            sqlite3_bind_int64(arg, 2, e.arg);
            if (sqlite3_step(arg) != SQLITE_DONE) {
                rows = fail(db, "inserting into kernel_event_arg", err, errlen);
                goto out;
            }
            sqlite3_reset(arg);
        }
        rows++;
    }
    if (ferror(spool)) {
        snprintf(err, errlen, "reading the kernel-event spool: %s", strerror(errno));
        rows = -1;
    }
out:
    sqlite3_finalize(ev);
    sqlite3_finalize(arg);
    return rows;
}

long hl_kernel_store(hl_kernel_t *k, const char *db_path, char *err, size_t errlen)
{
    if (!k) {
        snprintf(err, errlen, "no kernel-event session");
        return -1;
    }
    if (hl_kernel_stop(k) < 0) {
        snprintf(err, errlen, "the kernel-event spool could not be written (disk full?)");
        return -1;
    }
    sqlite3 *db = NULL;
    long rows = -1;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        fail(db, db_path, err, errlen);
        goto out;
    }
    sqlite3_busy_timeout(db, 10000);
    if (!has_table(db, "kernel_event")) {
        snprintf(err, errlen, "%s: not a heapledger run database (no kernel_event table)", db_path);
        goto out;
    }
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
        fail(db, "starting the kernel_event transaction", err, errlen);
        goto out;
    }
    if (sqlite3_exec(db, kernel_views_sql, NULL, NULL, NULL) != SQLITE_OK) {
        fail(db, "creating the kernel views", err, errlen);
    } else if ((rows = insert_all(db, hl_kernel_spool(k), err, errlen)) >= 0) {
        hl_kernel_stats_t s;
        hl_kernel_stats(k, &s);
        if (put_meta(db, "kernel_events", s.events) != SQLITE_OK ||
            put_meta(db, "kernel_dropped", s.dropped) != SQLITE_OK ||
            sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
            rows = fail(db, "committing kernel events", err, errlen);
    }
    if (rows < 0) sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
out:
    sqlite3_close(db);
    return rows;
}
