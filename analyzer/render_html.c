/* analyzer/render_html.c — the report as one self-contained HTML file: inline CSS, inline
 * SVG charts drawn here, a few lines of inline JavaScript (tooltips, a status line). No
 * network access, no external file.
 *
 * Charts (each an <svg class="hl-chart" data-chart=NAME>, data marks carry class hl-datum):
 * bytes over time (R, U, CH), utilisation and fragmentation over time, cycle histograms per
 * path, request size histogram, flame graphs of allocation sites by bytes and of leaks; with
 * kernel events, RSS as a fourth series of the bytes chart and faulting pages per path.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "leakclass.h"
#include "hl_schema.h"
#include "render.h"
#include "suppress.h"
#include "symbols.h"

#define CW 760 /* chart width */
#define CH 240 /* line chart height */
#define ML 70
#define MR 20
#define MT 16
#define MB 36


static const char *human(double v, char *buf, size_t n)
{
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int i = 0;
    while (fabs(v) >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    snprintf(buf, n, i ? "%.1f %s" : "%.0f %s", v, u[i]);
    return buf;
}

static const char *fmt_y(double v, int percent, char *buf, size_t n)
{
    if (percent)
        snprintf(buf, n, "%.1f%%", v * 100);
    else
        human(v, buf, n);
    return buf;
}

/* A line chart of up to 4 series over the report's timeline; values < 0 are gaps. */
static void line_chart(FILE *f, const char *name, const char *title, const hl_report_t *r,
                       int nseries, double (*get)(const hl_sample_t *, int), const char **labels,
                       const char **colors, int percent)
{
    double ymax = percent ? 1 : 0, xmax = 0;
    int points = 0;
    for (int i = 0; i < r->nsamples; i++) {
        if (r->samples[i].ts > xmax) xmax = (double)r->samples[i].ts;
        for (int s = 0; s < nseries; s++) {
            double v = get(&r->samples[i], s);
            if (v > ymax) ymax = v;
            points += v >= 0;
        }
    }
    if (percent) { /* fractions: zoom on the data, up to 100 % */
        double vmax = 0;
        for (int i = 0; i < r->nsamples; i++)
            for (int s = 0; s < nseries; s++)
                if (get(&r->samples[i], s) > vmax) vmax = get(&r->samples[i], s);
        ymax = vmax * 1.1 > 1 ? 1 : vmax * 1.1 < 0.05 ? 0.05 : vmax * 1.1;
    }
    if (ymax <= 0) ymax = 1;
    if (xmax <= 0) xmax = 1;
    fprintf(f,
            "<h3>%s</h3>\n<svg class=\"hl-chart\" data-chart=\"%s\" data-points=\"%d\" "
            "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n",
            title, name, points, CW, CH, CW, CH);
    int pw = CW - ML - MR, ph = CH - MT - MB;
    char buf[64];
    for (int t = 0; t <= 4; t++) {
        double y = MT + ph - ph * t / 4.0;
        fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>", ML,
                ML + pw, y, y);
        fprintf(f, "<text class=\"ax\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", ML - 6,
                y + 4, fmt_y(ymax * t / 4, percent, buf, sizeof buf));
    }
    for (int t = 0; t <= 5; t++) {
        double x = ML + pw * t / 5.0;
        fprintf(f, "<text class=\"ax\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.3g s</text>\n",
                x, CH - MB + 18, xmax * t / 5 / 1e9);
    }
    for (int s = 0; s < nseries; s++) {
        int open = 0;
        for (int i = 0; i < r->nsamples; i++) {
            double v = get(&r->samples[i], s);
            if (v < 0) {
                if (open) fputs("\"/>\n", f);
                open = 0;
                continue;
            }
            if (!open)
                fprintf(f,
                        "<polyline class=\"hl-datum\" fill=\"none\" stroke=\"%s\" "
                        "stroke-width=\"2\" points=\"",
                        colors[s]);
            open = 1;
            fprintf(f, "%.1f,%.1f ", ML + pw * (double)r->samples[i].ts / xmax,
                    MT + ph - ph * v / ymax);
        }
        if (open) fputs("\"/>\n", f);
        fprintf(f,
                "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                "<text class=\"lg\" x=\"%d\" y=\"%d\">%s</text>\n",
                ML + 10 + s * 170, CH - 12, colors[s], ML + 24 + s * 170, CH - 3, labels[s]);
    }
    fputs("</svg>\n", f);
}

