/* tests/analyzer/supp_prog.c — a program whose own leaks are known exactly, next to the C
 * runtime's blocks that are never freed by design, for the suppression test
 * (tests/analyzer/supp_test.sh): 2 blocks of 100 bytes from leak_mine(), 1 block of 100
 * bytes from leak_lib() (the "user suppression" target); the runtime's: the stdout buffer
 * (printf), one DTV per thread (pthread_create), locale data (setlocale), setenv's string. */
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static __thread char tls_buf[256];
static void *volatile keep[3];

__attribute__((noinline)) static void *leak_mine(void)
{
    void *p = malloc(100);
    memset(p, 1, 100);
    return p;
}

__attribute__((noinline)) static void *leak_lib(void)
{
    void *p = malloc(100);
    memset(p, 2, 100);
    return p;
}

static void *worker(void *arg)
{
    tls_buf[0] = 1;
    return arg;
}

int main(void)
{
    setlocale(LC_ALL, "C.UTF-8");
    setenv("HL_SUPP_TEST", "1", 1);
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    keep[0] = leak_mine();
    keep[1] = leak_mine();
    keep[2] = leak_lib();
    printf("done\n");
    return 0;
}
