/* liballoc/sidemeta.c — hardening metadata of a fixed arena's blocks, kept outside the arena.
 *
 * In a fixed arena (`arena=SIZE`, tiny tier off: every block is a TLSF block) a hardened
 * heap does not put a trailer in the block: the requested size, check word, state, threads
 * and stack ids of each block (hl_hmeta_t) live in a side table mapped apart from the arena
 * when the heap is created, one entry per 32 bytes of arena. A TLSF block is 16-aligned and at
 * least 32 bytes long, so two blocks' user pointers are at least 32 bytes apart and
 * (p - base) / 32 gives every block an entry of its own. Only the canary stays in the block:
 * the rounding slack between the requested and the usable size, at least one byte (harden.c
 * asks the TLSF for n + 1 bytes, so a block whose slack would be 0 grows by one granule).
 *
 * The arena's bytes hold no hardening metadata, so peak utilisation in a hardened arena is
 * that of a plain one but for that one byte (docs/hardening.md, docs/PERFORMANCE.md), and an
 * overflow, however far it runs, cannot reach a block's record: every overflow report gives
 * the true requested size, the first bad offset and the allocation stack.
 *
 * An entry outlives its block: after the block is released its entry keeps the FREED state
 * and the free stack until a block starting at an address of the same entry is allocated.
 * The check word hashes the block address, so an entry written for another address never
 * validates for this one. The table is touched only on the hardened slow paths, under no
 * lock of its own: each live block's entry belongs to the thread that holds the block, and
 * the state word is claimed with a compare-and-swap (harden.c) as with inline trailers.
 */
#include "harden.h"

#include <string.h>

struct hl_sidemeta_s {
    char *base;     /* the arena */
    size_t size;    /* its bytes */
    size_t entries; /* entries in e[] */
    size_t map_len; /* bytes of this mapping */
    hl_hmeta_t e[]; /* one per HL_SIDEMETA_GRAIN bytes of arena */
};

#define HL_SIDEMETA_GRAIN 32u /* >= HL_TLSF_MIN: one block per entry */
_Static_assert(HL_SIDEMETA_GRAIN <= HL_TLSF_MIN, "two blocks never share an entry");

int hl_sidemeta_create(hl_heap_t *h)
{
    h->hmeta_side = NULL;
    if (!h->arena_base || h->tiny_max) return -1;
    size_t entries = h->arena_size / HL_SIDEMETA_GRAIN + 1;
    size_t len = hl_align_up(sizeof(hl_sidemeta_t) + entries * sizeof(hl_hmeta_t), hl_page_size);
    hl_sidemeta_t *s = hl_os_map(len, hl_page_size, "harden");
    if (!s) return -1;
    s->base = h->arena_base;
    s->size = h->arena_size;
    s->entries = entries;
    s->map_len = len;
    h->hmeta_side = s;
    return 0;
}

void hl_sidemeta_destroy(hl_heap_t *h)
{
    hl_sidemeta_t *s = h->hmeta_side;
    if (!s) return;
    h->hmeta_side = NULL;
    hl_os_unmap(s, s->map_len, "harden");
}

hl_hmeta_t *hl_sidemeta_of(const hl_heap_t *h, const void *p)
{
    const hl_sidemeta_t *s = h->hmeta_side;
    if (!s || (const char *)p < s->base || (const char *)p >= s->base + s->size) return NULL;
    size_t i = (size_t)((const char *)p - s->base) / HL_SIDEMETA_GRAIN;
    return (hl_hmeta_t *)&s->e[i];
}
