/* tests/bpf/leaky.c — a running program with a known leak, for `heapledger attach`.
 *
 * Prints "ready" and waits for SIGUSR1; then makes a known set of calls and prints "done":
 *   100 × malloc(100 + i) / free                      (no leak)
 *   calloc(10, 100) / free, posix_memalign(64, 4096) / free, aligned_alloc(256, 512) / free
 *   realloc chain: malloc(1000) → realloc 2000 → realloc 100000 → free
 *   3 × leak_site(): malloc(12345), never freed        (the known leak)
 * then waits for SIGTERM and exits 0. Built with frame pointers so stacks go past the caller.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *keep[3];

__attribute__((noinline)) void *leak_site(void)
{
    void *p = malloc(12345);
    if (p) memset(p, 1, 16);
    return p;
}

int main(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, NULL);
    printf("ready\n");
    fflush(stdout);
    int sig = 0;
    while (sigwait(&set, &sig) == 0 && sig != SIGUSR1)
        if (sig == SIGTERM) return 0;
    for (int i = 0; i < 100; i++) {
        char *p = malloc(100 + (size_t)i);
        p[0] = 1;
        free(p);
    }
    free(calloc(10, 100));
    void *m = NULL;
    if (posix_memalign(&m, 64, 4096) == 0) free(m);
    free(aligned_alloc(256, 512));
    char *r = malloc(1000);
    r = realloc(r, 2000);
    r = realloc(r, 100000);
    free(r);
    for (int i = 0; i < 3; i++)
        keep[i] = leak_site();
    printf("done\n");
    fflush(stdout);
    while (sigwait(&set, &sig) == 0 && sig != SIGTERM)
        ;
    return 0;
}
