/* tracer/record.c — `heapledger record`: run a program under tracing and store the run.
 *
 * Sequence: session daemon (sessiond.c) → session with a large blocking channel (session.c)
 * → start → fork; the child waits on a pipe, the parent starts kernel events if asked
 * (tracer/bpf/kernel.h), then releases the child, which execs the program with our libraries
 * preloaded (record_env.c) → wait → stop (discarded counters) → destroy (trace complete on
 * disk) → ingest into the run database (tracer/ingest.h) → summary (record_summary.c).
 *
 * Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to the program (a third one
 * sends SIGKILL); whatever was recorded until it exits is still stopped, ingested and
 * summarised. Exit status: the program's (128 + signal when it was killed); 125 when
 * heapledger itself failed (no session daemon, no libraries, ingest failed), 126 when the
 * program cannot be executed, 127 when it is not found, 2 for usage errors.
 */
#include "cmd.h"
#include "heapledger.h"
#include "ingest.h"
#include "record_env.h"
#include "record_summary.h"
#include "session.h"
#include "suggest.h"
#include "sessiond.h"
#include "bpf/kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The ingest and kernel-events parts may be absent from a partial build: record then keeps
 * the trace, or records without kernel events, and says so. */
#pragma weak hl_ingest_trace
#pragma weak hl_kernel_start
#pragma weak hl_kernel_stop
#pragma weak hl_kernel_store
#pragma weak hl_kernel_free

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
    char **argv;         /* the program and its arguments */
} record_args_t;

static volatile sig_atomic_t rec_child;   /* pid of the program once forked */
static volatile sig_atomic_t rec_signals; /* forwarded signals so far */
static volatile sig_atomic_t rec_pending; /* signal received before the fork */

