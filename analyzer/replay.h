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
} hl_replay_opts_t;

/* NULL with a message on error (bad options, heap creation, database). */
hl_report_t *hl_replay(sqlite3 *db, const char *path, const hl_replay_opts_t *o, char *err,
                       size_t errlen);

#endif
