/* tracer/record_reaper.h — the process that cleans up after a `heapledger record` that died.
 *
 * hl_reaper_start() forks a small process (in its own process group, ignoring the terminal's
 * signals) that holds the read end of a pipe whose only writer is record. Record tells it
 * what it creates as it goes (one line each):
 *
 *   trace DIR      a temporary trace directory to remove
 *   kept DIR       keep the trace directory after all (trace chunks were stored in the
 *                  database, record_rotate.h: the chunks not stored yet stay for collect)
 *   stored DIR     a trace chunk below the kept directory is committed to the database
 *                  (record deletes it next, unless --keep-trace)
 *   sessiond PID   the private session daemon (record_ns.h, sessiond.h); 0 once record
 *                  reaps it itself (its pid may then be reused)
 *   home DIR       a private LTTNG_HOME to remove
 *   marker STR     the NAME=VALUE marker in the traced program's environment
 *   done           record finished its own cleanup: exit without doing anything
 *
 * When the pipe reaches end-of-file without "done" (record was killed, even by SIGKILL),
 * the reaper:
 *   1. kills (SIGKILL) every process of the recording: the processes in record's private
 *      mount namespace (root), and those whose environment carries the marker (everyone),
 *      until none is left;
 *   2. kills the private session daemon and its descendants (the consumer daemon);
 *   3. removes the temporary trace directory (unless kept) and the private LTTNG_HOME; a kept
 *      one loses the last chunk stored (it is in the database), and goes too when no other
 *      trace is left in it (no CTF metadata file: killed just after a rotation, every closed
 *      chunk stored and the new one not written yet), so that the directory it names is
 *      always one that `collect --all` takes;
 *   4. says so on stderr and exits.
 * A --keep-trace directory is the user's: it is left with whatever reached it.
 */
#ifndef HL_RECORD_REAPER_H
#define HL_RECORD_REAPER_H

#include <sys/types.h>

typedef struct hl_reaper_s {
    int fd;    /* write end of the pipe, -1 = no reaper */
    pid_t pid; /* the reaper */
} hl_reaper_t;

/* Start the reaper. Returns 0, or -1 (errno) when it could not be started. */
int hl_reaper_start(hl_reaper_t *r);
/* Tell the reaper about something to clean up (a line "what value"). */
void hl_reaper_note(hl_reaper_t *r, const char *what, const char *value);
void hl_reaper_note_pid(hl_reaper_t *r, const char *what, pid_t pid);
/* Record cleaned up by itself: the reaper exits without acting; waits for it. */
void hl_reaper_done(hl_reaper_t *r);

#endif
