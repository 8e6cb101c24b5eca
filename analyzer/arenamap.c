/* analyzer/arenamap.c — see arenamap.h. */
#include "arenamap.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

hl_arena_map_t *hl_arena_map_new(uint64_t size)
{
    hl_arena_map_t *m = calloc(1, sizeof *m);
    if (m) m->size = size;
    return m;
}

void hl_arena_map_free(hl_arena_map_t *m)
{
    if (!m) return;
    free(m->runs);
    free(m);
}

static void push(hl_arena_map_t *m, uint64_t off, uint64_t len, int is_free)
{
    if (!len) return;
    if (m->n && m->runs[m->n - 1].is_free == is_free &&
        m->runs[m->n - 1].off + m->runs[m->n - 1].len == off) {
        m->runs[m->n - 1].len += len;
        return;
    }
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 256;
        hl_arena_run_t *r = realloc(m->runs, cap * sizeof *r);
        if (!r) return; /* the map stays a prefix; the counters below stay exact */
        m->runs = r;
        m->cap = cap;
    }
    m->runs[m->n++] = (hl_arena_run_t){off, len, is_free};
}

static uint64_t covered(const hl_arena_map_t *m)
{
    return m->n ? m->runs[m->n - 1].off + m->runs[m->n - 1].len : 0;
}

void hl_arena_map_add(hl_arena_map_t *m, uint64_t off, uint64_t len, int is_free)
{
    uint64_t end = covered(m);
    if (off > end) push(m, end, off - end, 0);
    push(m, off, len, is_free);
    if (is_free) {
        m->free_bytes += len;
        if (len > m->largest_free) m->largest_free = len;
    }
}

void hl_arena_map_finish(hl_arena_map_t *m)
{
    uint64_t end = covered(m);
    if (end < m->size) push(m, end, m->size - end, 0);
    m->free_runs = m->used_runs = 0;
    for (size_t i = 0; i < m->n; i++) {
        if (m->runs[i].is_free)
            m->free_runs++;
        else
            m->used_runs++;
    }
}

/* Free bytes of the map inside [a, b). Runs are sorted: start at the first that ends past a. */
static uint64_t free_in(const hl_arena_map_t *m, size_t *from, uint64_t a, uint64_t b)
{
    size_t i = *from;
    while (i < m->n && m->runs[i].off + m->runs[i].len <= a)
        i++;
    *from = i;
    uint64_t sum = 0;
    for (; i < m->n && m->runs[i].off < b; i++) {
        if (!m->runs[i].is_free) continue;
        uint64_t lo = m->runs[i].off > a ? m->runs[i].off : a;
        uint64_t hi = m->runs[i].off + m->runs[i].len < b ? m->runs[i].off + m->runs[i].len : b;
        sum += hi - lo;
    }
    return sum;
}

static int by_len_desc(const void *a, const void *b)
{
    const hl_arena_run_t *x = a, *y = b;
    return x->len < y->len ? 1 : x->len > y->len ? -1 : (x->off > y->off) - (x->off < y->off);
}

#define CELLS 256
#define ROW   64

void hl_arena_map_text(FILE *f, const hl_arena_map_t *m, const char *indent)
{
    fprintf(f,
            "%sarena map (%" PRIu64 " bytes): %" PRIu64 " used runs, %" PRIu64
            " free runs holding %" PRIu64 " bytes, largest free run %" PRIu64 " bytes\n",
            indent, m->size, m->used_runs, m->free_runs, m->free_bytes, m->largest_free);
    uint64_t cell = (m->size + CELLS - 1) / CELLS;
    fprintf(f, "%s  one character = %" PRIu64 " bytes: '#' used, '.' free, 1-9 tenths of it used\n",
            indent, cell);
    size_t from = 0;
    for (unsigned r = 0; r * ROW < CELLS; r++) {
        char line[ROW + 1];
        unsigned k = 0;
        for (; k < ROW && (r * ROW + k) * cell < m->size; k++) {
            uint64_t a = (uint64_t)(r * ROW + k) * cell, b = a + cell;
            if (b > m->size) b = m->size;
            uint64_t fr = free_in(m, &from, a, b), len = b - a;
            if (!fr)
                line[k] = '#';
            else if (fr == len)
                line[k] = '.';
            else {
                unsigned tenths = (unsigned)((len - fr) * 10 / len);
                line[k] = (char)('0' + (tenths ? (tenths > 9 ? 9 : tenths) : 1));
            }
        }
        line[k] = 0;
        if (k) fprintf(f, "%s  %8" PRIu64 " |%s|\n", indent, (uint64_t)r * ROW * cell, line);
    }
    size_t nf = 0;
    hl_arena_run_t *fr = malloc((m->free_runs ? m->free_runs : 1) * sizeof *fr);
    if (!fr) return;
    for (size_t i = 0; i < m->n; i++)
        if (m->runs[i].is_free) fr[nf++] = m->runs[i];
    qsort(fr, nf, sizeof *fr, by_len_desc);
    if (nf) {
        fprintf(f, "%s  largest free runs:", indent);
        for (size_t i = 0; i < nf && i < 5; i++)
            fprintf(f, " %" PRIu64 " B at +%" PRIu64 "%s", fr[i].len, fr[i].off,
                    i + 1 < nf && i < 4 ? "," : "");
        fprintf(f, "\n");
    }
    free(fr);
}

void hl_arena_map_svg(FILE *f, const hl_arena_map_t *m)
{
    /* 16 rows of 1024 px; each row is 1/16 of the arena. Used is the background; free runs
     * are drawn over it, split where they cross a row end. */
    const unsigned rows = 16, w = 1024, h = 18, gap = 4;
    double row_bytes = (double)m->size / rows;
    fprintf(f,
            "<svg class=\"arenamap\" width=\"%u\" "
            "height=\"%u\" viewBox=\"0 0 %u %u\">\n",
            w + 70, rows * (h + gap), w + 70, rows * (h + gap));
    for (unsigned r = 0; r < rows; r++)
        fprintf(f,
                "<text x=\"0\" y=\"%u\" font-size=\"10\">+%" PRIu64
                "</text><rect x=\"70\" y=\"%u\" width=\"%u\" height=\"%u\" fill=\"#b03a2e\"/>\n",
                r * (h + gap) + 13, (uint64_t)(r * row_bytes), r * (h + gap), w, h);
    for (size_t i = 0; i < m->n; i++) {
        if (!m->runs[i].is_free) continue;
        double a = (double)m->runs[i].off, b = a + (double)m->runs[i].len;
        while (a < b) {
            unsigned r = (unsigned)(a / row_bytes);
            if (r >= rows) break;
            double end = (r + 1) * row_bytes < b ? (r + 1) * row_bytes : b;
            double x = 70 + (a - r * row_bytes) / row_bytes * w;
            double wd = (end - a) / row_bytes * w;
            fprintf(f,
                    "<rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%u\" fill=\"#d5f5e3\">"
                    "<title>free %" PRIu64 " B at +%" PRIu64 "</title></rect>\n",
                    x, r * (h + gap), wd < 0.5 ? 0.5 : wd, h, m->runs[i].len, m->runs[i].off);
            a = end;
        }
    }
    fprintf(f, "</svg>\n");
}
