/* tests/analyzer/test_analyzer.c — Criterion tests of the analyzer's metric functions and
 * of hl_analyze() on the hand-made databases (tests/analyzer/ SQL files; expected values are
 * worked out in tests/analyzer/README.md). The databases are built by the Makefile into
 * $HL_TEST_DB_DIR. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze.h"
#include "frag.h"
#include "hl_schema.h"
#include "hmap.h"
#include "midstate.h"
#include "omap.h"
#include "stream.h"
#include "pctl.h"
#include "leakclass.h"
#include "radixq.h"
#include "rundb.h"
#include "suppress.h"

static char *db_path(const char *name)
{
    static char buf[512];
    const char *dir = getenv("HL_TEST_DB_DIR");
    snprintf(buf, sizeof buf, "%s/%s.db", dir ? dir : "build/tests/analyzer", name);
    return buf;
}

#define NEAR(a, b)                                                                                 \
    cr_assert(fabs((double)(a) - (double)(b)) < 1e-9, "%s = %.12g, want %.12g", #a, (double)(a),   \
              (double)(b))

Test(hmap, matches_a_reference_under_random_inserts_and_deletes)
{
    enum { N = 4096 };
    static uint64_t ref[N];
    static char present[N];
    hl_hmap_t m = {0};
    srand(7);
    for (int it = 0; it < 200000; it++) {
        int k = rand() % N;
        uint64_t key = (uint64_t)k * 4096; /* pointer-like keys: low bits zero */
        if (rand() % 3) {
            uint64_t v = (uint64_t)rand();
            *hl_hmap_put(&m, key, 0, NULL) = v;
            ref[k] = v;
            present[k] = 1;
        } else {
            uint64_t old;
            int had = hl_hmap_del(&m, key, &old);
            cr_assert_eq(had, present[k]);
            if (had) cr_assert_eq(old, ref[k]);
            present[k] = 0;
        }
    }
    size_t n = 0;
    for (int k = 0; k < N; k++) {
        uint64_t *v = hl_hmap_get(&m, (uint64_t)k * 4096);
        cr_assert_eq(v != NULL, present[k]);
        if (v) cr_assert_eq(*v, ref[k]);
        n += present[k];
    }
    cr_assert_eq(m.len, n);
    hl_hmap_free(&m);
}

/* Ids and pointers from a damaged database can be anything: UINT64_MAX, the empty-slot mark,
 * is a key like the others (it was read as "found" in an empty slot). */
Test(hmap, the_empty_mark_is_a_key_too)
{
    hl_hmap_t m = {0};
    cr_assert_null(hl_hmap_get(&m, HL_HMAP_EMPTY));
    int fresh;
    *hl_hmap_put(&m, 5, 0, &fresh) = 50;
    cr_assert_null(hl_hmap_get(&m, HL_HMAP_EMPTY), "an empty slot is not the key");
    *hl_hmap_put(&m, HL_HMAP_EMPTY, 7, &fresh) += 1;
    cr_assert_eq(fresh, 1);
    cr_assert_eq(*hl_hmap_get(&m, HL_HMAP_EMPTY), 8);
    hl_hmap_put(&m, HL_HMAP_EMPTY, 0, &fresh);
    cr_assert_eq(fresh, 0);
    size_t n = 0, i = 0;
    const hl_hmap_slot_t *sl;
    uint64_t sum = 0;
    while (hl_hmap_iter(&m, &i, &sl)) {
        n++;
        sum += sl->val;
    }
    cr_assert_eq(n, 2);
    cr_assert_eq(sum, 58);
    uint64_t old;
    cr_assert_eq(hl_hmap_del(&m, HL_HMAP_EMPTY, &old), 1);
    cr_assert_eq(old, 8);
    cr_assert_null(hl_hmap_get(&m, HL_HMAP_EMPTY));
    cr_assert_eq(*hl_hmap_get(&m, 5), 50);
    hl_hmap_free(&m);
}

Test(radixq, pops_in_key_order_under_peeks_pushes_and_equal_keys)
{
    /* Reference: an unsorted array searched for its minimum. Pushes are at least the last
     * key popped (or below it, as a corrupt row would be: queued as the last popped key),
     * peeks come between pushes as the stream's merge does. */
    enum { CAP = 5000 };
    static uint64_t ref[CAP];
    size_t nref = 0;
    hl_radixq_t q = HL_RADIXQ_INIT;
    uint64_t rng = 12345, last = 0;
    for (int it = 0; it < 400000; it++) {
        uint64_t r = (rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17);
        if (nref < CAP && (r % 3 || !nref)) {
            uint64_t key = r % 7 == 0    ? last                  /* equal to the last popped */
                           : r % 97 == 0 ? (last ? last - 1 : 0) /* below: clamped */
                                         : last + ((r >> 8) % (1u << (r >> 40) % 24));
            hl_radixq_push(&q, key, (uint32_t)nref);
            ref[nref++] = key < last ? last : key;
        }
        size_t m = 0;
        for (size_t i = 1; i < nref; i++)
            if (ref[i] < ref[m]) m = i;
        const hl_radixq_ent_t *top = hl_radixq_top(&q);
        cr_assert_eq(top != NULL, nref > 0);
        if (!nref) continue;
        cr_assert_eq(top->key, ref[m], "peek at %d", it);
        if (r % 5 < 2) {
            hl_radixq_ent_t e = hl_radixq_pop(&q);
            cr_assert_eq(e.key, ref[m], "pop at %d", it);
            last = e.key;
            ref[m] = ref[--nref];
        }
        cr_assert_eq(q.size, nref);
    }
    hl_radixq_free(&q);
}

