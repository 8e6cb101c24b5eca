/* The class map (liballoc/classmap.h): the default heap's tiny slabs carry their class tag in
 * the map for as long as they serve the class, other blocks and other heaps' slabs read 0, and
 * a closed gate reads 0 everywhere. */
#include "internal.h"
#include "classmap.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

static unsigned tag_of(size_t n) /* the bin index the class map holds */
{
    return HL_BIN_TINY | hl_size_class[(n + 16) >> 4];
}

static hl_heap_t *main_heap(void)
{
    hl_default_init();
    hl_cmap_gate(1); /* no shim in this binary: open free's gate as the shim does */
    cr_assert(hl_cmap_open(), "the class map could not be reserved");
    return &hl_main_heap;
}

Test(classmap, default_heap_slabs_carry_their_class)
{
    hl_heap_t *h = main_heap();
    char *p = hl_heap_malloc(h, 100);
    cr_assert_not_null(p);
    cr_assert_eq(hl_cmap_get(p), tag_of(100));
    cr_assert_eq(hl_cmap_tag(p), tag_of(100), "free reads the tag through the open gate");
    /* Every window of the slab names the class; the header byte agrees. */
    char *slab = (char *)hl_tiny_slab_of(&h->tiny, p);
    cr_assert_eq(hl_cmap_get(slab + h->tiny.slab_size - 1), tag_of(100));
    cr_assert_eq(((uint8_t *)p)[-1], HL_BIN_BASE_TAG + tag_of(100));
    void *mid = hl_heap_malloc(h, 10000);
    cr_assert_not_null(mid);
    cr_assert_eq(hl_cmap_get(mid), 0, "a TLSF block's window is no slab's");
    void *large = hl_heap_malloc(h, 1u << 20);
    cr_assert_not_null(large);
    cr_assert_eq(hl_cmap_get(large), 0);
    cr_assert_eq(hl_cmap_get(NULL), 0);
    hl_heap_free(h, large);
    hl_heap_free(h, mid);
    hl_heap_free(h, p);
}

Test(classmap, released_slab_loses_its_class_and_a_reused_one_takes_the_new)
{
    hl_heap_t *h = main_heap();
    char *p = hl_heap_malloc(h, 100);
    char *slab = (char *)hl_tiny_slab_of(&h->tiny, p);
    hl_heap_free(h, p);
    hl_heap_trim(h, 0); /* the cache flushed, the empty slab back in the source */
    hl_heap_info_t info;
    hl_heap_info(h, &info);
    cr_assert_eq(info.slabs, 0, "%zu slabs left", info.slabs);
    cr_assert_eq(hl_cmap_get(slab), 0, "a slab in the source names no class");
    char *q = hl_heap_malloc(h, 2000); /* the source hands the kept slab out again */
    cr_assert_eq((char *)hl_tiny_slab_of(&h->tiny, q), slab);
    cr_assert_eq(hl_cmap_get(q), tag_of(2000));
    cr_assert_neq(tag_of(2000), tag_of(100));
    hl_heap_free(h, q);
}

Test(classmap, closed_gate_reads_zero_everywhere)
{
    hl_heap_t *h = main_heap();
    char *p = hl_heap_malloc(h, 64);
    hl_cmap_gate(0);
    cr_assert_not(hl_cmap_open());
    cr_assert_eq(hl_cmap_tag(p), 0, "closed: every free takes the header-byte path");
    cr_assert_eq(hl_cmap_get(p), tag_of(64), "the real map is kept meanwhile");
    hl_cmap_gate(1);
    cr_assert_eq(hl_cmap_tag(p), tag_of(64));
    hl_heap_free(h, p);
}

Test(classmap, other_heaps_are_not_in_the_map)
{
    main_heap();
    hl_options_t o;
    char err[128];
    hl_options_default(&o);
    cr_assert_eq(hl_options_parse(&o, "", err, sizeof err), 0, "%s", err);
    hl_heap_t *x = hl_heap_create(&o);
    cr_assert_not_null(x, "%s", strerror(errno));
    void *p = hl_heap_malloc(x, 100);
    cr_assert_not_null(p);
    cr_assert_eq(hl_cmap_get(p), 0, "a heap object's slab is freed through hl_heap_free only");
    hl_heap_free(x, p);
    hl_heap_destroy(x);
}
