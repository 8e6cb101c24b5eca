/* analyzer/render_replay.c — text of replay's answers; see render_replay.h. */
#include "render_replay.h"

#include <inttypes.h>

#include "arenamap.h"
#include "symbols.h"

void hl_replay_failure_text(FILE *f, const hl_report_t *r)
{
    const hl_replay_info_t *in = r->replay;
    if (!in || !in->has_failure) return;
    fprintf(f, "  failing request: %" PRIu64 " bytes (block %" PRId64 "), allocated at:\n",
            in->fail_size, in->fail_block);
    hl_frames_t fr;
    if (in->fail_stack < 0 || !r->db || hl_frames_load(r->db, in->fail_stack, &fr) < 0 ||
        fr.n == 0) {
        fprintf(f, "      (no stack recorded)\n");
        if (in->fail_stack >= 0 && r->db) hl_frames_free(&fr);
    } else {
        for (size_t i = 0; i < fr.n; i++)
            fprintf(f, "      #%zu %s\n", i, fr.frame[i]);
        hl_frames_free(&fr);
    }
    if (in->fail_map) hl_arena_map_text(f, in->fail_map, "  ");
    fprintf(f, "\n");
}

void hl_replay_fit_text(FILE *f, const hl_fit_t *fits, size_t n)
{
    fprintf(f, "smallest arena in which the whole recording succeeds\n");
    fprintf(f, "  %12s %10s %8s %14s   %s\n", "arena bytes", "KiB", "replays", "peak requested",
            "options");
    for (size_t i = 0; i < n; i++) {
        const hl_fit_t *x = &fits[i];
        const char *o = x->options && *x->options ? x->options : "(defaults)";
        if (x->size)
            fprintf(f, "  %12" PRIu64 " %10.1f %8u %14" PRIu64 "   %s\n", x->size,
                    (double)x->size / 1024, x->trials, x->peak_R, o);
        else
            fprintf(f, "  %12s %10s %8u %14" PRIu64 "   %s (does not fit in %" PRIu64 " bytes)\n",
                    "-", "-", x->trials, x->peak_R, o, x->max_tried);
    }
    if (n)
        fprintf(f,
                "  granularity %" PRIu64 " bytes: each size fits and size - %" PRIu64
                " was replayed and does not\n\n",
                fits[0].step, fits[0].step);
}

void hl_replay_matrix_text(FILE *f, const hl_matrix_row_t *rows, uint64_t arena, int repeat)
{
    fprintf(f, "configuration matrix in a %" PRIu64 "-byte arena (throughput: median of %d runs)\n",
            arena, repeat);
    fprintf(f, "  %-18s %-5s %9s %9s %11s %9s   %s\n", "configuration", "fits", "peak util",
            "util@fail", "ops/kcycle", "tput", "alloc+free cycles p01 p25 p50 p75 p99");
    double base = rows[0].ops_per_kcycle;
    for (int i = 0; i < HL_MATRIX_ROWS; i++) {
        const hl_matrix_row_t *x = &rows[i];
        char uf[16], dt[16];
        if (x->util_fail >= 0)
            snprintf(uf, sizeof uf, "%.2f%%", x->util_fail * 100);
        else
            snprintf(uf, sizeof uf, "-");
        if (i == 0 || base <= 0)
            snprintf(dt, sizeof dt, "%s", i == 0 ? "=" : "-");
        else
            snprintf(dt, sizeof dt, "%+.1f%%", (x->ops_per_kcycle / base - 1) * 100);
        fprintf(f,
                "  %-18s %-5s %8.2f%% %9s %11.2f %9s   %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
                " %" PRIu64 "\n",
                x->label, x->fits ? "yes" : "no", x->util_peak * 100, uf, x->ops_per_kcycle, dt,
                x->lat[0], x->lat[1], x->lat[2], x->lat[3], x->lat[4]);
    }
    fprintf(f, "  peak util: peak requested live bytes / arena; util@fail: at the first failure\n");
    fprintf(f, "  utilisation deltas vs baseline:");
    for (int i = 1; i < HL_MATRIX_ROWS; i++) {
        double a = rows[0].util_fail >= 0 ? rows[0].util_fail : rows[0].util_peak;
        double b = rows[i].util_fail >= 0 ? rows[i].util_fail : rows[i].util_peak;
        fprintf(f, " %s %+.1f pt%s", rows[i].label, (b - a) * 100,
                i + 1 < HL_MATRIX_ROWS ? "," : "");
    }
    fprintf(f, "\n\n");
}
