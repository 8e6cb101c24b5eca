/* liballoc/harden.h — hardened mode: exact validity checks, canaries, poison, quarantine,
 * guard pages, and the reports that name what went wrong (docs/hardening.md).
 *
 * How it plugs in (no branch on the fast paths, STYLE.md habits 4 and 5): a hardened heap
 * has thread-cache caps of 0, so every malloc and free takes the slow path, where heap.c
 * calls the plain functions below when h->opt.harden is set. Per-thread buffers of freed
 * blocks (harden_cache.h: a quarantine buffer handed over in batches, a reuse cache of blocks
 * that left the quarantine) keep the locks off most of those operations.
 *
 * Block layout in hardened mode (tiny and mid; usable = S-1 for a tiny slot, size-16 for a
 * TLSF block; requests are padded by HL_HARDEN_PAD so that the trailer fits):
 *
 *   p+0          user bytes [0, req)
 *   p+req        canary bytes (HL_CANARY_BYTE, the poison's byte) up to the trailer, at least 1
 *   p+moff       hl_hmeta_t (32 B), moff = (usable - 32) & ~7
 *   p+usable     (tiny) next slot's header byte
 *
 * In a fixed arena (tiny tier off) the trailer is not in the block: hl_hmeta_t lives in a side
 * table outside the arena (sidemeta.c), the canary runs from req to the end of the usable
 * size, and requests are padded by HL_SIDE_CANARY_MIN only.
 *
 * Large blocks start one page into their mapping (off >= page), the trailer sits in the
 * header page at p-48, the canary runs from req to the guard page (guard=large: the last
 * page of the mapping is PROT_NONE). On free a guarded large block is made PROT_NONE and kept
 * in a delay ring, its tag byte p[-1] set to HL_TAG_LARGE_FREED.
 *
 * Validity of a pointer (check_free): the page map says whether p's pages are ours and of
 * which kind (never dereferencing an unowned pointer); then the slot grid, the slab's
 * per-slot state byte (tiny), the header and the trailer's check word (a hash of p, req
 * and a per-process secret) confirm it. Freed blocks are poisoned (HL_POISON_BYTE) and held in
 * a FIFO quarantine bounded in bytes; the poison is verified when they leave it and when a
 * slot is handed out again.
 */
#ifndef HL_HARDEN_H
#define HL_HARDEN_H

#include "fullguard.h"
#include "internal.h"

#define HL_TAG_LARGE_FREED 0xD4u /* large block freed and kept guarded */
#define HL_POISON_BYTE     0xDFu
/* The canary is the poison's byte: a block freed with its canary intact needs the poison over
 * its user bytes only, and a reused one whose fill was verified has its canary in place
 * already (docs/hardening.md, "Canaries and poison"). */
#define HL_CANARY_BYTE        HL_POISON_BYTE
#define HL_DEFAULT_QUARANTINE ((size_t)1 << 20)
/* quarantine=auto (HL_QUARANTINE_AUTO, harden=1's default) follows the heap: 1/HL_QUARANTINE_DIV
 * of its live bytes, at least HL_QUARANTINE_FLOOR, at most HL_DEFAULT_QUARANTINE; an explicit
 * quarantine=SIZE is held as given (docs/hardening.md, "Quarantine"). The floor is what a
 * small program pays whatever it holds: 128 KiB cost tiny.128 (64 KiB live) 136 KiB of its
 * 3.5 MiB peak RSS against 64 KiB (docs/PERFORMANCE.md, "hthread"). */
#define HL_QUARANTINE_DIV   4
#define HL_QUARANTINE_FLOOR ((size_t)64 << 10)
#define HL_META_LIVE        0x4556494cu /* "LIVE" */
#define HL_META_FREED       0x45455246u /* "FREE" */
#define HL_HARDEN_PAD       48u         /* canary byte + trailer + alignment slack */

typedef struct hl_hmeta_s {
    uint64_t req;    /* requested size */
    uint32_t check;  /* hash(secret, p, req) */
    uint32_t state;  /* HL_META_LIVE / HL_META_FREED */
    uint32_t astack; /* allocation stack id (stack.h), 0 = none */
    uint32_t fstack; /* free stack id */
    uint32_t atid;   /* allocating thread */
    uint32_t ftid;   /* freeing thread */
} hl_hmeta_t;

_Static_assert(sizeof(hl_hmeta_t) == 32, "trailer is 32 bytes");

/* Options (options.c): harden=1/0 sets or clears every check; guard=large|all|sample:N. */
void hl_harden_set_all(hl_options_t *o, uint32_t on);
int hl_harden_parse_guard(hl_options_t *o, const char *v, size_t len);

/* Heap set-up (after h->opt is final, before the tiers): resolves h->opt.harden, registers a
 * caller-provided arena in the page map, maps the quarantine. 0 or -1. */
int hl_harden_setup(hl_heap_t *h);
void hl_harden_destroy(hl_heap_t *h);

