/* analyzer/sitediff.c — see sitediff.h. */
#include "sitediff.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "leakclass.h"
#include "safetext.h"
#include "symbols.h"

#define MAXR 6

const char *const hl_sd_key_names[HL_SD_KEYS] = {"bytes", "count", "leaks", "cycles"};

int hl_sd_key_parse(const char *s)
{
    for (int k = 0; k < HL_SD_KEYS; k++)
        if (!strcmp(s, hl_sd_key_names[k])) return k;
    return -1;
}

typedef struct vals_s {
    uint64_t count, bytes, leak_blocks, leak_bytes, cycles, ops, timed;
    uint64_t def_blocks, def_bytes, ind_blocks, ind_bytes; /* the leak scan's classes */
} vals_t;

typedef struct item_s {
    char *label;
    int run;
    vals_t v;
} item_t;

typedef struct row_s {
    const char *label;
    vals_t v[MAXR];
    double change; /* largest |run k - run A| of the sort key */
} row_t;

struct hl_sitediff_s {
    int n;
    hl_sd_key_t key;
    int scanned[MAXR]; /* the run has leak classes (a scan at exit, status 0 or 1) */
    int all_scanned, any_scanned;
    item_t *items;
    size_t nitems, cap;
    row_t *rows;
    size_t nrows;
};

static char *label_of(sqlite3 *db, int64_t stack)
{
    if (stack < 0) return strdup("(no stack)");
    hl_frames_t fr;
    if (hl_frames_load(db, stack, &fr) < 0 || !fr.n) {
        hl_frames_free(&fr);
        return strdup("(stack without frames)");
    }
    char *s = strdup(hl_frames_site(&fr));
    hl_frames_free(&fr);
    return s;
}

static vals_t *item(hl_sitediff_t *d, hl_hmap_t *ix, const hl_report_t *r, int run, int64_t stack)
{
    int fresh;
    uint64_t *i = hl_hmap_put(ix, (uint64_t)stack, d->nitems, &fresh);
    if (fresh) {
        item_t *it = HL_VEC_PUSH(d->items, d->nitems, d->cap);
        memset(it, 0, sizeof *it);
        it->label = label_of(r->db, stack);
        it->run = run;
    }
    return &d->items[*i].v;
}

static uint64_t key_val(const vals_t *v, hl_sd_key_t k)
{
    switch (k) {
    case HL_SD_COUNT:
        return v->count;
    case HL_SD_LEAKS:
        return v->leak_bytes;
    case HL_SD_CYCLES:
        return v->cycles;
    default:
        return v->bytes;
    }
}

static int cmp_item(const void *a, const void *b)
{
    const item_t *x = a, *y = b;
    int c = strcmp(x->label, y->label);
    return c ? c : x->run - y->run;
}

static int sort_n;

static double change(const row_t *r, hl_sd_key_t k, int n)
{
    double m = 0;
    for (int i = 1; i < n; i++) {
        double dv = fabs((double)key_val(&r->v[i], k) - (double)key_val(&r->v[0], k));
        if (dv > m) m = dv;
    }
    return m;
}

static int cmp_row(const void *a, const void *b)
{
    const row_t *x = a, *y = b;
    if (x->change != y->change) return x->change < y->change ? 1 : -1;
    for (int k = 0; k < HL_SD_KEYS; k++) {
        double cx = change(x, (hl_sd_key_t)k, sort_n), cy = change(y, (hl_sd_key_t)k, sort_n);
        if (cx != cy) return cx < cy ? 1 : -1;
    }
    return strcmp(x->label, y->label);
}

