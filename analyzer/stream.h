/* analyzer/stream.h — the events of a run database in time order, without loading the trace.
 *
 * A run database stores one row per block lifetime; its events are the allocation end
 * (block.alloc_seq), the free end (block.free_seq), frees of never-seen pointers
 * (orphan_free.seq) and OS map/unmap (os_region.seq). The stream reads blocks once, in
 * allocation order, keeps each free end until its turn (memory bounded by the live set) and
 * merges with the orphan and OS cursors by seq. Every free event carries its block's sizes,
 * so consumers need no map of live blocks to keep byte counts.
 */
#ifndef HL_STREAM_H
#define HL_STREAM_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

typedef enum hl_ev_kind_e {
    HL_EV_ALLOC = 0, /* a block lifetime starts (malloc, calloc, memalign, realloc's new side) */
    HL_EV_FREE,      /* a block lifetime ends (free, or realloc's old side: flags & 4) */
    HL_EV_ORPHAN,    /* free of a pointer never seen allocated */
    HL_EV_MAP,       /* memory mapped from the OS */
    HL_EV_UNMAP,     /* memory returned to the OS */
    HL_EV_KINDS
} hl_ev_kind_t;

/* os_region purposes. */
typedef enum hl_region_e {
    HL_REG_OTHER = 0,
    HL_REG_SLAB,      /* 'slab_segment' */
    HL_REG_TLSF_POOL, /* 'tlsf_pool' */
    HL_REG_LARGE,     /* 'large' */
    HL_REG_ARENA,     /* 'arena' */
} hl_region_t;

/* Block flags (schemas/heapledger.sql). */
#define HL_BF_FAILED       1
#define HL_BF_FROM_REALLOC 2
#define HL_BF_TO_REALLOC   4
#define HL_BF_END_INFERRED 8 /* no free seen: the pointer was allocated again */

typedef struct hl_event_s {
    hl_ev_kind_t kind;
    int64_t seq, ts;
    int64_t block;    /* block.id (ALLOC/FREE), else 0 */
    int64_t pid, tid; /* tid -1 when unknown */
    uint64_t ptr;     /* user pointer, or region address */
    uint64_t size;    /* requested bytes, or region length */
    uint64_t usable;
    int tier, cls;
    int path;            /* path id of this end, 0 when unknown */
    int64_t cycles;      /* -1 when unknown */
    int64_t stack;       /* stack id of this end, -1 when none */
    int64_t alloc_stack; /* FREE: the block's allocation stack */
    int flags;
    int64_t alloc_ts;     /* FREE: when the block was allocated */
    int64_t alloc_seq;    /* FREE: the block's alloc seq */
    int64_t alloc_cycles; /* FREE: cycles of the block's allocation, -1 unknown */
    int64_t prev_block;   /* ALLOC: block replaced through realloc, 0 none */
    hl_region_t purpose;  /* MAP/UNMAP */
} hl_event_t;

typedef struct hl_stream_s hl_stream_t;

/* Open a stream over all processes (pid <= 0) or one. by_index reads blocks through the
 * alloc_seq index instead of in rowid order (see stream.c). NULL with a message on error. */
hl_stream_t *hl_stream_open(sqlite3 *db, int64_t pid, int by_index, char *err, size_t errlen);
/* Next event in seq order: 1, 0 at the end, -1 on a database error (message in err), or
 * HL_STREAM_REORDER when rowid order turned out not to be allocation order: reopen with
 * by_index and start over. */
#define HL_STREAM_REORDER (-2)
int hl_stream_next(hl_stream_t *s, hl_event_t *ev, char *err, size_t errlen);
/* The same without the copy: *ev points into the stream, valid until the next call. */
int hl_stream_next_ref(hl_stream_t *s, const hl_event_t **ev, char *err, size_t errlen);
/* After hl_stream_next() returned 0 on a stream over every process: move out the blocks
 * that were never freed and did not fail, per process (pid -> blocks, pid -> requested
 * bytes; the maps become the caller's) and return 1. 0 (maps untouched) otherwise: the
 * stream was opened for one process or did not reach its end. */
struct hl_hmap_s;
int hl_stream_take_unfreed(hl_stream_t *s, struct hl_hmap_s *blocks, struct hl_hmap_s *bytes);
/* Free ends waiting in the stream (blocks allocated, not yet freed). */
size_t hl_stream_pending(const hl_stream_t *s);
void hl_stream_close(hl_stream_t *s);

hl_region_t hl_region_parse(const char *purpose);

#endif
