/* Stress test for the preloaded allocator: random sizes 0-3 MiB with content checks,
 * cross-thread frees and reallocs through a shared exchange, thread churn, and fork while
 * other threads allocate. Exits non-zero (with a message) on the first corrupted block.
 *
 * usage: stress [seconds-scale [workers [iterations]]]
 *   default 1, 4 and 200000 x scale operations per worker: a few seconds on 2 cores
 */
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXCHANGE 4096
static _Atomic(unsigned char *) exchange[EXCHANGE];
static atomic_int stop;
static int scale = 1;
static long iterations; /* per worker; 0: 200000 x scale */

typedef struct {
    uint64_t s;
} rng_t;

static uint64_t rnd(rng_t *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}

/* A block stores its size in its first 8 bytes (when it has room) and a pattern after it. */
static size_t pick_size(rng_t *r)
{
    uint64_t x = rnd(r) % 1000;
    if (x < 700) return (size_t)(rnd(r) % 256);
    if (x < 950) return (size_t)(rnd(r) % 4096);
    if (x < 995) return (size_t)(rnd(r) % 300000);
    return (size_t)(rnd(r) % (3u << 20));
}

static unsigned char *make_block(rng_t *r)
{
    size_t n = pick_size(r) + 9;
    unsigned char *p = (rnd(r) % 16 == 0) ? calloc(1, n) : malloc(n);
    if (!p) {
        fprintf(stderr, "stress: allocation of %zu failed\n", n);
        exit(3);
    }
    memcpy(p, &n, 8);
    unsigned char v = (unsigned char)((uintptr_t)p >> 4);
    /* Touch the ends and a stride in between, so large blocks stay cheap. */
    for (size_t i = 8; i < n; i += (n > 8192 ? 4093 : 1))
        p[i] = v;
    p[n - 1] = v;
    return p;
}

static void check_block(unsigned char *p, const char *where)
{
    size_t n;
    memcpy(&n, p, 8);
    unsigned char v = (unsigned char)((uintptr_t)p >> 4);
    int bad = n < 9 || n > (3u << 20) + 9 || p[n - 1] != v;
    for (size_t i = 8; !bad && i < n; i += (n > 8192 ? 4093 : 1))
        bad = p[i] != v;
    if (bad) {
        fprintf(stderr, "stress: corrupted block %p (size %zu) found %s\n", (void *)p, n, where);
        exit(4);
    }
    if (malloc_usable_size(p) < n) {
        fprintf(stderr, "stress: usable size %zu < %zu\n", malloc_usable_size(p), n);
        exit(5);
    }
}

static unsigned char *grow(rng_t *r, unsigned char *p)
{
    size_t n;
    memcpy(&n, p, 8);
    size_t m = pick_size(r) + 9;
    unsigned char *q = realloc(p, m);
    if (!q) exit(6);
    unsigned char ov = (unsigned char)((uintptr_t)p >> 4), nv = (unsigned char)((uintptr_t)q >> 4);
    size_t keep = n < m ? n : m;
    for (size_t i = 8; i < keep; i += (n > 8192 ? 4093 : 1))
        if (q[i] != ov) {
            fprintf(stderr, "stress: realloc lost byte %zu (%zu -> %zu)\n", i, n, m);
            exit(7);
        }
    memcpy(q, &m, 8);
    for (size_t i = 8; i < m; i += (m > 8192 ? 4093 : 1))
        q[i] = nv;
    q[m - 1] = nv;
    return q;
}

static void *worker(void *arg)
{
    rng_t r = {(uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1};
    enum { LOCAL = 512 };
    unsigned char *local[LOCAL] = {0};
    long iters = iterations ? iterations : 200000L * scale;
    for (long it = 0; it < iters && !atomic_load(&stop); it++) {
        unsigned k = (unsigned)(rnd(&r) % LOCAL);
        uint64_t op = rnd(&r) % 10;
        if (local[k]) {
            check_block(local[k], "locally");
            if (op < 2) {
                local[k] = grow(&r, local[k]);
                continue;
            }
            if (op < 5) {
                /* Hand it to whichever thread picks up this exchange slot. */
                unsigned char *old = atomic_exchange(&exchange[rnd(&r) % EXCHANGE], local[k]);
                local[k] = NULL;
                if (old) {
                    check_block(old, "after a cross-thread handoff");
                    if (op == 4) /* a block of another thread, resized here and kept */
                        local[k] = grow(&r, old);
                    else
                        free(old);
                }
                continue;
            } else {
                free(local[k]);
            }
            local[k] = NULL;
        } else {
            local[k] = make_block(&r);
        }
    }
    for (unsigned k = 0; k < LOCAL; k++)
        if (local[k]) {
            check_block(local[k], "at thread end");
            free(local[k]);
        }
    return NULL;
}

/* Short-lived threads that leave blocks behind in the exchange for others to free. */
static void *churn(void *arg)
{
    rng_t r = {(uint64_t)(uintptr_t)arg + 77};
    for (int i = 0; i < 200; i++) {
        unsigned char *p = make_block(&r);
        unsigned char *old = atomic_exchange(&exchange[rnd(&r) % EXCHANGE], p);
        if (old) {
            check_block(old, "in a churn thread");
            free(old);
        }
    }
    return NULL;
}

static int fork_child_work(void)
{
    rng_t r = {12345};
    unsigned char *keep[256] = {0};
    for (int i = 0; i < 20000; i++) {
        unsigned k = (unsigned)(rnd(&r) % 256);
        if (keep[k]) {
            check_block(keep[k], "in a fork child");
            free(keep[k]);
        }
        keep[k] = make_block(&r);
    }
    for (int k = 0; k < 256; k++)
        free(keep[k]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1) scale = atoi(argv[1]) > 0 ? atoi(argv[1]) : 1;
    enum { MAX_WORKERS = 64 };
    int workers = argc > 2 ? atoi(argv[2]) : 4;
    if (workers < 1 || workers > MAX_WORKERS) {
        fprintf(stderr, "stress: workers must be 1..%d\n", MAX_WORKERS);
        return 2;
    }
    if (argc > 3) iterations = atol(argv[3]);
    pthread_t w[MAX_WORKERS];
    for (long i = 0; i < workers; i++)
        pthread_create(&w[i], NULL, worker, (void *)(i + 1));

    /* Thread churn and forks while the workers run. */
    for (long round = 0; round < 20L * scale; round++) {
        pthread_t c[4];
        for (long i = 0; i < 4; i++)
            pthread_create(&c[i], NULL, churn, (void *)(round * 4 + i));
        if (round % 4 == 0) {
            pid_t pid = fork();
            if (pid == 0) _exit(fork_child_work());
            int st;
            if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                fprintf(stderr, "stress: fork child failed (status %#x)\n", st);
                return 8;
            }
        }
        for (int i = 0; i < 4; i++)
            pthread_join(c[i], NULL);
    }
    for (int i = 0; i < workers; i++)
        pthread_join(w[i], NULL);
    for (unsigned i = 0; i < EXCHANGE; i++) {
        unsigned char *p = atomic_exchange(&exchange[i], NULL);
        if (p) {
            check_block(p, "in the final sweep");
            free(p);
        }
    }
    printf("stress: ok\n");
    return 0;
}
