/* tests/bpf/krun.c — run a program under the kernel-event API exactly as the recorder does.
 *
 *   krun [--off] [--db FILE] -- PROGRAM [ARGS…]
 *
 * Forks, holds the child on a pipe before exec, calls hl_kernel_start(child) (unless --off),
 * releases the child, waits for it, stops, and stores the events into a fresh run database
 * (--db). Prints "krun: events=N dropped=D start_ms=S stop_ms=T" on stderr. Exit status: the
 * program's, or 70 when kernel events could not start (message on stderr), or 71 when storing
 * failed.
 */
#include "bpf/kernel.h"
#include "db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#pragma weak hl_db_create /* tracer/db.c may not be in a partial build */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    int off = 0, i = 1;
    const char *db_path = NULL;
    for (; i < argc && strcmp(argv[i], "--"); i++) {
        if (!strcmp(argv[i], "--off"))
            off = 1;
        else if (!strcmp(argv[i], "--db") && i + 1 < argc)
            db_path = argv[++i];
        else {
            fprintf(stderr, "usage: krun [--off] [--db FILE] -- PROGRAM [ARGS...]\n");
            return 2;
        }
    }
    if (i + 1 >= argc) {
        fprintf(stderr, "usage: krun [--off] [--db FILE] -- PROGRAM [ARGS...]\n");
        return 2;
    }
    int gate[2];
    if (pipe(gate) < 0) return perror("pipe"), 1;
    pid_t child = fork();
    if (child < 0) return perror("fork"), 1;
    if (child == 0) {
        char c;
        close(gate[1]);
        if (read(gate[0], &c, 1) < 0) _exit(127);
        close(gate[0]);
        execvp(argv[i + 1], argv + i + 1);
        perror(argv[i + 1]);
        _exit(127);
    }
    close(gate[0]);
    char err[512];
    hl_kernel_t *k = NULL;
    double t0 = now_ms();
    if (!off && !(k = hl_kernel_start(child, err, sizeof err)))
        fprintf(stderr, "krun: kernel events unavailable: %s\n", err);
    double t_start = now_ms() - t0;
    close(gate[1]); /* release the child */
    int status = 0;
    waitpid(child, &status, 0);
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (!off && !k) return 70;
    if (k) {
        t0 = now_ms();
        hl_kernel_stop(k);
        double t_stop = now_ms() - t0;
        hl_kernel_stats_t s;
        hl_kernel_stats(k, &s);
        fprintf(stderr, "krun: events=%llu dropped=%llu start_ms=%.1f stop_ms=%.1f\n",
                (unsigned long long)s.events, (unsigned long long)s.dropped, t_start, t_stop);
        if (db_path) {
            sqlite3 *db = hl_db_create ? hl_db_create(db_path, 1, err, sizeof err) : NULL;
            if (!hl_db_create) snprintf(err, sizeof err, "no run-database support in this build");
            if (!db) {
                fprintf(stderr, "krun: %s\n", err);
                return 71;
            }
            sqlite3_close(db);
            if (hl_kernel_store(k, db_path, err, sizeof err) < 0) {
                fprintf(stderr, "krun: %s\n", err);
                return 71;
            }
        }
        hl_kernel_free(k);
    }
    return rc;
}
