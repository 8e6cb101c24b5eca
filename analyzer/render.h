/* analyzer/render.h — the report renderers: text (a terminal reader), JSON (one document,
 * schemas/report.schema.json) and HTML (one self-contained file with inline SVG charts).
 * Each reads an hl_report_t only (and the database, for symbolising stacks).
 */
#ifndef HL_RENDER_H
#define HL_RENDER_H

#include <stdio.h>

#include "report.h"

typedef struct hl_render_opts_s {
    int top; /* rows in the top-N tables (sites, leak stacks) */
} hl_render_opts_t;

void hl_render_text(FILE *f, hl_report_t *r, const hl_render_opts_t *o);
void hl_render_json(FILE *f, hl_report_t *r, const hl_render_opts_t *o);
/* Returns 0, or -1 if the file could not be written (errno set). */
int hl_render_html(const char *out_path, hl_report_t *r, const hl_render_opts_t *o);

/* Indices of r->sites sorted by count descending (caller frees). */
size_t *hl_sites_by_count(const hl_report_t *r);
/* Number of sites with live blocks not suppressed (suppress.h). Fills *idx with the
 * indices of leaking sites, by live bytes descending (caller frees). */
size_t hl_leak_sites(const hl_report_t *r, size_t **idx);
/* Write s to f with < > & " escaped for HTML. */
void hl_html_esc(FILE *f, const char *s);

/* The kernel view's names: region purpose (hl_region_t, HL_KREGIONS), tier group label. */
extern const char *const hl_kregion_names[HL_KREGIONS];
/* Message of a report without kernel events. */
#define HL_NO_KERNEL_MSG "no kernel events (record with --kernel)"

#endif
