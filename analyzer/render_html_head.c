/* analyzer/render_html_head.c — the report's first screen (render_html.h): five cards that
 * answer before any chart does. Each names its numbers' section and links to it.
 *
 *   leaks        bytes and blocks live at the end (suppressed ones apart), the top three
 *                leaking sites with function and file:line
 *   peak         the largest requested R and when; usable and held then; the RSS peak
 *   cycles       the allocator path that cost the most cycles (timed operations x mean) and
 *                the call site that paid most of it
 *   temporaries  allocations freed before their thread allocated again, and the top site
 *   errors       what hardened mode found, by kind
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "hl_schema.h"
#include "leakclass.h"
#include "render_html.h"
#include "suppress.h"

static void card_open(FILE *f, const char *id, const char *href, const char *title, int bad)
{
    fprintf(f, "<a class=\"card%s\" id=\"%s\" href=\"#%s\"><span class=\"ct\">%s</span>",
            bad ? " bad" : "", id, href, title);
}

static void site_line(FILE *f, const hl_report_t *r, int64_t stack, const char *what)
{
    hl_html_loc_t l;
    hl_html_site_loc(r->db, stack, &l);
    fputs("<span class=\"cs\"><code>", f);
    hl_html_esc(f, l.func);
    fputs("</code>", f);
    if (*l.fileline) {
        fputs(" <code class=\"fl\">", f);
        hl_html_esc(f, l.fileline);
        fputs("</code>", f);
    } else if (*l.module) {
        fputs(" <code class=\"fl\">", f);
        hl_html_esc(f, l.module);
        fputs("</code>", f);
    }
    fprintf(f, " — %s</span>", what);
}

static void leaks_card(FILE *f, const hl_report_t *r)
{
    char b[32], w[96];
    card_open(f, "head-leaks", "leaks", "Leaked at exit", r->leak_blocks > 0);
    fprintf(f, "<span class=\"big\">%s</span><span class=\"sub\">in %" PRIu64 " blocks</span>",
            hl_html_human((double)r->leak_bytes, b, sizeof b), r->leak_blocks);
    size_t *lx;
    size_t nl = hl_leak_sites(r, &lx);
    for (size_t i = 0; i < nl && i < 3; i++) {
        const hl_site_t *s = &r->sites[lx[i]];
        snprintf(w, sizeof w, "%s in %" PRIu64 " block%s",
                 hl_html_human((double)s->live_bytes, b, sizeof b), s->live_blocks,
                 s->live_blocks == 1 ? "" : "s");
        site_line(f, r, s->stack, w);
    }
    if (nl > 3) fprintf(f, "<span class=\"sub\">and %zu more sites</span>", nl - 3);
    free(lx);
    uint64_t sb = r->supp_blocks[1] + r->supp_blocks[2];
    if (sb) fprintf(f, "<span class=\"sub\">%" PRIu64 " suppressed blocks not counted</span>", sb);
    const hl_leakclass_report_t *lc = r->leakclass;
    if (lc) { /* the reachability scan at exit (leakclass.h): the classes of those blocks */
        char b1[32], b2[32], b3[32];
        fprintf(f,
                "<span class=\"cs\" id=\"head-leak-classes\">scan at exit: %s definitely lost, %s "
                "indirectly lost, %s still reachable</span>",
                hl_html_human((double)lc->bytes[1], b1, sizeof b1),
                hl_html_human((double)lc->bytes[2], b2, sizeof b2),
                hl_html_human((double)lc->bytes[3], b3, sizeof b3));
    }
    fputs("</a>\n", f);
}

static void peak_card(FILE *f, const hl_report_t *r)
{
    char b1[32], b2[32], b3[32];
    card_open(f, "head-peak", "memory", "Peak memory", 0);
    fprintf(f,
            "<span class=\"big\">%s</span><span class=\"sub\">requested, at %.3f s</span>"
            "<span class=\"cs\">usable %s, held %s then</span>",
            hl_html_human((double)r->peak_R, b1, sizeof b1), (double)r->peak_ts / 1e9,
            hl_html_human((double)r->peak_U, b2, sizeof b2),
            hl_html_human((double)r->peak_H, b3, sizeof b3));
    if (r->kernel && r->kernel->rss_samples)
        fprintf(f, "<span class=\"cs\">RSS peak %s at %.3f s</span>",
                hl_html_human((double)r->kernel->rss_peak, b1, sizeof b1),
                (double)r->kernel->rss_peak_ts / 1e9);
    fputs("</a>\n", f);
}

