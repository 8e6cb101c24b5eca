/* analyzer/metrics.c — see metrics.h; definitions in docs/metrics.md. */
#include "metrics.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "hl_schema.h"
#include "hmap.h"

const char *const hl_life_labels[HL_LIFE_BUCKETS + 1] = {"<1us",  "<10us",  "<100us",     "<1ms",
                                                         "<10ms", "<100ms", "<1s",        "<10s",
                                                         "<100s", ">=100s", "live at end"};

int hl_size_bucket(uint64_t size)
{
    if (size <= 16) return 0;
    int b = 64 - __builtin_clzll(size - 1); /* ceil(log2(size)) */
    b -= 4;
    return b >= HL_SIZE_BUCKETS - 1 ? HL_SIZE_BUCKETS - 1 : b;
}

int hl_life_bucket(int64_t ns)
{
    int64_t lim = 1000;
    for (int b = 0; b < HL_LIFE_BUCKETS - 1; b++, lim *= 10)
        if (ns < lim) return b;
    return HL_LIFE_BUCKETS - 1;
}

/* Per-process state for fragmentation: live mid blocks and mapped regions. */
typedef struct proc_s {
    int64_t pid;
    hl_hmap_t mid;     /* ptr -> usable */
    hl_hmap_t regions; /* addr -> len | purpose << 56 */
} proc_t;

/* One change to a mid or region map since the peak (see peak_frag_compute). */
typedef struct hl_mlog_s {
    uint8_t op, had; /* LOG_*; had: key was present before, with value old */
    int64_t pid;
    uint64_t key, old;
} hl_mlog_t;

struct hl_metrics_s {
    hl_report_t *r;
    hl_mlog_t *log; /* changes since the peak, until peak_frag_done */
    size_t nlog, log_cap;
    int peak_frag_done, peak_frag_known;
    hl_frag_t peak_frag;
    int64_t t0, t1; /* absolute window bounds (ns) */
    uint64_t R, U, H_os;
    int have_os, held_fixed;
    uint64_t H_fixed;
    double ext_override;
    hl_pctl_t pc[4][HL_MAX_PATHS];
    hl_path_stat_t ps[4][HL_MAX_PATHS];
    hl_pctl_t size_alloc[HL_SIZE_BUCKETS], size_free[HL_SIZE_BUCKETS], size_pair[HL_SIZE_BUCKETS];
    uint64_t class_live[HL_NCLASSES];
    hl_hmap_t sites;      /* stack + 1 -> index in r->sites */
    hl_hmap_t live_size;  /* size -> live blocks */
    hl_hmap_t last_alloc; /* pid << 32 ^ tid -> last block allocated by the thread */
    proc_t *procs;
    size_t nprocs, procs_cap;
    size_t sites_cap;
    int next_sample;
    uint64_t R_max_interval;
    uint64_t slab_size;
};

static uint64_t parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    switch (toupper((unsigned char)*end)) {
    case 'K':
        v <<= 10;
        break;
    case 'M':
        v <<= 20;
        break;
    case 'G':
        v <<= 30;
        break;
    }
    return v;
}

/* slab=SIZE of the run's options; the allocator's defaults otherwise (docs/options.md). */
static uint64_t slab_size_of(const hl_run_t *run)
{
    const char *o = run->options ? strstr(run->options, "slab=") : NULL;
    if (o && (o == run->options || o[-1] == ',')) return parse_size(o + 5);
    return run->arena_size > 0 ? 4096 : 65536;
}

