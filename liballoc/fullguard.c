/* liballoc/fullguard.c — guarded blocks on protected page runs (layout and bounds:
 * fullguard.h; how the hooks reach it: harden.c, fault.c).
 *
 * State is process-wide (one set of chunks for every hardened heap; each run names its heap):
 * chunks are reserved once and never unmapped, so a pointer is classified by comparing it with
 * the chunk bases (no lock) and a run's tables never move. One mutex guards the free lists,
 * the bump pointers and run states; the quarantine has its own. System calls (mprotect on
 * allocation, mmap MAP_FIXED on free) are made without the lock, on runs no other thread can
 * reach at that moment (reserved for this allocation, or freed and not yet quarantined).
 */
#include "fullguard.h"
#include "harden.h"
#include "quarantine.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CHUNK_BYTES ((size_t)1 << 30)
#define CHUNK_PAGES (CHUNK_BYTES / 4096)
#define MAX_CHUNKS  1024u /* 1 TiB of address space */
#define SMALL_RUNS  64u   /* exact free lists for runs of 1..64 pages; longer ones share one */
#define EVICT_BATCH 16u

typedef enum { RUN_RESERVED, RUN_LIVE, RUN_FREED, RUN_AVAIL } run_state_t;

/* Out-of-line description of a run, at desc[first page]. meta.state is HL_META_LIVE or
 * HL_META_FREED for the report (which prints the free stack of a freed block). */
typedef struct fg_desc_s {
    hl_hmeta_t meta;        /* req, state, stacks, threads (check unused) */
    hl_heap_t *heap;        /* owner */
    struct fg_desc_s *next; /* free list of runs of this length */
    uint32_t pages;         /* data pages (the guard page follows) */
    uint32_t off;           /* p - run start */
    uint32_t state;         /* run_state_t */
    uint32_t align;         /* A of the layout */
} fg_desc_t;

typedef struct fg_chunk_s {
    char *base;
    uint32_t *first; /* per page of the chunk: 1 + index of its run's first page, 0 = none */
    fg_desc_t *desc; /* per first page */
    size_t bump;     /* pages carved */
} fg_chunk_t;

static struct {
    hl_lock_t lock;
    fg_chunk_t chunks[MAX_CHUNKS];
    unsigned nchunks;                     /* published with release after the chunk is set up */
    fg_desc_t *free_runs[SMALL_RUNS + 1]; /* [n]: n pages; [0]: longer runs */
    size_t live, made, fallback, max_live;
    int quarantine_ok;
    hl_quarantine_t q;
} fg = {.lock = PTHREAD_MUTEX_INITIALIZER};

static pthread_once_t fg_once = PTHREAD_ONCE_INIT;
__thread uint32_t hl_fullguard_sample_left __attribute__((tls_model("initial-exec")));
static __thread uint64_t sample_rng __attribute__((tls_model("initial-exec")));
static __thread uint32_t fg_tid __attribute__((tls_model("initial-exec")));

/* ---- set-up ----------------------------------------------------------------------------- */

static void fork_prepare(void)
{
    hl_lock(&fg.lock);
    if (fg.quarantine_ok) hl_lock(&fg.q.lock);
}
static void fork_parent(void)
{
    if (fg.quarantine_ok) hl_unlock(&fg.q.lock);
    hl_unlock(&fg.lock);
}
static void fork_child(void)
{
    fg_tid = 0;
    if (fg.quarantine_ok) hl_lock_init(&fg.q.lock);
    hl_lock_init(&fg.lock);
}

/* vm.max_map_count, read with raw system calls (no stdio); 65530 when unreadable. */
static size_t max_map_count(void)
{
    char buf[32];
    size_t v = 0;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/sys/vm/max_map_count", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        long n = syscall(SYS_read, fd, buf, sizeof buf - 1);
        syscall(SYS_close, fd);
        for (long i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
            v = v * 10 + (size_t)(buf[i] - '0');
    }
    return v ? v : 65530;
}

