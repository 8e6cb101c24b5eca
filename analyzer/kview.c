/* analyzer/kview.c — see kview.h; definitions in docs/metrics.md ("Kernel view").
 *
 * Three address maps per process (omap.h):
 *   blocks    live blocks [ptr, ptr + usable) with their path, class and tier;
 *   regions   the allocator's current os_region mappings, aux = bytes faulted in while
 *             mapped (faults since the kernel mapped the range count, so a header written
 *             before the allocator's os_map event is not lost);
 *   resident  pages faulted in and not released since (munmap, mremap, a new mmap over them,
 *             MADV_DONTNEED/MADV_REMOVE, brk shrinking), as merged ranges.
 * A fault run is attributed to the live blocks it overlaps at its time (its first fault).
 * Its pages in an allocator region but in no live block stay pending on the faulting thread
 * (its last MAX_PEND such runs): a block the thread allocates next over them takes them. A pending
 * run ends at the thread's first allocator event after a newer run of the thread. That covers the
 * allocator's own first write to a new block before the allocation event (a large block's header, a
 * new slab's first slot, even with the first stack capture faulting in between) and a run that goes
 * on into the next blocks the thread allocates (a run is stamped with its first fault only).
 */
#include "kview.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hl_schema.h"
#include "hmap.h"
#include "omap.h"
#include "rundb.h"

#define PAGE_SHIFT 12
#define PAGE       (1ull << PAGE_SHIFT)
#define MAX_GAPS   16
#define MAX_PEND   16

enum { KK_MMAP, KK_MUNMAP, KK_MREMAP, KK_BRK, KK_MADVISE, KK_FAULT, KK_RSS, KK_OTHER };

typedef struct kev_s {
    int64_t ts, pid, tid;
    int kind;
    uint64_t addr;
    int64_t len, ret, arg;
} kev_t;

/* A fault run of a thread with pages in no live block yet, as page ranges [lo, hi). */
typedef struct pend_s {
    int in_window, in_blocks, superseded;
    uint64_t path_mask, cls_mask, tier_mask;
    int ngaps;
    uint64_t lo[MAX_GAPS], hi[MAX_GAPS];
} pend_t;

/* The pending runs of one thread, oldest first. */
typedef struct thr_s {
    int64_t pid, tid;
    int n;
    pend_t run[MAX_PEND];
} thr_t;

typedef struct group_s {
    uint32_t stamp;
    uint64_t last; /* page after the last one counted in the current run */
} group_t;

struct hl_kview_s {
    sqlite3 *db;
    sqlite3_stmt *st;
    int has;
    kev_t cur;
    hl_kernel_report_t *k;
    int64_t start, t0, t1;
    int lo_open, hi_open;
    int next_sample;
    hl_omap_t blocks, regions, resident;
    hl_hmap_t pid_ix; /* pid -> index in prss */
    struct {
        uint64_t rss, anon;
    } * prss; /* last sample per process */
    size_t npid, pcap;
    uint64_t rss, anon;
    int have_rss;
    uint64_t heap_resident; /* resident bytes inside current regions */
    uint64_t res_blocks;    /* resident bytes inside live blocks */
    hl_hmap_t thr_ix;       /* pid << 32 ^ tid -> index in thr */
    thr_t *thr;
    size_t nthr, thr_cap;
    uint32_t stamp;
    group_t gpath[HL_MAX_PATHS], gcls[HL_NCLASSES], gtier[4];
};

static int kind_of(const char *s)
{
    static const char *const names[] = {"mmap",    "munmap",     "mremap", "brk",
                                        "madvise", "page_fault", "rss"};
    for (int i = 0; s && i < KK_OTHER; i++)
        if (!strcmp(s, names[i])) return i;
    return KK_OTHER;
}

static int in_window(const hl_kview_t *k, int64_t ts)
{
    return (k->lo_open || ts >= k->t0) && (k->hi_open || ts <= k->t1);
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
    uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    return hi > lo ? hi - lo : 0;
}

/* ---- resident ranges ---------------------------------------------------------------- */

