/* EXPECT: heapledger: ERROR: invalid-usable-size on 0x* (0-byte block, none/stack) */
#include <malloc.h>
#include <stdio.h>
int main(void)
{
    char buf[32];
    printf("%zu\n", malloc_usable_size(buf));
    return 0;
}
