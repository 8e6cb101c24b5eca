/* tests/harden/entry_stacks.c — every entry point's stacks start at the program's call
 * (entry_stacks.sh). Each block is allocated in its own alloc_<entry> function, freed in a
 * free_<how> function and freed again in dfree: run under harden=1,abort_on_error=0, each
 * double-free report's stacks must begin in those three functions. */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

void _ZdlPvm(void *p, size_t n);                 /* operator delete(void *, size_t) */
void *_ZnwmSt11align_val_t(size_t n, size_t al); /* operator new(size_t, align_val_t) */
void *reallocarray(void *p, size_t n, size_t size);

#define NI __attribute__((noinline))

NI void *alloc_malloc_tiny(void)
{
    return malloc(24);
}
NI void *alloc_malloc_mid(void)
{
    return malloc(9000);
}
NI void *alloc_malloc_large(void)
{
    return malloc(300000);
}
NI void *alloc_calloc(void)
{
    return calloc(3, 8);
}
NI void *alloc_realloc_null(void)
{
    return realloc(NULL, 40);
}
NI void *alloc_realloc_move(void *p)
{
    return realloc(p, 2000);
}
NI void *alloc_reallocarray(void)
{
    return reallocarray(NULL, 5, 8);
}
NI void *alloc_posix_memalign(void)
{
    void *p = NULL;
    return posix_memalign(&p, 64, 100) == 0 ? p : NULL;
}
NI void *alloc_aligned_alloc(void)
{
    return aligned_alloc(64, 128);
}
NI void *alloc_memalign(void)
{
    return memalign(32, 50);
}
NI void *alloc_valloc(void)
{
    return valloc(100);
}
NI void *alloc_pvalloc(void)
{
    return pvalloc(100);
}
NI void *alloc_new_aligned(void)
{
    return _ZnwmSt11align_val_t(48, 64);
}

NI void free_free(void *p)
{
    free(p);
}
NI void free_delete_sized(void *p, size_t n)
{
    _ZdlPvm(p, n);
}
NI void free_realloc0(void *p)
{
    (void)!realloc(p, 0);
}
NI void dfree(void *p)
{
    free(p);
}

int main(void)
{
    struct {
        void *p;
        int how; /* 0 free, 1 sized delete, 2 realloc(p, 0) */
        size_t n;
    } b[] = {
        {alloc_malloc_tiny(), 0, 24},      {alloc_malloc_mid(), 1, 9000},
        {alloc_malloc_large(), 0, 300000}, {alloc_calloc(), 2, 24},
        {alloc_realloc_null(), 0, 40},     {alloc_realloc_move(malloc(16)), 0, 2000},
        {alloc_reallocarray(), 0, 40},     {alloc_posix_memalign(), 0, 100},
        {alloc_aligned_alloc(), 0, 128},   {alloc_memalign(), 0, 50},
        {alloc_valloc(), 0, 100},          {alloc_pvalloc(), 0, 4096},
        {alloc_new_aligned(), 0, 48},
    };
    for (size_t i = 0; i < sizeof b / sizeof *b; i++) {
        if (!b[i].p) {
            fprintf(stderr, "entry_stacks: allocation %zu failed\n", i);
            return 1;
        }
        if (b[i].how == 0) free_free(b[i].p);
        if (b[i].how == 1) free_delete_sized(b[i].p, b[i].n);
        if (b[i].how == 2) free_realloc0(b[i].p);
        dfree(b[i].p);
    }
    return 0;
}
