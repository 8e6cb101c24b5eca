/* tracer/record.c — `heapledger record`: run a program under tracing and store the run.
 *
 * Sequence: output checks (nothing runs if the database or --keep-trace cannot be written)
 * → isolation (record_ns.h: root gets a private mount namespace) → reaper (record_reaper.h:
 * cleans up if record dies) → trace directory → a private session daemon (sessiond.h) →
 * session with a large blocking channel (session.c) → start → fork; the child waits on a
 * pipe, the parent starts kernel events if asked (tracer/bpf/kernel.h), then releases the
 * child, which execs the program with our libraries preloaded (record_env.c) → wait, watching
 * both daemons → stop (discarded counters) → destroy (trace complete on disk) → stop the
 * daemon → ingest into the run database (tracer/ingest.h) → summary (record_summary.c).
 *
 * Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to the program (a third one
 * sends SIGKILL); whatever was recorded until it exits is still stopped, ingested and
 * summarised. A daemon dying mid-run: the program goes on untraced, what reached the disk is
 * ingested, and the run is reported incomplete. Exit status: the program's (128 + signal when
 * it was killed); 125 when heapledger itself failed (no session daemon or it died, no
 * libraries, ingest failed, nothing recorded), 126 when the program cannot be executed, 127
 * when it is not found, 2 for usage errors and output problems.
 */
#include "cmd.h"
#include "db.h"
#include "fstree.h"
#include "heapledger.h"
#include "ingest.h"
#include "record_env.h"
#include "record_ns.h"
#include "record_reaper.h"
#include "record_rotate.h"
#include "record_schedule.h"
#include "record_stats.h"
#include "record_summary.h"
#include "session.h"
#include "suggest.h"
#include "sessiond.h"
#include "bpf/kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The ingest and kernel-events parts may be absent from a partial build: record then keeps
 * the trace, or records without kernel events, and says so. */
#pragma weak hl_ingest_trace
#pragma weak hl_ingest_chunks_new
#pragma weak hl_ingest_chunks_close
#pragma weak hl_ingest_chunks_events
#pragma weak hl_ingest_chunks_count
#pragma weak hl_ingest_chunks_signals
#pragma weak hl_ingest_chunks_interrupted
#pragma weak hl_kernel_start
#pragma weak hl_kernel_stop
#pragma weak hl_kernel_store
#pragma weak hl_db_mark_partial
#pragma weak hl_kernel_free

/* How often record looks for closed trace chunks while the program runs. */
#define HL_RECORD_POLL_MS 250
/* --relay: default bound on the end of the session, seconds (record_relay_timeout). */
#define HL_RELAY_TIMEOUT_S 30

#define HL_EXIT_TOOL     125
#define HL_EXIT_NOEXEC   126
#define HL_EXIT_NOTFOUND 127

typedef struct record_args_s {
    const char *out;     /* -o FILE.db, NULL = heapledger-<cmd>-<pid>.db */
    const char *options; /* --options */
    int stacks;          /* --stacks N, -1 = not given */
    int lossy;           /* --lossy */
    int kernel;          /* --kernel */
    int force;           /* --force */
    const char *keep;    /* --keep-trace DIR */
    const char *relay;   /* --relay net://HOST[:PORT]: stream to a relay daemon (-o: session) */
    int stats;           /* --stats: time line and CPU per process (record_stats.h) */
    char **argv;         /* the program and its arguments */
} record_args_t;

static volatile sig_atomic_t rec_child;   /* pid of the program once forked */
static uint64_t rec_backlog_max;          /* the backlog that pauses the program (0: never) */
static volatile sig_atomic_t rec_signals; /* forwarded signals so far */
static volatile sig_atomic_t rec_pending; /* signal received before the fork */
static hl_rstats_t rec_stats;             /* --stats */
static hl_rsched_t rec_sched;             /* when the trace chunks close (record_schedule.h) */
static int rec_have_sched;                /* rec_sched is set up (chunked, local) */

static void record_usage(FILE *f)
{
    fprintf(f,
            "usage: heapledger record [-o FILE.db] [--options STR] [--stacks N] [--lossy]\n"
            "                         [--keep-trace DIR] [--kernel] [--force] -- CMD [ARGS...]\n"
            "       heapledger record --relay net://HOST[:PORT] [-o SESSION] [--options STR]\n"
            "                         [--stacks N] [--lossy] -- CMD [ARGS...]\n"
            "\n"
            "Run CMD with the heapledger allocator preloaded, record every allocation and free\n"
            "with LTTng-UST (lossless unless --lossy), and store the run in a SQLite database.\n"
            "\n"
            "  -o FILE.db         database to write (default: heapledger-CMD-PID.db)\n"
            "  --options STR      HEAPLEDGER_OPTIONS for the program (e.g. harden=1,arena=4M)\n"
            "  --stacks N         call-stack depth per event, 0 = none (default 16, max 64)\n"
            "  --lossy            drop events when buffers are full instead of blocking\n"
            "  --keep-trace DIR   write the LTTng trace to DIR and keep it\n"
            "  --kernel           also record mmap/munmap/brk/madvise, page faults and RSS\n"
            "  -f, --force        overwrite FILE.db if it exists\n"
            "  --relay URL        stream the recording to lttng-relayd at URL (for heapledger\n"
            "                     collectd) instead of writing a database; -o names the session\n"
            "  --stats            print the time line and the CPU of every process at the end\n"
            "\n"
            "Exit status: CMD's (128+N if killed by signal N); 125 if recording failed,\n"
            "126/127 if CMD cannot be run / is not found. See heapledger-record(1).\n");
}

