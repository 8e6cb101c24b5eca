/* harden=full: a read of a freed 24-byte block faults at the read. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static int read_freed(const char *p)
{
    return p[8]; /* ACCESS */
}

int main(void)
{
    char *p = malloc(24);
    p[8] = 'x';
    free(p);
    printf("%d\n", read_freed(p));
    return 0;
}
