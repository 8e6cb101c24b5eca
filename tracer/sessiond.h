/* tracer/sessiond.h — a private lttng-sessiond for one `heapledger record`.
 *
 * Every recording gets its own session daemon, so that it holds only the processes it
 * started and a traced program writes only into its own recording's buffers
 * (docs/record.md, "Isolation"). liblttng-ust registers every process with two daemons:
 * the "global" one at /var/run/lttng/lttng-ust-sock-8 and the per-user one at
 * $LTTNG_HOME/.lttng/lttng-ust-sock-8 (both, also for root); liblttng-ctl talks to the
 * global one when run as root (or in the tracing group), else to the per-user one.
 *
 *   root      record_ns.h first gives record (and so the daemon and the program) a private
 *             mount namespace with a fresh tmpfs on /var/run/lttng: the private daemon is
 *             the "global" daemon of that namespace, the machine's shared daemon is not
 *             reachable from it. LTTNG_HOME is /var/run/lttng/home in that tmpfs.
 *   non-root  LTTNG_HOME is a fresh private directory (mkdtemp, 0700) and the tracing
 *             group is disabled for liblttng-ctl; the program still registers with the
 *             machine's root daemon if one runs (a root session tracing every user's
 *             heapledger:* events would see it).
 *
 * The daemon runs in the foreground as record's child (not --daemonize), so record knows
 * its pid and notices when it dies; for root it gets a mount namespace of its own with a
 * private /dev/shm, so its "wait" shared-memory flag (/dev/shm/lttng-ust-wait-8) never
 * touches the shared daemon's. Its output goes to a log inside the private directory; on
 * failure its last lines are quoted in the error.
 *
 * The binary is $HEAPLEDGER_LTTNG_SESSIOND if set (tests use it to simulate a missing or
 * broken daemon), else `lttng-sessiond` from PATH.
 */
#ifndef HL_SESSIOND_H
#define HL_SESSIOND_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct hl_sessiond_s {
    pid_t pid;           /* the private lttng-sessiond (record's child), 0 = none */
    pid_t consumerd;     /* its consumer daemon, once hl_sessiond_consumerd found it */
    int isolated;        /* 1: private mount namespace (root), 0: private LTTNG_HOME only */
    int own_home;        /* home was created by hl_sessiond_start (removed at stop) */
    char home[PATH_MAX]; /* LTTNG_HOME of record, the daemon and the program */
    char log[PATH_MAX];  /* the daemon's stdout/stderr */
    const char *bin;     /* daemon binary */
} hl_sessiond_t;

/* Prepare the private LTTNG_HOME (and set it in record's environment). isolated says
 * whether record_ns.h gave us a private /var/run/lttng. Returns 0, or -1 with a message. */
int hl_sessiond_prepare(hl_sessiond_t *d, int isolated, char *err, size_t errlen);

/* Start the private daemon (d->pid is set once its exec succeeded); then wait until it
 * answers (stopping it when it does not). Both return 0, or -1 with a one-line message (no
 * newline) saying what failed and what to do. */
int hl_sessiond_start(hl_sessiond_t *d, char *err, size_t errlen);
int hl_sessiond_wait_ready(hl_sessiond_t *d, char *err, size_t errlen);

/* Pid of the daemon's user-space consumer daemon (lttng-consumerd -u), 0 if none runs;
 * remembered in d->consumerd. */
pid_t hl_sessiond_consumerd(hl_sessiond_t *d);

/* Has the daemon exited? (reaps it; *status gets its wait status). */
int hl_sessiond_exited(hl_sessiond_t *d, int *status);

/* Ask the daemon to exit (SIGTERM) without waiting: its shutdown then overlaps the ingest;
 * hl_sessiond_stop() collects it. */
void hl_sessiond_terminate(hl_sessiond_t *d);

/* Stop the daemon (SIGTERM, then SIGKILL after a few seconds), kill its consumer daemon if
 * that outlived it, and remove the private home. Safe to call when it was never started. */
void hl_sessiond_stop(hl_sessiond_t *d);

#endif
