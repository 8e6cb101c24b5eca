/* tests/ingest/counts_prog.c — a program with every kind of operation the counts must
 * agree on (tests/ingest/counts_test.sh): 8 + 1 + 1 + 1 allocs (one failing), 6 frees,
 * 5 reallocs (realloc(NULL, n), in place, moving, realloc(p, 0), one failing). */
#include <stdint.h>
#include <stdlib.h>

static void *volatile sink;

int main(void)
{
    void *a[8];
    for (int i = 0; i < 8; i++)
        a[i] = malloc(24 + (size_t)i);
    for (int i = 0; i < 4; i++)
        free(a[i]);
    char *r = realloc(NULL, 40);    /* realloc(NULL, n) */
    r = realloc(r, 30);             /* in place */
    r = realloc(r, 5000);           /* moves */
    sink = realloc(r, 0);           /* frees r, returns NULL */
    sink = malloc((size_t)1 << 62); /* fails */
    void *keep = malloc(100);
    sink = realloc(keep, (size_t)1 << 62); /* fails: keep stays live */
    free(keep);
    void *c = calloc(4, 8);
    sink = c;
    free(c);
    return 0;
}
