/* analyzer/sitediff.h — heapledger diff per call site: bytes, allocations, leaks and cycles of
 * each site in two to six runs, sorted by the absolute change against the first.
 *
 * Stack ids are a database's own, so sites are matched across runs by name: the site's first
 * frame outside the allocator as the report prints it ("function+0xoff (file:line)", or
 * "module+0xoff" unresolved), "(no stack)" for operations without one. Stacks of one run with
 * the same site add up. Per site and run: allocations in the window and their requested
 * bytes, blocks and bytes live at the end (leaks), and the allocator cycles spent in calls
 * made there (every op and path, sites.h) with the operations they were spent in; and, for
 * the runs the leak scan classified (leakclass.h), the definitely and indirectly lost blocks
 * and bytes (shown in text when every run has them; null in JSON for a run without).
 * Definitions in docs/metrics.md, "Comparing runs".
 */
#ifndef HL_SITEDIFF_H
#define HL_SITEDIFF_H

#include <stdio.h>

#include "jsonw.h"
#include "report.h"

typedef enum { HL_SD_BYTES = 0, HL_SD_COUNT, HL_SD_LEAKS, HL_SD_CYCLES, HL_SD_KEYS } hl_sd_key_t;

/* Sort key by name ("bytes", "count", "leaks", "cycles"); -1 when unknown. */
int hl_sd_key_parse(const char *s);
extern const char *const hl_sd_key_names[HL_SD_KEYS];

typedef struct hl_sitediff_s hl_sitediff_t;

/* Build the per-site table of n runs (symbolising through each report's db). */
hl_sitediff_t *hl_sitediff_new(hl_report_t **r, int n, hl_sd_key_t key);
void hl_sitediff_free(hl_sitediff_t *d);
/* The first top sites as text / as the JSON value of a "sites" key. */
void hl_sitediff_text(FILE *f, const hl_sitediff_t *d, int top);
void hl_sitediff_json(hl_json_t *j, const hl_sitediff_t *d, int top);

#endif
