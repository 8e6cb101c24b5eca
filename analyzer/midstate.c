/* analyzer/midstate.c — see midstate.h. */
#include "midstate.h"

#include <stdlib.h>
#include <string.h>

#include "hmap.h"

#define LEN_MASK ((1ull << 56) - 1) /* region value: len | purpose << 56 */

typedef struct proc_s {
    int64_t pid;
    hl_hmap_t mid;     /* ptr -> usable */
    hl_hmap_t regions; /* addr -> len | purpose << 56 */
} proc_t;

enum { LOG_MID, LOG_REG };

/* One change since the mark: key had value old before (had), or was absent. */
typedef struct mlog_s {
    uint8_t map, had;
    int64_t pid;
    uint64_t key, old;
} mlog_t;

struct hl_midstate_s {
    proc_t *procs;
    size_t nprocs, procs_cap;
    size_t state;    /* live blocks + regions, all processes */
    int marked;      /* a mark exists */
    int marked_done; /* the mark's fragmentation is computed, the log dropped */
    int marked_known;
    hl_frag_t marked_frag;
    mlog_t *log;
    size_t nlog, log_cap;
};

hl_midstate_t *hl_midstate_new(void)
{
    hl_midstate_t *ms = calloc(1, sizeof *ms);
    if (!ms) abort();
    return ms;
}

static void procs_free(proc_t *procs, size_t n)
{
    for (size_t p = 0; p < n; p++) {
        hl_hmap_free(&procs[p].mid);
        hl_hmap_free(&procs[p].regions);
    }
    free(procs);
}

void hl_midstate_free(hl_midstate_t *ms)
{
    if (!ms) return;
    procs_free(ms->procs, ms->nprocs);
    free(ms->log);
    free(ms);
}

static proc_t *proc_of(hl_midstate_t *ms, int64_t pid)
{
    for (size_t i = 0; i < ms->nprocs; i++)
        if (ms->procs[i].pid == pid) return &ms->procs[i];
    proc_t *p = HL_VEC_PUSH(ms->procs, ms->nprocs, ms->procs_cap);
    memset(p, 0, sizeof *p);
    p->pid = pid;
    return p;
}

static hl_hmap_t *map_of(proc_t *p, int map)
{
    return map == LOG_MID ? &p->mid : &p->regions;
}

static hl_frag_t frag_of(proc_t *procs, size_t nprocs, int *known)
{
    hl_span_t *reg = NULL, *used = NULL;
    size_t nreg = 0, creg = 0, nused = 0, cused = 0;
    hl_frag_t total = {0, 0, 0, 0};
    *known = 0;
    for (size_t p = 0; p < nprocs; p++) {
        proc_t *pr = &procs[p];
        const hl_hmap_slot_t *s;
        int arena = 0;
        nreg = nused = 0;
        for (size_t i = 0; hl_hmap_iter(&pr->regions, &i, &s);) {
            hl_region_t purpose = (hl_region_t)(s->val >> 56);
            hl_span_t sp = {s->key, s->key + (s->val & LEN_MASK)};
            if (purpose == HL_REG_TLSF_POOL || purpose == HL_REG_ARENA)
                *HL_VEC_PUSH(reg, nreg, creg) = sp;
            arena |= purpose == HL_REG_ARENA;
        }
        if (!nreg) continue;
        *known = 1;
        /* Slab segments carved from an arena are not free mid space. */
        for (size_t i = 0; arena && hl_hmap_iter(&pr->regions, &i, &s);) {
            hl_span_t sp = {s->key, s->key + (s->val & LEN_MASK)};
            if ((hl_region_t)(s->val >> 56) == HL_REG_SLAB) *HL_VEC_PUSH(used, nused, cused) = sp;
        }
        for (size_t i = 0; hl_hmap_iter(&pr->mid, &i, &s);) {
            hl_span_t sp = {s->key - HL_MID_HEADER, s->key + s->val};
            *HL_VEC_PUSH(used, nused, cused) = sp;
        }
        hl_frag_t f = hl_frag_compute(reg, nreg, used, nused);
        total.free_bytes += f.free_bytes;
        total.spans += f.spans;
        if (f.largest > total.largest) total.largest = f.largest;
    }
    free(reg);
    free(used);
    total.external = total.free_bytes ? 1.0 - (double)total.largest / (double)total.free_bytes : 0;
    return total;
}

