/* tracer/ingest_ledger.c — interprets records into rows: the block-lifetime reconstruction.
 *
 * Blocks. An alloc starts a lifetime, kept in a hash table keyed by (process, pointer)
 * until the free that ends it; the block row is written then, so the store writes one row
 * per lifetime and memory is bounded by the live set. A realloc ends the old lifetime
 * (flags 4, free side = the realloc) and starts the next (flags 2, prev_block = old id);
 * realloc(NULL, n) only starts one, realloc(p, 0) returning NULL only ends one, and a failed
 * realloc (ptr 0, size > 0) writes a failed row and leaves the old block live. Failed
 * allocations (ptr 0) are rows with flags 1. A free of a pointer never seen allocated goes
 * to orphan_free (allocations made before tracing started). An alloc of a pointer that is
 * still live (its free was lost) ends the old lifetime with flags 8. Blocks live at the end
 * are written with free_* NULL. Block ids are given at allocation time (so a realloc can
 * point to its predecessor); rows are inserted when the lifetime ends.
 *
 * Stacks. Stack ids in events are per process; each (pid, id) gets a database-unique id
 * when its `stack` event arrives. An id resolves only inside its own process, with one
 * exception: a child forked without exec inherits its parent's stack table as it was at the
 * fork, so an id the child uses without describing it resolves to the parent's description
 * if the parent described it before the fork (its `config` event names the parent and the
 * fork time: fork_parent, fork_ts), and so on up the chain of forks. Anything else (an id
 * never described in the process or its ancestors, or described by the parent only after
 * the fork, when the two tables had diverged) is unknown: no stack, counted in
 * meta.unknown_stack_refs; never another process's. Frames are symbolised when the stack is
 * written (checkpoints), after the module maps of the statedump have arrived.
 */
#include "ingest_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PTR_MASK ((1ull << 48) - 1)

typedef struct live_s {
    int64_t id, prev_block;
    uint64_t ptr, size, usable, alloc_seq, alloc_ts;
    uint32_t pid, alloc_tid, alloc_cycles;
    int64_t alloc_stack;
    uint8_t tier, path, flags;
    int16_t cls;
} live_t;

typedef struct proc_s {
    uint32_t pid;
    uint32_t fork_parent; /* pid it was forked from without exec, 0 when not (or unknown) */
    uint64_t fork_ts;     /* trace clock time of that fork */
    char *procname, *options;
    uint64_t tsc_hz, start_ts, end_ts;
    int dirty;
} proc_t;

typedef struct pending_stack_s {
    int64_t id;
    uint32_t pid, depth;
    uint64_t *ips;
} pending_stack_t;

struct hl_ledger_s {
    hl_store_t *st;
    hl_symbols_t *syms;
    hl_ileak_t *leaks; /* leak scan results (ingest_leakclass.c) */
    /* live blocks */
    hl_map_t live; /* proc index << 48 | ptr → slot */
    live_t *slots;
    size_t nslots, capslots;
    uint32_t *freeslots;
    size_t nfree, capfree;
    int64_t next_block;
    /* processes */
    proc_t *procs;
    size_t nprocs, capprocs;
    hl_map_t pidx; /* pid → index in procs */
    uint32_t last_pid;
    size_t last_idx;
    /* stacks */
    hl_map_t stacks;   /* pid << 32 | local id → db id */
    hl_map_t stack_ts; /* pid << 32 | local id → time that id became valid in that process */
    int64_t next_stack;
    pending_stack_t *pend;
    size_t npend, cappend;
    /* run */
    char *version, *options;
    uint64_t tsc_hz, arena, first_ts, last_ts;
    int has_ts;
    uint64_t events, discarded, filtered, blocks, orphans, unknown_stacks;
    int raw_frames; /* frames from now on are stored unsymbolised (interrupted ingest) */
};

hl_ledger_t *hl_ledger_new(hl_store_t *st)
{
    hl_ledger_t *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    l->st = st;
    l->syms = hl_symbols_new();
    l->leaks = hl_ileak_new(hl_store_db(st));
    l->next_block = 1;
    l->next_stack = 1;
    if (!l->syms || !l->leaks || hl_map_init(&l->live, 1 << 16) || hl_map_init(&l->pidx, 16) ||
        hl_map_init(&l->stacks, 1024) || hl_map_init(&l->stack_ts, 1024)) {
        hl_ledger_free(l);
        return NULL;
    }
    return l;
}

