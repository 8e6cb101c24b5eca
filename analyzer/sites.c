/* analyzer/sites.c — see sites.h; definitions in docs/metrics.md, "Cycles per call site". */
#include "sites.h"

#include <stdlib.h>
#include <string.h>

#include "hcache.h"
#include "hmap.h"
#include "pctl.h"

typedef struct entry_s {
    int op, path;
    int64_t stack;
    uint64_t count;
    hl_pctl_t pc;
} entry_t;

struct hl_sitecyc_s {
    hl_hmap_t ix;      /* key(stack, op, path) -> index in e */
    hl_hcache_t cache; /* read cache of ix, by key(stack, op, path) */
    entry_t *e;
    size_t n, cap;
    hl_slow_op_t slow[HL_SLOWEST_MAX]; /* a min-heap on (cycles, -seq) */
    size_t nslow;
};

/* op (2 bits) and path (6 bits, HL_MAX_PATHS = 64) below the stack id. */
static uint64_t key_of(int64_t stack, int op, int path)
{
    return ((uint64_t)stack << 8) ^ ((uint64_t)op << 6) ^ (uint64_t)path;
}

hl_sitecyc_t *hl_sitecyc_new(void)
{
    hl_sitecyc_t *sc = calloc(1, sizeof *sc);
    if (!sc) abort();
    return sc;
}

/* a is faster than b: fewer cycles, or as many and later. */
static int faster(const hl_slow_op_t *a, const hl_slow_op_t *b)
{
    return a->cycles != b->cycles ? a->cycles < b->cycles : a->seq > b->seq;
}

static void sift_down(hl_slow_op_t *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < n && faster(&h[l], &h[m])) m = l;
        if (r < n && faster(&h[r], &h[m])) m = r;
        if (m == i) return;
        hl_slow_op_t t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void slow_add(hl_sitecyc_t *sc, const hl_slow_op_t *o)
{
    hl_slow_op_t *h = sc->slow;
    if (sc->nslow < HL_SLOWEST_MAX) {
        size_t i = sc->nslow++;
        h[i] = *o;
        while (i && faster(&h[i], &h[(i - 1) / 2])) {
            hl_slow_op_t t = h[i];
            h[i] = h[(i - 1) / 2];
            h[(i - 1) / 2] = t;
            i = (i - 1) / 2;
        }
        return;
    }
    if (!faster(&h[0], o)) return;
    h[0] = *o;
    sift_down(h, sc->nslow, 0);
}

void hl_sitecyc_add(hl_sitecyc_t *sc, int op, int path, int64_t cycles, const hl_event_t *ev,
                    int64_t start_ts)
{
    int64_t stack = ev->stack < 0 ? -1 : ev->stack;
    uint64_t k0 = key_of(stack, op, path), at;
    entry_t *e = NULL;
    if (hl_hcache_get(&sc->cache, k0, &at)) {
        e = &sc->e[at];
        if (e->stack != stack || e->op != op || e->path != path) e = NULL;
    }
    if (!e) {
        /* A stack id past 2^56 (a damaged database) can share a key with another: probe on. */
        int fresh;
        uint64_t *ix;
        for (uint64_t k = k0;; k += 0x9e3779b97f4a7c15ull) {
            ix = hl_hmap_put(&sc->ix, k, sc->n, &fresh);
            if (fresh) break;
            const entry_t *o = &sc->e[*ix];
            if (o->stack == stack && o->op == op && o->path == path) break;
        }
        if (fresh) {
            entry_t *ne = HL_VEC_PUSH(sc->e, sc->n, sc->cap);
            memset(ne, 0, sizeof *ne);
            ne->op = op;
            ne->path = path;
            ne->stack = stack;
        }
        hl_hcache_fill(&sc->cache, k0, *ix);
        e = &sc->e[*ix];
    }
    e->count++;
    if (cycles < 0) return;
    hl_pctl_add(&e->pc, (uint64_t)cycles);
    if (sc->nslow == HL_SLOWEST_MAX) { /* slow_add's test, before the record is built */
        const hl_slow_op_t *h0 = &sc->slow[0];
        if (h0->cycles > cycles || (h0->cycles == cycles && h0->seq <= ev->seq)) return;
    }
    hl_slow_op_t o = {op,      path,    cycles,   ev->seq, ev->ts - start_ts,
                      ev->pid, ev->tid, ev->size, stack};
    slow_add(sc, &o);
}

