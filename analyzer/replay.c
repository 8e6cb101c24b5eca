/* analyzer/replay.c — see replay.h. */
#include "replay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <x86intrin.h>

#include "arenamap.h"
#include "heapledger.h"
#include "hl_schema.h"
#include "hmap.h"
#include "metrics.h"
#include "progress.h"
#include "stream.h"

/* One replayed live block. */
typedef struct rblock_s {
    void *p;
    uint64_t size, usable;
    int tier, cls;
    int bad; /* 1: usable differs from the recording, 2: offset in the arena differs */
} rblock_t;

typedef struct replayer_s {
    hl_heap_t *heap;
    hl_metrics_t *m;
    hl_replay_info_t *info;
    hl_hmap_t live; /* recorded block id -> index in blocks */
    rblock_t *blocks;
    size_t nblocks, cap;
    uint32_t *freelist; /* recycled indices */
    size_t nfree, fcap;
    uint64_t before[HL_PATH_COUNT], after[HL_PATH_COUNT];
    uint64_t rec_base; /* recorded arena address, 0 unknown */
    char *rep_base;    /* replay arena */
    int quick;         /* no arena map */
    uint32_t *lat;     /* cycles of every heap call */
    size_t nlat, latcap;
} replayer_t;

static void note_cycles(replayer_t *rp, uint64_t c)
{
    rp->info->op_cycles += c;
    *HL_VEC_PUSH(rp->lat, rp->nlat, rp->latcap) = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

typedef struct map_arg_s {
    hl_arena_map_t *m;
    const char *base;
} map_arg_t;

static void map_block(const void *block, size_t bytes, int is_free, void *arg)
{
    map_arg_t *a = arg;
    uint64_t off = (uint64_t)((const char *)block - a->base);
    if (off < a->m->size) hl_arena_map_add(a->m, off, bytes, is_free);
}

/* The arena as it is now: its blocks in address order (one pool). */
static hl_arena_map_t *take_map(replayer_t *rp)
{
    hl_arena_map_t *m = hl_arena_map_new(rp->info->arena_size);
    if (!m) return NULL;
    map_arg_t a = {m, rp->rep_base};
    hl_heap_walk(rp->heap, map_block, &a);
    hl_arena_map_finish(m);
    return m;
}

static int tier_of_path(int path, int fallback)
{
    switch (path) {
    case HL_PATH_TINY_CACHE_HIT:
    case HL_PATH_TINY_REFILL:
    case HL_PATH_TINY_NEW_SLAB:
    case HL_PATH_TINY_CACHE_PUSH:
    case HL_PATH_TINY_FLUSH:
    case HL_PATH_TINY_DIRECT_FREE:
        return HL_TIER_TINY;
    case HL_PATH_TLSF:
    case HL_PATH_TLSF_SPLIT:
    case HL_PATH_TLSF_GROW:
    case HL_PATH_TLSF_FREE:
    case HL_PATH_TLSF_COALESCE:
        return HL_TIER_MID;
    case HL_PATH_LARGE_MMAP:
    case HL_PATH_LARGE_MUNMAP:
    case HL_PATH_LARGE_MREMAP:
        return HL_TIER_LARGE;
    default:
        return fallback;
    }
}

static int class_of_usable(uint64_t u)
{
    for (unsigned c = 0; c < HL_CLASS_COUNT; c++)
        if (hl_class_slot(c) - 1 == u) return (int)c;
    return -1;
}

/* The path the last operation took: a path of the wanted op if one moved, else the first
 * that moved, else 0. */
static int path_taken(replayer_t *rp, int want_op)
{
    hl_heap_path_counts(rp->heap, rp->after, HL_PATH_COUNT);
    int first = 0;
    for (int p = 1; p < (int)HL_PATH_COUNT; p++) {
        if (rp->after[p] == rp->before[p]) continue;
        if ((int)hl_path_op((unsigned)p) == want_op) return p;
        if (!first) first = p;
    }
    return first;
}

static size_t new_block(replayer_t *rp)
{
    if (rp->nfree) return rp->freelist[--rp->nfree];
    HL_VEC_PUSH(rp->blocks, rp->nblocks, rp->cap);
    return rp->nblocks - 1;
}

static void drop_block(replayer_t *rp, int64_t id, size_t ix)
{
    hl_hmap_del(&rp->live, (uint64_t)id, NULL);
    rp->blocks[ix].p = NULL;
    *HL_VEC_PUSH(rp->freelist, rp->nfree, rp->fcap) = (uint32_t)ix;
}

static void feed_free(replayer_t *rp, const hl_event_t *ev, const rblock_t *b, int path,
                      int64_t cycles, int flags)
{
    hl_event_t e = *ev;
    e.kind = HL_EV_FREE;
    e.ptr = (uint64_t)(uintptr_t)b->p;
    e.size = b->size;
    e.usable = b->usable;
    e.tier = b->tier;
    e.cls = b->cls;
    e.path = path;
    e.cycles = cycles;
    e.flags = flags;
    hl_metrics_event(rp->m, &e);
}

static void on_alloc(replayer_t *rp, const hl_event_t *ev)
{
    hl_replay_info_t *in = rp->info;
    int recorded_failed = ev->flags & HL_BF_FAILED;
    if (!recorded_failed) {
        in->rec_blocks++;
        in->rec_R += ev->size;
        in->rec_U += ev->usable;
    }
    uint64_t *oldix = ev->flags & HL_BF_FROM_REALLOC && ev->prev_block
                          ? hl_hmap_get(&rp->live, (uint64_t)ev->prev_block)
                          : NULL;
    size_t old = oldix ? (size_t)*oldix : 0;
    rblock_t oldb = oldix ? rp->blocks[old] : (rblock_t){0};
    hl_heap_path_counts(rp->heap, rp->before, HL_PATH_COUNT);
    uint64_t t0 = __rdtsc();
    void *p =
        oldix ? hl_heap_realloc(rp->heap, oldb.p, ev->size) : hl_heap_malloc(rp->heap, ev->size);
    uint64_t t1 = __rdtsc();
    in->operations++;
    note_cycles(rp, t1 - t0);
    int path = path_taken(rp, oldix ? HL_OP_REALLOC : HL_OP_ALLOC);
    hl_event_t e = *ev;
    e.path = path;
    e.cycles = (int64_t)(t1 - t0);
    if (!p) {
        if (!recorded_failed) {
            in->failures++;
            if (!in->has_failure) {
                hl_heap_info_t hi;
                hl_heap_info(rp->heap, &hi);
                in->has_failure = 1;
                in->fail_seq = ev->seq;
                in->fail_ts = ev->ts;
                in->fail_block = ev->block;
                in->fail_size = ev->size;
                in->fail_R = in->rep_R;
                in->fail_free = hi.free_mid + hi.free_tiny;
                in->fail_largest = hi.largest_free;
                in->fail_util = hi.held ? (double)in->rep_R / (double)hi.held : -1;
                in->fail_stack = ev->stack;
                if (rp->rep_base && !rp->quick) in->fail_map = take_map(rp);
            }
        }
        e.flags |= HL_BF_FAILED;
        e.ptr = 0;
        e.usable = 0;
        if (!path) e.path = HL_PATH_ALLOC_FAIL;
        hl_metrics_event(rp->m, &e);
        return;
    }
    if (recorded_failed) in->recorded_failures_ok++;
    if (oldix && recorded_failed) {
        /* The recording's realloc failed and kept the old block, which the recording frees
         * later under its own id: that id now names the moved block. */
        rblock_t *b = &rp->blocks[old];
        in->rep_R += ev->size - b->size;
        b->p = p;
        b->size = ev->size;
        in->rep_U -= b->usable;
        b->usable = hl_heap_usable_size(rp->heap, p);
        in->rep_U += b->usable;
        b->bad |= 1;
        return;
    }
    if (oldix) {
        /* The old side ends inside the realloc: its cycles are the realloc's. */
        feed_free(rp, ev, &oldb, 0, -1, HL_BF_TO_REALLOC);
        in->rep_blocks--;
        in->rep_R -= oldb.size;
        in->rep_U -= oldb.usable;
        drop_block(rp, ev->prev_block, old);
    }
    size_t ix = new_block(rp);
    rblock_t *b = &rp->blocks[ix];
    b->p = p;
    b->size = ev->size;
    b->usable = hl_heap_usable_size(rp->heap, p);
    b->tier = tier_of_path(path, ev->tier);
    b->cls = b->tier == HL_TIER_TINY ? class_of_usable(b->usable) : -1;
    b->bad = 0;
    if (!recorded_failed && b->usable != ev->usable) b->bad |= 1;
    if (!recorded_failed && rp->rec_base && rp->rep_base &&
        ev->ptr - rp->rec_base != (uint64_t)((char *)p - rp->rep_base))
        b->bad |= 2;
    *hl_hmap_put(&rp->live, (uint64_t)ev->block, 0, NULL) = ix;
    in->rep_blocks++;
    in->rep_R += b->size;
    in->rep_U += b->usable;
    e.ptr = (uint64_t)(uintptr_t)p;
    e.usable = b->usable;
    e.tier = b->tier;
    e.cls = b->cls;
    e.flags &= ~HL_BF_FAILED;
    hl_metrics_event(rp->m, &e);
}

static void on_free(replayer_t *rp, const hl_event_t *ev)
{
    hl_replay_info_t *in = rp->info;
    if (!(ev->flags & HL_BF_FAILED)) {
        in->rec_blocks--;
        in->rec_R -= ev->size;
        in->rec_U -= ev->usable;
    }
    if (ev->flags & HL_BF_TO_REALLOC) return; /* replayed by the realloc on the new side */
    uint64_t *ixp = hl_hmap_get(&rp->live, (uint64_t)ev->block);
    if (!ixp) return; /* failed in the replay */
    size_t ix = (size_t)*ixp;
    rblock_t b = rp->blocks[ix];
    hl_heap_path_counts(rp->heap, rp->before, HL_PATH_COUNT);
    uint64_t t0 = __rdtsc();
    hl_heap_free(rp->heap, b.p);
    uint64_t t1 = __rdtsc();
    in->operations++;
    note_cycles(rp, t1 - t0);
    feed_free(rp, ev, &b, path_taken(rp, HL_OP_FREE), (int64_t)(t1 - t0), ev->flags);
    in->rep_blocks--;
    in->rep_R -= b.size;
    in->rep_U -= b.usable;
    drop_block(rp, ev->block, ix);
}

static int64_t busiest_pid(sqlite3 *db)
{
    return hl_an_int(db, "SELECT pid FROM block GROUP BY pid ORDER BY count(*) DESC, pid LIMIT 1",
                     0);
}

static uint64_t recorded_arena(sqlite3 *db, int64_t pid)
{
    char q[160];
    snprintf(q, sizeof q,
             "SELECT addr FROM os_region WHERE purpose = 'arena' AND op = 'map' AND pid = %lld "
             "ORDER BY seq LIMIT 1",
             (long long)pid);
    return (uint64_t)hl_an_int(db, q, 0);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void latencies(replayer_t *rp)
{
    if (!rp->nlat) return;
    qsort(rp->lat, rp->nlat, sizeof *rp->lat, cmp_u32);
    static const double q[5] = {0.01, 0.25, 0.50, 0.75, 0.99};
    for (int i = 0; i < 5; i++)
        rp->info->lat[i] = rp->lat[(size_t)(q[i] * (double)(rp->nlat - 1))];
}

/* *no_heap: the heap refused these options (e.g. an arena below its minimum). */
static hl_report_t *replay_pass(sqlite3 *db, const char *path, const hl_replay_opts_t *o,
                                int by_index, int *reorder, int *no_heap, char *err, size_t errlen)
{
    int64_t pid = o->pid > 0 ? o->pid : busiest_pid(db);
    hl_run_t run;
    if (hl_run_load(db, path, pid, &run, err, errlen) < 0) return NULL;
    if (!run.has_blocks) {
        snprintf(err, errlen, "%s: empty run: the recording holds no allocation events%s", path,
                 o->pid > 0 ? " for this pid" : "");
        hl_run_free(&run);
        return NULL;
    }
    const char *opt_s = o->options ? o->options : run.options;
    hl_options_t ho;
    hl_options_default(&ho);
    char perr[256];
    if (hl_options_parse(&ho, opt_s, perr, sizeof perr) < 0) {
        snprintf(err, errlen, "bad options '%s': %s", opt_s, perr);
        hl_run_free(&run);
        return NULL;
    }
    if (o->extra && hl_options_parse(&ho, o->extra, perr, sizeof perr) < 0) {
        snprintf(err, errlen, "bad options '%s': %s", o->extra, perr);
        hl_run_free(&run);
        return NULL;
    }
    if (o->arena_size > 0) ho.arena_size = (size_t)o->arena_size;
    replayer_t rp = {0};
    size_t map_len = 0;
    if (ho.arena_size) {
        /* Our own mapping, page aligned like the allocator's, so offsets compare. */
        map_len = (ho.arena_size + 4095) & ~(size_t)4095;
        void *base =
            mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED) {
            snprintf(err, errlen, "cannot map an arena of %zu bytes: %s", ho.arena_size,
                     strerror(errno));
            hl_run_free(&run);
            return NULL;
        }
        rp.rep_base = base;
        ho.arena_base = base;
        rp.rec_base = recorded_arena(db, pid);
    }
    rp.heap = hl_heap_create(&ho);
    if (!rp.heap) {
        snprintf(err, errlen, "cannot create a heap with options '%s%s%s': %s", opt_s,
                 o->extra && *opt_s ? "," : "", o->extra ? o->extra : "", strerror(errno));
        *no_heap = 1;
        if (map_len) munmap(rp.rep_base, map_len);
        hl_run_free(&run);
        return NULL;
    }
    hl_replay_info_t *in = calloc(1, sizeof *in);
    char fmt[512];
    hl_options_format(&ho, fmt, sizeof fmt);
    in->options = strdup(fmt);
    in->arena_size = ho.arena_size;
    in->pid = pid;
    in->offsets_compared = rp.rec_base && rp.rep_base;
    in->fail_stack = -1;
    rp.info = in;
    rp.quick = o->quick;
    free(run.options);
    run.options = strdup(fmt);
    run.arena_size = (int64_t)ho.arena_size;
    run.processes = 1;
    rp.m = hl_metrics_new(&run, pid, -1, -1);

    hl_stream_t *s = hl_stream_open(db, pid, by_index, err, errlen);
    int rc = s ? 1 : -1;
    hl_progress_t prog;
    hl_progress_begin(&prog, "replaying");
    hl_event_t ev;
    uint64_t n = 0;
    hl_heap_info_t hi;
    while (s && (rc = hl_stream_next(s, &ev, err, errlen)) > 0) {
        switch (ev.kind) {
        case HL_EV_ALLOC:
            on_alloc(&rp, &ev);
            break;
        case HL_EV_FREE:
            on_free(&rp, &ev);
            break;
        case HL_EV_ORPHAN:
            in->skipped++;
            break;
        default:
            break;
        }
        if ((++n & 255) == 0) {
            hl_heap_info(rp.heap, &hi);
            hl_metrics_set_held(rp.m, hi.held);
        }
        if ((n & 0xffff) == 0) hl_progress_update(&prog, (uint64_t)ev.seq, 0);
        if (o->quick && in->has_failure) break;
    }
    hl_progress_done(&prog);
    hl_stream_close(s);
    *reorder = rc == HL_STREAM_REORDER;
    hl_heap_info(rp.heap, &hi);
    hl_metrics_set_held(rp.m, hi.held);
    hl_metrics_set_external(rp.m, hi.free_mid ? 1.0 - (double)hi.largest_free / (double)hi.free_mid
                                              : 0.0);
    in->heap_used = hi.used;
    const hl_hmap_slot_t *sl;
    for (size_t i = 0; hl_hmap_iter(&rp.live, &i, &sl);) {
        int bad = rp.blocks[sl->val].bad;
        in->usable_mismatch += (bad & 1) != 0;
        in->offset_mismatch += (bad & 2) != 0;
    }
    in->live_match = in->rec_blocks == in->rep_blocks && in->rec_R == in->rep_R &&
                     in->rec_U == in->rep_U && !in->usable_mismatch && !in->offset_mismatch;
    hl_report_t *r = hl_metrics_finish(rp.m);
    r->db = db;
    r->source = "replay";
    r->replay = in;
    if (in->has_failure) in->fail_ts -= r->run.start_ts;
    hl_heap_destroy(rp.heap);
    if (map_len) munmap(rp.rep_base, map_len);
    hl_hmap_free(&rp.live);
    latencies(&rp);
    free(rp.lat);
    free(rp.blocks);
    free(rp.freelist);
    if (rc < 0) {
        hl_report_free(r);
        return NULL;
    }
    return r;
}

hl_report_t *hl_replay(sqlite3 *db, const char *path, const hl_replay_opts_t *o, char *err,
                       size_t errlen)
{
    int reorder = 0, no_heap = 0;
    hl_report_t *r = replay_pass(db, path, o, 0, &reorder, &no_heap, err, errlen);
    if (!r && reorder) r = replay_pass(db, path, o, 1, &reorder, &no_heap, err, errlen);
    return r;
}

/* One replay in an arena of `size` bytes: 1 fits, 0 does not, -1 error. */
static int fit_trial(sqlite3 *db, const char *path, const hl_replay_opts_t *o, uint64_t size,
                     hl_fit_t *out, char *err, size_t errlen)
{
    hl_replay_opts_t t = *o;
    t.arena_size = (int64_t)size;
    t.quick = 1;
    int reorder = 0, no_heap = 0;
    hl_report_t *r = replay_pass(db, path, &t, 0, &reorder, &no_heap, err, errlen);
    if (!r && reorder) r = replay_pass(db, path, &t, 1, &reorder, &no_heap, err, errlen);
    out->trials++;
    if (size > out->max_tried) out->max_tried = size;
    if (!r) return no_heap ? 0 : -1;
    int fits = r->replay->failures == 0;
    if (!out->options) {
        /* The configuration without its arena= (the fit's answer is the arena). */
        char *opt = r->replay->options, *a = strstr(opt, "arena=");
        if (a) {
            char *e = strchr(a, ',');
            memmove(a, e ? e + 1 : a + strlen(a), strlen(e ? e + 1 : a + strlen(a)) + 1);
            size_t l = strlen(opt);
            if (l && opt[l - 1] == ',') opt[l - 1] = 0;
        }
        out->options = strdup(opt);
    }
    hl_report_free(r);
    return fits;
}

#define FIT_START ((uint64_t)64 << 10)
#define FIT_MAX   ((uint64_t)16 << 30)

int hl_replay_fit(sqlite3 *db, const char *path, const hl_replay_opts_t *o, uint64_t step,
                  hl_fit_t *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->step = step;
    int64_t pid = o->pid > 0 ? o->pid : busiest_pid(db);
    char q[512];
    /* Peak of requested live bytes in the recording (a lower bound for any arena). */
    snprintf(
        q, sizeof q,
        "SELECT max(s) FROM (SELECT sum(d) OVER (ORDER BY seq ROWS UNBOUNDED PRECEDING) s "
        "FROM (SELECT alloc_seq seq, size d FROM block WHERE pid = %lld AND NOT (flags & %d) "
        "UNION ALL SELECT free_seq, -size FROM block WHERE pid = %lld AND free_seq IS NOT NULL "
        "AND NOT (flags & %d)))",
        (long long)pid, HL_BF_FAILED, (long long)pid, HL_BF_FAILED);
    out->peak_R = (uint64_t)hl_an_int(db, q, 0);
    uint64_t lo = 0, hi = FIT_START;
    int rc;
    while ((rc = fit_trial(db, path, o, hi, out, err, errlen)) == 0) {
        lo = hi;
        if (hi >= FIT_MAX) return 0; /* does not fit: size stays 0 */
        hi *= 2;
    }
    if (rc < 0) return -1;
    while (hi - lo > step) {
        uint64_t mid = (lo + (hi - lo) / 2) / step * step;
        if (mid <= lo) mid = lo + step;
        rc = fit_trial(db, path, o, mid, out, err, errlen);
        if (rc < 0) return -1;
        if (rc)
            hi = mid;
        else
            lo = mid;
    }
    out->size = hi;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int hl_replay_matrix(sqlite3 *db, const char *path, const hl_replay_opts_t *o, int repeat,
                     hl_matrix_row_t rows[HL_MATRIX_ROWS], char *err, size_t errlen)
{
    static const char *const cfg[HL_MATRIX_ROWS] = {NULL, "harden=1", "rotate=1",
                                                    "rotate=1,harden=1"};
    memset(rows, 0, HL_MATRIX_ROWS * sizeof *rows);
    if (repeat < 1) repeat = 1;
    for (int i = 0; i < HL_MATRIX_ROWS; i++) {
        hl_matrix_row_t *row = &rows[i];
        row->label = cfg[i] ? cfg[i] : "baseline";
        hl_replay_opts_t t = *o;
        t.extra = cfg[i];
        t.quick = 0;
        double tp[64];
        int n = repeat > 64 ? 64 : repeat;
        for (int k = 0; k < n; k++) {
            hl_report_t *r = hl_replay(db, path, &t, err, errlen);
            if (!r) return -1;
            const hl_replay_info_t *in = r->replay;
            tp[k] = in->op_cycles ? (double)in->operations * 1000.0 / (double)in->op_cycles : 0;
            if (k == 0) {
                row->options = strdup(in->options);
                row->fits = in->failures == 0;
                row->failures = in->failures;
                row->fail_seq = in->has_failure ? in->fail_seq : -1;
                row->fail_size = in->has_failure ? in->fail_size : 0;
                row->util_fail = in->has_failure && in->arena_size
                                     ? (double)in->fail_R / (double)in->arena_size
                                     : -1;
                row->util_peak =
                    in->arena_size ? (double)r->peak_R / (double)in->arena_size : r->util_peak;
                row->ops = in->operations;
            }
            if (k == n / 2) memcpy(row->lat, in->lat, sizeof row->lat);
            hl_report_free(r);
        }
        qsort(tp, (size_t)n, sizeof *tp, cmp_double);
        row->ops_per_kcycle = tp[n / 2];
    }
    return 0;
}

void hl_matrix_free(hl_matrix_row_t rows[HL_MATRIX_ROWS])
{
    for (int i = 0; i < HL_MATRIX_ROWS; i++)
        free(rows[i].options);
}