hl_metrics_t *hl_metrics_new(hl_run_t *run, int64_t pid, int64_t from_ns, int64_t to_ns)
{
    hl_metrics_t *m = calloc(1, sizeof *m);
    hl_report_t *r = calloc(1, sizeof *r);
    if (!m || !r) abort();
    m->r = r;
    r->run = *run;
    memset(run, 0, sizeof *run);
    r->pid = pid;
    r->from_ns = from_ns;
    r->to_ns = to_ns;
    r->approximate = r->run.discarded > 0;
    r->source = "recorded";
    r->external_peak = r->external_end = -1;
    m->t0 = r->run.start_ts + (from_ns > 0 ? from_ns : 0);
    m->t1 = to_ns >= 0 ? r->run.start_ts + to_ns : r->run.end_ts;
    if (m->t1 < m->t0) m->t1 = m->t0;
    m->ext_override = -2;
    m->slab_size = slab_size_of(&r->run);
    if (r->run.arena_size > 0) {
        m->held_fixed = 1;
        m->H_fixed =
            (uint64_t)r->run.arena_size * (uint64_t)(r->run.processes ? r->run.processes : 1);
        r->held_source = "arena";
    }
    return m;
}

static proc_t *proc_of(hl_metrics_t *m, int64_t pid)
{
    for (size_t i = 0; i < m->nprocs; i++)
        if (m->procs[i].pid == pid) return &m->procs[i];
    proc_t *p = HL_VEC_PUSH(m->procs, m->nprocs, m->procs_cap);
    memset(p, 0, sizeof *p);
    p->pid = pid;
    return p;
}

/* H now. Memory in use is held: when the os_region rows account for less than U (the
 * recording did not see every mapping), H is taken as U and the report says so. */
static uint64_t held(hl_metrics_t *m)
{
    uint64_t h = m->held_fixed ? m->H_fixed : m->have_os ? m->H_os : m->U;
    if (h < m->U) {
        if (m->have_os && !m->held_fixed) m->r->held_incomplete = 1;
        h = m->U;
    }
    return h;
}

