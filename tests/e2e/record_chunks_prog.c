/* tests/e2e/record_chunks_prog.c — a deterministic program whose recording spans several
 * trace chunks (record_chunks_test.sh): blocks that live across chunk boundaries, frees by
 * another thread, realloc chains, leaks made in the first and in the last burst.
 *
 * usage: record_chunks_prog BURSTS ITERS PAUSE_MS
 * Prints "pid N" first. Per burst: ITERS malloc(40 + i % 64)/free pairs; every 1000th
 * iteration a 1111-byte block joins a ring of 64 (the block it replaces, allocated up to
 * 64,000 iterations before, is freed by a second thread at the end of the burst... or in a
 * later burst); every 10,000th a realloc chain 3001 → 3001 + 111·k, k = 1..4, freed. Ten
 * 5000+i-byte blocks live from the start to the end; 3 blocks of 3331 bytes leak in the first
 * burst, 5 of 2223 in the last. PAUSE_MS between bursts.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define RING 64
static void *ring[RING];
static void *to_free[RING];
static int nfree;

static void *freer(void *arg)
{
    (void)arg;
    for (int i = 0; i < nfree; i++)
        free(to_free[i]);
    nfree = 0;
    return NULL;
}

static void __attribute__((noinline)) leak(size_t size, int n)
{
    for (int i = 0; i < n; i++)
        *(volatile char *)malloc(size) = 1;
}

static void __attribute__((noinline)) chain(void)
{
    char *r = malloc(3001);
    for (int k = 1; k <= 4; k++)
        r = realloc(r, 3001 + 111 * (size_t)k);
    free(r);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: record_chunks_prog BURSTS ITERS PAUSE_MS\n");
        return 2;
    }
    int bursts = atoi(argv[1]);
    long iters = atol(argv[2]);
    long pause_ms = atol(argv[3]);
    printf("pid %d\n", (int)getpid());
    fflush(stdout);
    void *lived[10];
    for (int i = 0; i < 10; i++)
        lived[i] = malloc(5000 + (size_t)i);
    long slot = 0;
    for (int b = 0; b < bursts; b++) {
        if (b == 0) leak(3331, 3);
        for (long i = 0; i < iters; i++) {
            void *p = malloc(40 + (size_t)(i & 63));
            *(volatile char *)p = 1;
            free(p);
            if (i % 1000 == 0) {
                long k = slot++ % RING;
                if (ring[k]) to_free[nfree++] = ring[k];
                ring[k] = malloc(1111);
                if (nfree == RING) {
                    pthread_t t;
                    pthread_create(&t, NULL, freer, NULL);
                    pthread_join(t, NULL);
                }
            }
            if (i % 10000 == 0) chain();
        }
        pthread_t t;
        pthread_create(&t, NULL, freer, NULL);
        pthread_join(t, NULL);
        if (b == bursts - 1) leak(2223, 5);
        if (pause_ms > 0 && b < bursts - 1) {
            struct timespec ts = {pause_ms / 1000, (pause_ms % 1000) * 1000000};
            nanosleep(&ts, NULL);
        }
    }
    for (int i = 0; i < RING; i++)
        free(ring[i]);
    for (int i = 0; i < 10; i++)
        free(lived[i]);
    return 0;
}
