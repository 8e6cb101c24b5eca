/* analyzer/render_json.c — the report as one JSON document (schemas/report.schema.json). */
#include <stdlib.h>
#include <string.h>

#include "arenamap.h"
#include "hl_schema.h"
#include "jsonw.h"
#include "leakclass.h"
#include "render.h"
#include "suppress.h"
#include "symbols.h"

static void str_or_null(hl_json_t *j, const char *key, const char *v)
{
    hl_json_key(j, key);
    if (v)
        hl_json_str(j, v);
    else
        hl_json_null(j);
}

/* "frames": the printed form of each frame; "locations": the same frames as objects. */
static void frames(hl_json_t *j, sqlite3 *db, int64_t stack)
{
    hl_frames_t fr = {0};
    if (stack < 0 || hl_frames_load(db, stack, &fr) != 0) memset(&fr, 0, sizeof fr);
    hl_json_key(j, "frames");
    hl_json_arr(j);
    for (size_t i = 0; i < fr.n; i++)
        hl_json_str(j, fr.frame[i]);
    hl_json_arr_end(j);
    hl_json_key(j, "locations");
    hl_json_arr(j);
    for (size_t i = 0; i < fr.n; i++) {
        const hl_frame_t *l = &fr.loc[i];
        hl_json_obj(j);
        str_or_null(j, "function", l->function);
        hl_json_key(j, "offset");
        if (l->offset >= 0)
            hl_json_i64(j, l->offset);
        else
            hl_json_null(j);
        str_or_null(j, "file", l->file);
        hl_json_key(j, "line");
        if (l->file)
            hl_json_i64(j, l->line);
        else
            hl_json_null(j);
        str_or_null(j, "module", l->module);
        hl_json_obj_end(j);
    }
    hl_json_arr_end(j);
    hl_frames_free(&fr);
}

static void kv_u64(hl_json_t *j, const char *key, uint64_t v)
{
    hl_json_key(j, key);
    hl_json_u64(j, v);
}

/* key: v when known, else null. */
static void kv_u64_or_null(hl_json_t *j, const char *key, int known, uint64_t v)
{
    hl_json_key(j, key);
    if (known)
        hl_json_u64(j, v);
    else
        hl_json_null(j);
}

static void kv_i64_or_null(hl_json_t *j, const char *key, int known, int64_t v)
{
    hl_json_key(j, key);
    if (known)
        hl_json_i64(j, v);
    else
        hl_json_null(j);
}

static void stack_id(hl_json_t *j, const char *key, int64_t stack)
{
    kv_i64_or_null(j, key, stack >= 0, stack);
}

static void bytes3(hl_json_t *j, const char *key, uint64_t R, uint64_t U, uint64_t H)
{
    hl_json_key(j, key);
    hl_json_obj(j);
    hl_json_key(j, "requested");
    hl_json_u64(j, R);
    hl_json_key(j, "usable");
    hl_json_u64(j, U);
    hl_json_key(j, "held");
    hl_json_u64(j, H);
    hl_json_obj_end(j);
}

static void site_obj(hl_json_t *j, sqlite3 *db, const hl_site_t *s)
{
    hl_json_obj(j);
    stack_id(j, "stack", s->stack);
    hl_json_key(j, "count");
    hl_json_u64(j, s->count);
    hl_json_key(j, "bytes");
    hl_json_u64(j, s->bytes);
    hl_json_key(j, "temporary");
    hl_json_u64(j, s->temporary);
    hl_json_key(j, "live_blocks");
    hl_json_u64(j, s->live_blocks);
    hl_json_key(j, "live_bytes");
    hl_json_u64(j, s->live_bytes);
    frames(j, db, s->stack);
    hl_json_obj_end(j);
}

/* "site_cycles" (up to top sites per path, by cycles) and "slowest" (up to top operations):
 * docs/metrics.md, "Cycles per call site". Absent when not computed (replay). */
