/* analyzer/diffnoise.c — see diffnoise.h. */
#include "diffnoise.h"

#include <math.h>
#include <string.h>

int hl_duration_noisy(const hl_report_t *a, const hl_report_t *b, const char **why)
{
    const char *ha = a->run.host ? a->run.host : "", *hb = b->run.host ? b->run.host : "";
    if (!*ha || !*hb) {
        *why = "host unknown: durations are not comparable across machines or loads";
        return 1;
    }
    if (strcmp(ha, hb)) {
        *why = "another host: durations are not comparable across machines or loads";
        return 1;
    }
    if (!(a->duration_s > 0) || !isfinite(b->duration_s)) {
        *why = "no duration to compare with";
        return 1;
    }
    if (fabs(b->duration_s - a->duration_s) / a->duration_s < HL_DURATION_NOISE) {
        *why = "same host, delta below 25 %: within what the machine's load alone does";
        return 1;
    }
    *why = "same host, delta of 25 % or more; the load at record time is not recorded";
    return 0;
}
