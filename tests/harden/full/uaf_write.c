/* harden=full: a write into a freed 40-byte block faults at the write. */
#include <stdlib.h>

__attribute__((noinline)) static void write_freed(char *p)
{
    p[20] = 'y'; /* ACCESS */
}

int main(void)
{
    char *p = malloc(40);
    free(p);
    write_freed(p);
    return 0;
}
