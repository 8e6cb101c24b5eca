/* C23 free_sized with the wrong size (the preload library provides it).
 * EXPECT: heapledger: ERROR: size-mismatch-delete on 0x* (40-byte block, tiny/*) */
#include <stdlib.h>
/* Weak: glibc 2.36 has no free_sized; the preloaded library's definition binds at load. */
extern void free_sized(void *p, size_t size) __attribute__((weak));
int main(void)
{
    char *p = malloc(40);
    if (!free_sized) return 1;
    free_sized(p, 48);
    return 0;
}
