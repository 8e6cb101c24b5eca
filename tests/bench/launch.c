/* Benchmark launcher: run a command, report its wall time and peak RSS.
 *
 * usage: launch REPORT_FILE COMMAND [ARGS…]
 *   Forks, execs COMMAND (stdin, stdout, stderr inherited), waits for it with wait4 and
 *   writes "<wall_ns> <maxrss_kib> <exit_status> <cpu_ns> <minor_faults>" to REPORT_FILE,
 *   where exit_status is the exit code, or 128 + signal number, and cpu_ns the user + system
 *   CPU time of the command (the stable figure on a shared machine). Exits with the same
 *   status.
 *   Why a launcher: ru_maxrss of a child counts the memory it inherited at fork, so a child
 *   forked by the (large) runner would report the runner's RSS; this program is small.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fputs("usage: launch REPORT_FILE COMMAND [ARGS...]\n", stderr);
        return 2;
    }
    long long t0 = now_ns();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "launch: fork: %s\n", strerror(errno));
        return 2;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        fprintf(stderr, "launch: cannot run %s: %s\n", argv[2], strerror(errno));
        _exit(127);
    }
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "launch: wait4: %s\n", strerror(errno));
            return 2;
        }
    long long wall = now_ns() - t0;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    FILE *f = fopen(argv[1], "w");
    if (!f) {
        fprintf(stderr, "launch: cannot write %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    long long cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
                    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
    fprintf(f, "%lld %ld %d %lld %ld\n", wall, ru.ru_maxrss, code, cpu, ru.ru_minflt);
    fclose(f);
    return code;
}
