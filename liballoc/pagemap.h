/* liballoc/pagemap.h — O(1) ownership map: which pages the allocator mapped, and for what.
 *
 * One byte per 4 KiB page, in a two-level radix table indexed by the address:
 *
 *   addr bits 47..30  -> root[] (2^17 pointers, static, zero = no leaf yet)
 *   addr bits 29..12  -> leaf byte (2^18 bytes = 256 KiB per leaf, mmap'ed once, never freed)
 *
 * Every region the allocator maps is registered by purpose when hl_os_map/unmap/remap run
 * (os.c), plus caller-provided fixed arenas (harden.c). A lookup reads only the table, never
 * the address being checked, so hardened mode can classify a wild pointer without touching it.
 * Cost: registration writes len/4096 bytes (a 4 MiB pool: 1 KiB); lookups are two loads.
 * Leaves are installed with a CAS: concurrent registrations are safe; a page's byte has one
 * writer at a time (whoever maps or unmaps it). Nothing here allocates or locks.
 */
#ifndef HL_PAGEMAP_H
#define HL_PAGEMAP_H

#include <stddef.h>
#include <stdint.h>

typedef enum hl_page_kind_e {
    HL_PAGE_NONE = 0,   /* not ours */
    HL_PAGE_SEGMENT,    /* tiny slab segment */
    HL_PAGE_POOL_HEAD,  /* first page of a TLSF pool */
    HL_PAGE_POOL,       /* other pages of a TLSF pool */
    HL_PAGE_LARGE_HEAD, /* first page of a large mapping (its header) */
    HL_PAGE_LARGE,      /* other pages of a large mapping */
    HL_PAGE_GUARD,      /* PROT_NONE guard page after a large block (hardened) */
    HL_PAGE_ARENA_HEAD, /* first page of a fixed arena */
    HL_PAGE_ARENA,      /* other pages of a fixed arena */
    HL_PAGE_META,       /* allocator metadata (heap objects, quarantine rings) */
} hl_page_kind_t;

/* Mark [addr, addr+len) (rounded out to pages): the first page as head_kind, the rest as
 * kind. Returns 0, or -1 when a leaf could not be mapped (lookups then say NONE). */
int hl_pagemap_set(const void *addr, size_t len, hl_page_kind_t head_kind, hl_page_kind_t kind);
/* Kind of the page holding addr. */
hl_page_kind_t hl_pagemap_get(const void *addr);
/* Kind from an os.c purpose string ("slab_segment", "tlsf_pool", "large", "arena", …). */
void hl_pagemap_register(const void *addr, size_t len, const char *purpose);
void hl_pagemap_unregister(const void *addr, size_t len);
/* Call fn(page, arg) for every page of the given kind, in address order (the leak scan's
 * walk over large mappings, leakscan.c). Reads the table only. */
void hl_pagemap_each(hl_page_kind_t kind, void (*fn)(void *page, void *arg), void *arg);
/* Walk back from addr to the head page of its region (kinds head/body); NULL if not found
 * within max_pages. */
void *hl_pagemap_head(const void *addr, hl_page_kind_t head_kind, hl_page_kind_t kind,
                      size_t max_pages);

#endif
