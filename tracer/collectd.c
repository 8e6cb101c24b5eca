/* tracer/collectd.c — `heapledger collectd --url net://HOST[:PORT] [--dir DIR]`: the tracing
 * daemon (see docs/collect.md).
 *
 * It polls the relay daemon's session list; every session that appears (from any traced
 * host) gets its own follower thread streaming it into DIR/HOST-SESSION.db through
 * hl_ingest_live() (commits every --commit-ms, so committed data survives anything). When
 * the relay daemon goes away the list query fails: collectd keeps retrying with exponential
 * backoff (0.25 s doubling to 8 s) and follows the sessions again once it is back (a session
 * whose follower lost its connection is followed again into a new file). SIGTERM/SIGINT
 * stop every follower cleanly: the live blocks are written, the files are marked
 * 'interrupted', and collectd exits 0. With --relay-dir (the relay daemon's -o directory, on
 * this machine), a session that ended is ingested again from the relay's on-disk copy, which
 * holds it from its first event (collectd_prefix.c). babeltrace2's live reader of each session
 * runs in a process of its own (`collectd --live-reader`, ingest_decoder.c): when it crashes,
 * that session's live view ends as on a lost connection and collectd goes on.
 */
#include "cmd.h"
#include "collectd_prefix.h"
#include "ingest_internal.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile int stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

typedef struct follower_s {
    struct follower_s *next;
    char *url, *db;
    char *host;            /* the traced host, as the relay daemon names it */
    char *session;         /* the session name */
    const char *relay_dir; /* --relay-dir, NULL */
    const char *relay_url; /* --url: the relay daemon's session list */
    pthread_t th;
    volatile int done;
    int joined;
    int rc, retry; /* retry: ended on a lost connection: follow again if listed */
    int commit_ms;
    int resume; /* db is an 'interrupted' database of an earlier collectd: replace it */
    hl_ingest_result_t res;
} follower_t;

typedef struct daemon_s {
    follower_t *list;
    const char *dir;
    const char *relay_dir;
    const char *relay_url;
    int commit_ms;
    int quiet;
} daemon_t;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
    time_t t = time(NULL);
    struct tm tm;
    char ts[32];
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", gmtime_r(&t, &tm));
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s heapledger collectd: ", ts);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fflush(stderr);
    va_end(ap);
}

typedef struct listed_s {
    const char *url;
    int found;
} listed_t;

static void on_listed(const char *url, const char *host, const char *session, void *arg)
{
    (void)host;
    (void)session;
    listed_t *l = arg;
    if (!strcmp(url, l->url)) l->found = 1;
}

/* The relay daemon answers and still lists the session: its live view ended on the reader's
 * side (babeltrace2's live reader crashed, or refused what it received), not on a lost
 * connection nor at the session's end. */
static int still_listed(const follower_t *f)
{
    char err[256];
    listed_t l = {f->url, 0};
    return hl_source_live_sessions(f->relay_url, on_listed, &l, err, sizeof err) >= 0 && l.found;
}

static void *follow_main(void *p)
{
    follower_t *f = p;
    hl_ingest_opts_t o = HL_INGEST_OPTS_INIT;
    o.host = f->host && f->host[0] ? f->host : NULL;
    o.force = f->resume;
    f->rc = hl_ingest_live(f->url, f->db, &o, &stop_flag, f->commit_ms, &f->res);
    if (f->rc < 0)
        logf_("%s: %s", f->url, f->res.error);
    else
        logf_("%s: %s: %llu events, %llu blocks%s%s%s", f->url, f->db,
              (unsigned long long)f->res.events, (unsigned long long)f->res.blocks,
              f->rc == 1 ? " (the live view ended early: " : "", f->rc == 1 ? f->res.error : "",
              f->rc == 1 ? ")" : "");
    if (f->rc == 1 && !stop_flag && f->relay_dir && still_listed(f) &&
        hl_prefix_mark_interrupted(f->db) == 0) {
        /* The session goes on: follow it again into this database (taken over as after a
         * collectd restart), made whole from the relay's copy when the session ends. */
        logf_("%s: the live reader failed while the session goes on: following it again into %s",
              f->url, f->db);
        f->retry = 1;
        f->done = 1;
        return NULL;
    }
    if (f->rc >= 0 && f->rc <= 1 && !stop_flag && f->relay_dir) {
        /* The session ended (complete it), or the relay daemon went away (what it wrote before
         * is all there will be: the traced host's consumer daemon does not reconnect), or it
         * had no such session when the live reader attached (for HL_LIVE_ATTACH_S: the
         * database is 'partial' and empty; a copy of a session that ended meanwhile is whole). */
        char msg[1024], lost[512];
        snprintf(lost, sizeof lost,
                 "the connection to the relay daemon was lost: the events the traced host sent "
                 "after that are missing (%.300s)",
                 f->res.error);
        int no_session =
            f->rc == 1 && !strncmp(f->res.error, HL_LIVE_NO_SESSION, strlen(HL_LIVE_NO_SESSION));
        hl_prefix_complete(f->relay_dir, f->host, f->session, f->db,
                           f->rc && !no_session ? lost : NULL, &stop_flag, msg, sizeof msg);
        logf_("%s", msg);
    }
    f->retry = f->rc == 1 && !stop_flag;
    f->done = 1;
    return NULL;
}

