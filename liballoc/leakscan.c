/* liballoc/leakscan.c — the leak reachability scan at exit (the rules are in leakscan.h).
 *
 * Steps, in this order (each one for a reason):
 *   1. the writable segments of the loaded modules (dl_iterate_phdr takes the loader lock: done
 *      before any thread is stopped, which might hold it);
 *   2. stop the other threads (leakstop.c), then try every allocator lock (tiny classes, slab
 *      source, mid arenas, large tier, thread registry); when one is held by a stopped thread,
 *      resume, yield and start again (HL_LEAK_TRIES times): with every lock taken and every
 *      other thread parked in the signal handler, the heap is a consistent snapshot;
 *   3. the live blocks into a table sorted by address: tiny slots carved in every slab minus
 *      those on a slab's free list, in a transfer batch or in a thread cache; used TLSF blocks
 *      (not the slabs an arena carves); large mappings from the page map's head pages, less
 *      those cached (freed); each with its usable size;
 *   4. mark from the roots, then transitively (a work list: each block is pushed once);
 *   5. resume the threads, drop the locks; group the unmarked blocks in address order
 *      (definitely / indirectly lost, leakscan.h);
 *   6. emit the classes (one leak_blocks event per 64 blocks) and the summary (leak_scan)
 *      when traced; print the summary when leaks=1.
 * The block table and the work list are one scratch mapping sized from the heap's counts.
 */
#include "internal.h"
#include "leakscan.h"
#include "pagemap.h"
#include "stack.h"

#include <link.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>

#define MAPS_CAP      (1u << 20) /* /proc/self/maps text */
#define ROOTS_CAP     4096u      /* writable segments */
#define CACHES_CAP    8192u      /* thread caches */
#define MINCORE_PAGES 65536u     /* pages per mincore call (256 MiB) */
#define NONE          ((size_t)-1)

enum { ST_UNMARKED = 0, ST_REACH, ST_DEF, ST_IND, ST_FREE };

typedef struct blk_s {
    uintptr_t start;
    size_t len; /* usable bytes */
} blk_t;

typedef struct range_s {
    uintptr_t a, b;
} range_t;

typedef struct scan_s {
    hl_heap_t *h;
    /* fixed scratch: maps text, module segments, thread caches */
    char *fixed;
    size_t fixed_len;
    char *maps;
    size_t maps_len;
    range_t *roots;
    size_t nroots;
    hl_tls_t **caches;
    size_t ncaches;
    uintptr_t self_lo, self_hi; /* a segment of libheapledger.so (its module is skipped) */
    range_t selfseg[8];         /* libheapledger.so's PT_LOAD segments */
    size_t nselfseg;
    unsigned char *vec; /* mincore vector (MINCORE_PAGES bytes) */
    /* block table */
    char *tab;
    size_t tab_len;
    blk_t *blk;
    uint8_t *st;
    uint32_t *work;
    blk_t *tmp;       /* the radix sort's second buffer */
    uint32_t *counts; /* its digit counts */
    uint32_t *pages;  /* page index (build_pages), NULL: none */
    size_t pages_len;
    size_t n, cap, nwork;
    uintptr_t lo, hi;
    /* the group being built in step 5 */
    size_t leader;
    int phase; /* 1 roots, 2 lost groups */
    uint64_t words;
    int over;
    hl_lock_t *locks[HL_CLASS_COUNT + HL_MAX_ARENAS + 4];
    size_t nlocks;
    hl_leak_summary_t sum;
} scan_t;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- step 1: module segments ------------------------------------------------------------ */

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    scan_t *s = arg;
    int self = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && s->self_lo >= a && s->self_lo < a + ph->p_memsz) self = 1;
    }
    if (self) { /* heapledger's own statics: the heap's metadata, not the program's */
        for (int i = 0; i < info->dlpi_phnum && s->nselfseg < 8; i++) {
            const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
            uintptr_t a = info->dlpi_addr + ph->p_vaddr;
            if (ph->p_type == PT_LOAD) s->selfseg[s->nselfseg++] = (range_t){a, a + ph->p_memsz};
        }
        return 0;
    }
    for (int i = 0; i < info->dlpi_phnum && s->nroots < ROOTS_CAP; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W) || !ph->p_memsz) continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        s->roots[s->nroots++] = (range_t){a, a + ph->p_memsz};
    }
    return 0;
}

