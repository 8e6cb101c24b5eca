/* tracer/sessiond.c — the private session daemon of one recording (see sessiond.h). */
#include "sessiond.h"
#include "fstree.h"
#include "procstat.h"
#include "record_ns.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <lttng/lttng.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long a freshly started daemon may take to answer. */
#define HL_SESSIOND_WAIT_MS 10000
/* How long it may take to exit after SIGTERM before it gets SIGKILL. */
#define HL_SESSIOND_STOP_MS 5000

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int hl_sessiond_prepare(hl_sessiond_t *d, int isolated, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->isolated = isolated;
    d->bin = getenv("HEAPLEDGER_LTTNG_SESSIOND");
    if (!d->bin || !*d->bin) d->bin = "lttng-sessiond";
    if (isolated) {
        /* In the namespace's own tmpfs: private by construction, gone with the namespace. */
        snprintf(d->home, sizeof d->home, "%s/home", HL_RECORD_RUNDIR);
        if (mkdir(d->home, 0700) && errno != EEXIST) {
            snprintf(err, errlen, "cannot create %s: %s", d->home, strerror(errno));
            return -1;
        }
    } else {
        /* Unix socket paths are limited to 108 bytes: a long $TMPDIR falls back to /tmp. */
        const char *tmp = getenv("TMPDIR");
        if (!tmp || !*tmp || strlen(tmp) > 40) tmp = "/tmp";
        snprintf(d->home, sizeof d->home, "%s/heapledger-lttng-XXXXXX", tmp);
        if (!mkdtemp(d->home)) {
            snprintf(err, errlen, "cannot create a private LTTng directory %s: %s", d->home,
                     strerror(errno));
            return -1;
        }
        d->own_home = 1;
        /* A user in the tracing group would otherwise be sent to the machine's root daemon
         * by liblttng-ctl; a group that does not exist turns that off. */
        lttng_set_tracing_group("heapledger-no-tracing-group");
    }
    if (snprintf(d->log, sizeof d->log, "%.4000s/lttng-sessiond.log", d->home) < 0) return -1;
    if (setenv("LTTNG_HOME", d->home, 1)) {
        snprintf(err, errlen, "cannot set LTTNG_HOME: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* The last line of the daemon's log that says something (for error messages). */
static void sessiond_log_tail(const hl_sessiond_t *d, char *out, size_t len)
{
    out[0] = 0;
    FILE *f = fopen(d->log, "re");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        /* The unprivileged daemon always complains about the open-files limit. */
        if (*line && !strstr(line, "open files limit")) snprintf(out, len, "%.300s", line);
    }
    fclose(f);
}

int hl_sessiond_start(hl_sessiond_t *d, char *err, size_t errlen)
{
    int errp[2];
    if (pipe2(errp, O_CLOEXEC)) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        close(errp[0]);
        /* Its own process group: a Ctrl-C at the terminal is for the program, not for the
         * daemon, which must outlive it long enough to flush the trace. */
        setpgid(0, 0);
        int fd = open(d->log, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0) dup2(null, 0);
        if (d->isolated && hl_record_private_shm()) {
            int e = errno;
            (void)!write(errp[1], &e, sizeof e);
            _exit(125);
        }
        /* No kernel tracer here: the LTTng kernel modules are not needed by heapledger. */
        if (geteuid() == 0)
            execlp(d->bin, d->bin, "--no-kernel", (char *)NULL);
        else
            execlp(d->bin, d->bin, (char *)NULL);
        int e = errno;
        (void)!write(errp[1], &e, sizeof e);
        _exit(e == ENOENT ? 127 : 126);
    }
    close(errp[1]);
    d->pid = pid;
    int e = 0;
    ssize_t n;
    while ((n = read(errp[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    close(errp[0]);
    if (n == (ssize_t)sizeof e) {
        int st;
        waitpid(pid, &st, 0);
        d->pid = 0;
        if (e == ENOENT)
            snprintf(err, errlen,
                     "cannot start a private LTTng session daemon: '%s' was not found "
                     "(install lttng-tools, or set HEAPLEDGER_LTTNG_SESSIOND to its path)",
                     d->bin);
        else
            snprintf(err, errlen, "cannot start a private LTTng session daemon '%s': %s", d->bin,
                     strerror(e));
        return -1;
    }
    return 0;
}

int hl_sessiond_wait_ready(hl_sessiond_t *d, char *err, size_t errlen)
{
    for (int waited = 0; waited < HL_SESSIOND_WAIT_MS; waited += 2) {
        int st;
        if (hl_sessiond_exited(d, &st)) {
            char tail[400];
            sessiond_log_tail(d, tail, sizeof tail);
            snprintf(err, errlen,
                     "the private LTTng session daemon '%s' exited at start (status %d)%s%s",
                     d->bin, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
                     *tail ? ": " : "", tail);
            return -1;
        }
        if (lttng_session_daemon_alive() == 1) return 0;
        sleep_ms(2);
    }
    snprintf(err, errlen, "the private LTTng session daemon '%s' did not answer within %d s",
             d->bin, HL_SESSIOND_WAIT_MS / 1000);
    hl_sessiond_stop(d);
    return -1;
}

pid_t hl_sessiond_consumerd(hl_sessiond_t *d)
{
    if (!d->pid) return 0;
    DIR *dir = opendir("/proc");
    if (!dir) return 0;
    pid_t found = 0;
    struct dirent *e;
    while (!found && (e = readdir(dir))) {
        pid_t pid = (pid_t)atoi(e->d_name), ppid;
        char comm[64];
        if (pid > 0 && hl_proc_stat(pid, &ppid, NULL, comm, sizeof comm) == 0 && ppid == d->pid &&
            strcmp(comm, "lttng-consumerd") == 0) {
            /* -u (user space, 64-bit) is the one that writes our trace. */
            char path[64], cmd[256];
            snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            ssize_t n = fd >= 0 ? read(fd, cmd, sizeof cmd - 1) : -1;
            if (fd >= 0) close(fd);
            for (ssize_t i = 0; i < n; i++)
                if (!cmd[i]) cmd[i] = ' ';
            if (n > 0) {
                cmd[n] = 0;
                if (strstr(cmd, " -u ") && strstr(cmd, "ustconsumerd64")) found = pid;
            }
        }
    }
    closedir(dir);
    d->consumerd = found;
    return found;
}

int hl_sessiond_exited(hl_sessiond_t *d, int *status)
{
    if (!d->pid) return 1;
    int st = 0;
    pid_t r = waitpid(d->pid, &st, WNOHANG);
    if (r == 0) return 0;
    if (status) *status = st;
    d->pid = 0;
    return 1;
}

void hl_sessiond_terminate(hl_sessiond_t *d)
{
    if (d->pid) kill(d->pid, SIGTERM);
}

void hl_sessiond_stop(hl_sessiond_t *d)
{
    if (d->pid) {
        kill(d->pid, SIGTERM);
        int waited = 0;
        while (!hl_sessiond_exited(d, NULL)) {
            if (waited == HL_SESSIOND_STOP_MS) kill(d->pid, SIGKILL);
            sleep_ms(5);
            if (waited <= HL_SESSIOND_STOP_MS) waited += 5;
        }
    }
    if (d->consumerd) { /* orphaned when the session daemon died: it has no more work */
        pid_t ppid;
        char comm[64];
        if (hl_proc_stat(d->consumerd, &ppid, NULL, comm, sizeof comm) == 0 &&
            strcmp(comm, "lttng-consumerd") == 0)
            kill(d->consumerd, SIGKILL);
        d->consumerd = 0;
    }
    if (d->own_home && d->home[0]) {
        hl_tree_remove(d->home);
        d->own_home = 0;
    }
}
