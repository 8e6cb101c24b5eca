/* tracer/ingest_decoder.c — babeltrace2 in a child process, behind a watchdog.
 *
 * libbabeltrace2 2.0.4 hangs forever on some truncated metadata and can crash (SEGV in
 * bt_field_integer_unsigned_set_value, an assertion in msg-iter.c) on corrupt streams, so a
 * trace from disk is never decoded in the heapledger process itself. hl_decoder_start()
 * starts a decoder child (`heapledger collect --decoder-child`, exec'd); the child probes each CTF
 * dir (in a grandchild, bounded: a dir whose metadata babeltrace2 hangs on is dropped, the others
 * are kept), salvages the damaged ones into the parent's private scratch directory
 * (ingest_salvage.c), runs the babeltrace2 graph (ingest_source.c) and writes every batch of
 * records to a pipe (ingest_queue.c in pipe mode, the wire format below), then an END
 * message with its status. hl_decoder_pump(), on the parent's decode thread, reads the pipe
 * straight into the queue's batches.
 *
 * Watchdog: the child writes at least once a second while it makes progress (a heartbeat
 * batch when nothing else is due, and one after each probe of a stream file). When the
 * pipe stays silent for the timeout while the parent is waiting for it (time the parent
 * spends waiting for the store does not count), the child is killed. A child that dies
 * (signal, or exit without END) or is killed ends the ingest as partial: what it delivered is
 * kept and the message says what happened after how many events. The child dies with its
 * parent (PR_SET_PDEATHSIG) and ignores SIGINT/SIGTERM (the parent decides: see
 * ingest_run.c).
 *
 * Live sessions (collectd) go through the same pipe: babeltrace2's live reader aborts on an
 * assertion (emit_inactivity_message() on a stream whose trace has no clock class yet) and
 * frees a stray pointer when a graph is destroyed after the relay daemon went away
 * (lttng_live_destroy_session → stream iterator → ctf_msg_iter_destroy → bt_bfcr_destroy),
 * which took collectd down with every session it followed. hl_decoder_start_live() runs the
 * reader of one session in a process of its own (`heapledger collectd --live-reader URL
 * PPID`, exec'd: collectd has threads, a fork could inherit a lock held by one of them), with
 * no watchdog (a live session may be silent for as long as it likes); its crash ends that
 * session's live view only, as a lost connection does.
 *
 * Wire format (host byte order, one pipe, one writer): a header {magic, type, n, events,
 * discarded, filtered, extbytes}; for a batch, n hl_rec_t whose `ext` member holds the
 * byte length of its blob instead of a pointer, then the blobs in record order; for the
 * end, one wire_end_t.
 */
#include "ctf_source.h"
#include "ingest_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define WIRE_MAGIC 0x484c4443u /* "HLDC" */

/* WIRE_BATCH_FLUSH: a batch after which the live reader has nothing for now (commit). */
enum { WIRE_BATCH = 1, WIRE_END = 2, WIRE_BATCH_FLUSH = 3 };

typedef struct wire_hdr_s {
    uint32_t magic, type;
    uint64_t n, events, discarded, filtered, extbytes;
} wire_hdr_t;

typedef struct wire_end_s {
    int32_t rc;
    char err[256];
    char lost[512];
} wire_end_t;

struct hl_decoder_s {
    pid_t pid;
    int fd;
    int timeout_s; /* 0: no watchdog (live) */
    int live;
    double cpu;
};

/* ---- child side ----------------------------------------------------------------------- */

/* Byte length of a record's ext blob (see the record kinds in ingest_internal.h). */
static size_t ext_len(const hl_rec_t *r)
{
    if (!r->ext) return 0;
    const char *s = r->ext;
    switch ((hl_rec_kind_t)r->kind) {
    case HL_REC_STACK:
    case HL_REC_LEAK_BLOCKS:
    case HL_REC_LEAK_SCAN:
        return (size_t)r->n * sizeof(uint64_t);
    case HL_REC_BUILD_ID:
        return r->n;
    case HL_REC_ERROR:
    case HL_REC_CONFIG: {
        size_t a = strlen(s) + 1;
        return a + strlen(s + a) + 1;
    }
    case HL_REC_OS_MAP:
    case HL_REC_OS_UNMAP:
    case HL_REC_MODULE:
    case HL_REC_THREAD:
        return strlen(s) + 1;
    default:
        return 0;
    }
}

