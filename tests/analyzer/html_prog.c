/* tests/analyzer/html_prog.c — the HTML report's demo and test program: what a user's own
 * program does, with known answers. Two threads each run:
 *   - config_leak(): 24 blocks of 280 bytes never freed (a leak at a known line),
 *   - parse_tokens(): 4000 temporaries of 32 bytes (freed before the next allocation),
 *   - grow_buffer(): a realloc loop from 16 bytes to 256 KiB (bytes, not count, dominate),
 *   - build_list(): a list of 300 nodes of 48 bytes, freed at the end.
 * The main thread adds one leak of 4096 bytes from main(). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct node {
    struct node *next;
    char payload[40];
};

__attribute__((noinline)) static void *config_leak(size_t n)
{
    void *p = malloc(n); /* HTML_LEAK_LINE */
    memset(p, 0x5a, n);
    return p;
}

__attribute__((noinline)) static void parse_tokens(int n)
{
    for (int i = 0; i < n; i++) {
        char *t = malloc(32);
        memset(t, i, 32);
        __asm__ volatile("" ::"r"(t) : "memory");
        free(t);
    }
}

__attribute__((noinline)) static void grow_buffer(size_t max)
{
    char *b = NULL;
    for (size_t n = 16; n <= max; n *= 2) {
        b = realloc(b, n);
        memset(b, 1, n);
    }
    free(b);
}

__attribute__((noinline)) static struct node *build_list(int n)
{
    struct node *head = NULL;
    for (int i = 0; i < n; i++) {
        struct node *x = malloc(sizeof *x);
        x->next = head;
        head = x;
    }
    return head;
}

static void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 24; i++)
        config_leak(280);
    parse_tokens(4000);
    grow_buffer(256 * 1024);
    struct node *l = build_list(300);
    while (l) {
        struct node *n = l->next;
        free(l);
        l = n;
    }
    return NULL;
}

int main(void)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    void *p = malloc(4096);
    memset(p, 0, 4096);
    return 0;
}
