/* tracer/ingest_progress.c — a one-line progress bar on stderr, only when it is a tty.
 * Redrawn at most 10 times a second; the event total is an estimate from the trace size, so
 * the bar stops at 99 % until the end. While record stores trace chunks during the run
 * (p->recording) the line says what is stored, at what rate, and what waits:
 *   heapledger record: 12.3 M events stored, 1.52 M/s, backlog 2 chunks (131 MiB), 8.1 s */
#include "ingest_internal.h"

#include <stdio.h>
#include <string.h>
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
    memset(p, 0, sizeof *p);
    p->enabled = want && isatty(2);
    p->expect = expect;
    p->start = p->last = hl_ingest_now();
}

static void draw_recording(const hl_iprogress_t *p, uint64_t events, int done)
{
    double el = hl_ingest_now() - p->start;
    fprintf(stderr,
            "\rheapledger record: %.1f M events stored, %.2f M/s, backlog %u chunk%s (%.0f MiB), "
            "%.1f s\033[K%s",
            (double)events / 1e6, el > 0 ? (double)events / el / 1e6 : 0.0, p->backlog_chunks,
            p->backlog_chunks == 1 ? "" : "s", (double)p->backlog_bytes / 1048576.0, el,
            done ? "\n" : "");
    fflush(stderr);
}

static void draw(const hl_iprogress_t *p, uint64_t events, int done)
{
    events += p->base;
    if (p->recording) {
        draw_recording(p, events, done);
        return;
    }
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
    p->base = 0;
    p->backlog_chunks = 0;
    p->backlog_bytes = 0;
    if (p->enabled) draw(p, events, 1);
}
