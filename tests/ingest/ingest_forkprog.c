/* tests/ingest/ingest_forkprog.c — stacks across fork and exec, under `heapledger record`.
 *
 * The parent allocates at site_a (5 × 1111 B, leaked) and site_b (4 × 2222 B), then forks
 * without exec: the child allocates at site_a again (3 × 1111 B: the same stack, so the same
 * stack id in the inherited table), at site_c (3 × 3333 B) and frees two of the parent's
 * site_b blocks. Then the parent fork+execs this program as "other", a new image whose stack
 * ids start afresh: it allocates at other_site (4 × 4444 B), reusing the ids the parent gave
 * site_a and site_b for other stacks. Every block's stack must be its own process's (or, in
 * the child, its parent's) and name its own site.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *keep[32];
static int nkeep;

void *__attribute__((noinline)) site_a(void)
{
    return keep[nkeep++] = malloc(1111);
}
void *__attribute__((noinline)) site_b(void)
{
    return keep[nkeep++] = malloc(2222);
}
void *__attribute__((noinline)) site_c(void)
{
    return keep[nkeep++] = malloc(3333);
}
void *__attribute__((noinline)) other_site(void)
{
    return keep[nkeep++] = malloc(4444);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "other")) {
        for (int i = 0; i < 4; i++)
            other_site();
        return 0;
    }
    for (int i = 0; i < 5; i++)
        site_a();
    void *b[4];
    for (int i = 0; i < 4; i++)
        b[i] = site_b();
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 3; i++)
            site_a();
        for (int i = 0; i < 3; i++)
            site_c();
        free(b[0]);
        free(b[1]);
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    pid = fork();
    if (pid == 0) {
        execl(argv[0], argv[0], "other", (char *)NULL);
        _exit(127);
    }
    waitpid(pid, &st, 0);
    return 0;
}
