/* Every entry point of the malloc family refuses what no heap can serve, in every mode.
 *
 * Run under LD_PRELOAD=libheapledger.so with each HEAPLEDGER_OPTIONS of
 * tests/preload/absurd_sizes.sh (harden, every guard mode, arena, rotate and their
 * combinations): one Criterion test per entry point walks a table of absurd sizes (SIZE_MAX,
 * SIZE_MAX - k, 2^63 and its neighbours, 2^62, overflowing products) and bad alignments. The
 * expected result is the default heap's, which is glibc's (NULL and ENOMEM, EINVAL for a bad
 * alignment) except where docs/hardening.md says otherwise: posix_memalign leaves errno alone
 * and aligned_alloc rejects an alignment that is not a power of two (glibc 2.38's rule).
 * With harden=1 the old bug returned a 15-byte block for every size >= 2^63.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define K(x) ((size_t)(x))
/* volatile: the compiler must not fold or reject the calls. */
static volatile size_t sizes[] = {
    SIZE_MAX,
    SIZE_MAX - 1,
    SIZE_MAX - 15,
    SIZE_MAX - 16,
    SIZE_MAX - 47,
    SIZE_MAX - 48,
    SIZE_MAX - 4095,
    SIZE_MAX - 4096,
    SIZE_MAX - 65536,
    K(1) << 63,
    (K(1) << 63) - 1,
    (K(1) << 63) + 1,
    (K(1) << 63) - 48,
    (K(1) << 63) - 4096,
    K(1) << 62,
    (K(1) << 62) + 4096,
    SIZE_MAX / 2 + 4096,
    K(1) << 48,
};
#define NSIZES (sizeof sizes / sizeof sizes[0])
static volatile size_t pairs[][2] = {
    {SIZE_MAX, 2},         {2, SIZE_MAX},   {K(1) << 32, K(1) << 32}, {K(1) << 62, 4},
    {3, SIZE_MAX / 3 + 1}, {K(1) << 63, 1}, {1, K(1) << 63},          {SIZE_MAX, SIZE_MAX},
};
#define NPAIRS (sizeof pairs / sizeof pairs[0])

/* The call failed with NULL and ENOMEM, and left nothing behind. */
#define expect_enomem(p, what, n)                                                                  \
    do {                                                                                           \
        cr_expect_null((p), "%s(%#zx) must fail, got %p", what, (size_t)(n), (p));                 \
        cr_expect_eq(errno, ENOMEM, "%s(%#zx): errno %d, want ENOMEM", what, (size_t)(n), errno);  \
    } while (0)

Test(absurd, library_is_preloaded)
{
    cr_assert_not_null(dlsym(RTLD_DEFAULT, "heapledger_version"),
                       "run this test with LD_PRELOAD=libheapledger.so");
}

Test(absurd, malloc)
{
    for (size_t i = 0; i < NSIZES; i++) {
        errno = 0;
        void *p = malloc(sizes[i]);
        expect_enomem(p, "malloc", sizes[i]);
    }
}

Test(absurd, calloc)
{
    for (size_t i = 0; i < NSIZES; i++) {
        errno = 0;
        void *p = calloc(1, sizes[i]);
        expect_enomem(p, "calloc(1, n)", sizes[i]);
        errno = 0;
        p = calloc(sizes[i], 1);
        expect_enomem(p, "calloc(n, 1)", sizes[i]);
    }
    for (size_t i = 0; i < NPAIRS; i++) {
        errno = 0;
        void *p = calloc(pairs[i][0], pairs[i][1]);
        expect_enomem(p, "calloc(product)", pairs[i][0]);
    }
}

/* realloc: NULL and ENOMEM, and the old block is intact and still owned. */
Test(absurd, realloc)
{
    for (size_t i = 0; i < NSIZES; i++) {
        size_t olds[] = {10, 600, 5000, 300000};
        for (size_t k = 0; k < 4; k++) {
            char *old = malloc(olds[k]);
            cr_assert_not_null(old);
            memset(old, 0x5a, olds[k]);
            errno = 0;
            void *p = realloc(old, sizes[i]);
            expect_enomem(p, "realloc", sizes[i]);
            if (p) {
                free(p);
                continue;
            }
            cr_expect_eq(old[0], 0x5a);
            cr_expect_eq(old[olds[k] - 1], 0x5a);
            cr_expect_geq(malloc_usable_size(old), olds[k]);
            free(old);
        }
        errno = 0;
        void *p = realloc(NULL, sizes[i]);
        expect_enomem(p, "realloc(NULL)", sizes[i]);
    }
}

Test(absurd, reallocarray)
{
    for (size_t i = 0; i < NPAIRS; i++) {
        char *old = malloc(100);
        cr_assert_not_null(old);
        errno = 0;
        void *p = reallocarray(old, pairs[i][0], pairs[i][1]);
        expect_enomem(p, "reallocarray", pairs[i][0]);
        free(p ? p : old);
        errno = 0;
        p = reallocarray(NULL, pairs[i][0], pairs[i][1]);
        expect_enomem(p, "reallocarray(NULL)", pairs[i][0]);
    }
    for (size_t i = 0; i < NSIZES; i++) {
        errno = 0;
        void *p = reallocarray(NULL, 1, sizes[i]);
        expect_enomem(p, "reallocarray(NULL, 1, n)", sizes[i]);
    }
}