static int record_parse(int argc, char **argv, record_args_t *a)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"options", required_argument, NULL, 'O'},
        {"stacks", required_argument, NULL, 's'},
        {"lossy", no_argument, NULL, 'l'},
        {"keep-trace", required_argument, NULL, 'k'},
        {"kernel", no_argument, NULL, 'K'},
        {"force", no_argument, NULL, 'f'},
        {"relay", required_argument, NULL, 'R'},
        {"stats", no_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(a, 0, sizeof *a);
    a->stacks = -1;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "+o:fh", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            a->out = optarg;
            break;
        case 'O':
            a->options = optarg;
            break;
        case 'l':
            a->lossy = 1;
            break;
        case 'k':
            a->keep = optarg;
            break;
        case 'K':
            a->kernel = 1;
            break;
        case 'f':
            a->force = 1;
            break;
        case 'R':
            a->relay = optarg;
            break;
        case 'S':
            a->stats = 1;
            break;
        case 'h':
            record_usage(stdout);
            return 0;
        case 's': {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*optarg == 0 || *end || n < 0 || n > 64) {
                fprintf(stderr,
                        "heapledger record: --stacks wants a depth from 0 to 64, not '%s'\n",
                        optarg);
                return 2;
            }
            a->stacks = (int)n;
            break;
        }
        default: { /* getopt said what it did not understand; name the closest option too */
            const char *bad = argv[optind - 1], *near = NULL;
            size_t n = strcspn(bad + 2, "=");
            if (!strncmp(bad, "--", 2))
                near = hl_suggest(bad + 2, n, opts, sizeof opts / sizeof *opts, sizeof *opts);
            if (near && (strlen(near) != n || strncmp(near, bad + 2, n)))
                fprintf(stderr, "heapledger record: did you mean '--%s'?\n", near);
            record_usage(stderr);
            return 2;
        }
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "heapledger record: no program given\n\n");
        record_usage(stderr);
        return 2;
    }
    a->argv = argv + optind;
    return -1;
}

/* Is prog executable as execvp would find it? Returns 0, or the exit status to use. */
static int record_find_program(const char *prog, char *path, size_t len)
{
    if (strchr(prog, '/')) {
        snprintf(path, len, "%s", prog);
        if (access(prog, F_OK)) return HL_EXIT_NOTFOUND;
        return access(prog, X_OK) ? HL_EXIT_NOEXEC : 0;
    }
    const char *p = getenv("PATH");
    if (!p) p = "/usr/local/bin:/usr/bin:/bin";
    int seen = 0;
    while (*p) {
        const char *e = strchrnul(p, ':');
        snprintf(path, len, "%.*s/%s", (int)(e - p), e == p ? "." : p, prog);
        if (access(path, F_OK) == 0) {
            struct stat st;
            if (access(path, X_OK) == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode)) return 0;
            seen = 1;
        }
        p = *e ? e + 1 : e;
    }
    return seen ? HL_EXIT_NOEXEC : HL_EXIT_NOTFOUND;
}

static void record_on_signal(int sig)
{
    pid_t child = rec_child;
    if (!child) {
        rec_pending = sig;
        return;
    }
    kill(child, ++rec_signals >= 3 ? SIGKILL : sig);
}

static void record_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = record_on_signal;
    sigemptyset(&sa.sa_mask);
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
        sigaction(sigs[i], &sa, NULL);
}

/* Child side: wait for the go byte, set the environment, exec. On failure, send errno back
 * through errfd (close-on-exec, so a successful exec sends nothing). */
static void __attribute__((noreturn))
record_child(const record_args_t *a, const hl_record_libs_t *libs, const char *marker, int gofd,
             int errfd)
{
    /* Default dispositions first: a Ctrl-C from now on ends the child like the program. A
     * signal caught by the inherited handler before this point is re-raised. */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    if (rec_pending) raise(rec_pending);
    char go;
    ssize_t n;
    while ((n = read(gofd, &go, 1)) < 0 && errno == EINTR)
        ;
    if (n != 1) _exit(HL_EXIT_TOOL);
    int e = 0;
    if (hl_record_setenv(libs, a->options, a->stacks, a->lossy, marker) == 0) {
        execvp(a->argv[0], a->argv);
    }
    e = errno;
    if (write(errfd, &e, sizeof e) < 0) _exit(HL_EXIT_TOOL);
    _exit(e == ENOENT ? HL_EXIT_NOTFOUND : HL_EXIT_NOEXEC);
}

/* What record watches while the program runs. */
typedef struct record_watch_s {
    hl_sessiond_t *sessiond; /* the private session daemon (record's child) */
    hl_reaper_t *reaper;     /* told when the daemon is ours to reap no more */
    pid_t consumerd;         /* its user-space consumer daemon, 0 if not found */
    const char *marker;      /* NAME=VALUE put in the program's environment (reaper) */
    const char *died;        /* set when a daemon died while the program ran */
    pid_t died_pid;
    hl_rotor_t *rotor; /* stores the trace chunks while the program runs; NULL: after it */
} record_watch_t;

/* Wait for the program while watching the daemons: a daemon that dies mid-run is noted in
 * w->died, and the session daemon is stopped so that the program's tracer lets go of its
 * buffers (it goes on untraced; a writer waiting for buffer space gives up after the
 * blocking timeout of session.h). Returns 0, or -1 with a message printed. */
static int record_wait(pid_t pid, int *status, record_watch_t *w)
{
    int pfd = pidfd_open(pid, 0);
    int sfd = w->sessiond->pid ? pidfd_open(w->sessiond->pid, 0) : -1;
    int cfd = w->consumerd ? pidfd_open(w->consumerd, 0) : -1;
    unsigned waiting = 0; /* closed trace chunks not stored yet */
    while (pfd >= 0 && !w->died) {
        struct pollfd fds[3] = {{pfd, POLLIN, 0}, {sfd, POLLIN, 0}, {cfd, POLLIN, 0}};
        /* The rotor's store thread stores the chunks; without it (it could not start) this
         * thread does, between looks at the program. */
        int self = w->rotor && !w->rotor->store_ok;
        int n = poll(fds, 3, !w->rotor ? -1 : waiting && self ? 0 : HL_RECORD_POLL_MS);
        if (n == 0 && self) waiting = hl_rotor_poll(w->rotor);
        /* A signal forwarded to the program (also while a chunk was being stored): it must
         * be running to receive it. */
        if (w->rotor && rec_signals) hl_rotor_resume(w->rotor, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 || fds[0].revents) break;
        if (fds[1].revents) {
            w->died = "session daemon";
            w->died_pid = w->sessiond->pid;
        } else if (fds[2].revents) {
            w->died = "consumer daemon";
            w->died_pid = w->consumerd;
        }
    }
    if (w->rotor) {
        hl_rotor_resume(w->rotor, 1); /* the daemon died: it goes on untraced */
        hl_rotor_watch_end(w->rotor); /* no chunk closes any more: the main thread stops */
    }
    if (w->died) {
        fprintf(stderr,
                "heapledger record: the private LTTng %s (pid %d) died while the program ran; "
                "the program goes on untraced\n",
                w->died, (int)w->died_pid);
        /* Once reaped, its pid may be reused: the reaper must not kill it any more. */
        hl_reaper_note(w->reaper, "sessiond", "0");
        hl_sessiond_stop(w->sessiond);
    }
    if (pfd >= 0) close(pfd);
    if (sfd >= 0) close(sfd);
    if (cfd >= 0) close(cfd);
    while (wait4(pid, status, 0, &rec_stats.program) < 0)
        if (errno != EINTR) {
            perror("heapledger record: waitpid");
            return -1;
        }
    rec_stats.have_program = 1;
    hl_rstats_mark(&rec_stats, HL_RS_END);
    return 0;
}

