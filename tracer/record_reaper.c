/* tracer/record_reaper.c — cleanup after a record that died (record_reaper.h). */
#include "record_reaper.h"
#include "fstree.h"
#include "procstat.h"
#include "record_ns.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REAP_MAX_PIDS 4096
/* How long the reaper waits for killed processes to disappear. */
#define REAP_WAIT_MS 5000

typedef struct reap_state_s {
    char trace[4096];
    char kept[4096];   /* the trace directory kept: it holds trace chunks not stored yet */
    char stored[4096]; /* the last chunk committed to the database (deleted here if left) */
    char home[4096];
    char marker[128];
    pid_t sessiond;
    int isolated;
    unsigned long mntns;
} reap_state_t;

static void reap_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Does the process's initial environment hold the marker (a whole NAME=VALUE entry)? */
static int reap_has_marker(pid_t pid, const char *marker)
{
    if (!*marker) return 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/environ", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    static char buf[1 << 18];
    ssize_t n, len = 0;
    while (len < (ssize_t)sizeof buf - 1 &&
           (n = read(fd, buf + len, sizeof buf - 1 - (size_t)len)) > 0)
        len += n;
    close(fd);
    buf[len] = 0;
    size_t ml = strlen(marker);
    for (ssize_t i = 0; i < len;) {
        if (strncmp(buf + i, marker, ml) == 0 && buf[i + (ssize_t)ml] == 0) return 1;
        i += (ssize_t)strlen(buf + i) + 1;
    }
    return 0;
}

/* The parent of a running process; -1 when it is gone or a zombie (a zombie no longer runs). */
static pid_t reap_ppid(pid_t pid)
{
    pid_t pp;
    char state;
    if (hl_proc_stat(pid, &pp, &state, NULL, 0) != 0) return -1;
    return state == 'Z' ? -1 : pp;
}

/* Every live pid of the machine (but ours) into pids[]; returns the count. */
static int reap_pids(pid_t *pids, int max)
{
    DIR *d = opendir("/proc");
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    pid_t self = getpid();
    while (n < max && (e = readdir(d))) {
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid > 0 && pid != self) pids[n++] = pid;
    }
    closedir(d);
    return n;
}

/* One pass: SIGKILL every process of the recording. Returns how many were signalled for the
 * first time (their pids are added to killed[], *nkilled). */
static int reap_program_pass(const reap_state_t *s, pid_t *killed, int *nkilled)
{
    static pid_t pids[REAP_MAX_PIDS];
    int n = reap_pids(pids, REAP_MAX_PIDS), fresh = 0;
    for (int i = 0; i < n; i++) {
        if (pids[i] == s->sessiond || reap_ppid(pids[i]) < 0) continue;
        int ours = (s->isolated && s->mntns && hl_record_mntns(pids[i]) == s->mntns) ||
                   reap_has_marker(pids[i], s->marker);
        if (!ours || kill(pids[i], SIGKILL)) continue;
        int seen = 0;
        for (int j = 0; j < *nkilled && !seen; j++)
            seen = killed[j] == pids[i];
        if (!seen && *nkilled < REAP_MAX_PIDS) {
            killed[(*nkilled)++] = pids[i];
            fresh++;
        }
    }
    return fresh;
}

/* The session daemon and all its descendants (consumer daemons, their run-as helpers). */
static int reap_daemon(pid_t root)
{
    static pid_t pids[REAP_MAX_PIDS], tree[REAP_MAX_PIDS];
    int n = reap_pids(pids, REAP_MAX_PIDS), nt = 0;
    tree[nt++] = root;
    for (int grew = 1; grew;) {
        grew = 0;
        for (int i = 0; i < n; i++) {
            if (!pids[i]) continue;
            pid_t pp = reap_ppid(pids[i]);
            for (int j = 0; j < nt && pp > 0; j++)
                if (pp == tree[j] && nt < REAP_MAX_PIDS) {
                    tree[nt++] = pids[i];
                    pids[i] = 0;
                    grew = 1;
                    break;
                }
        }
    }
    for (int i = 0; i < nt; i++)
        kill(tree[i], SIGKILL);
    for (int waited = 0; waited < REAP_WAIT_MS; waited += 10) {
        int alive = 0;
        for (int i = 0; i < nt; i++)
            alive += reap_ppid(tree[i]) >= 0;
        if (!alive) break;
        reap_sleep_ms(10);
    }
    return nt;
}

/* The last chunk is stored from links to its files (record_rotate.h, hl_rotor_final): the
 * database's meta.last_chunk and the `stored` note name TRACE/.final-INDEX (HL_TRACE_FINAL), while
 * the same files are also the chunk directory the session was filling or, once the destroy archived
 * it, archives/BEGIN-END-INDEX. Those are in the database too: they go with the links. */
static void reap_final_chunk(const reap_state_t *s)
{
    const char *base = strrchr(s->stored, '/');
    base = base ? base + 1 : s->stored;
    long index = hl_trace_chunk_index(base);
    if (strncmp(base, HL_TRACE_FINAL, strlen(HL_TRACE_FINAL)) == 0 && index >= 0)
        hl_trace_remove_chunk(s->kept, index);
}

/* The trace directory that record kept once a chunk was stored: the last chunk committed goes
 * (it is in the database; record died before deleting it). Returns 1 when a trace is left
 * below it to store (a CTF metadata file), 0 when nothing is: every chunk that reached the disk
 * is in the database (record killed just after a rotation, the new chunk not written yet). */
