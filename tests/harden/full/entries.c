/* harden=full: every allocation entry point hands out a guarded block; reading one byte past
 * the end (past the size rounded up to the alignment) faults. argv[1] names the entry point. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static int read_at(const char *p, size_t i)
{
    return p[i]; /* ACCESS */
}

int main(int argc, char **argv)
{
    const char *e = argc > 1 ? argv[1] : "malloc";
    char *p = NULL;
    size_t n = 48;
    if (!strcmp(e, "malloc")) p = malloc(n);
    if (!strcmp(e, "calloc")) p = calloc(3, 16);
    if (!strcmp(e, "realloc")) p = realloc(malloc(8), n);
    if (!strcmp(e, "reallocarray")) p = reallocarray(NULL, 6, 8);
    if (!strcmp(e, "memalign")) p = memalign(64, n = 128);
    if (!strcmp(e, "aligned_alloc")) p = aligned_alloc(256, n = 512);
    if (!strcmp(e, "posix_memalign") && posix_memalign((void **)&p, 32, n = 96) != 0) p = NULL;
    if (!strcmp(e, "valloc")) p = valloc(n = 4096);
    if (!strcmp(e, "pvalloc")) p = pvalloc(n = 4096);
    if (!p) return 2;
    if (!strcmp(e, "calloc") && (p[0] || p[47])) return 3;
    printf("%d\n", read_at(p, n));
    return 0;
}