void hl_ledger_free(hl_ledger_t *l)
{
    if (!l) return;
    hl_symbols_free(l->syms);
    hl_ileak_free(l->leaks);
    hl_map_destroy(&l->live);
    hl_map_destroy(&l->pidx);
    hl_map_destroy(&l->stacks);
    hl_map_destroy(&l->stack_ts);
    free(l->slots);
    free(l->freeslots);
    for (size_t i = 0; i < l->nprocs; i++) {
        free(l->procs[i].procname);
        free(l->procs[i].options);
    }
    free(l->procs);
    for (size_t i = 0; i < l->npend; i++)
        free(l->pend[i].ips);
    free(l->pend);
    free(l->version);
    free(l->options);
    free(l);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap * 2 : 64;
    while (c < need)
        c *= 2;
    void *np = realloc(*p, c * elem);
    if (!np) return -1;
    *p = np;
    *cap = c;
    return 0;
}

/* ---- processes ------------------------------------------------------------------------ */

static size_t proc_index(hl_ledger_t *l, uint32_t pid, uint64_t ts)
{
    if (l->nprocs && pid == l->last_pid) return l->last_idx;
    uint64_t *v = hl_map_find(&l->pidx, pid);
    size_t i;
    if (v) {
        i = (size_t)*v;
    } else {
        if (grow((void **)&l->procs, &l->capprocs, l->nprocs + 1, sizeof *l->procs) != 0) return 0;
        i = l->nprocs++;
        memset(&l->procs[i], 0, sizeof l->procs[i]);
        l->procs[i].pid = pid;
        l->procs[i].start_ts = ts;
        l->procs[i].dirty = 1;
        hl_map_put(&l->pidx, pid, i);
    }
    l->last_pid = pid;
    l->last_idx = i;
    return i;
}

/* ---- stacks --------------------------------------------------------------------------- */

static const proc_t *proc_find(const hl_ledger_t *l, uint32_t pid)
{
    uint64_t *v = hl_map_find(&l->pidx, pid);
    return v ? &l->procs[*v] : NULL;
}

#define FORK_DEPTH_MAX 64 /* chain of forks followed (and a guard against pid-reuse loops) */

static int64_t stack_of(hl_ledger_t *l, uint32_t pid, uint32_t local)
{
    if (!local) return 0;
    uint64_t key = (uint64_t)pid << 32 | local;
    uint64_t *v = hl_map_find(&l->stacks, key);
    if (v) return (int64_t)*v;
    /* Inherited: described by an ancestor before the fork that separated the tables. */
    uint64_t as_of = UINT64_MAX;
    const proc_t *p = proc_find(l, pid);
    for (int depth = 0; p && p->fork_parent && depth < FORK_DEPTH_MAX; depth++) {
        if (p->fork_ts < as_of) as_of = p->fork_ts;
        uint64_t pk = (uint64_t)p->fork_parent << 32 | local;
        uint64_t *pv = hl_map_find(&l->stacks, pk), *pt = hl_map_find(&l->stack_ts, pk);
        if (pv && pt && *pt <= as_of) {
            uint64_t id = *pv;
            /* The child's table holds it as the parent's did at the fork: cache it with the
             * time it became valid, for the child's own forks. */
            hl_map_put(&l->stacks, key, id);
            hl_map_put(&l->stack_ts, key, *pt);
            return (int64_t)id;
        }
        p = proc_find(l, p->fork_parent);
    }
    l->unknown_stacks++;
    return 0;
}

static void on_stack(hl_ledger_t *l, hl_rec_t *r)
{
    int64_t id = l->next_stack++;
    uint64_t key = (uint64_t)r->pid << 32 | r->stack;
    hl_map_put(&l->stacks, key, (uint64_t)id);
    if (!hl_map_find(&l->stack_ts, key)) hl_map_put(&l->stack_ts, key, r->ts);
    if (grow((void **)&l->pend, &l->cappend, l->npend + 1, sizeof *l->pend) != 0) return;
    l->pend[l->npend++] = (pending_stack_t){id, r->pid, r->n, r->ext};
    r->ext = NULL; /* owned by the pending list now */
}