typedef struct record_out_s record_out_t;
static void record_out_start(record_out_t *o, const record_args_t *a, pid_t pid, const char *trace,
                             record_watch_t *w);

/* Run the program; returns its wait status in *status, or -1 with a message printed. out
 * (NULL with --relay) learns the program's pid before it is released. */
static int record_run(const record_args_t *a, const hl_record_libs_t *libs, int *status,
                      pid_t *pid_out, hl_kernel_t **kernel, record_watch_t *w, record_out_t *out,
                      const char *trace)
{
    int go[2], er[2];
    if (pipe2(go, O_CLOEXEC) || pipe2(er, O_CLOEXEC)) {
        perror("heapledger record: pipe");
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("heapledger record: fork");
        return -1;
    }
    if (pid == 0) {
        close(go[1]);
        close(er[0]);
        record_child(a, libs, w->marker, go[0], er[1]);
    }
    close(go[0]);
    close(er[1]);
    rec_child = pid;
    *pid_out = pid;
    if (out) record_out_start(out, a, pid, trace, w);
    if (rec_pending) kill(pid, rec_pending);
    if (a->kernel) {
        char err[512] = "this build of heapledger has no kernel-events support";
        *kernel = hl_kernel_start ? hl_kernel_start(pid, err, sizeof err) : NULL;
        if (!*kernel)
            fprintf(stderr, "heapledger record: --kernel: %s; recording without kernel events\n",
                    err);
    }
    hl_rstats_mark(&rec_stats, HL_RS_FORK);
    if (write(go[1], "g", 1) != 1) { /* the child died before exec: its status tells */
    }
    close(go[1]);
    int e = 0;
    ssize_t n;
    while ((n = read(er[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(er[0]);
    if (record_wait(pid, status, w)) return -1;
    rec_child = 0;
    if (n == (ssize_t)sizeof e) {
        fprintf(stderr, "heapledger record: cannot run '%s': %s\n", a->argv[0], strerror(e));
        return -1;
    }
    return 0;
}

/* Exit status of the program and a line about how it ended when that was not a clean 0. */
static int record_status(const char *prog, int status)
{
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        fprintf(stderr, "heapledger record: '%s' was killed by signal %d (%s)%s\n", prog, sig,
                strsignal(sig), WCOREDUMP(status) ? ", core dumped" : "");
        return 128 + sig;
    }
    int code = WEXITSTATUS(status);
    if (code) fprintf(stderr, "heapledger record: '%s' exited with status %d\n", prog, code);
    return code;
}

/* Did any process write into the trace? (a CTF metadata file exists below dir) */
static int record_trace_written(const char *dir)
{
    return hl_tree_has_trace(dir);
}

/* --keep-trace DIR, when it exists: a directory of ours that holds no trace yet. Another
 * user's directory (or a symlink of theirs) would let them read or replace the trace.
 * Returns 0, or -1 with a message. */
static int record_check_keep(const char *keep)
{
    struct stat ln, st;
    if (!keep || lstat(keep, &ln)) return 0; /* created later, 0700 */
    if (stat(keep, &st) || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "heapledger record: --keep-trace %s: not a directory\n", keep);
        return -1;
    }
    if (ln.st_uid != geteuid() || st.st_uid != geteuid()) {
        fprintf(stderr,
                "heapledger record: --keep-trace %s belongs to uid %d, not to you (uid %d); "
                "choose a directory of your own\n",
                keep, (int)(ln.st_uid != geteuid() ? ln.st_uid : st.st_uid), (int)geteuid());
        return -1;
    }
    char meta[4200];
    snprintf(meta, sizeof meta, "%s/ust", keep);
    if (access(meta, F_OK) == 0) {
        fprintf(stderr,
                "heapledger record: %s already holds a trace; choose another --keep-trace "
                "directory\n",
                keep);
        return -1;
    }
    return 0;
}

/* Trace directory: --keep-trace DIR (created 0700, or an existing directory of ours made
 * 0700; must not hold a trace yet) or a fresh temporary directory (mkdtemp, 0700). Returns 0, or -1
 * with a message printed. */
static int record_trace_dir(const record_args_t *a, char *dir, size_t len)
{
    if (a->keep) {
        if (mkdir(a->keep, 0700) && errno != EEXIST) {
            fprintf(stderr, "heapledger record: cannot create %s: %s\n", a->keep, strerror(errno));
            return -1;
        }
        if (record_check_keep(a->keep)) return -1; /* again: it may have appeared meanwhile */
        struct stat st;
        if (stat(a->keep, &st) == 0 && (st.st_mode & 077) && chmod(a->keep, 0700)) {
            fprintf(stderr, "heapledger record: cannot make %s private: %s\n", a->keep,
                    strerror(errno));
            return -1;
        }
        if (!realpath(a->keep, dir)) {
            fprintf(stderr, "heapledger record: %s: %s\n", a->keep, strerror(errno));
            return -1;
        }
        return 0;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, len, "%s/heapledger-trace-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "heapledger record: cannot create a trace directory %s: %s\n", dir,
                strerror(errno));
        return -1;
    }
    return 0;
}

/* The run database and what goes into it, known before the program starts (but its default
 * name, after the program's pid). */
struct record_out_s {
    char db[4096];
    char cmdline[4096];
    char options[4096];
    hl_ingest_opts_t io;
    hl_rotor_t rotor;       /* used when chunked */
    int chunked;            /* the trace is stored chunk by chunk while the program runs */
    unsigned stored_during; /* chunks stored when the program ended */
    double end;             /* record_now() when the program ended */
};

static double record_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Test hook: with HEAPLEDGER_TEST_HOLD_INGEST=FILE, once the program ended and SIGINT/SIGTERM
 * stop the ingest, record creates FILE and waits (at most 60 s) until FILE is removed or a
 * signal stopped the ingest, so that a test can signal the final ingest deterministically. */
static void record_hold_ingest(hl_ingest_chunks_t *ing)
{
    const char *f = getenv("HEAPLEDGER_TEST_HOLD_INGEST");
    if (!f || !*f) return;
    int fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        fprintf(stderr, "heapledger record: HEAPLEDGER_TEST_HOLD_INGEST: %s: %s\n", f,
                strerror(errno));
        return;
    }
    close(fd);
    struct timespec ts = {0, 20 * 1000 * 1000};
    for (int i = 0; i < 3000 && access(f, F_OK) == 0 && !hl_ingest_chunks_interrupted(ing); i++)
        nanosleep(&ts, NULL);
}

