/* analyzer/report.h — the analysis of one run: what every renderer (text, JSON, HTML), diff
 * and replay print. Filled by the metrics accumulator (metrics.h); definitions in
 * docs/metrics.md.
 *
 * Byte quantities over time: R requested, U usable (R <= U), H held from the OS (or the
 * arena). Fractions are in [0, 1]; a fraction that cannot be computed is -1.
 */
#ifndef HL_REPORT_H
#define HL_REPORT_H

#include <sqlite3.h>
#include <stdint.h>

#include "frag.h"
#include "pctl.h"
#include "rundb.h"

#define HL_TL_SAMPLES   200 /* timeline points */
#define HL_SIZE_BUCKETS 18  /* requested size: <=16, <=32, ..., <=1M (2^20), >1M */
#define HL_LIFE_BUCKETS 10  /* <1us, <10us, ..., <10s, >=10s, then "live at end" */
#define HL_CYC_HIST     40  /* cycle histogram per path: bucket b holds [2^(b-1), 2^b) */
#define HL_MAX_PATHS    64
#define HL_NCLASSES     32

typedef struct hl_sample_s {
    int64_t ts;       /* ns since the start of the run */
    uint64_t R, U, H; /* at the end of the sample interval */
    uint64_t R_max;   /* largest R inside the interval */
    double external;  /* mid-tier external fragmentation, -1 unknown */
} hl_sample_t;

typedef struct hl_path_stat_s {
    int op;   /* hl_op_t */
    int path; /* hl_path_t (or an unknown id) */
    uint64_t count;
    double share;                         /* count / operations of this op */
    double p01, p25, p50, p75, p99, mean; /* cycles */
    double ns_p50;                        /* p50 in ns (tsc_hz), -1 unknown */
    double weighted; /* share * mean: the path's part of the op's mean cycles */
    uint64_t timed;  /* operations with a cycle count */
    uint64_t hist[HL_CYC_HIST];
} hl_path_stat_t;

typedef struct hl_size_stat_s {
    uint64_t lo, hi; /* requested bytes in [lo, hi]; hi = UINT64_MAX for the last */
    uint64_t count, bytes;
    double alloc_p50, alloc_p99, free_p50, free_p99, pair_p50, pair_p99; /* cycles */
} hl_size_stat_t;

typedef struct hl_class_stat_s {
    int cls;
    uint32_t slot;
    uint64_t allocs;
    uint64_t used; /* live slots at the end */
    uint64_t peak; /* most live slots at once */
    uint64_t held; /* slots in the slabs needed for the peak (estimate, see metrics.md) */
    uint64_t live_requested;
} hl_class_stat_t;

typedef struct hl_site_s {
    int64_t stack;                    /* -1: no stack recorded */
    uint64_t count, bytes;            /* allocations in the window and their requested bytes */
    uint64_t live_blocks, live_bytes; /* live at the end: leaks */
    uint64_t temporary;
    int supp; /* hl_supp_kind_t (suppress.h): 0, or its live blocks are suppressed */
} hl_site_t;

typedef struct hl_leak_size_s {
    uint64_t size, blocks, bytes;
} hl_leak_size_t;

typedef struct hl_error_rec_s {
    int64_t ts, pid, tid;
    char *kind, *details;
    uint64_t addr, size;
    int64_t stack, alloc_stack, free_stack;
} hl_error_rec_t;

/* Page faults attributed to one allocator path, size class or tier (docs/metrics.md). */
typedef struct hl_kfault_s {
    uint64_t pages; /* faulting pages that lay in a live block of this group */
    uint64_t runs;  /* fault runs with at least one such page */
} hl_kfault_t;

/* Allocator regions of one purpose (os_region), over the run. */
typedef struct hl_kregion_s {
    uint64_t mappings, bytes; /* regions mapped and their bytes (every mapping counts) */
    uint64_t touched;         /* bytes faulted in while mapped (at most bytes per region) */
    uint64_t never_touched;   /* bytes - touched: held but never touched */
} hl_kregion_t;

#define HL_KREGIONS 5 /* hl_region_t: other, slab_segment, tlsf_pool, large, arena */

/* Cycles of one call site on one path (sites.h; docs/metrics.md, "Cycles per call site"). */
typedef struct hl_site_cycles_s {
    int op, path;
    int64_t stack;         /* the site: stack id of the call, -1 none recorded */
    uint64_t count;        /* operations of this site on this path */
    uint64_t timed;        /* those with a cycle count */
    uint64_t cycles;       /* their cycles summed */
    double share;          /* cycles / all cycles of the path (-1: the path has none) */
    double p50, p99, mean; /* cycles per operation (0 when timed = 0) */
} hl_site_cycles_t;