Test(pctl, exact_nearest_rank)
{
    hl_pctl_t p = {0};
    for (uint64_t x = 100; x >= 1; x--)
        hl_pctl_add(&p, x);
    NEAR(hl_pctl_get(&p, 0.01), 1);
    NEAR(hl_pctl_get(&p, 0.25), 25);
    NEAR(hl_pctl_get(&p, 0.50), 50);
    NEAR(hl_pctl_get(&p, 0.75), 75);
    NEAR(hl_pctl_get(&p, 0.99), 99);
    NEAR(hl_pctl_mean(&p), 50.5);
    hl_pctl_free(&p);
    /* Three samples: p25 is the 1st, p50 the 2nd, p75 the 3rd. */
    uint64_t v[] = {300, 100, 200};
    for (int i = 0; i < 3; i++)
        hl_pctl_add(&p, v[i]);
    NEAR(hl_pctl_get(&p, 0.25), 100);
    NEAR(hl_pctl_get(&p, 0.50), 200);
    NEAR(hl_pctl_get(&p, 0.75), 300);
    hl_pctl_free(&p);
}

/* The sum is kept in an integer until it passes 2^64, then in long double: the mean must be
 * what summing in long double from the first sample gives, in the exact phase, after the
 * spill to the histogram, and across the overflow. */
Test(pctl, sum_is_the_long_double_sum)
{
    hl_pctl_t p = {0};
    long double ref = 0;
    uint64_t n = 0, x = 1;
    for (int i = 0; i < 3 * HL_PCTL_EXACT_MAX; i++, n++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t v = i < 2 * HL_PCTL_EXACT_MAX ? x >> 40 : x >> 2; /* then near 2^62 */
        hl_pctl_add(&p, v);
        ref += v;
        if (i % 4099 == 0 || i == 3 * HL_PCTL_EXACT_MAX - 1) {
            cr_assert(hl_pctl_sum(&p) == ref, "sample %d", i);
            cr_assert(hl_pctl_mean(&p) == (double)(ref / (n + 1)), "sample %d", i);
        }
    }
    cr_assert(p.big, "the sum passed 2^64");
    hl_pctl_free(&p);
}

Test(pctl, histogram_error_is_bounded)
{
    hl_pctl_t p = {0};
    for (uint64_t x = 1; x <= 1000000; x++)
        hl_pctl_add(&p, x * 7);
    cr_assert(p.hist != NULL, "spilled into the histogram");
    double q[] = {0.01, 0.25, 0.5, 0.75, 0.99};
    for (int i = 0; i < 5; i++) {
        double want = ceil(q[i] * 1e6) * 7, got = hl_pctl_get(&p, q[i]);
        cr_assert(fabs(got - want) <= want / 64 + 1, "p%g: %g vs %g", q[i] * 100, got, want);
    }
    NEAR(hl_pctl_mean(&p), 3500003.5);
    hl_pctl_free(&p);
}

Test(pctl, bucket_ranges_tile_the_line)
{
    uint64_t prev_hi = 0;
    for (unsigned b = 1; b < HL_PCTL_BUCKETS; b++) {
        uint64_t lo, hi;
        hl_pctl_bucket_range(b, &lo, &hi);
        cr_assert_eq(lo, prev_hi + 1, "bucket %u", b);
        cr_assert_eq(hl_pctl_bucket(lo), b);
        cr_assert_eq(hl_pctl_bucket(hi), b);
        prev_hi = hi;
    }
}

Test(frag, spans_between_blocks)
{
    hl_span_t reg[] = {{0, 1000}};
    hl_span_t used[] = {{300, 400}, {100, 200}};
    hl_frag_t f = hl_frag_compute(reg, 1, used, 2);
    cr_assert_eq(f.free_bytes, 800);
    cr_assert_eq(f.largest, 600);
    cr_assert_eq(f.spans, 3);
    NEAR(f.external, 0.25);
}

Test(frag, overlapping_used_and_several_regions)
{
    hl_span_t reg[] = {{5000, 6000}, {0, 1000}};
    hl_span_t used[] = {{0, 500}, {400, 600}, {900, 1200}, {5000, 6000}, {7000, 8000}};
    hl_frag_t f = hl_frag_compute(reg, 2, used, 5);
    cr_assert_eq(f.free_bytes, 300); /* [600, 900) */
    cr_assert_eq(f.largest, 300);
    cr_assert_eq(f.spans, 1);
    NEAR(f.external, 0);
    hl_span_t reg2[] = {{0, 100}};
    f = hl_frag_compute(reg2, 1, NULL, 0);
    cr_assert_eq(f.free_bytes, 100);
    NEAR(f.external, 0);
}

static hl_report_t *analyze(const char *name, hl_analyze_opts_t o, sqlite3 **db)
{
    char err[512];
    *db = hl_an_open(db_path(name), err, sizeof err);
    cr_assert(*db, "%s", err);
    hl_report_t *r = hl_analyze(*db, db_path(name), &o, err, sizeof err);
    cr_assert(r, "%s", err);
    return r;
}