/* writev until every byte of the n iovecs is written (they are consumed). */
static int writev_all(int fd, struct iovec *iov, int n)
{
    while (n) {
        ssize_t k = writev(fd, iov, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        size_t left = (size_t)k;
        while (n && left >= iov->iov_len) {
            left -= iov->iov_len;
            iov++;
            n--;
        }
        if (n) {
            iov->iov_base = (char *)iov->iov_base + left;
            iov->iov_len -= left;
        }
    }
    return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
    struct iovec iov = {(void *)p, n};
    return writev_all(fd, &iov, 1);
}

/* The blobs of a batch and the records' own pointers while their ext members carry the
 * lengths on the wire. */
static char *wblob;
static size_t wblobcap;
static struct wext_s {
    size_t i;
    void *p;
} * wext;
static size_t wextcap;

/* Fault injection for the tests: the child dies of SIGSEGV (HEAPLEDGER_TEST_DECODER_SEGV=N)
 * or stops making progress for good (HEAPLEDGER_TEST_DECODER_HANG=N) once it has sent N
 * events, as babeltrace2 does on some corrupt streams. 0: off. */
static uint64_t segv_after, hang_after, sent;

/* The records go to the pipe from the batch itself (no copy): only the records with a blob
 * (stacks, strings: rare) have their ext pointer swapped for its length while the batch is
 * written, and back after. */
int hl_wire_write_batch(int fd, hl_batch_t *b)
{
    sent += b->events;
    if (segv_after && sent >= segv_after) raise(SIGSEGV);
    if (hang_after && sent >= hang_after)
        for (;;)
            pause();
    size_t ext = 0, next = 0;
    for (size_t i = 0; i < b->n; i++)
        if (b->rec[i].ext) {
            ext += ext_len(&b->rec[i]);
            next++;
        }
    if (ext > wblobcap || next > wextcap) {
        char *nb = ext > wblobcap ? realloc(wblob, ext) : wblob;
        if (!nb) return -1;
        wblob = nb;
        if (ext > wblobcap) wblobcap = ext;
        struct wext_s *ne = next > wextcap ? realloc(wext, next * sizeof *wext) : wext;
        if (!ne) return -1;
        wext = ne;
        if (next > wextcap) wextcap = next;
    }
    wire_hdr_t h = {WIRE_MAGIC,   b->flush ? WIRE_BATCH_FLUSH : WIRE_BATCH,
                    b->n,         b->events,
                    b->discarded, b->filtered,
                    ext};
    char *blob = wblob;
    for (size_t i = 0, k = 0; k < next; i++) {
        hl_rec_t *r = &b->rec[i];
        if (!r->ext) continue;
        size_t l = ext_len(r);
        if (l) memcpy(blob, r->ext, l);
        blob += l;
        wext[k].i = i;
        wext[k++].p = r->ext;
        r->ext = (void *)(uintptr_t)l;
    }
    struct iovec iov[3] = {{&h, sizeof h}, {b->rec, b->n * sizeof(hl_rec_t)}, {wblob, ext}};
    int rc = writev_all(fd, iov, ext ? 3 : 2);
    for (size_t k = 0; k < next; k++) /* the pointers back: the caller frees them */
        b->rec[wext[k].i].ext = wext[k].p;
    return rc;
}

static int hb_fd = -1;

void hl_decoder_heartbeat(void)
{
    if (hb_fd < 0) return;
    wire_hdr_t h = {WIRE_MAGIC, WIRE_BATCH, 0, 0, 0, 0, 0};
    write_all(hb_fd, &h, sizeof h);
}

/* hl_source_probe_fs in a process of its own, bounded: babeltrace2 spins forever on some
 * truncated metadata, and one such CTF dir must not cost the others (per-pid buffers: one
 * dir per process). 0 accepted, -1 refused (salvage may help), -2 hung or crashed. */
static int probe_bounded(const char *dir, int timeout_s)
{
    pid_t pid = fork();
    if (pid == 0) _exit(hl_source_probe_fs(dir) == 0 ? 0 : 1);
    if (pid < 0) return hl_source_probe_fs(dir) == 0 ? 0 : -1;
    double t0 = hl_ingest_now();
    for (;;) {
        int st = 0;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) return WIFEXITED(st) ? (WEXITSTATUS(st) == 0 ? 0 : -1) : -2;
        if (w < 0 && errno != EINTR) return -1;
        if (hl_ingest_now() - t0 >= timeout_s) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            return -2;
        }
        hl_decoder_heartbeat();
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static void append_lost(char *lost, size_t lostlen, const char *dir)
{
    size_t l = strlen(lost);
    if (l + 3 >= lostlen) return;
    snprintf(lost + l, lostlen - l, "%s%s: babeltrace2 hangs or crashes on its metadata: dropped",
             l ? "; " : "", dir);
}

static void __attribute__((noreturn)) write_end(int fd, const wire_end_t *end)
{
    wire_hdr_t h = {WIRE_MAGIC, WIRE_END, 0, 0, 0, 0, sizeof *end};
    if (write_all(fd, &h, sizeof h) != 0 || write_all(fd, end, sizeof *end) != 0) _exit(1);
    _exit(0);
}

/* HEAPLEDGER_DECODER_REPORT=FILE: one line per decode appended to FILE, saying which
 * reader decoded the trace (and why babeltrace2 took over); for the tests. */
static void __attribute__((format(printf, 1, 2))) decoder_report(const char *fmt, ...)
{
    const char *path = getenv("HEAPLEDGER_DECODER_REPORT");
    if (!path || !*path) return;
    int f = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (f < 0) return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int l = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (l < 0) l = 0;
    if (l > (int)sizeof line - 2) l = (int)sizeof line - 2;
    line[l++] = '\n';
    if (write(f, line, (size_t)l) < 0) { /* best effort */
    }
    close(f);
}

static void __attribute__((noreturn))
child_main(int fd, char **dirs, size_t n, const char *scratch, pid_t parent)
{
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1); /* the parent died before the line above */
    hb_fd = fd;
    const char *segv = getenv("HEAPLEDGER_TEST_DECODER_SEGV");
    if (segv) segv_after = strtoull(segv, NULL, 10);
    const char *hang = getenv("HEAPLEDGER_TEST_DECODER_HANG");
    if (hang) hang_after = strtoull(hang, NULL, 10);
    /* babeltrace2's own fatal-error log on a corrupt trace says nothing the parent's message
     * does not; keep the user's terminal clean. */
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, 2);
        close(null);
    }
    wire_end_t end;
    memset(&end, 0, sizeof end);
    hl_queue_t q;
    if (hl_queue_init(&q) != 0) _exit(1);
    hl_queue_set_pipe(&q, fd);
    /* heapledger's own CTF reader first (ctf_source.c); babeltrace2 for what it refuses,
     * or for the rest of the trace from the event it could not decode. */
    uint64_t skip = 0;
    const char *which = getenv("HEAPLEDGER_DECODER");
    if (!which || strcmp(which, "babeltrace2")) {
        char cerr[512] = "";
        hl_ctf_source_t *cs = hl_ctf_source_open(dirs, n, &q, cerr, sizeof cerr);
        int cr = cs ? hl_ctf_source_run(cs, cerr, sizeof cerr) : 1;
        skip = cs ? hl_ctf_source_events(cs) : 0;
        hl_ctf_source_close(cs);
        if (!cs)
            decoder_report("babeltrace2 (heapledger's reader refused the trace: %s)", cerr);
        else if (cr == 1)
            decoder_report("babeltrace2 after %llu events of heapledger's reader: %s",
                           (unsigned long long)skip, cerr);
        else
            decoder_report("heapledger");
        if (cr != 1) {
            end.rc = cr == 0 ? 0 : -1;
            if (cr) snprintf(end.err, sizeof end.err, "ingest aborted");
            write_end(fd, &end);
        }
    } else {
        decoder_report("babeltrace2 (HEAPLEDGER_DECODER=babeltrace2)");
    }
    /* Damaged CTF dirs are replaced by a salvaged copy of what can be read; a dir whose
     * metadata babeltrace2 cannot even parse in bounded time is dropped. */
    char **use = calloc(n ? n : 1, sizeof *use);
    size_t m = 0;
    if (!use) _exit(1);
    const char *t = getenv("HEAPLEDGER_DECODE_TIMEOUT");
    int timeout_s = t && atoi(t) > 0 ? atoi(t) : HL_DECODE_TIMEOUT;
    for (size_t i = 0; i < n; i++) {
        int pr = probe_bounded(dirs[i], timeout_s);
        if (pr == 0) {
            use[m++] = dirs[i];
        } else if (pr == -2) {
            append_lost(end.lost, sizeof end.lost, dirs[i]);
        } else {
            char *sd = hl_salvage_ctf(dirs[i], scratch, end.lost, sizeof end.lost);
            use[m++] = sd && probe_bounded(sd, timeout_s) == 0 ? sd : dirs[i];
        }
        hl_decoder_heartbeat();
    }
    hl_source_t *s = NULL;
    if (!m)
        snprintf(end.err, sizeof end.err, "no readable CTF trace: %s", end.lost);
    else
        s = hl_source_open_fs(use, m, &q, end.err, sizeof end.err);
    if (!s) {
        end.rc = -1;
    } else {
        hl_source_skip(s, skip);
        end.rc = hl_source_run(s, NULL, end.err, sizeof end.err);
        hl_source_close(s);
    }
    write_end(fd, &end);
}

