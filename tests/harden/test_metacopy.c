/* tests/harden/test_metacopy.c — the out-of-line copies of tiny slots' trailers
 * (liballoc/metacopy.c): one array per slab, indexed by slot, found through a directory by
 * slab number. A slab's copies are distinct and stable, two slabs (or two slab sizes at one
 * address) never share one, slot indexes beyond the array have none, and a far overflow of a
 * tiny block that destroys its inline trailer is still described from its copy after the slot
 * served other blocks.
 */
#include "harden.h"
#include "harden_test.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#define SLAB16 ((uintptr_t)1 << 16)

/* Addresses that look like 64 KiB slabs; only their values are used, never their bytes. */
static const void *fake_slab(uintptr_t n)
{
    return (const void *)(((uintptr_t)0x7e0000000000ull) + n * SLAB16);
}

Test(metacopy, slot_copies_are_per_slab_stable_and_bounded)
{
    cr_assert_eq(hl_metacopy_init(), 0);
    const void *s0 = fake_slab(1), *s1 = fake_slab(2);
    hl_hmeta_t *a = hl_metacopy_slot(s0, 16, 0, 1);
    cr_assert_not_null(a, "a slab gets an array on first use");
    for (size_t i = 1; i < 1024; i++)
        cr_assert_eq(hl_metacopy_slot(s0, 16, i, 1), a + i, "slot %zu: dense, by index", i);
    cr_assert_null(hl_metacopy_slot(s0, 16, 1024, 1), "64 KiB / 64-byte slots: 1024 copies");
    cr_assert_eq(hl_metacopy_slot(s0, 16, 7, 0), a + 7, "found again without create");
    hl_hmeta_t *b = hl_metacopy_slot(s1, 16, 0, 1);
    cr_assert_not_null(b);
    cr_assert(b + 1024 <= a || a + 1024 <= b, "two slabs do not share copies");
    cr_assert_null(hl_metacopy_slot(s0, 12, 0, 0),
                   "another slab size at the same address: none yet");
    hl_hmeta_t *c = hl_metacopy_slot(s0, 12, 0, 1);
    cr_assert_not_null(c);
    cr_assert(c + 64 <= a || a + 1024 <= c, "a 4 KiB slab at that address has its own");
    /* Slabs whose directory entries collide (32768 slabs apart) are told apart by address. */
    const void *far = fake_slab(1 + HL_METACOPY_DIR_SLOTS);
    cr_assert_null(hl_metacopy_slot(far, 16, 0, 0));
    hl_hmeta_t *d = hl_metacopy_slot(far, 16, 3, 1);
    cr_assert_not_null(d);
    cr_assert_neq(d, a + 3);
    cr_assert_eq(hl_metacopy_slot(s0, 16, 3, 0), a + 3, "the first slab still finds its own");
    cr_assert_eq(hl_metacopy_slot(far, 16, 3, 0), d);
}

/* A slot that served blocks of other sizes before (freed, reused): a far overflow past its
 * canary and trailer still gives the true size and the offset, from the slot's copy. */
Test(metacopy, far_overflow_after_reuse_is_described_from_the_copy)
{
    hl_heap_t *h = heap_with("harden=1,stacks=0,quarantine=0,abort_on_error=0");
    char *p = NULL;
    for (int round = 0; round < 50; round++) { /* the slot is allocated and freed many times */
        p = hl_heap_malloc(h, 50);
        hl_heap_free(h, p);
    }
    char *q = hl_heap_malloc(h, 50); /* most likely p's slot again (no quarantine) */
    (void)p;
    memset(q, 'x', 50 + 48); /* past the canary and the inline trailer */
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    int saved = dup(2);
    dup2(fds[1], 2);
    size_t before = hl_harden_errors();
    hl_heap_free(h, q);
    dup2(saved, 2);
    close(saved);
    close(fds[1]);
    char out[8192];
    ssize_t n = read(fds[0], out, sizeof out - 1);
    close(fds[0]);
    out[n > 0 ? n : 0] = 0;
    cr_assert_eq(hl_harden_errors() - before, 1, "one report");
    cr_assert(strstr(out, "heap-overflow"), "%s", out);
    cr_assert(strstr(out, "(50-byte block, tiny/"), "the true size from the copy: %s", out);
    cr_assert(strstr(out, "bad byte at offset 50 "), "the first bad offset: %s", out);
    cr_assert(strstr(out, "out-of-line copy"), "%s", out);
}