static int write_stacks(hl_ledger_t *l)
{
    for (size_t i = 0; i < l->npend; i++) {
        pending_stack_t *p = &l->pend[i];
        if (hl_store_stack(l->st, p->id, p->pid, (int)p->depth) != 0) return -1;
        for (uint32_t d = 0; d < p->depth; d++) {
            hl_sym_t y = {0};
            /* Every frame is a return address, depth 0 too (the allocator's own frames are
             * not captured): look up the call instruction. */
            if (!l->raw_frames) hl_symbols_resolve(l->syms, p->pid, p->ips[d], 1, &y);
            if (hl_store_frame(l->st, p->id, (int)d, p->ips[d], &y) != 0) return -1;
        }
        free(p->ips);
        p->ips = NULL;
    }
    l->npend = 0;
    return 0;
}

/* ---- blocks --------------------------------------------------------------------------- */

static inline uint64_t live_key(size_t pidx, uint64_t ptr)
{
    return (uint64_t)pidx << 48 | (ptr & PTR_MASK);
}

static int end_block(hl_ledger_t *l, const live_t *b, const hl_rec_t *r, int free_path,
                     int64_t free_cycles, int64_t free_stack, int extra_flags)
{
    hl_block_row_t row = {
        .id = b->id,
        .pid = b->pid,
        .ptr = b->ptr,
        .size = b->size,
        .usable = b->usable,
        .tier = b->tier,
        .cls = b->cls,
        .alloc_seq = b->alloc_seq,
        .alloc_ts = b->alloc_ts,
        .alloc_tid = b->alloc_tid,
        .alloc_path = b->path,
        .alloc_cycles = b->alloc_cycles == UINT32_MAX ? -1 : (int64_t)b->alloc_cycles,
        .alloc_stack = b->alloc_stack,
        .has_free = r != NULL,
        .free_seq = r ? r->seq : 0,
        .free_ts = r ? r->ts : 0,
        .free_tid = r ? r->tid : 0,
        .free_path = free_path,
        .free_cycles = free_cycles,
        .free_stack = free_stack,
        .prev_block = b->prev_block,
        .flags = b->flags | extra_flags,
    };
    l->blocks++;
    return hl_store_block(l->st, &row);
}

/* Start a lifetime (ptr != 0) or write a failed allocation (ptr == 0). */
static int start_block(hl_ledger_t *l, size_t pidx, const hl_rec_t *r, uint64_t ptr, int flags,
                       int64_t prev, int64_t cycles)
{
    live_t b = {
        .id = l->next_block++,
        .prev_block = prev,
        .ptr = ptr,
        .size = r->b,
        .usable = r->c,
        .alloc_seq = r->seq,
        .alloc_ts = r->ts,
        .pid = r->pid,
        .alloc_tid = r->tid,
        .alloc_cycles = cycles < 0 ? UINT32_MAX : (uint32_t)cycles,
        .alloc_stack = stack_of(l, r->pid, r->stack),
        .tier = r->tier,
        .path = r->path,
        .flags = (uint8_t)flags,
        .cls = r->cls == 255 ? -1 : r->cls,
    };
    if (!ptr) {
        b.flags |= HL_BLOCK_FAILED;
        return end_block(l, &b, NULL, 0, -1, 0, 0);
    }
    uint64_t key = live_key(pidx, ptr);
    uint64_t *old = hl_map_find(&l->live, key);
    if (old) { /* still live: its free was lost */
        if (end_block(l, &l->slots[*old], r, 0, -1, 0, HL_BLOCK_END_INFERRED) != 0) return -1;
        l->slots[*old] = b;
        return 0;
    }
    size_t slot;
    if (l->nfree) {
        slot = l->freeslots[--l->nfree];
    } else {
        if (grow((void **)&l->slots, &l->capslots, l->nslots + 1, sizeof *l->slots) != 0) return -1;
        slot = l->nslots++;
    }
    l->slots[slot] = b;
    return hl_map_put(&l->live, key, slot);
}

/* Removes the live block of ptr; returns 1 and copies it to *out when found. */
static int take_block(hl_ledger_t *l, size_t pidx, uint64_t ptr, live_t *out)
{
    uint64_t slot;
    if (!hl_map_del(&l->live, live_key(pidx, ptr), &slot)) return 0;
    *out = l->slots[slot];
    l->slots[slot].id = 0;
    if (grow((void **)&l->freeslots, &l->capfree, l->nfree + 1, sizeof *l->freeslots) == 0)
        l->freeslots[l->nfree++] = (uint32_t)slot;
    return 1;
}

