/* Absurd sizes on heap objects (what the analyzer's replay and programs linking the core
 * library use): hl_heap_malloc, _calloc, _realloc and _memalign refuse every size no heap can
 * serve with NULL and ENOMEM, in every mode — harden, each guard mode, fixed arena, rotation
 * and their combinations — and the heap stays whole. tests/preload/absurd_sizes.c checks the
 * same through the preloaded malloc family. */
#include "internal.h"

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <string.h>

static volatile size_t sizes[] = {
    SIZE_MAX,
    SIZE_MAX - 1,
    SIZE_MAX - 15,
    SIZE_MAX - 47,
    SIZE_MAX - 48,
    SIZE_MAX - 4096,
    (size_t)1 << 63,
    ((size_t)1 << 63) - 1,
    ((size_t)1 << 63) + 1,
    ((size_t)1 << 63) - 48,
    (size_t)1 << 62,
    SIZE_MAX / 2 + 4096,
};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static const char *const modes[] = {
    "",
    "harden=1",
    "guard=all",
    "guard=sample:2",
    "harden=1,guard=none",
    "quarantine=64K",
    "arena=4M",
    "arena=4M,harden=1",
    "arena=4M,tiny=1,harden=1",
    "rotate=1",
    "rotate=1,harden=1",
    "rotate=1,arena=4M,harden=1,guard=all",
    "tiny=0,harden=1",
    "tcache=0,mid_max=64K,harden=1",
};

/* Parameters are indices: a test runs in a process of its own, where pointers into this
 * one's data would not hold. */
static int mode_ix[sizeof modes / sizeof modes[0]];

ParameterizedTestParameters(sizes, every_mode)
{
    for (size_t i = 0; i < sizeof mode_ix / sizeof mode_ix[0]; i++)
        mode_ix[i] = (int)i;
    return cr_make_param_array(int, mode_ix, sizeof mode_ix / sizeof mode_ix[0]);
}

#define expect_enomem(p, what, n, mode)                                                            \
    do {                                                                                           \
        cr_expect_null((p), "[%s] %s(%#zx) must fail", mode, what, (size_t)(n));                   \
        cr_expect_eq(errno, ENOMEM, "[%s] %s(%#zx): errno %d", mode, what, (size_t)(n), errno);    \
    } while (0)

ParameterizedTest(int *ix, sizes, every_mode)
{
    const char *const *mode = &modes[*ix];
    hl_options_t o;
    char err[128];
    hl_options_default(&o);
    o.stacks = 0; /* no unwinding: the test is about sizes */
    cr_assert_eq(hl_options_parse(&o, *mode, err, sizeof err), 0, "%s", err);
    hl_heap_t *h = hl_heap_create(&o);
    cr_assert_not_null(h, "create(%s)", *mode);
    char *keep = hl_heap_malloc(h, 100), *keep_mid = hl_heap_malloc(h, 9000);
    cr_assert(keep && keep_mid);
    memset(keep, 0x33, 100);
    memset(keep_mid, 0x44, 9000);
    for (size_t i = 0; i < NSIZES; i++) {
        size_t n = sizes[i];
        errno = 0;
        void *p = hl_heap_malloc(h, n);
        expect_enomem(p, "malloc", n, *mode);
        errno = 0;
        p = hl_heap_calloc(h, 1, n);
        expect_enomem(p, "calloc(1, n)", n, *mode);
        errno = 0;
        p = hl_heap_calloc(h, n, 3);
        expect_enomem(p, "calloc(n, 3)", n, *mode);
        errno = 0;
        p = hl_heap_realloc(h, NULL, n);
        expect_enomem(p, "realloc(NULL)", n, *mode);
        errno = 0;
        p = hl_heap_realloc(h, keep, n);
        expect_enomem(p, "realloc(tiny)", n, *mode);
        errno = 0;
        p = hl_heap_realloc(h, keep_mid, n);
        expect_enomem(p, "realloc(mid)", n, *mode);
        static const size_t aligns[] = {16, 64, 4096, 1 << 20};
        for (size_t a = 0; a < 4; a++) {
            errno = 0;
            p = hl_heap_memalign(h, aligns[a], n);
            expect_enomem(p, "memalign", n, *mode);
        }
        /* An alignment no heap can serve, with a small size. */
        if (hl_is_pow2(n)) {
            errno = 0;
            p = hl_heap_memalign(h, n, 16);
            expect_enomem(p, "memalign(align = n)", n, *mode);
        }
    }
    for (int i = 0; i < 100; i++)
        cr_expect_eq(keep[i], 0x33, "[%s] the tiny block survived the failed reallocs", *mode);
    for (int i = 0; i < 9000; i += 97)
        cr_expect_eq(keep_mid[i], 0x44, "[%s] the mid block survived", *mode);
    cr_expect_geq(hl_heap_usable_size(h, keep), 100);
    hl_heap_free(h, keep);
    hl_heap_free(h, keep_mid);
    void *q = hl_heap_malloc(h, 5000);
    cr_expect_not_null(q, "[%s] the heap still serves", *mode);
    hl_heap_free(h, q);
    cr_expect_eq(hl_heap_check(h, 1), 0, "[%s] heap check", *mode);
    hl_heap_destroy(h);
}
