/* analyzer/render_html_kernel.c — the report's kernel section (render_html.h), present with
 * kernel events (heapledger record --kernel). */
#include <inttypes.h>
#include <stdio.h>

#include "hl_schema.h"
#include "render_html.h"

/* The kernel section (docs/metrics.md, "Kernel view"): the tables and a bar chart of the
 * faulting pages per allocation path. */
void hl_html_kernel(FILE *f, const hl_report_t *r)
{
    const hl_kernel_report_t *k = r->kernel;
    char b1[32], b2[32], b3[32], b4[32], b5[32];
    fputs("<h2 id=\"kernel\">Kernel view</h2>\n", f);
    if (!k) {
        fputs("<p>" HL_NO_KERNEL_MSG "</p>\n", f);
        return;
    }
    fprintf(f,
            "<p>%" PRIu64 " kernel events, %" PRIu64 " dropped. RSS is sampled (when it moved by "
            "256 KiB or more): %" PRIu64 " samples, peak %s (anonymous %s) at %.6f s.</p>\n",
            k->events, k->dropped, k->rss_samples,
            hl_html_human((double)k->rss_peak, b1, sizeof b1),
            hl_html_human((double)k->anon_peak, b2, sizeof b2), (double)k->rss_peak_ts / 1e9);
    fputs("<h3>At the peak of R</h3><table>\n", f);
    if (k->peak_has_rss)
        fprintf(f, "<tr><td class=\"l\">RSS</td><td>%s</td></tr>\n",
                hl_html_human((double)k->peak_rss, b1, sizeof b1));
    fprintf(f,
            "<tr><td class=\"l\">heap resident</td><td>%s</td></tr>\n"
            "<tr><td class=\"l\">resident in live blocks</td><td>%s</td></tr>\n"
            "<tr><td class=\"l\">live usable U</td><td>%s</td></tr>\n"
            "<tr><td class=\"l\">held H</td><td>%s</td></tr>\n"
            "<tr><td class=\"l\">fragmentation RSS cost (held free but touched)</td><td>%s</td>"
            "</tr>\n",
            hl_html_human((double)k->peak_heap_resident, b1, sizeof b1),
            hl_html_human((double)k->peak_res_blocks, b5, sizeof b5),
            hl_html_human((double)k->peak_U, b2, sizeof b2),
            hl_html_human((double)k->peak_H, b3, sizeof b3),
            hl_html_human((double)k->frag_rss_cost, b4, sizeof b4));
    if (k->peak_has_rss)
        fprintf(f, "<tr><td class=\"l\">resident outside the heap</td><td>%s</td></tr>\n",
                hl_html_human((double)k->other_rss, b1, sizeof b1));
    fprintf(f,
            "<tr><td class=\"l\">live but not resident</td><td>%s</td></tr>\n"
            "<tr><td class=\"l\">held but not resident</td><td>%s</td></tr>\n</table>\n",
            hl_html_human((double)k->live_untouched, b1, sizeof b1),
            hl_html_human((double)k->held_untouched, b2, sizeof b2));
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
        hl_html_bar_chart(f, "faults", "Faulting pages per allocation path", n, v, labels,
                          "#8c564b", HL_HTML_CW, 180);
    fprintf(f,
            "<h3>Held but never touched: %s of %s mapped</h3><table><tr><th>purpose</th>"
            "<th>mappings</th><th>bytes</th><th>touched</th><th>never touched</th></tr>\n",
            hl_html_human((double)k->never_touched_bytes, b1, sizeof b1),
            hl_html_human((double)k->mapped_bytes, b2, sizeof b2));
    for (int g = 0; g < HL_KREGIONS; g++) {
        const hl_kregion_t *x = &k->region[g];
        if (!x->mappings) continue;
        fprintf(f,
                "<tr><td class=\"l\">%s</td><td>%" PRIu64 "</td><td>%s</td><td>%s</td>"
                "<td>%s</td></tr>\n",
                hl_kregion_names[g], x->mappings, hl_html_human((double)x->bytes, b1, sizeof b1),
                hl_html_human((double)x->touched, b2, sizeof b2),
                hl_html_human((double)x->never_touched, b3, sizeof b3));
    }
    fputs("</table>\n", f);
}