static void site_cycles_obj(hl_json_t *j, const hl_report_t *r, int top)
{
    if (!r->has_site_cycles) return;
    hl_json_key(j, "site_cycles");
    hl_json_arr(j);
    size_t shown = 0;
    for (size_t i = 0; i < r->nsite_cycles; i++) {
        const hl_site_cycles_t *s = &r->site_cycles[i];
        if (i && (s->op != s[-1].op || s->path != s[-1].path)) shown = 0;
        if (shown++ >= (size_t)top) continue;
        hl_json_obj(j);
        hl_json_key(j, "op");
        hl_json_str(j, hl_op_name((unsigned)s->op));
        hl_json_key(j, "path");
        hl_json_str(j, hl_path_name((unsigned)s->path));
        stack_id(j, "stack", s->stack);
        kv_u64(j, "count", s->count);
        kv_u64(j, "timed", s->timed);
        kv_u64(j, "cycles", s->cycles);
        hl_json_key(j, "share");
        hl_json_frac(j, s->share);
        const char *k[] = {"p50", "p99", "mean"};
        double v[] = {s->p50, s->p99, s->mean};
        for (int q = 0; q < 3; q++) {
            hl_json_key(j, k[q]);
            if (s->timed)
                hl_json_num(j, v[q]);
            else
                hl_json_null(j);
        }
        frames(j, r->db, s->stack);
        hl_json_obj_end(j);
    }
    hl_json_arr_end(j);
    hl_json_key(j, "slowest");
    hl_json_arr(j);
    for (size_t i = 0; i < r->nslowest && i < (size_t)top; i++) {
        const hl_slow_op_t *o = &r->slowest[i];
        hl_json_obj(j);
        hl_json_key(j, "op");
        hl_json_str(j, hl_op_name((unsigned)o->op));
        hl_json_key(j, "path");
        hl_json_str(j, hl_path_name((unsigned)o->path));
        hl_json_key(j, "cycles");
        hl_json_i64(j, o->cycles);
        hl_json_key(j, "ns");
        hl_json_frac(j, r->run.tsc_hz > 0 ? (double)o->cycles * 1e9 / (double)r->run.tsc_hz : -1);
        hl_json_key(j, "seq");
        hl_json_i64(j, o->seq);
        hl_json_key(j, "ts_ns");
        hl_json_i64(j, o->ts);
        hl_json_key(j, "pid");
        hl_json_i64(j, o->pid);
        hl_json_key(j, "tid");
        hl_json_i64(j, o->tid);
        kv_u64(j, "size", o->size);
        stack_id(j, "stack", o->stack);
        frames(j, r->db, o->stack);
        hl_json_obj_end(j);
    }
    hl_json_arr_end(j);
}

static void kfault(hl_json_t *j, const hl_kfault_t *x)
{
    kv_u64(j, "pages", x->pages);
    kv_u64(j, "runs", x->runs);
}

