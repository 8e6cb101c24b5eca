/* analyzer/render_html.c — the report as one self-contained HTML file (render.h): inline CSS
 * and JavaScript, inline SVG. No network access, no external file. The parts are in
 * render_html_*.c (render_html.h has the map); this file puts the page together in reading
 * order:
 *
 *   headline      the answers first: leaks with file:line, peak, costliest path, errors
 *   memory        live bytes (R, U) on their own axis; held H (and RSS) on another; the
 *                 utilisation and fragmentation over time
 *   paths         the cycle budget per path, histograms, cycles per call site, slowest ops
 *   sizes         the request-size histogram
 *   sites         a sortable table of the top sites; the flame graph (five metrics)
 *   leaks         a sortable table of the leaking sites; a flame graph of the leaked bytes
 *   kernel        with kernel events
 *   errors, run   what hardened mode found; the run's command, options and counts
 *
 * Charts are <svg class="hl-chart" data-chart=NAME>, their data marks carry class hl-datum;
 * #hl-status (hidden) holds the count of charts and marks for the tests.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hl_schema.h"
#include "leakclass.h"
#include "render_html.h"
#include "suppress.h"

/* R and U: the live bytes. */
static double get_live(const hl_report_t *r, int i, int k)
{
    return k == 0 ? (double)r->samples[i].R : (double)r->samples[i].U;
}

/* H, then (with kernel events) the sampled RSS at the same point, -1 before its first
 * sample. */
static double get_held(const hl_report_t *r, int i, int k)
{
    if (k == 1) {
        const hl_kernel_report_t *kr = r->kernel;
        return kr && kr->has_rss[i] ? (double)kr->rss[i] : -1;
    }
    return (double)r->samples[i].H;
}

static double get_frac(const hl_report_t *r, int i, int k)
{
    const hl_sample_t *s = &r->samples[i];
    switch (k) {
    case 0:
        return s->H ? (double)s->R / (double)s->H : -1;
    case 1:
        return s->U ? (double)(s->U - s->R) / (double)s->U : -1;
    default:
        return s->external;
    }
}