static void record_usage(FILE *f)
{
    fprintf(f, "usage: heapledger record [-o FILE.db] [--options STR] [--stacks N] [--lossy]\n"
               "                         [--keep-trace DIR] [--kernel] [--force] -- CMD [ARGS...]\n"
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
record_child(const record_args_t *a, const hl_record_libs_t *libs, int gofd, int errfd)
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
    if (hl_record_setenv(libs, a->options, a->stacks, a->lossy) == 0) {
        execvp(a->argv[0], a->argv);
    }
    e = errno;
    if (write(errfd, &e, sizeof e) < 0) _exit(HL_EXIT_TOOL);
    _exit(e == ENOENT ? HL_EXIT_NOTFOUND : HL_EXIT_NOEXEC);
}

/* Run the program; returns its wait status in *status, or -1 with a message printed. */
static int record_run(const record_args_t *a, const hl_record_libs_t *libs, int *status,
                      pid_t *pid_out, hl_kernel_t **kernel)
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
        record_child(a, libs, go[0], er[1]);
    }
    close(go[0]);
    close(er[1]);
    rec_child = pid;
    *pid_out = pid;
    if (rec_pending) kill(pid, rec_pending);
    if (a->kernel) {
        char err[512] = "this build of heapledger has no kernel-events support";
        *kernel = hl_kernel_start ? hl_kernel_start(pid, err, sizeof err) : NULL;
        if (!*kernel)
            fprintf(stderr, "heapledger record: --kernel: %s; recording without kernel events\n",
                    err);
    }
    if (write(go[1], "g", 1) != 1) { /* the child died before exec: its status tells */
    }
    close(go[1]);
    int e = 0;
    ssize_t n;
    while ((n = read(er[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(er[0]);
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR) {
            perror("heapledger record: waitpid");
            return -1;
        }
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

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* Trace directory: --keep-trace DIR (created; must not hold a trace yet) or a fresh
 * temporary directory. Returns 0, or -1 with a message printed. */
static int record_trace_dir(const record_args_t *a, char *dir, size_t len)
{
    if (a->keep) {
        if (mkdir(a->keep, 0755) && errno != EEXIST) {
            fprintf(stderr, "heapledger record: cannot create %s: %s\n", a->keep, strerror(errno));
            return -1;
        }
        char meta[4200];
        snprintf(meta, sizeof meta, "%s/ust", a->keep);
        if (access(meta, F_OK) == 0) {
            fprintf(stderr,
                    "heapledger record: %s already holds a trace; choose another "
                    "--keep-trace directory\n",
                    a->keep);
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

/* Ingest the trace and print the summary. Returns 0, or -1 when the database is not usable
 * (the trace is then kept and its path printed). */
static int record_ingest(const record_args_t *a, const char *trace, const char *db,
                         const char *cmdline, const char *options, int exit_status,
                         uint64_t discarded, hl_kernel_t *kernel, int *keep_trace)
{
    hl_ingest_opts_t io = HL_INGEST_OPTS_INIT;
    io.command = cmdline;
    io.options = options;
    io.exit_status = exit_status;
    io.progress = isatty(2);
    io.force = a->force;
    hl_ingest_result_t r;
    memset(&r, 0, sizeof r);
    int rc = -1;
    if (hl_ingest_trace)
        rc = hl_ingest_trace(trace, db, &io, &r);
    else
        snprintf(r.error, sizeof r.error, "this build of heapledger has no ingest");
    if (rc < 0) {
        fprintf(stderr, "heapledger record: ingest failed: %s\n", r.error);
        fprintf(stderr,
                "heapledger record: the trace is kept in %s; once fixed, run: "
                "heapledger collect %s -o %s\n",
                trace, trace, db);
        *keep_trace = 1;
        return -1;
    }
    if (rc > 0) {
        fprintf(stderr, "heapledger record: the trace was incomplete: %s\n", r.error);
        *keep_trace = 1;
    }
    if (kernel) {
        char err[512];
        long n = hl_kernel_store(kernel, db, err, sizeof err);
        if (n < 0) fprintf(stderr, "heapledger record: kernel events not stored: %s\n", err);
    }
    if (discarded > r.discarded)
        fprintf(stderr, "heapledger record: LTTng reported %llu events discarded\n",
                (unsigned long long)discarded);
    fprintf(stderr, "heapledger record: %s: %llu events in %.2f s\n", db,
            (unsigned long long)r.events, r.seconds);
    hl_record_summary(stderr, db);
    fprintf(stderr, "  %-12s heapledger report %s\n", "next", db);
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
    if (a.out && !a.force && access(a.out, F_OK) == 0) {
        fprintf(stderr, "heapledger record: %s exists (use --force to replace it)\n", a.out);
        return 2;
    }
    hl_record_libs_t libs;
    if (hl_record_find_libs(&libs, err, sizeof err)) {
        fprintf(stderr, "heapledger record: %s\n", err);
        return HL_EXIT_TOOL;
    }
    rc = hl_sessiond_ensure(err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "heapledger record: %s\n", err);
        return HL_EXIT_TOOL;
    }
    if (rc == 2)
        fprintf(stderr,
                "heapledger record: started an LTTng session daemon (%s); it keeps "
                "running\n",
                geteuid() == 0 ? "root" : "per-user");
    /* From here on a Ctrl-C must not leave a session behind: it is noted, and forwarded to
     * the program once it runs. */
    record_signals();
    char trace[4096];
    if (record_trace_dir(&a, trace, sizeof trace)) return HL_EXIT_TOOL;
    int keep_trace = a.keep != NULL;

    hl_session_t s;
    hl_session_init(&s, trace, a.lossy);
    if (hl_session_create(&s) || hl_session_start(&s)) {
        fprintf(stderr, "heapledger record: %s\n", s.err);
        hl_session_destroy(&s);
        if (!keep_trace) nftw(trace, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        return HL_EXIT_TOOL;
    }

    if (rec_pending) {
        fprintf(stderr, "heapledger record: interrupted by signal %d before '%s' started\n",
                (int)rec_pending, a.argv[0]);
        hl_session_stop(&s, NULL, NULL);
        hl_session_destroy(&s);
        if (!keep_trace) nftw(trace, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        return 128 + rec_pending;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int status = 0;
    pid_t pid = 0;
    hl_kernel_t *kernel = NULL;
    int ran = record_run(&a, &libs, &status, &pid, &kernel) == 0;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (kernel) hl_kernel_stop(kernel);

    uint64_t discarded = 0, lost = 0;
    if (hl_session_stop(&s, &discarded, &lost) || hl_session_destroy(&s))
        fprintf(stderr, "heapledger record: %s\n", s.err);
    if (!ran) {
        if (kernel) hl_kernel_free(kernel);
        if (!keep_trace) nftw(trace, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        if (pid && WIFEXITED(status) && WEXITSTATUS(status) >= HL_EXIT_NOEXEC)
            return WEXITSTATUS(status);
        return HL_EXIT_TOOL;
    }
    int code = record_status(a.argv[0], status);
    fprintf(stderr, "heapledger record: '%s' ran %.2f s (pid %d)%s\n", a.argv[0],
            (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9, (int)pid,
            rec_signals ? ", interrupted" : "");
    if (lost)
        fprintf(stderr, "heapledger record: LTTng lost %llu packets\n", (unsigned long long)lost);

    char db[4096];
    if (a.out)
        snprintf(db, sizeof db, "%s", a.out);
    else {
        const char *base = strrchr(a.argv[0], '/');
        snprintf(db, sizeof db, "heapledger-%s-%d.db", base ? base + 1 : a.argv[0], (int)pid);
    }
    char cmdline[4096] = "";
    size_t off = 0;
    for (char **p = a.argv; *p && off < sizeof cmdline - 1; p++)
        off += (size_t)snprintf(cmdline + off, sizeof cmdline - off, "%s%s", p == a.argv ? "" : " ",
                                *p);
    char options[4096];
    hl_record_options(options, sizeof options, a.options, a.stacks);
    int ok =
        record_ingest(&a, trace, db, cmdline, options, code, discarded, kernel, &keep_trace) == 0;
    if (kernel) hl_kernel_free(kernel);
    if (keep_trace)
        fprintf(stderr, "  %-12s %s\n", "trace", trace);
    else
        nftw(trace, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    if (!ok && code == 0) return HL_EXIT_TOOL;
    return code;
}
