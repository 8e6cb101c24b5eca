/* analyzer/diffnoise.h — when a wall-clock difference between two runs means nothing.
 *
 * A run database stores the host's name but not the machine's load while recording, so the
 * duration of the analysed window (and the throughput derived from it) compares only between
 * runs of the same host, and even there a small delta is within what load alone does. The rule
 * (docs/metrics.md, "Comparing runs"): a duration delta of run b against run a is marked as
 * noise when the hosts differ or either is unknown, or when |b - a| / a is below
 * HL_DURATION_NOISE. A larger delta on the same host is shown, with a note that the load at
 * record time is not known.
 */
#ifndef HL_DIFFNOISE_H
#define HL_DIFFNOISE_H

#include "report.h"

#define HL_DURATION_NOISE 0.25 /* relative delta below which a duration is noise */

/* 1 when b's duration delta against a is noise; *why names the reason (static string). */
int hl_duration_noisy(const hl_report_t *a, const hl_report_t *b, const char **why);

#endif
