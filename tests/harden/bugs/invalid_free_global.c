/* EXPECT: heapledger: ERROR: invalid-free on 0x* (0-byte block, none/global) */
#include <stdlib.h>
static char table[4096];
int main(void)
{
    free(table + 1024);
    return 0;
}
