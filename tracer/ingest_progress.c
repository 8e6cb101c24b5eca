/* tracer/ingest_progress.c — a one-line progress bar on stderr, only when it is a tty.
 * Redrawn at most 10 times a second; the event total is an estimate from the trace size, so
 * the bar stops at 99 % until the end. */
#include "ingest_internal.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

double hl_ingest_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void hl_iprogress_start(hl_iprogress_t *p, int want, uint64_t expect)
{
    p->enabled = want && isatty(2);
    p->expect = expect;
    p->start = p->last = hl_ingest_now();
}

static void draw(const hl_iprogress_t *p, uint64_t events, int done)
{
    double el = hl_ingest_now() - p->start;
    unsigned pct = done ? 100 : 0;
    if (!done && p->expect) {
        pct = (unsigned)(events * 100 / p->expect);
        if (pct > 99) pct = 99;
    }
    char bar[31];
    unsigned fill = pct * 30 / 100;
    for (unsigned i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[30] = 0;
    fprintf(stderr, "\rheapledger: ingesting [%s] %3u%% %llu events %.1f s%s", bar, pct,
            (unsigned long long)events, el, done ? "\n" : "");
    fflush(stderr);
}

void hl_iprogress_update(hl_iprogress_t *p, uint64_t events)
{
    if (!p->enabled) return;
    double now = hl_ingest_now();
    if (now - p->last < 0.1) return;
    p->last = now;
    draw(p, events, 0);
}

void hl_iprogress_end(hl_iprogress_t *p, uint64_t events)
{
    if (p->enabled) draw(p, events, 1);
}
