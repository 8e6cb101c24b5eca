/* Phase-wise allocation under the preloaded allocator (adaptive caps, liballoc/tcap.h): each
 * thread allocates a batch of blocks whose sizes sweep 16..400 B, writes them, checks and
 * frees them, round after round. Then everything is freed, malloc_trim(0) runs and the heap
 * checker must find the heap consistent. Prints "tcap_phases: ok".
 * usage: tcap_phases THREADS ROUNDS BATCH */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t heapledger_check_heap(void) __attribute__((weak));

static unsigned rounds, batch;
static int bad;

static void *worker(void *arg)
{
    unsigned id = (unsigned)(size_t)arg;
    void **v = calloc(batch, sizeof *v);
    size_t *n = calloc(batch, sizeof *n);
    if (!v || !n) {
        bad = 1;
        return NULL;
    }
    size_t size = 16 + 7 * id;
    for (unsigned r = 0; r < rounds; r++) {
        for (unsigned i = 0; i < batch; i++) {
            n[i] = size;
            size = size >= 400 ? 16 : size + 13;
            v[i] = malloc(n[i]);
            if (!v[i]) {
                bad = 1;
                return NULL;
            }
            memset(v[i], (int)(i & 0xff), n[i]);
        }
        for (unsigned i = 0; i < batch; i++) {
            unsigned char *p = v[i];
            if (p[0] != (i & 0xff) || p[n[i] - 1] != (i & 0xff)) bad = 1;
        }
        for (unsigned i = 0; i < batch / 2; i++) /* FIFO half, then LIFO half */
            free(v[i]);
        for (unsigned i = batch; i > batch / 2; i--)
            free(v[i - 1]);
    }
    free(v);
    free(n);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: tcap_phases THREADS ROUNDS BATCH\n");
        return 2;
    }
    unsigned threads = (unsigned)atoi(argv[1]);
    rounds = (unsigned)atoi(argv[2]);
    batch = (unsigned)atoi(argv[3]);
    if (threads < 1 || threads > 64 || batch < 2) {
        fprintf(stderr, "tcap_phases: THREADS must be 1..64 and BATCH at least 2\n");
        return 2;
    }
    pthread_t t[64];
    for (unsigned i = 0; i < threads; i++)
        if (pthread_create(&t[i], NULL, worker, (void *)(size_t)i) != 0) return 1;
    for (unsigned i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    malloc_trim(0);
    if (heapledger_check_heap && heapledger_check_heap() != 0) {
        fprintf(stderr, "tcap_phases: heap check failed\n");
        return 1;
    }
    if (bad) {
        fprintf(stderr, "tcap_phases: a block lost its contents or malloc failed\n");
        return 1;
    }
    printf("tcap_phases: ok\n");
    return 0;
}