/* The kernel view (docs/metrics.md, "Kernel view"); null without kernel events. */
static void kernel_obj(hl_json_t *j, const hl_report_t *r)
{
    const hl_kernel_report_t *k = r->kernel;
    hl_json_key(j, "kernel");
    if (!k) {
        hl_json_null(j);
        return;
    }
    hl_json_obj(j);
    kv_u64(j, "events", k->events);
    kv_u64(j, "dropped", k->dropped);
    kv_u64(j, "page_size", k->page);
    hl_json_key(j, "rss");
    hl_json_obj(j);
    kv_u64(j, "samples", k->rss_samples);
    kv_u64(j, "peak", k->rss_peak);
    kv_u64(j, "peak_anon", k->anon_peak);
    hl_json_key(j, "peak_ts_ns");
    hl_json_i64(j, k->rss_peak_ts);
    kv_u64(j, "end", k->rss_end);
    kv_u64(j, "end_anon", k->anon_end);
    hl_json_obj_end(j);
    hl_json_key(j, "at_peak");
    hl_json_obj(j);
    kv_u64_or_null(j, "rss", k->peak_has_rss, k->peak_rss);
    kv_u64_or_null(j, "rss_anon", k->peak_has_rss, k->peak_anon);
    kv_u64(j, "heap_resident", k->peak_heap_resident);
    kv_u64(j, "resident_in_blocks", k->peak_res_blocks);
    kv_u64(j, "usable", k->peak_U);
    kv_u64(j, "held", k->peak_H);
    kv_u64(j, "fragmentation_rss_cost", k->frag_rss_cost);
    kv_i64_or_null(j, "outside_heap_rss", k->peak_has_rss, k->other_rss);
    kv_u64(j, "live_not_resident", k->live_untouched);
    kv_u64(j, "held_not_resident", k->held_untouched);
    hl_json_obj_end(j);
    hl_json_key(j, "faults");
    hl_json_obj(j);
    kv_u64(j, "pages", k->fault_pages);
    kv_u64(j, "runs", k->fault_runs);
    kv_u64(j, "pages_in_blocks", k->pages_in_blocks);
    kv_u64(j, "runs_in_blocks", k->runs_in_blocks);
    kv_u64(j, "pages_heap_free", k->pages_heap_free);
    kv_u64(j, "pages_outside", k->pages_outside);
    hl_json_key(j, "by_path");
    hl_json_arr(j);
    for (int p = 0; p < HL_MAX_PATHS; p++) {
        if (!k->path[p].runs) continue;
        hl_json_obj(j);
        hl_json_key(j, "path");
        if (p < (int)HL_PATH_COUNT) {
            hl_json_str(j, hl_path_name((unsigned)p));
        } else {
            char name[32];
            snprintf(name, sizeof name, "path#%d", p);
            hl_json_str(j, name);
        }
        kfault(j, &k->path[p]);
        hl_json_obj_end(j);
    }
    hl_json_arr_end(j);
    hl_json_key(j, "by_class");
    hl_json_arr(j);
    for (int c = 0; c < HL_NCLASSES; c++) {
        if (!k->cls[c].runs) continue;
        hl_json_obj(j);
        hl_json_key(j, "class");
        hl_json_i64(j, c);
        kv_u64(j, "slot", hl_class_slot((unsigned)c));
        kfault(j, &k->cls[c]);
        hl_json_obj_end(j);
    }
    hl_json_arr_end(j);
    hl_json_key(j, "by_tier");
    hl_json_arr(j);
    for (int t = HL_TIER_TINY; t <= HL_TIER_LARGE; t++) {
        if (!k->tier[t].runs) continue;
        hl_json_obj(j);
        hl_json_key(j, "tier");
        hl_json_str(j, hl_tier_name((unsigned)t));
        kfault(j, &k->tier[t]);
        hl_json_obj_end(j);
    }
    hl_json_arr_end(j);
    hl_json_obj_end(j);
    hl_json_key(j, "never_touched");
    hl_json_obj(j);
    kv_u64(j, "bytes", k->never_touched_bytes);
    kv_u64(j, "mapped", k->mapped_bytes);
    hl_json_key(j, "by_purpose");
    hl_json_arr(j);
    for (int g = 0; g < HL_KREGIONS; g++) {
        const hl_kregion_t *x = &k->region[g];
        if (!x->mappings) continue;
        hl_json_obj(j);
        hl_json_key(j, "purpose");
        hl_json_str(j, hl_kregion_names[g]);
        kv_u64(j, "mappings", x->mappings);
        kv_u64(j, "bytes", x->bytes);
        kv_u64(j, "touched", x->touched);
        kv_u64(j, "never_touched", x->never_touched);
        hl_json_obj_end(j);
    }
    hl_json_arr_end(j);
    hl_json_obj_end(j);
    hl_json_obj_end(j);
}