/* Request size to ask the tiers for, for an n-byte request; n <= HL_REQUEST_MAX (alloc_slow
 * refuses larger ones first), else SIZE_MAX, which no tier serves. */
size_t hl_harden_pad(const hl_heap_t *h, size_t n);
/* guard=all|sample:N: serve this request from a guarded page run, right-aligned to its guard
 * page (fullguard.h; always, or about one request in N); NULL when it is not picked (or in a
 * fixed arena, or beyond the mapping budget). */
static inline void *hl_harden_alloc_guarded(hl_heap_t *h, size_t req, size_t align,
                                            hl_opinfo_t *info)
{
    /* guard=sample:N: an unpicked request costs a decrement (5.6 M instructions per 200 000
     * operations of tiny.mixed as a call, docs/PERFORMANCE.md). */
    if (h->opt.guard == 3 && hl_fullguard_sample_left > 1) {
        hl_fullguard_sample_left--;
        return NULL;
    }
    return hl_fullguard_alloc(h, req, align, info); /* fullguard hook (fullguard.c) */
}
/* Capture the caller's stack for a block's trailer: its id, 0 when stacks are off (or while
 * the unwinder's own allocations are served). */
uint32_t hl_harden_stack(const hl_heap_t *h);
/* Finish a fresh block p of the padded request (info filled by the tier): trailer, canary,
 * guard page, state byte, poison check of a reused slot. Sets info->usable = req. */
void *hl_harden_on_alloc(hl_heap_t *h, void *p, size_t req, hl_opinfo_t *info);
/* Validate and retire a free. Returns 1 when the caller must release p now (normal free),
 * 0 when it was consumed (quarantined, kept guarded, or rejected after a report). */
int hl_harden_free(hl_heap_t *h, void *p, hl_opinfo_t *info);
void *hl_harden_realloc(hl_heap_t *h, void *p, size_t n, hl_opinfo_t *info);
/* Requested size of a live block, or a report (invalid-usable-size) and 0. */
size_t hl_harden_usable(hl_heap_t *h, const void *p);
/* Walk live blocks (trailers, canaries) and quarantined ones (poison); returns errors. */
size_t hl_harden_check(hl_heap_t *h, int verbose);
/* A freed tiny block of the calling thread's reuse cache (harden_cache.h) for an n-byte
 * padded request of req bytes, finished like hl_harden_on_alloc (poison verified from offset
 * 0); NULL when the cache has none. Caller: n is a tiny request, default alignment. */
void *hl_harden_alloc_cached(hl_heap_t *h, size_t req, size_t n, hl_opinfo_t *info);
/* Empty the calling thread's buffers for h into the shared quarantine and the heap (thread
 * exit: thread.c). */
void hl_harden_thread_flush(hl_heap_t *h);
/* How many threads' own quarantines h lists (its heap check walks them); -1 when h is not
 * hardened. For the tests. */
int hl_harden_owner_count(const hl_heap_t *h);
/* Release the whole quarantine (fixed arena out of memory); 1 if anything was released. */
int hl_harden_drain(hl_heap_t *h);
/* C++ sized/aligned delete and free_sized: check size (and alignment) against the block. */
void hl_harden_check_delete(hl_heap_t *h, void *p, size_t size, size_t align, const char *what);
/* SIGSEGV at addr: report it if it hit a guard page or a freed large block (1), else 0. */
int hl_harden_on_fault(const void *addr, int is_write);
/* SIGSEGV at addr with the faulting instruction at ip: when ip is in free/realloc/
 * malloc_usable_size/operator delete and addr is the header byte before a pointer, the
 * program passed a wild pointer into unmapped memory: report it (1), else 0. */
int hl_harden_on_wild_fault(const void *addr, uintptr_t ip);
/* Errors reported so far in this process. */
size_t hl_harden_errors(void);

/* ---- reports (report.c) ---------------------------------------------------------------- */
typedef struct hl_hreport_s {
    const char *kind;       /* "double-free", "heap-overflow", … */
    const void *addr;       /* the pointer the operation was given (or the block) */
    size_t size;            /* requested size of the block (0: no block) */
    const char *tier;       /* "tiny", "mid", "large", "none" */
    char cls[16];           /* class ("3", "tlsf", "mmap", or where: "stack", "wild"…) */
    const hl_hmeta_t *meta; /* allocation/free stacks; NULL when unknown */
    int has_offset;         /* bad byte at block + offset */
    long offset;
    const char *details; /* one line of explanation */
    int abort_on_error;
} hl_hreport_t;

/* Write the report to stderr without allocating, emit the `error` event, count it; abort()
 * when r->abort_on_error. Serialised between threads. */
void hl_report(const hl_hreport_t *r);
/* Name of the function holding code address ip (module symbol table); 0 if unknown. */
int hl_report_function(uintptr_t ip, char *name, size_t nlen);
/* Where a non-heap address lives: "stack", "global" (a module's data), or "wild". */
const char *hl_report_where(const void *addr);

