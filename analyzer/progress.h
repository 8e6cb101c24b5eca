/* analyzer/progress.h — a one-line progress display on stderr, only when it is a terminal.
 * Updates at most five times a second; hl_progress_done() erases the line. */
#ifndef HL_PROGRESS_H
#define HL_PROGRESS_H

#include <stdint.h>

typedef struct hl_progress_s {
    int on; /* stderr is a terminal (or HEAPLEDGER_PROGRESS=1 forces it) */
    const char *what;
    double t_start, t_last;
} hl_progress_t;

void hl_progress_begin(hl_progress_t *p, const char *what);
/* Reads the clock: call it every few thousand events. done/total in any unit. */
void hl_progress_update(hl_progress_t *p, uint64_t done, uint64_t total);
void hl_progress_done(hl_progress_t *p);

#endif
