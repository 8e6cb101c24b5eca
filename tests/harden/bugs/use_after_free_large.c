/* EXPECT: heapledger: ERROR: use-after-free on 0x* (2000000-byte block, large/mmap) */
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
    char *p = malloc(2000000);
    p[1000] = 'a';
    free(p);
    printf("%c\n", p[1000]);
    return 0;
}