/* Store the trace (what the rotor has not stored yet, or all of it in one pass) and print
 * the summary. Returns 0, or -1 when the database is not usable (the trace is then kept and
 * its path printed) or holds no events. died: the daemon that died mid-run, or NULL. */
static int record_ingest(record_out_t *o, const char *trace, int exit_status, uint64_t discarded,
                         hl_kernel_t *kernel, int *keep_trace, uint64_t *events, const char *died)
{
    const char *db = o->db;
    o->io.exit_status = exit_status;
    hl_ingest_result_t r;
    memset(&r, 0, sizeof r);
    int rc = -1;
    unsigned stored_during = 0, chunks = 0;
    uint64_t stored_events = 0;
    if (o->chunked) {
        stored_during = o->stored_during;
        hl_rotor_join(&o->rotor); /* it stored the closed chunks meanwhile */
        hl_rotor_finish(&o->rotor);
        hl_rstats_mark(&rec_stats, HL_RS_STORED);
        rec_stats.have_store = 1;
        rec_stats.store_idle_run = o->rotor.idle_run_s;
        rec_stats.store_idle_end = o->rotor.idle_end_s;
        rec_stats.final_early = o->rotor.final_ok;
        rec_stats.store_thread_cpu = o->rotor.store_thread_cpu;
        rec_stats.watch_cpu = o->rotor.watch_cpu;
        if (rec_have_sched) {
            rec_stats.rotations = rec_sched.asked;
            rec_stats.first_chunk_mib = (double)hl_rsched_first_bytes(rec_sched.max) / 1048576;
            if (rec_sched.fallback && !died)
                fprintf(stderr,
                        "heapledger record: %s; LTTng's size schedule closed the trace chunks "
                        "from then on\n",
                        rec_sched.err);
        }
        chunks = hl_ingest_chunks_count(o->rotor.ing);
        stored_events = hl_ingest_chunks_events(o->rotor.ing);
        rc = hl_ingest_chunks_close(o->rotor.ing, exit_status, trace, o->rotor.deleted > 0, &r);
        o->rotor.ing = NULL;
        if (rc >= 0 && o->rotor.damaged && !r.interrupted) {
            rc = 1;
            snprintf(r.error, sizeof r.error, "%s", o->rotor.err);
        }
    } else if (hl_ingest_trace) {
        rc = hl_ingest_trace(trace, db, &o->io, &r);
    } else {
        snprintf(r.error, sizeof r.error, "this build of heapledger has no ingest");
    }
    hl_rstats_mark(&rec_stats, HL_RS_READY);
    if (rc < 0) {
        fprintf(stderr, "heapledger record: ingest failed: %s\n", r.error);
        if (chunks)
            fprintf(stderr,
                    "heapledger record: %s keeps the %llu events of the %u trace chunks stored "
                    "before (ingest_status 'recording'); the chunks not stored are kept in "
                    "%s/archives\n",
                    db, (unsigned long long)stored_events, chunks, trace);
        else
            fprintf(stderr,
                    "heapledger record: the trace is kept in %s; once fixed, run: "
                    "heapledger collect%s %s -o %s\n",
                    trace, o->chunked ? " --all" : "", trace, db);
        *keep_trace = 1;
        return -1;
    }
    if (rc > 0) {
        fprintf(stderr, "heapledger record: the trace was incomplete: %s\n", r.error);
        *keep_trace = 1;
    }
    *events = r.events;
    if (kernel) {
        char err[512];
        long n = hl_kernel_store(kernel, db, err, sizeof err);
        if (n < 0) fprintf(stderr, "heapledger record: kernel events not stored: %s\n", err);
    }
    if (discarded > r.discarded)
        fprintf(stderr, "heapledger record: LTTng reported %llu events discarded\n",
                (unsigned long long)discarded);
    if (o->chunked)
        fprintf(stderr,
                "heapledger record: %s: %llu events in %u trace chunks (%u stored while the "
                "program ran), ready %.2f s after it ended\n",
                db, (unsigned long long)r.events, chunks, stored_during, record_now() - o->end);
    if (o->chunked && o->rotor.pauses)
        fprintf(stderr,
                "heapledger record: the program was paused %u times (%.2f s in all) while more "
                "than %.1f MiB of closed trace chunks waited to be stored\n",
                o->rotor.pauses, o->rotor.paused_s, (double)o->rotor.backlog_max / 1048576);
    else
        fprintf(stderr, "heapledger record: %s: %llu events in %.2f s\n", db,
                (unsigned long long)r.events, r.seconds);
    if (r.events == 0) {
        if (died)
            fprintf(stderr,
                    "heapledger record: %s holds no events: the %s died before any complete "
                    "packet reached the disk\n",
                    db, died);
        else
            fprintf(stderr,
                    "heapledger record: %s holds no events: nothing was recorded (was the "
                    "program traced at all?)\n",
                    db);
        return -1;
    }
    hl_record_summary(stderr, db, r.blocks ? (int64_t)r.blocks : -1);
    fprintf(stderr, "  %-12s heapledger report %s\n", "next", db);
    hl_rstats_mark(&rec_stats, HL_RS_SUMMARY);
    hl_rstats_print(stderr, &rec_stats, db, &r);
    return 0;
}

/* Once the database holds a chunk, a record that dies leaves the trace directory with the
 * chunks not stored yet (the reaper says where). */