static void cycles_card(FILE *f, const hl_report_t *r)
{
    double all = 0, best = -1;
    const hl_path_stat_t *top = NULL;
    for (size_t i = 0; i < r->npaths; i++) {
        const hl_path_stat_t *p = &r->paths[i];
        double c = p->mean * (double)p->timed;
        all += c;
        if (p->timed && c > best) {
            best = c;
            top = p;
        }
    }
    card_open(f, "head-cycles", "paths", "Costliest allocator path", 0);
    if (!top) {
        fputs("<span class=\"big\">-</span><span class=\"sub\">no timed operations</span></a>\n",
              f);
        return;
    }
    fprintf(f,
            "<span class=\"big\">%s %s</span><span class=\"sub\">%.1f%% of the allocator's "
            "cycles: %" PRIu64 " operations, p50 %.0f cycles, mean %.0f</span>",
            hl_op_name((unsigned)top->op), hl_path_name((unsigned)top->path),
            all > 0 ? 100 * best / all : 0, top->timed, top->p50, top->mean);
    /* site_cycles is sorted by op, path, then cycles: the first row of the path pays most. */
    for (size_t i = 0; i < r->nsite_cycles; i++) {
        const hl_site_cycles_t *s = &r->site_cycles[i];
        if (s->op != top->op || s->path != top->path) continue;
        char w[64];
        if (s->share >= 0)
            snprintf(w, sizeof w, "pays %.0f%% of it", s->share * 100);
        else
            snprintf(w, sizeof w, "%" PRIu64 " operations", s->count);
        site_line(f, r, s->stack, w);
        break;
    }
    fputs("</a>\n", f);
}

static void temporaries_card(FILE *f, const hl_report_t *r)
{
    uint64_t all = r->allocs + r->reallocs;
    card_open(f, "head-temp", "flame", "Temporaries", 0);
    /* The page's script opens the flame graph on this metric when the card is clicked. */
    fputs("<span hidden data-flame-metric=\"temporaries\"></span>", f);
    fprintf(f,
            "<span class=\"big\">%" PRIu64 "</span><span class=\"sub\">allocations freed before "
            "their thread allocated again (%.1f%% of %" PRIu64 ")</span>",
            r->temporary, all ? 100.0 * (double)r->temporary / (double)all : 0.0, all);
    const hl_site_t *best = NULL;
    for (size_t i = 0; i < r->nsites; i++)
        if (r->sites[i].temporary && (!best || r->sites[i].temporary > best->temporary))
            best = &r->sites[i];
    if (best) {
        char w[64];
        snprintf(w, sizeof w, "%" PRIu64 " of them", best->temporary);
        site_line(f, r, best->stack, w);
    }
    fputs("</a>\n", f);
}

static void errors_card(FILE *f, const hl_report_t *r)
{
    card_open(f, "head-errors", "errors", "Errors found", r->nerrors > 0);
    fprintf(f, "<span class=\"big\">%zu</span>", r->nerrors);
    if (!r->nerrors) {
        fputs("<span class=\"sub\">hardened mode (--options harden=1) reports double frees, "
              "overflows and use after free here</span></a>\n",
              f);
        return;
    }
    /* By kind, in order of first appearance (at most six kinds named). */
    const char *kind[6];
    size_t count[6], nk = 0, other = 0;
    for (size_t i = 0; i < r->nerrors; i++) {
        const char *k = r->errors[i].kind ? r->errors[i].kind : "?";
        size_t j = 0;
        while (j < nk && strcmp(kind[j], k))
            j++;
        if (j == nk && nk < 6) {
            kind[nk] = k;
            count[nk++] = 0;
        }
        if (j < nk)
            count[j]++;
        else
            other++;
    }
    for (size_t j = 0; j < nk; j++) {
        fprintf(f, "<span class=\"cs\">%zu × <code>", count[j]);
        hl_html_esc(f, kind[j]);
        fputs("</code></span>", f);
    }
    if (other) fprintf(f, "<span class=\"cs\">%zu of other kinds</span>", other);
    fputs("</a>\n", f);
}

void hl_html_headline(FILE *f, const hl_report_t *r)
{
    fputs("<section id=\"headline\" class=\"cards\">\n", f);
    leaks_card(f, r);
    peak_card(f, r);
    cycles_card(f, r);
    temporaries_card(f, r);
    errors_card(f, r);
    fputs("</section>\n<nav class=\"toc\"><a href=\"#memory\">memory</a> <a href=\"#paths\">"
          "paths</a> ",
          f);
    if (r->has_site_cycles) fputs("<a href=\"#site-cycles\">cycles per site</a> ", f);
    fputs("<a href=\"#sizes\">sizes</a> <a href=\"#sites\">sites</a> <a href=\"#flame\">flame "
          "graph</a> <a href=\"#leaks\">leaks</a> ",
          f);
    if (!r->replay) fputs("<a href=\"#kernel\">kernel</a> ", f);
    fputs("<a href=\"#errors\">errors</a> <a href=\"#run\">run</a></nav>\n", f);
}
