/* tracer/collectd_prefix.c — `collectd --relay-dir DIR`: a finished session's database made
 * complete from the relay daemon's own on-disk copy of the trace (see docs/collect.md,
 * "Lossless from the first event").
 *
 * babeltrace2's live reader starts at the live position of each stream, so the events (and
 * the statedump with the module maps) flushed before collectd attached are not in the live
 * database. lttng-relayd writes every session it receives to OUTPUT/HOST/SESSION-DATE-TIME/
 * (its -o directory). Once the session has ended (destroyed on the traced host: the relay
 * has written everything), that copy is ingested offline — `heapledger collect` in a child
 * process, so the decoder's watchdog, salvage and signal handling apply and nothing of it
 * runs in collectd's threads — and the result replaces the live database (rename), unless it
 * holds fewer events than the live view (then the live database stays and the log says why).
 */
#include "collectd_prefix.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* "-YYYYMMDD-HHMMSS": the suffix lttng-relayd adds to a session's directory name. */
static int is_date_suffix(const char *p)
{
    static const char pat[] = "-dddddddd-dddddd";
    for (size_t i = 0; i < sizeof pat - 1; i++) {
        if (pat[i] == 'd' ? (p[i] < '0' || p[i] > '9') : p[i] != pat[i]) return 0;
    }
    return p[sizeof pat - 1] == 0;
}

int hl_prefix_find(const char *relay_dir, const char *host, const char *session, char *out,
                   size_t len)
{
    if (!host[0] || !session[0] || strchr(host, '/') || strchr(session, '/') ||
        !strcmp(host, "..") || !strcmp(host, "."))
        return -1;
    char hdir[4096];
    snprintf(hdir, sizeof hdir, "%s/%s", relay_dir, host);
    DIR *d = opendir(hdir);
    if (!d) return -1;
    size_t n = strlen(session);
    char best[256] = "";
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, session, n) || !is_date_suffix(e->d_name + n)) continue;
        if (strcmp(e->d_name, best) > 0) snprintf(best, sizeof best, "%s", e->d_name);
    }
    closedir(d);
    if (!best[0]) return -1;
    snprintf(out, len, "%s/%s", hdir, best);
    return 0;
}