/* [a, b) became resident (add > 0) or was released (add < 0) in pid: account the regions. */
static void resident_delta(hl_kview_t *k, int64_t pid, uint64_t a, uint64_t b, int add)
{
    for (hl_onode_t *g = hl_omap_first_overlap(&k->regions, pid, a, b); g && g->start < b;
         g = hl_omap_next(&k->regions, pid, g->start)) {
        uint64_t o = overlap(a, b, g->start, g->end);
        if (add > 0) {
            g->aux += o;
            k->heap_resident += o;
        } else {
            k->heap_resident -= o < k->heap_resident ? o : k->heap_resident;
        }
    }
    for (hl_onode_t *g = hl_omap_first_overlap(&k->blocks, pid, a, b); g && g->start < b;
         g = hl_omap_next(&k->blocks, pid, g->start)) {
        uint64_t o = overlap(a, b, g->start, g->end);
        if (add > 0)
            k->res_blocks += o;
        else
            k->res_blocks -= o < k->res_blocks ? o : k->res_blocks;
    }
}

static void resident_add(hl_kview_t *k, int64_t pid, uint64_t a, uint64_t b)
{
    /* Merge with every range touching [a, b); each gap filled is new. */
    uint64_t lo = a, hi = b, at = a;
    hl_onode_t *e = hl_omap_floor(&k->resident, pid, a);
    if (!e || e->end < a) e = hl_omap_next(&k->resident, pid, a);
    while (e && e->start <= b) {
        hl_onode_t cp = *e;
        if (cp.start > at) resident_delta(k, pid, at, cp.start, 1);
        if (cp.end > at) at = cp.end;
        if (cp.start < lo) lo = cp.start;
        if (cp.end > hi) hi = cp.end;
        hl_omap_del(&k->resident, pid, cp.start, NULL);
        e = hl_omap_next(&k->resident, pid, cp.start);
    }
    if (at < b) resident_delta(k, pid, at, b, 1);
    hl_omap_put(&k->resident, pid, lo, hi);
}

static void resident_remove(hl_kview_t *k, int64_t pid, uint64_t a, uint64_t b)
{
    hl_onode_t *e;
    while ((e = hl_omap_first_overlap(&k->resident, pid, a, b)) != NULL) {
        hl_onode_t cp = *e;
        hl_omap_del(&k->resident, pid, cp.start, NULL);
        resident_delta(k, pid, cp.start > a ? cp.start : a, cp.end < b ? cp.end : b, -1);
        if (cp.start < a) hl_omap_put(&k->resident, pid, cp.start, a);
        if (cp.end > b) hl_omap_put(&k->resident, pid, b, cp.end);
    }
}

static uint64_t resident_in(const hl_kview_t *k, int64_t pid, uint64_t a, uint64_t b)
{
    /* Most blocks lie inside one resident range, or start in none: one descent then. */
    const hl_onode_t *f = hl_omap_floor(&k->resident, pid, a);
    if (f && f->end >= b) return b - a;
    const hl_onode_t *nx = hl_omap_next(&k->resident, pid, a);
    if (!nx || nx->start >= b) return f && f->end > a ? f->end - a : 0;
    uint64_t n = 0;
    for (hl_onode_t *e = hl_omap_first_overlap(&k->resident, pid, a, b); e && e->start < b;
         e = hl_omap_next(&k->resident, pid, e->start))
        n += overlap(a, b, e->start, e->end);
    return n;
}

/* mremap: the resident pages of [old, old + olen) move to new. */
static void resident_move(hl_kview_t *k, int64_t pid, uint64_t old, uint64_t olen, uint64_t nw,
                          uint64_t nlen)
{
    uint64_t keep = olen < nlen ? olen : nlen;
    uint64_t lo[64], hi[64];
    int n = 0;
    for (hl_onode_t *e = hl_omap_first_overlap(&k->resident, pid, old, old + keep);
         e && e->start < old + keep && n < 64; e = hl_omap_next(&k->resident, pid, e->start)) {
        lo[n] = e->start > old ? e->start : old;
        hi[n] = e->end < old + keep ? e->end : old + keep;
        n++;
    }
    resident_remove(k, pid, old, old + olen);
    resident_remove(k, pid, nw, nw + nlen);
    for (int i = 0; i < n; i++)
        resident_add(k, pid, lo[i] - old + nw, hi[i] - old + nw);
}

