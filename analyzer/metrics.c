/* analyzer/metrics.c — see metrics.h; definitions in docs/metrics.md. */
#include "metrics.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "arenamap.h"
#include "hl_schema.h"
#include "hcache.h"
#include "hmap.h"
#include "leakclass.h"
#include "midstate.h"
#include "rundb.h"

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

/* Live sizes below this are counted in an array, the rest in a map. */
#define LIVE_SMALL 4096

struct hl_metrics_s {
    hl_report_t *r;
    hl_midstate_t *mid; /* live mid blocks and regions; marked at the peak */
    int64_t t0, t1;     /* absolute window bounds (ns) */
    uint64_t R, U, H_os;
    int have_os, held_fixed;
    uint64_t H_fixed;
    double ext_override;
    hl_pctl_t pc[4][HL_MAX_PATHS];
    hl_path_stat_t ps[4][HL_MAX_PATHS];
    hl_pctl_t size_alloc[HL_SIZE_BUCKETS], size_free[HL_SIZE_BUCKETS], size_pair[HL_SIZE_BUCKETS];
    uint64_t class_live[HL_NCLASSES];
    hl_hmap_t sites;                 /* stack + 1 -> index in r->sites */
    hl_hmap_t live_size;             /* size -> live blocks not suppressed, sizes from LIVE_SMALL */
    uint64_t live_small[LIVE_SMALL]; /* the same for smaller sizes, 0: none */
    const hl_hmap_t *supp;           /* stack + 1 -> hl_supp_kind_t of suppressed stacks, or NULL */
    hl_hmap_t last_alloc;            /* pid << 32 ^ tid -> last block allocated by the thread */
    hl_hcache_t last_cache;          /* write-back cache of last_alloc (hcache.h) */
    hl_hcache_t site_cache;          /* read cache of sites */
    size_t sites_cap;
    int next_sample;
    int64_t next_edge; /* next_edge(): the end of sample next_sample's interval */
    uint64_t R_max_interval;
    uint64_t util_R, util_H; /* R and H of the quotient that set r->util_max */
    uint64_t slab_size;
    /* The last operation counted in a path's budget (hl_metrics_last_sample). */
    uint64_t sample_gen;
    int sample_op, sample_path;
    int64_t sample_cycles;
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

/* The end of the timeline interval being sampled (INT64_MAX once every sample is taken). */
static int64_t next_edge(const hl_metrics_t *m)
{
    if (m->next_sample >= HL_TL_SAMPLES) return INT64_MAX;
    return m->t0 + hl_timeline_edge(m->t1 - m->t0, m->next_sample + 1, HL_TL_SAMPLES);
}

hl_metrics_t *hl_metrics_new(hl_run_t *run, int64_t pid, int64_t from_ns, int64_t to_ns)
{
    hl_metrics_t *m = calloc(1, sizeof *m);
    hl_report_t *r = calloc(1, sizeof *r);
    if (!m || !r) abort();
    m->r = r;
    m->mid = hl_midstate_new();
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
    m->util_H = UINT64_MAX;
    m->next_edge = next_edge(m);
    m->slab_size = slab_size_of(&r->run);
    if (r->run.arena_size > 0) {
        m->held_fixed = 1;
        m->H_fixed =
            (uint64_t)r->run.arena_size * (uint64_t)(r->run.processes ? r->run.processes : 1);
        r->held_source = "arena";
    }
    return m;
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

static void take_samples(hl_metrics_t *m, int64_t ts)
{
    hl_report_t *r = m->r;
    while (m->next_sample < HL_TL_SAMPLES) {
        int64_t edge = m->next_edge;
        if (ts >= 0 && ts <= edge) return;
        hl_sample_t *s = &r->samples[m->next_sample++];
        s->ts = edge - r->run.start_ts;
        s->R = m->R;
        s->U = m->U;
        s->H = held(m);
        s->R_max = m->R_max_interval > m->R ? m->R_max_interval : m->R;
        int known;
        hl_frag_t f = hl_midstate_frag(m->mid, &known);
        s->external = known ? f.external : -1;
        m->R_max_interval = m->R;
        r->nsamples = m->next_sample;
        m->next_edge = next_edge(m);
    }
}

static hl_site_t *site_of(hl_metrics_t *m, int64_t stack)
{
    uint64_t cached;
    if (hl_hcache_get(&m->site_cache, (uint64_t)stack + 1, &cached)) return &m->r->sites[cached];
    int fresh;
    uint64_t *ix = hl_hmap_put(&m->sites, (uint64_t)stack + 1, m->r->nsites, &fresh);
    hl_hcache_fill(&m->site_cache, (uint64_t)stack + 1, *ix);
    if (fresh) {
        hl_site_t *s = HL_VEC_PUSH(m->r->sites, m->r->nsites, m->sites_cap);
        memset(s, 0, sizeof *s);
        s->stack = stack;
        uint64_t *k = m->supp ? hl_hmap_get(m->supp, (uint64_t)stack + 1) : NULL;
        s->supp = k ? (int)*k : 0;
    }
    return &m->r->sites[*ix];
}

static void path_sample(hl_metrics_t *m, int op, int path, int64_t cycles)
{
    if (op < 1 || op > 3) return;
    if (path < 0 || path >= HL_MAX_PATHS) path = HL_MAX_PATHS - 1;
    m->sample_gen++;
    m->sample_op = op;
    m->sample_path = path;
    m->sample_cycles = cycles;
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

int hl_metrics_event(hl_metrics_t *m, const hl_event_t *ev)
{
    hl_report_t *r = m->r;
    if (r->to_ns >= 0 && ev->ts > m->t1) return 0;
    int in_window = ev->ts >= m->t0;
    if (in_window && ev->ts > m->next_edge) take_samples(m, ev->ts);
    switch (ev->kind) {
    case HL_EV_ALLOC: {
        int failed = ev->flags & HL_BF_FAILED;
        /* Counted by the call made (docs/metrics.md, "Counts"): realloc(NULL, n) is a
         * realloc whatever path served it. */
        int op = ev->flags & HL_BF_FROM_REALLOC ? HL_OP_REALLOC : HL_OP_ALLOC;
        if (in_window) {
            path_sample(m, op, ev->path, ev->cycles);
            if (!failed) r->started++;
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
        if (ev->tier == HL_TIER_MID) hl_midstate_block_put(m->mid, ev->pid, ev->ptr, ev->usable);
        if (ev->tier == HL_TIER_TINY && ev->cls >= 0 && ev->cls < HL_NCLASSES) {
            uint64_t live = ++m->class_live[ev->cls];
            hl_class_stat_t *c = &r->classes[ev->cls];
            if (live > c->peak) c->peak = live;
            c->live_requested += ev->size;
            if (in_window) c->allocs++;
        }
        hl_site_t *site = site_of(m, ev->stack);
        if (!site->supp) {
            if (ev->size < LIVE_SMALL)
                m->live_small[ev->size]++;
            else
                (*hl_hmap_put(&m->live_size, ev->size, 0, NULL))++;
        }
        site->live_blocks++;
        site->live_bytes += ev->size;
        if (ev->tid >= 0)
            hl_hcache_store(&m->last_cache, &m->last_alloc,
                            ((uint64_t)ev->pid << 32) ^ (uint64_t)ev->tid, (uint64_t)ev->block);
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
        /* A quotient can only pass util_max when R grew or H shrank since the one that set
         * it (rounding is monotone): the division is skipped otherwise. */
        if (h && in_window && (m->R > m->util_R || h < m->util_H) &&
            (double)m->R / (double)h > r->util_max) {
            r->util_max = (double)m->R / (double)h;
            m->util_R = m->R;
            m->util_H = h;
        }
        if (in_window && (m->R > r->peak_R || !r->peak_seq)) {
            r->peak_R = m->R;
            r->peak_U = m->U;
            r->peak_H = h;
            r->peak_ts = ev->ts - r->run.start_ts;
            r->peak_seq = ev->seq;
            hl_midstate_mark(m->mid); /* the state now is the peak's */
        }
        break;
    }
    case HL_EV_FREE: {
        if (ev->flags & HL_BF_FAILED) break;
        m->R -= ev->size;
        m->U -= ev->usable;
        if (ev->tier == HL_TIER_MID) hl_midstate_block_del(m->mid, ev->pid, ev->ptr);
        if (ev->tier == HL_TIER_TINY && ev->cls >= 0 && ev->cls < HL_NCLASSES) {
            m->class_live[ev->cls]--;
            r->classes[ev->cls].live_requested -= ev->size;
        }
        hl_site_t *site = site_of(m, ev->alloc_stack);
        if (site->supp) {
        } else if (ev->size < LIVE_SMALL) {
            if (m->live_small[ev->size]) m->live_small[ev->size]--;
        } else {
            uint64_t *ls = hl_hmap_get(&m->live_size, ev->size);
            if (ls && --*ls == 0) hl_hmap_del(&m->live_size, ev->size, NULL);
        }
        site->live_blocks--;
        site->live_bytes -= ev->size;
        int temporary = 0;
        if (ev->tid >= 0) {
            uint64_t key = ((uint64_t)ev->pid << 32) ^ (uint64_t)ev->tid, v;
            if (hl_hcache_get(&m->last_cache, key, &v)) {
                temporary = v == (uint64_t)ev->block;
            } else {
                uint64_t *last = hl_hmap_get(&m->last_alloc, key);
                temporary = last && *last == (uint64_t)ev->block;
            }
        }
        if (in_window) {
            /* The old side of a realloc is part of the realloc operation, counted once on
             * the new block; it is not a free of its own. A realloc(p, 0) starts no block:
             * the end of p is the realloc, and carries its cycles (the old side of any other
             * realloc has none, schemas/heapledger.sql). An end inferred from a reuse of the
             * pointer is no operation seen. */
            if (ev->flags & HL_BF_TO_REALLOC) {
                if (ev->cycles >= 0) {
                    r->reallocs++;
                    path_sample(m, HL_OP_REALLOC, ev->path, ev->cycles);
                }
            } else if (!(ev->flags & HL_BF_END_INFERRED)) {
                r->frees++;
                path_sample(m, HL_OP_FREE, ev->path, ev->cycles);
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
        /* A free of a block allocated before tracing began; with a realloc path and no
         * cycles it is the old side of a realloc of such a block, counted as that realloc
         * on its new block. */
        if (in_window && (ev->cycles >= 0 || hl_path_op((unsigned)ev->path) != HL_OP_REALLOC)) {
            r->orphan_frees++;
            path_sample(m, HL_OP_FREE, ev->path, ev->cycles);
        }
        break;
    case HL_EV_MAP:
    case HL_EV_UNMAP: {
        m->have_os = 1;
        if (!r->held_source) r->held_source = "os_region";
        if (ev->kind == HL_EV_MAP) {
            m->H_os += ev->size;
            hl_midstate_region_put(m->mid, ev->pid, ev->ptr, ev->size, ev->purpose);
        } else {
            m->H_os -= ev->size < m->H_os ? ev->size : m->H_os;
            hl_midstate_region_del(m->mid, ev->pid, ev->ptr);
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

void hl_metrics_set_suppressed(hl_metrics_t *m, const hl_hmap_t *kinds)
{
    m->supp = kinds;
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

uint64_t hl_metrics_last_sample(const hl_metrics_t *m, int *op, int *path, int64_t *cycles)
{
    *op = m->sample_op;
    *path = m->sample_path;
    *cycles = m->sample_cycles;
    return m->sample_gen;
}

const hl_report_t *hl_metrics_report(const hl_metrics_t *m)
{
    return m->r;
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
    {
        int known;
        hl_frag_t f = hl_midstate_marked_frag(m->mid, &known);
        if (known) {
            r->frag_peak = f;
            r->external_peak = f.external;
        }
    }
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
    r->frag_end = hl_midstate_frag(m->mid, &known);
    r->external_end = known ? r->frag_end.external : -1;
    if (m->ext_override > -2) {
        r->external_end = m->ext_override;
    }
    r->util_peak = frac(r->peak_R, r->peak_H);
    r->internal_peak = frac(r->peak_U - r->peak_R, r->peak_U);
    if (r->util_max < r->util_peak) r->util_max = r->util_peak;

    /* Leaks: the live blocks of sites not suppressed; the others counted apart. */
    uint64_t live_blocks = 0;
    for (size_t i = 0; i < r->nsites; i++) {
        const hl_site_t *si = &r->sites[i];
        live_blocks += si->live_blocks;
        if (si->supp > 0 && si->supp < 3) {
            r->supp_blocks[si->supp] += si->live_blocks;
            r->supp_bytes[si->supp] += si->live_bytes;
        } else {
            r->leak_blocks += si->live_blocks;
            r->leak_bytes += si->live_bytes;
        }
    }
    size_t lcap = 0;
    const hl_hmap_slot_t *s;
    for (uint64_t size = 0; size < LIVE_SMALL; size++) {
        if (!m->live_small[size]) continue;
        hl_leak_size_t *l = HL_VEC_PUSH(r->leak_sizes, r->nleak_sizes, lcap);
        l->size = size;
        l->blocks = m->live_small[size];
        l->bytes = size * m->live_small[size];
    }
    for (size_t i = 0; hl_hmap_iter(&m->live_size, &i, &s);) {
        hl_leak_size_t *l = HL_VEC_PUSH(r->leak_sizes, r->nleak_sizes, lcap);
        l->size = s->key;
        l->blocks = s->val;
        l->bytes = s->key * s->val;
    }
    if (r->nleak_sizes) qsort(r->leak_sizes, r->nleak_sizes, sizeof *r->leak_sizes, cmp_leak_size);
    r->lifetime[HL_LIFE_BUCKETS] = live_blocks;
    if (r->nsites) qsort(r->sites, r->nsites, sizeof *r->sites, cmp_site);

    hl_midstate_free(m->mid);
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
    free(r->site_cycles);
    free(r->slowest);
    for (size_t i = 0; i < r->nerrors; i++) {
        free(r->errors[i].kind);
        free(r->errors[i].details);
    }
    free(r->errors);
    if (r->replay) free(r->replay->options);
    if (r->replay) hl_arena_map_free(r->replay->fail_map);
    free(r->replay);
    free(r->kernel);
    hl_leakclass_free(r->leakclass);
    free(r);
}
