/* analyzer/sites.h — the cycle budget per call site and path, and the slowest operations.
 *
 * Fed with each operation the metrics accumulator counts in a path's cycle budget (metrics.h,
 * hl_metrics_last_sample), with the stack of the call that made it: the same site (stack id)
 * as the report's site tables. Per (site, op, path) it keeps the cycle samples (pctl.h, so
 * the percentiles are those of the per-path table); it also keeps the HL_SLOWEST_MAX
 * operations with the most cycles. Definitions in docs/metrics.md, "Cycles per call site".
 * Memory: one hl_pctl_t per (site, op, path) that occurred, and a fixed array.
 */
#ifndef HL_SITES_H
#define HL_SITES_H

#include "report.h"
#include "stream.h"

typedef struct hl_sitecyc_s hl_sitecyc_t;

hl_sitecyc_t *hl_sitecyc_new(void);
/* One operation counted in the cycle budget of (op, path); cycles -1 when not timed. The
 * operation is ev's call: its stack, pid, tid, size; ts relative to the run's start. */
void hl_sitecyc_add(hl_sitecyc_t *sc, int op, int path, int64_t cycles, const hl_event_t *ev,
                    int64_t start_ts);
/* Fill r->site_cycles and r->slowest (report.h) and free the accumulator. */
void hl_sitecyc_finish(hl_sitecyc_t *sc, hl_report_t *r);
void hl_sitecyc_free(hl_sitecyc_t *sc);

/* Total cycles of one site in the report, summed over its (op, path) rows; operations
 * counted in *ops (untimed ones too). 0 when the report has no per-site cycles. */
uint64_t hl_site_cycles_total(const hl_report_t *r, int64_t stack, uint64_t *ops);

#endif
