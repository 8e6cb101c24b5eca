/* Which TLSF arena a thread binds to (mid.h, hl_mid_pick_arena): the one with the fewest live
 * threads, the lowest index among equals, so that a thread that starts after another ended
 * takes the arena the other left instead of growing one nobody has used yet (a generation of
 * short-lived threads then keeps to as many arenas as it has live threads). */
#include "internal.h"
#include "unit_heap.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <semaphore.h>

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

/* A thread that stays bound (its arena counted) until released. */
typedef struct {
    hl_heap_t *h;
    sem_t bound, release;
    unsigned arena;
} holder_t;

static void *hold(void *arg)
{
    holder_t *x = arg;
    hl_heap_free(x->h, hl_heap_malloc(x->h, 16 << 10));
    x->arena = hl_tls_of(x->h)->arena;
    sem_post(&x->bound);
    sem_wait(&x->release);
    return NULL;
}

static void start_holder(holder_t *x, hl_heap_t *h, pthread_t *t)
{
    x->h = h;
    sem_init(&x->bound, 0, 0);
    sem_init(&x->release, 0, 0);
    cr_assert_eq(pthread_create(t, NULL, hold, x), 0);
    sem_wait(&x->bound);
}

typedef struct {
    hl_heap_t *h;
    void *block;
    unsigned arena;
} succ_t;

static void *make_block(void *arg)
{
    succ_t *s = arg;
    s->block = hl_heap_malloc(s->h, 16 << 10);
    s->arena = hl_tls_of(s->h)->arena;
    return NULL;
}

/* Frees its predecessor's block first, then allocates. */
static void *successor(void *arg)
{
    succ_t *s = arg;
    hl_heap_free(s->h, s->block);
    hl_heap_free(s->h, hl_heap_malloc(s->h, 16 << 10));
    s->arena = hl_tls_of(s->h)->arena;
    return NULL;
}

Test(arena, a_successor_takes_the_arena_of_the_blocks_it_frees_first)
{
    hl_heap_t *h = unit_heap("arenas=4");
    hl_heap_free(h, hl_heap_malloc(h, 16 << 10)); /* this thread: arena 0 */
    holder_t x, y;
    pthread_t tx, ty, t;
    start_holder(&x, h, &tx); /* arena 1, stays */
    succ_t pred = {h, NULL, 99};
    cr_assert_eq(pthread_create(&t, NULL, make_block, &pred), 0);
    pthread_join(t, NULL); /* bound to arena 2, left it; its block stays there */
    cr_assert_eq(pred.arena, 2u);
    start_holder(&y, h, &ty); /* takes arena 2: arena 3 is now the least used */
    cr_assert_eq(y.arena, 2u);
    succ_t next = {h, pred.block, 99};
    cr_assert_eq(pthread_create(&t, NULL, successor, &next), 0);
    pthread_join(t, NULL);
    cr_assert_eq(next.arena, 2u, "the successor bound to arena %u, not to its predecessor's (2)",
                 next.arena);
    sem_post(&x.release);
    sem_post(&y.release);
    pthread_join(tx, NULL);
    pthread_join(ty, NULL);
    cr_assert_eq(hl_heap_check(h, 1), 0);
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
