/* liballoc/harden.c — hardened mode: validation, canaries, poison, quarantine, guard pages
 * (see harden.h for the block layout and how heap.c calls in).
 *
 * Every check is a plain function run on the slow paths of a hardened heap. A pointer handed
 * to free/realloc/malloc_usable_size is first located: the page map says whether its pages
 * are ours and of which kind (nothing is read before that), then the tier's own metadata
 * confirms it (slab descriptor, slot grid and state byte; TLSF header; large header) and
 * the trailer's check word ties the block to its requested size. When a quick check fails,
 * the TLSF pool holding the pointer is walked block by block (error path only) so that the
 * report can tell an interior pointer from a smashed header.
 *
 * Per-heap state (the two quarantines) lives in a small registry keyed by the heap pointer,
 * looked up only on hardened slow paths.
 */
#include "harden.h"
#include "fullguard.h"
#include "harden_cache.h"
#include "pagemap.h"
#include "pattern.h"
#include "quarantine.h"
#include "stack.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* TLSF block word (tlsf.h): bits 0..3 flags (bit 0 FREE), 4..47 size, 48..55 owner, 56..63 tag. */
#define TB_FREE      1u
#define TB_SIZE_MASK 0x0000fffffffffff0ull

#define MAX_HARD_HEAPS          64
#define EVICT_BATCH             16
#define LARGE_DELAY_BYTES       ((size_t)256 << 20) /* address space of guarded freed large blocks */
#define LARGE_DELAY_COUNT       64
#define HL_ARENA_QUARANTINE_DIV 32 /* quarantine of a fixed arena: at most 1/32 of it */

typedef struct hstate_s {
    hl_heap_t *h;
    hl_quarantine_t q;       /* tiny and mid blocks */
    hl_quarantine_t qlarge;  /* freed large blocks kept PROT_NONE */
    int adapt;               /* q's budget follows the live bytes (harden=1's default size) */
    size_t qmax;             /* q's budget at most */
    int64_t live;            /* live usable bytes, from the threads' deltas (atomic) */
    hl_hcache_list_t owners; /* threads with an own quarantine for this heap (harden_cache.h) */
} hstate_t;

/* A thread hands its delta of live bytes over after this many bytes (or at its next batch). */
#define LIVE_FLUSH ((int64_t)256 << 10)

/* Slot index without a division: 2^40 / slot size rounded up, per tiny class (filled once,
 * harden_init_once). The quotient is checked (0 <= off - idx * S < S), so it is exact for any
 * slot size a slab claims; a division was a fifth of tiny_locate's time (perf, thread 1). */
#define SLOT_RECIP_SHIFT 40
static uint64_t slot_recip[HL_CLASS_COUNT];

static hstate_t *states[MAX_HARD_HEAPS];
static hl_lock_t states_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t secret;
static pthread_once_t harden_once = PTHREAD_ONCE_INIT;
static __thread int releasing __attribute__((tls_model("initial-exec")));
static __thread int capturing __attribute__((tls_model("initial-exec")));
static __thread uint32_t cached_tid __attribute__((tls_model("initial-exec")));

/* ---- options -------------------------------------------------------------------------- */

void hl_harden_set_all(hl_options_t *o, uint32_t on)
{
    o->harden = on;
    o->check_free = on;
    o->canary = on;
    o->poison = on;
    o->quarantine = on ? HL_QUARANTINE_AUTO : 0;
    o->guard = on ? 3 : 0; /* large blocks, and one request in N on a guarded run */
    o->guard_sample = on ? HL_DEFAULT_SAMPLE : 0;
}

static int word_is(const char *v, size_t len, const char *w)
{
    size_t n = strlen(w);
    return len == n && memcmp(v, w, n) == 0;
}

int hl_harden_parse_guard(hl_options_t *o, const char *v, size_t len)
{
    if (word_is(v, len, "0") || word_is(v, len, "none"))
        o->guard = 0;
    else if (word_is(v, len, "1") || word_is(v, len, "large"))
        o->guard = 1;
    else if (word_is(v, len, "2") || word_is(v, len, "all"))
        o->guard = 2;
    else if (len > 7 && memcmp(v, "sample:", 7) == 0) {
        uint32_t n = 0;
        for (size_t i = 7; i < len; i++) {
            if (v[i] < '0' || v[i] > '9' || n > 100000000) return -1;
            n = n * 10 + (uint32_t)(v[i] - '0');
        }
        if (!n) return -1;
        o->guard = 3;
        o->guard_sample = n;
    } else
        return -1;
    return 0;
}

/* ---- per-heap state ------------------------------------------------------------------- */

static hstate_t *state_of(const hl_heap_t *h)
{
    for (unsigned i = 0; i < MAX_HARD_HEAPS; i++) {
        hstate_t *s = __atomic_load_n(&states[i], __ATOMIC_ACQUIRE);
        if (s && s->h == h) return s;
    }
    return NULL;
}

/* In a forked child only the forking thread is left: its own quarantines stay listed (their
 * lock free: no walk runs across a fork, fork_prepare holds the list), the other threads'
 * rings are dropped with their blocks (leaked, as their buffers are). */
static void owners_fork_child(hstate_t *st)
{
    hl_hcache_t *mine[2] = {hl_hcache_main, hl_hcache_x};
    hl_lock_init(&st->owners.lock);
    st->owners.first = NULL;
    st->owners.n = 0;
    for (int i = 0; i < 2; i++)
        if (mine[i] && mine[i]->own_counted && mine[i]->heap == st->h) {
            hl_lock_init(&mine[i]->own.lock);
            hl_hcache_list_add(&st->owners, mine[i]);
        }
}

static void fork_prepare(void)
{
    hl_metacopy_fork_prepare();
    hl_lock(&states_lock);
    for (unsigned i = 0; i < MAX_HARD_HEAPS; i++)
        if (states[i]) {
            hl_lock(&states[i]->owners.lock); /* before the quarantines' (harden_cache.h) */
            hl_lock(&states[i]->q.lock);
            hl_lock(&states[i]->qlarge.lock);
        }
}

static void fork_parent(void)
{
    for (unsigned i = 0; i < MAX_HARD_HEAPS; i++)
        if (states[i]) {
            hl_unlock(&states[i]->qlarge.lock);
            hl_unlock(&states[i]->q.lock);
            hl_unlock(&states[i]->owners.lock);
        }
    hl_unlock(&states_lock);
    hl_metacopy_fork_parent();
}

static void fork_child(void)
{
    cached_tid = 0;
    for (unsigned i = 0; i < MAX_HARD_HEAPS; i++)
        if (states[i]) {
            owners_fork_child(states[i]);
            hl_lock_init(&states[i]->qlarge.lock);
            hl_lock_init(&states[i]->q.lock);
        }
    hl_lock_init(&states_lock);
    hl_metacopy_fork_child();
}

