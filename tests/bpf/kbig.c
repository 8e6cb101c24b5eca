/* tests/bpf/kbig.c — large allocations whose OS mappings are known: prints "big PTR SIZE"
 * for malloc(3 MiB + 5) (written end to end), then frees it and calls malloc_trim(0) (the
 * allocator may keep freed large mappings in a cache; trimming returns them); same for
 * 5 MiB + 77. Under LD_PRELOAD=libheapledger.so each must show as one mmap containing the
 * block and one munmap of that same mapping. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    const size_t sizes[] = {(3u << 20) + 5, (5u << 20) + 77};
    for (int i = 0; i < 2; i++) {
        char *p = malloc(sizes[i]);
        if (!p) return 1;
        memset(p, 0x5a, sizes[i]);
        printf("big %lu %zu\n", (unsigned long)p, sizes[i]);
        fflush(stdout);
        free(p);
        malloc_trim(0);
    }
    return 0;
}
