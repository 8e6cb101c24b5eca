/* tracer/sessiond.c — find or start the LTTng session daemon (see sessiond.h). */
#include "sessiond.h"

#include <errno.h>
#include <fcntl.h>
#include <lttng/lttng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long a freshly started daemon may take to answer. */
#define HL_SESSIOND_WAIT_MS 10000

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* Run `bin --daemonize` (it returns once the daemon is up) with stdout/stderr to a
 * log; returns its exit status, or -1 with errno when it could not be run. */
static int sessiond_spawn(const char *bin, const char *log)
{
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        /* No kernel tracer here: the LTTng kernel modules are not needed by heapledger. */
        if (geteuid() == 0)
            execlp(bin, bin, "--daemonize", "--no-kernel", (char *)NULL);
        else
            execlp(bin, bin, "--daemonize", (char *)NULL);
        _exit(errno == ENOENT ? 127 : 126);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int hl_sessiond_ensure(char *err, size_t errlen)
{
    if (lttng_session_daemon_alive() == 1) return 1;
    const char *bin = getenv("HEAPLEDGER_LTTNG_SESSIOND");
    if (!bin || !*bin) bin = "lttng-sessiond";
    char log[64];
    snprintf(log, sizeof log, "/tmp/heapledger-sessiond-%d.log", (int)geteuid());
    int rc = sessiond_spawn(bin, log);
    if (rc == 127 || (rc < 0 && errno == ENOENT)) {
        snprintf(err, errlen,
                 "no LTTng session daemon is running and '%s' was not found "
                 "(install lttng-tools, or start lttng-sessiond yourself)",
                 bin);
        return -1;
    }
    if (rc != 0) {
        snprintf(err, errlen,
                 "no LTTng session daemon is running and starting '%s --daemonize' failed "
                 "(status %d, see %s)",
                 bin, rc, log);
        return -1;
    }
    for (int waited = 0; waited < HL_SESSIOND_WAIT_MS; waited += 50) {
        if (lttng_session_daemon_alive() == 1) return 2;
        sleep_ms(50);
    }
    snprintf(err, errlen, "started '%s --daemonize' but it did not answer within %d s (see %s)",
             bin, HL_SESSIOND_WAIT_MS / 1000, log);
    return -1;
}