hl_sitediff_t *hl_sitediff_new(hl_report_t **r, int n, hl_sd_key_t key)
{
    hl_sitediff_t *d = calloc(1, sizeof *d);
    if (!d) abort();
    d->n = n > MAXR ? MAXR : n;
    d->key = key;
    for (int k = 0; k < d->n; k++) {
        hl_hmap_t ix = {0};
        for (size_t i = 0; i < r[k]->nsites; i++) {
            const hl_site_t *s = &r[k]->sites[i];
            if (!s->count && !s->live_blocks) continue;
            vals_t *v = item(d, &ix, r[k], k, s->stack);
            v->count += s->count;
            v->bytes += s->bytes;
            v->leak_blocks += s->live_blocks;
            v->leak_bytes += s->live_bytes;
        }
        const hl_leakclass_report_t *lc = r[k]->leakclass;
        d->scanned[k] = lc && lc->status <= 1;
        for (size_t i = 0; d->scanned[k] && i < lc->nsites; i++) {
            const hl_leak_site_t *s = &lc->sites[i];
            vals_t *v = item(d, &ix, r[k], k, s->stack);
            v->def_blocks += s->definite_blocks;
            v->def_bytes += s->definite_bytes;
            v->ind_blocks += s->indirect_blocks;
            v->ind_bytes += s->indirect_bytes;
        }
        for (size_t i = 0; i < r[k]->nsite_cycles; i++) {
            const hl_site_cycles_t *s = &r[k]->site_cycles[i];
            vals_t *v = item(d, &ix, r[k], k, s->stack);
            v->cycles += s->cycles;
            v->ops += s->count;
            v->timed += s->timed;
        }
        hl_hmap_free(&ix);
    }
    if (d->nitems) qsort(d->items, d->nitems, sizeof *d->items, cmp_item);
    d->rows = calloc(d->nitems + 1, sizeof *d->rows);
    if (!d->rows) abort();
    for (size_t i = 0; i < d->nitems; i++) {
        const item_t *it = &d->items[i];
        if (!d->nrows || strcmp(d->rows[d->nrows - 1].label, it->label))
            d->rows[d->nrows++].label = it->label;
        vals_t *v = &d->rows[d->nrows - 1].v[it->run];
        v->count += it->v.count;
        v->bytes += it->v.bytes;
        v->leak_blocks += it->v.leak_blocks;
        v->leak_bytes += it->v.leak_bytes;
        v->cycles += it->v.cycles;
        v->ops += it->v.ops;
        v->timed += it->v.timed;
        v->def_blocks += it->v.def_blocks;
        v->def_bytes += it->v.def_bytes;
        v->ind_blocks += it->v.ind_blocks;
        v->ind_bytes += it->v.ind_bytes;
    }
    d->all_scanned = 1;
    for (int k = 0; k < d->n; k++) {
        d->all_scanned &= d->scanned[k];
        d->any_scanned |= d->scanned[k];
    }
    for (size_t i = 0; i < d->nrows; i++)
        d->rows[i].change = change(&d->rows[i], key, d->n);
    sort_n = d->n;
    if (d->nrows) qsort(d->rows, d->nrows, sizeof *d->rows, cmp_row);
    return d;
}

void hl_sitediff_free(hl_sitediff_t *d)
{
    if (!d) return;
    for (size_t i = 0; i < d->nitems; i++)
        free(d->items[i].label);
    free(d->items);
    free(d->rows);
    free(d);
}

static double mean(const vals_t *v)
{
    return v->timed ? (double)v->cycles / (double)v->timed : -1;
}

/* One metric of a site: A's value, then each run's with its delta against A. */
static void line(FILE *f, const char *name, const row_t *r, int n, int which)
{
    fprintf(f, "    %-16s", name);
    for (int k = 0; k < n; k++) {
        const vals_t *v = &r->v[k], *a = &r->v[0];
        char buf[64];
        if (which == 6) { /* cycles per operation: relative */
            double m = mean(v), ma = mean(a);
            if (m < 0)
                snprintf(buf, sizeof buf, "-");
            else if (k && ma > 0)
                snprintf(buf, sizeof buf, "%.1f (%+.1f%%)", m, 100.0 * (m - ma) / ma);
            else
                snprintf(buf, sizeof buf, "%.1f", m);
        } else {
            const uint64_t x[] = {v->bytes, v->count, v->leak_bytes, v->leak_blocks, v->cycles,
                                  0,        0,        v->def_bytes,  v->ind_bytes};
            const uint64_t y[] = {a->bytes, a->count, a->leak_bytes, a->leak_blocks, a->cycles,
                                  0,        0,        a->def_bytes,  a->ind_bytes};
            if (k)
                snprintf(buf, sizeof buf, "%" PRIu64 " (%+" PRId64 ")", x[which],
                         (int64_t)(x[which] - y[which]));
            else
                snprintf(buf, sizeof buf, "%" PRIu64, x[which]);
        }
        fprintf(f, " %*s", k ? 26 : 14, buf);
    }
    fprintf(f, "\n");
}