static void record_keep_trace(void *arg)
{
    record_watch_t *w = arg;
    hl_rstats_mark(&rec_stats, HL_RS_FIRST_CHUNK); /* on the store thread: read once joined */
    hl_reaper_note(w->reaper, "kept", w->rotor->dir);
}

/* A chunk is committed: a record that dies before deleting it leaves the reaper to (a
 * temporary trace only; a --keep-trace directory keeps its chunks). */
static void record_chunk_stored(void *arg, const char *path)
{
    record_watch_t *w = arg;
    if (!w->rotor->keep) hl_reaper_note(w->reaper, "stored", path);
}

/* The database's name (-o, else heapledger-CMD-PID.db) once the program runs, and the
 * chunked ingest into it. */
static void record_out_start(record_out_t *o, const record_args_t *a, pid_t pid, const char *trace,
                             record_watch_t *w)
{
    if (a->out)
        snprintf(o->db, sizeof o->db, "%s", a->out);
    else {
        const char *base = strrchr(a->argv[0], '/');
        snprintf(o->db, sizeof o->db, "heapledger-%s-%d.db", base ? base + 1 : a->argv[0],
                 (int)pid);
    }
    if (!o->chunked) return;
    hl_ingest_chunks_t *ing = hl_ingest_chunks_new(o->db, trace, &o->io);
    if (!ing) {
        o->chunked = 0; /* out of memory: everything after the run, as without rotation */
        return;
    }
    hl_rotor_init(&o->rotor, trace, ing, a->keep != NULL);
    o->rotor.before_first = record_keep_trace;
    o->rotor.after_store = record_chunk_stored;
    if (rec_have_sched) o->rotor.sched = &rec_sched;
    o->rotor.arg = w;
    o->rotor.pid = pid;
    o->rotor.backlog_max = rec_backlog_max;
    o->rotor.before_final = record_hold_ingest;
    w->rotor = &o->rotor;
    hl_rotor_start(&o->rotor); /* else record_wait stores them itself */
    /* No watch thread to close the chunks: LTTng's size schedule does (the program is not
     * running yet, so this thread's liblttng-ctl call races no other). */
    if (rec_have_sched && !o->rotor.thread_ok) {
        rec_have_sched = 0;
        o->rotor.sched = NULL;
        hl_session_rotate_on_size(rec_sched.s, rec_sched.max);
    }
}

/* Can the database be written? Refused before anything runs: a missing or unwritable
 * directory, an existing file without --force, an existing file that cannot be replaced.
 * out NULL: the default name in the current directory. Returns 0, or -1 with a message. */
static int record_check_output(const char *out, int force)
{
    char dir[4096];
    const char *slash = out ? strrchr(out, '/') : NULL;
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == out ? 1 : (int)(slash - out), out);
    struct stat st;
    int e = stat(dir, &st) ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
    if (e) {
        fprintf(stderr,
                "heapledger record: cannot write %s: %s %s (create it, or choose another -o)\n",
                out ? out : "the database", dir,
                e == ENOENT    ? "does not exist"
                : e == ENOTDIR ? "is not a directory"
                               : strerror(e));
        return -1;
    }
    if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS)) {
        fprintf(stderr,
                "heapledger record: cannot write %s: directory %s: %s (choose another -o)\n",
                out ? out : "the database", dir, strerror(errno));
        return -1;
    }
    for (int i = 0; out && !force && i < 3; i++) { /* sqlite's side files: not ours to follow */
        static const char *const side[] = {"-wal", "-shm", "-journal"};
        char p[4200];
        snprintf(p, sizeof p, "%s%s", out, side[i]);
        if (lstat(p, &st) == 0) {
            fprintf(stderr, "heapledger record: %s exists (use --force to replace it)\n", p);
            return -1;
        }
    }
    if (out && lstat(out, &st) == 0) {
        if (!force) {
            fprintf(stderr, "heapledger record: %s exists (use --force to replace it)\n", out);
            return -1;
        }
        if (!S_ISREG(st.st_mode)) {
            fprintf(stderr, "heapledger record: %s exists and is not a regular file\n", out);
            return -1;
        }
    }
    return 0;
}

/* --relay: where the recording goes and the database collectd will make of it (collectd.c
 * names it HOST-SESSION.db, unsafe characters as '_', after the host name the session
 * daemon reports to the relay daemon: this machine's). */
static void record_relay_announce(const hl_session_t *s)
{
    char host[256] = "host";
    if (gethostname(host, sizeof host - 1) || !host[0]) snprintf(host, sizeof host, "host");
    char base[512];
    snprintf(base, sizeof base, "%s-%s", host, s->name);
    for (char *p = base; *p; p++)
        if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') && !(*p >= '0' && *p <= '9') &&
            *p != '-' && *p != '_' && *p != '.')
            *p = '_';
    fprintf(stderr,
            "heapledger record: streaming to %s as session %s of host %s; heapledger collectd "
            "stores it as %s.db\n",
            s->relay, s->name, host, base);
}

/* --relay, after the program: the session was stopped and destroyed (every event reached the
 * relay daemon, unless a daemon died). Returns the exit status. */
static int record_relay_end(const hl_session_t *s, int code, uint64_t discarded, const char *died)
{
    if (died) {
        fprintf(stderr,
                "heapledger record: the recording is incomplete: the %s died while the program "
                "ran (or the session did not end cleanly); the relay holds what was sent "
                "before\n",
                died);
        return code ? code : HL_EXIT_TOOL;
    }
    if (discarded)
        fprintf(stderr, "heapledger record: LTTng reported %llu events discarded\n",
                (unsigned long long)discarded);
    fprintf(stderr, "heapledger record: session %s streamed to %s and ended\n", s->name, s->relay);
    return code;
}

/* --relay, when the session did not end within timeout_s (record_relay_end_session). */
static int record_relay_late(const hl_session_t *s, int code, int timeout_s)
{
    fprintf(stderr,
            "heapledger record: the recording is incomplete: the session did not end within %d s "
            "(HEAPLEDGER_RELAY_TIMEOUT): the relay daemon at %s stopped answering or went away "
            "while the program ran, and the private LTTng daemons were stopped; the relay holds "
            "what it received before (heapledger collectd marks that database 'partial'). Check "
            "the relay daemon and the network, then record again\n",
            timeout_s, s->relay);
    return code ? code : HL_EXIT_TOOL;
}

