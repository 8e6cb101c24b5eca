/* A program whose use of a fixed arena is known exactly, for the tests that compare a run
 * under `heapledger record` with the same run untraced (tests/sideheap/sideheap_test.sh).
 *
 *   arena_work small
 *       malloc and free 100 bytes, then print the heap's in-use bytes (mallinfo2 uordblks):
 *       "inuse N".
 *   arena_work random ARENA_BYTES [SEED]
 *       a deterministic random workload (allocations of 1..4096 bytes into 512 slots, a third
 *       of the steps frees) run until the first allocation fails; prints
 *       "fail index I size S live R util U" where R is the bytes requested and still live
 *       when allocation I of S bytes failed and U = R / ARENA_BYTES.
 *   arena_work fork
 *       malloc 3 blocks, fork; the child (no exec) mallocs 5 and frees 4 of them, exits with
 *       _exit; the parent frees its 3 blocks after the child ended and prints both pids
 *       ("pid N" lines).
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLOTS 512

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static size_t pick_size(void)
{
    /* Mostly small, some medium, a few large: 1..64 (50 %), ..512 (35 %), ..4096 (15 %). */
    uint64_t r = next() % 100;
    size_t cap = r < 50 ? 64 : r < 85 ? 512 : 4096;
    return 1 + (size_t)(next() % cap);
}

static int run_random(size_t arena, uint64_t seed)
{
    static void *slot[SLOTS];
    static size_t len[SLOTS];
    size_t live = 0;
    rng ^= seed * 0xff51afd7ed558ccdull;
    for (unsigned long i = 0;; i++) {
        unsigned s = (unsigned)(next() % SLOTS);
        if (slot[s] && next() % 3 == 0) {
            free(slot[s]);
            live -= len[s];
            slot[s] = NULL;
            continue;
        }
        size_t n = pick_size();
        void *p = malloc(n);
        if (!p) {
            printf("fail index %lu size %zu live %zu util %.4f\n", i, n, live,
                   (double)live / (double)arena);
            return 0;
        }
        memset(p, 0x5a, n);
        if (slot[s]) {
            free(slot[s]);
            live -= len[s];
        }
        slot[s] = p;
        len[s] = n;
        live += n;
        if (i > 100000000ul) {
            printf("the arena never filled\n");
            return 1;
        }
    }
}

static int run_fork(void)
{
    void *keep[3];
    for (int i = 0; i < 3; i++)
        keep[i] = malloc(40 + 8 * (size_t)i);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        void *c[5];
        for (int i = 0; i < 5; i++)
            c[i] = malloc(200 + 8 * (size_t)i);
        for (int i = 0; i < 4; i++)
            free(c[i]);
        _exit(c[4] ? 0 : 1);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 1;
    printf("pid %d\npid %d\n", (int)getpid(), (int)pid);
    for (int i = 0; i < 3; i++)
        free(keep[i]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "small")) {
        free(malloc(100));
        struct mallinfo2 m = mallinfo2();
        printf("inuse %zu\n", m.uordblks);
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "random"))
        return run_random(strtoull(argv[2], NULL, 0), argc >= 4 ? strtoull(argv[3], NULL, 0) : 1);
    if (argc >= 2 && !strcmp(argv[1], "fork")) return run_fork();
    fprintf(stderr, "usage: arena_work small | random ARENA_BYTES [SEED] | fork\n");
    return 2;
}