/* ---- fault attribution -------------------------------------------------------------- */

static void count_group(hl_kview_t *k, group_t *g, hl_kfault_t *out, uint64_t *mask, int bit,
                        uint64_t p0, uint64_t p1)
{
    if (g->stamp != k->stamp) {
        g->stamp = k->stamp;
        g->last = 0;
    }
    uint64_t from = p0 > g->last ? p0 : g->last;
    if (p1 > from) {
        out->pages += p1 - from;
        g->last = p1;
    }
    if (!(*mask >> bit & 1)) {
        *mask |= 1ull << bit;
        out->runs++;
    }
}

/* Pages [p0, p1) of the current run lie in the block node b. */
static void attribute(hl_kview_t *k, pend_t *p, const hl_onode_t *b, uint64_t p0, uint64_t p1)
{
    if (!p->in_window) return;
    hl_kernel_report_t *r = k->k;
    int path = b->a >= 0 && b->a < HL_MAX_PATHS ? b->a : HL_MAX_PATHS - 1;
    count_group(k, &k->gpath[path], &r->path[path], &p->path_mask, path, p0, p1);
    if (b->b >= 0 && b->b < HL_NCLASSES)
        count_group(k, &k->gcls[b->b], &r->cls[b->b], &p->cls_mask, b->b, p0, p1);
    int tier = b->aux < 4 ? (int)b->aux : 0;
    count_group(k, &k->gtier[tier], &r->tier[tier], &p->tier_mask, tier, p0, p1);
}

static thr_t *thr_of(hl_kview_t *k, int64_t pid, int64_t tid, int create)
{
    uint64_t key = ((uint64_t)pid << 32) ^ (uint64_t)(uint32_t)tid;
    if (!create) {
        uint64_t *ix = hl_hmap_get(&k->thr_ix, key);
        return ix ? &k->thr[*ix] : NULL;
    }
    int fresh;
    uint64_t *ix = hl_hmap_put(&k->thr_ix, key, k->nthr, &fresh);
    if (fresh) {
        thr_t *t = HL_VEC_PUSH(k->thr, k->nthr, k->thr_cap);
        memset(t, 0, sizeof *t);
        t->pid = pid;
        t->tid = tid;
    }
    return &k->thr[*ix];
}

/* A pending run is over: its pages still in no block are heap-free or outside. */
static void pend_close(hl_kview_t *k, int64_t pid, pend_t *p)
{
    if (!p->in_window) return;
    for (int i = 0; i < p->ngaps; i++) {
        if (p->hi[i] <= p->lo[i]) continue;
        uint64_t a = p->lo[i] << PAGE_SHIFT, b = p->hi[i] << PAGE_SHIFT, in = 0;
        for (hl_onode_t *g = hl_omap_first_overlap(&k->regions, pid, a, b); g && g->start < b;
             g = hl_omap_next(&k->regions, pid, g->start))
            in += overlap(a, b, g->start, g->end);
        uint64_t pages = p->hi[i] - p->lo[i], heap = (in + PAGE - 1) >> PAGE_SHIFT;
        if (heap > pages) heap = pages;
        k->k->pages_heap_free += heap;
        k->k->pages_outside += pages - heap;
    }
    p->ngaps = 0;
}

/* Close the thread's runs that a newer run superseded (all of them when all is set). */
static void thr_close(hl_kview_t *k, thr_t *t, int all)
{
    int j = 0;
    for (int i = 0; i < t->n; i++) {
        if (all || t->run[i].superseded)
            pend_close(k, t->pid, &t->run[i]);
        else
            t->run[j++] = t->run[i];
    }
    t->n = j;
}

static void add_gap(pend_t *p, uint64_t lo, uint64_t hi)
{
    if (hi <= lo) return;
    if (p->ngaps == MAX_GAPS) { /* merge into the last: its pages stay unattributed */
        p->hi[MAX_GAPS - 1] = hi;
        return;
    }
    p->lo[p->ngaps] = lo;
    p->hi[p->ngaps++] = hi;
}