Test(absurd, posix_memalign)
{
    static const size_t aligns[] = {8, 16, 64, 4096, 65536, 1 << 21};
    for (size_t i = 0; i < NSIZES; i++)
        for (size_t a = 0; a < sizeof aligns / sizeof aligns[0]; a++) {
            void *out = (void *)0x1234;
            errno = 0;
            int rc = posix_memalign(&out, aligns[a], sizes[i]);
            cr_expect_eq(rc, ENOMEM, "posix_memalign(%zu, %#zx) = %d", aligns[a], sizes[i], rc);
            cr_expect_eq(out, (void *)0x1234, "*memptr untouched on failure");
            cr_expect_eq(errno, 0, "posix_memalign leaves errno alone");
        }
    /* Bad alignments: EINVAL, whatever the size. */
    static volatile size_t bad[] = {0, 1, 2, 4, 3, 24, 48, SIZE_MAX, (K(1) << 63) + 8};
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        void *out = (void *)0x1234;
        int rc = posix_memalign(&out, bad[b], 16);
        cr_expect_eq(rc, EINVAL, "posix_memalign(%#zx, 16) = %d", bad[b], rc);
        cr_expect_eq(out, (void *)0x1234);
    }
    /* An alignment no heap can serve: 2^63 (a power of two). */
    void *out = (void *)0x1234;
    cr_expect_eq(posix_memalign(&out, K(1) << 63, 16), ENOMEM);
}

/* memalign and aligned_alloc: huge sizes ENOMEM; huge alignments EINVAL (or ENOMEM for 2^63). */
static void aligned_family(void *(*fn)(size_t, size_t), const char *what, int strict_pow2)
{
    static const size_t aligns[] = {16, 32, 64, 4096, 65536, 1 << 21};
    for (size_t i = 0; i < NSIZES; i++)
        for (size_t a = 0; a < sizeof aligns / sizeof aligns[0]; a++) {
            errno = 0;
            void *p = fn(aligns[a], sizes[i]);
            expect_enomem(p, what, sizes[i]);
        }
    static volatile size_t huge_align[] = {SIZE_MAX, SIZE_MAX - 15, (K(1) << 63) + 1};
    for (size_t b = 0; b < sizeof huge_align / sizeof huge_align[0]; b++) {
        errno = 0;
        void *p = fn(huge_align[b], 16);
        cr_expect_null(p, "%s(align %#zx)", what, huge_align[b]);
        cr_expect_eq(errno, EINVAL, "%s(align %#zx): errno %d", what, huge_align[b], errno);
    }
    errno = 0;
    void *p = fn(K(1) << 63, 16);
    expect_enomem(p, what, K(1) << 63);
    errno = 0;
    p = fn(3, 16);
    if (strict_pow2) {
        cr_expect_null(p, "%s(3, 16): not a power of two", what);
        cr_expect_eq(errno, EINVAL);
    } else {
        cr_expect_not_null(p, "%s(3, 16) rounds the alignment up", what);
        free(p);
    }
}

Test(absurd, memalign)
{
    aligned_family(memalign, "memalign", 0);
}
Test(absurd, aligned_alloc)
{
    aligned_family(aligned_alloc, "aligned_alloc", 1);
}

Test(absurd, valloc_pvalloc)
{
    for (size_t i = 0; i < NSIZES; i++) {
        errno = 0;
        void *p = valloc(sizes[i]);
        expect_enomem(p, "valloc", sizes[i]);
        errno = 0;
        p = pvalloc(sizes[i]);
        expect_enomem(p, "pvalloc", sizes[i]);
    }
}

/* glibc's internal names and heapledger's C23 frees (nothing to refuse: they only must not
 * take an absurd size for a real one when it does not match, which harden=1 reports). */
Test(absurd, libc_names)
{
    void *(*lm)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "__libc_malloc");
    void *(*lma)(size_t, size_t) =
        (void *(*)(size_t, size_t))dlsym(RTLD_DEFAULT, "__libc_memalign");
    cr_assert_not_null(lm);
    cr_assert_not_null(lma);
    for (size_t i = 0; i < NSIZES; i++) {
        errno = 0;
        void *p = lm(sizes[i]);
        expect_enomem(p, "__libc_malloc", sizes[i]);
        errno = 0;
        p = lma(64, sizes[i]);
        expect_enomem(p, "__libc_memalign", sizes[i]);
    }
}

/* After all the refusals the heap is still whole and serves normal requests. */
Test(absurd, heap_intact_after)
{
    for (size_t i = 0; i < NSIZES; i++) {
        free(malloc(sizes[i]));
        void *p = malloc(100);
        cr_assert_not_null(p);
        memset(p, 1, 100);
        free(p);
    }
    size_t (*check)(void) = (size_t(*)(void))dlsym(RTLD_DEFAULT, "heapledger_check_heap");
    cr_assert_not_null(check);
    cr_expect_eq(check(), 0, "heap check after refusals");
}
