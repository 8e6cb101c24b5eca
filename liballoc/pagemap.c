/* liballoc/pagemap.c — the ownership map (see pagemap.h). */
#include "pagemap.h"

#include <string.h>
#include <sys/mman.h>

#define PM_PAGE_SHIFT 12
#define PM_LEAF_BITS  18
#define PM_ROOT_BITS  17 /* 47-bit user address space */
#define PM_LEAF_SIZE  ((size_t)1 << PM_LEAF_BITS)

static uint8_t *pm_root[(size_t)1 << PM_ROOT_BITS];

static inline uintptr_t page_of(const void *a)
{
    return (uintptr_t)a >> PM_PAGE_SHIFT;
}

static uint8_t *leaf_get(uintptr_t page, int create)
{
    uintptr_t r = page >> PM_LEAF_BITS;
    if (r >= ((uintptr_t)1 << PM_ROOT_BITS)) return NULL;
    uint8_t *leaf = __atomic_load_n(&pm_root[r], __ATOMIC_ACQUIRE);
    if (leaf || !create) return leaf;
    void *m = mmap(NULL, PM_LEAF_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return NULL;
    uint8_t *expected = NULL;
    if (!__atomic_compare_exchange_n(&pm_root[r], &expected, (uint8_t *)m, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        munmap(m, PM_LEAF_SIZE); /* another thread installed it first */
        return expected;
    }
    return m;
}

static int set_range(uintptr_t first, uintptr_t end, uint8_t v, int create)
{
    while (first < end) {
        uint8_t *leaf = leaf_get(first, create);
        uintptr_t leaf_end = (first | (PM_LEAF_SIZE - 1)) + 1;
        uintptr_t stop = end < leaf_end ? end : leaf_end;
        if (leaf)
            memset(leaf + (first & (PM_LEAF_SIZE - 1)), v, stop - first);
        else if (create)
            return -1;
        first = stop;
    }
    return 0;
}

int hl_pagemap_set(const void *addr, size_t len, hl_page_kind_t head_kind, hl_page_kind_t kind)
{
    if (!len) return 0;
    uintptr_t first = page_of(addr);
    uintptr_t end = page_of((const char *)addr + len - 1) + 1;
    int create = head_kind != HL_PAGE_NONE || kind != HL_PAGE_NONE;
    if (set_range(first, first + 1, (uint8_t)head_kind, create) != 0) return -1;
    return set_range(first + 1, end, (uint8_t)kind, create);
}

hl_page_kind_t hl_pagemap_get(const void *addr)
{
    uintptr_t page = page_of(addr);
    uint8_t *leaf = leaf_get(page, 0);
    return leaf ? (hl_page_kind_t)leaf[page & (PM_LEAF_SIZE - 1)] : HL_PAGE_NONE;
}

static int streq(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

void hl_pagemap_register(const void *addr, size_t len, const char *purpose)
{
    if (!purpose) return;
    if (streq(purpose, "slab_segment"))
        hl_pagemap_set(addr, len, HL_PAGE_SEGMENT, HL_PAGE_SEGMENT);
    else if (streq(purpose, "tlsf_pool"))
        hl_pagemap_set(addr, len, HL_PAGE_POOL_HEAD, HL_PAGE_POOL);
    else if (streq(purpose, "large"))
        hl_pagemap_set(addr, len, HL_PAGE_LARGE_HEAD, HL_PAGE_LARGE);
    else if (streq(purpose, "arena"))
        hl_pagemap_set(addr, len, HL_PAGE_ARENA_HEAD, HL_PAGE_ARENA);
    else
        hl_pagemap_set(addr, len, HL_PAGE_META, HL_PAGE_META);
}

void hl_pagemap_unregister(const void *addr, size_t len)
{
    hl_pagemap_set(addr, len, HL_PAGE_NONE, HL_PAGE_NONE);
}

void hl_pagemap_each(hl_page_kind_t kind, void (*fn)(void *page, void *arg), void *arg)
{
    for (uintptr_t r = 0; r < ((uintptr_t)1 << PM_ROOT_BITS); r++) {
        uint8_t *leaf = __atomic_load_n(&pm_root[r], __ATOMIC_ACQUIRE);
        if (!leaf) continue;
        for (uint8_t *p = leaf, *e = leaf + PM_LEAF_SIZE;
             p < e && (p = memchr(p, (int)kind, (size_t)(e - p))) != NULL; p++)
            fn((void *)(((r << PM_LEAF_BITS) | (uintptr_t)(p - leaf)) << PM_PAGE_SHIFT), arg);
    }
}

void *hl_pagemap_head(const void *addr, hl_page_kind_t head_kind, hl_page_kind_t kind,
                      size_t max_pages)
{
    uintptr_t page = page_of(addr);
    for (size_t i = 0; i <= max_pages && page; i++, page--) {
        uint8_t *leaf = leaf_get(page, 0);
        hl_page_kind_t k = leaf ? (hl_page_kind_t)leaf[page & (PM_LEAF_SIZE - 1)] : HL_PAGE_NONE;
        if (k == head_kind) return (void *)(page << PM_PAGE_SHIFT);
        if (k != kind && !(kind == HL_PAGE_LARGE && k == HL_PAGE_GUARD)) return NULL;
    }
    return NULL;
}
