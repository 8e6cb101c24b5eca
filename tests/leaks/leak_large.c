/* tests/leaks/leak_large.c — large-tier blocks (leaks_test.sh t_large): one grown by realloc
 * (mremap) and kept from a global, an aligned one kept, an aligned one lost, and a freed one
 * the large tier keeps cached (not a block): 1 definitely lost, 2 still reachable. */
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

void *keep, *keep_aligned; /* globals: the roots */

int main(void)
{
    keep = malloc(1 << 20);
    keep = realloc(keep, 4 << 20);
    void *volatile lost = memalign(65536, 1 << 20);
    memset(lost, 1, 64);
    lost = NULL;
    keep_aligned = memalign(8192, 600 << 10);
    void *volatile cached = malloc(2 << 20);
    free(cached);
    return 0;
}
