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

/* Take a cached mapping of at least len bytes (and at most len + len/4), or NULL. */
static void *cache_take(hl_heap_t *h, size_t len, size_t *got)
{
    hl_large_t *l = &h->large;
    void *base = NULL;
    if (!l->cache_count)
        return NULL;
    hl_lock(&l->lock);
    unsigned best = HL_LARGE_CACHE_SLOTS;
    for (unsigned i = 0; i < l->cache_count; i++) {
        unsigned k = (l->cache_head + i) % HL_LARGE_CACHE_SLOTS;
        size_t c = l->cache[k].len;
        if (c >= len && c - len <= len / 4 &&
            (best == HL_LARGE_CACHE_SLOTS || c < l->cache[best].len))
            best = k;
    }
    if (best != HL_LARGE_CACHE_SLOTS) {
        base = l->cache[best].base;
        *got = l->cache[best].len;
        l->cache_bytes -= *got;
        if (l->cache_budget < HL_LARGE_CACHE_BYTES) /* a reuse: worth keeping more */
            l->cache_budget = l->cache_budget ? l->cache_budget * 2 : 2 * HL_LARGE_CACHE_MIN;
        /* Fill the hole with the oldest entry and advance the head. */
        l->cache[best] = l->cache[l->cache_head];
        l->cache_head = (l->cache_head + 1) % HL_LARGE_CACHE_SLOTS;
        l->cache_count--;
    }
    hl_unlock(&l->lock);
    return base;
}

/* Keep a freed mapping; returns 1 if it was cached. Evicted mappings are unmapped after the
 * lock is dropped. */
static int cache_put(hl_heap_t *h, void *base, size_t len)
{
    hl_large_t *l = &h->large;
    hl_large_cached_t evict[HL_LARGE_CACHE_SLOTS];
    unsigned nevict = 0;
    hl_lock(&l->lock);
    if (!l->cache_budget)
        l->cache_budget = HL_LARGE_CACHE_MIN;
    if (len > l->cache_budget) {
        hl_unlock(&l->lock);
        return 0;
    }
    while (l->cache_count &&
           (l->cache_count == HL_LARGE_CACHE_SLOTS || l->cache_bytes + len > l->cache_budget)) {
        evict[nevict++] = l->cache[l->cache_head];
        l->cache_bytes -= l->cache[l->cache_head].len;
        l->cache_head = (l->cache_head + 1) % HL_LARGE_CACHE_SLOTS;
        l->cache_count--;
        /* A mapping left unused: keep less. */
        if (l->cache_budget / 2 >= HL_LARGE_CACHE_MIN)
            l->cache_budget /= 2;
    }
    unsigned k = (l->cache_head + l->cache_count) % HL_LARGE_CACHE_SLOTS;
    l->cache[k].base = base;
    l->cache[k].len = len;
    l->cache_count++;
    l->cache_bytes += len;
    hl_unlock(&l->lock);
    for (unsigned i = 0; i < nevict; i++)
        hl_os_unmap(evict[i].base, evict[i].len, "large");
    return 1;
}

size_t hl_large_trim(hl_heap_t *h)
{
    hl_large_t *l = &h->large;
    hl_large_cached_t all[HL_LARGE_CACHE_SLOTS];
    unsigned n = 0;
    size_t bytes = 0;
    hl_lock(&l->lock);
    for (; l->cache_count; l->cache_count--) {
        all[n++] = l->cache[l->cache_head];
        l->cache_head = (l->cache_head + 1) % HL_LARGE_CACHE_SLOTS;
    }
    l->cache_bytes = 0;
    hl_unlock(&l->lock);
    for (unsigned i = 0; i < n; i++) {
        hl_os_unmap(all[i].base, all[i].len, "large");
        bytes += all[i].len;
    }
    return bytes;
}

void *hl_large_alloc(hl_heap_t *h, size_t n, size_t align, hl_opinfo_t *info)
{
    size_t off = hl_align_up(LARGE_OFF, align > 16 ? align : 16);
    if (h->opt.harden && off < hl_page_size) /* hardening hook: trailer in a header page */
        off = hl_page_size;
    if (n > PTRDIFF_MAX - off - hl_page_size)
        return NULL;
    size_t len = hl_align_up(n + off, hl_page_size);
    hl_path_t path = HL_PATH_LARGE_REUSE;
    size_t got = 0;
    char *base = off == LARGE_OFF ? cache_take(h, len, &got) : NULL;
    if (base) {
        len = got;
    } else {
        /* An alignment above a page maps at that alignment; the block starts one alignment
         * in. */
        base = hl_os_map(len, off > hl_page_size ? off : hl_page_size, "large");
        if (!base)
            return NULL;
        path = HL_PATH_LARGE_MMAP;
    }
    void *p = finish(h, base, len, off);
    hl_count(h, path);
    hl_info(info, HL_TIER_LARGE, 0xff, path, len - off);
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
    hl_path_t path = HL_PATH_LARGE_CACHE;
    if (off != LARGE_OFF || !cache_put(h, base, len)) {
        hl_os_unmap(base, len, "large");
        path = HL_PATH_LARGE_MUNMAP;
    }
    hl_count(h, path);
    hl_info(info, HL_TIER_LARGE, 0xff, path, len - off);
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
    hl_info(info, HL_TIER_LARGE, 0xff, path, nlen - off);
    return base + off;
}

void hl_large_destroy(hl_heap_t *h)
{
    hl_large_trim(h);
    hl_large_link_t *l = h->large.list;
    while (l) {
        hl_large_link_t *n = l->next;
        hl_os_unmap(l, map_len((char *)l + l->off), "large");
        l = n;
    }
    h->large.list = NULL;
}
