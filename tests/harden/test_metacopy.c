/* tests/harden/test_metacopy.c — the out-of-line copies of trailers (liballoc/metacopy.c).
 * Tiny slots: one array per slab, indexed by slot, found through a directory by slab number.
 * A slab's copies are distinct and stable, two slabs (or two slab sizes at one address) never
 * share one, slot indexes beyond the array have none, and a far overflow of a tiny block that
 * destroys its inline trailer is still described from its copy after the slot served other
 * blocks. Mid blocks: the address-keyed table touches memory in proportion to the blocks, not
 * to their span, and keeps dense runs of small blocks exact.
 */
#include "harden.h"
#include "harden_test.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
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

static long rss_pages(void)
{
    long size = 0, res = 0;
    int fd = open("/proc/self/statm", O_RDONLY);
    char buf[128];
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    cr_assert_gt(n, 0);
    buf[n] = 0;
    cr_assert_eq(sscanf(buf, "%ld %ld", &size, &res), 2);
    return res;
}

/* Mid blocks' copies (the address-keyed table): 4000 blocks of 2 KiB side by side (8 MB of
 * heap span) touch about 40 bytes of table per KiB of span, not per 64 bytes (5 MiB: every
 * page of the table under the span); each copy is found again and goes when deleted; a dense
 * run of 300 small blocks 64 bytes apart (memalign) still gives each one its own copy. */
Test(metacopy, mid_copies_are_dense_and_exact)
{
    cr_assert_eq(hl_metacopy_init(), 0);
    enum { N = 4000, BLK = 2048, SMALL = 300 };
    const char *base = (const char *)fake_slab(4096);
    long before = rss_pages();
    for (size_t i = 0; i < N; i++) {
        hl_hmeta_t m = {.req = i, .check = (uint32_t)(i * 7 + 1), .state = HL_META_LIVE};
        hl_metacopy_put(base + i * BLK, BLK - 16, &m);
    }
    long grown = (rss_pages() - before) * sysconf(_SC_PAGESIZE);
    cr_assert_lt(grown, 1 << 20, "the copies of an 8 MB span touched %ld bytes", grown);
    for (size_t i = 0; i < N; i++) {
        hl_hmeta_t m;
        cr_assert(hl_metacopy_get(base + i * BLK, BLK - 16, &m), "block %zu has its copy", i);
        cr_assert_eq(m.req, i);
        cr_assert_eq(m.check, (uint32_t)(i * 7 + 1));
    }
    for (size_t i = 0; i < N; i += 2)
        hl_metacopy_del(base + i * BLK, BLK - 16);
    for (size_t i = 0; i < N; i++) {
        hl_hmeta_t m;
        cr_assert_eq(hl_metacopy_get(base + i * BLK, BLK - 16, &m), (int)(i & 1),
                     "block %zu: copy deleted with its block only", i);
    }
    const char *small = base + (size_t)N * BLK + 4096;
    for (size_t i = 0; i < SMALL; i++) {
        hl_hmeta_t m = {.req = 1000 + i, .state = HL_META_LIVE};
        hl_metacopy_put(small + i * 64, 48, &m);
    }
    for (size_t i = 0; i < SMALL; i++) {
        hl_hmeta_t m;
        cr_assert(hl_metacopy_get(small + i * 64, 48, &m), "small block %zu has its copy", i);
        cr_assert_eq(m.req, 1000 + i);
    }
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
