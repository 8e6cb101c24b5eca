/* analyzer/metrics.h — the accumulator: feed it events in seq order, get an hl_report_t.
 *
 * State kept is bounded by the live set (live mid blocks for fragmentation, live counts per
 * site, size and thread) plus fixed-size statistics; nothing grows with the trace length.
 * Events before the window's start update the state (so R, U, H and leaks are right) but
 * not the statistics; the caller stops feeding after the window's end.
 */
#ifndef HL_METRICS_H
#define HL_METRICS_H

#include "hmap.h"
#include "report.h"
#include "stream.h"

typedef struct hl_metrics_s hl_metrics_t;

/* run is copied into the report (ownership moves). from/to are absolute ns, -1 = open. */
hl_metrics_t *hl_metrics_new(hl_run_t *run, int64_t pid, int64_t from_ns, int64_t to_ns);
/* Feed one event; returns 0 (event not used) once past the window's end: stop then. */
int hl_metrics_event(hl_metrics_t *m, const hl_event_t *ev);
/* Suppressed stacks (stack id + 1 -> hl_supp_kind_t, suppress.h), before the first event;
 * the map stays the caller's and must outlive the accumulator. Their live blocks are counted
 * apart from the leaks. */
void hl_metrics_set_suppressed(hl_metrics_t *m, const hl_hmap_t *kinds);
/* Set H directly (replay: the heap's own count); switches held_source to "heap". */
void hl_metrics_set_held(hl_metrics_t *m, uint64_t held);
/* Override the external fragmentation at the current point (replay: the heap's own
 * largest free block / free bytes); used at the end and at the peak. */
void hl_metrics_set_external(hl_metrics_t *m, double ext);
/* Current peak seq (so a caller can compute something at the peak afterwards). */
int64_t hl_metrics_peak_seq(const hl_metrics_t *m);
/* The last operation counted in a path's cycle budget: its op, path (as in the report's
 * paths) and cycles (-1 untimed). Returns a counter that grows by one per such operation, so
 * a caller sees whether the event just fed was one (sites.h). */
uint64_t hl_metrics_last_sample(const hl_metrics_t *m, int *op, int *path, int64_t *cycles);
/* The report being filled (run, window and pid are set; the rest is in progress). */
const hl_report_t *hl_metrics_report(const hl_metrics_t *m);
/* Finish and hand over the report; the accumulator is freed. */
hl_report_t *hl_metrics_finish(hl_metrics_t *m);

#endif
