/* tests/e2e/record_known.c — a program with known allocations, recorded by record_test.sh
 * under the real libheapledger.so. Sizes are odd so that no library allocation is mistaken
 * for ours. Expected rows (pid of this program, see record_test.sh t_known):
 *   per size  13, 57, 333, 1023, 4097: 100 blocks each, all freed (same thread)
 *             100003, 1048583: 5 blocks each, all freed (mid/large tiers)
 *   cross     48 + 1000 blocks of 4049 bytes allocated by the main thread, freed by another
 *   realloc   one chain: malloc(3001) then realloc to 3001 + 111*k, k = 1..10, then free
 *   leaks     7 blocks of 777 bytes never freed
 *   calloc    10 × calloc(3, 333+1) = 1002 bytes, freed
 * With the argument "fork", the program first forks (without exec) and both processes do all
 * of the above (the parent waits for the child).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CROSS 1000
static void *cross[CROSS];

static void *freer(void *arg)
{
    (void)arg;
    for (int i = 0; i < CROSS; i++)
        free(cross[i]);
    return NULL;
}

int main(int argc, char **argv)
{
    pid_t child = -1;
    if (argc > 1 && !strcmp(argv[1], "fork")) child = fork();
    static const size_t sizes[] = {13, 57, 333, 1023, 4097};
    void *p[100];
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        for (int i = 0; i < 100; i++)
            p[i] = malloc(sizes[s]);
        for (int i = 0; i < 100; i++)
            free(p[i]);
    }
    static const size_t big[] = {100003, 1048583};
    for (size_t s = 0; s < 2; s++) {
        for (int i = 0; i < 5; i++)
            p[i] = malloc(big[s]);
        for (int i = 0; i < 5; i++)
            free(p[i]);
    }
    for (int i = 0; i < CROSS; i++)
        cross[i] = malloc(4049);
    pthread_t t;
    pthread_create(&t, NULL, freer, NULL);
    pthread_join(t, NULL);
    void *r = malloc(3001);
    for (int k = 1; k <= 10; k++)
        r = realloc(r, 3001 + 111 * (size_t)k);
    free(r);
    for (int i = 0; i < 7; i++)
        p[i] = malloc(777);
    for (int i = 0; i < 10; i++)
        free(calloc(3, 334));
    printf("pid %d leaked %p\n", (int)getpid(), p[0]);
    if (child > 0) waitpid(child, NULL, 0);
    return 0;
}