static void fault_run(hl_kview_t *k, const kev_t *e)
{
    uint64_t a = e->addr & ~(PAGE - 1), b = (e->addr + (uint64_t)e->len + PAGE - 1) & ~(PAGE - 1);
    if (b <= a) return;
    resident_add(k, e->pid, a, b);
    thr_t *t = thr_of(k, e->pid, e->tid, 1);
    if (t->n == MAX_PEND) { /* the oldest run is over */
        pend_close(k, t->pid, &t->run[0]);
        memmove(&t->run[0], &t->run[1], (MAX_PEND - 1) * sizeof t->run[0]);
        t->n--;
    }
    for (int i = 0; i < t->n; i++)
        t->run[i].superseded = 1;
    pend_t *p = &t->run[t->n++];
    memset(p, 0, sizeof *p);
    p->in_window = in_window(k, e->ts);
    uint64_t p0 = a >> PAGE_SHIFT, p1 = b >> PAGE_SHIFT, cov = p0, inblk = 0;
    if (p->in_window) {
        k->k->fault_runs++;
        k->k->fault_pages += p1 - p0;
    }
    k->stamp++;
    for (hl_onode_t *blk = hl_omap_first_overlap(&k->blocks, e->pid, a, b); blk && blk->start < b;
         blk = hl_omap_next(&k->blocks, e->pid, blk->start)) {
        uint64_t s = blk->start > a ? blk->start : a, t = blk->end < b ? blk->end : b;
        uint64_t bp0 = s >> PAGE_SHIFT, bp1 = ((t - 1) >> PAGE_SHIFT) + 1;
        attribute(k, p, blk, bp0, bp1);
        if (bp0 > cov) add_gap(p, cov, bp0);
        if (bp1 > cov) {
            inblk += bp1 - (bp0 > cov ? bp0 : cov);
            cov = bp1;
        }
    }
    add_gap(p, cov, p1);
    /* Pages outside every allocator region cannot become a block's (the allocator reports a
     * mapping before it writes to it): settle them now, so the pending runs are the thread's
     * faults in free heap memory only. A process without os_region rows (attach mode) keeps
     * them all pending. */
    int j = 0, has_regions = hl_omap_next(&k->regions, e->pid, 0) != NULL ||
                             hl_omap_floor(&k->regions, e->pid, 0) != NULL;
    for (int i = 0; i < p->ngaps; i++) {
        uint64_t ga = p->lo[i] << PAGE_SHIFT, gb = p->hi[i] << PAGE_SHIFT;
        if (!has_regions || hl_omap_first_overlap(&k->regions, e->pid, ga, gb)) {
            p->lo[j] = p->lo[i];
            p->hi[j++] = p->hi[i];
        } else if (p->in_window) {
            k->k->pages_outside += p->hi[i] - p->lo[i];
        }
    }
    p->ngaps = j;
    if (!p->ngaps) t->n--; /* nothing left to attribute later */
    if (p->in_window && inblk) {
        k->k->pages_in_blocks += inblk;
        k->k->runs_in_blocks++;
        p->in_blocks = 1;
    }
}

/* A block the thread allocated while its run is pending takes the run's pages it covers. */
static void pend_offer(hl_kview_t *k, pend_t *p, const hl_onode_t *blk)
{
    uint64_t bp0 = blk->start >> PAGE_SHIFT, bp1 = ((blk->end - 1) >> PAGE_SHIFT) + 1;
    uint64_t got = 0;
    k->stamp++;
    for (int i = 0; i < p->ngaps; i++) {
        uint64_t lo = p->lo[i] > bp0 ? p->lo[i] : bp0, hi = p->hi[i] < bp1 ? p->hi[i] : bp1;
        if (hi <= lo) continue;
        attribute(k, p, blk, lo, hi);
        got += hi - lo;
        /* Cut [lo, hi) out of gap i. */
        uint64_t glo = p->lo[i], ghi = p->hi[i];
        if (glo < lo && ghi > hi && p->ngaps < MAX_GAPS) {
            p->hi[i] = lo;
            p->lo[p->ngaps] = hi;
            p->hi[p->ngaps++] = ghi;
        } else if (glo < lo) {
            p->hi[i] = lo;
        } else if (ghi > hi) {
            p->lo[i] = hi;
        } else {
            p->lo[i] = p->hi[i] = 0;
        }
    }
    if (got && p->in_window) {
        k->k->pages_in_blocks += got;
        if (!p->in_blocks) k->k->runs_in_blocks++;
        p->in_blocks = 1;
    }
}