static int on_free(hl_ledger_t *l, size_t pidx, const hl_rec_t *r)
{
    if (!r->a) return 0; /* free(NULL) */
    live_t b;
    int64_t stack = stack_of(l, r->pid, r->stack);
    if (!take_block(l, pidx, r->a, &b)) {
        l->orphans++;
        return hl_store_orphan(l->st, r->seq, r->ts, r->pid, r->tid, r->a, r->path, r->cycles,
                               stack);
    }
    return end_block(l, &b, r, r->path, r->cycles, stack, 0);
}

static int on_realloc(hl_ledger_t *l, size_t pidx, const hl_rec_t *r)
{
    uint64_t old_ptr = r->a, new_ptr = r->d;
    int64_t stack = stack_of(l, r->pid, r->stack);
    if (new_ptr == 0 && r->b > 0) /* failed: the old block stays live */
        return start_block(l, pidx, r, 0, HL_BLOCK_FROM_REALLOC, 0, r->cycles);
    int64_t prev = 0;
    int starts = new_ptr != 0;
    if (old_ptr) {
        live_t b;
        if (take_block(l, pidx, old_ptr, &b)) {
            prev = b.id;
            /* The realloc's cycles go to the block it starts, or here when it starts none. */
            if (end_block(l, &b, r, r->path, starts ? -1 : (int64_t)r->cycles, stack,
                          HL_BLOCK_TO_REALLOC) != 0)
                return -1;
        } else {
            l->orphans++;
            if (hl_store_orphan(l->st, r->seq, r->ts, r->pid, r->tid, old_ptr, r->path,
                                starts ? -1 : (int64_t)r->cycles, stack) != 0)
                return -1;
        }
    }
    if (!starts) return 0;
    return start_block(l, pidx, r, new_ptr, HL_BLOCK_FROM_REALLOC, prev, r->cycles);
}

/* ---- other records -------------------------------------------------------------------- */

static char *hexstr(const uint8_t *b, uint32_t n)
{
    char *s = malloc(2 * (size_t)n + 1);
    if (!s) return NULL;
    for (uint32_t i = 0; i < n; i++)
        sprintf(s + 2 * i, "%02x", b[i]);
    s[2 * n] = 0;
    return s;
}

static int on_record(hl_ledger_t *l, hl_rec_t *r)
{
    size_t pidx = proc_index(l, r->pid, r->ts);
    proc_t *p = &l->procs[pidx];
    p->end_ts = r->ts;
    if (!l->has_ts) {
        l->has_ts = 1;
        l->first_ts = r->ts;
    }
    l->last_ts = r->ts;
    switch ((hl_rec_kind_t)r->kind) {
    case HL_REC_ALLOC:
        return start_block(l, pidx, r, r->a, 0, 0, r->cycles);
    case HL_REC_FREE:
        return on_free(l, pidx, r);
    case HL_REC_REALLOC:
        return on_realloc(l, pidx, r);
    case HL_REC_STACK:
        on_stack(l, r);
        return 0;
    case HL_REC_OS_MAP:
    case HL_REC_OS_UNMAP:
        return hl_store_os(l->st, r, r->kind == HL_REC_OS_MAP ? "map" : "unmap");
    case HL_REC_ERROR:
        return hl_store_error(l->st, r, stack_of(l, r->pid, r->cycles),
                              stack_of(l, r->pid, (uint32_t)r->c),
                              stack_of(l, r->pid, (uint32_t)r->d));
    case HL_REC_CONFIG: {
        const char *version = r->ext ? r->ext : "";
        const char *options = r->ext ? version + strlen(version) + 1 : "";
        free(p->options);
        p->options = strdup(options);
        p->tsc_hz = r->a;
        p->fork_parent = r->c != r->pid ? (uint32_t)r->c : 0;
        p->fork_ts = r->d;
        p->dirty = 1;
        if (!l->version) {
            l->version = strdup(version);
            l->options = strdup(options);
            l->tsc_hz = r->a;
            l->arena = r->b;
        }
        return 0;
    }
    case HL_REC_MODULE:
        hl_symbols_add_module(l->syms, r->pid, r->a, r->b, r->ext ? r->ext : "");
        return hl_store_module(l->st, r->pid, r->a, r->b, r->ext ? r->ext : "", r->ts);
    case HL_REC_BUILD_ID: {
        char *hex = hexstr(r->ext, r->n);
        int rc = hl_store_module_build_id(l->st, r->pid, r->a, hex);
        free(hex);
        return rc;
    }
    case HL_REC_DLCLOSE:
        hl_symbols_remove_module(l->syms, r->pid, r->a);
        return hl_store_module_unload(l->st, r->pid, r->a, r->ts);
    case HL_REC_LEAK_BLOCKS: /* each word names a block live now: its id from the map */
        if (hl_store_sync(l->st) != 0) return -1; /* the connection is the store's */
        for (uint32_t i = 0; r->ext && i < r->n; i++) {
            uint64_t w = ((const uint64_t *)r->ext)[i];
            uint64_t *slot = hl_map_find(&l->live, live_key(pidx, w & ~15ull));
            if (hl_ileak_block(l->leaks, r->pid, slot ? l->slots[*slot].id : 0,
                               (unsigned)(w & 15)) != 0)
                return -1;
        }
        return 0;
    case HL_REC_LEAK_SCAN:
        if (hl_store_sync(l->st) != 0) return -1;
        return r->ext ? hl_ileak_scan(l->leaks, r->pid, r->ts, r->ext, r->n) : 0;
    case HL_REC_THREAD:
        if (r->tid == r->pid && r->ext && !r->a) {
            free(p->procname);
            p->procname = strdup(r->ext);
            p->dirty = 1;
        }
        return hl_store_thread(l->st, r->pid, r->tid, r->ext);
    }
    return 0;
}