static int reap_kept_left(const reap_state_t *s)
{
    struct stat st;
    if (s->stored[0] && strncmp(s->stored, s->kept, strlen(s->kept)) == 0 &&
        lstat(s->stored, &st) == 0)
        hl_tree_remove(s->stored);
    reap_final_chunk(s);
    return hl_tree_has_trace(s->kept);
}

static void __attribute__((noreturn)) reap_cleanup(reap_state_t *s)
{
    static pid_t killed[REAP_MAX_PIDS];
    int programs = 0;
    for (int waited = 0, quiet = 0; waited < REAP_WAIT_MS && quiet < 3; waited += 20) {
        int k = reap_program_pass(s, killed, &programs);
        quiet = k ? 0 : quiet + 1;
        reap_sleep_ms(20);
    }
    int daemons = s->sessiond > 0 ? reap_daemon(s->sessiond) : 0;
    /* The daemons are gone: the trace directory changes no more. */
    int nothing_left = s->kept[0] && s->stored[0] && !reap_kept_left(s);
    if (nothing_left) snprintf(s->trace, sizeof s->trace, "%s", s->kept);
    if (s->trace[0]) hl_tree_remove(s->trace);
    if (s->home[0]) hl_tree_remove(s->home);
    char msg[8400];
    int len = snprintf(msg, sizeof msg,
                       "heapledger record: record ended before it finished; killed %d traced "
                       "process%s and %d session daemon process%s%s%s\n",
                       programs, programs == 1 ? "" : "es", daemons, daemons == 1 ? "" : "es",
                       s->trace[0] ? ", removed " : "", s->trace);
    if (nothing_left && len > 0 && (size_t)len < sizeof msg)
        len += snprintf(msg + len, sizeof msg - (size_t)len,
                        "heapledger record: the database keeps the trace chunks stored so far; no "
                        "other chunk had reached the disk (ingest_status 'recording': the blocks "
                        "live then are not in it)\n");
    else if (s->kept[0] && len > 0 && (size_t)len < sizeof msg)
        len += snprintf(msg + len, sizeof msg - (size_t)len,
                        "heapledger record: the database keeps the trace chunks stored so far "
                        "(the last one is its meta.last_chunk: delete that one if it is still "
                        "there); the others are kept in %s (heapledger collect --all %s -o "
                        "FILE.db stores them)\n",
                        s->kept, s->kept);
    if (len > 0) (void)!write(2, msg, (size_t)len < sizeof msg ? (size_t)len : sizeof msg);
    _exit(0);
}

static void __attribute__((noreturn)) reap_main(int fd)
{
    reap_state_t s;
    memset(&s, 0, sizeof s);
    s.mntns = hl_record_mntns(0);
    FILE *in = fdopen(fd, "r");
    char line[4200];
    while (in && fgets(line, sizeof line, in)) {
        line[strcspn(line, "\n")] = 0;
        char *v = strchr(line, ' ');
        if (v) *v++ = 0;
        if (strcmp(line, "done") == 0) _exit(0);
        if (!v) continue;
        if (strcmp(line, "trace") == 0)
            snprintf(s.trace, sizeof s.trace, "%s", v);
        else if (strcmp(line, "kept") == 0) { /* instead of removing it */
            snprintf(s.kept, sizeof s.kept, "%s", v);
            s.trace[0] = 0;
        } else if (strcmp(line, "stored") == 0)
            snprintf(s.stored, sizeof s.stored, "%s", v);
        else if (strcmp(line, "home") == 0)
            snprintf(s.home, sizeof s.home, "%s", v);
        else if (strcmp(line, "marker") == 0)
            snprintf(s.marker, sizeof s.marker, "%s", v);
        else if (strcmp(line, "sessiond") == 0)
            s.sessiond = (pid_t)atoi(v);
        else if (strcmp(line, "isolated") == 0)
            s.isolated = atoi(v);
    }
    reap_cleanup(&s);
}

int hl_reaper_start(hl_reaper_t *r)
{
    r->fd = -1;
    r->pid = 0;
    int p[2];
    if (pipe2(p, O_CLOEXEC)) return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        /* Out of the terminal's process group and deaf to its signals: only the end of the
         * pipe (record gone) or "done" ends it. */
        setpgid(0, 0);
        const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE};
        for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
            signal(sigs[i], SIG_IGN);
        prctl(PR_SET_NAME, "heapledger-reap");
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
        }
        for (int fd = 3; fd < 1024; fd++)
            if (fd != p[0]) close(fd);
        reap_main(p[0]);
    }
    close(p[0]);
    r->fd = p[1];
    r->pid = pid;
    return 0;
}

void hl_reaper_note(hl_reaper_t *r, const char *what, const char *value)
{
    if (r->fd < 0) return;
    char line[4200];
    int n = snprintf(line, sizeof line, "%s %s\n", what, value);
    if (n > 0 && (size_t)n < sizeof line) (void)!write(r->fd, line, (size_t)n);
}

void hl_reaper_note_pid(hl_reaper_t *r, const char *what, pid_t pid)
{
    char v[32];
    snprintf(v, sizeof v, "%d", (int)pid);
    hl_reaper_note(r, what, v);
}

void hl_reaper_done(hl_reaper_t *r)
{
    if (r->fd < 0) return;
    (void)!write(r->fd, "done\n", 5);
    close(r->fd);
    r->fd = -1;
    int st;
    while (waitpid(r->pid, &st, 0) < 0 && errno == EINTR)
        ;
    r->pid = 0;
}
