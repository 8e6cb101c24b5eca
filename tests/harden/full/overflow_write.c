/* harden=full: writing one byte past a 64-byte block faults at the write. */
#include <stdlib.h>

__attribute__((noinline)) static void fill(char *p, size_t n)
{
    for (size_t i = 0; i <= n; i++) /* one too many */
        p[i] = 'z';                 /* ACCESS */
}

int main(void)
{
    char *p = malloc(64);
    fill(p, 64);
    free(p);
    return 0;
}
