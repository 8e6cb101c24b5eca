/* The per-thread mid cache under LD_PRELOAD (liballoc/midcache.h): generations of threads that
 * churn 4–64 KiB blocks, hand some to the next generation and exit; blocks are written and
 * checked, so a block handed out twice shows. At the end every block is freed: the bytes in
 * use (mallinfo2, after malloc_trim, which empties only the calling thread's cache and the
 * quarantine) must be back to what they were before the threads, so nothing stayed in the
 * cache of a thread that is gone.
 *
 * usage: midcache [generations]   — prints "midcache: ok|LEFT used_before=N used_after=M"; exits
 * 1 when a block changed under its owner.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 4, SLOTS = 48, HANDOFF = 8, OPS = 3000 };

static void *handoff[THREADS][HANDOFF];
static size_t handoff_n[THREADS][HANDOFF];

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void fill(void *p, size_t n, unsigned char v)
{
    memset(p, v, n);
}

static int intact(const unsigned char *p, size_t n, unsigned char v)
{
    for (size_t i = 0; i < n; i += 512)
        if (p[i] != v) return 0;
    return p[n - 1] == v;
}

static void die(const char *what)
{
    fprintf(stderr, "midcache: %s\n", what);
    exit(1);
}

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    uint64_t s = 0x9e3779b97f4a7c15ull * (id + 1);
    void *slot[SLOTS] = {0};
    size_t len[SLOTS] = {0};
    for (int i = 0; i < HANDOFF; i++) { /* the predecessor's blocks: freed by this thread */
        if (handoff[id][i] && !intact(handoff[id][i], handoff_n[id][i], (unsigned char)(i + 1)))
            die("a handed-off block changed");
        free(handoff[id][i]);
        handoff[id][i] = NULL;
    }
    for (int k = 0; k < OPS; k++) {
        unsigned i = (unsigned)(rng(&s) % SLOTS);
        if (slot[i] && !intact(slot[i], len[i], (unsigned char)(i + 7)))
            die("a live block changed");
        free(slot[i]);
        len[i] = 4096 + (size_t)(rng(&s) % (60 * 1024));
        slot[i] = malloc(len[i]);
        if (!slot[i]) die("malloc failed");
        fill(slot[i], len[i], (unsigned char)(i + 7));
    }
    for (int i = 0; i < SLOTS; i++) {
        if (i < HANDOFF) {
            handoff[id][i] = slot[i];
            handoff_n[id][i] = len[i];
            fill(slot[i], len[i], (unsigned char)(i + 1));
        } else {
            free(slot[i]);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int gens = argc > 1 ? atoi(argv[1]) : 6;
    free(malloc(100)); /* stdio and the main thread's own start-up first */
    size_t before = mallinfo2().uordblks;
    for (int g = 0; g < gens; g++) {
        pthread_t th[THREADS];
        for (uintptr_t t = 0; t < THREADS; t++)
            if (pthread_create(&th[t], NULL, worker, (void *)t) != 0) die("pthread_create");
        for (int t = 0; t < THREADS; t++)
            pthread_join(th[t], NULL);
    }
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < HANDOFF; i++)
            free(handoff[t][i]);
    malloc_trim(0); /* hardened mode: the quarantine's blocks go back (nothing else to do) */
    size_t after = mallinfo2().uordblks;
    printf("midcache: %s used_before=%zu used_after=%zu\n", after <= before + 4096 ? "ok" : "LEFT",
           before, after);
    return 0;
}