static const hl_report_t *sort_r;

/* Position of (op, path) in r->paths (op, then count descending). */
static size_t path_rank(const hl_report_t *r, int op, int path)
{
    for (size_t i = 0; i < r->npaths; i++)
        if (r->paths[i].op == op && r->paths[i].path == path) return i;
    return r->npaths;
}

static int cmp_row(const void *a, const void *b)
{
    const hl_site_cycles_t *x = a, *y = b;
    size_t rx = path_rank(sort_r, x->op, x->path), ry = path_rank(sort_r, y->op, y->path);
    if (x->op != y->op) return x->op - y->op;
    if (rx != ry) return rx < ry ? -1 : 1;
    if (x->cycles != y->cycles) return x->cycles < y->cycles ? 1 : -1;
    if (x->count != y->count) return x->count < y->count ? 1 : -1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int cmp_slow(const void *a, const void *b)
{
    const hl_slow_op_t *x = a, *y = b;
    if (x->cycles != y->cycles) return x->cycles < y->cycles ? 1 : -1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void hl_sitecyc_finish(hl_sitecyc_t *sc, hl_report_t *r)
{
    /* Cycles of each (op, path): the sum over its sites. */
    long double tot[4][HL_MAX_PATHS] = {{0}};
    for (size_t i = 0; i < sc->n; i++)
        tot[sc->e[i].op & 3][sc->e[i].path % HL_MAX_PATHS] += hl_pctl_sum(&sc->e[i].pc);
    r->site_cycles = calloc(sc->n + 1, sizeof *r->site_cycles);
    if (!r->site_cycles) abort();
    for (size_t i = 0; i < sc->n; i++) {
        entry_t *e = &sc->e[i];
        hl_site_cycles_t *s = &r->site_cycles[i];
        long double t = tot[e->op & 3][e->path % HL_MAX_PATHS];
        s->op = e->op;
        s->path = e->path;
        s->stack = e->stack;
        s->count = e->count;
        s->timed = e->pc.count;
        long double sum = hl_pctl_sum(&e->pc);
        s->cycles = sum < 1.8e19L ? (uint64_t)sum : UINT64_MAX;
        s->share = t > 0 ? (double)(sum / t) : -1;
        s->p50 = hl_pctl_get(&e->pc, 0.50);
        s->p99 = hl_pctl_get(&e->pc, 0.99);
        s->mean = hl_pctl_mean(&e->pc);
        hl_pctl_free(&e->pc);
    }
    r->nsite_cycles = sc->n;
    sort_r = r;
    if (sc->n) qsort(r->site_cycles, sc->n, sizeof *r->site_cycles, cmp_row);
    r->slowest = calloc(sc->nslow + 1, sizeof *r->slowest);
    if (!r->slowest) abort();
    memcpy(r->slowest, sc->slow, sc->nslow * sizeof *sc->slow);
    r->nslowest = sc->nslow;
    qsort(r->slowest, r->nslowest, sizeof *r->slowest, cmp_slow);
    r->has_site_cycles = 1;
    sc->n = 0;
    hl_sitecyc_free(sc);
}

void hl_sitecyc_free(hl_sitecyc_t *sc)
{
    if (!sc) return;
    for (size_t i = 0; i < sc->n; i++)
        hl_pctl_free(&sc->e[i].pc);
    free(sc->e);
    hl_hmap_free(&sc->ix);
    free(sc);
}

uint64_t hl_site_cycles_total(const hl_report_t *r, int64_t stack, uint64_t *ops)
{
    uint64_t c = 0, n = 0;
    for (size_t i = 0; i < r->nsite_cycles; i++) {
        if (r->site_cycles[i].stack != stack) continue;
        c += r->site_cycles[i].cycles;
        n += r->site_cycles[i].count;
    }
    if (ops) *ops = n;
    return c;
}