static const hl_path_stat_t *path_of(const hl_report_t *r, int op, int path)
{
    for (size_t i = 0; i < r->npaths; i++)
        if (r->paths[i].op == op && r->paths[i].path == path) return &r->paths[i];
    cr_assert_fail("no path %d/%d", op, path);
    return NULL;
}

Test(analyze, basic_by_hand)
{
    sqlite3 *db;
    hl_report_t *r = analyze("basic", (hl_analyze_opts_t){0, -1, -1, NULL}, &db);
    cr_assert_eq(r->allocs, 5);
    cr_assert_eq(r->frees, 3);
    cr_assert_eq(r->orphan_frees, 1);
    cr_assert_eq(r->peak_R, 380);
    cr_assert_eq(r->peak_U, 414);
    cr_assert_eq(r->peak_H, 8192);
    cr_assert_eq(r->peak_ts, 6000);
    NEAR(r->util_peak, 380.0 / 8192);
    NEAR(r->internal_peak, 34.0 / 414);
    NEAR(r->external_peak, 128.0 / 3792);
    cr_assert_eq(r->frag_peak.largest, 3664);
    cr_assert_eq(r->end_R, 210);
    cr_assert_eq(r->end_U, 223);
    NEAR(r->internal_end, 13.0 / 223);
    NEAR(r->external_end, 128.0 / 3872);
    const hl_path_stat_t *p = path_of(r, HL_OP_ALLOC, HL_PATH_TLSF_SPLIT);
    cr_assert_eq(p->count, 3);
    NEAR(p->share, 0.6);
    NEAR(p->p01, 100);
    NEAR(p->p25, 100);
    NEAR(p->p50, 200);
    NEAR(p->p75, 300);
    NEAR(p->p99, 300);
    NEAR(p->mean, 200);
    NEAR(p->ns_p50, 100);
    NEAR(p->weighted, 120);
    NEAR(r->op_mean[HL_OP_ALLOC], 204);
    p = path_of(r, HL_OP_FREE, HL_PATH_TINY_CACHE_PUSH); /* one real free, one orphan */
    cr_assert_eq(p->count, 2);
    NEAR(p->p75, 30);
    NEAR(r->op_mean[HL_OP_FREE], 42.5);
    cr_assert_eq(r->leak_blocks, 2);
    cr_assert_eq(r->leak_bytes, 210);
    cr_assert_eq(r->temporary, 1);
    cr_assert_eq(r->lifetime[1], 3);
    cr_assert_eq(r->sites[0].stack, 1);
    cr_assert_eq(r->sites[0].bytes, 300);
    cr_assert_eq(r->classes[7].peak, 1);
    cr_assert_eq(r->classes[7].held, 512);
    cr_assert_eq(r->nerrors, 1);
    cr_assert_str_eq(r->errors[0].kind, "double-free");
    cr_assert_eq(r->approximate, 0);
    hl_report_free(r);
    sqlite3_close(db);
}

Test(analyze, arena_exhaustion_by_hand)
{
    sqlite3 *db;
    hl_report_t *r = analyze("arena", (hl_analyze_opts_t){0, -1, -1, NULL}, &db);
    cr_assert_str_eq(r->held_source, "arena");
    NEAR(r->util_peak, 700.0 / 1024);
    NEAR(r->internal_peak, 4.0 / 704);
    NEAR(r->external_peak, 0);
    NEAR(r->external_end, 288.0 / 608);
    cr_assert_eq(r->failed, 1);
    cr_assert(r->has_failure);
    cr_assert_eq(r->fail_size, 500);
    NEAR(r->fail_util, 400.0 / 1024);
    hl_report_free(r);
    sqlite3_close(db);
}

Test(analyze, window_and_pid)
{
    sqlite3 *db;
    /* Up to 4.5 us after the start (abs ts 5500): B1, B2, B3 allocated, B1 freed. */
    hl_report_t *r = analyze("basic", (hl_analyze_opts_t){0, -1, 4500, NULL}, &db);
    cr_assert_eq(r->end_R, 250);
    cr_assert_eq(r->leak_blocks, 2);
    cr_assert_eq(r->allocs, 3);
    cr_assert_eq(r->frees, 1);
    hl_report_free(r);
    /* From 3.5 us: state before counts, statistics do not. */
    r = hl_analyze(db, db_path("basic"), &(hl_analyze_opts_t){0, 3500, -1, NULL}, (char[256]){0},
                   256);
    cr_assert(r);
    cr_assert_eq(r->allocs, 2); /* T1, T2 */
    cr_assert_eq(r->peak_R, 380);
    cr_assert_eq(r->end_R, 210);
    hl_report_free(r);
    char err[256];
    r = hl_analyze(db, db_path("basic"), &(hl_analyze_opts_t){999, -1, -1, NULL}, err, sizeof err);
    cr_assert_null(r);
    cr_assert(strstr(err, "no allocation events for pid 999"), "%s", err);
    sqlite3_close(db);
}

/* The leak classes' totals: counted in the pass (the stream's unfreed blocks per process)
 * when it reads every process to the end, else by SQLite; both are the same numbers. */
static void same_classes(const hl_leakclass_report_t *a, const hl_leakclass_report_t *b)
{
    cr_assert(a && b);
    for (int c = 0; c < 4; c++) {
        cr_assert_eq(a->blocks[c], b->blocks[c], "class %d", c);
        cr_assert_eq(a->bytes[c], b->bytes[c], "class %d", c);
    }
    cr_assert_eq(a->scans, b->scans);
}