int hl_ledger_batch(hl_ledger_t *l, hl_batch_t *b)
{
    int rc = 0;
    l->events += b->events;
    l->discarded += b->discarded;
    l->filtered += b->filtered;
    for (size_t i = 0; i < b->n; i++) {
        hl_rec_t *r = &b->rec[i];
        if (!rc && on_record(l, r) != 0) rc = -1;
        free(r->ext);
        r->ext = NULL;
    }
    b->n = 0;
    return rc;
}

static int write_summary(hl_ledger_t *l, const hl_run_row_t *run)
{
    if (write_stacks(l) != 0) return -1;
    for (size_t i = 0; i < l->nprocs; i++) {
        proc_t *p = &l->procs[i];
        if (hl_store_process(l->st, p->pid, p->fork_parent, p->procname, p->options, p->tsc_hz,
                             p->start_ts, p->end_ts) != 0)
            return -1;
        p->dirty = 0;
    }
    hl_run_row_t r = *run;
    if (!r.options) r.options = l->options;
    if (!r.version) r.version = l->version;
    r.tsc_hz = l->tsc_hz;
    r.arena_size = l->arena;
    r.events = l->events;
    r.discarded = l->discarded;
    r.has_ts = l->has_ts;
    r.start_ts = l->first_ts;
    r.end_ts = l->last_ts;
    char n[32];
    snprintf(n, sizeof n, "%llu", (unsigned long long)l->filtered);
    if (hl_store_meta(l->st, "filtered_lttng_thread_events", n) != 0) return -1;
    snprintf(n, sizeof n, "%llu", (unsigned long long)l->unknown_stacks);
    if (hl_store_meta(l->st, "unknown_stack_refs", n) != 0) return -1;
    return hl_store_run(l->st, &r);
}

int hl_ledger_checkpoint(hl_ledger_t *l, const hl_run_row_t *run)
{
    return write_summary(l, run);
}

int hl_ledger_finish(hl_ledger_t *l, const hl_run_row_t *run)
{
    for (size_t i = 0; i < l->nslots; i++)
        if (l->slots[i].id && end_block(l, &l->slots[i], NULL, 0, -1, 0, 0) != 0) return -1;
    return write_summary(l, run);
}

void hl_ledger_raw_frames(hl_ledger_t *l)
{
    l->raw_frames = 1;
}

void hl_ledger_counts(const hl_ledger_t *l, hl_ingest_result_t *r)
{
    r->events = l->events;
    r->discarded = l->discarded;
    r->blocks = l->blocks;
    r->orphan_frees = l->orphans;
    r->stacks = (uint64_t)(l->next_stack - 1);
}
