/* EXPECT: heapledger: ERROR: heap-overflow on 0x* (1000000-byte block, large/mmap) */
#include <stdlib.h>
int main(void)
{
    int *v = malloc(250000 * sizeof(int));
    for (int i = 0; i <= 300000; i++) /* runs past the end into the guard page */
        v[i] = i;
    free(v);
    return 0;
}
