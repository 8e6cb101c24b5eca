/* analyzer/cmd_diff.c — `heapledger diff A.db B.db [--pid N]`: two runs side by side with
 * deltas, in the style of an allocator configuration comparison (baseline vs hardened vs
 * rotated): throughput, cycles per path, peak utilisation (points), fragmentation, leaks. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "cmd.h"
#include "hl_schema.h"
#include "rundb.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: heapledger diff A.db B.db [--pid N]\n"
               "  Compare two runs (e.g. the same program under two option sets). Deltas are\n"
               "  B relative to A: percent for counts and cycles, points for fractions.\n");
}

static void rel(double a, double b)
{
    if (a > 0 && isfinite(b))
        printf(" %+9.1f%%", 100.0 * (b - a) / a);
    else
        printf(" %10s", "-");
}

static void row_u(const char *name, double a, double b)
{
    printf("  %-26s %14.0f %14.0f", name, a, b);
    rel(a, b);
    printf("\n");
}

static void row_f(const char *name, double a, double b, const char *unit)
{
    printf("  %-26s %14.3f %14.3f", name, a, b);
    rel(a, b);
    printf(" %s\n", unit);
}

/* Fractions: values in percent, delta in points. */
static void row_pts(const char *name, double a, double b)
{
    printf("  %-26s", name);
    if (a < 0)
        printf(" %14s", "n/a");
    else
        printf(" %13.2f%%", a * 100);
    if (b < 0)
        printf(" %14s", "n/a");
    else
        printf(" %13.2f%%", b * 100);
    if (a >= 0 && b >= 0)
        printf(" %+7.2f pts\n", (b - a) * 100);
    else
        printf(" %10s\n", "-");
}

static const hl_path_stat_t *find(const hl_report_t *r, int op, int path)
{
    for (size_t i = 0; i < r->npaths; i++)
        if (r->paths[i].op == op && r->paths[i].path == path) return &r->paths[i];
    return NULL;
}

static double throughput(const hl_report_t *r)
{
    double ops = (double)(r->allocs + r->frees + r->reallocs);
    return r->duration_s > 0 ? ops / r->duration_s : 0;
}

static void paths(const hl_report_t *a, const hl_report_t *b, int op)
{
    if (!a->op_count[op] && !b->op_count[op]) return;
    printf("\ncycles per path: %s\n", hl_op_name((unsigned)op));
    printf("  %-18s %10s %10s %8s %8s %9s %9s %9s %9s\n", "path", "count A", "count B", "p50 A",
           "p50 B", "delta", "mean A", "mean B", "delta");
    /* Every path present in either run, A's order first. */
    const hl_report_t *rs[2] = {a, b};
    for (int side = 0; side < 2; side++) {
        for (size_t i = 0; i < rs[side]->npaths; i++) {
            const hl_path_stat_t *p = &rs[side]->paths[i];
            if (p->op != op || (side == 1 && find(a, op, p->path))) continue;
            const hl_path_stat_t *pa = find(a, op, p->path), *pb = find(b, op, p->path);
            printf("  %-18s %10" PRIu64 " %10" PRIu64, hl_path_name((unsigned)p->path),
                   pa ? pa->count : 0, pb ? pb->count : 0);
            double a50 = pa && pa->timed ? pa->p50 : -1, b50 = pb && pb->timed ? pb->p50 : -1;
            double am = pa && pa->timed ? pa->mean : -1, bm = pb && pb->timed ? pb->mean : -1;
            if (a50 >= 0)
                printf(" %8.0f", a50);
            else
                printf(" %8s", "-");
            if (b50 >= 0)
                printf(" %8.0f", b50);
            else
                printf(" %8s", "-");
            rel(a50, b50 >= 0 ? b50 : NAN);
            if (am >= 0)
                printf(" %9.1f", am);
            else
                printf(" %9s", "-");
            if (bm >= 0)
                printf(" %9.1f", bm);
            else
                printf(" %9s", "-");
            rel(am, bm >= 0 ? bm : NAN);
            printf("\n");
        }
    }
    printf("  %-18s %10" PRIu64 " %10" PRIu64 " %8s %8s %10s %9.1f %9.1f", "all (weighted)",
           a->op_count[op], b->op_count[op], "", "", "", a->op_mean[op], b->op_mean[op]);
    rel(a->op_mean[op], b->op_mean[op]);
    printf("\n");
}

int hl_cmd_diff(int argc, char **argv)
{
    const char *pa = NULL, *pb = NULL;
    hl_analyze_opts_t ao = {0, -1, -1};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--pid") && i + 1 < argc) {
            ao.pid = strtoll(argv[++i], NULL, 10);
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "heapledger diff: unknown or incomplete option '%s'\n", argv[i]);
            return 2;
        } else if (!pa) {
            pa = argv[i];
        } else if (!pb) {
            pb = argv[i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!pa || !pb) {
        usage(stderr);
        return 2;
    }
    const char *paths_[2] = {pa, pb};
    sqlite3 *db[2] = {NULL, NULL};
    hl_report_t *r[2] = {NULL, NULL};
    char err[512];
    int rc = 0;
    for (int k = 0; k < 2 && !rc; k++) {
        db[k] = hl_an_open(paths_[k], err, sizeof err);
        if (db[k]) r[k] = hl_analyze(db[k], paths_[k], &ao, err, sizeof err);
        if (!r[k]) {
            fprintf(stderr, "heapledger diff: %s\n", err);
            rc = 1;
        }
    }
    if (!rc) {
        hl_report_t *a = r[0], *b = r[1];
        printf("heapledger diff\n  A  %s  (%s)\n  B  %s  (%s)\n", a->run.path,
               *a->run.options ? a->run.options : "defaults", b->run.path,
               *b->run.options ? b->run.options : "defaults");
        for (int k = 0; k < 2; k++)
            if (r[k]->approximate)
                printf("  WARNING: %s: %" PRId64 " events discarded, its metrics are approximate\n",
                       r[k]->run.path, r[k]->run.discarded);
        printf("\n  %-26s %14s %14s %10s\n", "", "A", "B", "delta");
        row_f("duration (s)", a->duration_s, b->duration_s, "");
        row_u("operations", (double)(a->allocs + a->frees + a->reallocs),
              (double)(b->allocs + b->frees + b->reallocs));
        row_u("throughput (ops/s)", throughput(a), throughput(b));
        row_u("failed allocations", (double)a->failed, (double)b->failed);
        row_u("peak requested (B)", (double)a->peak_R, (double)b->peak_R);
        row_u("peak usable (B)", (double)a->peak_U, (double)b->peak_U);
        row_u("held at peak (B)", (double)a->peak_H, (double)b->peak_H);
        row_u("largest held (B)", (double)a->max_H, (double)b->max_H);
        row_pts("utilisation at peak", a->util_peak, b->util_peak);
        row_pts("internal frag at peak", a->internal_peak, b->internal_peak);
        row_pts("external frag at peak", a->external_peak, b->external_peak);
        row_pts("external frag at end", a->external_end, b->external_end);
        row_u("leaked blocks", (double)a->leak_blocks, (double)b->leak_blocks);
        row_u("leaked bytes", (double)a->leak_bytes, (double)b->leak_bytes);
        row_u("temporary allocations", (double)a->temporary, (double)b->temporary);
        row_u("errors", (double)a->nerrors, (double)b->nerrors);
        for (int op = 1; op <= 3; op++)
            paths(a, b, op);
    }
    for (int k = 0; k < 2; k++) {
        hl_report_free(r[k]);
        if (db[k]) sqlite3_close(db[k]);
    }
    return rc;
}