static const hl_report_t *bytes_r; /* the report whose samples get_bytes() reads */

/* R, U, H, then (with kernel events) the sampled RSS at the same point, -1 before the first
 * sample. */
static double get_bytes(const hl_sample_t *s, int k)
{
    if (k == 3) {
        long i = s - bytes_r->samples;
        const hl_kernel_report_t *kr = bytes_r->kernel;
        return kr && kr->has_rss[i] ? (double)kr->rss[i] : -1;
    }
    return k == 0 ? (double)s->R : k == 1 ? (double)s->U : (double)s->H;
}

static double get_frac(const hl_sample_t *s, int k)
{
    switch (k) {
    case 0:
        return s->H ? (double)s->R / (double)s->H : -1;
    case 1:
        return s->U ? (double)(s->U - s->R) / (double)s->U : -1;
    default:
        return s->external;
    }
}

/* A bar chart; labels[i] under each bar, values as tooltips. */
static void bar_chart(FILE *f, const char *name, const char *title, int n, const double *v,
                      char labels[][24], const char *color, int w, int h)
{
    double vmax = 0;
    int bars = 0;
    for (int i = 0; i < n; i++) {
        if (v[i] > vmax) vmax = v[i];
        bars += v[i] > 0;
    }
    fprintf(f,
            "<svg class=\"hl-chart\" data-chart=\"%s\" data-points=\"%d\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\"><text class=\"tt\" x=\"4\" y=\"13\">",
            name, bars, w, h, w, h);
    hl_html_esc(f, title);
    fputs("</text>\n", f);
    if (vmax <= 0) vmax = 1;
    int top = 20, bottom = 30, left = 6;
    double bw = (double)(w - 2 * left) / n;
    for (int i = 0; i < n; i++) {
        double bh = (h - top - bottom) * v[i] / vmax;
        if (v[i] > 0)
            fprintf(f,
                    "<rect class=\"hl-datum\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                    "height=\"%.1f\" fill=\"%s\"><title>%s: %.0f</title></rect>\n",
                    left + i * bw + 1, h - bottom - bh, bw - 2, bh, color, labels[i], v[i]);
        if (i % ((n + 7) / 8) == 0)
            fprintf(f,
                    "<text class=\"ax\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" "
                    "font-size=\"9\">%s</text>\n",
                    left + i * bw + bw / 2, h - bottom + 14, labels[i]);
    }
    fputs("</svg>\n", f);
}

