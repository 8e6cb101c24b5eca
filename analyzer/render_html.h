/* analyzer/render_html.h — the parts of the HTML report (render.h: hl_render_html) and what
 * they share. One page, self-contained: inline CSS and JavaScript (analyzer/assets/, built in
 * by render_html_asset.c), SVG charts drawn here, flame graphs drawn by the page's script from
 * the call stacks embedded as JSON.
 *
 *   render_html.c        the page in order: headline, run, memory, paths, sites, leaks, errors
 *   render_html_head.c   the headline (the first screen): leaks, peak, costliest path, errors
 *   render_html_sites.c  sortable tables of the top sites and of the leaks, a site's location
 *   render_html_flame.c  flame graph data (five metrics per stack) and the widget's markup
 *   render_html_cycles.c cycle budget per path, cycles per call site, slowest operations
 *   render_html_kernel.c the kernel view (record --kernel)
 *   render_html_chart.c  line and bar charts as inline SVG
 *   render_html_asset.c  the CSS and JavaScript (analyzer/assets/report.css, report.js)
 *
 * Section ids the headline links to: #memory, #paths, #site-cycles, #sites, #flame, #leaks,
 * #errors, #kernel.
 */
#ifndef HL_RENDER_HTML_H
#define HL_RENDER_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "render.h"

#define HL_HTML_CW 760 /* chart width (the SVG scales down to the page, never wider) */

/* Where a site is: the first frame outside the allocator, in parts. Empty strings when
 * unknown; func falls back to the frame as printed ("module+0x…" or an address). */
typedef struct hl_html_loc_s {
    char func[256];
    char fileline[320]; /* "file:line", "" without debug information */
    char module[160];   /* the module's file name, no directory */
    char frame[512];    /* the whole frame, as the text report prints it */
} hl_html_loc_t;

/* Fill *l for stack (-1: "(no stack)"). */
void hl_html_site_loc(sqlite3 *db, int64_t stack, hl_html_loc_t *l);

/* Bytes with a binary unit ("6.8 KiB"). */
const char *hl_html_human(double v, char *buf, size_t n);

/* A line chart of up to 4 series over the report's timeline (values < 0 are gaps), with its
 * own y axis scaled to its own series. */
void hl_html_line_chart(FILE *f, const char *name, const char *title, const hl_report_t *r,
                        int nseries, double (*get)(const hl_report_t *, int sample, int series),
                        const char **labels, const char **colors, int percent);
/* A bar chart; labels[i] under each bar, values as tooltips. */
void hl_html_bar_chart(FILE *f, const char *name, const char *title, int n, const double *v,
                       char labels[][24], const char *color, int w, int h);

/* The first screen: what leaked and where, the peak and when, the costliest allocator path,
 * errors; each card links to its section. */
void hl_html_headline(FILE *f, const hl_report_t *r);

/* Sortable tables (class "sortable": the page's script sorts on a header click). */
void hl_html_sites_table(FILE *f, const hl_report_t *r, int top);
void hl_html_leaks_table(FILE *f, const hl_report_t *r, int top);

/* The cycle budget per path with its histograms (#paths); cycles per call site and path and
 * the slowest operations (#site-cycles, #slowest; nothing when not computed); the kernel
 * section (#kernel). */
void hl_html_paths(FILE *f, const hl_report_t *r);
void hl_html_site_cycles(FILE *f, const hl_report_t *r, int top);
void hl_html_kernel(FILE *f, const hl_report_t *r);

/* The flame graph data as <script type="application/json" id="hl-flame-data">, once. */
void hl_html_flame_data(FILE *f, const hl_report_t *r);
/* One flame graph widget (metric switch, search, zoom) drawn by the script from that data;
 * its SVG is <svg class="hl-chart flame" data-chart=NAME>, opening on metric. */
void hl_html_flame_widget(FILE *f, const char *name, const char *title, const char *metric);

/* The inline style and script (NUL-terminated). */
extern const char hl_html_css[];
extern const char hl_html_js[];

#endif
