/* analyzer/cmd_diff.c — `heapledger diff A.db B.db [C.db ...] [--pid N] [--from T] [--to T]`: runs
 * side by side with deltas against the first, in the style of an allocator configuration comparison
 * (baseline vs hardened vs rotated): throughput, cycles per path, peak utilisation (points),
 * fragmentation, leaks; the kernel view when every run has kernel events. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "cmd.h"
#include "cmd_common.h"
#include "diffnoise.h"
#include "hl_schema.h"
#include "jsonw.h"
#include "leakclass.h"
#include "rundb.h"
#include "safetext.h"
#include "sitediff.h"

#define MAX_RUNS 6

static void usage(FILE *f)
{
    fprintf(f,
            "usage: heapledger diff A.db B.db [C.db ...] [--pid N] [--from T] [--to T]\n"
            "                       [--top N] [--sort bytes|count|leaks|cycles] [--json]\n"
            "  Compare runs (e.g. one program under several option sets), up to %d. Deltas\n"
            "  are against A: percent for counts and cycles, points for fractions. --from and\n"
            "  --to analyse the same window of every run (T since its start: 1.5s, 200ms).\n"
            "  Then per call site: bytes, allocations, leaks and cycles, the N (--top, 10)\n"
            "  sites whose --sort quantity (bytes) changed most. A duration delta is marked\n"
            "  \"noise\" unless both runs are of one host and it is 25%% or more. --json: the\n"
            "  runs, duration deltas and per-site table as one JSON document\n"
            "  (schemas/diff.schema.json).\n",
            MAX_RUNS);
}

typedef enum { K_COUNT, K_SECONDS, K_FRACTION } kind_t;

/* "1234 (+5.0%)" style cell for run k of a row; a is the baseline. */
static void cell(double a, double v, kind_t kind, int baseline)
{
    char val[32], d[24] = "";
    if (kind == K_FRACTION) {
        if (v < 0)
            snprintf(val, sizeof val, "n/a");
        else
            snprintf(val, sizeof val, "%.2f%%", v * 100);
        if (!baseline && a >= 0 && v >= 0) snprintf(d, sizeof d, " (%+.2f pts)", (v - a) * 100);
    } else {
        snprintf(val, sizeof val, kind == K_SECONDS ? "%.3f" : "%.0f", v);
        if (!baseline && a > 0 && isfinite(v))
            snprintf(d, sizeof d, " (%+.1f%%)", 100.0 * (v - a) / a);
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%s%s", val, d);
    printf(" %*s", baseline ? 14 : 26, buf);
}

static void row(const char *name, hl_report_t **r, int n, double (*get)(const hl_report_t *),
                kind_t kind)
{
    printf("  %-24s", name);
    double a = get(r[0]);
    for (int k = 0; k < n; k++)
        cell(a, get(r[k]), kind, k == 0);
    printf("\n");
}

#define GETTER(fn, expr)                                                                           \
    static double fn(const hl_report_t *r)                                                         \
    {                                                                                              \
        return (double)(expr);                                                                     \
    }
GETTER(g_duration, r->duration_s)
GETTER(g_ops, r->allocs + r->frees + r->reallocs)
GETTER(g_tput, r->duration_s > 0 ? (double)(r->allocs + r->frees + r->reallocs) / r->duration_s : 0)
GETTER(g_failed, r->failed)
GETTER(g_peak_R, r->peak_R)
GETTER(g_peak_U, r->peak_U)
GETTER(g_peak_H, r->peak_H)
GETTER(g_max_H, r->max_H)
GETTER(g_util, r->util_peak)
GETTER(g_int, r->internal_peak)
GETTER(g_ext, r->external_peak)
GETTER(g_ext_end, r->external_end)
GETTER(g_leak_blocks, r->leak_blocks)
GETTER(g_leak_bytes, r->leak_bytes)
GETTER(g_temp, r->temporary)
GETTER(g_def_blocks, r->leakclass->blocks[1])
GETTER(g_def_bytes, r->leakclass->bytes[1])
GETTER(g_ind_blocks, r->leakclass->blocks[2])
GETTER(g_ind_bytes, r->leakclass->bytes[2])
GETTER(g_reach_bytes, r->leakclass->bytes[3])
GETTER(g_errors, r->nerrors)
#define KGETTER(fn, expr)                                                                          \
    static double fn(const hl_report_t *r)                                                         \
    {                                                                                              \
        const hl_kernel_report_t *k = r->kernel;                                                   \
        return (double)(expr);                                                                     \
    }
KGETTER(k_rss_peak, k->rss_peak)
KGETTER(k_rss_at_peak, k->peak_has_rss ? (double)k->peak_rss : NAN)
KGETTER(k_heap_res, k->peak_heap_resident)
KGETTER(k_frag_cost, k->frag_rss_cost)
KGETTER(k_fault_pages, k->fault_pages)
KGETTER(k_fault_runs, k->fault_runs)
KGETTER(k_pages_blocks, k->pages_in_blocks)
KGETTER(k_pages_free, k->pages_heap_free)
KGETTER(k_never, k->never_touched_bytes)
#undef KGETTER
#undef GETTER

/* Duration (w = 0) or throughput (w = 1), each delta marked "noise" under the rule of
 * diffnoise.h; the reason for each run under the tables (duration_notes). */
static void timing_row(hl_report_t **r, int n, int w)
{
    const char *names[] = {"duration (s)", "throughput (ops/s)"};
    double (*get[])(const hl_report_t *) = {g_duration, g_tput};
    {
        printf("  %-24s", names[w]);
        double a = get[w](r[0]);
        for (int k = 0; k < n; k++) {
            const char *why;
            char val[32], d[40] = "";
            double v = get[w](r[k]);
            snprintf(val, sizeof val, w ? "%.0f" : "%.3f", v);
            if (k && a > 0 && isfinite(v))
                snprintf(d, sizeof d, " (%+.1f%%%s)", 100.0 * (v - a) / a,
                         hl_duration_noisy(r[0], r[k], &why) ? " noise" : "");
            char buf[80];
            snprintf(buf, sizeof buf, "%s%s", val, d);
            printf(" %*s", k ? 26 : 14, buf);
        }
        printf("\n");
    }
}

/* The run has leak classes: a reachability scan at exit that classified (status 0 or 1). */
static int scanned(const hl_report_t *r)
{
    return r->leakclass && r->leakclass->status <= 1;
}

/* The leak scan's totals side by side when every run has them; else which runs have none
 * (leaked blocks and bytes above are those live at the end either way). */
static void class_rows(hl_report_t **r, int n)
{
    int all = 1;
    for (int k = 0; k < n; k++)
        all &= scanned(r[k]);
    if (all) {
        row("definitely lost blocks", r, n, g_def_blocks, K_COUNT);
        row("definitely lost (B)", r, n, g_def_bytes, K_COUNT);
        row("indirectly lost blocks", r, n, g_ind_blocks, K_COUNT);
        row("indirectly lost (B)", r, n, g_ind_bytes, K_COUNT);
        row("still reachable (B)", r, n, g_reach_bytes, K_COUNT);
        return;
    }
    int any = 0;
    for (int k = 0; k < n; k++)
        any |= scanned(r[k]);
    if (!any) return; /* class_notes says it once */
    printf("  %-24s", "leak classes");
    for (int k = 0; k < n; k++)
        printf(" %*s", k ? 26 : 14, scanned(r[k]) ? "scanned" : "not scanned");
    printf("\n");
}

static void class_notes(hl_report_t **r, int n)
{
    int any = 0;
    for (int k = 0; k < n; k++)
        any |= r[k]->leakclass != NULL;
    if (!any) {
        printf("  leaks: no run has leak classes (no reachability scan at exit: recorded with "
               "leaks=0, or databases from before the scan); leaked = live at the end\n");
        return;
    }
    for (int k = 0; k < n; k++)
        if (!scanned(r[k]))
            printf("  leaks %c: %s; leaked = live at the end\n", 'A' + k,
                   r[k]->leakclass ? hl_leakclass_status(r[k]->leakclass->status)
                                   : "not classified: no reachability scan at exit (recorded "
                                     "with leaks=0, or a database from before the scan)");
}

static void duration_notes(hl_report_t **r, int n)
{
    for (int k = 1; k < n; k++) {
        const char *why;
        hl_duration_noisy(r[0], r[k], &why);
        printf("  duration %c vs A: %s\n", 'A' + k, why);
    }
}

static void diff_json(hl_report_t **r, int n, const hl_sitediff_t *sd, int top)
{
    hl_json_t j;
    hl_json_init(&j, stdout);
    hl_json_obj(&j);
    hl_json_key(&j, "heapledger_diff");
    hl_json_i64(&j, 1);
    hl_json_key(&j, "runs");
    hl_json_arr(&j);
    for (int k = 0; k < n; k++) {
        char lab[2] = {(char)('A' + k), 0};
        hl_json_obj(&j);
        hl_json_key(&j, "label");
        hl_json_str(&j, lab);
        hl_json_key(&j, "database");
        hl_json_str(&j, r[k]->run.path);
        hl_json_key(&j, "host");
        hl_json_str(&j, r[k]->run.host);
        hl_json_key(&j, "options");
        hl_json_str(&j, r[k]->run.options);
        hl_json_key(&j, "duration_s");
        hl_json_num(&j, r[k]->duration_s);
        hl_json_key(&j, "operations");
        hl_json_u64(&j, r[k]->allocs + r[k]->frees + r[k]->reallocs);
        hl_json_key(&j, "approximate");
        hl_json_bool(&j, r[k]->approximate);
        hl_json_key(&j, "leaked_blocks"); /* live at the end */
        hl_json_u64(&j, r[k]->leak_blocks);
        hl_json_key(&j, "leaked_bytes");
        hl_json_u64(&j, r[k]->leak_bytes);
        hl_json_key(&j, "leak_classes"); /* the scan's totals, null when not classified */
        const hl_leakclass_report_t *lc = r[k]->leakclass;
        if (scanned(r[k])) {
            hl_leakclass_json_totals(&j, lc->blocks, lc->bytes);
        } else {
            hl_json_null(&j);
        }
        hl_json_key(&j, "leak_scan"); /* why not, or "complete" / "partial: …" */
        if (lc)
            hl_json_str(&j, hl_leakclass_status(lc->status));
        else
            hl_json_str(&j, "not scanned");
        if (k) {
            const char *why;
            int noisy = hl_duration_noisy(r[0], r[k], &why);
            hl_json_key(&j, "duration_delta");
            hl_json_frac(&j, r[0]->duration_s > 0
                                 ? (r[k]->duration_s - r[0]->duration_s) / r[0]->duration_s
                                 : -1);
            hl_json_key(&j, "duration_noise");
            hl_json_bool(&j, noisy);
            hl_json_key(&j, "duration_note");
            hl_json_str(&j, why);
        }
        hl_json_obj_end(&j);
    }
    hl_json_arr_end(&j);
    hl_json_key(&j, "sites");
    hl_sitediff_json(&j, sd, top);
    hl_json_obj_end(&j);
    printf("\n");
}

/* The kernel view side by side (docs/metrics.md, "Kernel view"), when every run has it. */
static void kernel_rows(hl_report_t **r, int n)
{
    for (int k = 0; k < n; k++) {
        if (!r[k]->kernel) {
            printf("\nkernel: %c has no kernel events (record with --kernel)\n", 'A' + k);
            return;
        }
    }
    printf("\nkernel\n");
    row("peak RSS (B, sampled)", r, n, k_rss_peak, K_COUNT);
    row("RSS at peak of R (B)", r, n, k_rss_at_peak, K_COUNT);
    row("heap resident at peak", r, n, k_heap_res, K_COUNT);
    row("frag RSS cost at peak", r, n, k_frag_cost, K_COUNT);
    row("faulting pages", r, n, k_fault_pages, K_COUNT);
    row("fault runs", r, n, k_fault_runs, K_COUNT);
    row("pages in live blocks", r, n, k_pages_blocks, K_COUNT);
    row("pages in free heap", r, n, k_pages_free, K_COUNT);
    row("never touched (B)", r, n, k_never, K_COUNT);
    for (int p = 0; p < HL_MAX_PATHS; p++) {
        int any = 0;
        for (int k = 0; k < n; k++)
            any |= r[k]->kernel->path[p].runs != 0;
        if (!any) continue;
        char name[40];
        snprintf(name, sizeof name, "pages %s",
                 p < (int)HL_PATH_COUNT ? hl_path_name((unsigned)p) : "(unknown path)");
        printf("  %-24s", name);
        double a = (double)r[0]->kernel->path[p].pages;
        for (int k = 0; k < n; k++)
            cell(a, (double)r[k]->kernel->path[p].pages, K_COUNT, k == 0);
        printf("\n");
    }
}

static const hl_path_stat_t *find(const hl_report_t *r, int op, int path)
{
    for (size_t i = 0; i < r->npaths; i++)
        if (r->paths[i].op == op && r->paths[i].path == path) return &r->paths[i];
    return NULL;
}

/* One path row: per run "count  p50 (delta)  mean (delta)". */
static void path_cells(const hl_path_stat_t *a, const hl_path_stat_t *p, int baseline)
{
    char c[24], p50[40], mean[40];
    snprintf(c, sizeof c, "%" PRIu64, p ? p->count : 0);
    if (!p || !p->timed) {
        snprintf(p50, sizeof p50, "-");
        snprintf(mean, sizeof mean, "-");
    } else if (baseline || !a || !a->timed || a->p50 <= 0) {
        snprintf(p50, sizeof p50, "%.0f", p->p50);
        snprintf(mean, sizeof mean, "%.1f", p->mean);
    } else {
        snprintf(p50, sizeof p50, "%.0f (%+.0f%%)", p->p50, 100.0 * (p->p50 - a->p50) / a->p50);
        snprintf(mean, sizeof mean, "%.1f (%+.0f%%)", p->mean,
                 a->mean > 0 ? 100.0 * (p->mean - a->mean) / a->mean : 0.0);
    }
    printf(" %9s %13s %15s", c, p50, mean);
}

static void paths(hl_report_t **r, int n, int op)
{
    int any = 0;
    for (int k = 0; k < n; k++)
        any |= r[k]->op_count[op] != 0;
    if (!any) return;
    printf("\ncycles per path: %s\n  %-18s", hl_op_name((unsigned)op), "path");
    for (int k = 0; k < n; k++) {
        char h[16];
        snprintf(h, sizeof h, "count %c", 'A' + k);
        printf(" %9s %13s %15s", h, "p50", "mean");
    }
    printf("\n");
    /* Every path of any run, in the order of the first run that has it. */
    for (int k = 0; k < n; k++) {
        for (size_t i = 0; i < r[k]->npaths; i++) {
            const hl_path_stat_t *p = &r[k]->paths[i];
            int seen = 0;
            for (int j = 0; j < k; j++)
                seen |= find(r[j], op, p->path) != NULL;
            if (p->op != op || seen) continue;
            printf("  %-18s", hl_path_name((unsigned)p->path));
            const hl_path_stat_t *a = find(r[0], op, p->path);
            for (int j = 0; j < n; j++)
                path_cells(a, find(r[j], op, p->path), j == 0);
            printf("\n");
        }
    }
    printf("  %-18s", "all (weighted)");
    for (int k = 0; k < n; k++) {
        char mean[40];
        if (k && r[0]->op_mean[op] > 0)
            snprintf(mean, sizeof mean, "%.1f (%+.0f%%)", r[k]->op_mean[op],
                     100.0 * (r[k]->op_mean[op] - r[0]->op_mean[op]) / r[0]->op_mean[op]);
        else
            snprintf(mean, sizeof mean, "%.1f", r[k]->op_mean[op]);
        printf(" %9" PRIu64 " %13s %15s", r[k]->op_count[op], "", mean);
    }
    printf("\n");
}

int hl_cmd_diff(int argc, char **argv)
{
    int top = 10, json = 0; /* per-site table: rows, JSON document */
    hl_sd_key_t sort = HL_SD_BYTES;
    const char *path[MAX_RUNS];
    const char *from_arg = "";
    int n = 0;
    hl_analyze_opts_t ao = {0, -1, -1, NULL};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--pid") && i + 1 < argc) {
            ao.pid = strtoll(argv[++i], NULL, 10);
            if (ao.pid <= 0) {
                fprintf(stderr, "heapledger diff: bad --pid '%s'\n", argv[i]);
                return 2;
            }
        } else if ((!strcmp(argv[i], "--from") || !strcmp(argv[i], "--to")) && i + 1 < argc) {
            const char *a = argv[i++];
            if (hl_cli_time("diff", a, argv[i], a[2] == 'f' ? &ao.from_ns : &ao.to_ns)) return 2;
            if (a[2] == 'f') from_arg = argv[i];
        } else if (!strcmp(argv[i], "--top") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v <= 0 || v > 1000000) {
                fprintf(stderr,
                        "heapledger diff: bad --top '%s': give a number of sites, 1 or more\n",
                        hl_safe(argv[i]));
                return 2;
            }
            top = (int)v;
        } else if (!strcmp(argv[i], "--sort") && i + 1 < argc) {
            int k = hl_sd_key_parse(argv[++i]);
            if (k < 0) {
                fprintf(stderr,
                        "heapledger diff: bad --sort '%s': valid values are bytes, count, leaks, "
                        "cycles\n",
                        hl_safe(argv[i]));
                return 2;
            }
            sort = (hl_sd_key_t)k;
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (argv[i][0] == '-') {
            static const char *const known[] = {"--pid",  "--from", "--to",   "--top",
                                                "--sort", "--json", "--help", NULL};
            hl_cli_bad_option("diff", argv[i], known);
            return 2;
        } else if (n < MAX_RUNS) {
            path[n++] = argv[i];
        } else {
            fprintf(stderr, "heapledger diff: at most %d runs\n", MAX_RUNS);
            return 2;
        }
    }
    if (n < 2) {
        usage(stderr);
        return 2;
    }
    sqlite3 *db[MAX_RUNS] = {0};
    hl_report_t *r[MAX_RUNS] = {0};
    char err[512];
    int rc = 0;
    for (int k = 0; k < n && !rc; k++) {
        db[k] = hl_an_open(path[k], err, sizeof err);
        if (db[k] &&
            hl_cli_window_db("diff", db[k], path[k], ao.pid, ao.from_ns, ao.to_ns, from_arg)) {
            rc = 2;
            break;
        }
        if (db[k]) r[k] = hl_analyze(db[k], path[k], &ao, err, sizeof err);
        if (!r[k]) {
            fprintf(stderr, "heapledger diff: %s\n", hl_safe(err));
            rc = 1;
        }
    }
    hl_sitediff_t *sd = rc ? NULL : hl_sitediff_new(r, n, sort);
    if (!rc && json) {
        diff_json(r, n, sd, top);
    } else if (!rc) {
        printf("heapledger diff\n");
        for (int k = 0; k < n; k++)
            printf("  %c  %s  (%s)\n", 'A' + k, hl_safe(r[k]->run.path),
                   *r[k]->run.options ? hl_safe(r[k]->run.options) : "defaults");
        if (ao.from_ns >= 0 || ao.to_ns >= 0) {
            printf("  window from %.9f s", ao.from_ns > 0 ? (double)ao.from_ns / 1e9 : 0.0);
            if (ao.to_ns >= 0)
                printf(" to %.9f s of each run\n", (double)ao.to_ns / 1e9);
            else
                printf(" to the end of each run\n");
        }
        for (int k = 0; k < n; k++)
            if (r[k]->approximate)
                printf("  WARNING: %s: %" PRId64 " events discarded, its metrics are approximate\n",
                       hl_safe(r[k]->run.path), r[k]->run.discarded);
        printf("\n  %-24s %14s", "", "A");
        for (int k = 1; k < n; k++)
            printf(" %26c", 'A' + k);
        printf("\n");
        timing_row(r, n, 0);
        row("operations", r, n, g_ops, K_COUNT);
        timing_row(r, n, 1);
        row("failed allocations", r, n, g_failed, K_COUNT);
        row("peak requested (B)", r, n, g_peak_R, K_COUNT);
        row("peak usable (B)", r, n, g_peak_U, K_COUNT);
        row("held at peak (B)", r, n, g_peak_H, K_COUNT);
        row("largest held (B)", r, n, g_max_H, K_COUNT);
        row("utilisation at peak", r, n, g_util, K_FRACTION);
        row("internal frag at peak", r, n, g_int, K_FRACTION);
        row("external frag at peak", r, n, g_ext, K_FRACTION);
        row("external frag at end", r, n, g_ext_end, K_FRACTION);
        row("leaked blocks", r, n, g_leak_blocks, K_COUNT);
        row("leaked bytes", r, n, g_leak_bytes, K_COUNT);
        class_rows(r, n);
        row("temporary allocations", r, n, g_temp, K_COUNT);
        row("errors", r, n, g_errors, K_COUNT);
        for (int op = 1; op <= 3; op++)
            paths(r, n, op);
        kernel_rows(r, n);
        printf("\n");
        duration_notes(r, n);
        class_notes(r, n);
        hl_sitediff_text(stdout, sd, top);
    }
    hl_sitediff_free(sd);
    for (int k = 0; k < n; k++) {
        hl_report_free(r[k]);
        if (db[k]) sqlite3_close(db[k]);
    }
    return rc;
}