/* One of the slowest operations (most cycles). */
typedef struct hl_slow_op_s {
    int op, path;
    int64_t cycles;
    int64_t seq, ts; /* ts in ns since the start of the run */
    int64_t pid, tid;
    uint64_t size; /* requested bytes (a free: of the block freed) */
    int64_t stack;
} hl_slow_op_t;

#define HL_SLOWEST_MAX 100 /* slowest operations kept; the renderers show --top of them */

/* The kernel's view of the run (kernel_event, heapledger record --kernel); NULL in the report
 * when the run has no kernel events. Definitions in docs/metrics.md, "Kernel view". */
typedef struct hl_kernel_report_s {
    uint64_t events;  /* kernel events in the window */
    uint64_t dropped; /* meta.kernel_dropped: records the kernel could not deliver */
    uint64_t page;    /* page size assumed (4096) */
    /* RSS (sampled: kind 'rss'; summed over the processes). */
    uint64_t rss_samples;
    uint64_t rss_peak, anon_peak; /* largest sampled RSS and its anonymous part */
    int64_t rss_peak_ts;          /* ns since the start */
    uint64_t rss_end, anon_end;
    uint64_t rss[HL_TL_SAMPLES], anon[HL_TL_SAMPLES]; /* last sample at each timeline edge */
    int has_rss[HL_TL_SAMPLES];                       /* 0: no sample yet at that edge */
    /* Page faults. */
    uint64_t fault_runs, fault_pages;
    uint64_t pages_in_blocks, runs_in_blocks; /* pages that lay in a live block */
    uint64_t pages_heap_free;                 /* in an allocator region, in no live block */
    uint64_t pages_outside;                   /* outside the allocator's regions */
    hl_kfault_t path[HL_MAX_PATHS];           /* by the block's allocation path */
    hl_kfault_t cls[HL_NCLASSES];             /* tiny blocks by size class */
    hl_kfault_t tier[4];                      /* by tier (hl_tier_t) */
    /* Held but never touched, per region purpose. */
    hl_kregion_t region[HL_KREGIONS];
    uint64_t mapped_bytes, never_touched_bytes; /* all purposes */
    /* At the peak of R. */
    int peak_has_rss;
    uint64_t peak_rss, peak_anon;
    uint64_t peak_heap_resident; /* resident bytes of the allocator's regions */
    uint64_t peak_res_blocks;    /* resident bytes inside live blocks */
    uint64_t peak_U, peak_H;
    uint64_t frag_rss_cost;  /* heap resident - resident in live blocks: held free, touched */
    uint64_t live_untouched; /* U - resident in live blocks: live bytes not resident */
    int64_t other_rss;       /* RSS - heap resident: not the heap (code, stacks, buffers) */
    uint64_t held_untouched; /* H - heap resident: held, not resident */
} hl_kernel_report_t;

/* What a replay adds (heapledger replay): the what-if outcome and the live-set comparison
 * with the recording. */
typedef struct hl_replay_info_s {
    char *options;       /* options of the replay heap */
    uint64_t arena_size; /* 0: the heap grows from the OS */
    int64_t pid;         /* process replayed */
    uint64_t operations; /* malloc + realloc + free calls made */
    uint64_t skipped;    /* recorded operations not replayable (orphan frees) */
    uint64_t failures;   /* allocations that failed in the replay but not in the recording */
    uint64_t recorded_failures_ok; /* recorded failures that succeeded in the replay */
    int has_failure;               /* first failure that the recording did not have */
    int64_t fail_seq, fail_ts, fail_block;
    uint64_t fail_size, fail_R, fail_free, fail_largest;
    double fail_util;
    int64_t fail_stack;              /* allocation stack of the failing request, -1 none */
    struct hl_arena_map_s *fail_map; /* arena mode: the arena at the failure (arenamap.h) */
    uint64_t op_cycles;              /* cycles inside the replayed heap calls */
    uint64_t lat[5];                 /* alloc+realloc+free cycles: p01 p25 p50 p75 p99 */
    /* Live set at the end: recorded vs replayed. */
    uint64_t rec_blocks, rec_R, rec_U;
    uint64_t rep_blocks, rep_R, rep_U;
    uint64_t heap_used;       /* hl_heap_info().used at the end */
    uint64_t usable_mismatch; /* live blocks whose usable size differs from the recording */
    uint64_t offset_mismatch; /* arena mode: live blocks at another offset in the arena */
    int offsets_compared;     /* the recording had an arena region to compare offsets with */
    int live_match;           /* 1: same blocks, sizes, usable sizes (and offsets) */
} hl_replay_info_t;

