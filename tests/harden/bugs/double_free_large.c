/* EXPECT: heapledger: ERROR: double-free on 0x* (1048576-byte block, large/mmap) */
#include <stdlib.h>
int main(void)
{
    char *p = malloc(1 << 20);
    free(p);
    free(p);
    return 0;
}