/* ---- step 2: locks ---------------------------------------------------------------------- */

static void locks_drop(scan_t *s)
{
    while (s->nlocks)
        hl_unlock(s->locks[--s->nlocks]);
}

/* Try every allocator lock of h; 0 with all of them held, -1 (none held) when one is busy. */
static int locks_take(scan_t *s)
{
    hl_heap_t *h = s->h;
    hl_lock_t *all[HL_CLASS_COUNT + HL_MAX_ARENAS + 4];
    size_t n = 0;
    for (unsigned c = 0; c < HL_CLASS_COUNT; c++)
        all[n++] = &h->tiny.cls[c].lock;
    all[n++] = &h->tiny.src_lock;
    for (unsigned i = 0; i < h->mid.narenas; i++)
        all[n++] = &h->mid.arenas[i].lock;
    all[n++] = &h->large.lock;
    s->nlocks = 0;
    for (size_t i = 0; i < n; i++) {
        if (pthread_mutex_trylock(all[i]) != 0) {
            locks_drop(s);
            return -1;
        }
        s->locks[s->nlocks++] = all[i];
    }
    int nc = hl_thread_caches(h, s->caches, CACHES_CAP);
    if (nc < 0) {
        locks_drop(s);
        return -1;
    }
    s->ncaches = (size_t)nc;
    return 0;
}

/* ---- step 3: the block table ------------------------------------------------------------ */

static int is_arena_slab(const hl_heap_t *h, uintptr_t p)
{
    return h->arena_base && h->tiny.slab_size && !(p & (h->tiny.slab_size - 1)) &&
           ((const hl_slab_t *)p)->magic == HL_SLAB_MAGIC;
}

static void count_mid(void *ptr, size_t usable, int is_free, void *arg)
{
    (void)ptr, (void)usable;
    if (!is_free) ++*(size_t *)arg;
}

static void count_large(void *page, void *arg)
{
    (void)page;
    ++*(size_t *)arg;
}

/* Upper bound of the live blocks (locks held). */
static size_t blocks_bound(scan_t *s)
{
    hl_heap_t *h = s->h;
    size_t n = 0;
    for (unsigned c = 0; c < HL_CLASS_COUNT; c++)
        for (hl_slab_t *sl = h->tiny.cls[c].all; sl; sl = sl->anext)
            n += sl->bump;
    for (unsigned i = 0; i < h->mid.narenas; i++)
        hl_tlsf_walk(&h->mid.arenas[i].tlsf, count_mid, &n);
    hl_pagemap_each(HL_PAGE_LARGE_HEAD, count_large, &n);
    return n;
}

static void add_block(scan_t *s, uintptr_t start, size_t len)
{
    if (s->n < s->cap) s->blk[s->n++] = (blk_t){start, len};
}

/* A large mapping's head page (pagemap.h): its block, unless the mapping is cached (free) or
 * its header is not a large block's yet (a stopped thread between mmap and the header). */
static void add_large(void *page, void *arg)
{
    scan_t *s = arg;
    const hl_large_t *l = &s->h->large;
    for (unsigned i = 0; i < l->cache_count && i < HL_LARGE_CACHE_SLOTS; i++)
        if (l->cache[i].base == page) return;
    size_t off = ((const hl_large_link_t *)page)->off;
    if (off < 48 || (off & 15) || off > (1ull << 40)) return;
    const uint64_t *hdr = (const uint64_t *)((const char *)page + off - 16);
    if (hdr[1] != ((uint64_t)HL_TAG_LARGE << 56 | off) || hdr[0] <= off) return;
    add_block(s, (uintptr_t)page + off, hdr[0] - off);
}

static void add_mid(void *ptr, size_t usable, int is_free, void *arg)
{
    scan_t *s = arg;
    if (is_free || is_arena_slab(s->h, (uintptr_t)ptr)) return;
    add_block(s, (uintptr_t)ptr, usable + HL_TLSF_USED_OVERHEAD);
}