/* DIR/HOST-SESSION.db, made of safe characters, with -N added when it exists. */
static char *db_name(const char *dir, const char *host, const char *session, int resume,
                     int *resumed)
{
    char base[512];
    snprintf(base, sizeof base, "%s-%s", host[0] ? host : "host", session[0] ? session : "session");
    for (char *c = base; *c; c++)
        if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_' && *c != '.') *c = '_';
    char *path = NULL;
    for (int n = 1; n < 10000; n++) {
        free(path);
        if (n == 1) {
            if (asprintf(&path, "%s/%s.db", dir, base) < 0) return NULL;
        } else if (asprintf(&path, "%s/%s-%d.db", dir, base, n) < 0) {
            return NULL;
        }
        struct stat sb;
        if (stat(path, &sb) != 0 && errno == ENOENT) return path;
        /* With --relay-dir a session's database is made whole at its end whatever the live
         * view missed: one left 'interrupted' by a stopped collectd is taken over. */
        if (resume && hl_prefix_resumable(path)) {
            *resumed = 1;
            return path;
        }
    }
    free(path);
    return NULL;
}

static void on_session(const char *url, const char *host, const char *session, void *arg)
{
    daemon_t *d = arg;
    for (follower_t *f = d->list; f; f = f->next)
        if (!strcmp(f->url, url) && (!f->done || !f->retry))
            return; /* followed now, or already followed to its end */
    follower_t *f = calloc(1, sizeof *f);
    if (!f) return;
    f->url = strdup(url);
    f->host = strdup(host);
    f->session = strdup(session);
    f->relay_dir = d->relay_dir;
    f->relay_url = d->relay_url;
    f->db = db_name(d->dir, host, session, d->relay_dir != NULL, &f->resume);
    f->commit_ms = d->commit_ms;
    if (!f->url || !f->db || !f->host || !f->session) {
        free(f->url);
        free(f->host);
        free(f->session);
        free(f->db);
        free(f);
        return;
    }
    /* A follower being retried is replaced by the new one. */
    for (follower_t *o = d->list; o; o = o->next)
        if (!strcmp(o->url, url)) o->retry = 0;
    logf_("following %s into %s%s", url, f->db,
          f->resume ? " (replacing the database an earlier collectd left interrupted)" : "");
    if (pthread_create(&f->th, NULL, follow_main, f) != 0) {
        logf_("cannot start a thread for %s", url);
        free(f->url);
        free(f->host);
        free(f->session);
        free(f->db);
        free(f);
        return;
    }
    f->next = d->list;
    d->list = f;
}