static long long db_events(const char *db)
{
    sqlite3 *h = NULL;
    long long n = -1;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(h, "SELECT events FROM run", -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            n = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return n;
}

/* The host as the relay names it (collect would put this machine's), the session name, and
 * where the events came from. */
static int db_mark(const char *db, const char *host, const char *session, const char *copy,
                   long long live_events, const char *lost)
{
    sqlite3 *h = NULL;
    int ok = sqlite3_open(db, &h) == SQLITE_OK;
    sqlite3_stmt *st = NULL;
    if (ok)
        ok = sqlite3_prepare_v2(h, "UPDATE run SET host = ?", -1, &st, NULL) == SQLITE_OK &&
             sqlite3_bind_text(st, 1, host, -1, SQLITE_TRANSIENT) == SQLITE_OK &&
             sqlite3_step(st) == SQLITE_DONE;
    sqlite3_finalize(st);
    st = NULL;
    char live[32];
    snprintf(live, sizeof live, "%lld", live_events);
    const char *kv[][2] = {{"completed_from", copy},
                           {"live_events", live},
                           {"session", session},
                           {"ingest_status", "partial"},
                           {"ingest_warning", lost}};
    for (int i = 0; ok && i < (lost ? 5 : 3); i++) {
        ok = sqlite3_prepare_v2(h, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", -1, &st,
                                NULL) == SQLITE_OK &&
             sqlite3_bind_text(st, 1, kv[i][0], -1, SQLITE_STATIC) == SQLITE_OK &&
             sqlite3_bind_text(st, 2, kv[i][1], -1, SQLITE_STATIC) == SQLITE_OK &&
             sqlite3_step(st) == SQLITE_DONE;
        sqlite3_finalize(st);
        st = NULL;
    }
    sqlite3_close(h);
    return ok ? 0 : -1;
}

int hl_prefix_resumable(const char *db)
{
    sqlite3 *h = NULL;
    int r = 0;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(h, "SELECT value FROM meta WHERE key = 'ingest_status'", -1, &st,
                               NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW) {
            const char *v = (const char *)sqlite3_column_text(st, 0);
            r = v && !strcmp(v, "interrupted");
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return r;
}

int hl_prefix_mark_interrupted(const char *db)
{
    sqlite3 *h = NULL;
    int ok = sqlite3_open(db, &h) == SQLITE_OK &&
             sqlite3_exec(h,
                          "INSERT OR REPLACE INTO meta(key, value) VALUES ('ingest_status', "
                          "'interrupted')",
                          NULL, NULL, NULL) == SQLITE_OK;
    sqlite3_close(h);
    return ok ? 0 : -1;
}

static int complete(const char *relay_dir, const char *host, const char *session, const char *db,
                    const char *lost, const volatile int *stop, char *msg, size_t len)
{
    char copy[4096];
    if (hl_prefix_find(relay_dir, host, session, copy, sizeof copy)) {
        snprintf(msg, len,
                 "no on-disk copy of session %s under %s/%s (is --relay-dir the relay "
                 "daemon's -o directory?): %s keeps the live view only",
                 session, relay_dir, host, db);
        return -1;
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.complete", db);
    char *argv[] = {"heapledger", "collect", copy, "-o", tmp, "--force", "--quiet", NULL};
    pid_t pid;
    if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ) != 0) {
        snprintf(msg, len, "cannot run heapledger collect on %s: %s", copy, strerror(errno));
        return -1;
    }
    int status = 0;
    for (;;) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) break;
        if (*stop) {
            kill(pid, SIGTERM);
            waitpid(pid, &status, 0);
            unlink(tmp);
            snprintf(msg, len, "completing %s from %s: stopped; it keeps the live view", db, copy);
            return -1;
        }
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code != 0 && code != 3) {
        unlink(tmp);
        snprintf(msg, len, "heapledger collect %s failed (exit %d): %s keeps the live view", copy,
                 code, db);
        return -1;
    }
    long long live = db_events(db), full = db_events(tmp);
    if (full < live) {
        unlink(tmp);
        snprintf(msg, len,
                 "the on-disk copy %s holds %lld events, the live view %lld: %s keeps the live "
                 "view",
                 copy, full, live, db);
        return -1;
    }
    if (db_mark(tmp, host, session, copy, live, lost) || rename(tmp, db)) {
        unlink(tmp);
        snprintf(msg, len, "cannot replace %s by its completed copy: %s", db, strerror(errno));
        return -1;
    }
    snprintf(msg, len,
             "%s: completed from the relay's copy %s: %lld events (the live view had %lld)%s", db,
             copy, full, live,
             lost        ? " (partial: the relay daemon went away)"
             : code == 3 ? " (the copy was damaged: partial)"
                         : "");
    return 0;
}

/* A live database kept as it was still says why it was not completed, what the live view
 * received and, when the relay went away, what is missing. */
static void mark_kept(const char *db, const char *why, const char *lost)
{
    char live[32];
    snprintf(live, sizeof live, "%lld", db_events(db));
    const char *kv[][2] = {
        {"completion_failed", why}, {"live_events", live}, {"ingest_warning", lost}};
    sqlite3 *h = NULL;
    if (sqlite3_open(db, &h) == SQLITE_OK) {
        for (int i = 0; i < (lost ? 3 : 2); i++) {
            sqlite3_stmt *st = NULL;
            if (sqlite3_prepare_v2(h, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", -1,
                                   &st, NULL) == SQLITE_OK &&
                sqlite3_bind_text(st, 1, kv[i][0], -1, SQLITE_STATIC) == SQLITE_OK &&
                sqlite3_bind_text(st, 2, kv[i][1], -1, SQLITE_STATIC) == SQLITE_OK)
                sqlite3_step(st);
            sqlite3_finalize(st);
        }
    }
    sqlite3_close(h);
}

int hl_prefix_complete(const char *relay_dir, const char *host, const char *session, const char *db,
                       const char *lost, const volatile int *stop, char *msg, size_t len)
{
    int rc = complete(relay_dir, host, session, db, lost, stop, msg, len);
    if (rc != 0) mark_kept(db, msg, lost);
    return rc;
}