static void fg_init_once(void)
{
    fg.max_live = max_map_count() / 8 * 3;
    fg.quarantine_ok = hl_quarantine_init(&fg.q, HL_FG_QBYTES, HL_FG_QUARANTINE) == 0;
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* Reserve one more chunk and its tables. Caller holds fg.lock. */
static fg_chunk_t *chunk_new(void)
{
    if (fg.nchunks == MAX_CHUNKS) return NULL;
    char *base =
        mmap(NULL, CHUNK_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) return NULL;
    size_t tables = hl_align_up(CHUNK_PAGES * (sizeof(uint32_t) + sizeof(fg_desc_t)), 4096);
    char *t = hl_os_map(tables, hl_page_size, "guarded_meta");
    if (!t) {
        munmap(base, CHUNK_BYTES);
        return NULL;
    }
    /* No os_map event for the reservation: address space, not memory; each run's pages are
     * the program's blocks, traced as their allocations. */
    fg_chunk_t *c = &fg.chunks[fg.nchunks];
    c->base = base;
    c->desc = (fg_desc_t *)t;
    c->first = (uint32_t *)(t + CHUNK_PAGES * sizeof(fg_desc_t));
    c->bump = 0;
    __atomic_store_n(&fg.nchunks, fg.nchunks + 1, __ATOMIC_RELEASE);
    return c;
}

/* ---- lookup ------------------------------------------------------------------------------ */

static fg_chunk_t *chunk_of(const void *p)
{
    unsigned n = __atomic_load_n(&fg.nchunks, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++)
        if ((uintptr_t)p - (uintptr_t)fg.chunks[i].base < CHUNK_BYTES) return &fg.chunks[i];
    return NULL;
}

int hl_fullguard_owns(const void *p)
{
    return chunk_of(p) != NULL;
}

/* The run holding the page of addr (a data page or its guard page), or NULL. */
static fg_desc_t *run_of(const void *addr, fg_chunk_t **cp)
{
    fg_chunk_t *c = chunk_of(addr);
    if (!c) return NULL;
    size_t pg = ((uintptr_t)addr - (uintptr_t)c->base) / 4096;
    uint32_t f = __atomic_load_n(&c->first[pg], __ATOMIC_ACQUIRE);
    if (!f) return NULL;
    if (cp) *cp = c;
    return &c->desc[f - 1];
}

static char *run_base(const fg_chunk_t *c, const fg_desc_t *d)
{
    return c->base + (size_t)(d - c->desc) * 4096;
}

static char *user_ptr(const fg_chunk_t *c, const fg_desc_t *d)
{
    return run_base(c, d) + d->off;
}

/* ---- allocation ------------------------------------------------------------------------- */

/* Is this request picked? guard=all: always; sample:N: after a per-thread countdown drawn
 * uniformly from [1, 2N-1] (mean N), so that no allocation pattern of the program aliases with
 * a fixed period. */
static int picked(const hl_heap_t *h)
{
    if (h->opt.guard == 2) return 1;
    uint32_t n = h->opt.guard_sample;
    if (n <= 1) return 1;
    if (hl_fullguard_sample_left > 1) {
        hl_fullguard_sample_left--;
        return 0;
    }
    /* A thread's first pick is its Nth request (deterministic: a short program is never
     * sampled, so its reports do not depend on chance); after a pick, the next one comes
     * r requests later, r uniform in [N/2, 3N/2): a mean period of N. */
    int first = hl_fullguard_sample_left == 0;
    if (!sample_rng) sample_rng = ((uintptr_t)&sample_rng * 0x9e3779b97f4a7c15ull) | 1;
    sample_rng ^= sample_rng << 13;
    sample_rng ^= sample_rng >> 7;
    sample_rng ^= sample_rng << 17;
    hl_fullguard_sample_left = first ? n : n / 2 + (uint32_t)(sample_rng % n) + 1;
    return !first;
}

/* Take a run of `pages` data pages (+ guard): a free one of that length, else carved. Returns
 * its description in state RUN_RESERVED with *cp its chunk. Caller holds fg.lock. */
static fg_desc_t *run_take(size_t pages, fg_chunk_t **cp)
{
    fg_desc_t **head = &fg.free_runs[pages <= SMALL_RUNS ? pages : 0];
    for (fg_desc_t **pp = head; *pp; pp = &(*pp)->next) {
        if ((*pp)->pages != pages) continue;
        fg_desc_t *d = *pp;
        *pp = d->next;
        *cp = NULL;
        for (unsigned i = 0; i < fg.nchunks && !*cp; i++)
            if (d >= fg.chunks[i].desc && d < fg.chunks[i].desc + CHUNK_PAGES) *cp = &fg.chunks[i];
        d->state = RUN_RESERVED;
        return d;
    }
    fg_chunk_t *c = fg.nchunks ? &fg.chunks[fg.nchunks - 1] : NULL;
    if (!c || c->bump + pages + 1 > CHUNK_PAGES) c = chunk_new();
    if (!c) return NULL;
    size_t first = c->bump;
    c->bump += pages + 1;
    for (size_t i = 0; i <= pages; i++)
        __atomic_store_n(&c->first[first + i], (uint32_t)first + 1, __ATOMIC_RELEASE);
    fg_desc_t *d = &c->desc[first];
    d->pages = (uint32_t)pages;
    d->state = RUN_RESERVED;
    *cp = c;
    return d;
}

static uint32_t self_tid(void)
{
    if (!fg_tid) fg_tid = hl_os_tid();
    return fg_tid;
}

void *hl_fullguard_alloc(hl_heap_t *h, size_t req, size_t align, hl_opinfo_t *info)
{
    size_t a = align > 16 ? align : 16;
    if (h->arena_base || a > 4096 || req > HL_FG_MAX_RUN || !picked(h)) return NULL;
    pthread_once(&fg_once, fg_init_once);
    size_t span = hl_align_up(req, a); /* from p to the guard page */
    size_t pages = (span + 16 + 4095) / 4096;
    hl_lock(&fg.lock);
    fg_desc_t *d = NULL;
    fg_chunk_t *c = NULL;
    if (fg.live < fg.max_live) d = run_take(pages, &c);
    if (!d) {
        fg.fallback++;
        hl_unlock(&fg.lock);
        return NULL; /* served by the normal hardened heap */
    }
    int reused = d->meta.req || d->meta.astack || d->meta.atid;
    fg.live++;
    fg.made++;
    hl_unlock(&fg.lock);
    char *run = run_base(c, d);
    if (mprotect(run, pages * 4096, PROT_READ | PROT_WRITE) != 0) {
        hl_lock(&fg.lock);
        fg.live--;
        d->state = RUN_AVAIL;
        d->next = fg.free_runs[pages <= SMALL_RUNS ? pages : 0];
        fg.free_runs[pages <= SMALL_RUNS ? pages : 0] = d;
        hl_unlock(&fg.lock);
        return NULL;
    }
    char *p = run + pages * 4096 - span;
    memset(p - 16, HL_FG_CANARY, 15);
    p[-1] = (char)HL_TAG_GUARDED;
    memset(p + req, HL_FG_CANARY, span - req);
    d->heap = h;
    d->off = (uint32_t)(p - run);
    d->align = (uint32_t)a;
    d->meta.req = req;
    d->meta.state = HL_META_LIVE;
    d->meta.fstack = 0;
    d->meta.ftid = 0;
    d->meta.atid = self_tid();
    d->meta.astack = hl_harden_stack(h); /* may allocate (unwinder warm-up): nothing held */
    __atomic_store_n(&d->state, RUN_LIVE, __ATOMIC_RELEASE);
    hl_path_t path = reused ? HL_PATH_LARGE_REUSE : HL_PATH_LARGE_MMAP; /* fresh pages: zero */
    hl_count(h, path);
    hl_info(info, HL_TIER_LARGE, 0xff, path, req);
    return p;
}

/* ---- reports ------------------------------------------------------------------------------ */

/* Report on block p of run d (d NULL: no block); has_off: the bad byte is p + off. */
static void report(hl_heap_t *h, const char *kind, const void *p, const fg_desc_t *d, int has_off,
                   long off, const char *details, int must_abort)
{
    hl_hreport_t r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.addr = p;
    r.size = d ? d->meta.req : 0;
    r.tier = d ? "guarded" : "none";
    memcpy(r.cls, d ? "page" : "guarded", d ? 5 : 8);
    r.meta = d ? &d->meta : NULL;
    r.has_offset = has_off;
    r.offset = off;
    r.details = details;
    r.abort_on_error = must_abort || !h ? 1 : (int)h->opt.abort_on_error;
    hl_report(&r);
}

typedef enum { OP_FREE, OP_REALLOC, OP_USABLE, OP_DELETE } fg_op_t;

/* The live block p, or a report (kind by operation) and NULL. */
static fg_desc_t *live_block(hl_heap_t *h, const void *p, fg_op_t op, fg_chunk_t **cp)
{
    static const char *const names[] = {"free", "realloc", "malloc_usable_size", "operator delete"};
    static const char *const invalid[] = {"invalid-free", "invalid-realloc", "invalid-usable-size",
                                          "invalid-free"};
    fg_chunk_t *c = NULL;
    fg_desc_t *d = run_of(p, &c);
    uint32_t st = d ? __atomic_load_n(&d->state, __ATOMIC_ACQUIRE) : RUN_RESERVED;
    const char *kind = invalid[op];
    hl_text_t t = {.n = 0};
    hl_text_str(&t, names[op]);
    hl_text_str(&t, "(");
    hl_text_num(&t, (uintptr_t)p, 1);
    hl_text_str(&t, "): ");
    if (d && (const char *)p == user_ptr(c, d) && st == RUN_LIVE) {
        *cp = c;
        return d;
    }
    if (d && (const char *)p == user_ptr(c, d) && (st == RUN_FREED || st == RUN_AVAIL)) {
        if (op == OP_FREE || op == OP_DELETE) kind = "double-free";
        hl_text_str(&t, "the block was already freed");
    } else if (d && (st == RUN_LIVE || st == RUN_FREED || st == RUN_AVAIL)) {
        const char *up = user_ptr(c, d);
        if ((uintptr_t)p & 15 && (op == OP_FREE || op == OP_DELETE)) kind = "misaligned-free";
        hl_text_str(&t, (const char *)p >= up ? "interior pointer " : "pointer ");
        hl_text_num(
            &t, (uint64_t)((const char *)p >= up ? (const char *)p - up : up - (const char *)p), 0);
        hl_text_str(&t, (const char *)p >= up ? " bytes inside the block at "
                                              : " bytes before the block at ");
        hl_text_num(&t, (uintptr_t)up, 1);
        if (st != RUN_LIVE) hl_text_str(&t, " (freed)");
    } else {
        d = NULL;
        hl_text_str(&t, "no block starts at this address (guarded region)");
    }
    report(h, kind, p, d, 0, 0, t.s, 0);
    return NULL;
}

static size_t first_not(const char *s, size_t from, size_t to, uint8_t v)
{
    for (size_t i = from; i < to; i++)
        if ((uint8_t)s[i] != v) return i;
    return to;
}

/* Canaries before and after block p of run d; a report per damaged side. Returns errors. */
static size_t check_block(hl_heap_t *h, const fg_chunk_t *c, const fg_desc_t *d, const char *when)
{
    const char *run = run_base(c, d), *p = run + d->off;
    size_t req = d->meta.req, span = hl_align_up(req, d->align), errors = 0;
    size_t bad = first_not(p, req, span, HL_FG_CANARY);
    hl_text_t t = {.n = 0};
    if (bad < span) {
        hl_text_str(&t, "the gap between the block and its guard page was written (found on ");
        hl_text_str(&t, when);
        hl_text_str(&t, ")");
        report(h, "heap-overflow", p, d, 1, (long)bad, t.s, 0);
        errors++;
    }
    /* Below p: the canary, then the slack down to the run's start (zero pages). */
    long under = 0;
    for (long i = 2; i <= 16 && !under; i++)
        if ((uint8_t)p[-i] != HL_FG_CANARY) under = -i;
    if ((uint8_t)p[-1] != HL_TAG_GUARDED) under = -1;
    for (long i = 24; i <= (long)d->off && !under; i += 8) /* p is 16-aligned: words */
        if (*(const uint64_t *)(p - i))
            for (long k = i - 7; k <= i && !under; k++)
                if (p[-k]) under = -k;
    if (under) {
        t.n = 0;
        hl_text_str(&t, "bytes before the block were written (found on ");
        hl_text_str(&t, when);
        hl_text_str(&t, ")");
        report(h, "heap-underflow", p, d, 1, under, t.s, 0);
        errors++;
    }
    return errors;
}

/* ---- free, realloc, size ------------------------------------------------------------------ */

/* A run leaving the quarantine becomes reusable. Takes fg.lock. */
static void release_runs(void **runs, size_t n)
{
    if (!n) return;
    hl_lock(&fg.lock);
    for (size_t i = 0; i < n; i++) {
        fg_chunk_t *c = NULL;
        fg_desc_t *d = run_of(runs[i], &c);
        if (!d) continue;
        d->state = RUN_AVAIL;
        fg_desc_t **head = &fg.free_runs[d->pages <= SMALL_RUNS ? d->pages : 0];
        d->next = *head;
        *head = d;
    }
    hl_unlock(&fg.lock);
}

/* Drop the pages of a freed run and make it inaccessible (one system call). */
static void protect_run(char *run, size_t pages)
{
    int saved = errno;
    mmap(run, pages * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1,
         0);
    errno = saved;
}

void hl_fullguard_free(hl_heap_t *h, void *p, hl_opinfo_t *info)
{
    hl_info(info, HL_TIER_LARGE, 0xff, HL_PATH_NONE, 0);
    fg_chunk_t *c = NULL;
    if (!h->opt.check_free) {
        fg_desc_t *d0 = run_of(p, &c);
        if (!d0 || d0->state != RUN_LIVE) return; /* validation off: ignore what is not a block */
    }
    fg_desc_t *d = live_block(h, p, OP_FREE, &c);
    if (!d) return;
    uint32_t live = RUN_LIVE;
    if (!__atomic_compare_exchange_n(&d->state, &live, RUN_FREED, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        live_block(h, p, OP_FREE, &c); /* a racing free won: this one is the double free */
        return;
    }
    info->usable = d->meta.req;
    if (h->opt.canary) check_block(h, c, d, "free");
    d->meta.fstack = hl_harden_stack(h);
    d->meta.ftid = self_tid();
    d->meta.state = HL_META_FREED;
    char *run = run_base(c, d);
    protect_run(run, d->pages);
    hl_lock(&fg.lock);
    fg.live--;
    hl_unlock(&fg.lock);
    void *out[EVICT_BATCH];
    size_t n = fg.quarantine_ok
                   ? hl_quarantine_push(&fg.q, run, (size_t)d->pages * 4096, out, EVICT_BATCH)
                   : (out[0] = run, 1);
    release_runs(out, n);
    info->path = HL_PATH_QUARANTINE;
    hl_count(h, HL_PATH_QUARANTINE);
}

void *hl_fullguard_realloc(hl_heap_t *h, void *p, size_t n, hl_opinfo_t *info)
{
    fg_chunk_t *c = NULL;
    fg_desc_t *d = live_block(h, p, OP_REALLOC, &c);
    if (!d) {
        errno = EINVAL;
        return NULL;
    }
    if (n == 0) {
        hl_free_fast(h, p, info);
        return NULL;
    }
    size_t old = d->meta.req;
    void *q = hl_malloc_fast(h, n, info);
    if (!q) return NULL; /* the old block stays valid, errno is ENOMEM */
    memcpy(q, p, old < n ? old : n);
    hl_opinfo_t tmp;
    hl_free_fast(h, p, &tmp);
    info->path = HL_PATH_REALLOC_MOVE;
    return q;
}

size_t hl_fullguard_usable(hl_heap_t *h, const void *p)
{
    fg_chunk_t *c = NULL;
    fg_desc_t *d = live_block(h, p, OP_USABLE, &c);
    return d ? d->meta.req : 0;
}

void hl_fullguard_check_delete(hl_heap_t *h, void *p, size_t size, const char *what)
{
    fg_chunk_t *c = NULL;
    fg_desc_t *d = run_of(p, &c);
    if (!d || d->state != RUN_LIVE || (char *)p != user_ptr(c, d)) return; /* free reports it */
    size_t req = d->meta.req;
    if (size == req || (size == 0 && req == 1)) return;
    hl_text_t t = {.n = 0};
    hl_text_str(&t, what);
    hl_text_str(&t, " called with size ");
    hl_text_num(&t, size, 0);
    hl_text_str(&t, " for a block of ");
    hl_text_num(&t, req, 0);
    hl_text_str(&t, " bytes");
    report(h, "size-mismatch-delete", p, d, 0, 0, t.s, 0);
}

size_t hl_fullguard_check(hl_heap_t *h)
{
    size_t errors = 0;
    unsigned n = __atomic_load_n(&fg.nchunks, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++) {
        fg_chunk_t *c = &fg.chunks[i];
        for (size_t pg = 0; pg < c->bump;) {
            fg_desc_t *d = &c->desc[pg];
            if (!d->pages) break; /* being carved by another thread */
            if (__atomic_load_n(&d->state, __ATOMIC_ACQUIRE) == RUN_LIVE && d->heap == h)
                errors += check_block(h, c, d, "heap check");
            pg += d->pages + 1;
        }
    }
    return errors;
}

void hl_fullguard_destroy(hl_heap_t *h)
{
    unsigned n = __atomic_load_n(&fg.nchunks, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++) {
        fg_chunk_t *c = &fg.chunks[i];
        for (size_t pg = 0; pg < c->bump;) {
            fg_desc_t *d = &c->desc[pg];
            if (!d->pages) break;
            uint32_t live = RUN_LIVE;
            if (d->heap == h && __atomic_compare_exchange_n(&d->state, &live, RUN_FREED, 0,
                                                            __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                void *run = run_base(c, d);
                protect_run(run, d->pages);
                hl_lock(&fg.lock);
                fg.live--;
                hl_unlock(&fg.lock);
                release_runs(&run, 1);
            }
            pg += d->pages + 1;
        }
    }
    /* Quarantined runs of h stay quarantined: they hold no memory and leave in turn. */
}

/* ---- faults ------------------------------------------------------------------------------- */

int hl_fullguard_on_fault(const void *addr, int is_write)
{
    fg_chunk_t *c = NULL;
    fg_desc_t *d = run_of(addr, &c);
    if (!d) return 0;
    uint32_t st = __atomic_load_n(&d->state, __ATOMIC_ACQUIRE);
    if (st == RUN_RESERVED) return 0; /* not handed out yet: not an access to a block */
    const char *run = run_base(c, d), *guard = run + (size_t)d->pages * 4096;
    const char *a = addr, *p = run + d->off;
    const char *kind;
    hl_text_t t = {.n = 0};
    hl_text_str(&t, is_write ? "WRITE" : "READ");
    if (st == RUN_LIVE) {
        if (a < guard) return 0; /* a live block's own pages do not fault */
        /* The guard page also lies just below the next run: an underflow of its block lands
         * here too. The nearer block is named. */
        fg_chunk_t *c2 = NULL;
        fg_desc_t *n = run_of(guard + 4096, &c2);
        if (n && n != d && n->state == RUN_LIVE && user_ptr(c2, n) - a < a - (p + d->meta.req)) {
            hl_text_str(&t, " faulted on the guard page below the block's page run");
            report(n->heap, "heap-underflow", user_ptr(c2, n), n, 1, (long)(a - user_ptr(c2, n)),
                   t.s, 1);
            return 1;
        }
        kind = "heap-overflow";
        hl_text_str(&t, " faulted on the guard page after the block");
    } else {
        kind = "use-after-free";
        hl_text_str(&t, st == RUN_FREED
                            ? " faulted on a freed block (in quarantine)"
                            : " faulted on a freed block (out of quarantine, not reused yet)");
    }
    report(d->heap, kind, p, d, 1, (long)(a - p), t.s, 1);
    return 1;
}
