/* A stale pointer freed again after its block was handed out and freed by someone else.
 * OPTIONS: harden=1,quarantine=0
 * EXPECT: heapledger: ERROR: double-free on 0x* (40-byte block, tiny/*) */
#include <stdlib.h>
int main(void)
{
    char *keep = malloc(40); /* keeps the slab alive */
    char *stale = malloc(40);
    free(stale);
    char *fresh = malloc(40); /* same slot */
    free(fresh);
    free(stale);
    free(keep);
    return 0;
}
