/* tests/ingest/ingest_map_test.c — tracer/ingest_map.c (the live-block and stack tables):
 * random inserts, replaces and deletes checked against a plain array, and the backward-shift
 * deletion keeping clusters findable. */
#include "ingest_internal.h"

#include <criterion/criterion.h>
#include <stdlib.h>

Test(map, random_against_reference)
{
    enum { N = 4096 };
    static uint64_t ref[N]; /* ref[k] = value + 1 of key k*7919, 0 = absent */
    hl_map_t m;
    cr_assert_eq(hl_map_init(&m, 16), 0);
    srand(42);
    size_t present = 0;
    for (int step = 0; step < 200000; step++) {
        unsigned k = (unsigned)rand() % N;
        uint64_t key = (uint64_t)k * 7919u;
        int op = rand() % 3;
        if (op < 2) {
            uint64_t v = (uint64_t)rand();
            cr_assert_eq(hl_map_put(&m, key, v), 0);
            present += ref[k] == 0;
            ref[k] = v + 1;
        } else {
            uint64_t v = 0;
            int had = hl_map_del(&m, key, &v);
            cr_assert_eq(had, ref[k] != 0, "step %d key %u", step, k);
            if (had) {
                cr_assert_eq(v + 1, ref[k]);
                present--;
            }
            ref[k] = 0;
        }
        cr_assert_eq(m.count, present);
        cr_assert_leq(m.count * 2, m.cap);
    }
    for (unsigned k = 0; k < N; k++) {
        uint64_t *v = hl_map_find(&m, (uint64_t)k * 7919u);
        if (ref[k])
            cr_assert(v && *v + 1 == ref[k], "key %u", k);
        else
            cr_assert_null(v, "key %u", k);
    }
    hl_map_destroy(&m);
}

Test(map, delete_keeps_clusters_reachable)
{
    hl_map_t m;
    cr_assert_eq(hl_map_init(&m, 1024), 0);
    /* Keys sharing low bits after hashing are likely to collide; insert many, delete every
     * other one, then every remaining key must still be found. */
    for (uint64_t k = 0; k < 400; k++)
        cr_assert_eq(hl_map_put(&m, k << 40, k), 0);
    for (uint64_t k = 0; k < 400; k += 2)
        cr_assert_eq(hl_map_del(&m, k << 40, NULL), 1);
    for (uint64_t k = 0; k < 400; k++) {
        uint64_t *v = hl_map_find(&m, k << 40);
        if (k % 2)
            cr_assert(v && *v == k);
        else
            cr_assert_null(v);
    }
    cr_assert_eq(hl_map_del(&m, 12345, NULL), 0);
    hl_map_destroy(&m);
}
