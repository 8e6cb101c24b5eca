/* analyzer/render_html_cycles.c — the report's cycle sections (render_html.h): the cycle
 * budget per path with a histogram each, cycles per call site and path, the slowest
 * operations with their stacks. */
#include <inttypes.h>
#include <stdio.h>

#include "hl_schema.h"
#include "render_html.h"
#include "symbols.h"

/* Cycles per call site and path, and the slowest operations with their stacks
 * (docs/metrics.md, "Cycles per call site"). */
static void site_label(FILE *f, sqlite3 *db, int64_t stack, int whole)
{
    hl_frames_t fr = {0};
    if (stack >= 0) hl_frames_load(db, stack, &fr);
    if (!fr.n) {
        fputs(stack < 0 ? "(no stack)" : "(stack without frames)", f);
    } else if (!whole) {
        hl_html_esc(f, hl_frames_site(&fr));
    } else {
        fputs("<details><summary>", f);
        hl_html_esc(f, hl_frames_site(&fr));
        fputs("</summary>", f);
        for (size_t i = 0; i < fr.n; i++) {
            fprintf(f, "%s#%zu ", i ? "<br>" : "", i);
            hl_html_esc(f, fr.frame[i]);
        }
        fputs("</details>", f);
    }
    hl_frames_free(&fr);
}

void hl_html_site_cycles(FILE *f, const hl_report_t *r, int top)
{
    if (!r->has_site_cycles) return;
    fprintf(f,
            "<h2 id=\"site-cycles\">Cycles per call site and path</h2>\n<p>Up to %d sites of each "
            "path, by cycles; share: of the path's cycles.</p>\n<div "
            "class=\"tw\"><table><tr><th>op</th><th>path</th>"
            "<th>count</th><th>timed</th><th>share</th><th>p50</th><th>p99</th><th>mean</th>"
            "<th>cycles</th><th>site</th></tr>\n",
            top);
    size_t shown = 0;
    for (size_t i = 0; i < r->nsite_cycles; i++) {
        const hl_site_cycles_t *s = &r->site_cycles[i];
        if (i && (s->op != s[-1].op || s->path != s[-1].path)) shown = 0;
        if (shown++ >= (size_t)top) continue;
        fprintf(f,
                "<tr><td class=\"l\">%s</td><td class=\"l\">%s</td><td>%" PRIu64 "</td><td>%" PRIu64
                "</td>",
                hl_op_name((unsigned)s->op), hl_path_name((unsigned)s->path), s->count, s->timed);
        if (s->share >= 0)
            fprintf(f, "<td>%.2f%%</td>", s->share * 100);
        else
            fputs("<td>-</td>", f);
        if (s->timed)
            fprintf(f, "<td>%.0f</td><td>%.0f</td><td>%.1f</td><td>%" PRIu64 "</td>", s->p50,
                    s->p99, s->mean, s->cycles);
        else
            fputs("<td>-</td><td>-</td><td>-</td><td>-</td>", f);
        fputs("<td class=\"l\">", f);
        site_label(f, r->db, s->stack, 0);
        fputs("</td></tr>\n", f);
    }
    fputs("</table></div>\n", f);
    fprintf(f, "<h3 id=\"slowest\">Slowest operations</h3>\n<div "
               "class=\"tw\"><table><tr><th>#</th><th>op</th>"
               "<th>path</th><th>cycles</th><th>ns</th><th>bytes</th><th>at (s)</th><th>pid</th>"
               "<th>tid</th><th>stack</th></tr>\n");
    for (size_t i = 0; i < r->nslowest && i < (size_t)top; i++) {
        const hl_slow_op_t *o = &r->slowest[i];
        char ns[32] = "n/a";
        if (r->run.tsc_hz > 0)
            snprintf(ns, sizeof ns, "%.0f", (double)o->cycles * 1e9 / (double)r->run.tsc_hz);
        fprintf(f,
                "<tr><td>%zu</td><td class=\"l\">%s</td><td class=\"l\">%s</td><td>%" PRId64
                "</td><td>%s</td><td>%" PRIu64 "</td><td>%.6f</td><td>%" PRId64 "</td><td>%" PRId64
                "</td><td class=\"l\">",
                i + 1, hl_op_name((unsigned)o->op), hl_path_name((unsigned)o->path), o->cycles, ns,
                o->size, (double)o->ts / 1e9, o->pid, o->tid);
        site_label(f, r->db, o->stack, 1);
        fputs("</td></tr>\n", f);
    }
    fputs("</table></div>\n", f);
}

void hl_html_paths(FILE *f, const hl_report_t *r)
{
    fputs("<h2 id=\"paths\">Cycle budget per path</h2>\n<div class=\"tw\"><table><tr><th>op</th>"
          "<th>path</th><th>count</th><th>share</th><th>p01</th><th>p25</th><th>p50</th>"
          "<th>p75</th><th>p99</th><th>mean</th><th>ns p50</th><th>weighted</th></tr>\n",
          f);
    for (size_t i = 0; i < r->npaths; i++) {
        const hl_path_stat_t *p = &r->paths[i];
        fprintf(
            f,
            "<tr><td class=\"l\">%s</td><td class=\"l\">%s</td><td>%" PRIu64 "</td><td>%.2f%%</td>",
            hl_op_name((unsigned)p->op), hl_path_name((unsigned)p->path), p->count, p->share * 100);
        if (p->timed) {
            char ns[32];
            if (p->ns_p50 >= 0)
                snprintf(ns, sizeof ns, "%.1f", p->ns_p50);
            else
                snprintf(ns, sizeof ns, "n/a");
            fprintf(f,
                    "<td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.0f</td>"
                    "<td>%.1f</td><td>%s</td><td>%.1f</td></tr>\n",
                    p->p01, p->p25, p->p50, p->p75, p->p99, p->mean, ns, p->weighted);
        } else
            fputs("<td colspan=\"8\">not timed</td></tr>\n", f);
    }
    fputs(
        "</table></div>\n<h3>Cycle histograms per path (log2 buckets)</h3><div class=\"hists\">\n",
        f);
    static char labels[HL_CYC_HIST][24];
    for (int b = 0; b < HL_CYC_HIST; b++)
        snprintf(labels[b], sizeof labels[b], b ? "<2^%d" : "0", b);
    for (size_t i = 0; i < r->npaths; i++) {
        const hl_path_stat_t *p = &r->paths[i];
        if (!p->timed) continue;
        int last = 1;
        for (int b = 0; b < HL_CYC_HIST; b++)
            if (p->hist[b]) last = b + 1;
        double v[HL_CYC_HIST];
        for (int b = 0; b < last; b++)
            v[b] = (double)p->hist[b];
        char title[80], name[80];
        snprintf(title, sizeof title, "%s %s (%" PRIu64 ")", hl_op_name((unsigned)p->op),
                 hl_path_name((unsigned)p->path), p->timed);
        snprintf(name, sizeof name, "cycles-%s-%s", hl_op_name((unsigned)p->op),
                 hl_path_name((unsigned)p->path));
        hl_html_bar_chart(f, name, title, last, v, labels, "#4e79a7", 360, 150);
    }
    fputs("</div>\n", f);
}