/* LSD radix sort by address, 16 bits a pass over bits 4..51 (user pointers are 16-aligned and
 * below 2^47): three passes through tmp, O(n), no allocation (qsort may allocate); a pass
 * whose digit is the same for every block is skipped. counts: 65536 entries. */
static void sort_blocks(blk_t *a, blk_t *tmp, size_t n, uint32_t *counts)
{
    for (unsigned shift = 4; shift < 52; shift += 16) {
        memset(counts, 0, 65536 * sizeof *counts);
        for (size_t i = 0; i < n; i++)
            counts[(a[i].start >> shift) & 0xffff]++;
        if (n && counts[(a[0].start >> shift) & 0xffff] == n) continue;
        uint32_t sum = 0;
        for (size_t d = 0; d < 65536; d++) {
            uint32_t c = counts[d];
            counts[d] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            tmp[counts[(a[i].start >> shift) & 0xffff]++] = a[i];
        memcpy(a, tmp, n * sizeof *a);
    }
}

/* Index of the block whose range holds v (interior pointers included), else NONE; v must lie
 * in [lo, hi) when the page index exists. With it, the search covers only the blocks that
 * start in v's page, and falls back to the one before them. */
static inline size_t find(const scan_t *s, uintptr_t v)
{
    size_t lo = 0, hi = s->n;
    if (s->pages) {
        size_t g = (v - s->lo) >> HL_LEAK_PAGE_SHIFT;
        lo = s->pages[g];
        hi = s->pages[g + 1];
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->blk[mid].start <= v)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (!lo) return NONE;
    const blk_t *b = &s->blk[lo - 1];
    return v - b->start < (b->len ? b->len : 1) ? lo - 1 : NONE;
}

/* The page index: pages[g] = the first block that starts at or after lo + g pages (so the
 * block holding an address of page g is in [pages[g] - 1, pages[g + 1])). Not built when the
 * heap's address range has more than HL_LEAK_PAGES_MAX pages (find then searches all). */
static void build_pages(scan_t *s)
{
    size_t np = ((s->hi - s->lo) >> HL_LEAK_PAGE_SHIFT) + 2;
    if (!s->n || np > HL_LEAK_PAGES_MAX) return;
    s->pages_len = hl_align_up(np * sizeof *s->pages, hl_page_size);
    s->pages = hl_os_map_quiet(s->pages_len, hl_page_size, "leakscan");
    if (!s->pages) return;
    size_t j = 0;
    for (size_t g = 0; g < np; g++) {
        uintptr_t at = s->lo + ((uintptr_t)g << HL_LEAK_PAGE_SHIFT);
        while (j < s->n && s->blk[j].start < at)
            j++;
        s->pages[g] = (uint32_t)j;
    }
}

/* Mark the slots of a free chain (at most max links) as free; a link that is not the start
 * of a tiny slot of the table ends the walk (the chain is never followed outside a slot). */
static void free_chain(scan_t *s, void *p, size_t max)
{
    for (size_t k = 0; p && k < max; k++) {
        size_t i = find(s, (uintptr_t)p);
        if (i == NONE || s->blk[i].start != (uintptr_t)p) return;
        s->st[i] = ST_FREE;
        p = *(void **)p;
    }
}

static void build_table(scan_t *s)
{
    hl_heap_t *h = s->h;
    for (unsigned c = 0; c < HL_CLASS_COUNT; c++)
        for (hl_slab_t *sl = h->tiny.cls[c].all; sl; sl = sl->anext) {
            if (sl->magic != HL_SLAB_MAGIC || sl->bump > sl->nslots) continue;
            for (uint32_t i = 0; i < sl->bump; i++)
                add_block(s, (uintptr_t)sl->first + (uintptr_t)i * sl->slot_size,
                          sl->slot_size - 1);
        }
    for (unsigned i = 0; i < h->mid.narenas; i++)
        hl_tlsf_walk(&h->mid.arenas[i].tlsf, add_mid, s);
    hl_pagemap_each(HL_PAGE_LARGE_HEAD, add_large, s);
    sort_blocks(s->blk, s->tmp, s->n, s->counts);
    hl_os_decommit(s->tmp, s->cap * sizeof *s->tmp); /* pages back: not needed any more */
    memset(s->st, ST_UNMARKED, s->n);
    if (s->n) {
        s->lo = s->blk[0].start;
        s->hi = s->blk[s->n - 1].start + s->blk[s->n - 1].len + 1;
    }
    build_pages(s);
    /* Tiny slots that are free although carved. */
    for (unsigned c = 0; c < HL_CLASS_COUNT; c++) {
        hl_tiny_class_t *tc = &h->tiny.cls[c];
        for (hl_slab_t *sl = tc->all; sl; sl = sl->anext)
            if (sl->magic == HL_SLAB_MAGIC) free_chain(s, sl->free, sl->nslots);
        for (unsigned k = 0; k < tc->nxfer && k < HL_XFER_SLOTS; k++)
            free_chain(s, tc->xfer[k], tc->xfer_n[k]);
        for (size_t t = 0; t < s->ncaches; t++) {
            hl_tbin_t *b = &s->caches[t]->bins[HL_BIN_TINY | c];
            if (b->cap) free_chain(s, b->head, hl_bin_count(b));
            hl_tcap_t *a = &s->caches[t]->tcap; /* the bin's second chain */
            if (a->spare[c]) free_chain(s, a->spare[c], a->spare_n[c]);
        }
    }
}

/* ---- steps 4 and 5: marking ------------------------------------------------------------- */

static inline void mark(scan_t *s, uintptr_t v)
{
    if (v < s->lo || v >= s->hi) return;
    size_t i = find(s, v);
    if (i == NONE) return;
    uint8_t st = s->st[i];
    if (s->phase == 1) {
        if (st != ST_UNMARKED) return;
        s->st[i] = ST_REACH;
    } else {
        if (i == s->leader) return;
        if (st == ST_DEF) { /* an earlier group's head: its group is already indirect */
            s->st[i] = ST_IND;
            return;
        }
        if (st != ST_UNMARKED) return;
        s->st[i] = ST_IND;
    }
    s->work[s->nwork++] = (uint32_t)i;
}

/* Mark from every aligned word of [a, b). */
static void scan_words(scan_t *s, uintptr_t a, uintptr_t b, uint64_t *bytes)
{
    a = (a + 7) & ~(uintptr_t)7;
    if (b <= a) return;
    size_t n = (b - a) / 8;
    if (s->words + n > HL_LEAK_BUDGET_WORDS) {
        s->over = 1;
        return;
    }
    s->words += n;
    *bytes += n * 8;
    const uintptr_t *w = (const uintptr_t *)a;
    for (size_t k = 0; k < n; k++)
        mark(s, w[k]);
}

static void drain(scan_t *s)
{
    while (s->nwork && !s->over) {
        const blk_t *b = &s->blk[s->work[--s->nwork]];
        scan_words(s, b->start, b->start + b->len, &s->sum.heap_bytes);
    }
}

/* Does [a, b) hold a live or free block of the table (a heap region, not a root)? */
static int holds_blocks(const scan_t *s, uintptr_t a, uintptr_t b)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) { /* the first block that ends after a */
        size_t mid = lo + (hi - lo) / 2;
        if (s->blk[mid].start + s->blk[mid].len <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->blk[lo].start < b;
}

/* A thread's stack from sp (minus the red zone) to the end of its mapping, and the mapping of
 * its thread pointer when that is another one (static TLS and TCB of the main thread). */
static void scan_thread(scan_t *s, uintptr_t sp, uintptr_t tp, uintptr_t redzone)
{
    uintptr_t a, b, ta, tb;
    int anon;
    if (hl_leak_mapping(s->maps, s->maps_len, sp, &a, &b, &anon)) {
        uintptr_t from = sp - redzone < a ? a : sp - redzone;
        scan_words(s, from, b, &s->sum.root_bytes);
        if (tp >= a && tp < b) return;
    }
    if (!tp || !hl_leak_mapping(s->maps, s->maps_len, tp, &ta, &tb, &anon) || !anon) return;
    /* The TCB and static TLS around the thread pointer, within the mapping. The kernel merges
     * neighbouring anonymous mappings, so that mapping may hold heap regions too: words inside
     * a block are then skipped (a block's contents are never a root). */
    uintptr_t from = tp - ta > HL_LEAK_TLS_MAX ? tp - HL_LEAK_TLS_MAX : ta;
    uintptr_t to = tb - tp > HL_LEAK_TCB_MAX ? tp + HL_LEAK_TCB_MAX : tb;
    if (!holds_blocks(s, from, to)) {
        scan_words(s, from, to, &s->sum.root_bytes);
        return;
    }
    for (uintptr_t w = (from + 7) & ~(uintptr_t)7; w + 8 <= to; w += 8)
        if (w < s->lo || w >= s->hi || find(s, w) == NONE)
            scan_words(s, w, w + 8, &s->sum.root_bytes);
}

static int in_range(uintptr_t p, uintptr_t a, size_t len)
{
    return p - a < len;
}

/* Is page p not a root: the allocator's (page map), the side heap's, the scan's scratch, or
 * in a module segment (scanned already, or heapledger's own)? */
static int skip_page(const scan_t *s, uintptr_t p)
{
    if (hl_pagemap_get((const void *)p) != HL_PAGE_NONE) return 1;
    if (in_range(p, __atomic_load_n(&hl_side_region.base, __ATOMIC_RELAXED),
                 __atomic_load_n(&hl_side_region.len, __ATOMIC_ACQUIRE)) ||
        in_range(p, (uintptr_t)s->fixed, s->fixed_len) ||
        in_range(p, (uintptr_t)s->tab, s->tab_len) ||
        (s->pages && in_range(p, (uintptr_t)s->pages, s->pages_len)))
        return 1;
    for (size_t i = 0; i < s->nselfseg; i++)
        if (p + hl_page_size > s->selfseg[i].a && p < s->selfseg[i].b) return 1;
    for (size_t i = 0; i < s->nroots; i++)
        if (p + hl_page_size > s->roots[i].a && p < s->roots[i].b) return 1;
    return 0;
}

/* The pages of [a, b) that are roots; in a big mapping only the resident ones. */
static void scan_anon_range(scan_t *s, uintptr_t a, uintptr_t b)
{
    int sparse = b - a > HL_LEAK_RESIDENT_MIN;
    for (uintptr_t chunk = a; chunk < b && !s->over;) {
        size_t pages = (b - chunk) / hl_page_size;
        if (pages > MINCORE_PAGES) pages = MINCORE_PAGES;
        if (sparse && mincore((void *)chunk, pages * hl_page_size, s->vec) != 0) sparse = 0;
        for (size_t i = 0; i < pages; i++) {
            uintptr_t p = chunk + i * hl_page_size;
            if ((sparse && !(s->vec[i] & 1)) || skip_page(s, p)) continue;
            scan_words(s, p, p + hl_page_size, &s->sum.root_bytes);
        }
        chunk += pages * hl_page_size;
    }
}

/* Private anonymous writable mappings other than the scanned stacks (sps: their stack
 * pointers): memory the program and its runtime mapped themselves. */
static void scan_anon(scan_t *s, const uintptr_t *sps, size_t nsp)
{
    const char *cur = s->maps, *end = s->maps + s->maps_len;
    hl_leak_map_t m;
    while (hl_leak_maps_next(&cur, end, &m) && !s->over) {
        if (m.perms[0] != 'r' || m.perms[1] != 'w' || m.perms[3] != 'p') continue;
        if (m.plen && !(m.path[0] == '[' && m.plen >= 5 &&
                        (!memcmp(m.path, "[heap]", 6 < m.plen ? 6 : m.plen) ||
                         !memcmp(m.path, "[anon:", 6 < m.plen ? 6 : m.plen))))
            continue;
        int stack = 0;
        for (size_t i = 0; i < nsp; i++)
            stack |= sps[i] >= m.start && sps[i] < m.end;
        if (!stack) scan_anon_range(s, m.start, m.end);
    }
}

static void mark_roots(scan_t *s, const uint64_t *regs, size_t nregs, uintptr_t stack_from,
                       hl_leak_thread_t *th, size_t nth)
{
    s->phase = 1;
    for (size_t i = 0; i < s->nroots; i++)
        scan_words(s, s->roots[i].a, s->roots[i].b, &s->sum.root_bytes);
    scan_words(s, (uintptr_t)regs, (uintptr_t)(regs + nregs), &s->sum.root_bytes);
    scan_thread(s, stack_from, (uintptr_t)__builtin_thread_pointer(), 0);
    for (size_t i = 0; i < nth; i++) {
        if (__atomic_load_n(&th[i].state, __ATOMIC_ACQUIRE) != 1) continue;
        s->sum.threads_scanned++;
        scan_words(s, (uintptr_t)th[i].regs, (uintptr_t)(th[i].regs + 23), &s->sum.root_bytes);
        scan_thread(s, th[i].sp, th[i].tp, 128);
    }
    uintptr_t sps[HL_LEAK_THREADS + 1];
    size_t nsp = 0;
    sps[nsp++] = stack_from;
    for (size_t i = 0; i < nth && nsp <= HL_LEAK_THREADS; i++)
        if (__atomic_load_n(&th[i].state, __ATOMIC_ACQUIRE) == 1) sps[nsp++] = th[i].sp;
    scan_anon(s, sps, nsp);
    drain(s);
}

/* memcheck's grouping (leakscan.h): in address order, each unmarked block heads a group. */
static void group_lost(scan_t *s)
{
    s->phase = 2;
    for (size_t i = 0; i < s->n && !s->over; i++) {
        if (s->st[i] != ST_UNMARKED) continue;
        s->st[i] = ST_DEF;
        s->leader = i;
        s->work[s->nwork++] = (uint32_t)i;
        drain(s);
    }
}

static void tally(scan_t *s)
{
    for (size_t i = 0; i < s->n; i++) {
        uint64_t len = s->blk[i].len;
        switch (s->st[i]) {
        case ST_REACH:
            s->sum.reachable_blocks++, s->sum.reachable_bytes += len;
            break;
        case ST_DEF:
            s->sum.definite_blocks++, s->sum.definite_bytes += len;
            break;
        case ST_IND:
            s->sum.indirect_blocks++, s->sum.indirect_bytes += len;
            break;
        default:
            continue;
        }
        s->sum.blocks++;
    }
}

/* ---- the scan --------------------------------------------------------------------------- */

static int map_fixed(scan_t *s)
{
    s->fixed_len = hl_align_up(MAPS_CAP + ROOTS_CAP * sizeof(range_t) +
                                   CACHES_CAP * sizeof(hl_tls_t *) + MINCORE_PAGES,
                               hl_page_size);
    s->fixed = hl_os_map_quiet(s->fixed_len, hl_page_size, "leakscan");
    if (!s->fixed) return -1;
    s->maps = s->fixed;
    s->roots = (range_t *)(s->fixed + MAPS_CAP);
    s->caches = (hl_tls_t **)(s->fixed + MAPS_CAP + ROOTS_CAP * sizeof(range_t));
    s->vec = (unsigned char *)(s->caches + CACHES_CAP);
    return 0;
}

static int map_table(scan_t *s, size_t cap)
{
    cap += 16;
    s->tab_len = hl_align_up(cap * (2 * sizeof(blk_t) + 1 + sizeof(uint32_t)) +
                                 65536 * sizeof(uint32_t) + 64,
                             hl_page_size);
    s->tab = hl_os_map_quiet(s->tab_len, hl_page_size, "leakscan");
    if (!s->tab) return -1;
    s->blk = (blk_t *)s->tab;
    s->tmp = s->blk + cap;
    s->work = (uint32_t *)(s->tmp + cap);
    s->counts = s->work + cap;
    s->st = (uint8_t *)(s->counts + 65536);
    s->cap = cap;
    return 0;
}

/* Is ip in the exit machinery's modules: libc, ld.so or libheapledger.so itself? */
static int runtime_ip(const scan_t *s, uintptr_t ip)
{
    uintptr_t a, b, sa, sb;
    const char *path, *self;
    size_t plen, slen;
    if (!hl_leak_mapping_path(s->maps, s->maps_len, ip, &a, &b, &path, &plen)) return 0;
    if (hl_leak_mapping_path(s->maps, s->maps_len, (uintptr_t)hl_leakscan_at_exit, &sa, &sb, &self,
                             &slen) &&
        slen == plen && !memcmp(path, self, plen))
        return 1;
    const char *base = path + plen;
    while (base > path && base[-1] != '/')
        base--;
    size_t bl = (size_t)(path + plen - base);
    return (bl >= 7 && !memcmp(base, "libc.so", 7)) || (bl >= 5 && !memcmp(base, "libc-", 5)) ||
           (bl >= 8 && !memcmp(base, "ld-linux", 8));
}

/* Where the exiting thread's roots start: just above the return address into the first frame
 * outside the exit machinery (the program's caller of exit, or _start when main returned);
 * from is the scan's entry frame, the fallback when no such frame is found. */
static uintptr_t program_frames(scan_t *s, uintptr_t from)
{
    uint64_t ips[64];
    hl_tls.in_trace++; /* the unwinder's first walk may allocate: the tracer's heap serves it */
    size_t n = hl_stack_capture(ips, 64, 0);
    hl_tls.in_trace--;
    size_t i = 0;
    while (i < n && runtime_ip(s, ips[i]))
        i++;
    uintptr_t a, b;
    int anon;
    if (i == n || !hl_leak_mapping(s->maps, s->maps_len, from, &a, &b, &anon)) return from;
    for (uintptr_t p = (from + 7) & ~(uintptr_t)7; p + 8 <= b; p += 8)
        if (*(const uint64_t *)p == ips[i]) return p + 8;
    return from;
}

static hl_noinline void leak_scan(scan_t *s, const uint64_t *regs, size_t nregs,
                                  uintptr_t stack_from)
{
    uint64_t t0 = now_ns();
    s->self_lo = (uintptr_t)&hl_main_heap;
    if (s->h->opt.harden) {
        s->sum.status = HL_LEAK_UNSUPPORTED;
        return;
    }
    if (map_fixed(s) != 0) {
        s->sum.status = HL_LEAK_NOMEM;
        return;
    }
    dl_iterate_phdr(phdr_cb, s);
    s->maps_len = hl_leak_read_maps(s->maps, MAPS_CAP);
    stack_from = program_frames(s, stack_from);
    hl_leak_thread_t *th = NULL;
    size_t nth = 0, others = 0;
    int locked = 0;
    for (int tries = 0; tries < HL_LEAK_TRIES; tries++) {
        th = hl_leak_stop(&nth, &others);
        if (locks_take(s) == 0) {
            locked = 1;
            break;
        }
        hl_leak_resume();
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    s->sum.threads = others;
    if (!locked) {
        s->sum.status = HL_LEAK_BUSY;
    } else {
        s->maps_len = hl_leak_read_maps(s->maps, MAPS_CAP);
        if (map_table(s, blocks_bound(s)) != 0) {
            s->sum.status = HL_LEAK_NOMEM;
        } else {
            build_table(s);
            mark_roots(s, regs, nregs, stack_from, th, nth);
        }
        locks_drop(s);
        hl_leak_resume();
        if (!s->sum.status) {
            group_lost(s);
            if (s->over)
                s->sum.status = HL_LEAK_BUDGET;
            else
                tally(s);
            if (!s->sum.status && s->sum.threads_scanned < others) s->sum.status = HL_LEAK_PARTIAL;
        }
    }
    hl_os_unmap_quiet(s->fixed, s->fixed_len, "leakscan");
    s->sum.ns = now_ns() - t0;
}

/* ---- step 6: results -------------------------------------------------------------------- */

static const char *status_text(uint64_t st)
{
    switch (st) {
    case HL_LEAK_BUDGET:
        return "not done: the work budget ran out (docs/analyze.md, \"Leak classes\")";
    case HL_LEAK_BUSY:
        return "not done: a thread kept an allocator lock";
    case HL_LEAK_UNSUPPORTED:
        return "not done: hardened mode (quarantine and guard pages) is not scanned";
    case HL_LEAK_NOMEM:
        return "not done: no memory for the scan's table";
    default:
        return "";
    }
}

static void print_count(hl_out_t *o, uint64_t blocks, uint64_t bytes, const char *what)
{
    hl_out_u64(o, blocks);
    hl_out_str(o, blocks == 1 ? " block (" : " blocks (");
    hl_out_size(o, bytes);
    hl_out_str(o, ") ");
    hl_out_str(o, what);
}

static void print_summary(const hl_leak_summary_t *m)
{
    hl_out_t o;
    hl_out_init(&o, 2);
    hl_out_str(&o, "heapledger: leak scan: ");
    if (m->status > HL_LEAK_PARTIAL) {
        hl_out_str(&o, status_text(m->status));
    } else {
        print_count(&o, m->definite_blocks, m->definite_bytes, "definitely lost, ");
        print_count(&o, m->indirect_blocks, m->indirect_bytes, "indirectly lost, ");
        print_count(&o, m->reachable_blocks, m->reachable_bytes, "still reachable");
        hl_out_str(&o, "; ");
        hl_out_u64(&o, m->threads_scanned);
        hl_out_str(&o, " of ");
        hl_out_u64(&o, m->threads);
        hl_out_str(&o, " other threads scanned; ");
        hl_out_size(&o, m->root_bytes + m->heap_bytes);
        hl_out_str(&o, " read in ");
        uint64_t us = m->ns / 1000;
        char frac[5] = {'.', (char)('0' + us % 1000 / 100), (char)('0' + us % 100 / 10),
                        (char)('0' + us % 10), 0};
        hl_out_u64(&o, us / 1000);
        hl_out_str(&o, frac);
        hl_out_str(&o, " ms");
    }
    hl_out_str(&o, "\n");
    hl_out_flush(&o);
}

static void emit(scan_t *s)
{
    uint64_t w[HL_LEAK_BATCH];
    unsigned k = 0;
    if (s->sum.status <= HL_LEAK_PARTIAL && s->tab) {
        for (size_t i = 0; i < s->n; i++) {
            uint8_t st = s->st[i];
            if (st < ST_REACH || st > ST_IND) continue;
            unsigned cls = st == ST_DEF   ? HL_LEAK_DEFINITE
                           : st == ST_IND ? HL_LEAK_INDIRECT
                                          : HL_LEAK_REACHABLE;
            w[k++] = (uint64_t)s->blk[i].start | cls;
            if (k == HL_LEAK_BATCH) {
                hl_trace_emit_leak_blocks(w, k);
                k = 0;
            }
        }
        if (k) hl_trace_emit_leak_blocks(w, k);
    }
    hl_trace_emit_leak_scan((const uint64_t *)&s->sum, HL_LEAK_SUMMARY_WORDS);
}

void hl_leakscan_at_exit(hl_heap_t *h, unsigned mode, int traced)
{
    if (!mode || (mode == 2 && !traced) || h->state != HL_HEAP_READY) return;
    /* The callee-saved registers at this point (the caller-saved ones are dead across the
     * call that brought us here), and the stack from this frame up: the scan's own frames
     * below it hold the table's addresses and are not roots. */
    uint64_t regs[6];
    __asm__ volatile("mov %%rbx, 0(%0)\n\tmov %%rbp, 8(%0)\n\tmov %%r12, 16(%0)\n\t"
                     "mov %%r13, 24(%0)\n\tmov %%r14, 32(%0)\n\tmov %%r15, 40(%0)"
                     :
                     : "r"(regs)
                     : "memory");
    uintptr_t from = (uintptr_t)__builtin_frame_address(0);
    static scan_t s; /* one scan per process at a time: the exit destructor */
    memset(&s, 0, sizeof s);
    s.h = h;
    leak_scan(&s, regs, 6, from);
    hl_tls.in_trace++; /* anything LTTng-UST allocates while emitting is the tracer's */
    if (traced) emit(&s);
    hl_tls.in_trace--;
    if (mode == 1) print_summary(&s.sum);
    if (s.tab) hl_os_unmap_quiet(s.tab, s.tab_len, "leakscan");
    if (s.pages) hl_os_unmap_quiet(s.pages, s.pages_len, "leakscan");
}
