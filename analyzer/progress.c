/* analyzer/progress.c — see progress.h. */
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void hl_progress_begin(hl_progress_t *p, const char *what)
{
    const char *force = getenv("HEAPLEDGER_PROGRESS");
    p->on = force ? !strcmp(force, "1") : isatty(2);
    p->what = what;
    p->t_start = p->t_last = now_s();
}

void hl_progress_update(hl_progress_t *p, uint64_t done, uint64_t total)
{
    if (!p->on) return;
    double t = now_s();
    if (t - p->t_last < 0.2) return;
    p->t_last = t;
    double el = t - p->t_start;
    double pct = total ? 100.0 * (double)done / (double)total : 0;
    if (total)
        fprintf(stderr, "\r%s: %5.1f%%  %.1fM events  %.1fs ", p->what, pct > 99.9 ? 99.9 : pct,
                (double)done / 1e6, el);
    else
        fprintf(stderr, "\r%s: %.1fM events  %.1fs ", p->what, (double)done / 1e6, el);
    fflush(stderr);
}

void hl_progress_done(hl_progress_t *p)
{
    if (p->on && p->t_last > p->t_start) fprintf(stderr, "\r%60s\r", "");
}
