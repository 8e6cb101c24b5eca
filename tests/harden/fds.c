/* The descriptors a program sees are its own: under LD_PRELOAD with stacks on (harden=1),
 * libunwind's validation pipe must not show (it used to hold fds 3 and 4 for the whole run).
 * Prints the open descriptors at main, after allocations that capture stacks (in threads
 * too), and the lowest free one; tests/harden/fds.sh compares with the run without
 * heapledger. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void list(const char *when)
{
    char line[512] = "";
    DIR *d = opendir("/proc/self/fd");
    int self = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && atoi(e->d_name) != self) {
            strncat(line, " ", sizeof line - strlen(line) - 1);
            strncat(line, e->d_name, sizeof line - strlen(line) - 1);
        }
    closedir(d);
    int lowest = open("/dev/null", O_RDONLY);
    close(lowest);
    printf("%s: open%s; lowest free %d\n", when, line, lowest);
}

static void *work(void *arg)
{
    for (int i = 0; i < 2000; i++)
        free(malloc((size_t)(i * 37 % 5000) + (size_t)arg));
    return NULL;
}

int main(void)
{
    list("at main");
    work((void *)1);
    list("after allocations");
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, work, (void *)i);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    list("after threads");
    return 0;
}