int hl_decoder_live_child(const char *url, int fd, pid_t parent)
{
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1); /* collectd died before the line above */
    hb_fd = fd;
    /* Fault injection for the tests: the first live reader (the one that creates FILE) dies of
     * SIGSEGV once it has sent N events (HEAPLEDGER_TEST_LIVE_READER_SEGV=N,
     * HEAPLEDGER_TEST_LIVE_READER_ONCE=FILE), as babeltrace2's live reader did. */
    const char *segv = getenv("HEAPLEDGER_TEST_LIVE_READER_SEGV");
    const char *once = getenv("HEAPLEDGER_TEST_LIVE_READER_ONCE");
    if (segv && once) {
        int o = open(once, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (o >= 0) {
            close(o);
            segv_after = strtoull(segv, NULL, 10);
        }
    }
    /* And the first live reader (the one that creates FILE) attaches to a session the relay
     * daemon does not have (URL-none: HEAPLEDGER_TEST_LIVE_READER_NOSESSION=FILE). */
    const char *nos = getenv("HEAPLEDGER_TEST_LIVE_READER_NOSESSION");
    char none[4096];
    if (nos) {
        int o = open(nos, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (o >= 0) {
            close(o);
            snprintf(none, sizeof none, "%s-none", url);
            url = none;
        }
    }
    wire_end_t end;
    memset(&end, 0, sizeof end);
    hl_queue_t q;
    if (hl_queue_init(&q) != 0) _exit(1);
    hl_queue_set_pipe(&q, fd);
    hl_source_t *s = hl_source_open_live_here(url, &q, end.err, sizeof end.err);
    if (!s) {
        end.rc = -1;
    } else {
        end.rc = hl_source_run(s, NULL, end.err, sizeof end.err);
        hl_source_close(s);
    }
    write_end(fd, &end);
}

/* ---- parent side ---------------------------------------------------------------------- */

#define LIVE_FD 3 /* the pipe's write end in the live reader */

/* A decoder and the pipe its child writes records into (p[0] ours, p[1] the child's, both
 * close-on-exec), or NULL with "cannot start WHAT: …" in err. */
static hl_decoder_t *decoder_new(int p[2], const char *what, char *err, size_t errlen)
{
    hl_decoder_t *d = calloc(1, sizeof *d);
    if (!d || pipe2(p, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "cannot start %s: %s", what, strerror(errno));
        free(d);
        return NULL;
    }
    fcntl(p[1], F_SETPIPE_SZ, 1 << 20); /* best effort: fewer wake-ups */
    return d;
}

hl_decoder_t *hl_decoder_start_live(const char *url, char *err, size_t errlen)
{
    int p[2];
    hl_decoder_t *d = decoder_new(p, "the live reader", err, errlen);
    if (!d) return NULL;
    d->live = 1;
    char ppid[32];
    snprintf(ppid, sizeof ppid, "%d", (int)getpid());
    char *argv[] = {"heapledger", "collectd", "--live-reader", (char *)url, ppid, NULL};
    posix_spawn_file_actions_t fa;
    int rc = posix_spawn_file_actions_init(&fa);
    /* dup2 onto itself clears FD_CLOEXEC (glibc); every other descriptor is close-on-exec,
     * so no other child (another session's reader, a collect) holds this pipe open. */
    if (!rc) rc = posix_spawn_file_actions_adddup2(&fa, p[1], LIVE_FD);
    pid_t pid = 0;
    if (!rc) rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (rc) {
        close(p[0]);
        free(d);
        snprintf(err, errlen, "cannot start the live reader: %s", strerror(rc));
        return NULL;
    }
    d->pid = pid;
    d->fd = p[0];
    return d;
}

/* The child exec'd (`heapledger collect --decoder-child PPID SCRATCH DIR...`, the pipe on
 * LIVE_FD), not forked: a fork of record's process, large once its ledger and SQLite's cache
 * have grown, marked every page of it copy-on-write for the child's lifetime, and the store's
 * two threads then took a page fault for each page they wrote during the whole decode
 * (docs/PERFORMANCE.md, "Every CPU second of a recording"). HEAPLEDGER_DECODER_FORK=1 forks
 * as before (for measurements); so does a failed spawn. */
static int spawn_child(int wfd, char **dirs, size_t n, const char *scratch, pid_t *pid)
{
    const char *f = getenv("HEAPLEDGER_DECODER_FORK");
    if (f && !strcmp(f, "1")) return -1;
    char ppid[32];
    snprintf(ppid, sizeof ppid, "%d", (int)getpid());
    char **argv = calloc(n + 6, sizeof *argv);
    if (!argv) return -1;
    argv[0] = "heapledger";
    argv[1] = "collect";
    argv[2] = "--decoder-child";
    argv[3] = ppid;
    argv[4] = (char *)scratch;
    for (size_t i = 0; i < n; i++)
        argv[5 + i] = dirs[i];
    posix_spawn_file_actions_t fa;
    int rc = posix_spawn_file_actions_init(&fa);
    if (!rc) rc = posix_spawn_file_actions_adddup2(&fa, wfd, LIVE_FD);
    if (!rc) rc = posix_spawn(pid, "/proc/self/exe", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    free(argv);
    return rc ? -1 : 0;
}

int hl_decoder_fs_child(int argc, char **argv)
{
    if (argc < 5 || (pid_t)atoi(argv[2]) != getppid()) {
        fprintf(stderr, "heapledger collect: --decoder-child is internal: the ingest starts it "
                        "itself (see heapledger collect --help for the options)\n");
        exit(2);
    }
    child_main(LIVE_FD, argv + 4, (size_t)(argc - 4), argv[3], (pid_t)atoi(argv[2]));
}

hl_decoder_t *hl_decoder_start(char **dirs, size_t n, const char *scratch, char *err, size_t errlen)
{
    int p[2];
    hl_decoder_t *d = decoder_new(p, "the trace decoder", err, errlen);
    if (!d) return NULL;
    const char *t = getenv("HEAPLEDGER_DECODE_TIMEOUT");
    d->timeout_s = t && atoi(t) > 0 ? atoi(t) : HL_DECODE_TIMEOUT;
    pid_t pid = -1;
    int e = 0;
    if (spawn_child(p[1], dirs, n, scratch, &pid) != 0) {
        fflush(NULL);
        pid_t parent = getpid();
        hl_bt_lock(); /* no babeltrace2 call of another thread is half done in the child */
        pid = fork();
        if (pid == 0) {
            hl_bt_unlock(); /* taken by this same thread before the fork */
            close(p[0]);
            child_main(p[1], dirs, n, scratch, parent);
        }
        e = errno;
        hl_bt_unlock();
    }
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        free(d);
        snprintf(err, errlen, "cannot start the trace decoder: %s", strerror(e));
        return NULL;
    }
    d->pid = pid;
    d->fd = p[0];
    return d;
}

typedef enum rd_e { RD_OK = 0, RD_EOF, RD_STALL, RD_STOP } rd_t;

/* Read n bytes; gives up when the child is silent for the timeout or *stop is set. */
static rd_t read_full(hl_decoder_t *d, void *buf, size_t n, const volatile sig_atomic_t *stop)
{
    char *c = buf;
    double last = hl_ingest_now();
    while (n) {
        if (stop && *stop) return RD_STOP;
        struct pollfd pf = {d->fd, POLLIN, 0};
        int pr = poll(&pf, 1, 200);
        if (pr < 0 && errno != EINTR) return RD_EOF;
        if (pr <= 0) {
            if (d->timeout_s > 0 && hl_ingest_now() - last >= d->timeout_s) return RD_STALL;
            continue;
        }
        ssize_t k = read(d->fd, c, n);
        if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (k <= 0) return RD_EOF;
        c += k;
        n -= (size_t)k;
        last = hl_ingest_now();
    }
    return RD_OK;
}

/* Reap the child (killing it first when kill_it) and note its CPU time. Returns its wait
 * status. */
static int reap(hl_decoder_t *d, int kill_it)
{
    if (d->pid <= 0) return 0;
    if (kill_it) kill(d->pid, SIGKILL);
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(d->pid, &status, 0, &ru) < 0 && errno == EINTR)
        ;
    d->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    d->pid = 0;
    return status;
}

