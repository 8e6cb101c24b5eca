/* harden=full: reading the first byte past a 32-byte block faults at the read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static int read_past(const char *p, size_t n)
{
    return p[n]; /* ACCESS */
}

int main(void)
{
    char *p = malloc(32);
    memset(p, 'a', 32);
    printf("%d\n", read_past(p, 32));
    return 0;
}