/* Everything a recording holds that must be released however it ends. */
typedef struct record_ctx_s {
    hl_reaper_t reaper;
    hl_sessiond_t sessiond;
    char trace[4096];
    int keep_trace; /* keep the trace directory at the end */
    int have_trace; /* trace[] was created */
} record_ctx_t;

/* --relay: the bound on the end of the session (stop and destroy: every event sent to the
 * relay daemon), in seconds, HEAPLEDGER_RELAY_TIMEOUT (default 30). The private daemons'
 * sockets to the relay daemon time out after twice as long (LTTNG_NETWORK_SOCKET_TIMEOUT, set for
 * the private session daemon): a relay daemon that dies or stops answering mid-run made an
 * lttng-ctl call wait for good. Returns the seconds, or -1 after a message (bad value). */
static int record_relay_timeout(void)
{
    const char *v = getenv("HEAPLEDGER_RELAY_TIMEOUT");
    if (!v || !*v) return HL_RELAY_TIMEOUT_S;
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n < 1 || n > 86400) {
        fprintf(stderr,
                "heapledger record: HEAPLEDGER_RELAY_TIMEOUT=%s: expected whole seconds from 1 "
                "to 86400 (how long the end of a --relay session may take; default %d)\n",
                v, HL_RELAY_TIMEOUT_S);
        return -1;
    }
    return (int)n;
}

typedef struct relay_end_s {
    hl_session_t s; /* a copy: a call that never returns keeps it (and this) */
    uint64_t discarded, lost;
    int rc, done;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} relay_end_t;

static void *relay_end_run(void *arg)
{
    relay_end_t *e = arg;
    int rc = hl_session_stop(&e->s, &e->discarded, &e->lost) || hl_session_destroy(&e->s);
    pthread_mutex_lock(&e->mu);
    e->rc = rc;
    e->done = 1;
    pthread_cond_signal(&e->cv);
    pthread_mutex_unlock(&e->mu);
    return NULL;
}

static void relay_end_free(relay_end_t *e)
{
    pthread_cond_destroy(&e->cv);
    pthread_mutex_destroy(&e->mu);
    free(e);
}

/* Wait for the ending thread until deadline; 1 when it finished. */
static int relay_end_wait(relay_end_t *e, const struct timespec *deadline)
{
    pthread_mutex_lock(&e->mu);
    while (!e->done && pthread_cond_timedwait(&e->cv, &e->mu, deadline) != ETIMEDOUT) {
    }
    int done = e->done;
    pthread_mutex_unlock(&e->mu);
    return done;
}

/* --relay: stop and destroy the session within timeout_s seconds. Past it the private daemons
 * are stopped (which ends the lttng-ctl calls waiting on them). Returns 0 (ended), -1 (failed:
 * s->err says why) or 1 (timed out: the daemons were stopped). */