/* ---- regions and RSS ----------------------------------------------------------------- */

static void region_close(hl_kview_t *k, const hl_onode_t *g)
{
    uint64_t len = g->end - g->start, touched = g->aux < len ? g->aux : len;
    int purpose = g->a >= 0 && g->a < HL_KREGIONS ? g->a : 0;
    k->k->region[purpose].touched += touched;
    k->k->region[purpose].never_touched += len - touched;
    uint64_t res = resident_in(k, g->pid, g->start, g->end);
    k->heap_resident -= res < k->heap_resident ? res : k->heap_resident;
}

static void rss_sample(hl_kview_t *k, const kev_t *e)
{
    int fresh;
    uint64_t *ix = hl_hmap_put(&k->pid_ix, (uint64_t)e->pid, k->npid, &fresh);
    if (fresh) memset(HL_VEC_PUSH(k->prss, k->npid, k->pcap), 0, sizeof *k->prss);
    uint64_t rss = e->len > 0 ? (uint64_t)e->len : 0, anon = e->ret > 0 ? (uint64_t)e->ret : 0;
    k->rss = k->rss - k->prss[*ix].rss + rss;
    k->anon = k->anon - k->prss[*ix].anon + anon;
    k->prss[*ix].rss = rss;
    k->prss[*ix].anon = anon;
    k->have_rss = 1;
    if (in_window(k, e->ts)) {
        k->k->rss_samples++;
        if (k->rss > k->k->rss_peak) {
            k->k->rss_peak = k->rss;
            k->k->anon_peak = k->anon;
            k->k->rss_peak_ts = e->ts - k->start;
        }
    }
}

/* Timeline edges before ts take the RSS as it is now (same edges as metrics.c). */
static void take_samples(hl_kview_t *k, int64_t ts, int final)
{
    int64_t span = k->t1 - k->t0;
    while (k->next_sample < HL_TL_SAMPLES) {
        int64_t edge = k->t0 + hl_timeline_edge(span, k->next_sample + 1, HL_TL_SAMPLES);
        if (!final && ts <= edge) return;
        int i = k->next_sample++;
        k->k->rss[i] = k->rss;
        k->k->anon[i] = k->anon;
        k->k->has_rss[i] = k->have_rss;
    }
}

static void apply(hl_kview_t *k, const kev_t *e)
{
    if (in_window(k, e->ts)) k->k->events++;
    if (e->ts >= k->t0) take_samples(k, e->ts, 0);
    int ok = e->ret >= 0 || e->ret < -4095;
    uint64_t len = e->len > 0 ? ((uint64_t)e->len + PAGE - 1) & ~(PAGE - 1) : 0;
    switch (e->kind) {
    case KK_FAULT:
        fault_run(k, e);
        break;
    case KK_RSS:
        rss_sample(k, e);
        break;
    case KK_MMAP: /* a new mapping: whatever was resident there is gone */
        if (ok && len) resident_remove(k, e->pid, (uint64_t)e->ret, (uint64_t)e->ret + len);
        break;
    case KK_MUNMAP:
        if (ok && len) resident_remove(k, e->pid, e->addr, e->addr + len);
        break;
    case KK_MREMAP:
        if (ok)
            resident_move(k, e->pid, e->addr, (uint64_t)e->arg << PAGE_SHIFT, (uint64_t)e->ret,
                          len);
        break;
    case KK_MADVISE: /* MADV_DONTNEED, MADV_REMOVE drop the pages (MADV_FREE keeps them
                        resident until reclaim) */
        if (ok && len && (e->arg == 4 || e->arg == 9))
            resident_remove(k, e->pid, e->addr, e->addr + len);
        break;
    case KK_BRK:
        if (ok && e->len < 0)
            resident_remove(k, e->pid, (uint64_t)e->ret, (uint64_t)e->ret + (uint64_t)-e->len);
        break;
    default:
        break;
    }
}

