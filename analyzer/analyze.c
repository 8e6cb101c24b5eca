/* analyzer/analyze.c — see analyze.h. */
#include "analyze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hl_schema.h"
#include "hmap.h"
#include "kview.h"
#include "leakclass.h"
#include "metrics.h"
#include "suppress.h"
#include "progress.h"
#include "rundb.h"
#include "sites.h"
#include "stream.h"

int64_t hl_parse_time(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0) return -1;
    double mul = 1e9;
    if (!strcmp(end, "ns"))
        mul = 1;
    else if (!strcmp(end, "us"))
        mul = 1e3;
    else if (!strcmp(end, "ms"))
        mul = 1e6;
    else if (!strcmp(end, "s") || !*end)
        mul = 1e9;
    else
        return -1;
    v = v * mul + 0.5;
    return v < (double)HL_TS_MAX ? (int64_t)v : HL_TS_MAX;
}

static void load_errors(sqlite3 *db, hl_report_t *r)
{
    char q[512];
    int64_t t0 = r->run.start_ts + (r->from_ns > 0 ? r->from_ns : 0);
    int64_t t1 = r->to_ns >= 0 ? r->run.start_ts + r->to_ns : INT64_MAX;
    snprintf(q, sizeof q,
             "SELECT ts, pid, tid, kind, details, addr, size, stack, alloc_stack, free_stack "
             "FROM error WHERE ts >= %lld AND ts <= %lld %s ORDER BY ts, id",
             (long long)t0, (long long)t1, r->pid > 0 ? "AND pid = ?" : "");
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) return;
    if (r->pid > 0) sqlite3_bind_int64(st, 1, r->pid);
    size_t cap = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        hl_error_rec_t *e = HL_VEC_PUSH(r->errors, r->nerrors, cap);
        e->ts = hl_ts(sqlite3_column_int64(st, 0)) - r->run.start_ts;
        e->pid = sqlite3_column_int64(st, 1);
        e->tid = hl_col_i64(st, 2, -1);
        e->kind = hl_col_strdup(st, 3);
        e->details = hl_col_strdup(st, 4);
        e->addr = (uint64_t)hl_col_i64(st, 5, 0);
        e->size = (uint64_t)hl_col_i64(st, 6, 0);
        e->stack = hl_col_i64(st, 7, -1);
        e->alloc_stack = hl_col_i64(st, 8, -1);
        e->free_stack = hl_col_i64(st, 9, -1);
    }
    sqlite3_finalize(st);
}

/* The event just fed, when metrics counted it in a path's cycle budget, goes to the per-site
 * budget under the same op and path (sites.h). Returns the sample counter seen. */
static uint64_t site_sample(hl_sitecyc_t *sc, const hl_metrics_t *m, const hl_event_t *ev,
                            uint64_t seen)
{
    int op, path;
    int64_t cycles;
    uint64_t gen = hl_metrics_last_sample(m, &op, &path, &cycles);
    if (gen != seen) hl_sitecyc_add(sc, op, path, cycles, ev, hl_metrics_report(m)->run.start_ts);
    return gen;
}