static int record_relay_end_session(hl_session_t *s, record_ctx_t *c, int timeout_s,
                                    uint64_t *discarded, uint64_t *lost)
{
    relay_end_t *e = calloc(1, sizeof *e);
    if (!e) return hl_session_stop(s, discarded, lost) || hl_session_destroy(s) ? -1 : 0;
    e->s = *s;
    pthread_mutex_init(&e->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&e->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_t t;
    if (pthread_create(&t, NULL, relay_end_run, e)) {
        relay_end_free(e);
        return hl_session_stop(s, discarded, lost) || hl_session_destroy(s) ? -1 : 0;
    }
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_s;
    if (!relay_end_wait(e, &deadline)) {
        hl_reaper_note(&c->reaper, "sessiond", "0");
        hl_sessiond_stop(&c->sessiond); /* the calls waiting on it return */
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += 10;
        if (relay_end_wait(e, &deadline)) {
            pthread_join(t, NULL);
            relay_end_free(e);
        } else {
            pthread_detach(t); /* still inside lttng-ctl: e stays its own */
        }
        s->created = 0;
        return 1;
    }
    pthread_join(t, NULL);
    *s = e->s;
    *discarded = e->discarded;
    *lost = e->lost;
    int rc = e->rc ? -1 : 0;
    relay_end_free(e);
    return rc;
}

/* Release what the recording holds and tell the reaper there is nothing left to do. */
static int record_finish(record_ctx_t *c, int code)
{
    hl_reaper_note(&c->reaper, "sessiond", "0"); /* its pid may be reused once reaped */
    hl_sessiond_stop(&c->sessiond);
    if (c->have_trace) {
        if (c->keep_trace)
            fprintf(stderr, "  %-12s %s\n", "trace", c->trace);
        else
            hl_tree_remove(c->trace);
    }
    hl_reaper_done(&c->reaper);
    return code;
}

/* Isolation, reaper, trace directory, private session daemon. Returns 0, or -1 with a
 * message printed. */
static int record_setup(const record_args_t *a, record_ctx_t *c, char *marker, size_t mlen)
{
    char err[1024];
    int isolated = hl_record_isolate(err, sizeof err);
    if (isolated < 0) {
        fprintf(stderr, "heapledger record: %s\n", err);
        return -1;
    }
    if (hl_reaper_start(&c->reaper)) {
        perror("heapledger record: cannot start the cleanup process");
        return -1;
    }
    hl_reaper_note(&c->reaper, "isolated", isolated ? "1" : "0");
    snprintf(marker, mlen, "HEAPLEDGER_RECORDING=%d.%d", (int)getpid(), (int)c->reaper.pid);
    hl_reaper_note(&c->reaper, "marker", marker);
    if (!a->relay) { /* --relay: the trace goes to the relay daemon, no directory here */
        if (record_trace_dir(a, c->trace, sizeof c->trace)) return -1;
        c->have_trace = 1;
        c->keep_trace = a->keep != NULL;
        if (!c->keep_trace) hl_reaper_note(&c->reaper, "trace", c->trace);
    }
    if (hl_sessiond_prepare(&c->sessiond, isolated, err, sizeof err)) {
        fprintf(stderr, "heapledger record: %s\n", err);
        return -1;
    }
    if (c->sessiond.own_home) hl_reaper_note(&c->reaper, "home", c->sessiond.home);
    if (hl_sessiond_start(&c->sessiond, err, sizeof err)) {
        fprintf(stderr, "heapledger record: %s\n", err);
        return -1;
    }
    /* Before waiting for it: a record killed meanwhile must not leave it running. */
    hl_reaper_note_pid(&c->reaper, "sessiond", c->sessiond.pid);
    if (hl_sessiond_wait_ready(&c->sessiond, err, sizeof err)) {
        fprintf(stderr, "heapledger record: %s\n", err);
        return -1;
    }
    return 0;
}

int hl_cmd_record(int argc, char **argv)
{
    record_args_t a;
    int rc = record_parse(argc, argv, &a);
    if (rc >= 0) return rc;

    char path[4096], err[1024];
    /* The options the program gets (--options, else HEAPLEDGER_OPTIONS: hl_record_options),
     * checked with the parser the preloaded allocator uses: refuse bad ones now. */
    const char *opts = a.options ? a.options : getenv("HEAPLEDGER_OPTIONS");
    if (opts) {
        hl_options_t o;
        hl_options_default(&o);
        if (hl_options_parse(&o, opts, err, sizeof err)) {
            fprintf(stderr, "heapledger record: %s: %s (docs/options.md lists them)\n",
                    a.options ? "--options" : "HEAPLEDGER_OPTIONS", err);
            return 2;
        }
    }
    rc = record_find_program(a.argv[0], path, sizeof path);
    if (rc) {
        fprintf(stderr, "heapledger record: cannot run '%s': %s\n", a.argv[0],
                rc == HL_EXIT_NOTFOUND ? "command not found" : "permission denied");
        return rc;
    }
    int relay_timeout = HL_RELAY_TIMEOUT_S;
    if (a.relay) {
        hl_session_t chk;
        hl_session_init(&chk, "", 0);
        if (a.keep || a.kernel || a.force) {
            fprintf(stderr, "heapledger record: --relay streams the trace to the relay daemon: "
                            "--keep-trace, --kernel and --force do not apply (drop them, or record "
                            "locally without --relay)\n");
            return 2;
        }
        if (hl_session_set_relay(&chk, a.relay, a.out)) {
            fprintf(stderr, "heapledger record: %s\n", chk.err);
            return 2;
        }
        if ((relay_timeout = record_relay_timeout()) < 0) return 2;
    } else if (record_check_output(a.out, a.force) || record_check_keep(a.keep)) {
        return 2;
    }
    /* Trace chunks stored while the program runs (record_rotate.h); not with --relay. */
    uint64_t chunk_bytes = 0, first_chunk = 0;
    if (!a.relay && hl_ingest_chunks_new) {
        chunk_bytes = hl_rotor_chunk_bytes();
        if (chunk_bytes == (uint64_t)-1) return 2;
        first_chunk = chunk_bytes ? hl_rsched_first_bytes(chunk_bytes) : 0;
        if (first_chunk == (uint64_t)-1) return 2;
        rec_backlog_max = chunk_bytes ? hl_rotor_backlog_bytes(chunk_bytes) : 0;
        if (rec_backlog_max == (uint64_t)-1) return 2;
    }
    hl_record_libs_t libs;
    if (hl_record_find_libs(&libs, err, sizeof err)) {
        fprintf(stderr, "heapledger record: %s\n", err);
        return HL_EXIT_TOOL;
    }
    /* From here on a Ctrl-C must not leave a session behind: it is noted, and forwarded to
     * the program once it runs. */
    record_signals();
    rec_stats.on = a.stats;
    hl_rstats_mark(&rec_stats, HL_RS_START);
    record_ctx_t c;
    memset(&c, 0, sizeof c);
    c.reaper.fd = -1;
    char marker[128];
    /* --relay: the private daemons' relay sockets time out after twice the bound. A socket
     * timeout starts when the relay daemon stops answering, possibly long before the program
     * ends, and ends the session as if it had gone well; at the same length as the bound it
     * raced it and a lost relay daemon was now and then reported as a session that ended. */
    char sock_timeout[24];
    int set_sock_timeout = a.relay && !getenv("LTTNG_NETWORK_SOCKET_TIMEOUT");
    snprintf(sock_timeout, sizeof sock_timeout, "%lld", (long long)relay_timeout * 2000);
    if (set_sock_timeout) setenv("LTTNG_NETWORK_SOCKET_TIMEOUT", sock_timeout, 1);
    int setup = record_setup(&a, &c, marker, sizeof marker);
    if (set_sock_timeout) unsetenv("LTTNG_NETWORK_SOCKET_TIMEOUT"); /* not the program's */
    if (setup) return record_finish(&c, HL_EXIT_TOOL);
    hl_rstats_mark(&rec_stats, HL_RS_SESSIOND);

    hl_session_t s;
    hl_session_init(&s, c.trace, a.lossy);
    if (a.relay) hl_session_set_relay(&s, a.relay, a.out); /* checked above */
    if (hl_session_create(&s) || hl_session_start(&s)) {
        fprintf(stderr, "heapledger record: %s\n", s.err);
        hl_session_destroy(&s);
        return record_finish(&c, HL_EXIT_TOOL);
    }
    hl_rstats_mark(&rec_stats, HL_RS_SESSION);
    /* The chunks close on record's schedule, small ones first (record_schedule.h). */
    if (chunk_bytes) hl_rsched_init(&rec_sched, &s, first_chunk, chunk_bytes);
    rec_have_sched = chunk_bytes != 0;

    if (rec_pending) {
        fprintf(stderr, "heapledger record: interrupted by signal %d before '%s' started\n",
                (int)rec_pending, a.argv[0]);
        hl_session_stop(&s, NULL, NULL);
        hl_session_destroy(&s);
        return record_finish(&c, 128 + rec_pending);
    }
    if (a.relay) record_relay_announce(&s);
    record_watch_t w = {.sessiond = &c.sessiond,
                        .reaper = &c.reaper,
                        .consumerd = hl_sessiond_consumerd(&c.sessiond),
                        .marker = marker};
    static record_out_t out; /* large: not on the stack */
    memset(&out, 0, sizeof out);
    size_t off = 0;
    for (char **p = a.argv; *p && off < sizeof out.cmdline - 1; p++)
        off += (size_t)snprintf(out.cmdline + off, sizeof out.cmdline - off, "%s%s",
                                p == a.argv ? "" : " ", *p);
    hl_record_options(out.options, sizeof out.options, a.options, a.stacks);
    hl_ingest_opts_t io = HL_INGEST_OPTS_INIT;
    out.io = io;
    out.io.command = out.cmdline;
    out.io.options = out.options;
    out.io.progress = isatty(2);
    out.io.force = a.force;
    out.chunked = chunk_bytes != 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int status = 0;
    pid_t pid = 0;
    hl_kernel_t *kernel = NULL;
    int ran =
        record_run(&a, &libs, &status, &pid, &kernel, &w, a.relay ? NULL : &out, c.trace) == 0;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    out.end = record_now();
    if (out.chunked && out.rotor.ing) {
        out.stored_during = hl_rotor_stored(&out.rotor);
        hl_rotor_signals(&out.rotor); /* the program ended: signals stop the ingest */
    }
    if (kernel) hl_kernel_stop(kernel);

    uint64_t discarded = 0, lost = 0;
    char unclean[600] = ""; /* the session did not end with its whole trace on disk */
    int relay_late = 0;     /* --relay: the session did not end within relay_timeout */
    if (!w.died && a.relay) {
        int e = record_relay_end_session(&s, &c, relay_timeout, &discarded, &lost);
        hl_rstats_mark(&rec_stats, HL_RS_DESTROYED);
        if (e < 0) {
            fprintf(stderr, "heapledger record: %s\n", s.err);
            w.died = "session (not ended cleanly)";
        } else if (e > 0) {
            relay_late = 1;
            w.died = "relay daemon";
        } else if (hl_session_relay_reachable(&s, 2000) == 0)
            w.died = "relay daemon"; /* it went away; the consumer dropped what followed */
    } else if (!w.died) {
        int e = hl_session_stop(&s, &discarded, &lost);
        hl_rstats_mark(&rec_stats, HL_RS_STOPPED);
        rec_stats.stop_polls = s.stop_polls;
        /* The trace is on disk: the store reads the last chunk while the session is destroyed. */
        if (!e && out.chunked && out.rotor.ing && !hl_session_rotating(&s))
            hl_rotor_final(&out.rotor);
        if (!e) e = hl_session_destroy(&s);
        hl_rstats_mark(&rec_stats, HL_RS_DESTROYED);
        hl_rstats_daemons(&rec_stats, c.sessiond.pid);
        if (e) {
            fprintf(stderr, "heapledger record: %s\n", s.err);
            if (a.relay) w.died = "session (not ended cleanly)";
            snprintf(unclean, sizeof unclean, "%.500s", s.err);
        }
    }
    /* The trace is complete on disk: the daemon's shutdown overlaps the ingest. */
    hl_sessiond_terminate(&c.sessiond);
    if (!ran) {
        if (kernel) hl_kernel_free(kernel);
        if (out.chunked && out.rotor.ing) { /* finish what was stored (usually nothing) */
            hl_rotor_join(&out.rotor);
            hl_ingest_result_t r;
            hl_ingest_chunks_close(out.rotor.ing, HL_EXIT_UNKNOWN, c.trace, 0, &r);
        }
        int code = HL_EXIT_TOOL;
        if (pid && WIFEXITED(status) && WEXITSTATUS(status) >= HL_EXIT_NOEXEC)
            code = WEXITSTATUS(status);
        return record_finish(&c, code);
    }
    if (out.chunked && out.io.progress) fputs("\r\033[K", stderr); /* the progress line */
    int code = record_status(a.argv[0], status);
    fprintf(stderr, "heapledger record: '%s' ran %.2f s (pid %d)%s\n", a.argv[0],
            (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9, (int)pid,
            rec_signals ? ", interrupted" : "");
    if (lost)
        fprintf(stderr, "heapledger record: LTTng lost %llu packets\n", (unsigned long long)lost);

    if (relay_late) return record_finish(&c, record_relay_late(&s, code, relay_timeout));
    if (a.relay) return record_finish(&c, record_relay_end(&s, code, discarded, w.died));
    uint64_t events = 0;
    if (out.chunked && out.rotor.ing) hl_rotor_join(&out.rotor);
    int stored = out.chunked && out.rotor.ing && hl_ingest_chunks_count(out.rotor.ing) > 0;
    if (!stored && !record_trace_written(c.trace)) {
        fprintf(stderr,
                "heapledger record: nothing was recorded: no process of '%s' reached the session "
                "daemon (a static program, or one that clears LD_PRELOAD, cannot be traced); no "
                "database written\n",
                a.argv[0]);
        if (kernel) hl_kernel_free(kernel);
        if (out.chunked && out.rotor.ing) {
            hl_ingest_result_t r;
            hl_ingest_chunks_close(out.rotor.ing, HL_EXIT_UNKNOWN, c.trace, 0, &r);
        }
        return record_finish(&c, code ? code : HL_EXIT_TOOL);
    }
    if (out.chunked && !out.rotor.ing) out.chunked = 0;
    int ok =
        record_ingest(&out, c.trace, code, discarded, kernel, &c.keep_trace, &events, w.died) == 0;
    if (kernel) hl_kernel_free(kernel);
    if (ok && (w.died || unclean[0])) { /* what was stored is kept, and says it is not all */
        char why[800], err[600];
        if (w.died)
            snprintf(why, sizeof why, "the private LTTng %s died while the program ran", w.died);
        else
            snprintf(why, sizeof why, "%s: events may be missing", unclean);
        if (hl_db_mark_partial && hl_db_mark_partial(out.db, why, err, sizeof err) != 0)
            fprintf(stderr, "heapledger record: cannot mark the database partial: %s\n", err);
    }
    if (ok && unclean[0] && !w.died) {
        fprintf(stderr,
                "heapledger record: the recording may be incomplete: %s; %s keeps the %llu "
                "events stored (ingest_status 'partial')\n",
                unclean, out.db, (unsigned long long)events);
        ok = 0;
    }
    if (ok && w.died) {
        fprintf(stderr,
                "heapledger record: the recording is incomplete: the %s died while '%s' ran; "
                "%s keeps the %llu events that reached the disk before\n",
                w.died, a.argv[0], out.db, (unsigned long long)events);
        ok = 0;
    }
    if (!ok && code == 0) code = HL_EXIT_TOOL;
    return record_finish(&c, code);
}
