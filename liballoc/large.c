/* liballoc/large.c — one mapping per block (see large.h). */
#include "internal.h"

#include <errno.h>
#include <string.h>

#define LARGE_OFF 48u /* link (24 B) + header (16 B), rounded to 16 */

static inline uint64_t *hdr(const void *p) { return (uint64_t *)((char *)p - 16); }
static inline size_t map_len(const void *p) { return hdr(p)[0]; }
static inline size_t map_off(const void *p) { return hdr(p)[1] & 0x00ffffffffffffffull; }

size_t hl_large_usable(const void *p) { return map_len(p) - map_off(p); }

void hl_large_setup(hl_heap_t *h)
{
    hl_lock_init(&h->large.lock);
    h->large.list = NULL;
}

static void link_add(hl_heap_t *h, hl_large_link_t *l)
{
    if (h->is_default)
        return;
    hl_lock(&h->large.lock);
    l->prev = NULL;
    l->next = h->large.list;
    if (l->next)
        l->next->prev = l;
    h->large.list = l;
    hl_unlock(&h->large.lock);
}

static void link_del(hl_heap_t *h, hl_large_link_t *l)
{
    if (h->is_default)
        return;
    hl_lock(&h->large.lock);
    if (l->prev)
        l->prev->next = l->next;
    else
        h->large.list = l->next;
    if (l->next)
        l->next->prev = l->prev;
    hl_unlock(&h->large.lock);
}

static void *finish(hl_heap_t *h, char *base, size_t len, size_t off)
{
    char *p = base + off;
    hdr(p)[0] = len;
    hdr(p)[1] = ((uint64_t)HL_TAG_LARGE << 56) | off;
    ((hl_large_link_t *)base)->off = off;
    link_add(h, (hl_large_link_t *)base);
    __atomic_add_fetch(&h->large.bytes, len, __ATOMIC_RELAXED);
    __atomic_add_fetch(&h->large.blocks, 1, __ATOMIC_RELAXED);
    return p;
}

void *hl_large_alloc(hl_heap_t *h, size_t n, size_t align, hl_opinfo_t *info)
{
    size_t off = hl_align_up(LARGE_OFF, align > 16 ? align : 16);
    if (n > PTRDIFF_MAX - off - hl_page_size)
        return NULL;
    size_t len = hl_align_up(n + off, hl_page_size);
    char *base = hl_os_map(len, off > hl_page_size ? off : hl_page_size, "large");
    if (!base)
        return NULL;
    /* An alignment above a page maps at that alignment; the block starts one alignment in. */
    void *p = finish(h, base, len, off);
    hl_count(h, HL_PATH_LARGE_MMAP);
    info->tier = HL_TIER_LARGE;
    info->cls = 0xff;
    info->path = HL_PATH_LARGE_MMAP;
    info->usable = len - off;
    return p;
}

void hl_large_free(hl_heap_t *h, void *p, hl_opinfo_t *info)
{
    size_t len = map_len(p), off = map_off(p);
    if (off < LARGE_OFF || (off & 15) || len < off)
        hl_fatal("invalid-free", p, "large block header is corrupt");
    char *base = (char *)p - off;
    link_del(h, (hl_large_link_t *)base);
    __atomic_sub_fetch(&h->large.bytes, len, __ATOMIC_RELAXED);
    __atomic_sub_fetch(&h->large.blocks, 1, __ATOMIC_RELAXED);
    hl_os_unmap(base, len, "large");
    hl_count(h, HL_PATH_LARGE_MUNMAP);
    info->tier = HL_TIER_LARGE;
    info->cls = 0xff;
    info->path = HL_PATH_LARGE_MUNMAP;
    info->usable = len - off;
}

void *hl_large_realloc(hl_heap_t *h, void *p, size_t n, hl_opinfo_t *info)
{
    size_t len = map_len(p), off = map_off(p);
    if (off != LARGE_OFF || n > PTRDIFF_MAX - off - hl_page_size)
        return NULL;
    size_t nlen = hl_align_up(n + off, hl_page_size);
    char *base = (char *)p - off;
    hl_path_t path = HL_PATH_REALLOC_INPLACE;
    if (nlen != len) {
        link_del(h, (hl_large_link_t *)base);
        char *nb = hl_os_remap(base, len, nlen, "large");
        if (!nb) {
            link_add(h, (hl_large_link_t *)base);
            return NULL;
        }
        base = nb;
        link_add(h, (hl_large_link_t *)base);
        hdr(base + off)[0] = nlen;
        __atomic_add_fetch(&h->large.bytes, nlen - len, __ATOMIC_RELAXED);
        path = HL_PATH_LARGE_MREMAP;
    }
    hl_count(h, path);
    info->tier = HL_TIER_LARGE;
    info->cls = 0xff;
    info->path = (uint8_t)path;
    info->usable = nlen - off;
    return base + off;
}

void hl_large_destroy(hl_heap_t *h)
{
    hl_large_link_t *l = h->large.list;
    while (l) {
        hl_large_link_t *n = l->next;
        hl_os_unmap(l, map_len((char *)l + l->off), "large");
        l = n;
    }
    h->large.list = NULL;
}
