/* tests/analyzer/fitprog.c — a deterministic program for `heapledger replay`'s embedded
 * answers (tests/analyzer/fit_test.sh): a table of 40 records of 1000 bytes, every other one
 * freed (holes a bigger request cannot use), then 24 buffers of 4000 bytes from
 * grow_buffers(). In a 64 KiB arena the first failure is one of grow_buffers()'s requests;
 * the whole run needs about 136 KiB. */
#include <stdlib.h>
#include <string.h>

static void *table[40];
static void *buffers[24];

__attribute__((noinline)) static void *make_record(size_t n)
{
    void *p = malloc(n);
    memset(p, 1, n);
    return p;
}

__attribute__((noinline)) static void grow_buffers(void)
{
    for (int i = 0; i < 24; i++) {
        buffers[i] = malloc(4000); /* FITPROG-BUFFER */
        if (buffers[i]) memset(buffers[i], 2, 4000);
    }
}

int main(void)
{
    for (int i = 0; i < 40; i++)
        table[i] = make_record(1000);
    for (int i = 0; i < 40; i += 2) {
        free(table[i]);
        table[i] = NULL;
    }
    grow_buffers();
    for (int i = 0; i < 24; i++)
        free(buffers[i]);
    for (int i = 1; i < 40; i += 2)
        free(table[i]);
    return 0;
}
