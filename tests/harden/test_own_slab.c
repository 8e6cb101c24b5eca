/* tests/harden/test_own_slab.c — each thread's own tiny slabs in hardened mode (liballoc/tiny.c,
 * hl_tiny_alloc_own; harden.c takes a reuse-cache miss's slot there): two threads that
 * allocate one class in lockstep get their slots from different slabs, and a thread that
 * exits gives its slabs up, so that the next thread takes its free slots instead of a new
 * slab.
 */
#include "harden.h"
#include "harden_test.h"

#include <criterion/criterion.h>
#include <pthread.h>

#define STEPS 200
#define SIZE  40 /* one class */

static hl_heap_t *own_heap;
static pthread_barrier_t step;
static void *blocks[2][STEPS];

static void *lockstep(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    /* The thread's first allocation binds its buffers (it comes from the shared path). */
    void *first = hl_heap_malloc(own_heap, SIZE);
    cr_assert_not_null(first);
    for (int i = 0; i < STEPS; i++) {
        pthread_barrier_wait(&step); /* the two threads take turns at the class */
        if (i % 2 == (int)id) blocks[id][i] = hl_heap_malloc(own_heap, SIZE);
        pthread_barrier_wait(&step);
        if (i % 2 != (int)id) blocks[id][i] = hl_heap_malloc(own_heap, SIZE);
        cr_assert_not_null(blocks[id][i]);
    }
    hl_heap_free(own_heap, first);
    return NULL;
}

Test(own_slab, two_threads_two_slabs)
{
    own_heap = heap_with("harden=1,stacks=0");
    pthread_barrier_init(&step, NULL, 2);
    pthread_t t[2];
    for (uintptr_t i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, lockstep, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    int shared = 0;
    for (int i = 0; i < STEPS; i++)
        for (int j = 0; j < STEPS; j++)
            shared += hl_tiny_slab_of(&own_heap->tiny, blocks[0][i]) ==
                      hl_tiny_slab_of(&own_heap->tiny, blocks[1][j]);
    cr_assert_eq(shared, 0, "%d pairs of the two threads' blocks share a slab", shared);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < STEPS; i++)
            hl_heap_free(own_heap, blocks[k][i]);
    cr_assert_eq(hl_heap_check(own_heap, 1), 0);
    pthread_barrier_destroy(&step);
    hl_heap_destroy(own_heap);
}

static void *one_block(void *arg)
{
    void **out = arg;
    hl_heap_free(own_heap, hl_heap_malloc(own_heap, SIZE)); /* binds the buffers */
    *out = hl_heap_malloc(own_heap, SIZE);                  /* from the thread's own slab */
    return NULL;
}

Test(own_slab, an_exited_thread_gives_its_slab_up)
{
    own_heap = heap_with("harden=1,stacks=0");
    void *p = hl_heap_malloc(own_heap, 3000); /* another class: binds this thread's buffers */
    void *q = NULL;
    pthread_t t;
    pthread_create(&t, NULL, one_block, &q);
    pthread_join(t, NULL);
    cr_assert_not_null(q);
    void *r = hl_heap_malloc(own_heap, SIZE);
    cr_assert_not_null(r);
    cr_assert_eq(hl_tiny_slab_of(&own_heap->tiny, r), hl_tiny_slab_of(&own_heap->tiny, q),
                 "the exited thread's slab is taken, not a new one");
    hl_heap_free(own_heap, p);
    hl_heap_free(own_heap, q);
    hl_heap_free(own_heap, r);
    cr_assert_eq(hl_heap_check(own_heap, 1), 0);
    hl_heap_destroy(own_heap);
}