static unsigned hash_name(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static void flame_node(FILE *f, const hl_flame_t *fl, int32_t ix, double x, double w, int depth,
                       double scale)
{
    const hl_flame_node_t *n = &fl->node[ix];
    if (w < 0.3) return;
    unsigned h = hash_name(n->name);
    char wb[32];
    fprintf(f,
            "<g class=\"hl-datum\"><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"17\" "
            "fill=\"hsl(%u,%u%%,%u%%)\"/><title>",
            x, depth * 18, w, 10 + h % 45, 60 + (h >> 8) % 30, 55 + (h >> 16) % 15);
    hl_html_esc(f, n->name);
    fprintf(f, " — %s (%.1f%%)</title>", human((double)n->weight, wb, sizeof wb),
            100.0 * (double)n->weight / (double)fl->node[0].weight);
    if (w > 40) {
        fprintf(f, "<text x=\"%.2f\" y=\"%d\" font-size=\"11\">", x + 3, depth * 18 + 13);
        int maxc = (int)(w / 7);
        char label[256];
        snprintf(label, sizeof label, "%s", n->name);
        if ((int)strlen(label) > maxc && maxc >= 3) {
            label[maxc - 2] = '.';
            label[maxc - 1] = '.';
            label[maxc] = 0;
        }
        hl_html_esc(f, label);
        fputs("</text>", f);
    }
    fputs("</g>\n", f);
    double cx = x;
    for (int32_t c = n->child; c >= 0; c = fl->node[c].next) {
        double cw = (double)fl->node[c].weight * scale;
        flame_node(f, fl, c, cx, cw, depth + 1, scale);
        cx += cw;
    }
}

static void flame_chart(FILE *f, const char *name, const char *title, const hl_flame_t *fl)
{
    int h = (fl->depth + 1) * 18 + 4;
    fprintf(f, "<h3>%s</h3>\n", title);
    if (!fl->node[0].weight) {
        fprintf(f,
                "<p class=\"none\">nothing to show</p><svg class=\"hl-chart\" "
                "data-chart=\"%s\" data-points=\"0\" width=\"%d\" height=\"4\"></svg>\n",
                name, CW);
        return;
    }
    fprintf(f,
            "<svg class=\"hl-chart flame\" data-chart=\"%s\" data-points=\"%zu\" width=\"%d\" "
            "height=\"%d\" viewBox=\"0 0 %d %d\">\n",
            name, fl->n, CW, h, CW, h);
    flame_node(f, fl, 0, 0, CW, 0, (double)CW / (double)fl->node[0].weight);
    fputs("</svg>\n", f);
}

/* The kernel section (docs/metrics.md, "Kernel view"): the tables and a bar chart of the
 * faulting pages per allocation path. */
static void kernel_html(FILE *f, const hl_report_t *r)
{
    const hl_kernel_report_t *k = r->kernel;
    char b1[32], b2[32], b3[32], b4[32], b5[32];
    fputs("<h2>Kernel view</h2>\n", f);
    if (!k) {
        fputs("<p>" HL_NO_KERNEL_MSG "</p>\n", f);
        return;
    }
    fprintf(f,
            "<p>%" PRIu64 " kernel events, %" PRIu64 " dropped. RSS is sampled (when it moved by "
            "256 KiB or more): %" PRIu64 " samples, peak %s (anonymous %s) at %.6f s.</p>\n",
            k->events, k->dropped, k->rss_samples, human((double)k->rss_peak, b1, sizeof b1),
            human((double)k->anon_peak, b2, sizeof b2), (double)k->rss_peak_ts / 1e9);
    fputs("<h3>At the peak of R</h3><table>\n", f);
    if (k->peak_has_rss)
        fprintf(f, "<tr><td class=\"l\">RSS</td><td>%s</td></tr>\n",
                human((double)k->peak_rss, b1, sizeof b1));
    fprintf(f,
            "<tr><td class=\"l\">heap resident</td><td>%s</td></tr>\n"
            "<tr><td class=\"l\">resident in live blocks</td><td>%s</td></tr>\n"
            "<tr><td class=\"l\">live usable U</td><td>%s</td></tr>\n"
            "<tr><td class=\"l\">held H</td><td>%s</td></tr>\n"
            "<tr><td class=\"l\">fragmentation RSS cost (held free but touched)</td><td>%s</td>"
            "</tr>\n",
            human((double)k->peak_heap_resident, b1, sizeof b1),
            human((double)k->peak_res_blocks, b5, sizeof b5),
            human((double)k->peak_U, b2, sizeof b2), human((double)k->peak_H, b3, sizeof b3),
            human((double)k->frag_rss_cost, b4, sizeof b4));
    if (k->peak_has_rss)
        fprintf(f, "<tr><td class=\"l\">resident outside the heap</td><td>%s</td></tr>\n",
                human((double)k->other_rss, b1, sizeof b1));
    fprintf(f,
            "<tr><td class=\"l\">live but not resident</td><td>%s</td></tr>\n"
            "<tr><td class=\"l\">held but not resident</td><td>%s</td></tr>\n</table>\n",
            human((double)k->live_untouched, b1, sizeof b1),
            human((double)k->held_untouched, b2, sizeof b2));
    fprintf(f,
            "<h3>Page faults</h3><p>%" PRIu64 " pages in %" PRIu64 " runs: %" PRIu64
            " pages in live blocks, %" PRIu64 " in free allocator memory, %" PRIu64
            " outside the allocator's regions.</p>\n",
            k->fault_pages, k->fault_runs, k->pages_in_blocks, k->pages_heap_free,
            k->pages_outside);
    double v[HL_MAX_PATHS];
    char labels[HL_MAX_PATHS][24];
    int n = 0;
    fputs("<table><tr><th>group</th><th>pages</th><th>runs</th></tr>\n", f);
    for (int p = 0; p < HL_MAX_PATHS; p++) {
        if (!k->path[p].runs) continue;
        if (p < (int)HL_PATH_COUNT)
            snprintf(labels[n], sizeof labels[n], "%s", hl_path_name((unsigned)p));
        else
            snprintf(labels[n], sizeof labels[n], "path#%d", p);
        v[n] = (double)k->path[p].pages;
        fprintf(f,
                "<tr><td class=\"l\">path %s</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td></tr>\n",
                labels[n], k->path[p].pages, k->path[p].runs);
        n++;
    }
    for (int c = 0; c < HL_NCLASSES; c++)
        if (k->cls[c].runs)
            fprintf(f,
                    "<tr><td class=\"l\">class %d (%u B)</td><td>%" PRIu64 "</td><td>%" PRIu64
                    "</td></tr>\n",
                    c, hl_class_slot((unsigned)c), k->cls[c].pages, k->cls[c].runs);
    for (int t = HL_TIER_MID; t <= HL_TIER_LARGE; t++)
        if (k->tier[t].runs)
            fprintf(f,
                    "<tr><td class=\"l\">tier %s</td><td>%" PRIu64 "</td><td>%" PRIu64
                    "</td></tr>\n",
                    hl_tier_name((unsigned)t), k->tier[t].pages, k->tier[t].runs);
    fputs("</table>\n", f);
    if (n)
        bar_chart(f, "faults", "Faulting pages per allocation path", n, v, labels, "#8c564b", CW,
                  180);
    fprintf(f,
            "<h3>Held but never touched: %s of %s mapped</h3><table><tr><th>purpose</th>"
            "<th>mappings</th><th>bytes</th><th>touched</th><th>never touched</th></tr>\n",
            human((double)k->never_touched_bytes, b1, sizeof b1),
            human((double)k->mapped_bytes, b2, sizeof b2));
    for (int g = 0; g < HL_KREGIONS; g++) {
        const hl_kregion_t *x = &k->region[g];
        if (!x->mappings) continue;
        fprintf(f,
                "<tr><td class=\"l\">%s</td><td>%" PRIu64 "</td><td>%s</td><td>%s</td>"
                "<td>%s</td></tr>\n",
                hl_kregion_names[g], x->mappings, human((double)x->bytes, b1, sizeof b1),
                human((double)x->touched, b2, sizeof b2),
                human((double)x->never_touched, b3, sizeof b3));
    }
    fputs("</table>\n", f);
}

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

static void site_cycles_html(FILE *f, const hl_report_t *r, int top)
{
    if (!r->has_site_cycles) return;
    fprintf(f,
            "<h2 id=\"site-cycles\">Cycles per call site and path</h2>\n<p>Up to %d sites of each "
            "path, by cycles; share: of the path's cycles.</p>\n<table><tr><th>op</th><th>path</th>"
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
    fputs("</table>\n", f);
    fprintf(f, "<h3 id=\"slowest\">Slowest operations</h3>\n<table><tr><th>#</th><th>op</th>"
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
    fputs("</table>\n", f);
}

static void kv(FILE *f, const char *k, const char *v)
{
    fputs("<tr><th>", f);
    hl_html_esc(f, k);
    fputs("</th><td>", f);
    hl_html_esc(f, v);
    fputs("</td></tr>\n", f);
}

static const char *pcts(double v, char *buf, size_t n)
{
    if (v < 0)
        snprintf(buf, n, "n/a");
    else
        snprintf(buf, n, "%.2f%%", v * 100);
    return buf;
}

static const char css[] =
    "body{font:14px/1.4 sans-serif;margin:24px;color:#222;max-width:1100px}"
    "h1{font-size:20px}h2{font-size:17px;border-bottom:1px solid #ccc;margin-top:28px}"
    "h3{font-size:14px;margin:14px 0 4px}table{border-collapse:collapse;margin:6px 0}"
    "th,td{padding:2px 8px;text-align:right;border-bottom:1px solid #eee}"
    "th{text-align:left;font-weight:600}td.l{text-align:left;font-family:monospace}"
    ".warn{background:#fff3cd;border:1px solid #e0c060;padding:6px 10px}"
    ".grid{stroke:#e4e4e4}.ax{font-size:11px;fill:#555}.lg{font-size:12px}"
    ".tt{font-size:12px;font-weight:600}svg{display:block;margin:4px 0}"
    ".hists svg{display:inline-block;margin:4px 8px 4px 0;border:1px solid #eee}"
    ".flame text{pointer-events:none}.flame rect:hover{stroke:#000;stroke-width:1}"
    "#hl-status{color:#888;font-size:11px}";

/* Counts the charts and their data marks once the page is loaded; the headless-browser test
 * reads the result from #hl-status. */
static const char script[] =
    "(function(){var c=document.querySelectorAll('svg.hl-chart'),d=0,s=[];"
    "for(var i=0;i<c.length;i++){var n=c[i].querySelectorAll('.hl-datum').length;"
    "if(n>0)d++;s.push(c[i].getAttribute('data-chart')+'='+n);}"
    "var e=document.getElementById('hl-status');"
    "e.textContent='charts='+c.length+' with-data='+d+' '+s.join(' ');"
    "e.setAttribute('data-charts',c.length);e.setAttribute('data-with-data',d);})();";

/* The leak scan's classes (leakclass.h) in the leak section: one row per class, then the
 * lost bytes per allocation site (function, file:line). */
static void leak_classes_html(FILE *f, const hl_report_t *r, int top)
{
    const hl_leakclass_report_t *lc = r->leakclass;
    if (!lc) return;
    fprintf(f,
            "<table id=\"leak-classes\"><caption>Reachability scan at exit (%s; %" PRIu64
            " of %" PRIu64 " other threads scanned)</caption>\n"
            "<tr><th class=\"l\">class</th><th>blocks</th><th>bytes</th></tr>\n",
            hl_leakclass_status(lc->status), lc->threads_scanned, lc->threads);
    for (int k = 1; k <= 3; k++)
        fprintf(f,
                "<tr class=\"leak-c%d\"><td class=\"l\">%s</td><td>%" PRIu64 "</td><td>%" PRIu64
                "</td></tr>\n",
                k, hl_leakclass_labels[k], lc->blocks[k], lc->bytes[k]);
    fprintf(f,
            "<tr class=\"leak-lost\"><td class=\"l\">leaked (definitely + indirectly lost)</td>"
            "<td>%" PRIu64 "</td><td>%" PRIu64 "</td></tr>\n</table>\n",
            lc->blocks[1] + lc->blocks[2], lc->bytes[1] + lc->bytes[2]);
    if (!lc->nsites) return;
    fputs("<table id=\"leak-class-sites\"><tr><th>definitely lost</th><th>indirectly lost</th>"
          "<th class=\"l\">allocation site</th></tr>\n",
          f);
    for (size_t i = 0; i < lc->nsites && i < (size_t)top; i++) {
        const hl_leak_site_t *s = &lc->sites[i];
        hl_frames_t fr = {0};
        if (s->stack >= 0) hl_frames_load(r->db, s->stack, &fr);
        fprintf(f, "<tr><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td class=\"l\">",
                s->definite_bytes, s->indirect_bytes);
        hl_html_esc(f, fr.n ? hl_frames_site(&fr) : "(no stack)");
        fputs("</td></tr>\n", f);
        hl_frames_free(&fr);
    }
    fputs("</table>\n", f);
}

int hl_render_html(const char *out_path, hl_report_t *r, const hl_render_opts_t *o)
{
    FILE *f = fopen(out_path, "w");
    if (!f) return -1;
    int top = o && o->top > 0 ? o->top : 10;
    const hl_run_t *run = &r->run;
    char b1[160], b2[64], b3[64];
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<title>heapledger report</title><style>",
          f);
    fputs(css, f);
    fputs("</style></head><body>\n<h1>heapledger report: ", f);
    hl_html_esc(f, run->path);
    fputs("</h1>\n", f);
    if (r->approximate)
        fprintf(f,
                "<p class=\"warn\">%" PRId64 " events were discarded while recording: "
                "metrics are approximate (counts are lower bounds).</p>\n",
                run->discarded);

    fputs("<h2>Run</h2><table>\n", f);
    kv(f, "command", run->command);
    kv(f, "options", *run->options ? run->options : "(defaults)");
    kv(f, "host", run->host);
    snprintf(b1, sizeof b1, "%.6f s", r->duration_s);
    kv(f, "duration", b1);
    snprintf(b1, sizeof b1, "%" PRId64 " recorded, %" PRId64 " discarded", run->events,
             run->discarded);
    kv(f, "events", b1);
    snprintf(b1, sizeof b1, "%" PRId64 " / %" PRId64, run->processes, run->threads);
    kv(f, "processes / threads", b1);
    snprintf(b1, sizeof b1,
             "%" PRIu64 " allocs, %" PRIu64 " frees, %" PRIu64 " reallocs, %" PRIu64
             " failed, %" PRIu64 " frees of unknown blocks",
             r->allocs, r->frees, r->reallocs, r->failed, r->orphan_frees);
    kv(f, "operations", b1);
    fputs("</table>\n", f);

    fputs("<h2>Memory</h2><table><tr><th></th><th>requested</th><th>usable</th><th>held</th>"
          "<th>utilisation</th><th>internal frag</th><th>external frag (mid)</th></tr>\n",
          f);
    char p1[32], p2[32], p3[32];
    fprintf(f,
            "<tr><th>at peak</th><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
            "<td>%s</td></tr>\n",
            human((double)r->peak_R, b1, sizeof b1), human((double)r->peak_U, b2, sizeof b2),
            human((double)r->peak_H, b3, sizeof b3), pcts(r->util_peak, p1, sizeof p1),
            pcts(r->internal_peak, p2, sizeof p2), pcts(r->external_peak, p3, sizeof p3));
    fprintf(f,
            "<tr><th>at end</th><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
            "<td>%s</td></tr></table>\n",
            human((double)r->end_R, b1, sizeof b1), human((double)r->end_U, b2, sizeof b2),
            human((double)r->end_H, b3, sizeof b3), pcts(r->util_end, p1, sizeof p1),
            pcts(r->internal_end, p2, sizeof p2), pcts(r->external_end, p3, sizeof p3));
    if (r->has_failure)
        fprintf(f,
                "<p>First failed allocation: %" PRIu64 " bytes at %.6f s with %" PRIu64
                " bytes live (utilisation %s).</p>\n",
                r->fail_size, (double)r->fail_ts / 1e9, r->fail_R,
                pcts(r->fail_util, p1, sizeof p1));

    const char *bl[] = {"requested R", "usable U", "held H", "RSS (sampled)"};
    const char *bc[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#7f7f7f"};
    bytes_r = r;
    line_chart(f, "bytes", "Bytes over time", r, r->kernel ? 4 : 3, get_bytes, bl, bc, 0);
    const char *fl[] = {"utilisation R/H", "internal (U-R)/U", "external (mid)"};
    const char *fc[] = {"#1f77b4", "#d62728", "#9467bd"};
    line_chart(f, "fractions", "Utilisation and fragmentation over time", r, 3, get_frac, fl, fc,
               1);

    fputs("<h2>Cycle budget per path</h2>\n<table><tr><th>op</th><th>path</th><th>count</th>"
          "<th>share</th><th>p01</th><th>p25</th><th>p50</th><th>p75</th><th>p99</th>"
          "<th>mean</th><th>ns p50</th><th>weighted</th></tr>\n",
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
    fputs("</table>\n<h3>Cycle histograms per path (log2 buckets)</h3><div class=\"hists\">\n", f);
    static char hl_labels[HL_CYC_HIST][24];
    for (int b = 0; b < HL_CYC_HIST; b++)
        snprintf(hl_labels[b], sizeof hl_labels[b], b ? "<2^%d" : "0", b);
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
        bar_chart(f, name, title, last, v, hl_labels, "#4e79a7", 360, 150);
    }
    fputs("</div>\n", f);
    site_cycles_html(f, r, top);

    fputs("<h2>Request sizes</h2>\n", f);
    {
        double v[HL_SIZE_BUCKETS];
        static char lab[HL_SIZE_BUCKETS][24];
        for (int b = 0; b < HL_SIZE_BUCKETS; b++) {
            v[b] = (double)r->sizes[b].count;
            if (r->sizes[b].hi == UINT64_MAX)
                snprintf(lab[b], sizeof lab[b], ">%s",
                         human((double)r->sizes[b].lo - 1, b1, sizeof b1));
            else
                snprintf(lab[b], sizeof lab[b], "%s", human((double)r->sizes[b].hi, b1, sizeof b1));
        }
        bar_chart(f, "sizes", "allocations by requested size (upper bound of each bucket)",
                  HL_SIZE_BUCKETS, v, lab, "#59a14f", CW, 200);
    }

    hl_flame_t flame;
    hl_flame_init(&flame);
    for (size_t i = 0; i < r->nsites && i < 2000; i++)
        if (r->sites[i].bytes) hl_flame_add(&flame, r->db, r->sites[i].stack, r->sites[i].bytes);
    fputs("<h2>Allocation sites</h2>\n", f);
    flame_chart(f, "flame-sites", "Flame graph of allocation sites by bytes requested", &flame);
    hl_flame_free(&flame);
    fputs("<table><tr><th>bytes</th><th>count</th><th>site</th></tr>\n", f);
    for (size_t i = 0; i < r->nsites && i < (size_t)top; i++) {
        hl_frames_t fr = {0};
        if (r->sites[i].stack >= 0) hl_frames_load(r->db, r->sites[i].stack, &fr);
        const char *site = fr.n ? hl_frames_site(&fr) : "(no stack)";
        fprintf(f, "<tr><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td class=\"l\">",
                r->sites[i].bytes, r->sites[i].count);
        hl_html_esc(f, site);
        fputs("</td></tr>\n", f);
        hl_frames_free(&fr);
    }
    fputs("</table>\n", f);

    fprintf(f, "<h2>Leaks at exit: %" PRIu64 " blocks, %s</h2>\n", r->leak_blocks,
            human((double)r->leak_bytes, b1, sizeof b1));
    if (r->leakclass) /* the headline of a scanned run: what it found lost (leak classes) */
        fprintf(f,
                "<p id=\"leaked\" class=\"headline\">Leaked at exit: %s in %" PRIu64
                " blocks (definitely + indirectly lost, reachability scan)</p>\n",
                human((double)(r->leakclass->bytes[1] + r->leakclass->bytes[2]), b2, sizeof b2),
                r->leakclass->blocks[1] + r->leakclass->blocks[2]);
    for (int k = 1; k < 3; k++)
        if (r->supp_blocks[k])
            fprintf(f,
                    "<p class=\"suppressed\">suppressed: %" PRIu64 " blocks, %" PRIu64
                    " bytes (%s)</p>\n",
                    r->supp_blocks[k], r->supp_bytes[k], hl_supp_labels[k]);
    leak_classes_html(f, r, top);
    hl_flame_init(&flame);
    size_t *lx;
    size_t nl = hl_leak_sites(r, &lx);
    for (size_t i = 0; i < nl && i < 2000; i++)
        hl_flame_add(&flame, r->db, r->sites[lx[i]].stack, r->sites[lx[i]].live_bytes);
    free(lx);
    flame_chart(f, "flame-leaks", "Flame graph of leaked bytes by allocation stack", &flame);
    hl_flame_free(&flame);

    if (!r->replay) kernel_html(f, r);

    fprintf(f, "<h2>Errors: %zu</h2><table>\n", r->nerrors);
    for (size_t i = 0; i < r->nerrors && i < (size_t)top * 5; i++) {
        fprintf(f, "<tr><td class=\"l\">");
        hl_html_esc(f, r->errors[i].kind);
        fprintf(f, "</td><td class=\"l\">0x%" PRIx64 "</td><td class=\"l\">", r->errors[i].addr);
        hl_html_esc(f, r->errors[i].details);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n<p id=\"hl-status\"></p>\n<script>", f);
    fputs(script, f);
    fputs("</script>\n</body></html>\n", f);
    return fclose(f) == 0 ? 0 : -1;
}
