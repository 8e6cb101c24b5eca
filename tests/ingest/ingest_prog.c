/* tests/ingest/ingest_prog.c — a real program with known allocations, for the end-to-end
 * test that records it with `heapledger record` (the real allocator and probe provider) and
 * ingests the kept trace again with `heapledger collect`.
 *
 * Sizes are distinctive so the test can count them among the C library's own allocations:
 *   100 × malloc(12345): 60 freed, 40 leaked;
 *   10 chains malloc(777) → realloc(1777) → realloc(2777) → free  (30 lifetimes);
 *   20 × calloc(1, 4321) freed by another thread.
 */
#include <pthread.h>
#include <stdlib.h>

static void *blocks[20];

static void *freer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++)
        free(blocks[i]);
    return NULL;
}

int main(void)
{
    void *p[100];
    for (int i = 0; i < 100; i++)
        p[i] = malloc(12345);
    for (int i = 0; i < 60; i++)
        free(p[i]);
    for (int i = 0; i < 10; i++) {
        void *q = malloc(777);
        q = realloc(q, 1777);
        q = realloc(q, 2777);
        free(q);
    }
    for (int i = 0; i < 20; i++)
        blocks[i] = calloc(1, 4321);
    pthread_t t;
    pthread_create(&t, NULL, freer, NULL);
    pthread_join(t, NULL);
    return p[99] != NULL ? 0 : 1;
}