/* The lost bytes per allocation stack count the blocks the totals count: they add up to the
 * definitely and indirectly lost totals. */
static void sites_add_up(const hl_leakclass_report_t *lc)
{
    uint64_t db = 0, dn = 0, ib = 0, in = 0;
    for (size_t i = 0; i < lc->nsites; i++) {
        dn += lc->sites[i].definite_blocks, db += lc->sites[i].definite_bytes;
        in += lc->sites[i].indirect_blocks, ib += lc->sites[i].indirect_bytes;
    }
    cr_assert_eq(dn, lc->blocks[1]);
    cr_assert_eq(db, lc->bytes[1]);
    cr_assert_eq(in, lc->blocks[2]);
    cr_assert_eq(ib, lc->bytes[2]);
}

/* leakclass.sql: only blocks 1 (definitely lost, 10 B) and 2 (indirectly lost, 20 B), both
 * of stack 1, are lost; the failed block 8 (class 1, stack 2) and block 9 of the unscanned
 * process (class 1, stack 1) are not. */
Test(analyze, leak_sites_count_what_the_totals_count)
{
    sqlite3 *db;
    char err[256];
    db = hl_an_open(db_path("leakclass"), err, sizeof err);
    cr_assert(db, "%s", err);
    hl_leakclass_report_t *lc = hl_leakclass_load(db);
    cr_assert(lc);
    cr_assert_eq(lc->nsites, 1, "%zu sites", lc->nsites);
    cr_assert_eq(lc->sites[0].stack, 1);
    cr_assert_eq(lc->sites[0].definite_blocks, 1);
    cr_assert_eq(lc->sites[0].definite_bytes, 10);
    cr_assert_eq(lc->sites[0].indirect_blocks, 1);
    cr_assert_eq(lc->sites[0].indirect_bytes, 20);
    sites_add_up(lc);
    hl_leakclass_free(lc);
    sqlite3_close(db);
}

Test(analyze, leak_classes_counted_in_the_pass)
{
    sqlite3 *db;
    hl_report_t *r = analyze("leakclass", (hl_analyze_opts_t){0, -1, -1, NULL}, &db);
    const hl_leakclass_report_t *lc = r->leakclass;
    cr_assert(lc);
    cr_assert_eq(lc->scans, 2);
    cr_assert_eq(lc->blocks[1], 1);
    cr_assert_eq(lc->bytes[1], 10);
    cr_assert_eq(lc->blocks[2], 1);
    cr_assert_eq(lc->bytes[2], 20);
    cr_assert_eq(lc->blocks[3], 1);
    cr_assert_eq(lc->bytes[3], 30);
    cr_assert_eq(lc->blocks[0], 3, "blocks 4, 5 (class 0) and 6 (class 7)");
    cr_assert_eq(lc->bytes[0], 150);
    sites_add_up(lc);
    hl_leakclass_report_t *sql = hl_leakclass_load(db);
    same_classes(lc, sql);
    hl_report_free(r);
    /* One process, and a window that ends early: SQLite's totals, the same. */
    char err[256];
    r = hl_analyze(db, db_path("leakclass"), &(hl_analyze_opts_t){100, -1, -1, NULL}, err,
                   sizeof err);
    cr_assert(r, "%s", err);
    same_classes(r->leakclass, sql);
    hl_report_free(r);
    r = hl_analyze(db, db_path("leakclass"), &(hl_analyze_opts_t){0, -1, 3000, NULL}, err,
                   sizeof err);
    cr_assert(r, "%s", err);
    same_classes(r->leakclass, sql);
    hl_report_free(r);
    hl_leakclass_free(sql);
    sqlite3_close(db);
}

/* A free_seq below 0 (leakneg.sql) is no free for the stream's count and for SQLite alike: the
 * totals counted in the pass, SQLite's and the sites agree. */
Test(analyze, leak_classes_negative_free_seq)
{
    sqlite3 *db;
    hl_report_t *r = analyze("leakneg", (hl_analyze_opts_t){0, -1, -1, NULL}, &db);
    const hl_leakclass_report_t *lc = r->leakclass;
    cr_assert(lc);
    cr_assert_eq(lc->blocks[1], 1, "block 1 (free_seq -1) is live");
    cr_assert_eq(lc->bytes[1], 10);
    cr_assert_eq(lc->blocks[2], 1);
    cr_assert_eq(lc->blocks[3], 0, "block 3 (free_seq -0.5, read as 0) is freed");
    cr_assert_eq(lc->blocks[0], 3, "blocks 4 (free_seq INT64_MIN), 5 and 6");
    cr_assert_eq(lc->bytes[0], 150);
    sites_add_up(lc);
    hl_leakclass_report_t *sql = hl_leakclass_load(db);
    same_classes(lc, sql);
    sites_add_up(sql);
    hl_leakclass_free(sql);
    hl_report_free(r);
    sqlite3_close(db);
}

Test(analyze, discarded_is_approximate)
{
    sqlite3 *db;
    hl_report_t *r = analyze("discarded", (hl_analyze_opts_t){0, -1, -1, NULL}, &db);
    cr_assert(r->approximate);
    cr_assert_eq(r->run.discarded, 40);
    hl_report_free(r);
    sqlite3_close(db);
}

