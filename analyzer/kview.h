/* analyzer/kview.h — the kernel's view of a run (kernel_event rows of heapledger record
 * --kernel) joined with the allocator's events in the one streaming pass.
 *
 * The caller feeds allocator events in seq order (hl_kview_event) and, before each, lets the
 * kernel cursor catch up to that event's time (hl_kview_until): kernel events are read in ts
 * order from the kernel_event_ts index, so the two streams interleave on the common clock
 * (docs/kernel.md, "Clock"). State is bounded by the live set: live blocks, the allocator's
 * current regions, the resident pages as merged ranges, one open fault run per thread.
 * Definitions of what comes out: docs/metrics.md, "Kernel view".
 */
#ifndef HL_KVIEW_H
#define HL_KVIEW_H

#include <sqlite3.h>

#include "report.h"
#include "stream.h"

typedef struct hl_kview_s hl_kview_t;

/* Open over the run of r (its start, window and pid filter must be set). NULL with err[0]
 * == 0 when the run has no kernel events; NULL with a message on a database error. */
hl_kview_t *hl_kview_open(sqlite3 *db, const hl_report_t *r, char *err, size_t errlen);
/* Apply every kernel event with ts < ts. 0, or -1 on a database error (message). */
int hl_kview_until(hl_kview_t *k, int64_t ts, char *err, size_t errlen);
/* An allocator event (after hl_kview_until(k, ev->ts)). */
void hl_kview_event(hl_kview_t *k, const hl_event_t *ev);
/* The allocator's R just reached a new peak (after the event that made it). */
void hl_kview_peak(hl_kview_t *k);
/* Finish: r->kernel gets the result (peak_U and peak_H are read from r); k is freed. */
void hl_kview_finish(hl_kview_t *k, hl_report_t *r);
/* Free without a result (error paths). */
void hl_kview_close(hl_kview_t *k);

#endif