static void kv(FILE *f, const char *k, const char *v)
{
    fputs("<tr><th>", f);
    hl_html_esc(f, k);
    fputs("</th><td class=\"l\">", f);
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

static void run_section(FILE *f, const hl_report_t *r)
{
    const hl_run_t *run = &r->run;
    char b1[160];
    fputs("<h2 id=\"run\">Run</h2><div class=\"tw\"><table>\n", f);
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
    fputs("</table></div>\n", f);
}

static void memory_section(FILE *f, const hl_report_t *r)
{
    char b1[64], b2[64], b3[64], p1[32], p2[32], p3[32];
    fputs("<h2 id=\"memory\">Memory</h2><div class=\"tw\"><table><tr><th></th><th>requested R</th>"
          "<th>usable U</th><th>held H</th><th>utilisation R/H</th><th>internal frag</th>"
          "<th>external frag (mid)</th></tr>\n",
          f);
    fprintf(f,
            "<tr><th>at peak</th><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
            "<td>%s</td></tr>\n",
            hl_html_human((double)r->peak_R, b1, sizeof b1),
            hl_html_human((double)r->peak_U, b2, sizeof b2),
            hl_html_human((double)r->peak_H, b3, sizeof b3), pcts(r->util_peak, p1, sizeof p1),
            pcts(r->internal_peak, p2, sizeof p2), pcts(r->external_peak, p3, sizeof p3));
    fprintf(f,
            "<tr><th>at end</th><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
            "<td>%s</td></tr></table></div>\n",
            hl_html_human((double)r->end_R, b1, sizeof b1),
            hl_html_human((double)r->end_U, b2, sizeof b2),
            hl_html_human((double)r->end_H, b3, sizeof b3), pcts(r->util_end, p1, sizeof p1),
            pcts(r->internal_end, p2, sizeof p2), pcts(r->external_end, p3, sizeof p3));
    fprintf(f,
            "<p class=\"note\">Requested R: the bytes the program asked for; usable U: the "
            "blocks' sizes; held H (%s): the address space the allocator holds from the OS "
            "(mapped, not necessarily resident: only pages the program touched use memory). "
            "H is drawn apart so that R and U keep their own scale.%s</p>\n",
            r->held_source ? r->held_source : "os_region",
            r->kernel ? " RSS, sampled by the kernel, is what is resident."
                      : " Record with --kernel for the resident size (RSS).");
    if (r->has_failure)
        fprintf(f,
                "<p>First failed allocation: %" PRIu64 " bytes at %.6f s with %" PRIu64
                " bytes live (utilisation %s).</p>\n",
                r->fail_size, (double)r->fail_ts / 1e9, r->fail_R,
                pcts(r->fail_util, p1, sizeof p1));

    const char *ll[] = {"requested R", "usable U"};
    const char *lc[] = {"#1f77b4", "#ff7f0e"};
    hl_html_line_chart(f, "bytes", "Live bytes: requested R and usable U", r, 2, get_live, ll, lc,
                       0);
    const char *hl[] = {"held H (mapped)", "RSS (sampled)"};
    const char *hc[] = {"#2ca02c", "#7f7f7f"};
    hl_html_line_chart(f, "held", r->kernel ? "Held H and resident RSS" : "Held H", r,
                       r->kernel ? 2 : 1, get_held, hl, hc, 0);
    const char *fl[] = {"utilisation R/H", "internal (U-R)/U", "external (mid)"};
    const char *fc[] = {"#1f77b4", "#d62728", "#9467bd"};
    hl_html_line_chart(f, "fractions", "Utilisation and fragmentation over time", r, 3, get_frac,
                       fl, fc, 1);
}

static void sizes_section(FILE *f, const hl_report_t *r)
{
    char b1[32];
    double v[HL_SIZE_BUCKETS];
    static char lab[HL_SIZE_BUCKETS][24];
    for (int b = 0; b < HL_SIZE_BUCKETS; b++) {
        v[b] = (double)r->sizes[b].count;
        if (r->sizes[b].hi == UINT64_MAX)
            snprintf(lab[b], sizeof lab[b], ">%s",
                     hl_html_human((double)r->sizes[b].lo - 1, b1, sizeof b1));
        else
            snprintf(lab[b], sizeof lab[b], "%s",
                     hl_html_human((double)r->sizes[b].hi, b1, sizeof b1));
    }
    fputs("<h2 id=\"sizes\">Request sizes</h2>\n", f);
    hl_html_bar_chart(f, "sizes", "allocations by requested size (upper bound of each bucket)",
                      HL_SIZE_BUCKETS, v, lab, "#59a14f", HL_HTML_CW, 200);
}

static void leaks_section(FILE *f, const hl_report_t *r, int top)
{
    char b1[32], b2[32];
    fprintf(f, "<h2 id=\"leaks\">Leaks at exit: %" PRIu64 " blocks, %s</h2>\n", r->leak_blocks,
            hl_html_human((double)r->leak_bytes, b1, sizeof b1));
    if (r->leakclass) /* the headline of a scanned run: what it found lost (leak classes) */
        fprintf(
            f,
            "<p id=\"leaked\" class=\"headline\">Leaked at exit: %s in %" PRIu64
            " blocks (definitely + indirectly lost, reachability scan)</p>\n",
            hl_html_human((double)(r->leakclass->bytes[1] + r->leakclass->bytes[2]), b2, sizeof b2),
            r->leakclass->blocks[1] + r->leakclass->blocks[2]);
    for (int k = 1; k < 3; k++)
        if (r->supp_blocks[k])
            fprintf(f,
                    "<p class=\"suppressed\">suppressed: %" PRIu64 " blocks, %" PRIu64
                    " bytes (%s)</p>\n",
                    r->supp_blocks[k], r->supp_bytes[k], hl_supp_labels[k]);
    leak_classes_html(f, r, top);
    hl_html_leaks_table(f, r, top);
    if (r->leak_blocks)
        hl_html_flame_widget(f, "flame-leaks",
                             "Flame graph of the leaked bytes by allocation stack", "leaked");
}

static void errors_section(FILE *f, const hl_report_t *r, int top)
{
    fprintf(f, "<h2 id=\"errors\">Errors: %zu</h2>\n", r->nerrors);
    if (!r->nerrors) {
        fputs("<p class=\"none\">none recorded (hardened mode, --options harden=1, checks for "
              "them)</p>\n",
              f);
        return;
    }
    fputs("<div class=\"tw\"><table class=\"sortable\"><thead><tr><th>at (s)</th><th>kind</th>"
          "<th>address</th><th>size</th><th>details</th></tr></thead><tbody>\n",
          f);
    for (size_t i = 0; i < r->nerrors && i < (size_t)top * 5; i++) {
        const hl_error_rec_t *e = &r->errors[i];
        fprintf(f, "<tr><td data-v=\"%" PRId64 "\">%.6f</td><td class=\"l\">", e->ts,
                (double)e->ts / 1e9);
        hl_html_esc(f, e->kind);
        fprintf(f,
                "</td><td class=\"l\">0x%" PRIx64 "</td><td data-v=\"%" PRIu64 "\">%" PRIu64
                "</td><td class=\"l\">",
                e->addr, e->size, e->size);
        hl_html_esc(f, e->details);
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody></table></div>\n", f);
}

int hl_render_html(const char *out_path, hl_report_t *r, const hl_render_opts_t *o)
{
    FILE *f = fopen(out_path, "w");
    if (!f) return -1;
    int top = o && o->top > 0 ? o->top : 10;
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
          "<title>heapledger report</title><style>",
          f);
    fputs(hl_html_css, f);
    fputs("</style></head><body>\n<h1>heapledger report: <code>", f);
    hl_html_esc(f, r->run.command && *r->run.command ? r->run.command : r->run.path);
    fputs("</code></h1>\n", f);
    if (r->approximate)
        fprintf(f,
                "<p class=\"warn\">%" PRId64 " events were discarded while recording: "
                "metrics are approximate (counts are lower bounds).</p>\n",
                r->run.discarded);
    hl_html_headline(f, r);
    memory_section(f, r);
    hl_html_paths(f, r);
    hl_html_site_cycles(f, r, top);
    sizes_section(f, r);
    fputs("<h2 id=\"sites\">Allocation sites</h2>\n", f);
    hl_html_sites_table(f, r, top);
    fputs("<div id=\"flame\"></div>\n", f);
    hl_html_flame_widget(f, "flame-sites", "Flame graph of the allocation sites", "bytes");
    leaks_section(f, r, top);
    if (!r->replay) hl_html_kernel(f, r);
    errors_section(f, r, top);
    run_section(f, r);
    hl_html_flame_data(f, r);
    fputs("<p id=\"hl-status\" hidden></p>\n<script>", f);
    fputs(hl_html_js, f);
    fputs("</script>\n</body></html>\n", f);
    return fclose(f) == 0 ? 0 : -1;
}