Test(bad_input, messages)
{
    char err[512];
    cr_assert_null(hl_an_open(db_path("badversion"), err, sizeof err));
    cr_assert(strstr(err, "schema version 1, this heapledger reads version 4"), "%s", err);
    cr_assert_null(hl_an_open(db_path("oldversion"), err, sizeof err));
    cr_assert(strstr(err, "schema version 2, this heapledger reads version 4 (an older heapledger"),
              "%s", err);
    cr_assert_null(hl_an_open(db_path("notadb"), err, sizeof err));
    cr_assert(strstr(err, "not a readable SQLite database"), "%s", err);
    cr_assert_null(hl_an_open(db_path("no-such-file"), err, sizeof err));
    cr_assert(strstr(err, "No such file or directory"), "%s", err);
    sqlite3 *db = hl_an_open(db_path("empty"), err, sizeof err);
    cr_assert(db, "%s", err);
    cr_assert_null(
        hl_analyze(db, "empty.db", &(hl_analyze_opts_t){0, -1, -1, NULL}, err, sizeof err));
    cr_assert(strstr(err, "empty run"), "%s", err);
    sqlite3_close(db);
}

Test(parse, times)
{
    cr_assert_eq(hl_parse_time("1.5"), 1500000000);
    cr_assert_eq(hl_parse_time("200ms"), 200000000);
    cr_assert_eq(hl_parse_time("30us"), 30000);
    cr_assert_eq(hl_parse_time("7ns"), 7);
    cr_assert_eq(hl_parse_time("2s"), 2000000000);
    cr_assert_eq(hl_parse_time("x"), -1);
    cr_assert_eq(hl_parse_time("3h"), -1);
}

Test(analyze, ids_out_of_allocation_order_fall_back_to_the_index)
{
    sqlite3 *db, *db2;
    hl_report_t *a = analyze("basic", (hl_analyze_opts_t){0, -1, -1, NULL}, &db);
    hl_report_t *b = analyze("reorder", (hl_analyze_opts_t){0, -1, -1, NULL}, &db2);
    cr_assert_eq(b->peak_R, a->peak_R);
    cr_assert_eq(b->end_R, a->end_R);
    NEAR(b->external_peak, a->external_peak);
    NEAR(b->external_end, a->external_end);
    cr_assert_eq(b->temporary, a->temporary);
    cr_assert_eq(b->leak_bytes, a->leak_bytes);
    cr_assert_eq(b->events, a->events);
    hl_report_free(a);
    hl_report_free(b);
    sqlite3_close(db);
    sqlite3_close(db2);
}

Test(analyze, realloc_sides_sharing_a_seq)
{
    sqlite3 *db;
    hl_report_t *r = analyze("realloc", (hl_analyze_opts_t){0, -1, -1, NULL}, &db);
    cr_assert_eq(r->peak_R, 300);
    cr_assert_eq(r->reallocs, 1);
    cr_assert_eq(r->allocs, 1);
    cr_assert_eq(r->frees, 1); /* the old side of the realloc is not a free */
    const hl_path_stat_t *p = path_of(r, HL_OP_REALLOC, HL_PATH_REALLOC_MOVE);
    cr_assert_eq(p->count, 1);
    NEAR(p->mean, 90);
    cr_assert_eq(r->end_R, 0);
    hl_report_free(r);
    sqlite3_close(db);
}