/* The leak scan's classes (leakclass.h): leaks.classes, only when the run has a scan. */
static void leak_classes_json(hl_json_t *j, const hl_report_t *r, int top)
{
    const hl_leakclass_report_t *lc = r->leakclass;
    static const char *const keys[4] = {"unclassified", "definitely_lost", "indirectly_lost",
                                        "still_reachable"};
    hl_json_key(j, "classes");
    hl_json_obj(j);
    kv_u64(j, "scans", lc->scans);
    kv_u64(j, "status", lc->status);
    hl_json_key(j, "status_text");
    hl_json_str(j, hl_leakclass_status(lc->status));
    kv_u64(j, "threads", lc->threads);
    kv_u64(j, "threads_scanned", lc->threads_scanned);
    kv_u64(j, "unmatched", lc->unmatched);
    for (int k = 0; k < 4; k++) {
        hl_json_key(j, keys[k]);
        hl_json_obj(j);
        kv_u64(j, "blocks", lc->blocks[k]);
        kv_u64(j, "bytes", lc->bytes[k]);
        hl_json_obj_end(j);
    }
    hl_json_key(j, "leaked");
    hl_json_obj(j);
    kv_u64(j, "blocks", lc->blocks[1] + lc->blocks[2]);
    kv_u64(j, "bytes", lc->bytes[1] + lc->bytes[2]);
    hl_json_obj_end(j);
    hl_json_key(j, "by_stack");
    hl_json_arr(j);
    for (size_t i = 0; i < lc->nsites && i < (size_t)top; i++) {
        const hl_leak_site_t *s = &lc->sites[i];
        hl_json_obj(j);
        stack_id(j, "stack", s->stack);
        kv_u64(j, "definite_blocks", s->definite_blocks);
        kv_u64(j, "definite_bytes", s->definite_bytes);
        kv_u64(j, "indirect_blocks", s->indirect_blocks);
        kv_u64(j, "indirect_bytes", s->indirect_bytes);
        frames(j, r->db, s->stack);
        hl_json_obj_end(j);
    }
    hl_json_arr_end(j);
    hl_json_obj_end(j);
}