/* ---- out-of-line copies of trailers (metacopy.c) --------------------------------------- */
/* Map the table once (hardened heap set-up); 0 or -1 (then no block has a copy). */
int hl_metacopy_init(void);
/* Mirror the trailer of block p of `size` usable bytes (every trailer write of a mid block;
 * the size picks the table's start index: the same for every call on one block). */
void hl_metacopy_put(const void *p, size_t size, const hl_hmeta_t *m);
/* The copy of block p's trailer into out: 1, or 0 when there is none. */
int hl_metacopy_get(const void *p, size_t size, hl_hmeta_t *out);
/* Block p is really released: forget its copy. */
void hl_metacopy_del(const void *p, size_t size);
/* Tiny slots keep their copies apart (not in the table of the three functions above): the
 * copy of slot idx of the slab at `slab` (2^lg bytes), its slab's array made on first use
 * when create is set; NULL when there is none (no table, a slot index beyond 2^lg / 64, no
 * memory). The directory entry at the slab's home index is looked at inline; a probe or a
 * new slab goes out of line. */
#define HL_METACOPY_DIR_SLOTS ((size_t)1 << 15) /* 512 KiB of address space, 256 slabs a page */
#define HL_METACOPY_SLOT_MIN  64u               /* smallest hardened tiny slot (48 B of padding) */
typedef struct hl_metacopy_dir_s {
    uintptr_t key;   /* slab address | lg; 0 = empty */
    hl_hmeta_t *arr; /* 2^lg / HL_METACOPY_SLOT_MIN copies; written before key (release) */
} hl_metacopy_dir_t;
extern hl_metacopy_dir_t *hl_metacopy_dir;
hl_hmeta_t *hl_metacopy_slot_slow(const void *slab, unsigned lg, size_t idx, int create);
static inline hl_hmeta_t *hl_metacopy_slot(const void *slab, unsigned lg, size_t idx, int create)
{
    hl_metacopy_dir_t *d = __atomic_load_n(&hl_metacopy_dir, __ATOMIC_ACQUIRE);
    if (d && idx < ((size_t)1 << lg) / HL_METACOPY_SLOT_MIN) {
        hl_metacopy_dir_t *e = &d[((uintptr_t)slab >> lg) & (HL_METACOPY_DIR_SLOTS - 1)];
        if (__atomic_load_n(&e->key, __ATOMIC_ACQUIRE) == ((uintptr_t)slab | lg))
            return e->arr + idx;
    }
    return hl_metacopy_slot_slow(slab, lg, idx, create);
}
/* fork: the lock taken when a slab's array is made. */
void hl_metacopy_fork_prepare(void);
void hl_metacopy_fork_parent(void);
void hl_metacopy_fork_child(void);

/* ---- a fixed arena's block metadata, outside the arena (sidemeta.c) ------------------- */
/* A hardened fixed arena without the tiny tier keeps each block's hl_hmeta_t in a side table
 * (h->hmeta_side), not in the block; the block holds only its canary (HL_SIDE_CANARY_MIN
 * bytes at least). */
#define HL_SIDE_CANARY_MIN 1u
typedef struct hl_sidemeta_s hl_sidemeta_t;
/* Map the table of h's arena (hardened set-up): 0, or -1 (no arena, tiny tier on, no
 * memory: the blocks then carry inline trailers as elsewhere). */
int hl_sidemeta_create(hl_heap_t *h);
void hl_sidemeta_destroy(hl_heap_t *h);
/* The entry of the block whose user pointer is p; NULL when p is not in the arena. */
hl_hmeta_t *hl_sidemeta_of(const hl_heap_t *h, const void *p);

/* ---- symbolisation of report frames (symbolize.c) ---------------------------------------- */
#define HL_SYM_MAX_FRAMES (3 * 64) /* current, allocation and free stacks */
typedef struct hl_sym_frame_s {
    const char *module; /* absolute path of the module (NULL: none) */
    uint64_t foff;      /* file offset in it of the address looked up (return address - 1) */
    int has_fn;
    char fn[128];
    uint64_t fdelta; /* offset of the address looked up in fn */
    char file[256];  /* source file ("" when no debug information) */
    uint32_t line;
} hl_sym_frame_t;
/* Fill fn/fdelta and file/line of the frames with a module, through the helper process
 * heapledger-symbolize (fork and exec, a time bound, nothing allocated here). self_module is
 * the path of the module holding heapledger (the helper is looked up next to it). Returns the
 * number of frames the helper answered (0: no helper, or it failed: the frames are left as
 * they were). */
size_t hl_symbolize(hl_sym_frame_t *f, size_t n, const char *self_module);

/* ---- signals (fault.c) ----------------------------------------------------------------- */
/* Install the SIGSEGV/SIGBUS handler once (chains to the previous one for other faults). */
void hl_fault_install(void);
/* While this thread's fault handler examines a fault: the stack at the faulting access,
 * unwound from the signal context (ips[0] is the faulting instruction itself); else 0. */
size_t hl_fault_stack(uint64_t *ips, size_t max);

#endif