static int step(hl_kview_t *k, char *err, size_t errlen)
{
    int rc = sqlite3_step(k->st);
    if (rc == SQLITE_ROW) {
        sqlite3_stmt *st = k->st;
        kev_t *e = &k->cur;
        e->ts = hl_ts(sqlite3_column_int64(st, 0));
        e->pid = sqlite3_column_int64(st, 1);
        e->tid = hl_col_i64(st, 2, -1);
        e->kind = kind_of((const char *)sqlite3_column_text(st, 3));
        e->addr = (uint64_t)sqlite3_column_int64(st, 4);
        e->len = sqlite3_column_int64(st, 5);
        e->ret = sqlite3_column_int64(st, 6);
        e->arg = sqlite3_column_int64(st, 7);
        k->has = 1;
        return 0;
    }
    k->has = 0;
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "reading kernel events: %s", sqlite3_errmsg(k->db));
        return -1;
    }
    return 0;
}

hl_kview_t *hl_kview_open(sqlite3 *db, const hl_report_t *r, char *err, size_t errlen)
{
    err[0] = 0;
    char where[64] = "", q[512];
    if (r->pid > 0) snprintf(where, sizeof where, "WHERE e.pid = %lld", (long long)r->pid);
    snprintf(q, sizeof q, "SELECT 1 FROM kernel_event e %s LIMIT 1", where);
    if (hl_an_int(db, q, 0) != 1) return NULL;
    int has_arg = hl_an_int(db,
                            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                            "name = 'kernel_event_arg'",
                            0) > 0;
    snprintf(q, sizeof q,
             "SELECT e.ts, e.pid, e.tid, e.kind, e.addr, e.len, e.ret, %s FROM kernel_event e %s "
             "%s ORDER BY e.ts, e.rowid",
             has_arg ? "coalesce(a.arg, 0)" : "0",
             has_arg ? "LEFT JOIN kernel_event_arg a ON a.event = e.rowid" : "", where);
    hl_kview_t *k = calloc(1, sizeof *k);
    if (!k) abort();
    k->k = calloc(1, sizeof *k->k);
    if (!k->k) abort();
    k->db = db;
    if (sqlite3_prepare_v2(db, q, -1, &k->st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "preparing the kernel-event query: %s", sqlite3_errmsg(db));
        hl_kview_close(k);
        return NULL;
    }
    k->k->page = PAGE;
    k->k->dropped = (uint64_t)hl_an_int(db,
                                        "SELECT CAST(value AS INTEGER) FROM meta WHERE key = "
                                        "'kernel_dropped'",
                                        0);
    k->start = r->run.start_ts;
    k->lo_open = r->from_ns <= 0;
    k->hi_open = r->to_ns < 0;
    k->t0 = k->start + (r->from_ns > 0 ? r->from_ns : 0);
    k->t1 = r->to_ns >= 0 ? k->start + r->to_ns : r->run.end_ts;
    if (k->t1 < k->t0) k->t1 = k->t0;
    if (step(k, err, errlen) < 0) {
        hl_kview_close(k);
        return NULL;
    }
    return k;
}

int hl_kview_until(hl_kview_t *k, int64_t ts, char *err, size_t errlen)
{
    while (k->has && k->cur.ts < ts) {
        if (!k->hi_open && k->cur.ts > k->t1) {
            k->has = 0;
            break;
        }
        apply(k, &k->cur);
        if (step(k, err, errlen) < 0) return -1;
    }
    return 0;
}

