/* Which TLSF arena a thread binds to (mid.h, hl_mid_pick_arena): the one with the fewest live
 * threads, the lowest index among equals, so that a thread that starts after another ended
 * takes the arena the other left instead of growing one nobody has used yet (a generation of
 * short-lived threads then keeps to as many arenas as it has live threads). */
#include "internal.h"
#include "unit_heap.h"

#include <criterion/criterion.h>
#include <pthread.h>

typedef struct {
    hl_heap_t *h;
    pthread_barrier_t *both; /* NULL: do not wait for the other thread */
    unsigned arena, owner;
} probe_t;

/* Allocate one mid block, say which arena the thread was bound to and which arena served it. */
static void *probe(void *arg)
{
    probe_t *p = arg;
    void *b = hl_heap_malloc(p->h, 16 << 10);
    cr_assert_not_null(b);
    p->arena = hl_tls_of(p->h)->arena;
    p->owner = hl_tlsf_owner(b);
    if (p->both) pthread_barrier_wait(p->both);
    hl_heap_free(p->h, b);
    return NULL;
}

static void run(probe_t *p)
{
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, probe, p), 0);
    cr_assert_eq(pthread_join(t, NULL), 0);
}

static uint32_t live_users(hl_heap_t *h)
{
    uint32_t n = 0;
    for (unsigned i = 0; i < h->mid.narenas; i++)
        n += __atomic_load_n(&h->mid.users[i], __ATOMIC_RELAXED);
    return n;
}

Test(arena, a_thread_takes_the_arena_an_ended_thread_left)
{
    hl_heap_t *h = unit_heap("arenas=4");
    hl_heap_free(h, hl_heap_malloc(h, 16 << 10)); /* this thread binds first: arena 0 */
    cr_assert_eq(hl_tls_of(h)->arena, 0u);
    for (int gen = 0; gen < 6; gen++) {
        probe_t p = {h, NULL, 99, 99};
        run(&p);
        cr_assert_eq(p.arena, 1u,
                     "generation %d bound to arena %u, not to the one its "
                     "predecessor left (1)",
                     gen, p.arena);
        cr_assert_eq(p.owner, 1u, "and that arena served its block");
    }
    cr_assert_eq(h->mid.arenas[2].tlsf.pools, NULL, "arenas 2 and 3 never grew");
    cr_assert_eq(h->mid.arenas[3].tlsf.pools, NULL);
    cr_assert_eq(live_users(h), 1u, "only this thread is left in an arena");
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

Test(arena, threads_alive_together_spread_over_the_arenas)
{
    hl_heap_t *h = unit_heap("arenas=4");
    hl_heap_free(h, hl_heap_malloc(h, 16 << 10)); /* arena 0 */
    enum { N = 6 };
    pthread_barrier_t both;
    pthread_barrier_init(&both, NULL, N);
    probe_t p[N];
    pthread_t t[N];
    for (int i = 0; i < N; i++) {
        p[i] = (probe_t){h, &both, 99, 99};
        cr_assert_eq(pthread_create(&t[i], NULL, probe, &p[i]), 0);
    }
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&both);
    unsigned per[4] = {1, 0, 0, 0}; /* this thread */
    for (int i = 0; i < N; i++) {
        cr_assert_lt(p[i].arena, 4u);
        per[p[i].arena]++;
    }
    /* Seven live threads over four arenas, bound at about the same moment: two at most in each. */
    for (unsigned a = 0; a < 4; a++)
        cr_assert_leq(per[a], 2u, "arena %u has %u threads", a, per[a]);
    cr_assert_eq(live_users(h), 1u);
    hl_heap_destroy(h);
}

Test(arena, a_thread_that_changes_heaps_leaves_its_arena)
{
    hl_heap_t *a = unit_heap("arenas=2"), *b = unit_heap("arenas=2");
    hl_heap_free(a, hl_heap_malloc(a, 16 << 10));
    cr_assert_eq(live_users(a), 1u);
    hl_heap_free(b, hl_heap_malloc(b, 64)); /* the same cache (hl_tls_x) binds to b */
    cr_assert_eq(live_users(a), 0u, "left a's arena");
    cr_assert_eq(live_users(b), 1u);
    hl_heap_destroy(a);
    hl_heap_destroy(b);
}