hl_frag_t hl_midstate_frag(hl_midstate_t *ms, int *known)
{
    return frag_of(ms->procs, ms->nprocs, known);
}

/* The marked state: copy the current one and undo the log, newest change first. */
static void compute_marked(hl_midstate_t *ms)
{
    proc_t *tmp = calloc(ms->nprocs ? ms->nprocs : 1, sizeof *tmp);
    if (!tmp) abort();
    for (size_t p = 0; p < ms->nprocs; p++) {
        tmp[p].pid = ms->procs[p].pid;
        for (int k = LOG_MID; k <= LOG_REG; k++) {
            const hl_hmap_slot_t *sl;
            for (size_t i = 0; hl_hmap_iter(map_of(&ms->procs[p], k), &i, &sl);)
                *hl_hmap_put(map_of(&tmp[p], k), sl->key, 0, NULL) = sl->val;
        }
    }
    for (size_t i = ms->nlog; i-- > 0;) {
        const mlog_t *e = &ms->log[i];
        for (size_t p = 0; p < ms->nprocs; p++) {
            if (tmp[p].pid != e->pid) continue;
            if (e->had)
                *hl_hmap_put(map_of(&tmp[p], e->map), e->key, 0, NULL) = e->old;
            else
                hl_hmap_del(map_of(&tmp[p], e->map), e->key, NULL);
            break;
        }
    }
    ms->marked_frag = frag_of(tmp, ms->nprocs, &ms->marked_known);
    ms->marked_done = 1;
    ms->nlog = 0;
    procs_free(tmp, ms->nprocs);
}

static void logged(hl_midstate_t *ms, int map, int64_t pid, uint64_t key, int had, uint64_t old)
{
    if (!ms->marked || ms->marked_done) return;
    mlog_t *e = HL_VEC_PUSH(ms->log, ms->nlog, ms->log_cap);
    e->map = (uint8_t)map;
    e->had = (uint8_t)had;
    e->pid = pid;
    e->key = key;
    e->old = old;
    if (ms->nlog > 2 * ms->state + 4096) compute_marked(ms);
}

static void put(hl_midstate_t *ms, int map, int64_t pid, uint64_t key, uint64_t val)
{
    int fresh;
    uint64_t *v = hl_hmap_put(map_of(proc_of(ms, pid), map), key, 0, &fresh);
    uint64_t old = *v;
    *v = val;
    ms->state += fresh;
    logged(ms, map, pid, key, !fresh, old);
}

static void del(hl_midstate_t *ms, int map, int64_t pid, uint64_t key)
{
    uint64_t old;
    if (hl_hmap_del(map_of(proc_of(ms, pid), map), key, &old)) {
        ms->state--;
        logged(ms, map, pid, key, 1, old);
    }
}

void hl_midstate_block_put(hl_midstate_t *ms, int64_t pid, uint64_t ptr, uint64_t usable)
{
    put(ms, LOG_MID, pid, ptr, usable);
}

void hl_midstate_block_del(hl_midstate_t *ms, int64_t pid, uint64_t ptr)
{
    del(ms, LOG_MID, pid, ptr);
}

void hl_midstate_region_put(hl_midstate_t *ms, int64_t pid, uint64_t addr, uint64_t len,
                            hl_region_t purpose)
{
    put(ms, LOG_REG, pid, addr, (len & LEN_MASK) | ((uint64_t)purpose << 56));
}

void hl_midstate_region_del(hl_midstate_t *ms, int64_t pid, uint64_t addr)
{
    del(ms, LOG_REG, pid, addr);
}

void hl_midstate_mark(hl_midstate_t *ms)
{
    ms->marked = 1;
    ms->marked_done = 0;
    ms->nlog = 0;
}

hl_frag_t hl_midstate_marked_frag(hl_midstate_t *ms, int *known)
{
    if (!ms->marked) {
        *known = 0;
        return (hl_frag_t){0, 0, 0, 0};
    }
    if (!ms->marked_done) compute_marked(ms);
    *known = ms->marked_known;
    return ms->marked_frag;
}
