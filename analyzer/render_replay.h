/* analyzer/render_replay.h — what `heapledger replay` adds to a report: the first failure
 * (request, allocation stack, free space, arena map), the --fit answers and the --matrix
 * table, as text (render_replay.c) and as a self-contained HTML page (render_replay_html.c).
 */
#ifndef HL_RENDER_REPLAY_H
#define HL_RENDER_REPLAY_H

#include <stdio.h>

#include "replay.h"
#include "report.h"

/* The first failure's details (after the replay summary): stack and arena map. */
void hl_replay_failure_text(FILE *f, const hl_report_t *r);
void hl_replay_fit_text(FILE *f, const hl_fit_t *fits, size_t n);
void hl_replay_matrix_text(FILE *f, const hl_matrix_row_t *rows, uint64_t arena, int repeat);
/* Write OUT.html: r (may be NULL), fits (n may be 0), rows (NULL: no matrix). 0 or -1. */
int hl_replay_html(const char *out, const hl_report_t *r, const hl_fit_t *fits, size_t nfits,
                   const hl_matrix_row_t *rows, uint64_t arena, int repeat);

#endif