/* External fragmentation of the mid tier of these processes; *known = 0 without regions. */
static hl_frag_t frag_of(proc_t *procs, size_t nprocs, int *known)
{
    hl_span_t *reg = NULL, *used = NULL;
    size_t nreg = 0, creg = 0, nused = 0, cused = 0;
    hl_frag_t total = {0, 0, 0, 0};
    *known = 0;
    for (size_t p = 0; p < nprocs; p++) {
        proc_t *pr = &procs[p];
        nreg = nused = 0;
        const hl_hmap_slot_t *s;
        int arena = 0;
        for (size_t i = 0; hl_hmap_iter(&pr->regions, &i, &s);) {
            hl_region_t purpose = (hl_region_t)(s->val >> 56);
            hl_span_t sp = {s->key, s->key + (s->val & ((1ull << 56) - 1))};
            if (purpose == HL_REG_TLSF_POOL || purpose == HL_REG_ARENA)
                *HL_VEC_PUSH(reg, nreg, creg) = sp;
            arena |= purpose == HL_REG_ARENA;
        }
        /* Slab segments carved from an arena are not free mid space. */
        for (size_t i = 0; arena && hl_hmap_iter(&pr->regions, &i, &s);) {
            hl_span_t sp = {s->key, s->key + (s->val & ((1ull << 56) - 1))};
            if ((hl_region_t)(s->val >> 56) == HL_REG_SLAB) *HL_VEC_PUSH(used, nused, cused) = sp;
        }
        if (!nreg) continue;
        *known = 1;
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

static hl_frag_t frag_now(hl_metrics_t *m, int *known)
{
    return frag_of(m->procs, m->nprocs, known);
}

/* Exact fragmentation at the peak without a copy per new peak: the mid-tier changes since
 * the peak are logged; the state at the peak is the current one with the log undone. Once
 * the log outgrows the state (2 entries per live mid block or region, at least 4096), the
 * peak's value is computed and the log dropped: cost O(1) per event amortised, memory
 * bounded by the live set. */
enum { LOG_MID_PUT, LOG_MID_DEL, LOG_REG_PUT, LOG_REG_DEL };

static void log_change(hl_metrics_t *m, int op, int64_t pid, uint64_t key, int had, uint64_t old);

static hl_hmap_t *log_map(proc_t *p, int op)
{
    return op == LOG_MID_PUT || op == LOG_MID_DEL ? &p->mid : &p->regions;
}

static void peak_frag_compute(hl_metrics_t *m)
{
    proc_t *tmp = calloc(m->nprocs ? m->nprocs : 1, sizeof *tmp);
    if (!tmp) abort();
    for (size_t p = 0; p < m->nprocs; p++) {
        tmp[p].pid = m->procs[p].pid;
        hl_hmap_t *src[2] = {&m->procs[p].mid, &m->procs[p].regions};
        hl_hmap_t *dst[2] = {&tmp[p].mid, &tmp[p].regions};
        for (int k = 0; k < 2; k++) {
            const hl_hmap_slot_t *sl;
            for (size_t i = 0; hl_hmap_iter(src[k], &i, &sl);)
                *hl_hmap_put(dst[k], sl->key, 0, NULL) = sl->val;
        }
    }
    for (size_t i = m->nlog; i-- > 0;) {
        const hl_mlog_t *e = &m->log[i];
        proc_t *p = NULL;
        for (size_t k = 0; k < m->nprocs && !p; k++)
            if (tmp[k].pid == e->pid) p = &tmp[k];
        if (!p) continue;
        hl_hmap_t *map = log_map(p, e->op);
        if (e->had)
            *hl_hmap_put(map, e->key, 0, NULL) = e->old;
        else
            hl_hmap_del(map, e->key, NULL);
    }
    int known;
    m->peak_frag = frag_of(tmp, m->nprocs, &known);
    m->peak_frag_known = known;
    m->peak_frag_done = 1;
    m->nlog = 0;
    for (size_t p = 0; p < m->nprocs; p++) {
        hl_hmap_free(&tmp[p].mid);
        hl_hmap_free(&tmp[p].regions);
    }
    free(tmp);
}

static void log_change(hl_metrics_t *m, int op, int64_t pid, uint64_t key, int had, uint64_t old)
{
    if (m->peak_frag_done || !m->r->peak_R) return;
    hl_mlog_t *e = HL_VEC_PUSH(m->log, m->nlog, m->log_cap);
    e->op = op;
    e->had = had;
    e->pid = pid;
    e->key = key;
    e->old = old;
    size_t state = 0;
    for (size_t p = 0; p < m->nprocs; p++)
        state += m->procs[p].mid.len + m->procs[p].regions.len;
    if (m->nlog > 2 * state + 4096) peak_frag_compute(m);
}

/* Put/delete in a process's mid or region map, logging the change for the peak. */
static void map_put(hl_metrics_t *m, int64_t pid, int op, uint64_t key, uint64_t val)
{
    proc_t *p = proc_of(m, pid);
    int fresh;
    uint64_t *v = hl_hmap_put(log_map(p, op), key, 0, &fresh);
    uint64_t old = *v;
    *v = val;
    log_change(m, op, pid, key, !fresh, old);
}

static void map_del(hl_metrics_t *m, int64_t pid, int op, uint64_t key)
{
    proc_t *p = proc_of(m, pid);
    uint64_t old;
    if (hl_hmap_del(log_map(p, op), key, &old)) log_change(m, op, pid, key, 1, old);
}

static void take_samples(hl_metrics_t *m, int64_t ts)
{
    hl_report_t *r = m->r;
    int64_t span = m->t1 - m->t0;
    while (m->next_sample < HL_TL_SAMPLES) {
        int64_t edge = m->t0 + (span * (m->next_sample + 1)) / HL_TL_SAMPLES;
        if (ts >= 0 && ts <= edge) return;
        hl_sample_t *s = &r->samples[m->next_sample++];
        s->ts = edge - r->run.start_ts;
        s->R = m->R;
        s->U = m->U;
        s->H = held(m);
        s->R_max = m->R_max_interval > m->R ? m->R_max_interval : m->R;
        int known;
        hl_frag_t f = frag_now(m, &known);
        s->external = known ? f.external : -1;
        m->R_max_interval = m->R;
        r->nsamples = m->next_sample;
    }
}

static hl_site_t *site_of(hl_metrics_t *m, int64_t stack)
{
    int fresh;
    uint64_t *ix = hl_hmap_put(&m->sites, (uint64_t)(stack + 1), m->r->nsites, &fresh);
    if (fresh) {
        hl_site_t *s = HL_VEC_PUSH(m->r->sites, m->r->nsites, m->sites_cap);
        memset(s, 0, sizeof *s);
        s->stack = stack;
    }
    return &m->r->sites[*ix];
}

static void path_sample(hl_metrics_t *m, int op, int path, int64_t cycles)
{
    if (op < 1 || op > 3) return;
    if (path < 0 || path >= HL_MAX_PATHS) path = HL_MAX_PATHS - 1;
    hl_path_stat_t *ps = &m->ps[op][path];
    ps->op = op;
    ps->path = path;
    ps->count++;
    if (cycles >= 0) {
        hl_pctl_add(&m->pc[op][path], (uint64_t)cycles);
        int b = cycles ? 64 - __builtin_clzll((uint64_t)cycles) : 0;
        ps->hist[b >= HL_CYC_HIST ? HL_CYC_HIST - 1 : b]++;
    }
}

static int op_of(int path, int fallback)
{
    int op = (int)hl_path_op((unsigned)path);
    return op != HL_OP_NONE ? op : fallback;
}

int hl_metrics_event(hl_metrics_t *m, const hl_event_t *ev)
{
    hl_report_t *r = m->r;
    if (r->to_ns >= 0 && ev->ts > m->t1) return 0;
    int in_window = ev->ts >= m->t0;
    if (in_window) take_samples(m, ev->ts);
    switch (ev->kind) {
    case HL_EV_ALLOC: {
        int failed = ev->flags & HL_BF_FAILED;
        int op = ev->flags & HL_BF_FROM_REALLOC ? HL_OP_REALLOC : HL_OP_ALLOC;
        if (in_window) {
            path_sample(m, op_of(ev->path, op), ev->path, ev->cycles);
            if (op == HL_OP_REALLOC)
                r->reallocs++;
            else
                r->allocs++;
        }
        if (failed) {
            if (in_window) {
                r->failed++;
                if (!r->has_failure) {
                    r->has_failure = 1;
                    r->fail_ts = ev->ts - r->run.start_ts;
                    r->fail_seq = ev->seq;
                    r->fail_size = ev->size;
                    r->fail_R = m->R;
                    uint64_t h = held(m);
                    r->fail_util = h ? (double)m->R / (double)h : -1;
                }
            }
            break;
        }
        m->R += ev->size;
        m->U += ev->usable;
        if (ev->tier == HL_TIER_MID) map_put(m, ev->pid, LOG_MID_PUT, ev->ptr, ev->usable);
        if (ev->tier == HL_TIER_TINY && ev->cls >= 0 && ev->cls < HL_NCLASSES) {
            uint64_t live = ++m->class_live[ev->cls];
            hl_class_stat_t *c = &r->classes[ev->cls];
            if (live > c->peak) c->peak = live;
            c->live_requested += ev->size;
            if (in_window) c->allocs++;
        }
        (*hl_hmap_put(&m->live_size, ev->size, 0, NULL))++;
        hl_site_t *site = site_of(m, ev->stack);
        site->live_blocks++;
        site->live_bytes += ev->size;
        if (ev->tid >= 0)
            *hl_hmap_put(&m->last_alloc, ((uint64_t)ev->pid << 32) ^ (uint64_t)ev->tid, 0, NULL) =
                (uint64_t)ev->block;
        if (in_window) {
            site->count++;
            site->bytes += ev->size;
            r->bytes_allocated += ev->size;
            int b = hl_size_bucket(ev->size);
            r->sizes[b].count++;
            r->sizes[b].bytes += ev->size;
            if (ev->cycles >= 0) hl_pctl_add(&m->size_alloc[b], (uint64_t)ev->cycles);
        }
        if (m->R > m->R_max_interval) m->R_max_interval = m->R;
        if (m->U > r->max_U) r->max_U = m->U;
        uint64_t h = held(m);
        if (h > r->max_H) r->max_H = h;
        if (h && (double)m->R / (double)h > r->util_max && in_window)
            r->util_max = (double)m->R / (double)h;
        if (in_window && (m->R > r->peak_R || !r->peak_seq)) {
            r->peak_R = m->R;
            r->peak_U = m->U;
            r->peak_H = h;
            r->peak_ts = ev->ts - r->run.start_ts;
            r->peak_seq = ev->seq;
            m->nlog = 0; /* the state now is the peak's */
            m->peak_frag_done = 0;
        }
        break;
    }
    case HL_EV_FREE: {
        if (ev->flags & HL_BF_FAILED) break;
        m->R -= ev->size;
        m->U -= ev->usable;
        if (ev->tier == HL_TIER_MID) map_del(m, ev->pid, LOG_MID_DEL, ev->ptr);
        if (ev->tier == HL_TIER_TINY && ev->cls >= 0 && ev->cls < HL_NCLASSES) {
            m->class_live[ev->cls]--;
            r->classes[ev->cls].live_requested -= ev->size;
        }
        uint64_t *ls = hl_hmap_get(&m->live_size, ev->size);
        if (ls && --*ls == 0) hl_hmap_del(&m->live_size, ev->size, NULL);
        hl_site_t *site = site_of(m, ev->alloc_stack);
        site->live_blocks--;
        site->live_bytes -= ev->size;
        int temporary = 0;
        if (ev->tid >= 0) {
            uint64_t *last =
                hl_hmap_get(&m->last_alloc, ((uint64_t)ev->pid << 32) ^ (uint64_t)ev->tid);
            temporary = last && *last == (uint64_t)ev->block;
        }
        if (in_window) {
            /* The old side of a realloc is part of the realloc operation, counted once on
             * the new block; it is not a free of its own. */
            if (!(ev->flags & HL_BF_TO_REALLOC)) {
                r->frees++;
                path_sample(m, op_of(ev->path, HL_OP_FREE), ev->path, ev->cycles);
                int b = hl_size_bucket(ev->size);
                if (ev->cycles >= 0) hl_pctl_add(&m->size_free[b], (uint64_t)ev->cycles);
                if (ev->cycles >= 0 && ev->alloc_cycles >= 0 && ev->alloc_ts >= m->t0)
                    hl_pctl_add(&m->size_pair[b], (uint64_t)(ev->cycles + ev->alloc_cycles));
            }
            if (ev->alloc_ts >= m->t0) {
                r->lifetime[hl_life_bucket(ev->ts - ev->alloc_ts)]++;
                if (temporary) {
                    r->temporary++;
                    site->temporary++;
                }
            }
        }
        break;
    }
    case HL_EV_ORPHAN:
        if (in_window) {
            r->orphan_frees++;
            path_sample(m, op_of(ev->path, HL_OP_FREE), ev->path, ev->cycles);
        }
        break;
    case HL_EV_MAP:
    case HL_EV_UNMAP: {
        m->have_os = 1;
        if (!r->held_source) r->held_source = "os_region";
        if (ev->kind == HL_EV_MAP) {
            m->H_os += ev->size;
            map_put(m, ev->pid, LOG_REG_PUT, ev->ptr,
                    (ev->size & ((1ull << 56) - 1)) | ((uint64_t)ev->purpose << 56));
        } else {
            m->H_os -= ev->size < m->H_os ? ev->size : m->H_os;
            map_del(m, ev->pid, LOG_REG_DEL, ev->ptr);
        }
        uint64_t h = held(m);
        if (h > r->max_H) r->max_H = h;
        break;
    }
    default:
        break;
    }
    if (in_window) r->events++;
    return 1;
}

void hl_metrics_set_held(hl_metrics_t *m, uint64_t h)
{
    m->held_fixed = 1;
    m->H_fixed = h;
    m->r->held_source = "heap";
    if (h > m->r->max_H) m->r->max_H = h;
}

void hl_metrics_set_external(hl_metrics_t *m, double ext)
{
    m->ext_override = ext;
}

int64_t hl_metrics_peak_seq(const hl_metrics_t *m)
{
    return m->r->peak_seq;
}

static int cmp_path(const void *a, const void *b)
{
    const hl_path_stat_t *x = a, *y = b;
    if (x->op != y->op) return x->op - y->op;
    return x->count < y->count ? 1 : x->count > y->count ? -1 : x->path - y->path;
}

static int cmp_site(const void *a, const void *b)
{
    const hl_site_t *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int cmp_leak_size(const void *a, const void *b)
{
    const hl_leak_size_t *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    return x->size < y->size ? -1 : x->size > y->size;
}

static double frac(uint64_t num, uint64_t den)
{
    return den ? (double)num / (double)den : -1;
}

hl_report_t *hl_metrics_finish(hl_metrics_t *m)
{
    hl_report_t *r = m->r;
    take_samples(m, -1);
    if (r->peak_R && !m->peak_frag_done) peak_frag_compute(m);
    if (m->peak_frag_known) {
        r->frag_peak = m->peak_frag;
        r->external_peak = m->peak_frag.external;
    }
    free(m->log);
    if (!r->held_source) r->held_source = "usable";
    r->duration_s = (double)(m->t1 - m->t0) / 1e9;

    /* Paths. */
    size_t cap = 0;
    for (int op = 1; op <= 3; op++) {
        for (int p = 0; p < HL_MAX_PATHS; p++)
            r->op_count[op] += m->ps[op][p].count;
        double opmean = 0;
        for (int p = 0; p < HL_MAX_PATHS; p++) {
            hl_path_stat_t *ps = &m->ps[op][p];
            if (!ps->count) continue;
            hl_pctl_t *pc = &m->pc[op][p];
            ps->share = (double)ps->count / (double)r->op_count[op];
            ps->timed = pc->count;
            ps->p01 = hl_pctl_get(pc, 0.01);
            ps->p25 = hl_pctl_get(pc, 0.25);
            ps->p50 = hl_pctl_get(pc, 0.50);
            ps->p75 = hl_pctl_get(pc, 0.75);
            ps->p99 = hl_pctl_get(pc, 0.99);
            ps->mean = hl_pctl_mean(pc);
            ps->ns_p50 = r->run.tsc_hz > 0 ? ps->p50 * 1e9 / (double)r->run.tsc_hz : -1;
            ps->weighted = ps->share * ps->mean;
            opmean += ps->weighted;
            *HL_VEC_PUSH(r->paths, r->npaths, cap) = *ps;
            hl_pctl_free(pc);
        }
        r->op_mean[op] = opmean;
    }
    if (r->npaths) qsort(r->paths, r->npaths, sizeof *r->paths, cmp_path);

    /* Sizes. */
    for (int b = 0; b < HL_SIZE_BUCKETS; b++) {
        hl_size_stat_t *s = &r->sizes[b];
        s->lo = b == 0 ? 0 : (1ull << (b + 3)) + 1;
        s->hi = b == HL_SIZE_BUCKETS - 1 ? UINT64_MAX : 1ull << (b + 4);
        /* -1: no sample. alloc+free ("pair"): cycles of both ends of each block allocated
         * and freed in the window. */
        s->alloc_p50 = m->size_alloc[b].count ? hl_pctl_get(&m->size_alloc[b], 0.5) : -1;
        s->alloc_p99 = m->size_alloc[b].count ? hl_pctl_get(&m->size_alloc[b], 0.99) : -1;
        s->free_p50 = m->size_free[b].count ? hl_pctl_get(&m->size_free[b], 0.5) : -1;
        s->free_p99 = m->size_free[b].count ? hl_pctl_get(&m->size_free[b], 0.99) : -1;
        s->pair_p50 = m->size_pair[b].count ? hl_pctl_get(&m->size_pair[b], 0.5) : -1;
        s->pair_p99 = m->size_pair[b].count ? hl_pctl_get(&m->size_pair[b], 0.99) : -1;
        hl_pctl_free(&m->size_alloc[b]);
        hl_pctl_free(&m->size_free[b]);
        hl_pctl_free(&m->size_pair[b]);
    }

    /* Classes: slots held estimated from the slabs the peak needed. */
    for (int c = 0; c < HL_NCLASSES; c++) {
        hl_class_stat_t *cs = &r->classes[c];
        cs->cls = c;
        cs->slot = hl_class_slot((unsigned)c);
        cs->used = m->class_live[c];
        if (cs->slot && cs->peak) {
            uint64_t per = m->slab_size / cs->slot;
            if (!per) per = 1;
            cs->held = (cs->peak + per - 1) / per * per;
        }
        if (cs->slot) r->nclasses = c + 1;
    }

    /* End state and peak. */
    r->end_R = m->R;
    r->end_U = m->U;
    r->end_H = held(m);
    r->util_end = frac(r->end_R, r->end_H);
    r->internal_end = frac(r->end_U - r->end_R, r->end_U);
    int known;
    r->frag_end = frag_now(m, &known);
    r->external_end = known ? r->frag_end.external : -1;
    if (m->ext_override > -2) {
        r->external_end = m->ext_override;
    }
    r->util_peak = frac(r->peak_R, r->peak_H);
    r->internal_peak = frac(r->peak_U - r->peak_R, r->peak_U);
    if (r->util_max < r->util_peak) r->util_max = r->util_peak;

    /* Leaks. */
    for (size_t i = 0; i < r->nsites; i++) {
        r->leak_blocks += r->sites[i].live_blocks;
        r->leak_bytes += r->sites[i].live_bytes;
    }
    size_t lcap = 0;
    const hl_hmap_slot_t *s;
    for (size_t i = 0; hl_hmap_iter(&m->live_size, &i, &s);) {
        hl_leak_size_t *l = HL_VEC_PUSH(r->leak_sizes, r->nleak_sizes, lcap);
        l->size = s->key;
        l->blocks = s->val;
        l->bytes = s->key * s->val;
    }
    if (r->nleak_sizes) qsort(r->leak_sizes, r->nleak_sizes, sizeof *r->leak_sizes, cmp_leak_size);
    r->lifetime[HL_LIFE_BUCKETS] = r->leak_blocks;
    if (r->nsites) qsort(r->sites, r->nsites, sizeof *r->sites, cmp_site);

    for (size_t p = 0; p < m->nprocs; p++) {
        hl_hmap_free(&m->procs[p].mid);
        hl_hmap_free(&m->procs[p].regions);
    }
    free(m->procs);
    hl_hmap_free(&m->sites);
    hl_hmap_free(&m->live_size);
    hl_hmap_free(&m->last_alloc);
    free(m);
    return r;
}

void hl_report_free(hl_report_t *r)
{
    if (!r) return;
    hl_run_free(&r->run);
    free(r->paths);
    free(r->sites);
    free(r->leak_sizes);
    for (size_t i = 0; i < r->nerrors; i++) {
        free(r->errors[i].kind);
        free(r->errors[i].details);
    }
    free(r->errors);
    if (r->replay) free(r->replay->options);
    free(r->replay);
    free(r);
}
