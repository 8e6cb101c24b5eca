/* tracer/record_rotate.h — `heapledger record` stores its trace chunk by chunk while the
 * program runs.
 *
 * The session rotates on size (session.h, hl_session_rotate_on_size): LTTng closes the
 * current trace chunk into <trace>/archives/BEGIN-END-INDEX/ and fills the next meanwhile.
 * The rotor stores each closed chunk in index order into the run database
 * (ingest_chunks.h) and deletes it (unless --keep-trace), so the disk holds the database,
 * the chunk being filled and the closed chunks not stored yet (the backlog), never the whole
 * trace. record calls hl_rotor_poll from its wait loop (the program's exit and the daemons'
 * deaths are still seen between two chunks) and hl_rotor_finish once the session is
 * destroyed (LTTng archives the last chunk then; a session that never rotated left its
 * trace at <trace> itself, stored as one chunk).
 */
#ifndef HL_RECORD_ROTATE_H
#define HL_RECORD_ROTATE_H

#include "ingest_chunks.h"

#include <stdint.h>

/* Default chunk size (bytes written since the last rotation): large enough that the
 * per-chunk cost (a decoder process, babeltrace2's set-up, a commit) stays below 5 % of
 * a chunk's ingest, small enough that the backlog stays far below the 512 MiB disk budget.
 * HEAPLEDGER_CHUNK_BYTES overrides (0: no rotation, the whole trace is stored after the
 * run, as before). */
#define HL_ROTOR_CHUNK_BYTES (64ull << 20)

typedef struct hl_rotor_s {
    char dir[4096];              /* the session's output directory */
    hl_ingest_chunks_t *ing;     /* the database being filled */
    int keep;                    /* --keep-trace: stored chunks stay on disk */
    long next;                   /* index of the next chunk to store */
    int failed;                  /* storing failed: later chunks stay on disk */
    int damaged;                 /* a chunk was damaged (kept on disk) */
    int stopped;                 /* a signal stopped the ingest: later chunks stay on disk */
    unsigned deleted;            /* chunks deleted once stored */
    uint64_t peak_waiting_bytes; /* largest backlog seen (bytes of closed chunks) */
    char err[512];               /* the first failure or damage */
    /* Called once, before the first chunk is stored (record tells its reaper to keep the
     * trace directory from then on: the database no longer holds the whole recording). */
    void (*before_first)(void *arg);
    void *arg;
    int started; /* before_first was called */
} hl_rotor_t;

/* The chunk size to rotate at: HEAPLEDGER_CHUNK_BYTES (bytes; K, M, G suffixes) or the
 * default. Returns 0 when rotation is off, (uint64_t)-1 with a message printed when the
 * variable is malformed. */
uint64_t hl_rotor_chunk_bytes(void);
void hl_rotor_init(hl_rotor_t *r, const char *dir, hl_ingest_chunks_t *ing, int keep);
/* Store the oldest closed chunk waiting below dir/archives, if any. Returns how many more
 * wait (call again at once), 0 when none (or storing failed). */
unsigned hl_rotor_poll(hl_rotor_t *r);
/* After the session was destroyed: store what is left. */
void hl_rotor_finish(hl_rotor_t *r);

#endif