void hl_render_json(FILE *f, hl_report_t *r, const hl_render_opts_t *o)
{
    int top = o && o->top > 0 ? o->top : 10;
    const hl_run_t *run = &r->run;
    hl_json_t j;
    hl_json_init(&j, f);
    hl_json_obj(&j);
    hl_json_key(&j, "heapledger_report");
    hl_json_u64(&j, 1);
    hl_json_key(&j, "source");
    hl_json_str(&j, r->source);

    hl_json_key(&j, "run");
    hl_json_obj(&j);
    hl_json_key(&j, "database");
    hl_json_str(&j, run->path);
    hl_json_key(&j, "command");
    hl_json_str(&j, run->command);
    hl_json_key(&j, "options");
    hl_json_str(&j, run->options);
    hl_json_key(&j, "host");
    hl_json_str(&j, run->host);
    hl_json_key(&j, "version");
    hl_json_str(&j, run->version);
    hl_json_key(&j, "tsc_hz");
    hl_json_i64(&j, run->tsc_hz);
    hl_json_key(&j, "duration_s");
    hl_json_num(&j, r->duration_s);
    hl_json_key(&j, "events");
    hl_json_i64(&j, run->events);
    hl_json_key(&j, "events_analysed");
    hl_json_u64(&j, r->events);
    hl_json_key(&j, "discarded_events");
    hl_json_i64(&j, run->discarded);
    hl_json_key(&j, "approximate");
    hl_json_bool(&j, r->approximate);
    hl_json_key(&j, "processes");
    hl_json_i64(&j, run->processes);
    hl_json_key(&j, "threads");
    hl_json_i64(&j, run->threads);
    hl_json_key(&j, "arena_size");
    hl_json_i64(&j, run->arena_size);
    kv_i64_or_null(&j, "pid", r->pid > 0, r->pid);
    hl_json_key(&j, "from_ns");
    hl_json_frac(&j, (double)r->from_ns);
    hl_json_key(&j, "to_ns");
    hl_json_frac(&j, (double)r->to_ns);
    hl_json_key(&j, "allocs");
    hl_json_u64(&j, r->allocs);
    hl_json_key(&j, "frees");
    hl_json_u64(&j, r->frees);
    hl_json_key(&j, "reallocs");
    hl_json_u64(&j, r->reallocs);
    hl_json_key(&j, "failed");
    hl_json_u64(&j, r->failed);
    hl_json_key(&j, "orphan_frees");
    hl_json_u64(&j, r->orphan_frees);
    hl_json_key(&j, "bytes_allocated");
    hl_json_u64(&j, r->bytes_allocated);
    hl_json_obj_end(&j);

    hl_json_key(&j, "utilisation");
    hl_json_obj(&j);
    hl_json_key(&j, "peak");
    hl_json_frac(&j, r->util_peak);
    hl_json_key(&j, "max");
    hl_json_frac(&j, r->util_max);
    hl_json_key(&j, "end");
    hl_json_frac(&j, r->util_end);
    hl_json_key(&j, "held_source");
    hl_json_str(&j, r->held_source);
    hl_json_key(&j, "held_incomplete");
    hl_json_bool(&j, r->held_incomplete);
    hl_json_key(&j, "peak_ts_ns");
    hl_json_i64(&j, r->peak_ts);
    bytes3(&j, "peak_bytes", r->peak_R, r->peak_U, r->peak_H);
    bytes3(&j, "end_bytes", r->end_R, r->end_U, r->end_H);
    hl_json_key(&j, "max_usable");
    hl_json_u64(&j, r->max_U);
    hl_json_key(&j, "max_held");
    hl_json_u64(&j, r->max_H);
    hl_json_key(&j, "first_failure");
    if (r->has_failure) {
        hl_json_obj(&j);
        hl_json_key(&j, "ts_ns");
        hl_json_i64(&j, r->fail_ts);
        hl_json_key(&j, "seq");
        hl_json_i64(&j, r->fail_seq);
        hl_json_key(&j, "size");
        hl_json_u64(&j, r->fail_size);
        hl_json_key(&j, "requested_live");
        hl_json_u64(&j, r->fail_R);
        hl_json_key(&j, "utilisation");
        hl_json_frac(&j, r->fail_util);
        hl_json_obj_end(&j);
    } else {
        hl_json_null(&j);
    }
    hl_json_key(&j, "timeline");
    hl_json_arr(&j);
    for (int i = 0; i < r->nsamples; i++) {
        const hl_sample_t *s = &r->samples[i];
        hl_json_obj(&j);
        hl_json_key(&j, "ts_ns");
        hl_json_i64(&j, s->ts);
        hl_json_key(&j, "requested");
        hl_json_u64(&j, s->R);
        hl_json_key(&j, "requested_max");
        hl_json_u64(&j, s->R_max);
        hl_json_key(&j, "usable");
        hl_json_u64(&j, s->U);
        hl_json_key(&j, "held");
        hl_json_u64(&j, s->H);
        hl_json_key(&j, "external");
        hl_json_frac(&j, s->external);
        if (r->kernel) { /* the last RSS sample at this point, null before the first */
            kv_u64_or_null(&j, "rss", r->kernel->has_rss[i], r->kernel->rss[i]);
            kv_u64_or_null(&j, "rss_anon", r->kernel->has_rss[i], r->kernel->anon[i]);
        }
        hl_json_obj_end(&j);
    }
    hl_json_arr_end(&j);
    hl_json_obj_end(&j);

    hl_json_key(&j, "fragmentation");
    hl_json_obj(&j);
    hl_json_key(&j, "internal");
    hl_json_frac(&j, r->internal_peak);
    hl_json_key(&j, "external");
    hl_json_frac(&j, r->external_peak);
    hl_json_key(&j, "internal_end");
    hl_json_frac(&j, r->internal_end);
    hl_json_key(&j, "external_end");
    hl_json_frac(&j, r->external_end);
    hl_json_key(&j, "mid_free_bytes");
    hl_json_u64(&j, r->frag_peak.free_bytes);
    hl_json_key(&j, "mid_largest_free");
    hl_json_u64(&j, r->frag_peak.largest);
    hl_json_key(&j, "mid_free_spans");
    hl_json_u64(&j, r->frag_peak.spans);
    hl_json_obj_end(&j);

    hl_json_key(&j, "paths");
    hl_json_arr(&j);
    for (size_t i = 0; i < r->npaths; i++) {
        const hl_path_stat_t *p = &r->paths[i];
        hl_json_obj(&j);
        hl_json_key(&j, "op");
        hl_json_str(&j, hl_op_name((unsigned)p->op));
        hl_json_key(&j, "path");
        hl_json_str(&j, hl_path_name((unsigned)p->path));
        hl_json_key(&j, "count");
        hl_json_u64(&j, p->count);
        hl_json_key(&j, "share");
        hl_json_num(&j, p->share);
        hl_json_key(&j, "timed");
        hl_json_u64(&j, p->timed);
        hl_json_key(&j, "cycles");
        hl_json_obj(&j);
        const char *k[] = {"p01", "p25", "p50", "p75", "p99", "mean"};
        double v[] = {p->p01, p->p25, p->p50, p->p75, p->p99, p->mean};
        for (int q = 0; q < 6; q++) {
            hl_json_key(&j, k[q]);
            if (p->timed)
                hl_json_num(&j, v[q]);
            else
                hl_json_null(&j);
        }
        hl_json_obj_end(&j);
        hl_json_key(&j, "ns_p50");
        hl_json_frac(&j, p->timed ? p->ns_p50 : -1);
        hl_json_key(&j, "weighted_cycles");
        hl_json_num(&j, p->weighted);
        hl_json_obj_end(&j);
    }
    hl_json_arr_end(&j);
    site_cycles_obj(&j, r, top);

    hl_json_key(&j, "size_buckets");
    hl_json_arr(&j);
    for (int b = 0; b < HL_SIZE_BUCKETS; b++) {
        const hl_size_stat_t *s = &r->sizes[b];
        if (!s->count) continue;
        hl_json_obj(&j);
        hl_json_key(&j, "min");
        hl_json_u64(&j, s->lo);
        kv_u64_or_null(&j, "max", s->hi != UINT64_MAX, s->hi);
        hl_json_key(&j, "count");
        hl_json_u64(&j, s->count);
        hl_json_key(&j, "bytes");
        hl_json_u64(&j, s->bytes);
        const char *k[] = {"alloc_p50", "alloc_p99", "free_p50",
                           "free_p99",  "pair_p50",  "pair_p99"};
        double v[] = {s->alloc_p50, s->alloc_p99, s->free_p50,
                      s->free_p99,  s->pair_p50,  s->pair_p99};
        for (int q = 0; q < 6; q++) {
            hl_json_key(&j, k[q]);
            hl_json_frac(&j, v[q]);
        }
        hl_json_obj_end(&j);
    }
    hl_json_arr_end(&j);

    hl_json_key(&j, "classes");
    hl_json_arr(&j);
    for (int c = 0; c < r->nclasses; c++) {
        const hl_class_stat_t *cs = &r->classes[c];
        if (!cs->peak) continue;
        hl_json_obj(&j);
        hl_json_key(&j, "class");
        hl_json_i64(&j, cs->cls);
        hl_json_key(&j, "slot");
        hl_json_u64(&j, cs->slot);
        hl_json_key(&j, "allocs");
        hl_json_u64(&j, cs->allocs);
        hl_json_key(&j, "used");
        hl_json_u64(&j, cs->used);
        hl_json_key(&j, "peak");
        hl_json_u64(&j, cs->peak);
        hl_json_key(&j, "held_estimate");
        hl_json_u64(&j, cs->held);
        hl_json_obj_end(&j);
    }
    hl_json_arr_end(&j);

    hl_json_key(&j, "lifetimes");
    hl_json_arr(&j);
    for (int b = 0; b <= HL_LIFE_BUCKETS; b++) {
        hl_json_obj(&j);
        hl_json_key(&j, "bucket");
        hl_json_str(&j, hl_life_labels[b]);
        hl_json_key(&j, "blocks");
        hl_json_u64(&j, r->lifetime[b]);
        hl_json_obj_end(&j);
    }
    hl_json_arr_end(&j);
    hl_json_key(&j, "temporary");
    hl_json_u64(&j, r->temporary);

    hl_json_key(&j, "sites");
    hl_json_obj(&j);
    hl_json_key(&j, "total");
    hl_json_u64(&j, r->nsites);
    hl_json_key(&j, "by_bytes");
    hl_json_arr(&j);
    for (size_t i = 0; i < r->nsites && i < (size_t)top; i++)
        if (r->sites[i].count) site_obj(&j, r->db, &r->sites[i]);
    hl_json_arr_end(&j);
    size_t *bc = hl_sites_by_count(r);
    hl_json_key(&j, "by_count");
    hl_json_arr(&j);
    for (size_t i = 0; i < r->nsites && i < (size_t)top; i++)
        if (r->sites[bc[i]].count) site_obj(&j, r->db, &r->sites[bc[i]]);
    hl_json_arr_end(&j);
    free(bc);
    hl_json_obj_end(&j);

    hl_json_key(&j, "leaks");
    hl_json_obj(&j);
    hl_json_key(&j, "blocks");
    hl_json_u64(&j, r->leak_blocks);
    hl_json_key(&j, "bytes");
    hl_json_u64(&j, r->leak_bytes);
    hl_json_key(&j, "by_size");
    hl_json_arr(&j);
    for (size_t i = 0; i < r->nleak_sizes && i < (size_t)top; i++) {
        hl_json_obj(&j);
        hl_json_key(&j, "size");
        hl_json_u64(&j, r->leak_sizes[i].size);
        hl_json_key(&j, "blocks");
        hl_json_u64(&j, r->leak_sizes[i].blocks);
        hl_json_key(&j, "bytes");
        hl_json_u64(&j, r->leak_sizes[i].bytes);
        hl_json_obj_end(&j);
    }
    hl_json_arr_end(&j);
    hl_json_key(&j, "by_stack");
    hl_json_arr(&j);
    size_t *lx;
    size_t nl = hl_leak_sites(r, &lx);
    for (size_t i = 0; i < nl && i < (size_t)top; i++) {
        const hl_site_t *s = &r->sites[lx[i]];
        hl_json_obj(&j);
        stack_id(&j, "stack", s->stack);
        hl_json_key(&j, "blocks");
        hl_json_u64(&j, s->live_blocks);
        hl_json_key(&j, "bytes");
        hl_json_u64(&j, s->live_bytes);
        frames(&j, r->db, s->stack);
        hl_json_obj_end(&j);
    }
    free(lx);
    hl_json_arr_end(&j);
    /* Live blocks left out of the leaks: the C runtime's by design, the user's rules. */
    hl_json_key(&j, "suppressed");
    hl_json_obj(&j);
    static const char *const supp_keys[3] = {NULL, "runtime", "user"};
    for (int k = 1; k < 3; k++) {
        hl_json_key(&j, supp_keys[k]);
        hl_json_obj(&j);
        kv_u64(&j, "blocks", r->supp_blocks[k]);
        kv_u64(&j, "bytes", r->supp_bytes[k]);
        hl_json_obj_end(&j);
    }
    hl_json_obj_end(&j);
    if (r->leakclass) leak_classes_json(&j, r, top);
    hl_json_obj_end(&j);

    if (r->replay) {
        const hl_replay_info_t *in = r->replay;
        hl_json_key(&j, "replay");
        hl_json_obj(&j);
        hl_json_key(&j, "options");
        hl_json_str(&j, in->options);
        hl_json_key(&j, "arena_size");
        hl_json_u64(&j, in->arena_size);
        hl_json_key(&j, "pid");
        hl_json_i64(&j, in->pid);
        hl_json_key(&j, "operations");
        hl_json_u64(&j, in->operations);
        hl_json_key(&j, "skipped");
        hl_json_u64(&j, in->skipped);
        hl_json_key(&j, "failures");
        hl_json_u64(&j, in->failures);
        hl_json_key(&j, "first_failure");
        if (in->has_failure) {
            hl_json_obj(&j);
            hl_json_key(&j, "block");
            hl_json_i64(&j, in->fail_block);
            hl_json_key(&j, "seq");
            hl_json_i64(&j, in->fail_seq);
            hl_json_key(&j, "ts_ns");
            hl_json_i64(&j, in->fail_ts);
            hl_json_key(&j, "size");
            hl_json_u64(&j, in->fail_size);
            hl_json_key(&j, "requested_live");
            hl_json_u64(&j, in->fail_R);
            hl_json_key(&j, "utilisation");
            hl_json_frac(&j, in->fail_util);
            hl_json_key(&j, "free_bytes");
            hl_json_u64(&j, in->fail_free);
            hl_json_key(&j, "largest_free");
            hl_json_u64(&j, in->fail_largest);
            frames(&j, r->db, in->fail_stack); /* the failing request's allocation stack */
            hl_json_key(&j, "arena_map");      /* arenamap.h: null outside a fixed arena */
            if (in->fail_map) {
                hl_json_obj(&j);
                kv_u64(&j, "size", in->fail_map->size);
                kv_u64(&j, "used_runs", in->fail_map->used_runs);
                kv_u64(&j, "free_runs", in->fail_map->free_runs);
                kv_u64(&j, "free_bytes", in->fail_map->free_bytes);
                kv_u64(&j, "largest_free_run", in->fail_map->largest_free);
                hl_json_obj_end(&j);
            } else {
                hl_json_null(&j);
            }
            hl_json_obj_end(&j);
        } else {
            hl_json_null(&j);
        }
        hl_json_key(&j, "live_match");
        hl_json_bool(&j, in->live_match);
        const char *k[] = {"recorded_blocks", "recorded_requested", "recorded_usable",
                           "replayed_blocks", "replayed_requested", "replayed_usable",
                           "heap_used",       "usable_mismatch",    "offset_mismatch"};
        uint64_t v[] = {in->rec_blocks, in->rec_R,           in->rec_U,
                        in->rep_blocks, in->rep_R,           in->rep_U,
                        in->heap_used,  in->usable_mismatch, in->offset_mismatch};
        for (int q = 0; q < 9; q++) {
            hl_json_key(&j, k[q]);
            hl_json_u64(&j, v[q]);
        }
        hl_json_obj_end(&j);
    }

    if (!r->replay) kernel_obj(&j, r);

    hl_json_key(&j, "errors");
    hl_json_arr(&j);
    for (size_t i = 0; i < r->nerrors; i++) {
        const hl_error_rec_t *e = &r->errors[i];
        hl_json_obj(&j);
        hl_json_key(&j, "kind");
        hl_json_str(&j, e->kind);
        hl_json_key(&j, "addr");
        hl_json_u64(&j, e->addr);
        hl_json_key(&j, "size");
        hl_json_u64(&j, e->size);
        hl_json_key(&j, "ts_ns");
        hl_json_i64(&j, e->ts);
        hl_json_key(&j, "pid");
        hl_json_i64(&j, e->pid);
        hl_json_key(&j, "tid");
        hl_json_i64(&j, e->tid);
        hl_json_key(&j, "details");
        hl_json_str(&j, e->details);
        stack_id(&j, "stack", e->stack);
        frames(&j, r->db, e->stack);
        stack_id(&j, "alloc_stack", e->alloc_stack);
        stack_id(&j, "free_stack", e->free_stack);
        hl_json_obj_end(&j);
    }
    hl_json_arr_end(&j);
    hl_json_obj_end(&j);
}