static void harden_init_once(void)
{
    uint64_t s = 0;
    if (syscall(SYS_getrandom, &s, sizeof s, 0) != (long)sizeof s) {
        uint32_t lo, hi;
        __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
        s = ((uint64_t)hi << 32 | lo) ^ (uintptr_t)&s;
    }
    secret = s | 1;
    for (unsigned c = 0; c < HL_CLASS_COUNT; c++)
        slot_recip[c] =
            (((uint64_t)1 << SLOT_RECIP_SHIFT) + hl_class_slot(c) - 1) / hl_class_slot(c);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

int hl_harden_setup(hl_heap_t *h)
{
    hl_options_t *o = &h->opt;
    h->hmeta_side = NULL;
    if (o->check_free || o->canary || o->poison || o->quarantine || o->guard || o->zero_on_free)
        o->harden = 1;
    else if (o->harden)
        hl_harden_set_all(o, 1); /* API user set only .harden */
    if (!o->harden) return 0;
    pthread_once(&harden_once, harden_init_once);
    hl_metacopy_init(); /* failure: reports without the copies, nothing else changes */
    if (h->arena_base && !h->arena_owned)
        hl_pagemap_set(h->arena_base, h->arena_size, HL_PAGE_ARENA_HEAD, HL_PAGE_ARENA);
    hl_sidemeta_create(h); /* fixed arena: block records outside it (else inline trailers) */
    hstate_t *st = hl_os_map(hl_align_up(sizeof *st, hl_page_size), hl_page_size, "harden");
    if (!st) return -1;
    size_t budget = o->quarantine == HL_QUARANTINE_AUTO ? HL_DEFAULT_QUARANTINE : o->quarantine;
    /* A fixed arena: freed blocks held back do not coalesce, and the fragmentation they leave
     * outlasts the drain at exhaustion (wide mix, 256 KiB: 84.4 % peak utilisation with 1/8 of
     * the arena in quarantine, 90.1 % with 1/32, 91.0 % unhardened; docs/PERFORMANCE.md). */
    if (h->arena_base && budget > h->arena_size / HL_ARENA_QUARANTINE_DIV)
        budget = h->arena_size / HL_ARENA_QUARANTINE_DIV;
    size_t cap = budget / 32 + 16;
    if (cap > 65536) cap = 65536;
    st->h = h;
    hl_lock_init(&st->owners.lock);
    st->qmax = budget;
    st->adapt = !h->arena_base && o->quarantine == HL_QUARANTINE_AUTO;
    if (hl_quarantine_init(&st->q, budget, budget ? cap : 0) != 0 ||
        hl_quarantine_init(&st->qlarge, LARGE_DELAY_BYTES, o->guard ? LARGE_DELAY_COUNT : 0) != 0)
        return -1;
    if (st->adapt) /* starts at the floor: the heap is empty */
        hl_quarantine_set_budget(&st->q, HL_QUARANTINE_FLOOR, HL_QUARANTINE_FLOOR / 32 + 16);
    hl_lock(&states_lock);
    unsigned i = 0;
    while (i < MAX_HARD_HEAPS && states[i])
        i++;
    if (i < MAX_HARD_HEAPS) __atomic_store_n(&states[i], st, __ATOMIC_RELEASE);
    hl_unlock(&states_lock);
    if (i == MAX_HARD_HEAPS) {
        hl_warn("harden: too many hardened heaps; quarantine off for this one", NULL);
        hl_quarantine_fini(&st->q);
        hl_quarantine_fini(&st->qlarge);
        hl_os_unmap(st, hl_align_up(sizeof *st, hl_page_size), "harden");
    }
    hl_fault_install(); /* guard pages, freed large blocks, wild pointers */
    return 0;
}

void hl_harden_destroy(hl_heap_t *h)
{
    if (!h->opt.harden) return;
    hstate_t *st = NULL;
    hl_lock(&states_lock);
    for (unsigned i = 0; i < MAX_HARD_HEAPS; i++)
        if (states[i] && states[i]->h == h) {
            st = states[i];
            __atomic_store_n(&states[i], NULL, __ATOMIC_RELEASE);
        }
    hl_unlock(&states_lock);
    hl_hcache_t *c = hl_hcache_peek(h); /* the caller's buffers: their blocks go with the heap */
    if (c) hl_hcache_reset(c);
    if (h->arena_base && !h->arena_owned) hl_pagemap_unregister(h->arena_base, h->arena_size);
    hl_fullguard_destroy(h); /* fullguard hook */
    hl_sidemeta_destroy(h);
    if (st) {
        /* The heap's memory goes away with it (large mappings are still on its list). */
        hl_quarantine_fini(&st->q);
        hl_quarantine_fini(&st->qlarge);
        hl_os_unmap(st, hl_align_up(sizeof *st, hl_page_size), "harden");
    }
}

/* Add the thread's delta of live bytes to the heap's estimate and, when the quarantine follows
 * the heap, set its budget from it: live / HL_QUARANTINE_DIV within [FLOOR, qmax]. One atomic
 * add per batch of frees (or LIVE_FLUSH bytes of allocations), not per operation. The
 * thread's own quarantine gets its share of the budget: the budget divided by the number of
 * threads holding one (so that the bytes held stay about the budget; a block waits for about
 * as many of its own thread's frees as in one shared FIFO fed by all of them). */
static void live_flush(hstate_t *st, hl_hcache_t *c)
{
    int64_t d = c->live;
    c->live = 0;
    size_t b = st->qmax;
    if (st->adapt) {
        int64_t v = __atomic_add_fetch(&st->live, d, __ATOMIC_RELAXED);
        b = v > 0 ? (size_t)v / HL_QUARANTINE_DIV : 0;
        if (b < HL_QUARANTINE_FLOOR) b = HL_QUARANTINE_FLOOR;
        if (b > st->qmax) b = st->qmax;
        hl_quarantine_set_budget(&st->q, b, b / 32 + 16); /* the entries of hl_harden_setup */
    }
    if (c->own.ring) {
        int n = __atomic_load_n(&st->owners.n, __ATOMIC_RELAXED);
        size_t share = n > 1 ? b / (size_t)n : b;
        hl_quarantine_set_budget(&c->own, share, share / 32 + 16);
    }
}

/* The calling thread's own quarantine for h (mapped on first use, as large as the shared
 * one can be), or the shared one when it cannot be mapped. */
static hl_quarantine_t *own_ring(hstate_t *st, hl_hcache_t *c)
{
    if (hl_unlikely(!c->own.ring || c->own.cap < st->q.cap)) { /* first use, or a bigger one */
        hl_quarantine_fini(&c->own); /* empty: the last heap it served flushed it */
        if (hl_quarantine_init(&c->own, st->qmax, st->q.cap) != 0) {
            hl_quarantine_fini(&c->own);
            return &st->q;
        }
    }
    if (hl_unlikely(!c->own_counted)) { /* listed before its first block goes in */
        hl_lock(&st->owners.lock);
        hl_hcache_list_add(&st->owners, c);
        hl_unlock(&st->owners.lock);
        live_flush(st, c); /* its share of the budget */
    }
    return &c->own;
}

/* ---- block description ---------------------------------------------------------------- */

typedef enum {
    LOC_OK,         /* a live block, p at its start */
    LOC_FREED,      /* a freed block (quarantined, released, or its slab released) */
    LOC_NOT_OURS,   /* no page of ours */
    LOC_MISALIGNED, /* ours, but not 16-aligned */
    LOC_INTERIOR,   /* inside a block (or where no block starts) */
    LOC_UNDERFLOW,  /* a block starts at p but its header was overwritten */
    LOC_CORRUPT,    /* a block starts at p but its trailer was overwritten */
} loc_t;

typedef struct hblk_s {
    char *p;          /* block start */
    unsigned tier;    /* HL_TIER_* (NONE when no block is known) */
    unsigned cls;     /* tiny class */
    size_t usable;    /* usable size of the tier's block */
    size_t moff;      /* end of the canary: trailer offset (tiny/mid), guard start (large) */
    hl_hmeta_t *meta; /* trailer */
    hl_slab_t *slab;  /* tiny */
    uint32_t gen;     /* tiny: slab generation (a trailer from an earlier life is stale) */
    size_t idx;       /* tiny slot index */
    hl_hmeta_t copy;  /* the out-of-line copy of the trailer, when meta points to it */
    int side;         /* fixed arena: meta is the block's side-table entry (sidemeta.c) */
} hblk_t;

/* gen is the tiny slab's generation (0 for other tiers). It must not repeat while a trailer of
 * an earlier life may survive in the slab: an 8-bit one did, after 256 lives of a slab handed
 * between classes (LIFO reuse of empty slabs), and a stale "freed" trailer passed for the
 * reused slot's own, its poison long overwritten by the other classes' blocks — a false
 * use-after-free "found on reuse" (tests/harden: slab_generation_wrap_is_no_use_after_free). */
static inline uint32_t meta_hash(const void *p, uint64_t req, uint32_t gen)
{
    uint64_t x = (uintptr_t)p ^ (req * 0x9e3779b97f4a7c15ull) ^ secret ^
                 ((uint64_t)gen * 0xc2b2ae3d27d4eb4full);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (uint32_t)x;
}

static inline int meta_valid(const hblk_t *b)
{
    return b->meta && b->meta->check == meta_hash(b->p, b->meta->req, b->gen) &&
           b->meta->req < b->moff;
}

/* The out-of-line copy of a block's trailer (metacopy.c): tiny slots in their slab's array,
 * mid blocks in the address-keyed table; large blocks and a fixed arena's side records are
 * out of reach already and have none. */
static inline unsigned slab_lg(const hl_heap_t *h)
{
    return (unsigned)__builtin_ctzl(h->tiny.slab_size);
}

static inline void copy_put(const hl_heap_t *h, const hblk_t *b, const hl_hmeta_t *m)
{
    if (b->tier == HL_TIER_TINY) {
        hl_hmeta_t *c = hl_metacopy_slot(b->slab, slab_lg(h), b->idx, 1);
        if (c) *c = *m;
    } else if (b->tier == HL_TIER_MID && !b->side) {
        hl_metacopy_put(b->p, b->usable, m);
    }
}

static inline int copy_get(const hl_heap_t *h, const hblk_t *b, hl_hmeta_t *out)
{
    if (b->tier == HL_TIER_TINY) {
        const hl_hmeta_t *c = hl_metacopy_slot(b->slab, slab_lg(h), b->idx, 0);
        if (c) *out = *c;
        return c != NULL;
    }
    return b->tier == HL_TIER_MID && !b->side && hl_metacopy_get(b->p, b->usable, out);
}

/* The block is really released: a mid block's copy goes (a tiny slot's stays until the slot's
 * next allocation rewrites it: reports read copies of live slots only). */
static inline void copy_del(const hblk_t *b)
{
    if (b->tier == HL_TIER_MID && !b->side) hl_metacopy_del(b->p, b->usable);
}

/* Thread id for trailers (a syscall once per thread; reset in a forked child). */
static inline uint32_t self_tid(void)
{
    if (hl_unlikely(!cached_tid)) cached_tid = hl_os_tid();
    return cached_tid;
}

static uint32_t capture(const hl_heap_t *h)
{
    if (!h->opt.stacks || capturing) return 0;
    capturing = 1; /* the unwinder's warm-up may call malloc: served, not recorded */
    uint32_t id = 0;
    if (hl_stack_init() == 0) id = hl_stack_capture_id(h->opt.stacks, 2); /* stack_cache.c */
    capturing = 0;
    return id;
}

static inline int pool_kind(hl_page_kind_t k)
{
    return k == HL_PAGE_POOL_HEAD || k == HL_PAGE_POOL || k == HL_PAGE_ARENA_HEAD ||
           k == HL_PAGE_ARENA;
}

static void describe_tiny(hblk_t *b, hl_slab_t *s, size_t idx)
{
    b->tier = HL_TIER_TINY;
    b->slab = s;
    b->gen = s->gen; /* bumped by slab_init (tiny.c) */
    b->idx = idx;
    b->cls = s->cls;
    b->p = s->first + idx * s->slot_size;
    b->usable = s->slot_size - 1;
    b->moff = b->usable >= 40 ? (b->usable - sizeof(hl_hmeta_t)) & ~(size_t)7 : 0;
    b->meta = b->moff ? (hl_hmeta_t *)(b->p + b->moff) : NULL;
}

static void describe_mid(const hl_heap_t *h, hblk_t *b, char *p, size_t size)
{
    b->tier = HL_TIER_MID;
    b->p = p;
    b->usable = size - HL_TLSF_USED_OVERHEAD;
    if (h->hmeta_side) { /* fixed arena: the canary runs to the end, the record is outside */
        b->meta = hl_sidemeta_of(h, p);
        b->moff = b->meta ? b->usable : 0;
        b->side = b->meta != NULL;
        return;
    }
    b->moff = b->usable >= 40 ? (b->usable - sizeof(hl_hmeta_t)) & ~(size_t)7 : 0;
    b->meta = b->moff ? (hl_hmeta_t *)(p + b->moff) : NULL;
}

static void describe_large(hblk_t *b, char *p, size_t usable)
{
    b->tier = HL_TIER_LARGE;
    b->p = p;
    b->usable = usable;
    b->meta = (hl_hmeta_t *)(p - 16 - sizeof(hl_hmeta_t));
    int guarded =
        usable > hl_page_size && hl_pagemap_get(p + usable - hl_page_size) == HL_PAGE_GUARD;
    b->moff = usable - (guarded ? hl_page_size : 0);
}

/* A tiny slot's state byte (tiny.h): 1 while allocated. One byte a slot, not a bit in a
 * shared word, so that an allocation sets it with a plain store (a `lock or` waited for the
 * stores before it to drain: docs/PERFORMANCE.md, "A byte of state per slot"); a free clears
 * it with an exchange, the commit point of two racing frees. */
_Static_assert(HL_HSTATE_SLOT_MIN == HL_METACOPY_SLOT_MIN, "the smallest hardened tiny slot");
static inline uint8_t *slot_state(const hl_slab_t *s, size_t idx)
{
    return (uint8_t *)s->state + idx;
}

static inline int slot_bit(const hl_slab_t *s, size_t idx)
{
    return __atomic_load_n(slot_state(s, idx), __ATOMIC_ACQUIRE);
}

/* off / size, size the slot size of a slab of class cls (< HL_CLASS_COUNT). */
static inline size_t slot_index(size_t off, unsigned cls, size_t size)
{
    if (hl_likely(off < ((size_t)1 << 20))) { /* off * recip < 2^60: no overflow */
        size_t idx = (size_t)((off * slot_recip[cls]) >> SLOT_RECIP_SHIFT);
        if (hl_likely(off - idx * size < size)) return idx; /* unsigned: idx too big fails too */
    }
    return off / size;
}

/* p is in slab s (its descriptor page is ours). */
static loc_t tiny_locate(char *p, hl_slab_t *s, hblk_t *b)
{
    if (s->magic != HL_SLAB_MAGIC) return LOC_INTERIOR;
    if (s->cls == 0xff) {
        /* The whole slab went back: every slot in it is free. Its grid is still written
         * down (slot size, first slot), so the freed block can still be described. */
        b->tier = HL_TIER_TINY;
        if (s->slot_size && p >= s->first && (size_t)(p - s->first) % s->slot_size == 0) {
            unsigned c = 0;
            while (c < HL_CLASS_COUNT && hl_class_slot(c) != s->slot_size)
                c++;
            describe_tiny(b, s, (size_t)(p - s->first) / s->slot_size);
            b->cls = c;
        }
        return LOC_FREED;
    }
    if (s->cls >= HL_CLASS_COUNT || !s->slot_size || p < s->first) return LOC_INTERIOR;
    size_t off = (size_t)(p - s->first), idx = slot_index(off, s->cls, s->slot_size);
    if (idx >= s->bump) return LOC_INTERIOR;
    describe_tiny(b, s, idx);
    if (off != idx * s->slot_size) return LOC_INTERIOR;
    if ((uint8_t)p[-1] != (HL_TAG_TINY | s->cls)) return LOC_UNDERFLOW;
    if (!b->meta) return LOC_CORRUPT;
    if (!slot_bit(s, idx)) return LOC_FREED;
    return meta_valid(b) ? LOC_OK : LOC_CORRUPT;
}

/* Fixed arena with side records: describe the block at p from its record alone (its header
 * is broken, or it was released and merged): 1 when the record is p's own. */
static int side_unknown_extent(const hl_heap_t *h, hblk_t *b, char *p)
{
    hl_hmeta_t *m = hl_sidemeta_of(h, p);
    if (!m || m->check != meta_hash(p, m->req, 0)) return 0;
    b->tier = HL_TIER_MID;
    b->p = p;
    b->meta = m;
    b->side = 1;
    b->moff = m->req + HL_SIDE_CANARY_MIN; /* the extent is unknown: the canary's first byte */
    b->usable = b->moff;
    return 1;
}

/* A freed mid block merged into a bigger free block keeps its old trailer where it was:
 * find it (the check word ties it to p) so that the report can name the block and its
 * stacks. Error path only: at most limit/8 probes. */
static void find_stale_meta(hblk_t *b, size_t limit)
{
    size_t end = b->usable < limit ? b->usable : limit;
    for (size_t k = 16; k + sizeof(hl_hmeta_t) <= end; k += 8) {
        hl_hmeta_t *m = (hl_hmeta_t *)(b->p + k);
        if (m->req < k && m->check == meta_hash(b->p, m->req, 0) && m->state == HL_META_FREED) {
            b->meta = m;
            b->moff = k;
            b->usable = k + sizeof(hl_hmeta_t);
            return;
        }
    }
}

/* Walk the TLSF pool holding p (error path): which block holds p, and in what state. */
static loc_t mid_walk(hl_heap_t *h, char *p, hblk_t *b)
{
    loc_t res = LOC_NOT_OURS; /* a pool page of another heap */
    for (unsigned i = 0; i < h->mid.narenas && res == LOC_NOT_OURS; i++) {
        hl_arena_t *a = &h->mid.arenas[i];
        hl_lock(&a->lock);
        for (hl_tlsf_pool_t *pool = a->tlsf.pools; pool; pool = pool->next) {
            char *blk = (char *)pool + HL_TLSF_POOL_HDR;
            char *end = (char *)pool + pool->bytes - HL_TLSF_HDR;
            if (p < blk || p >= end + HL_TLSF_HDR) continue;
            res = LOC_INTERIOR;
            while (blk < end) {
                uint64_t w = *(uint64_t *)(blk + 8);
                size_t size = w & TB_SIZE_MASK;
                unsigned tag = (unsigned)(w >> 56);
                if (size < HL_TLSF_MIN || blk + size > end ||
                    (tag != HL_TAG_MID && tag != HL_TAG_MID_FREE)) {
                    if (blk + HL_TLSF_HDR == p) {
                        b->tier = HL_TIER_MID;
                        if (size >= 64 && blk + size <= end) /* only the tag was hit */
                            describe_mid(h, b, p, size);
                        else if (h->hmeta_side)
                            side_unknown_extent(h, b, p);
                        res = LOC_UNDERFLOW;
                    }
                    break; /* cannot walk past a broken header */
                }
                if (p >= blk + HL_TLSF_HDR && p < blk + size) {
                    char *user = blk + HL_TLSF_HDR;
                    hl_slab_t *s = (hl_slab_t *)user;
                    if (h->arena_base && !(w & TB_FREE) &&
                        ((uintptr_t)user & ~h->tiny.slab_mask) == 0 && s->magic == HL_SLAB_MAGIC) {
                        res = tiny_locate(p, s, b);
                        break;
                    }
                    describe_mid(h, b, user, size);
                    if ((w & TB_FREE) && h->hmeta_side) {
                        /* A released block's record outlives it (sidemeta.c), wherever the
                         * merges put p: a double free of it still names the block. */
                        if (side_unknown_extent(h, b, p) && b->meta->state == HL_META_FREED) {
                            res = LOC_FREED;
                        } else {
                            describe_mid(h, b, user, size);
                            res = p == user ? LOC_FREED : LOC_INTERIOR;
                        }
                        break;
                    }
                    if ((w & TB_FREE) && p == user) find_stale_meta(b, h->mid_max);
                    if (w & TB_FREE)
                        res = p == user ? LOC_FREED : LOC_INTERIOR;
                    else if (p != user)
                        res = LOC_INTERIOR;
                    else if (!meta_valid(b))
                        res = LOC_CORRUPT;
                    else
                        res = b->meta->state == HL_META_FREED ? LOC_FREED : LOC_OK;
                    break;
                }
                blk += size;
            }
            break;
        }
        hl_unlock(&a->lock);
    }
    return res;
}

static loc_t mid_locate(hl_heap_t *h, char *p, hblk_t *b)
{
    uint64_t w = *(const uint64_t *)(p - 8);
    size_t size = w & TB_SIZE_MASK;
    unsigned tag = (unsigned)(w >> 56), owner = (unsigned)(w >> 48) & 0xff;
    size_t least = h->hmeta_side ? HL_TLSF_MIN : 64; /* inline trailers need 64 */
    if ((tag == HL_TAG_MID || tag == HL_TAG_MID_FREE) && size >= least && size < (1ull << 44) &&
        owner < h->mid.narenas && pool_kind(hl_pagemap_get(p + size - HL_TLSF_HDR - 1))) {
        describe_mid(h, b, p, size);
        if (meta_valid(b)) {
            if (tag == HL_TAG_MID_FREE || b->meta->state == HL_META_FREED) return LOC_FREED;
            if (b->meta->state == HL_META_LIVE) return LOC_OK;
        }
    }
    memset(b, 0, sizeof *b);
    b->p = p;
    return mid_walk(h, p, b);
}

static loc_t large_locate(char *p, hblk_t *b)
{
    char *base = hl_pagemap_head(p - 1, HL_PAGE_LARGE_HEAD, HL_PAGE_LARGE, (size_t)1 << 26);
    if (!base) return LOC_INTERIOR;
    size_t off = ((hl_large_link_t *)base)->off;
    char *start = base + off;
    if (off < 32 || (off & 15) || hl_pagemap_get(start - 1) == HL_PAGE_NONE) return LOC_INTERIOR;
    const uint64_t *hdr = (const uint64_t *)(start - 16);
    size_t len = hdr[0];
    unsigned tag = (unsigned)(hdr[1] >> 56);
    if (len > off && len < ((size_t)1 << 47) && off >= hl_page_size)
        describe_large(b, start, len - off);
    if (p != start) return b->tier ? LOC_INTERIOR : LOC_INTERIOR;
    if (tag == HL_TAG_LARGE_FREED) return LOC_FREED;
    if (!b->tier || tag != HL_TAG_LARGE || (hdr[1] & 0x00ffffffffffffffull) != off)
        return LOC_UNDERFLOW;
    if (!meta_valid(b)) return LOC_UNDERFLOW; /* the trailer lives in the header page */
    return b->meta->state == HL_META_FREED ? LOC_FREED : LOC_OK;
}

static loc_t locate(hl_heap_t *h, void *vp, hblk_t *b)
{
    char *p = vp;
    memset(b, 0, sizeof *b);
    b->p = p;
    hl_page_kind_t k = hl_pagemap_get(p - 1), kp = hl_pagemap_get(p);
    if ((k == HL_PAGE_NONE && kp == HL_PAGE_NONE) || k == HL_PAGE_META || kp == HL_PAGE_META)
        return LOC_NOT_OURS;
    if ((uintptr_t)p & 15) return LOC_MISALIGNED;
    switch (k) {
    case HL_PAGE_SEGMENT:
        return tiny_locate(p, hl_tiny_slab_of(&h->tiny, p), b);
    case HL_PAGE_POOL_HEAD:
    case HL_PAGE_POOL:
    case HL_PAGE_ARENA_HEAD:
    case HL_PAGE_ARENA:
        if (h->arena_base && ((uint8_t)p[-1] & HL_TAG_TINY_MASK) == HL_TAG_TINY) {
            hl_slab_t *s = hl_tiny_slab_of(&h->tiny, p);
            if (pool_kind(hl_pagemap_get(s)) && s->magic == HL_SLAB_MAGIC)
                return tiny_locate(p, s, b);
        }
        return mid_locate(h, p, b);
    case HL_PAGE_LARGE_HEAD:
    case HL_PAGE_LARGE:
        return large_locate(p, b);
    default:
        return LOC_INTERIOR;
    }
}

/* ---- reports ---------------------------------------------------------------------------- */

typedef enum { OP_FREE, OP_REALLOC, OP_USABLE, OP_DELETE } op_t;

static void report_fill(hl_hreport_t *r, const hl_heap_t *h, const char *kind, const void *addr,
                        const hblk_t *b)
{
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->addr = addr;
    r->abort_on_error = h ? (int)h->opt.abort_on_error : 1;
    r->tier = hl_tier_name(b->tier);
    int mv = b->tier != HL_TIER_NONE && meta_valid(b);
    r->meta = mv ? b->meta : NULL;
    r->size = mv ? b->meta->req : b->usable;
    hl_text_t d = {.n = 0};
    if (b->tier == HL_TIER_TINY)
        hl_text_num(&d, b->cls, 0);
    else if (b->tier == HL_TIER_MID)
        hl_text_str(&d, "tlsf");
    else if (b->tier == HL_TIER_LARGE)
        hl_text_str(&d, "mmap");
    else
        hl_text_str(&d, hl_report_where(addr));
    memcpy(r->cls, d.s, sizeof r->cls - 1);
}

static const char *op_name(op_t op)
{
    static const char *const n[] = {"free", "realloc", "malloc_usable_size", "operator delete"};
    return n[op];
}

/* Offset of the first byte in p[from, to) that is not v (nor 0 when zero_ok), or `to`
 * (pattern.c: chunk compares, canaries and poison are checked on every operation). */
static inline size_t first_not(const char *p, size_t from, size_t to, uint8_t v, int zero_ok)
{
    return hl_pattern_first_not(p, from, to, v, zero_ok);
}

/* A block whose trailer no longer checks, described from the trailer's out-of-line copy
 * instead (b->meta = &b->copy) when the copy checks: 1; else b is left as it was, 0. */
static int meta_from_copy(const hl_heap_t *h, hblk_t *b)
{
    if (!copy_get(h, b, &b->copy)) return 0;
    hl_hmeta_t *inl = b->meta;
    b->meta = &b->copy;
    if (meta_valid(b)) return 1;
    b->meta = inl;
    return 0;
}

/* Report a failed locate for operation op. */
static void report_loc(hl_heap_t *h, loc_t l, hblk_t *b, void *p, op_t op)
{
    static const char *const invalid[] = {"invalid-free", "invalid-realloc", "invalid-usable-size",
                                          "invalid-free"};
    hl_hreport_t r;
    hl_text_t d = {.n = 0};
    const char *kind = invalid[op];
    if (l == LOC_MISALIGNED) {
        hblk_t c;
        loc_t l2 = locate(h, (void *)((uintptr_t)p & ~(uintptr_t)15), &c);
        if (l2 == LOC_OK || l2 == LOC_INTERIOR || l2 == LOC_FREED) *b = c;
        if (op == OP_FREE || op == OP_DELETE) kind = "misaligned-free";
    } else if (l == LOC_FREED && (op == OP_FREE || op == OP_DELETE)) {
        kind = "double-free";
    } else if (l == LOC_UNDERFLOW) {
        kind = "heap-underflow";
    } else if (l == LOC_CORRUPT) {
        kind = "heap-overflow";
    }
    /* The trailer is gone: its out-of-line copy still knows the size, state and stacks. */
    int from_copy = l == LOC_CORRUPT && (b->tier == HL_TIER_TINY || b->tier == HL_TIER_MID) &&
                    b->moff && (char *)p == b->p && meta_from_copy(h, b);
    if (from_copy && b->copy.state == HL_META_FREED) kind = "use-after-free";
    report_fill(&r, h, kind, p, b);
    hl_text_str(&d, op_name(op));
    hl_text_str(&d, "(");
    hl_text_num(&d, (uintptr_t)p, 1);
    hl_text_str(&d, "): ");
    switch (l) {
    case LOC_FREED:
        hl_text_str(&d, "the block was already freed");
        break;
    case LOC_NOT_OURS:
        hl_text_str(&d, "the pointer is not in any heap region (");
        hl_text_str(&d, r.cls);
        hl_text_str(&d, " memory)");
        break;
    case LOC_MISALIGNED:
    case LOC_INTERIOR:
        if (b->tier != HL_TIER_NONE && (char *)p >= b->p) {
            hl_text_str(&d, l == LOC_MISALIGNED ? "misaligned pointer " : "interior pointer ");
            hl_text_num(&d, (uint64_t)((char *)p - b->p), 0);
            hl_text_str(&d, " bytes inside the block at ");
            hl_text_num(&d, (uintptr_t)b->p, 1);
        } else {
            hl_text_str(&d, "no block starts at this address");
        }
        break;
    case LOC_UNDERFLOW:
        r.has_offset = 1;
        r.offset = -1;
        hl_text_str(&d, "the block header before the block was overwritten");
        break;
    case LOC_CORRUPT:
        if (!from_copy) {
            hl_text_str(&d, "the block trailer after the canary was overwritten");
            break;
        }
        r.has_offset = b->copy.state == HL_META_FREED ? (int)h->opt.poison : (int)h->opt.canary;
        if (b->copy.state == HL_META_FREED) {
            size_t bad = first_not(b->p, 0, b->moff, HL_POISON_BYTE, 0);
            r.offset = (long)bad;
            hl_text_str(&d, "freed block written after its free, its trailer too");
        } else {
            size_t bad = first_not(b->p, b->copy.req, b->moff, HL_CANARY_BYTE, 0);
            r.offset = (long)bad; /* == moff: the canary is intact, the trailer is not */
            hl_text_str(&d, "canary and block trailer overwritten");
        }
        hl_text_str(&d, " (size and stacks from the trailer's out-of-line copy)");
        break;
    default:
        break;
    }
    r.details = d.s;
    hl_report(&r);
}

/* Check the canary of a block; report heap-overflow at the first bad byte. 1 if bad. */
/* The report of a bad canary or poison byte at offset bad of block b (error path, kept out of
 * the checks so that their common case sets up no report). */
static __attribute__((noinline, cold)) void report_pattern(hl_heap_t *h, const hblk_t *b,
                                                           size_t bad, int poison, const char *when)
{
    hl_hreport_t r;
    hl_text_t d = {.n = 0};
    report_fill(&r, h, poison ? "use-after-free" : "heap-overflow", b->p, b);
    r.has_offset = 1;
    r.offset = (long)bad;
    hl_text_str(&d, poison ? "freed block written after its free (poison changed, found on "
                           : "canary after the block overwritten (found on ");
    hl_text_str(&d, when);
    hl_text_str(&d, ")");
    r.details = d.s;
    hl_report(&r);
}

/* Check the canary of a block; report heap-overflow at the first bad byte. 1 if bad. */
static inline int check_canary(hl_heap_t *h, const hblk_t *b, const char *when)
{
    size_t bad = first_not(b->p, b->meta->req, b->moff, HL_CANARY_BYTE, 0);
    if (hl_likely(bad == b->moff)) return 0;
    report_pattern(h, b, bad, 0, when);
    return 1;
}

/* Poison of a freed block (bytes [from, moff)); report use-after-free. 1 if bad. */
static inline int check_poison(hl_heap_t *h, const hblk_t *b, size_t from, int zero_ok,
                               const char *when)
{
    size_t bad = first_not(b->p, from, b->moff, HL_POISON_BYTE, zero_ok);
    if (hl_likely(bad == b->moff)) return 0;
    report_pattern(h, b, bad, 1, when);
    return 1;
}

/* ---- allocation -------------------------------------------------------------------------- */

size_t hl_harden_pad(const hl_heap_t *h, size_t n)
{
    if (n > HL_REQUEST_MAX) return SIZE_MAX; /* alloc_slow refused it already: stay refused */
    if (h->hmeta_side) return n + HL_SIDE_CANARY_MIN; /* the rounding slack is the canary */
    size_t m = n + HL_HARDEN_PAD;
    if (!h->arena_base && m > h->mid_max && h->opt.guard) m += hl_page_size;
    return m;
}

static void hcache_flush(hl_heap_t *h, hl_hcache_t *c);

/* Write block b's trailer and canary for a request of req bytes, mirror the trailer, set the
 * slot's state byte (tiny). filled: the block's bytes [0, moff) were just verified to hold
 * the poison, which is the canary's byte: the canary is in place already. */
static void *finish_alloc(hl_heap_t *h, hblk_t *b, size_t req, int filled, hl_opinfo_t *info)
{
    hl_hmeta_t *m = b->meta;
    char *p = b->p;
    m->req = req;
    m->check = meta_hash(p, req, b->gen);
    m->state = HL_META_LIVE;
    m->astack = capture(h);
    m->atid = self_tid();
    m->fstack = 0;
    m->ftid = 0;
    if (h->opt.canary && !filled) memset(p + req, HL_CANARY_BYTE, b->moff - req);
    copy_put(h, b, m);
    hl_hcache_t *c = hl_hcache_peek(h); /* the live bytes the quarantine's budget follows */
    if (hl_unlikely(!c)) c = hl_hcache_of(h, hcache_flush); /* the thread's first operation */
    if (c && (c->live += (int64_t)b->usable) > LIVE_FLUSH) {
        hstate_t *st = state_of(h);
        if (st) live_flush(st, c);
    }
    if (b->tier == HL_TIER_TINY) __atomic_store_n(slot_state(b->slab, b->idx), 1, __ATOMIC_RELEASE);
    info->usable = req;
    return p;
}

void *hl_harden_on_alloc(hl_heap_t *h, void *vp, size_t req, hl_opinfo_t *info)
{
    char *p = vp;
    hblk_t b;
    memset(&b, 0, sizeof b);
    if (info->tier == HL_TIER_TINY) {
        hl_slab_t *s = hl_tiny_slab_of(&h->tiny, p);
        describe_tiny(&b, s, (size_t)(p - s->first) / s->slot_size);
    } else if (info->tier == HL_TIER_MID) {
        describe_mid(h, &b, p, info->usable + HL_TLSF_USED_OVERHEAD);
    } else {
        b.tier = HL_TIER_LARGE;
        b.p = p;
        b.usable = info->usable;
        b.meta = (hl_hmeta_t *)(p - 16 - sizeof(hl_hmeta_t));
        b.moff = b.usable;
        if (h->opt.guard && b.usable >= req + 1 + hl_page_size) {
            char *g = p + b.usable - hl_page_size;
            if (mprotect(g, hl_page_size, PROT_NONE) == 0) {
                hl_pagemap_set(g, hl_page_size, HL_PAGE_GUARD, HL_PAGE_GUARD);
                b.moff -= hl_page_size;
            }
        }
    }
    hl_hmeta_t *m = b.meta;
    if (!m || req >= b.moff)
        return p; /* cannot happen with padded requests; stay usable regardless */
    /* A reused tiny/mid block: its old trailer, if intact, says whether poison must be there. */
    /* Only tiny slots of slab segments keep their bounds while free: TLSF blocks (and arena
     * slabs) are split and merged, so old bytes may belong to other blocks since. */
    if (b.tier == HL_TIER_TINY && !h->arena_base && h->opt.poison && m->state == HL_META_FREED &&
        meta_valid(&b))
        check_poison(h, &b, 8, 1, "reuse");
    return finish_alloc(h, &b, req, 0, info);
}

/* A freed block that must still be exactly as its free left it (quarantined, or kept in a
 * thread's reuse cache): a tiny or mid block whose header and trailer say FREED. Otherwise
 * report a use-after-free (its metadata was overwritten after the free) and return 0: the
 * block is leaked, its metadata cannot be trusted. */
static int freed_intact(hl_heap_t *h, void *p, hblk_t *b)
{
    loc_t l = locate(h, p, b);
    if (l == LOC_FREED && b->tier != HL_TIER_NONE) return 1;
    hl_hreport_t r;
    report_fill(&r, h, "use-after-free", p, b);
    r.details = "a quarantined block's header was overwritten after its free";
    hl_report(&r);
    return 0;
}

/* freed_intact for a block of a reuse cache: a tiny block that this heap quarantined, so its
 * pages are known to be a slab segment's (no page map lookup). */
static int cached_intact(hl_heap_t *h, void *p, unsigned cls, hblk_t *b)
{
    b->tier = HL_TIER_NONE;
    b->p = p;
    b->meta = NULL;
    b->usable = 0;
    hl_slab_t *s = hl_tiny_slab_of(&h->tiny, p);
    if (tiny_locate(p, s, b) == LOC_FREED && s->cls == cls && b->meta) return 1;
    return freed_intact(h, p, b); /* the full validation, and its report */
}

/* A block of a reuse cache whose own trailer no longer checks: it was written after its free
 * (the cache never writes a freed block). Report the use-after-free with the size and stacks of
 * the trailer's out-of-line copy and the first byte that lost its poison (the trailer's offset
 * when only the trailer was hit). The block is leaked: its metadata cannot be trusted. */
static __attribute__((noinline, cold)) void report_cached_trailer(hl_heap_t *h, hblk_t *b)
{
    hl_hreport_t r;
    int from_copy = meta_from_copy(h, b);
    report_fill(&r, h, "use-after-free", b->p, b);
    r.has_offset = h->opt.poison;
    r.offset = (long)first_not(b->p, 0, b->moff, HL_POISON_BYTE, 0);
    r.details = from_copy ? "freed block's trailer written after its free (found on reuse; size "
                            "and stacks from the trailer's out-of-line copy)"
                          : "freed block's trailer written after its free (found on reuse)";
    hl_report(&r);
}

void *hl_harden_alloc_cached(hl_heap_t *h, size_t req, size_t n, hl_opinfo_t *info)
{
    hl_hcache_t *c = hl_hcache_peek(h);
    if (!c) return NULL;
    unsigned cls = hl_size_class[(n + 16) >> 4];
    void *p;
    hblk_t b;
    while ((p = hl_hcache_pop(c, cls)) != NULL) {
        if (!cached_intact(h, p, cls, &b)) continue; /* reported, leaked */
        if (hl_unlikely(!meta_valid(&b))) {
            report_cached_trailer(h, &b);
            continue; /* leaked */
        }
        /* Nothing wrote the block since its free (the cache is an array): all of its poison,
         * from offset 0, must be there (0 bytes too: zero_on_free keeps this cache off). */
        int filled = h->opt.poison && !check_poison(h, &b, 0, 0, "reuse");
        hl_count(h, HL_PATH_TINY_CACHE_HIT);
        hl_info(info, HL_TIER_TINY, cls, HL_PATH_TINY_CACHE_HIT, b.usable);
        return finish_alloc(h, &b, req, filled, info);
    }
    return NULL;
}

/* ---- free ---------------------------------------------------------------------------------- */

/* Really release block p (described by b, found intact and FREED); delayed: it sat in the
 * quarantine (a fixed arena's block that skipped it gets no second delay below). */
static void release_described(hl_heap_t *h, void *p, hblk_t *b, int delayed)
{
    if (b->tier == HL_TIER_LARGE) {
        ((uint8_t *)p)[-1] = HL_TAG_LARGE; /* the mapping goes back as it is */
    } else {
        if (h->opt.poison && meta_valid(b)) check_poison(h, b, 0, 0, "quarantine exit");
        if (h->opt.zero_on_free) memset(p, 0, b->usable);
        copy_del(b);
    }
    hl_opinfo_t tmp;
    releasing = 1;
    /* A fixed arena's block that sat in the quarantine has had its delay: with rotate=1 it
     * goes to the active store, not into a second delay (docs/hardening.md, "Fixed arenas"). */
    hl_tlsf_free_active = b->side && delayed;
    hl_free_slow(h, p, &tmp);
    hl_tlsf_free_active = 0;
    releasing = 0;
}

/* Really release a block that leaves the quarantine (delayed) or skips it. */
static void release_block(hl_heap_t *h, void *p, int delayed)
{
    hblk_t b;
    if (freed_intact(h, p, &b)) release_described(h, p, &b, delayed);
}

/* Blocks that left the quarantine: a tiny one goes to the calling thread's reuse cache when
 * c is given and its class has room (the class from its header byte; the block is validated
 * in full and its poison verified when it is handed out, hl_harden_alloc_cached), every other
 * one is validated, verified and released. fresh is the block just pushed (it may skip the
 * FIFO: then it had no delay), NULL when draining. */
static void release_all(hl_heap_t *h, void **out, size_t n, hl_hcache_t *c, const void *fresh)
{
    for (size_t i = 0; i < n; i++) {
        unsigned tag = ((const uint8_t *)out[i])[-1], cls = tag & (HL_CLASS_MAX - 1);
        if (c && (tag & HL_TAG_TINY_MASK) == HL_TAG_TINY && cls < HL_CLASS_COUNT &&
            hl_hcache_put(c, cls, out[i]))
            continue;
        release_block(h, out[i], out[i] != fresh);
    }
}

/* Verify and release every block of c's reuse cache. */
static void release_cached(hl_heap_t *h, hl_hcache_t *c)
{
    for (unsigned cls = 0; cls < HL_CLASS_COUNT; cls++) {
        void *p;
        while ((p = hl_hcache_pop(c, cls)) != NULL)
            release_block(h, p, 1);
    }
}

/* Hand c's quarantine buffer in one batch to the thread's own quarantine (keep) or to h's
 * shared one (the thread leaves h); what leaves it goes to c's reuse cache (keep) or back to
 * the heap. */
static void flush_qbuf(hl_heap_t *h, hstate_t *st, hl_hcache_t *c, int keep)
{
    /* Pushed straight from the buffer: nothing below frees into it (the releases run with
     * `releasing` set, hl_harden_free returns at once). */
    uint32_t n = c->nq;
    live_flush(st, c);
    if (keep && ++c->epoch % HL_HCACHE_EPOCH == 0) release_cached(h, c);
    void *out[2 * HL_HCACHE_QBUF];
    hl_quarantine_t *q = keep ? own_ring(st, c) : &st->q;
    size_t k = hl_quarantine_push_batch(q, c->q, c->qsz, n, out, 2 * HL_HCACHE_QBUF);
    c->nq = 0;
    c->qbytes = 0;
    release_all(h, out, k, keep && !h->opt.zero_on_free ? c : NULL, NULL);
}

/* Empty the calling thread's buffers for h (hl_hcache_of when they change heap, thread exit,
 * heap destruction): the quarantine buffer goes to the shared quarantine, the reuse cache's
 * blocks are verified and released. */
static void hcache_flush(hl_heap_t *h, hl_hcache_t *c)
{
    hstate_t *st = state_of(h);
    if (st) live_flush(st, c);
    /* The own quarantine first (its blocks are the older ones), in order, into the shared
     * one; what that pushes out goes back to the heap. */
    void *in[HL_HCACHE_QBUF], *out[2 * HL_HCACHE_QBUF];
    uint32_t sz[HL_HCACHE_QBUF];
    size_t n;
    if (st && c->own_counted) {
        /* Each batch moves under the list's lock, so that a heap check sees each block on the
         * ring or in the shared quarantine, never between the two; what the shared one pushes
         * out is released after it (the tiers' locks come before the list's in a fork's
         * prepare, heap.c: never wait for one while holding it). */
        for (;;) {
            size_t k = 0;
            hl_lock(&st->owners.lock);
            n = st->q.ring ? hl_quarantine_take(&c->own, in, sz, HL_HCACHE_QBUF) : 0;
            if (n) k = hl_quarantine_push_batch(&st->q, in, sz, n, out, 2 * HL_HCACHE_QBUF);
            if (!n) hl_hcache_list_del(&st->owners, c);
            hl_unlock(&st->owners.lock);
            if (!n) break;
            release_all(h, out, k, NULL, NULL);
        }
    }
    c->own_counted = 0;
    if (st && st->q.ring && c->nq) flush_qbuf(h, st, c, 0);
    c->nq = 0;
    c->qbytes = 0;
    release_cached(h, c);
}

int hl_harden_owner_count(const hl_heap_t *h)
{
    hstate_t *st = state_of(h);
    return st ? __atomic_load_n(&st->owners.n, __ATOMIC_RELAXED) : -1;
}

void hl_harden_thread_flush(hl_heap_t *h)
{
    hl_hcache_t *c = hl_hcache_slot_of(h); /* h's, or an older heap's that is still alive */
    if (c) {
        /* h itself, destroyed: its list and blocks went with it, nothing to hand back. */
        if (hl_heap_alive(c->heap, c->uid)) hcache_flush(c->heap, c);
        hl_hcache_reset(c);
    }
    hl_hcache_drop(h); /* a later free of this thread (exiting) uses the shared quarantine */
}

int hl_harden_free(hl_heap_t *h, void *p, hl_opinfo_t *info)
{
    if (releasing) return 1;
    if (hl_fullguard_owns(p)) { /* fullguard hook */
        hl_fullguard_free(h, p, info);
        return 0;
    }
    hblk_t b;
    loc_t l = locate(h, p, &b);
    info->tier = (uint8_t)b.tier;
    info->cls = b.tier == HL_TIER_TINY ? (uint8_t)b.cls : 0xff;
    info->path = HL_PATH_QUARANTINE;
    info->usable = 0;
    if (l != LOC_OK) {
        if (!h->opt.check_free)
            return 1;              /* validation reports off: behave like the plain allocator */
        info->path = HL_PATH_NONE; /* rejected: nothing was freed */
        report_loc(h, l, &b, p, OP_FREE);
        return 0; /* continuing: the block is left alone */
    }
    hl_hmeta_t *m = b.meta;
    /* Commit point: exactly one of two racing frees of the same block gets past here. */
    if (b.tier == HL_TIER_TINY) {
        if (!__atomic_exchange_n(slot_state(b.slab, b.idx), 0, __ATOMIC_ACQ_REL)) {
            info->path = HL_PATH_NONE;
            report_loc(h, LOC_FREED, &b, p, OP_FREE);
            return 0;
        }
        m->state = HL_META_FREED;
    } else {
        uint32_t live = HL_META_LIVE;
        if (!__atomic_compare_exchange_n(&m->state, &live, HL_META_FREED, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_ACQUIRE)) {
            info->path = HL_PATH_NONE;
            report_loc(h, LOC_FREED, &b, p, OP_FREE);
            return 0;
        }
    }
    info->usable = m->req;
    /* The thread's buffers, looked up once: the live-bytes count and the quarantine buffer
     * below (bound to h; NULL when unbound or exiting, or in a fixed arena). */
    hl_hcache_t *c = hl_hcache_peek(h);
    if (hl_unlikely(!c)) c = hl_hcache_of(h, hcache_flush);
    if (c) c->live -= (int64_t)b.usable;
    /* before ftid: no "freed by" stack */
    int canary_ok = h->opt.canary && !check_canary(h, &b, "free");
    m->fstack = capture(h);
    m->ftid = self_tid();
    copy_put(h, &b, m);
    hstate_t *st = state_of(h);
    void *out[EVICT_BATCH];
    if (b.tier == HL_TIER_LARGE) {
        if (!st || !st->qlarge.ring || b.moff == b.usable)
            return 1; /* unguarded: unmapped at once */
        p = b.p;
        ((uint8_t *)p)[-1] = HL_TAG_LARGE_FREED;
        mprotect(p, b.usable, PROT_NONE);
        hl_os_decommit(p, b.usable);
        size_t len = ((const uint64_t *)(b.p - 16))[0];
        release_all(h, out, hl_quarantine_push(&st->qlarge, p, len, out, EVICT_BATCH), NULL, p);
        hl_count(h, HL_PATH_QUARANTINE);
        return 0;
    }
    /* The canary is the poison's byte: with the canary intact the user bytes are all that
     * change (a bad canary is written over too, so that the block holds one fill). */
    if (h->opt.poison) memset(b.p, HL_POISON_BYTE, canary_ok ? m->req : b.moff);
    if (st && st->q.ring) {
        /* The thread's quarantine buffer when the thread may keep one (bound to h), else
         * the shared quarantine at once. */
        int kept = c && hl_hcache_qpush(c, p, b.usable);
        if (c && !kept) { /* full: one batch to the shared quarantine, then this block */
            flush_qbuf(h, st, c, 1);
            kept = hl_hcache_qpush(c, p, b.usable); /* 0: bigger than the buffer takes */
        }
        if (!kept)
            release_all(h, out, hl_quarantine_push(&st->q, p, b.usable, out, EVICT_BATCH),
                        c && !h->opt.zero_on_free ? c : NULL, p);
        hl_count(h, HL_PATH_QUARANTINE);
        return 0;
    }
    if (h->opt.zero_on_free) memset(b.p, 0, b.usable);
    copy_del(&b);
    return 1;
}

int hl_harden_drain(hl_heap_t *h)
{
    hstate_t *st = h->opt.harden ? state_of(h) : NULL;
    if (!st) return 0;
    int any = 0;
    void *out[EVICT_BATCH];
    size_t n;
    while ((n = hl_quarantine_drain(&st->q, out, EVICT_BATCH)) > 0) {
        release_all(h, out, n, NULL, NULL);
        any = 1;
    }
    while ((n = hl_quarantine_drain(&st->qlarge, out, EVICT_BATCH)) > 0) {
        release_all(h, out, n, NULL, NULL);
        any = 1;
    }
    return any;
}

/* ---- realloc, usable size, C++ delete ---------------------------------------------------- */

void *hl_harden_realloc(hl_heap_t *h, void *p, size_t n, hl_opinfo_t *info)
{
    if (!p) return hl_malloc_fast(h, n, info);
    if (hl_fullguard_owns(p)) return hl_fullguard_realloc(h, p, n, info); /* fullguard hook */
    hblk_t b;
    loc_t l = locate(h, p, &b);
    if (l != LOC_OK) {
        report_loc(h, l, &b, p, OP_REALLOC);
        errno = EINVAL;
        return NULL;
    }
    if (n == 0) {
        hl_free_fast(h, p, info);
        return NULL;
    }
    size_t old = b.meta->req;
    void *q = hl_malloc_fast(h, n, info);
    if (!q) return NULL; /* the old block stays valid, errno is ENOMEM */
    memcpy(q, p, old < n ? old : n);
    hl_opinfo_t tmp;
    hl_free_fast(h, p, &tmp);
    info->path = HL_PATH_REALLOC_MOVE;
    return q;
}

size_t hl_harden_usable(hl_heap_t *h, const void *p)
{
    if (!p) return 0;
    if (hl_fullguard_owns(p)) return hl_fullguard_usable(h, p); /* fullguard hook */
    hblk_t b;
    loc_t l = locate(h, (void *)p, &b);
    if (l != LOC_OK) {
        report_loc(h, l, &b, (void *)p, OP_USABLE);
        return 0;
    }
    return b.meta->req;
}

void hl_harden_check_delete(hl_heap_t *h, void *p, size_t size, size_t align, const char *what)
{
    if (!p || !h->opt.harden) return;
    if (hl_fullguard_owns(p)) { /* fullguard hook */
        hl_fullguard_check_delete(h, p, size, what);
        return;
    }
    hblk_t b;
    if (locate(h, p, &b) != LOC_OK) return; /* the free that follows reports it */
    size_t req = b.meta->req;
    /* Exact: heapledger's aligned operator new asks for the size the program gave (it does
     * not round it up to the alignment), and every new of size 0 asks for 1 byte. */
    (void)align;
    int ok = size == req || (size == 0 && req == 1);
    if (ok) return;
    hl_hreport_t r;
    hl_text_t d = {.n = 0};
    report_fill(&r, h, "size-mismatch-delete", p, &b);
    hl_text_str(&d, what);
    hl_text_str(&d, " called with size ");
    hl_text_num(&d, size, 0);
    hl_text_str(&d, " for a block of ");
    hl_text_num(&d, req, 0);
    hl_text_str(&d, " bytes");
    r.details = d.s;
    hl_report(&r);
}

/* ---- heap check ---------------------------------------------------------------------------- */

typedef struct check_ctx_s {
    hl_heap_t *h;
    size_t errors;
} check_ctx_t;

static void check_quarantined(void *p, void *arg)
{
    check_ctx_t *c = arg;
    hblk_t b;
    if (locate(c->h, p, &b) != LOC_FREED || b.tier == HL_TIER_LARGE) return;
    if (c->h->opt.poison && meta_valid(&b))
        c->errors += (size_t)check_poison(c->h, &b, 0, 0, "heap check");
}

size_t hl_harden_check(hl_heap_t *h, int verbose)
{
    (void)verbose; /* every finding is a report */
    if (!h->opt.harden) return 0;
    check_ctx_t c = {h, 0};
    /* Live tiny slots. */
    for (unsigned cls = 0; cls < HL_CLASS_COUNT; cls++) {
        hl_tiny_class_t *tc = &h->tiny.cls[cls];
        hl_lock(&tc->lock);
        for (hl_slab_t *s = tc->all; s; s = s->anext)
            for (size_t i = 0; i < s->bump; i++) {
                if (!slot_bit(s, i)) continue;
                hblk_t b;
                memset(&b, 0, sizeof b);
                describe_tiny(&b, s, i);
                if (!meta_valid(&b)) {
                    report_loc(h, LOC_CORRUPT, &b, b.p, OP_FREE);
                    c.errors++;
                } else if (h->opt.canary) {
                    c.errors += (size_t)check_canary(h, &b, "heap check");
                }
            }
        hl_unlock(&tc->lock);
    }
    /* Live mid blocks. */
    for (unsigned i = 0; i < h->mid.narenas; i++) {
        hl_arena_t *a = &h->mid.arenas[i];
        hl_lock(&a->lock);
        for (hl_tlsf_pool_t *pool = a->tlsf.pools; pool; pool = pool->next) {
            char *blk = (char *)pool + HL_TLSF_POOL_HDR;
            char *end = (char *)pool + pool->bytes - HL_TLSF_HDR;
            while (blk < end) {
                uint64_t w = *(uint64_t *)(blk + 8);
                size_t size = w & TB_SIZE_MASK;
                if (size < HL_TLSF_MIN || blk + size > end)
                    break; /* the TLSF checker reports broken headers */
                char *user = blk + HL_TLSF_HDR;
                int slab = h->arena_base && ((uintptr_t)user & ~h->tiny.slab_mask) == 0 &&
                           ((hl_slab_t *)user)->magic == HL_SLAB_MAGIC;
                if (!(w & TB_FREE) && !slab) {
                    hblk_t b;
                    memset(&b, 0, sizeof b);
                    describe_mid(h, &b, user, size);
                    if (!meta_valid(&b)) {
                        report_loc(h, LOC_CORRUPT, &b, user, OP_FREE);
                        c.errors++;
                    } else if (b.meta->state == HL_META_LIVE && h->opt.canary) {
                        c.errors += (size_t)check_canary(h, &b, "heap check");
                    }
                }
                blk += size;
            }
        }
        hl_unlock(&a->lock);
    }
    hstate_t *st = state_of(h);
    if (st) { /* the shared quarantine and every live thread's own, under the list's lock */
        hl_lock(&st->owners.lock);
        hl_quarantine_walk(&st->q, check_quarantined, &c);
        hl_hcache_list_walk(&st->owners, check_quarantined, &c);
        hl_unlock(&st->owners.lock);
    }
    /* The calling thread's quarantine buffer and reuse cache (another thread's are arrays it
     * changes without a lock: they are checked on their way out). */
    hl_hcache_t *hc = hl_hcache_peek(h);
    for (uint32_t i = 0; hc && i < hc->nq; i++)
        check_quarantined(hc->q[i], &c);
    if (hc) hl_hcache_each(hc, check_quarantined, &c);
    c.errors += hl_fullguard_check(h); /* fullguard hook */
    return c.errors;
}

/* ---- faults ----------------------------------------------------------------------------- */

int hl_harden_on_fault(const void *addr, int is_write)
{
    hl_page_kind_t k = hl_pagemap_get(addr);
    if (k != HL_PAGE_GUARD && k != HL_PAGE_LARGE && k != HL_PAGE_LARGE_HEAD) return 0;
    char *base = hl_pagemap_head(addr, HL_PAGE_LARGE_HEAD, HL_PAGE_LARGE, (size_t)1 << 26);
    if (!base) return 0;
    size_t off = ((hl_large_link_t *)base)->off;
    char *start = base + off;
    hblk_t b;
    memset(&b, 0, sizeof b);
    describe_large(&b, start, ((const uint64_t *)(start - 16))[0] - off);
    unsigned tag = (uint8_t)start[-1];
    const char *kind;
    if (tag == HL_TAG_LARGE_FREED)
        kind = "use-after-free";
    else if (k == HL_PAGE_GUARD)
        kind = "heap-overflow";
    else
        return 0;
    hl_hreport_t r;
    report_fill(&r, NULL, kind, start, &b);
    r.has_offset = 1;
    r.offset = (long)((const char *)addr - start);
    r.details = is_write ? "WRITE faulted on a protected page (guard page or freed block)"
                         : "READ faulted on a protected page (guard page or freed block)";
    r.abort_on_error = 1; /* a faulting access cannot be resumed */
    hl_report(&r);
    return 1;
}

int hl_harden_on_wild_fault(const void *addr, uintptr_t ip)
{
    static const struct {
        const char *fn, *kind, *op;
    } entries[] = {
        {"free", "invalid-free", "free"},
        {"free_hdr", "invalid-free", "free"}, /* free without the class map (shim.c) */
        {"__libc_free", "invalid-free", "free"},
        {"free_sized", "invalid-free", "free_sized"},
        {"free_aligned_sized", "invalid-free", "free_aligned_sized"},
        {"_ZdlPvm", "invalid-free", "operator delete"},
        {"_ZdaPvm", "invalid-free", "operator delete[]"},
        {"hl_heap_free", "invalid-free", "free"},
    };
    char name[64];
    if (!hl_report_function(ip, name, sizeof name)) return 0;
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        if (strcmp(name, entries[i].fn) != 0) continue;
        const char *p = (const char *)addr + 1; /* the header byte is read first */
        hblk_t b;
        memset(&b, 0, sizeof b);
        hl_hreport_t r;
        hl_text_t d = {.n = 0};
        report_fill(&r, NULL, entries[i].kind, p, &b);
        memcpy(r.cls, "wild", 5);
        hl_text_str(&d, entries[i].op);
        hl_text_str(&d, "(");
        hl_text_num(&d, (uintptr_t)p, 1);
        hl_text_str(&d, "): the pointer is not in any heap region (unmapped memory)");
        r.details = d.s;
        r.abort_on_error = 1; /* the faulting access cannot be resumed */
        hl_report(&r);
        return 1;
    }
    return 0;
}

uint32_t hl_harden_stack(const hl_heap_t *h)
{
    return capture(h);
}
