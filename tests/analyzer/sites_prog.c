/* tests/analyzer/sites_prog.c — a program whose slow paths are known, for the per-site cycle
 * budget and the per-site diff (sites_test.sh): new_slabs() makes the first 100 allocations of
 * the 3600-byte size class (nothing else in the process uses it, so they start with a
 * tiny_new_slab), big_maps() maps 3 blocks of 8 MiB (the only large_mmap calls), grow() is
 * the only caller of realloc (64 reallocs), free_all() frees all of them. With the argument
 * "more": new_slabs() makes 200 allocations and free_all() leaves 5 of them live. */
#include <stdlib.h>
#include <string.h>

#define N_SLAB 200
#define N_BIG  3
#define N_GROW 64

static void *keep[N_SLAB + N_BIG + 1];

__attribute__((noinline)) static void new_slabs(int n)
{
    for (int i = 0; i < n; i++) {
        keep[i] = malloc(3500);
        memset(keep[i], 1, 3500);
    }
}

__attribute__((noinline)) static void big_maps(void)
{
    for (int i = 0; i < N_BIG; i++) {
        keep[N_SLAB + i] = malloc(8u << 20);
        memset(keep[N_SLAB + i], 2, 4096);
    }
}

__attribute__((noinline)) static void grow(void)
{
    char *p = NULL;
    for (int i = 1; i <= N_GROW; i++) {
        p = realloc(p, (size_t)i * 4096);
        p[0] = (char)i;
    }
    keep[N_SLAB + N_BIG] = p;
}

__attribute__((noinline)) static void free_all(int leak)
{
    for (int i = leak; i < N_SLAB + N_BIG + 1; i++)
        free(keep[i]);
}

int main(int argc, char **argv)
{
    int more = argc > 1 && !strcmp(argv[1], "more");
    new_slabs(more ? 200 : 100);
    big_maps();
    grow();
    free_all(more ? 5 : 0);
    return 0;
}
