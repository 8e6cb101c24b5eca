/* tests/analyzer/leaky.c — a small program with known allocations for the analyzer's
 * end-to-end test: 3 leaked blocks of 100 bytes from leak_here(), 5 temporary blocks of
 * 200 bytes from temp_here(), one 64 KiB mid block freed, and a realloc chain. Prints the
 * address of the first leaked block (for `heapledger history`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void *leak_here(size_t n)
{
    void *p = malloc(n);
    memset(p, 0xab, n);
    return p;
}

__attribute__((noinline)) static void temp_here(size_t n)
{
    char *p = malloc(n);
    memset(p, 1, n);
    __asm__ volatile("" ::"r"(p) : "memory");
    free(p);
}

int main(void)
{
    void *first = NULL;
    for (int i = 0; i < 3; i++) {
        void *p = leak_here(100);
        if (!first) first = p;
    }
    for (int i = 0; i < 5; i++)
        temp_here(200);
    char *mid = malloc(64 * 1024);
    memset(mid, 2, 64 * 1024);
    free(mid);
    char *grow = NULL;
    for (size_t n = 16; n <= 4096; n *= 2)
        grow = realloc(grow, n);
    free(grow);
    printf("%p\n", first);
    return 0;
}
