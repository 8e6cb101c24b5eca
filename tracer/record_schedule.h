/* tracer/record_schedule.h — when `heapledger record` closes a trace chunk: a small one first,
 * larger ones later.
 *
 * Nothing can be stored before the first chunk closes, so its size is the store's start:
 * with LTTng's own size schedule (decided on the consumer daemon's 1 s monitor samples) the
 * first 64 MiB chunk of the 10 M-event benchmark closed 1.6 s after the first event and a
 * core stood idle meanwhile. record closes the chunks itself instead: every 100 ms (the
 * rotor's watch thread, record_rotate.h) it adds up the files of the chunk being filled and
 * asks the session daemon to rotate (session.h, hl_session_rotate) once they hold
 *
 *     first, 2 × first, 4 × first, … up to max (HEAPLEDGER_CHUNK_BYTES, default 64 MiB)
 *
 * (first: HEAPLEDGER_FIRST_CHUNK_BYTES, default 16 MiB, never above max). Small chunks cost
 * their fixed part more (a decoder process, the reader's set-up, a commit: ~40 ms of CPU
 * each), so only the first few are small; a program that writes less than `first` never
 * rotates. No rotation is asked while one is in progress, nor while the program is paused
 * (record_rotate.h: LTTng completes none then). When a rotation cannot be asked for, LTTng's
 * size schedule at max takes over for the rest of the run.
 *
 * Threads: hl_rsched_tick makes liblttng-ctl calls, which is not thread-safe: only the watch
 * thread calls it, and record's main thread makes its own calls (stop, destroy) only once
 * that thread ended (hl_rotor_watch_end).
 */
#ifndef HL_RECORD_SCHEDULE_H
#define HL_RECORD_SCHEDULE_H

#include "session.h"

#include <stdint.h>

/* Default size of the first chunk. */
#define HL_RSCHED_FIRST_BYTES (16ull << 20)

typedef struct hl_rsched_s {
    hl_session_t *s; /* the session (its output directory: s->dir) */
    uint64_t next;   /* the chunk being filled closes at this many bytes */
    uint64_t max;    /* chunks grow up to this (HEAPLEDGER_CHUNK_BYTES) */
    unsigned asked;  /* rotations asked for */
    int fallback;    /* asking failed: LTTng's size schedule closes the chunks */
    int rotating;    /* a rotation asked for was in progress at the last look */
    char err[512];   /* why (fallback) */
} hl_rsched_t;

/* The first chunk's size: HEAPLEDGER_FIRST_CHUNK_BYTES (bytes; K, M, G suffixes; at least
 * 1 MiB) or the default, at most max. (uint64_t)-1 with a message printed when the variable is
 * malformed. */
uint64_t hl_rsched_first_bytes(uint64_t max);
void hl_rsched_init(hl_rsched_t *r, hl_session_t *s, uint64_t first, uint64_t max);
/* Look at the chunk being filled; ask for a rotation when it is large enough. Returns 1 when
 * the rotation asked for before has completed since the last look (a closed chunk waits in
 * archives/: the caller wakes the store), else 0. */
int hl_rsched_tick(hl_rsched_t *r);

#endif
