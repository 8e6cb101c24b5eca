/* tests/leaks/leak_known.c — blocks whose leak classes are known (leaks_test.sh).
 *
 *   list     a 4-node list reachable from a global: 4 still reachable (32-byte nodes)
 *   cycle    a 3-node cycle with no pointer from outside: 1 definitely lost (the lowest
 *            address), 2 indirectly lost (48-byte nodes)
 *   chain    a 64-byte head lost, pointing to a 80-byte child: 1 definitely + 1 indirectly
 *   plain    a 96-byte block whose pointer was dropped: 1 definitely lost
 *   thread   a 112-byte block whose only pointer is on a parked thread's stack: reachable
 *   reg      a 128-byte block whose only pointer is in a parked thread's register: reachable
 *   large    a 1 MiB block (large tier) lost: 1 definitely lost
 *   mid      a 8 KiB block (mid tier) reachable only from a global through an interior
 *            pointer: reachable (interior pointers count)
 *   tls      a 208-byte block whose only pointer is a __thread variable of the main thread:
 *            reachable (static TLS is a root)
 *   blocked  (argv[1] "blocked" only) a 176-byte block whose only pointer is on the stack of a
 *            thread that blocks every signal: that thread cannot be stopped, so the scan is
 *            partial (its stack is then scanned whole, conservatively: the block stays
 *            reachable)
 * Every pointer the program drops is overwritten first, so no copy stays in a register or a
 * dead stack slot of main's callees (the scan is conservative, as memcheck's).
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct node {
    struct node *next;
    char pad[24];
};

struct node *list_head; /* globals: stores the compiler must keep */
char *mid_interior;
__thread void *tls_keep;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready, done;

/* Through a volatile pointer, so the compiler keeps no copy of what it returns. */
static void *(*volatile alloc)(size_t) = malloc;

static __attribute__((noinline)) void make_list(void)
{
    for (int i = 0; i < 4; i++) {
        struct node *n = alloc(sizeof *n);
        memset(n, 0, sizeof *n);
        n->next = list_head;
        list_head = n;
    }
}

static __attribute__((noinline)) void make_cycle(void)
{
    void **a = alloc(48), **b = alloc(48), **c = alloc(48);
    memset(a, 0, 48), memset(b, 0, 48), memset(c, 0, 48);
    a[0] = b, b[0] = c, c[0] = a;
    a = b = c = NULL;
}

static __attribute__((noinline)) void make_chain(void)
{
    void **head = alloc(64);
    memset(head, 0, 64);
    head[0] = alloc(80);
    memset(head[0], 0, 80);
    head = NULL;
}

static __attribute__((noinline)) void make_plain(void)
{
    void *volatile p = alloc(96);
    memset(p, 0, 96);
    p = NULL;
}

static __attribute__((noinline)) void make_large(void)
{
    void *volatile p = alloc(1 << 20);
    memset(p, 0, 4096);
    p = NULL;
}

static __attribute__((noinline)) void make_mid(void)
{
    char *p = alloc(8192);
    memset(p, 0, 8192);
    mid_interior = p + 1000;
}

static __attribute__((noinline)) void make_tls(void)
{
    tls_keep = alloc(208);
    memset(tls_keep, 0, 208);
}

/* Parks with the block's only pointer in a stack slot. */
static void *stack_thread(void *arg)
{
    (void)arg;
    size_t n = arg ? 176 : 112;
    void *volatile slot = alloc(n);
    memset(slot, 0, n);
    pthread_mutex_lock(&mu);
    ready++;
    pthread_cond_broadcast(&cv);
    while (!done)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    return NULL;
}

/* Blocks every signal (the scan cannot stop it), then parks like stack_thread. */
static void *blocked_thread(void *arg)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    return stack_thread(arg);
}

/* Spins with the block's only pointer in r12 (never stored to memory). */
static void *reg_thread(void *arg)
{
    (void)arg;
    uintptr_t p = (uintptr_t)alloc(128);
    memset((void *)p, 0, 128);
    /* The pointer moves to r12 and every memory copy is overwritten. */
    __asm__ volatile("mov %0, %%r12" : : "r"(p) : "r12");
    p = 0;
    __atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
    for (;;)
        __asm__ volatile("pause" : : : "r12", "memory");
    return NULL;
}

/* argv[1] "nothreads": the blocks of the main thread only (for valgrind, which runs the
 * spinning thread very slowly). */
int main(int argc, char **argv)
{
    int threads = !(argc > 1 && !strcmp(argv[1], "nothreads"));
    int blocked = argc > 1 && !strcmp(argv[1], "blocked");
    setvbuf(stdout, NULL, _IONBF, 0);
    make_list();
    make_cycle();
    make_chain();
    make_plain();
    make_large();
    make_mid();
    make_tls();
    if (threads) {
        pthread_t t1, t2;
        pthread_create(&t1, NULL, stack_thread, NULL);
        pthread_create(&t2, NULL, reg_thread, NULL);
        if (blocked) {
            pthread_t t3;
            pthread_create(&t3, NULL, blocked_thread, (void *)1);
        }
        while (__atomic_load_n(&ready, __ATOMIC_SEQ_CST) < 2 + blocked)
            usleep(1000);
    }
    printf("ready\n");
    exit(0); /* threads still running: the scan stops them */
}
