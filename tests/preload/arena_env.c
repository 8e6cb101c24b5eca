/* Under LD_PRELOAD with HEAPLEDGER_OPTIONS=arena=SIZE: allocate until malloc fails; the
 * failure must be NULL with ENOMEM (never a crash), and freeing everything must make the
 * same amount available again. Prints the bytes obtained in each of the two passes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t fill(void **keep, size_t cap)
{
    size_t n = 0, bytes = 0;
    for (;;) {
        size_t sz = 100 + (n * 7919) % 3000;
        errno = 0;
        void *p = malloc(sz);
        if (!p) {
            if (errno != ENOMEM) {
                printf("malloc failed with errno %d, not ENOMEM\n", errno);
                exit(1);
            }
            break;
        }
        if (n == cap) {
            printf("arena never filled\n");
            exit(1);
        }
        memset(p, 1, sz);
        keep[n++] = p;
        bytes += sz;
    }
    for (size_t i = 0; i < n; i++)
        free(keep[i]);
    return bytes;
}

int main(void)
{
    static void *keep[1 << 20];
    size_t a = fill(keep, 1 << 20), b = fill(keep, 1 << 20);
    printf("%zu %zu\n", a, b);
    return a > 0 && b >= a * 9 / 10 ? 0 : 1;
}
