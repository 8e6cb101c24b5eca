/* tracer/bpf/attach.h — `heapledger attach`: what attach.c collects and attach_db.c writes.
 *
 * A session turns the stream of malloc-family calls (struct hl_ucall) into block lifetimes
 * as the run database defines them (schemas/heapledger.sql): one block per allocation, ended
 * by its free or realloc, frees of unknown pointers as orphan_free rows. No paths (0) and no
 * cycles (NULL): uprobes see calls, not allocator internals; usable = size.
 */
#ifndef HL_ATTACH_H
#define HL_ATTACH_H

#include "events.h"
#include "ptrmap.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HL_ASTACK_DEPTH 32

typedef struct hl_ablock_s {
    uint64_t ptr, size;
    uint64_t alloc_seq, alloc_ts, free_seq, free_ts;
    uint32_t alloc_tid, free_tid;
    int32_t alloc_stack, free_stack; /* index into stacks, -1 none */
    int64_t prev;                    /* index of the block a realloc replaced, -1 none */
    uint32_t flags;                  /* schema block.flags: 1 failed 2 from realloc 4 ended by
                                        realloc 8 end inferred */
    uint8_t ended;
} hl_ablock_t;

typedef struct hl_aorphan_s {
    uint64_t seq, ts, ptr;
    uint32_t tid;
    int32_t stack;
} hl_aorphan_t;

typedef struct hl_astack_s {
    uint64_t caller; /* return address of the call */
    int32_t bpf_id;  /* stack-trace map id, -1 none */
    uint32_t depth;
    uint64_t ips[HL_ASTACK_DEPTH]; /* [0] = caller, then the frame-pointer walk */
} hl_astack_t;

/* An executable file mapping of the target, from /proc/PID/maps. */
typedef struct hl_amap_s {
    uint64_t start, end, off;
    char *path;
} hl_amap_t;

typedef struct hl_attach_s {
    pid_t pid, ppid;
    char comm[64];
    char cmdline[1024];
    char library[512]; /* object whose malloc family was probed */
    uint64_t start_ts, end_ts, seq, events, dropped;
    hl_ablock_t *blocks;
    size_t nblocks, capblocks;
    hl_aorphan_t *orphans;
    size_t norphans, caporphans;
    hl_astack_t *stacks;
    size_t nstacks, capstacks;
    hl_ptrmap_t live;   /* ptr -> block index of live blocks */
    hl_ptrmap_t stkidx; /* stack key -> stack index */
    hl_amap_t *maps;
    size_t nmaps;
    uint32_t tids[256]; /* threads seen (first 256) */
    size_t ntids;
    int oom;
} hl_attach_t;

/* Apply one call, in ring-buffer order. */
void hl_attach_apply(hl_attach_t *a, const struct hl_ucall *c);

/* Read the executable mappings of a->pid (replacing earlier ones). Returns 0 or -1. */
int hl_attach_read_maps(hl_attach_t *a);

/* Write the run database (created fresh; force replaces an existing file). Returns 0, or -1
 * with a message in err. */
int hl_attach_write_db(const hl_attach_t *a, const char *path, int force, char *err, size_t errlen);

void hl_attach_fini(hl_attach_t *a);

#endif