static void push_last(hl_queue_t *q)
{
    hl_batch_t *b = hl_queue_get_empty(q);
    if (b) {
        b->last = 1;
        hl_queue_push(q, b);
    }
}

int hl_decoder_pump(hl_decoder_t *d, hl_queue_t *q, const volatile sig_atomic_t *stop, char *lost,
                    size_t lostlen, char *err, size_t errlen)
{
    uint64_t events = 0;
    int rc = -2; /* not ended yet */
    int ended = 0;
    rd_t why = RD_OK;
    char *ext = NULL;
    size_t extcap = 0;
    while (rc == -2) {
        wire_hdr_t h;
        if ((why = read_full(d, &h, sizeof h, stop)) != RD_OK) break;
        int flush = h.type == WIRE_BATCH_FLUSH;
        if (flush) h.type = WIRE_BATCH;
        if (h.magic != WIRE_MAGIC || (h.type == WIRE_BATCH && h.n > HL_BATCH_RECS) ||
            (h.type == WIRE_END && h.extbytes != sizeof(wire_end_t))) {
            why = RD_EOF;
            break;
        }
        if (h.type == WIRE_END) {
            wire_end_t e;
            if ((why = read_full(d, &e, sizeof e, stop)) != RD_OK) break;
            e.err[sizeof e.err - 1] = 0;
            e.lost[sizeof e.lost - 1] = 0;
            snprintf(err, errlen, "%s", e.err);
            snprintf(lost, lostlen, "%s", e.lost);
            rc = e.rc;
            ended = 1;
            break;
        }
        if (!flush && !h.n && !h.events && !h.discarded && !h.filtered) continue; /* heartbeat */
        hl_batch_t *b = hl_queue_get_empty(q);
        if (!b) { /* the store failed */
            rc = -1;
            snprintf(err, errlen, "ingest aborted");
            break;
        }
        b->events = h.events;
        b->discarded = h.discarded;
        b->filtered = h.filtered;
        if ((why = read_full(d, b->rec, h.n * sizeof(hl_rec_t), stop)) != RD_OK) {
            hl_queue_release(q, b);
            break;
        }
        if (h.extbytes > extcap) {
            free(ext);
            extcap = h.extbytes;
            ext = malloc(extcap);
        }
        if (h.extbytes && (!ext || (why = read_full(d, ext, h.extbytes, stop)) != RD_OK)) {
            if (why == RD_OK) why = RD_EOF;
            hl_queue_release(q, b);
            break;
        }
        size_t off = 0;
        for (size_t i = 0; i < h.n; i++) {
            size_t l = (size_t)(uintptr_t)b->rec[i].ext;
            b->rec[i].ext = NULL;
            if (!l || off + l > h.extbytes) continue;
            if ((b->rec[i].ext = malloc(l))) memcpy(b->rec[i].ext, ext + off, l);
            off += l;
        }
        b->n = h.n;
        b->flush = flush;
        events += h.events;
        hl_queue_push(q, b);
    }
    free(ext);
    int status = reap(d, !ended);
    if (rc == -2) {
        unsigned long long ev = (unsigned long long)events;
        if (why == RD_STOP) {
            snprintf(err, errlen, "stopped after %llu events", ev);
            rc = 2;
        } else if (why == RD_STALL) {
            snprintf(err, errlen,
                     "the trace decoder (babeltrace2) made no progress for %d s after %llu "
                     "events: stopped (a corrupt trace; HEAPLEDGER_DECODE_TIMEOUT=S sets the "
                     "limit)",
                     d->timeout_s, ev);
        } else if (WIFSIGNALED(status) && d->live) {
            snprintf(err, errlen, "babeltrace2's live reader crashed (%s) after %llu events",
                     strsignal(WTERMSIG(status)), ev);
        } else if (WIFSIGNALED(status)) {
            snprintf(err, errlen,
                     "the trace decoder (babeltrace2) crashed (%s) after %llu events: the "
                     "trace is corrupt",
                     strsignal(WTERMSIG(status)), ev);
        } else {
            snprintf(err, errlen,
                     "the trace decoder ended without a status (exit %d) after %llu "
                     "events",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1, ev);
        }
        if (rc != 2) rc = events ? 1 : -1;
    }
    push_last(q);
    return rc;
}

double hl_decoder_cpu(const hl_decoder_t *d)
{
    return d->cpu;
}

void hl_decoder_free(hl_decoder_t *d)
{
    if (!d) return;
    reap(d, 1);
    close(d->fd);
    free(d);
}