/* One pass; *reorder set when the database's rowid order is not allocation order. */
static hl_report_t *analyze_pass(sqlite3 *db, const char *path, const hl_analyze_opts_t *o,
                                 int by_index, int *reorder, char *err, size_t errlen)
{
    hl_run_t run;
    if (hl_run_load(db, path, o->pid, &run, err, errlen) < 0) return NULL;
    if (!run.has_blocks && run.orphan_frees == 0) {
        if (o->pid > 0)
            snprintf(err, errlen, "%s: no allocation events for pid %lld", path, (long long)o->pid);
        else
            snprintf(err, errlen, "%s: empty run: the recording holds no allocation events", path);
        hl_run_free(&run);
        return NULL;
    }
    int64_t max_seq = run.max_seq;
    /* Suppressed stacks first: one scan of the frame table. */
    hl_hmap_t supp = {0};
    hl_supp_t *builtin = o->supp ? NULL : hl_supp_new();
    int classified = hl_supp_classify(o->supp ? o->supp : builtin, db, &supp);
    hl_supp_free(builtin);
    if (classified < 0) {
        snprintf(err, errlen, "%s: reading frames: %s", path, sqlite3_errmsg(db));
        hl_run_free(&run);
        hl_hmap_free(&supp);
        return NULL;
    }
    hl_metrics_t *m = hl_metrics_new(&run, o->pid, o->from_ns, o->to_ns);
    hl_metrics_set_suppressed(m, &supp);
    hl_stream_t *s = hl_stream_open(db, o->pid, by_index, err, errlen);
    if (!s) {
        hl_report_free(hl_metrics_finish(m));
        hl_hmap_free(&supp);
        return NULL;
    }
    /* The kernel's view, when the run has kernel events: its cursor catches up with each
     * allocator event's time before the event (kview.h). */
    hl_kview_t *kv = hl_kview_open(db, hl_metrics_report(m), err, errlen);
    if (!kv && err[0]) {
        hl_stream_close(s);
        hl_report_free(hl_metrics_finish(m));
        hl_hmap_free(&supp);
        return NULL;
    }
    hl_sitecyc_t *sc = hl_sitecyc_new();
    uint64_t sample_gen = 0;
    hl_progress_t prog;
    hl_progress_begin(&prog, "analysing");
    const hl_event_t *ev;
    int rc;
    uint64_t n = 0;
    while ((rc = hl_stream_next_ref(s, &ev, err, errlen)) > 0) {
        if (kv) {
            if (hl_kview_until(kv, ev->ts, err, errlen) < 0) {
                rc = -1;
                break;
            }
            int64_t peak = hl_metrics_peak_seq(m);
            if (!hl_metrics_event(m, ev)) break;
            hl_kview_event(kv, ev);
            if (hl_metrics_peak_seq(m) != peak) hl_kview_peak(kv);
        } else if (!hl_metrics_event(m, ev)) {
            break;
        }
        sample_gen = site_sample(sc, m, ev, sample_gen);
        if ((++n & 0xffff) == 0) hl_progress_update(&prog, (uint64_t)ev->seq, (uint64_t)max_seq);
    }
    if (kv && rc >= 0 && hl_kview_until(kv, INT64_MAX, err, errlen) < 0) rc = -1;
    hl_progress_done(&prog);
    if (getenv("HEAPLEDGER_STATS")) {
        struct timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        fprintf(stderr, "heapledger: %llu events; main thread: %.3f s CPU, %zu free ends pending\n",
                (unsigned long long)n, (double)ts.tv_sec + (double)ts.tv_nsec / 1e9,
                hl_stream_pending(s));
    }
    hl_hmap_t unfreed = {0}, unfreed_bytes = {0};
    int counted = rc == 0 && hl_stream_take_unfreed(s, &unfreed, &unfreed_bytes);
    hl_stream_close(s);
    *reorder = rc == HL_STREAM_REORDER;
    if (rc < 0) {
        hl_hmap_free(&unfreed);
        hl_hmap_free(&unfreed_bytes);
        hl_sitecyc_free(sc);
        hl_kview_close(kv);
        hl_report_free(hl_metrics_finish(m));
        hl_hmap_free(&supp);
        return NULL;
    }
    hl_report_t *r = hl_metrics_finish(m);
    hl_sitecyc_finish(sc, r);
    hl_hmap_free(&supp);
    if (kv) hl_kview_finish(kv, r);
    r->db = db;
    load_errors(db, r);
    r->leakclass =
        hl_leakclass_load_counted(db, counted ? &unfreed : NULL, counted ? &unfreed_bytes : NULL);
    hl_hmap_free(&unfreed);
    hl_hmap_free(&unfreed_bytes);
    return r;
}

hl_report_t *hl_analyze(sqlite3 *db, const char *path, const hl_analyze_opts_t *o, char *err,
                        size_t errlen)
{
    int reorder = 0;
    hl_report_t *r = analyze_pass(db, path, o, 0, &reorder, err, errlen);
    if (!r && reorder) r = analyze_pass(db, path, o, 1, &reorder, err, errlen);
    return r;
}
