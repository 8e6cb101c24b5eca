/* Threads whose only allocator call comes during their own teardown, under LD_PRELOAD.
 *
 * glibc's exiting thread frees the thread control blocks of older cached stacks when its
 * stack cache is over its limit (__nptl_free_stacks -> _dl_deallocate_tls -> free): a
 * thread that never allocated makes its first allocator call there, after its pthread key
 * destructors have run. heapledger used to bind and register that thread's cache then, never
 * to remove it, and the next thread's registration wrote into the freed thread's memory
 * (SIGSEGV in CPython's test_threading under harden=1).
 *
 * usage: thread_exit [rounds]   — exits 0 and prints "thread_exit: ok" when all went well.
 * Modes: detached threads with big stacks that do nothing (teardown frees only), threads
 * whose only call is a free or a malloc+free in a pthread key destructor, and threads that
 * allocate normally, all mixed, a few hundred threads per round.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_int running;
static pthread_key_t late_key;
static _Atomic(void *) handoff[64];

/* A key destructor: the thread's first allocator call happens here. */
static void late_free(void *arg)
{
    if ((uintptr_t)arg & 1) {
        void *p = malloc(40);
        memset(p, 7, 40);
        free(p);
    }
    void *q = atomic_exchange(&handoff[((uintptr_t)arg >> 1) % 64], NULL);
    free(q);
}

static void *thread_main(void *arg)
{
    uintptr_t kind = (uintptr_t)arg % 4;
    if (kind == 1 || kind == 2) /* setspecific is no allocation for a key below 32 */
        pthread_setspecific(late_key, (void *)(((uintptr_t)arg << 1) | (kind == 2)));
    if (kind == 3) {
        char *p = malloc(100 + (uintptr_t)arg % 3000);
        p[0] = 1;
        free(p);
    }
    atomic_fetch_sub(&running, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 4;
    pthread_key_create(&late_key, late_free);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    /* Big stacks: glibc's 40 MiB stack cache overflows every few threads, so exiting threads
     * free older stacks' thread blocks. */
    pthread_attr_setstacksize(&attr, 12u << 20);
    uintptr_t n = 0;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < 200; i++, n++) {
            for (int k = 0; k < 64; k++) {
                void *fresh = malloc(24 + k * 40);
                void *old = atomic_exchange(&handoff[k], fresh);
                free(old);
            }
            while (atomic_load(&running) >= 8)
                usleep(100);
            atomic_fetch_add(&running, 1);
            pthread_t t;
            if (pthread_create(&t, &attr, thread_main, (void *)n) != 0) {
                fprintf(stderr, "thread_exit: pthread_create failed\n");
                return 2;
            }
        }
        while (atomic_load(&running) > 0)
            usleep(1000);
        /* Give the last threads time to finish their teardown. */
        usleep(20000);
        malloc_stats(); /* walks the thread registry */
    }
    for (int k = 0; k < 64; k++)
        free(atomic_exchange(&handoff[k], NULL));
    printf("thread_exit: ok\n");
    return 0;
}