/* Reference: the live mid set and regions at seq straight from the tables. */
static hl_frag_t frag_by_sql(sqlite3 *db, int64_t seq)
{
    hl_hmap_t regions = {0};
    sqlite3_stmt *st;
    char q[256];
    snprintf(q, sizeof q,
             "SELECT op, addr, len, purpose FROM os_region WHERE seq <= %lld ORDER BY seq",
             (long long)seq);
    cr_assert_eq(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        uint64_t addr = (uint64_t)sqlite3_column_int64(st, 1);
        if (!strcmp((const char *)sqlite3_column_text(st, 0), "unmap"))
            hl_hmap_del(&regions, addr, NULL);
        else if (!strcmp((const char *)sqlite3_column_text(st, 3), "tlsf_pool"))
            *hl_hmap_put(&regions, addr, 0, NULL) = (uint64_t)sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    hl_span_t *reg = calloc(regions.len + 1, sizeof *reg);
    size_t nreg = 0, nused = 0, cap = 1024;
    const hl_hmap_slot_t *sl;
    for (size_t i = 0; hl_hmap_iter(&regions, &i, &sl);)
        reg[nreg++] = (hl_span_t){sl->key, sl->key + sl->val};
    hl_span_t *used = malloc(cap * sizeof *used);
    snprintf(q, sizeof q,
             "SELECT ptr, usable FROM block WHERE tier = 2 AND alloc_seq <= %lld AND "
             "(free_seq IS NULL OR free_seq > %lld)",
             (long long)seq, (long long)seq);
    cr_assert_eq(sqlite3_prepare_v2(db, q, -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (nused == cap) used = realloc(used, (cap *= 2) * sizeof *used);
        uint64_t p = (uint64_t)sqlite3_column_int64(st, 0);
        used[nused++] = (hl_span_t){p - 16, p + (uint64_t)sqlite3_column_int64(st, 1)};
    }
    sqlite3_finalize(st);
    hl_frag_t f = hl_frag_compute(reg, nreg, used, nused);
    free(reg);
    free(used);
    hl_hmap_free(&regions);
    return f;
}

Test(analyze, fragmentation_at_peak_matches_the_tables)
{
    sqlite3 *db;
    /* gen_big: 60 000 events over a live set of 500 blocks, so the peak's undo log is
     * folded many times before the end. */
    hl_report_t *r = analyze("churn", (hl_analyze_opts_t){0, -1, -1, NULL}, &db);
    hl_frag_t want = frag_by_sql(db, r->peak_seq);
    cr_assert_eq(r->frag_peak.free_bytes, want.free_bytes);
    cr_assert_eq(r->frag_peak.largest, want.largest);
    cr_assert_eq(r->frag_peak.spans, want.spans);
    NEAR(r->external_peak, want.external);
    hl_report_free(r);
    sqlite3_close(db);
}

Test(midstate, marked_state_is_restored_from_the_undo_log)
{
    hl_midstate_t *ms = hl_midstate_new();
    int known;
    hl_midstate_region_put(ms, 1, 0x1000, 0x1000, HL_REG_TLSF_POOL); /* [0x1000, 0x2000) */
    hl_midstate_block_put(ms, 1, 0x1010, 0xf0);                      /* [0x1000, 0x1100) */
    hl_midstate_block_put(ms, 1, 0x1810, 0xf0);                      /* [0x1800, 0x1900) */
    hl_midstate_mark(ms);
    hl_frag_t at_mark = hl_midstate_frag(ms, &known);
    cr_assert(known);
    /* free spans [0x1100, 0x1800) = 0x700 and [0x1900, 0x2000) = 0x700 */
    cr_assert_eq(at_mark.free_bytes, 0xe00);
    cr_assert_eq(at_mark.largest, 0x700);
    /* Churn after the mark, more than the log keeps: the marked state must not change. */
    for (int i = 0; i < 20000; i++) {
        hl_midstate_block_put(ms, 1, 0x1110, 0x10);
        hl_midstate_block_del(ms, 1, 0x1010);
        hl_midstate_block_put(ms, 1, 0x1010, 0xf0);
        hl_midstate_block_del(ms, 1, 0x1110);
        if (i == 10) hl_midstate_region_put(ms, 2, 0x9000, 0x100, HL_REG_TLSF_POOL);
    }
    hl_midstate_block_del(ms, 1, 0x1810);
    hl_frag_t now = hl_midstate_frag(ms, &known);
    cr_assert_eq(now.free_bytes, 0xf00 + 0x100); /* pid 2's empty pool counts too */
    hl_frag_t m = hl_midstate_marked_frag(ms, &known);
    cr_assert(known);
    cr_assert_eq(m.free_bytes, at_mark.free_bytes);
    cr_assert_eq(m.largest, at_mark.largest);
    cr_assert_eq(m.spans, at_mark.spans);
    /* A short log is undone exactly too. */
    hl_midstate_mark(ms);
    hl_frag_t at_mark2 = hl_midstate_frag(ms, &known);
    hl_midstate_block_put(ms, 1, 0x1810, 0xf0);
    hl_midstate_region_del(ms, 2, 0x9000);
    m = hl_midstate_marked_frag(ms, &known);
    cr_assert_eq(m.free_bytes, at_mark2.free_bytes);
    cr_assert_eq(m.spans, at_mark2.spans);
    hl_midstate_free(ms);
}

/* tests/analyzer/kernel.sql, worked by hand in tests/analyzer/README.md. */
Test(kernel, by_hand)
{
    sqlite3 *db;
    hl_report_t *r = analyze("kernel", (hl_analyze_opts_t){0, -1, -1, NULL}, &db);
    const hl_kernel_report_t *k = r->kernel;
    cr_assert_not_null(k);
    cr_assert_eq(k->events, 13);
    /* RSS samples: 1.0 MB at 1200, 1.3 MB at 4500, 1.2 MB at 12000. */
    cr_assert_eq(k->rss_samples, 3);
    cr_assert_eq(k->rss_peak, 1300000);
    cr_assert_eq(k->anon_peak, 600000);
    cr_assert_eq(k->rss_peak_ts, 3500);
    cr_assert_eq(k->rss_end, 1200000);
    /* Timeline edges every 95 ns from 1095: none before 1200, 1.0 MB until 4500. */
    cr_assert(!k->has_rss[0] && !k->has_rss[1] && k->has_rss[2]);
    cr_assert_eq(k->rss[2], 1000000);
    cr_assert_eq(k->rss[35], 1000000);
    cr_assert_eq(k->rss[36], 1300000);
    cr_assert_eq(k->rss[HL_TL_SAMPLES - 1], 1200000);
    /* Faults. */
    cr_assert_eq(k->fault_runs, 7);
    cr_assert_eq(k->fault_pages, 26);
    cr_assert_eq(k->pages_in_blocks, 13);
    cr_assert_eq(k->runs_in_blocks, 4);
    cr_assert_eq(k->pages_heap_free, 11);
    cr_assert_eq(k->pages_outside, 2);
    cr_assert_eq(k->path[HL_PATH_LARGE_MMAP].pages, 9);
    cr_assert_eq(k->path[HL_PATH_LARGE_MMAP].runs, 2);
    cr_assert_eq(k->path[HL_PATH_TLSF_SPLIT].pages, 2);
    cr_assert_eq(k->path[HL_PATH_TLSF_SPLIT].runs, 1);
    cr_assert_eq(k->path[HL_PATH_TLSF].runs, 0);
    cr_assert_eq(k->path[HL_PATH_TINY_NEW_SLAB].pages, 1);
    cr_assert_eq(k->path[HL_PATH_TINY_CACHE_HIT].pages, 1);
    cr_assert_eq(k->path[HL_PATH_TINY_CACHE_HIT].runs, 1);
    cr_assert_eq(k->cls[3].pages, 2);
    cr_assert_eq(k->cls[3].runs, 1);
    cr_assert_eq(k->tier[HL_TIER_TINY].pages, 2);
    cr_assert_eq(k->tier[HL_TIER_MID].pages, 2);
    cr_assert_eq(k->tier[HL_TIER_LARGE].pages, 9);
    /* Held but never touched. */
    cr_assert_eq(k->region[HL_REG_TLSF_POOL].touched, 20480);
    cr_assert_eq(k->region[HL_REG_TLSF_POOL].never_touched, 45056);
    cr_assert_eq(k->region[HL_REG_LARGE].touched, 36864);
    cr_assert_eq(k->region[HL_REG_LARGE].never_touched, 225280);
    cr_assert_eq(k->region[HL_REG_SLAB].never_touched, 24576);
    cr_assert_eq(k->mapped_bytes, 393216);
    cr_assert_eq(k->never_touched_bytes, 294912);
    /* At the peak of R (205100 B, after M2's allocation at 5100). */
    cr_assert_eq(r->peak_R, 205100);
    cr_assert(k->peak_has_rss);
    cr_assert_eq(k->peak_rss, 1300000);
    cr_assert_eq(k->peak_heap_resident, 69632);
    cr_assert_eq(k->peak_res_blocks, 36848);
    cr_assert_eq(k->peak_U, 270416);
    cr_assert_eq(k->frag_rss_cost, 32784);
    cr_assert_eq(k->live_untouched, 233568);
    cr_assert_eq(k->held_untouched, 323584);
    cr_assert_eq(k->other_rss, 1230368);
    hl_report_free(r);
    sqlite3_close(db);
}

Test(kernel, window_counts_only_its_faults)
{
    sqlite3 *db;
    /* 4.5 us .. 10 us after the start (absolute 5500 .. 11000): runs at 6000, 8000, 10000. */
    hl_report_t *r = analyze("kernel", (hl_analyze_opts_t){0, 4500, 10000, NULL}, &db);
    const hl_kernel_report_t *k = r->kernel;
    cr_assert_not_null(k);
    cr_assert_eq(k->fault_runs, 3);
    cr_assert_eq(k->fault_pages, 7);
    cr_assert_eq(k->path[HL_PATH_LARGE_MMAP].runs, 0);
    cr_assert_eq(k->path[HL_PATH_TLSF_SPLIT].pages, 2);
    cr_assert_eq(k->rss_samples, 0);
    hl_report_free(r);
    sqlite3_close(db);
}

Test(kernel, absent_without_kernel_events)
{
    sqlite3 *db;
    hl_report_t *r = analyze("basic", (hl_analyze_opts_t){0, -1, -1, NULL}, &db);
    cr_assert_null(r->kernel);
    hl_report_free(r);
    sqlite3_close(db);
}

Test(omap, floor_next_and_delete)
{
    hl_omap_t m = {0};
    for (uint64_t i = 0; i < 1000; i++)
        hl_omap_put(&m, (int64_t)(i % 3), i * 16, i * 16 + 8);
    cr_assert_eq(m.len, 1000);
    hl_onode_t *e = hl_omap_floor(&m, 1, 100 * 16 + 5); /* 100 % 3 == 1 */
    cr_assert(e && e->start == 1600 && e->pid == 1);
    e = hl_omap_next(&m, 1, 1600);
    cr_assert(e && e->start == 103 * 16);
    cr_assert_null(hl_omap_floor(&m, 2, 0)); /* pid 2 starts at 2 * 16 */
    cr_assert(hl_omap_first_overlap(&m, 0, 5, 7) != NULL);
    cr_assert_null(hl_omap_first_overlap(&m, 0, 8, 16));
    for (uint64_t i = 0; i < 1000; i += 2)
        cr_assert(hl_omap_del(&m, (int64_t)(i % 3), i * 16, NULL));
    cr_assert_eq(m.len, 500);
    cr_assert(!hl_omap_del(&m, 0, 0, NULL));
    e = hl_omap_floor(&m, 1, 100 * 16 + 5); /* 100 was deleted: 97 is pid 1 and odd */
    cr_assert(e && e->start == 97 * 16);
    hl_omap_free(&m);
}

/* tests/analyzer/kshare.sql: a page shared by two paths, two processes. */
Test(kernel, shared_page_and_processes)
{
    sqlite3 *db;
    hl_report_t *r = analyze("kshare", (hl_analyze_opts_t){0, -1, -1, NULL}, &db);
    const hl_kernel_report_t *k = r->kernel;
    cr_assert_not_null(k);
    cr_assert_eq(k->fault_runs, 2);
    cr_assert_eq(k->fault_pages, 2);
    cr_assert_eq(k->pages_in_blocks, 2);
    /* Page 0x400 of process 300 lies in A and B: once for each path, once for class 2. */
    cr_assert_eq(k->path[HL_PATH_TINY_NEW_SLAB].pages, 1);
    cr_assert_eq(k->path[HL_PATH_TINY_CACHE_HIT].pages, 1);
    cr_assert_eq(k->cls[2].pages, 1);
    cr_assert_eq(k->cls[2].runs, 1);
    cr_assert_eq(k->tier[HL_TIER_TINY].pages, 1);
    /* The same address in process 301 is C's (no region there: attach-like). */
    cr_assert_eq(k->path[HL_PATH_TLSF].pages, 1);
    cr_assert_eq(k->pages_outside, 0);
    /* RSS summed over the processes: 1 000 000 + 500 000 from 1600 on. */
    cr_assert_eq(k->rss_peak, 1500000);
    cr_assert_eq(k->rss_peak_ts, 600);
    cr_assert_eq(k->anon_peak, 3);
    hl_report_free(r);
    sqlite3_close(db);

    r = analyze("kshare", (hl_analyze_opts_t){301, -1, -1, NULL}, &db);
    k = r->kernel;
    cr_assert_not_null(k);
    cr_assert_eq(k->fault_runs, 1);
    cr_assert_eq(k->path[HL_PATH_TLSF].pages, 1);
    cr_assert_eq(k->path[HL_PATH_TINY_NEW_SLAB].pages, 0);
    cr_assert_eq(k->rss_peak, 500000);
    hl_report_free(r);
    sqlite3_close(db);
}

/* ---- suppressions (suppress.c) ------------------------------------------------------- */

/* A stack of "function@module" strings, innermost first. */
static hl_frames_t supp_stack(const char *const *spec)
{
    hl_frames_t f = {0};
    size_t n = 0;
    while (spec[n])
        n++;
    f.loc = calloc(n, sizeof *f.loc);
    f.n = n;
    for (size_t i = 0; i < n; i++) {
        const char *at = strrchr(spec[i], '@');
        f.loc[i].function = strndup(spec[i], (size_t)(at - spec[i]));
        f.loc[i].module = strdup(at + 1);
    }
    return f;
}

static void supp_stack_free(hl_frames_t *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free((char *)f->loc[i].function);
        free((char *)f->loc[i].module);
    }
    free(f->loc);
}

static hl_supp_kind_t supp_kind(const hl_supp_t *s, const char *const *spec)
{
    hl_frames_t f = supp_stack(spec);
    hl_supp_kind_t k = hl_supp_match(s, &f);
    supp_stack_free(&f);
    return k;
}

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LD   "/lib64/ld-linux-x86-64.so.2"

Test(suppress, builtin_runtime_rules)
{
    hl_supp_t *s = hl_supp_new();
    /* The stdout buffer, a thread's DTV: the runtime's own. */
    cr_assert_eq(supp_kind(s, (const char *[]){"_IO_file_doallocate@" LIBC, "_IO_doallocbuf@" LIBC,
                                               "printf@" LIBC, "main@/tmp/prog", NULL}),
                 HL_SUPP_RUNTIME);
    cr_assert_eq(
        supp_kind(s, (const char *[]){"allocate_dtv@" LD, "_dl_allocate_tls@" LD,
                                      "pthread_create@@GLIBC_2.34@" LIBC, "main@/tmp/prog", NULL}),
        HL_SUPP_RUNTIME);
    /* The program's strdup, and a constructor run by the loader, are the program's leaks. */
    cr_assert_eq(supp_kind(s, (const char *[]){"__strdup@" LIBC, "main@/tmp/prog", NULL}),
                 HL_SUPP_NONE);
    cr_assert_eq(supp_kind(s, (const char *[]){"init_tables@/tmp/prog", "_dl_init@" LD,
                                               "_dl_start_user@" LD, NULL}),
                 HL_SUPP_NONE);
    /* The allocator's own entry points are skipped before the site. */
    cr_assert_eq(supp_kind(s, (const char *[]){"malloc@/usr/lib/libheapledger.so",
                                               "_nl_intern_locale_data@" LIBC, "setlocale@" LIBC,
                                               "main@/tmp/prog", NULL}),
                 HL_SUPP_RUNTIME);
    hl_supp_free(s);
}

Test(suppress, user_files)
{
    char dir[] = "/tmp/hl-supp-test.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[64], err[512];
    snprintf(path, sizeof path, "%s/a.supp", dir);
    FILE *f = fopen(path, "w");
    fputs("# comment\n\n  leak:parse_*  # trailing comment\nmodule:libfoo.so*\n", f);
    fclose(f);
    hl_supp_t *s = hl_supp_new();
    cr_assert_eq(hl_supp_load(s, path, err, sizeof err), 0, "%s", err);
    cr_assert_eq(supp_kind(s, (const char *[]){"parse_line@/tmp/prog", "main@/tmp/prog", NULL}),
                 HL_SUPP_USER);
    cr_assert_eq(
        supp_kind(s, (const char *[]){"foo_new@/opt/lib/libfoo.so.1", "main@/tmp/prog", NULL}),
        HL_SUPP_USER);
    cr_assert_eq(supp_kind(s, (const char *[]){"make_node@/tmp/prog", NULL}), HL_SUPP_NONE);
    f = fopen(path, "w");
    fputs("leak:ok\nmodule\n", f);
    fclose(f);
    cr_assert_eq(hl_supp_load(s, path, err, sizeof err), -1);
    cr_assert(strstr(err, "a.supp:2: 'module' is not a rule"), "%s", err);
    hl_supp_free(s);
    unlink(path);
    rmdir(dir);
}
