/* analyzer/render_replay_html.c — `heapledger replay --html OUT.html`: one self-contained
 * page (inline style and SVG, no script, nothing fetched) with the replay's outcome, the
 * failing request and its stack, the arena map at the failure, the fit and matrix tables. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "arenamap.h"
#include "render.h"
#include "render_replay.h"
#include "symbols.h"

static void outcome(FILE *f, const hl_report_t *r)
{
    const hl_replay_info_t *in = r->replay;
    fprintf(f, "<h2>Replay of pid %" PRId64 "</h2>\n<p>options: <code>", in->pid);
    hl_html_esc(f, *in->options ? in->options : "(defaults)");
    fprintf(f, "</code>; %" PRIu64 " heap calls replayed, %" PRIu64 " skipped.</p>\n",
            in->operations, in->skipped);
    if (!in->has_failure) {
        fprintf(f, "<p class=\"ok\">It fits: no allocation failed that succeeded in the "
                   "recording.</p>\n");
        return;
    }
    fprintf(f,
            "<p class=\"bad\">It does not fit: %" PRIu64 " allocations fail that succeeded in "
            "the recording.</p>\n<h3>First failure</h3>\n<table>\n"
            "<tr><th>request</th><td>%" PRIu64 " bytes (block %" PRId64 ", seq %" PRId64
            ")</td></tr>\n<tr><th>live requested</th><td>%" PRIu64 " bytes",
            in->failures, in->fail_size, in->fail_block, in->fail_seq, in->fail_R);
    if (in->fail_util >= 0) fprintf(f, " (utilisation %.2f%%)", in->fail_util * 100);
    fprintf(f,
            "</td></tr>\n<tr><th>free</th><td>%" PRIu64
            " bytes</td></tr>\n<tr><th>largest free block</th><td>%" PRIu64
            " bytes</td></tr>\n</table>\n<h3>Allocation stack of the failing request</h3>\n"
            "<ol class=\"stack\" start=\"0\">\n",
            in->fail_free, in->fail_largest);
    hl_frames_t fr;
    if (in->fail_stack >= 0 && r->db && hl_frames_load(r->db, in->fail_stack, &fr) == 0) {
        for (size_t i = 0; i < fr.n; i++) {
            fputs("<li><code>", f);
            hl_html_esc(f, fr.frame[i]);
            fputs("</code></li>\n", f);
        }
        if (!fr.n) fputs("<li>(no stack recorded)</li>\n", f);
        hl_frames_free(&fr);
    } else {
        fputs("<li>(no stack recorded)</li>\n", f);
    }
    fputs("</ol>\n", f);
    const hl_arena_map_t *m = in->fail_map;
    if (!m) return;
    fprintf(f,
            "<h3>The arena at the failure</h3>\n<p>%" PRIu64 " bytes in 16 rows; "
            "<span class=\"used\">&#9632;</span> used (live blocks, headers), "
            "<span class=\"free\">&#9632;</span> free. %" PRIu64 " used runs, %" PRIu64
            " free runs holding %" PRIu64 " bytes, the largest %" PRIu64 " bytes.</p>\n",
            m->size, m->used_runs, m->free_runs, m->free_bytes, m->largest_free);
    hl_arena_map_svg(f, m);
    fputs("<details><summary>as text</summary><pre>", f);
    hl_arena_map_text(f, m, "");
    fputs("</pre></details>\n", f);
}

static void fit_table(FILE *f, const hl_fit_t *fits, size_t n)
{
    fprintf(f,
            "<h2>Smallest arena that fits</h2>\n<p>Granularity %" PRIu64
            " bytes: the whole recording succeeds at the size shown and fails at size &minus; "
            "%" PRIu64 ".</p>\n<table>\n<tr><th>options</th><th>arena bytes</th><th>KiB</th>"
            "<th>replays</th><th>peak requested</th></tr>\n",
            fits[0].step, fits[0].step);
    for (size_t i = 0; i < n; i++) {
        fputs("<tr><td><code>", f);
        hl_html_esc(f, fits[i].options && *fits[i].options ? fits[i].options : "(defaults)");
        if (fits[i].size)
            fprintf(f, "</code></td><td>%" PRIu64 "</td><td>%.1f</td>", fits[i].size,
                    (double)fits[i].size / 1024);
        else
            fprintf(f, "</code></td><td colspan=\"2\">does not fit in %" PRIu64 "</td>",
                    fits[i].max_tried);
        fprintf(f, "<td>%u</td><td>%" PRIu64 "</td></tr>\n", fits[i].trials, fits[i].peak_R);
    }
    fputs("</table>\n", f);
}

static void matrix_table(FILE *f, const hl_matrix_row_t *rows, uint64_t arena, int repeat)
{
    fprintf(f,
            "<h2>Configuration matrix</h2>\n<p>Arena %" PRIu64
            " bytes; throughput is heap calls per 1000 cycles, median of %d runs.</p>\n"
            "<table>\n<tr><th>configuration</th><th>fits</th><th>peak util</th>"
            "<th>util at 1st failure</th><th>ops/kcycle</th><th>throughput</th>"
            "<th>p01</th><th>p25</th><th>p50</th><th>p75</th><th>p99</th></tr>\n",
            arena, repeat);
    for (int i = 0; i < HL_MATRIX_ROWS; i++) {
        const hl_matrix_row_t *x = &rows[i];
        fprintf(f, "<tr><td>%s</td><td>%s</td><td>%.2f%%</td>", x->label, x->fits ? "yes" : "no",
                x->util_peak * 100);
        if (x->util_fail >= 0)
            fprintf(f, "<td>%.2f%%</td>", x->util_fail * 100);
        else
            fputs("<td>-</td>", f);
        fprintf(f, "<td>%.2f</td>", x->ops_per_kcycle);
        if (i && rows[0].ops_per_kcycle > 0)
            fprintf(f, "<td>%+.1f%%</td>", (x->ops_per_kcycle / rows[0].ops_per_kcycle - 1) * 100);
        else
            fputs("<td>=</td>", f);
        for (int k = 0; k < 5; k++)
            fprintf(f, "<td>%" PRIu64 "</td>", x->lat[k]);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n<p>Latency columns: cycles of one alloc, realloc or free.</p>\n", f);
}

int hl_replay_html(const char *out, const hl_report_t *r, const hl_fit_t *fits, size_t nfits,
                   const hl_matrix_row_t *rows, uint64_t arena, int repeat)
{
    FILE *f = fopen(out, "w");
    if (!f) return -1;
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<title>heapledger replay</title>\n<style>\n"
          "body{font-family:sans-serif;margin:1.5em;max-width:1200px}\n"
          "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;"
          "text-align:left}\n.ok{color:#1e8449}.bad{color:#b03a2e}\n"
          ".used{color:#b03a2e}.free{color:#82e0aa}\nsvg text{font-family:monospace}\n"
          "</style></head><body>\n<h1>heapledger replay</h1>\n",
          f);
    if (r && r->replay) outcome(f, r);
    if (nfits) fit_table(f, fits, nfits);
    if (rows) matrix_table(f, rows, arena, repeat);
    fputs("</body></html>\n", f);
    int bad = ferror(f);
    if (fclose(f) || bad) return -1;
    return 0;
}
