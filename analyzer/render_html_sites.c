/* analyzer/render_html_sites.c — a site's location in parts, and the sortable tables of the
 * top allocation sites and of the leaks (render_html.h). A numeric cell carries its exact
 * value in data-v, which the page's script sorts by; the text shows it for a reader. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "render_html.h"
#include "symbols.h"

void hl_html_site_loc(sqlite3 *db, int64_t stack, hl_html_loc_t *l)
{
    memset(l, 0, sizeof *l);
    hl_frames_t fr = {0};
    if (stack >= 0) hl_frames_load(db, stack, &fr);
    if (!fr.n) {
        snprintf(l->func, sizeof l->func, "%s",
                 stack < 0 ? "(no stack)" : "(stack without frames)");
        snprintf(l->frame, sizeof l->frame, "%s", l->func);
        hl_frames_free(&fr);
        return;
    }
    const char *site = hl_frames_site(&fr);
    size_t i = 0;
    while (i + 1 < fr.n && fr.frame[i] != site)
        i++;
    const hl_frame_t *x = &fr.loc[i];
    snprintf(l->func, sizeof l->func, "%s", x->function ? x->function : fr.func[i]);
    if (x->file) snprintf(l->fileline, sizeof l->fileline, "%s:%d", x->file, x->line);
    if (x->module) {
        const char *base = strrchr(x->module, '/');
        snprintf(l->module, sizeof l->module, "%s", base ? base + 1 : x->module);
    }
    snprintf(l->frame, sizeof l->frame, "%s", fr.frame[i]);
    hl_frames_free(&fr);
}

/* A cell with text, left-aligned (function, file:line, module). */
static void text_cell(FILE *f, const char *cls, const char *s)
{
    fprintf(f, "<td class=\"%s\">", cls);
    hl_html_esc(f, *s ? s : "-");
    fputs("</td>", f);
}

static void num_cell(FILE *f, uint64_t v)
{
    fprintf(f, "<td data-v=\"%" PRIu64 "\">%" PRIu64 "</td>", v, v);
}

static void bytes_cell(FILE *f, uint64_t v)
{
    char b[32];
    fprintf(f, "<td data-v=\"%" PRIu64 "\" title=\"%" PRIu64 " B\">%s</td>", v, v,
            hl_html_human((double)v, b, sizeof b));
}

static void loc_cells(FILE *f, const hl_report_t *r, int64_t stack)
{
    hl_html_loc_t l;
    hl_html_site_loc(r->db, stack, &l);
    fputs("<td class=\"l fn\" title=\"", f);
    hl_html_esc(f, l.frame);
    fputs("\">", f);
    hl_html_esc(f, l.func);
    fputs("</td>", f);
    text_cell(f, "l", l.fileline);
    text_cell(f, "l", l.module);
}

static const char sites_head[] =
    "<thead><tr><th>function</th><th>file:line</th><th>module</th><th>allocations</th>"
    "<th>bytes</th><th>temporaries</th><th>leaked blocks</th><th>leaked bytes</th></tr>"
    "</thead><tbody>\n";

void hl_html_sites_table(FILE *f, const hl_report_t *r, int top)
{
    /* The top sites by bytes and the top by count: sorting by either column then shows the
     * sites that lead it. */
    size_t *byc = hl_sites_by_count(r);
    char *pick = calloc(r->nsites + 1, 1);
    if (!pick) abort();
    size_t rows = 0;
    for (size_t i = 0; i < r->nsites && i < (size_t)top; i++) {
        rows += !pick[i];
        pick[i] = 1;
        rows += !pick[byc[i]];
        pick[byc[i]] = 1;
    }
    fprintf(f,
            "<p>%zu of %zu sites: the top %d by bytes and by allocations. Click a column to "
            "sort.</p>\n<div class=\"tw\"><table class=\"sortable\" id=\"sites-table\">",
            rows, r->nsites, top);
    fputs(sites_head, f);
    for (size_t i = 0; i < r->nsites; i++) {
        if (!pick[i]) continue;
        const hl_site_t *s = &r->sites[i];
        fputs("<tr>", f);
        loc_cells(f, r, s->stack);
        num_cell(f, s->count);
        bytes_cell(f, s->bytes);
        num_cell(f, s->temporary);
        num_cell(f, s->supp ? 0 : s->live_blocks);
        bytes_cell(f, s->supp ? 0 : s->live_bytes);
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div>\n", f);
    free(pick);
    free(byc);
}

void hl_html_leaks_table(FILE *f, const hl_report_t *r, int top)
{
    size_t *lx;
    size_t nl = hl_leak_sites(r, &lx);
    if (!nl) {
        fputs("<p class=\"none\">no leaks: every block was freed (suppressed ones aside)</p>\n", f);
        free(lx);
        return;
    }
    fprintf(f,
            "<p>%zu of %zu leaking sites, by leaked bytes. Click a column to sort.</p>\n"
            "<div class=\"tw\"><table class=\"sortable\" id=\"leaks-table\"><thead><tr>"
            "<th>function</th><th>file:line</th><th>module</th><th>blocks</th><th>bytes</th>"
            "<th>allocations</th></tr></thead><tbody>\n",
            nl < (size_t)top ? nl : (size_t)top, nl);
    /* A leak class column (definitely / indirectly lost, still reachable) goes after module
     * once the report model carries the class of each leaked block. */
    for (size_t i = 0; i < nl && i < (size_t)top; i++) {
        const hl_site_t *s = &r->sites[lx[i]];
        fputs("<tr>", f);
        loc_cells(f, r, s->stack);
        num_cell(f, s->live_blocks);
        bytes_cell(f, s->live_bytes);
        num_cell(f, s->count);
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table></div>\n", f);
    free(lx);
}
