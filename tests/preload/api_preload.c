/* The malloc family under LD_PRELOAD=libheapledger.so: glibc's semantics, checked through the
 * real exported symbols. The test runner itself (Criterion) also runs on the allocator. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* C23 functions this glibc does not have: resolved at run time from the preloaded library. */
typedef void (*free_sized_fn)(void *, size_t);
typedef void (*free_aligned_sized_fn)(void *, size_t, size_t);

/* Sizes the compiler cannot see through (it would reject the overflowing calls). */
static volatile size_t big_half = SIZE_MAX / 2, big_eighth = SIZE_MAX / 8,
                       big_quarter = SIZE_MAX / 4;
static volatile size_t size_max = SIZE_MAX;

static unsigned header_byte(const void *p)
{
    volatile uintptr_t a = (uintptr_t)p - 1;
    return *(const unsigned char *)a;
}

Test(preload, library_is_preloaded)
{
    const char *(*version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "heapledger_version");
    cr_assert_not_null(version, "run this test with LD_PRELOAD=libheapledger.so");
    cr_assert_str_not_empty(version());
    void *p = malloc(24);
    cr_assert_eq(header_byte(p) & 0xE0, 0xA0, "malloc is heapledger's");
    free(p);
}

Test(preload, alignment_and_usable_size)
{
    for (size_t n = 0; n < 5000000; n = n * 3 + 1) {
        void *p = malloc(n);
        cr_assert_not_null(p);
        cr_assert_eq((uintptr_t)p % 16, 0);
        cr_assert_geq(malloc_usable_size(p), n);
        free(p);
    }
    cr_assert_eq(malloc_usable_size(NULL), 0);
}

Test(preload, posix_memalign_errors)
{
    void *p = (void *)1;
    cr_assert_eq(posix_memalign(&p, 3, 10), EINVAL);
    cr_assert_eq(posix_memalign(&p, 4, 10), EINVAL, "not a multiple of sizeof(void *)");
    cr_assert_eq(p, (void *)1, "untouched on error");
    errno = 0;
    cr_assert_eq(posix_memalign(&p, 64, big_half), ENOMEM);
    cr_assert_eq(errno, 0, "posix_memalign leaves errno alone");
    for (size_t a = sizeof(void *); a <= (4u << 20); a <<= 1) {
        cr_assert_eq(posix_memalign(&p, a, 100), 0);
        cr_assert_eq((uintptr_t)p % a, 0);
        free(p);
    }
}

Test(preload, aligned_alloc_memalign_valloc_pvalloc)
{
    errno = 0;
    cr_assert_null(aligned_alloc(48, 100));
    cr_assert_eq(errno, EINVAL);
    void *p = aligned_alloc(256, 1000);
    cr_assert_eq((uintptr_t)p % 256, 0);
    free(p);
    p = memalign(48, 100); /* rounded up to 64 */
    cr_assert_eq((uintptr_t)p % 64, 0);
    free(p);
    size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    p = valloc(10);
    cr_assert_eq((uintptr_t)p % ps, 0);
    free(p);
    p = pvalloc(0);
    cr_assert_eq((uintptr_t)p % ps, 0);
    cr_assert_geq(malloc_usable_size(p), ps);
    free(p);
}

Test(preload, overflow_checks)
{
    errno = 0;
    cr_assert_null(calloc(big_eighth, 16));
    cr_assert_eq(errno, ENOMEM);
    void *p = malloc(10);
    errno = 0;
    void *q = reallocarray(p, big_quarter, 8);
    cr_assert_null(q);
    cr_assert_eq(errno, ENOMEM);
    /* p is still valid after the failed call (the compiler cannot know it failed). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuse-after-free"
    q = reallocarray(p, 10, 10);
#pragma GCC diagnostic pop
    cr_assert_not_null(q);
    free(q);
    errno = 0;
    cr_assert_null(malloc(size_max));
    cr_assert_eq(errno, ENOMEM);
}

Test(preload, malloc_zero_and_realloc_zero)
{
    void *a = malloc(0), *b = malloc(0);
    cr_assert_not_null(a);
    cr_assert_neq(a, b);
    free(a);
    cr_assert_null(realloc(b, 0), "realloc(p, 0) frees, returns NULL");
    void *c = realloc(NULL, 100);
    cr_assert_not_null(c);
    free(c);
}

Test(preload, sized_frees_trim_and_info)
{
    void *blocks[2000];
    for (int i = 0; i < 2000; i++)
        blocks[i] = malloc(3000);
    struct mallinfo2 m = mallinfo2();
    cr_assert_geq(m.uordblks, 2000u * 3000u);
    cr_assert_gt(m.arena, 0);
    free_sized_fn free_sized = (free_sized_fn)dlsym(RTLD_DEFAULT, "free_sized");
    free_aligned_sized_fn free_aligned_sized =
        (free_aligned_sized_fn)dlsym(RTLD_DEFAULT, "free_aligned_sized");
    cr_assert_not_null(free_sized);
    cr_assert_not_null(free_aligned_sized);
    for (int i = 0; i < 2000; i++)
        free_sized(blocks[i], 3000);
    void *q = aligned_alloc(64, 640);
    free_aligned_sized(q, 64, 640);
    cr_assert_eq(malloc_trim(0), 1);
    free(NULL);
}
