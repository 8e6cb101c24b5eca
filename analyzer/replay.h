/* analyzer/replay.h — what-if replay: re-run a recorded process's allocations, reallocs and
 * frees, in their recorded order, on an in-process heap object (hl_heap_create) with other
 * options, and analyse the replay with the same metrics as a recording.
 *
 * Not replayable: frees of pointers never seen allocated (skipped and counted), alignment of
 * memalign-family calls (the database keeps no alignment: replayed as malloc), threads (the
 * replay is single-threaded, in the recorded global order). Recorded failures are retried.
 * With the recording's own options the replay must reproduce the recorded live set exactly:
 * same blocks, requested and usable sizes (and offsets in a fixed arena).
 */
#ifndef HL_REPLAY_H
#define HL_REPLAY_H

#include <sqlite3.h>
#include <stddef.h>

#include "report.h"

typedef struct hl_replay_opts_s {
    const char *options; /* HEAPLEDGER_OPTIONS syntax; NULL: the recording's options */
    int64_t arena_size;  /* > 0 overrides arena=, 0 = as the options say */
    int64_t pid;         /* process to replay; 0 = the one with the most blocks */
    const char *extra;   /* more options parsed after those (e.g. "rotate=1"), NULL none */
    int quick;           /* stop at the first failure and take no arena map (--fit trials) */
} hl_replay_opts_t;

/* NULL with a message on error (bad options, heap creation, database). */
hl_report_t *hl_replay(sqlite3 *db, const char *path, const hl_replay_opts_t *o, char *err,
                       size_t errlen);

/* `replay --fit`: the smallest arena, a multiple of `step` bytes, in which every allocation
 * that succeeded in the recording succeeds in the replay: found by doubling from 64 KiB,
 * then bisection; `size` fits and `size - step` was replayed and does not (or the heap
 * refuses an arena that small). Success need not be monotone in the arena size: this is the
 * boundary bisection found, below which no tried size fitted. */
typedef struct hl_fit_s {
    char *options; /* the configuration (resolved, formatted) */
    uint64_t size; /* 0: does not fit up to max_tried */
    uint64_t step;
    uint64_t max_tried;
    unsigned trials; /* replays run */
    uint64_t peak_R; /* the recording's peak of requested live bytes (a lower bound) */
} hl_fit_t;
int hl_replay_fit(sqlite3 *db, const char *path, const hl_replay_opts_t *o, uint64_t step,
                  hl_fit_t *out, char *err, size_t errlen);

/* `replay --matrix`: the recording in the arena of o->arena_size under the options plus
 * each of baseline, harden=1, rotate=1, rotate=1,harden=1; each run `repeat` times (the
 * median throughput counts). */
#define HL_MATRIX_ROWS 4
typedef struct hl_matrix_row_s {
    const char *label; /* "baseline", "harden=1", … */
    char *options;     /* resolved, formatted */
    int fits;          /* no allocation failed that succeeded in the recording */
    uint64_t failures;
    int64_t fail_seq;
    uint64_t fail_size;
    double util_fail;      /* requested live / arena at the first failure, -1 none */
    double util_peak;      /* peak requested live / arena */
    uint64_t ops;          /* heap calls */
    double ops_per_kcycle; /* median over the repeats */
    uint64_t lat[5];       /* alloc+realloc+free cycles p01 p25 p50 p75 p99 (median run) */
} hl_matrix_row_t;
int hl_replay_matrix(sqlite3 *db, const char *path, const hl_replay_opts_t *o, int repeat,
                     hl_matrix_row_t rows[HL_MATRIX_ROWS], char *err, size_t errlen);
void hl_matrix_free(hl_matrix_row_t rows[HL_MATRIX_ROWS]);

#endif