void hl_kview_event(hl_kview_t *k, const hl_event_t *ev)
{
    switch (ev->kind) {
    case HL_EV_ALLOC: {
        if ((ev->flags & HL_BF_FAILED) || !ev->usable) break;
        hl_onode_t *b = hl_omap_put(&k->blocks, ev->pid, ev->ptr, ev->ptr + ev->usable);
        k->res_blocks += resident_in(k, ev->pid, ev->ptr, ev->ptr + ev->usable);
        b->a = ev->path;
        b->b = ev->tier == HL_TIER_TINY ? ev->cls : -1;
        b->aux = ev->tier >= 0 && ev->tier < 4 ? (uint64_t)ev->tier : 0;
        thr_t *t = ev->tid >= 0 ? thr_of(k, ev->pid, ev->tid, 0) : NULL;
        if (t && t->n) {
            hl_onode_t cp = *b;
            for (int i = 0; i < t->n; i++)
                pend_offer(k, &t->run[i], &cp);
            thr_close(k, t, 0);
        }
        break;
    }
    case HL_EV_FREE: {
        if (!(ev->flags & HL_BF_FAILED) && ev->usable &&
            hl_omap_del(&k->blocks, ev->pid, ev->ptr, NULL)) {
            uint64_t res = resident_in(k, ev->pid, ev->ptr, ev->ptr + ev->usable);
            k->res_blocks -= res < k->res_blocks ? res : k->res_blocks;
        }
        thr_t *t = ev->tid >= 0 ? thr_of(k, ev->pid, ev->tid, 0) : NULL;
        if (t && t->n) thr_close(k, t, 0);
        break;
    }
    case HL_EV_MAP: {
        if (!ev->size) break;
        hl_onode_t *g = hl_omap_put(&k->regions, ev->pid, ev->ptr, ev->ptr + ev->size);
        g->a = (int)ev->purpose;
        uint64_t res = resident_in(k, ev->pid, ev->ptr, ev->ptr + ev->size);
        g = hl_omap_floor(&k->regions, ev->pid, ev->ptr);
        g->aux = res;
        k->heap_resident += res;
        int purpose = (int)ev->purpose < HL_KREGIONS ? (int)ev->purpose : 0;
        k->k->region[purpose].mappings++;
        k->k->region[purpose].bytes += ev->size;
        break;
    }
    case HL_EV_UNMAP: {
        hl_onode_t g;
        if (hl_omap_del(&k->regions, ev->pid, ev->ptr, &g)) region_close(k, &g);
        break;
    }
    default:
        break;
    }
}

void hl_kview_peak(hl_kview_t *k)
{
    k->k->peak_has_rss = k->have_rss;
    k->k->peak_rss = k->rss;
    k->k->peak_anon = k->anon;
    k->k->peak_heap_resident = k->heap_resident;
    k->k->peak_res_blocks = k->res_blocks;
}

void hl_kview_finish(hl_kview_t *k, hl_report_t *r)
{
    hl_kernel_report_t *kr = k->k;
    for (size_t i = 0; i < k->nthr; i++)
        thr_close(k, &k->thr[i], 1);
    /* Regions still mapped at the end. */
    while (k->regions.len) {
        const hl_onode_t *n = &k->regions.node[k->regions.root];
        hl_onode_t g = *n;
        region_close(k, &g);
        hl_omap_del(&k->regions, g.pid, g.start, NULL);
    }
    take_samples(k, 0, 1);
    for (int p = 0; p < HL_KREGIONS; p++) {
        kr->mapped_bytes += kr->region[p].bytes;
        kr->never_touched_bytes += kr->region[p].never_touched;
    }
    kr->rss_end = k->rss;
    kr->anon_end = k->anon;
    kr->peak_U = r->peak_U;
    kr->peak_H = r->peak_H;
    uint64_t res = kr->peak_heap_resident, inb = kr->peak_res_blocks;
    kr->frag_rss_cost = res > inb ? res - inb : 0;
    kr->live_untouched = kr->peak_U > inb ? kr->peak_U - inb : 0;
    kr->held_untouched = kr->peak_H > res ? kr->peak_H - res : 0;
    kr->other_rss = kr->peak_has_rss ? (int64_t)kr->peak_rss - (int64_t)res : 0;
    r->kernel = kr;
    k->k = NULL;
    hl_kview_close(k);
}

void hl_kview_close(hl_kview_t *k)
{
    if (!k) return;
    sqlite3_finalize(k->st);
    hl_omap_free(&k->blocks);
    hl_omap_free(&k->regions);
    hl_omap_free(&k->resident);
    hl_hmap_free(&k->pid_ix);
    hl_hmap_free(&k->thr_ix);
    free(k->prss);
    free(k->thr);
    free(k->k);
    free(k);
}
