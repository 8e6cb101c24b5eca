/* tests/harden/test_slot_state.c — a hardened tiny slot's state (liballoc/harden.c,
 * tiny.h): one byte per slot, 1 while allocated, set by the allocation with a plain store and
 * cleared by the free with an exchange; exactly one of two racing frees of a block passes, the
 * other is reported as a double free.
 */
#include "harden.h"
#include "harden_test.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

static uint8_t state_of(hl_heap_t *h, const void *p)
{
    hl_slab_t *s = hl_tiny_slab_of(&h->tiny, p);
    size_t idx = (size_t)((const char *)p - s->first) / s->slot_size;
    return ((const uint8_t *)s->state)[idx];
}

Test(slot_state, a_byte_per_slot)
{
    hl_heap_t *h = heap_with("harden=1,quarantine=0,stacks=0");
    char *p[8];
    for (int i = 0; i < 8; i++) {
        p[i] = hl_heap_malloc(h, 40); /* one class, consecutive slots of one slab */
        cr_assert_not_null(p[i]);
    }
    hl_slab_t *s = hl_tiny_slab_of(&h->tiny, p[0]);
    for (int i = 0; i < 8; i++) {
        cr_assert_eq(hl_tiny_slab_of(&h->tiny, p[i]), s, "the test needs one slab");
        cr_assert_eq(state_of(h, p[i]), 1, "slot %d allocated: its byte is 1", i);
    }
    hl_heap_free(h, p[3]);
    cr_assert_eq(state_of(h, p[3]), 0, "a freed slot's byte is 0");
    for (int i = 0; i < 8; i++)
        if (i != 3) cr_assert_eq(state_of(h, p[i]), 1, "neighbour %d untouched", i);
    cr_assert_eq(h->tiny.hdr_size, sizeof(hl_slab_t) + h->tiny.slab_size / HL_HSTATE_SLOT_MIN);
    for (int i = 0; i < 8; i++)
        if (i != 3) hl_heap_free(h, p[i]);
    cr_assert_eq(hl_heap_check(h, 1), 0);
    hl_heap_destroy(h);
}

/* Two threads free the same block at the same moment, many times: one free passes, the other
 * is a double free (one error each round), and the heap stays consistent. */
#define ROUNDS 400

static hl_heap_t *race_heap;
static char *volatile race_block;
static pthread_barrier_t race_go, race_done;

static void *racer(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        pthread_barrier_wait(&race_go);
        hl_heap_free(race_heap, race_block);
        pthread_barrier_wait(&race_done);
    }
    return NULL;
}

Test(slot_state, racing_frees_one_passes)
{
    race_heap = heap_with("harden=1,abort_on_error=0,stacks=0");
    int null = open("/dev/null", O_WRONLY), saved = dup(2);
    dup2(null, 2); /* ROUNDS double-free reports */
    pthread_barrier_init(&race_go, NULL, 3);
    pthread_barrier_init(&race_done, NULL, 3);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, racer, NULL);
    size_t before = hl_harden_errors();
    for (int r = 0; r < ROUNDS; r++) {
        race_block = hl_heap_malloc(race_heap, 24 + (size_t)(r % 8) * 40);
        pthread_barrier_wait(&race_go);
        pthread_barrier_wait(&race_done);
        cr_assert_eq(hl_harden_errors() - before, (size_t)r + 1, "round %d: one report", r);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    dup2(saved, 2);
    close(null);
    close(saved);
    cr_assert_eq(hl_heap_check(race_heap, 1), 0);
    hl_heap_destroy(race_heap);
}
