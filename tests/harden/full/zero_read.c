/* harden=full: any read of a malloc(0) block faults. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static int peek(const char *p)
{
    return *p; /* ACCESS */
}

int main(void)
{
    char *p = malloc(0);
    printf("%d\n", peek(p));
    return 0;
}