static void sleep_ms(int ms)
{
    /* In small steps so that a signal ends the wait quickly. */
    for (int t = 0; t < ms && !stop_flag; t += 50) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: heapledger collectd --url net://HOST[:PORT] [--dir DIR] [--poll-ms N]\n"
               "                           [--commit-ms N] [--relay-dir DIR]\n"
               "\n"
               "Follow every session an lttng-relayd offers (live port, default 5344) and stream\n"
               "each into its own run database DIR/HOST-SESSION.db as events arrive. Survives a\n"
               "relayd restart (reconnects with backoff); SIGTERM or SIGINT finish every database\n"
               "cleanly and exit 0.\n"
               "\n"
               "  -u, --url URL       relay daemon live URL (required)\n"
               "  -d, --dir DIR       directory for the databases (default: .)\n"
               "  -p, --poll-ms N     how often to look for new sessions (default 1000)\n"
               "  -c, --commit-ms N   commit interval of each database (default 1000)\n"
               "  -r, --relay-dir DIR the relay daemon's output directory (its -o) on this\n"
               "                      machine: a session that ended is made complete from the\n"
               "                      relay's copy (every event from the first, module maps)\n");
}

int hl_cmd_collectd(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"url", required_argument, NULL, 'u'},
        {"dir", required_argument, NULL, 'd'},
        {"poll-ms", required_argument, NULL, 'p'},
        {"commit-ms", required_argument, NULL, 'c'},
        {"relay-dir", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    /* Internal: one session's babeltrace2 live reader, started by collectd itself
     * (ingest_decoder.c): its crash must not end collectd. */
    if (argc == 4 && !strcmp(argv[1], "--live-reader"))
        hl_decoder_live_child(argv[2], 3, (pid_t)atoi(argv[3]));
    daemon_t d = {.dir = ".", .commit_ms = 1000};
    const char *url = NULL;
    int poll_ms = 1000, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "u:d:p:c:r:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'u':
            url = optarg;
            break;
        case 'd':
            d.dir = optarg;
            break;
        case 'p':
            poll_ms = atoi(optarg);
            break;
        case 'c':
            d.commit_ms = atoi(optarg);
            break;
        case 'r':
            d.relay_dir = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (!url || optind != argc) {
        fprintf(stderr, "heapledger collectd: %s\n\n",
                url ? "too many arguments" : "missing --url");
        usage(stderr);
        return 2;
    }
    if (strncmp(url, "net://", 6) && strncmp(url, "net4://", 7) && strncmp(url, "net6://", 7)) {
        fprintf(stderr, "heapledger collectd: %s: expected net://HOST[:PORT]\n", url);
        return 2;
    }
    struct stat sb;
    if (stat(d.dir, &sb) != 0 || !S_ISDIR(sb.st_mode) || access(d.dir, W_OK) != 0) {
        fprintf(stderr, "heapledger collectd: %s: not a writable directory\n", d.dir);
        return 1;
    }
    if (d.relay_dir && (stat(d.relay_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
        fprintf(stderr,
                "heapledger collectd: --relay-dir %s: not a directory (give the relay daemon's "
                "output directory, its -o; default $HOME/lttng-traces)\n",
                d.relay_dir);
        return 1;
    }
    if (poll_ms < 50) poll_ms = 50;
    if (d.commit_ms < 10) d.commit_ms = 10;
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    d.relay_url = url;
    logf_("watching %s, databases in %s", url, d.dir);
    int backoff = 0, down = 0;
    while (!stop_flag) {
        char err[256];
        int n = hl_source_live_sessions(url, on_session, &d, err, sizeof err);
        if (n < 0) {
            backoff = backoff ? (backoff * 2 > 8000 ? 8000 : backoff * 2) : 250;
            if (!down) logf_("%s (retrying with backoff)", err);
            down = 1;
            sleep_ms(backoff);
            continue;
        }
        /* Reap finished followers (their URLs stay listed so that an ended session is not
         * followed again). */
        for (follower_t *f = d.list; f; f = f->next)
            if (f->done && !f->joined) {
                pthread_join(f->th, NULL);
                f->joined = 1;
            }
        if (down) logf_("%s: relay daemon reachable again", url);
        down = 0;
        backoff = 0;
        sleep_ms(poll_ms);
    }
    logf_("stopping: finishing the databases");
    int rc = 0;
    while (d.list) {
        follower_t *f = d.list;
        d.list = f->next;
        if (!f->joined) pthread_join(f->th, NULL);
        if (f->rc < 0) rc = 1;
        free(f->url);
        free(f->host);
        free(f->session);
        free(f->db);
        free(f);
    }
    logf_("stopped");
    return rc;
}