typedef struct hl_report_s {
    hl_run_t run;
    sqlite3 *db;             /* for symbolising stacks; owned by the caller */
    int64_t pid;             /* filter, 0 = all */
    int64_t from_ns, to_ns;  /* window relative to the start, -1 = open */
    int approximate;         /* events were discarded: counts are lower bounds */
    const char *held_source; /* "os_region", "arena" or "usable" (H unknown: U used) */
    int held_incomplete;     /* os_region accounted for less than U at times: H >= U used */
    const char *source;      /* "recorded" or "replay" */

    /* Counts of the window (definitions: docs/metrics.md, "Counts"). events: ledger events
     * analysed (block starts and ends, frees of unknown blocks, OS maps and unmaps), not
     * trace events (run.events). Each call is counted once, by the call made: allocs
     * (malloc, calloc, memalign & co., failed ones too), reallocs (every realloc call),
     * frees (of blocks seen allocated), orphan_frees (free or realloc(p, 0) of blocks
     * allocated before tracing began); failed is part of allocs + reallocs; started: block
     * lifetimes started. */
    uint64_t events, allocs, frees, orphan_frees, reallocs, failed, started;
    uint64_t bytes_allocated;
    double duration_s;

    /* At the peak of R. */
    uint64_t peak_R, peak_U, peak_H;
    int64_t peak_ts, peak_seq;
    double util_peak, internal_peak, external_peak;
    hl_frag_t frag_peak;
    uint64_t max_U, max_H;
    double util_max; /* largest R/H at any event */
    /* At the end of the window. */
    uint64_t end_R, end_U, end_H;
    double util_end, internal_end, external_end;
    hl_frag_t frag_end;
    /* First failed allocation. */
    int has_failure;
    int64_t fail_ts, fail_seq;
    uint64_t fail_size, fail_R;
    double fail_util;

    hl_sample_t samples[HL_TL_SAMPLES];
    int nsamples;

    hl_path_stat_t *paths; /* sorted: op, then count descending */
    size_t npaths;
    uint64_t op_count[4];
    double op_mean[4];

    hl_size_stat_t sizes[HL_SIZE_BUCKETS];
    hl_class_stat_t classes[HL_NCLASSES];
    int nclasses;

    uint64_t lifetime[HL_LIFE_BUCKETS + 1]; /* last: live at the end */
    uint64_t temporary;                     /* freed before the thread allocated anything else */

    hl_site_t *sites; /* sorted by bytes descending */
    size_t nsites;
    uint64_t leak_blocks, leak_bytes; /* live at the end, suppressed blocks excluded */
    /* Live at the end in suppressed stacks, by hl_supp_kind_t: [1] the C runtime's by
     * design, [2] the --suppressions files' ([0] unused). */
    uint64_t supp_blocks[3], supp_bytes[3];
    hl_leak_size_t *leak_sizes; /* sorted by bytes descending */
    size_t nleak_sizes;

    hl_error_rec_t *errors;
    size_t nerrors;

    /* Cycles per call site and path (sites.h): sorted by op, then path (as paths), then
     * cycles descending; NULL / 0 when not computed (replay). */
    hl_site_cycles_t *site_cycles;
    size_t nsite_cycles;
    hl_slow_op_t *slowest; /* cycles descending, then seq; at most HL_SLOWEST_MAX */
    size_t nslowest;
    int has_site_cycles; /* 1: the two above were computed */

    hl_replay_info_t *replay;                /* NULL for a recorded run */
    hl_kernel_report_t *kernel;              /* NULL: the run has no kernel events */
    struct hl_leakclass_report_s *leakclass; /* leak scan classes (leakclass.h), NULL: none */
} hl_report_t;

void hl_report_free(hl_report_t *r);

/* Index of the size bucket of a request. */
int hl_size_bucket(uint64_t size);
/* Index of the lifetime bucket of a duration in ns. */
int hl_life_bucket(int64_t ns);
extern const char *const hl_life_labels[HL_LIFE_BUCKETS + 1];

#endif