void hl_sitediff_text(FILE *f, const hl_sitediff_t *d, int top)
{
    size_t shown = d->nrows < (size_t)top ? d->nrows : (size_t)top;
    static const char *const names[] = {"bytes",         "allocations",     "leaked bytes",
                                        "leaked blocks", "cycles",          "(operations)",
                                        "cycles/op",     "definitely lost", "indirectly lost"};
    /* Leaked bytes and blocks are those live at the end (as before the scan); the scan's
     * classes follow when every run has them, else the runs without say so. */
    if (d->all_scanned) {
        fprintf(f,
                "\nper site: leaked = live at the end; definitely and indirectly lost (bytes): the "
                "reachability scan at exit of every run\n");
    } else if (!d->any_scanned) {
        fprintf(f, "\nper site: leaked = live at the end (no run has leak classes)\n");
    } else {
        fprintf(f, "\nper site: leaked = live at the end; no leak classes:");
        for (int k = 0; k < d->n; k++)
            if (!d->scanned[k]) fprintf(f, " %c", 'A' + k);
        fprintf(f, " not scanned at exit (recorded with leaks=0 or harden=1, the scan did not "
                   "finish, or a database from before the scan)\n");
    }
    fprintf(f, "sites, by the absolute change of %s against A (%zu of %zu sites; --sort, --top)\n",
            d->key == HL_SD_LEAKS ? "leaked bytes" : hl_sd_key_names[d->key], shown, d->nrows);
    for (size_t i = 0; i < shown; i++) {
        const row_t *r = &d->rows[i];
        fprintf(f, "  %s\n", hl_safe(r->label));
        for (int w = 0; w < 9; w++) {
            if (w == 5 || (w >= 7 && !d->all_scanned)) continue;
            line(f, names[w], r, d->n, w);
        }
    }
}

void hl_sitediff_json(hl_json_t *j, const hl_sitediff_t *d, int top)
{
    hl_json_obj(j);
    hl_json_key(j, "sort");
    hl_json_str(j, hl_sd_key_names[d->key]);
    hl_json_key(j, "total");
    hl_json_u64(j, d->nrows);
    hl_json_key(j, "not_scanned"); /* runs without leak classes */
    hl_json_arr(j);
    for (int k = 0; k < d->n; k++) {
        char lab[2] = {(char)('A' + k), 0};
        if (!d->scanned[k]) hl_json_str(j, lab);
    }
    hl_json_arr_end(j);
    hl_json_key(j, "rows");
    hl_json_arr(j);
    for (size_t i = 0; i < d->nrows && i < (size_t)top; i++) {
        const row_t *r = &d->rows[i];
        hl_json_obj(j);
        hl_json_key(j, "site");
        hl_json_str(j, r->label);
        hl_json_key(j, "runs");
        hl_json_arr(j);
        const vals_t *a = &r->v[0];
        const uint64_t av[] = {a->bytes,       a->count,  a->leak_bytes,
                               a->leak_blocks, a->cycles, a->ops};
        for (int k = 0; k < d->n; k++) {
            const vals_t *v = &r->v[k];
            const char *kn[] = {"bytes",         "count",  "leaked_bytes",
                                "leaked_blocks", "cycles", "operations"};
            const uint64_t kv[] = {v->bytes,       v->count,  v->leak_bytes,
                                   v->leak_blocks, v->cycles, v->ops};
            hl_json_obj(j);
            for (int q = 0; q < 6; q++) {
                hl_json_key(j, kn[q]);
                hl_json_u64(j, kv[q]);
            }
            if (k) {
                hl_json_key(j, "delta");
                hl_json_obj(j);
                for (int q = 0; q < 6; q++) {
                    hl_json_key(j, kn[q]);
                    hl_json_i64(j, (int64_t)(kv[q] - av[q]));
                }
                hl_json_obj_end(j);
            }
            hl_json_key(j, "cycles_per_op");
            hl_json_frac(j, mean(v));
            /* The scan's classes of the site's blocks, null when the run was not scanned;
             * their delta against A when both were. */
            const char *cn[] = {"definitely_lost_bytes", "definitely_lost_blocks",
                                "indirectly_lost_bytes", "indirectly_lost_blocks"};
            const uint64_t cv[] = {v->def_bytes, v->def_blocks, v->ind_bytes, v->ind_blocks};
            const uint64_t ca[] = {a->def_bytes, a->def_blocks, a->ind_bytes, a->ind_blocks};
            for (int q = 0; q < 4; q++) {
                hl_json_key(j, cn[q]);
                if (d->scanned[k])
                    hl_json_u64(j, cv[q]);
                else
                    hl_json_null(j);
            }
            if (k) {
                hl_json_key(j, "classes_delta");
                if (d->scanned[k] && d->scanned[0]) {
                    hl_json_obj(j);
                    for (int q = 0; q < 4; q++) {
                        hl_json_key(j, cn[q]);
                        hl_json_i64(j, (int64_t)(cv[q] - ca[q]));
                    }
                    hl_json_obj_end(j);
                } else {
                    hl_json_null(j);
                }
            }
            hl_json_obj_end(j);
        }
        hl_json_arr_end(j);
        hl_json_obj_end(j);
    }
    hl_json_arr_end(j);
    hl_json_obj_end(j);
}
