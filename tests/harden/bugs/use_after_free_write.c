/* EXPECT: heapledger: ERROR: use-after-free on 0x* (64-byte block, tiny/*) */
#include <stdlib.h>
#include <string.h>
int main(void)
{
    char *p = malloc(64);
    free(p);
    strcpy(p + 8, "late");
    for (int i = 0; i < 40000; i++) /* more than the quarantine holds */
        free(malloc(100));
    return 0;
}
