/* liballoc/tcap.h — adaptive thread-cache caps (tiny tier, default unhardened heaps).
 *
 * A thread bin starts at its class's base cap (tiny.c: about 8 KiB of slots, 16–128 slots)
 * and is two chains (hl_tcap_flush_keep below): it holds up to twice its cap before anything
 * reaches the class. A program whose per-class working set per phase is larger than that
 * refills the bin from the class and flushes it to the class every round, and each refill and
 * flush takes the class lock and moves a batch through the class's shared transfer cache and
 * slabs: with two threads on the same classes, those lines bounce between cores.
 *
 * So a bin grows when its class events alternate: a refill from the class whose previous
 * class event was a flush, or a flush to the class whose previous one was a refill, doubles
 * its cap (the flush then does not happen: the bin has room again), from the bin's second
 * alternation on. Moves between the bin and its second chain are no events. One-way traffic
 * (a producer only refills, a consumer only flushes) and a single burst (allocations, then
 * their frees: one alternation) never grow a cap. Bounds: a bin holds at most
 * HL_TCAP_BIN_BYTES of slots (HL_TCAP_BIN_SLOTS slots), and a thread's caps together at most
 * HL_TCAP_THREAD_BYTES above the base caps (a doubling that does not fit grows by the rest).
 *
 * Shrinking happens on the thread's own slow paths (the bins are the thread's, unlocked): one
 * slow event in HL_TCAP_CHECK_EVERY reads the clock, and once per decay period (option
 * decay=MS) every grown bin that neither alternated nor took its second chain back during the
 * period halves its cap (not below the base) and gives its second chain and the slots beyond
 * half of the new cap back to their slabs, from which empty slabs go back to the OS as before. A
 * flush of the whole cache (thread exit, a bind to another heap, malloc_trim, a fixed arena running
 * out) sets every cap back to the base. The fast paths do not change: they touch only a bin's head
 * and avail.
 */
#ifndef HL_TCAP_H
#define HL_TCAP_H

#include <stdint.h>

#ifndef HL_TCAP_BIN_BYTES /* -D at build time for measurements (docs/PERFORMANCE.md) */
#define HL_TCAP_BIN_BYTES (64u << 10)
#endif
#define HL_TCAP_BIN_SLOTS 1024u
#ifndef HL_TCAP_THREAD_BYTES /* -D at build time for measurements (docs/PERFORMANCE.md) */
#define HL_TCAP_THREAD_BYTES (192u << 10)
#endif
#define HL_TCAP_CHECK_EVERY 64u
/* First refills of a bin carve at most HL_TCAP_WARM_BYTES of slots (at least one), twice as
 * much at each next refill, for HL_TCAP_WARM_STEPS refills: a class a thread uses for a few
 * blocks costs it a page, not half a cap's worth of slots written (tcap_warm below). */
#define HL_TCAP_WARM_BYTES 4096u
#define HL_TCAP_WARM_STEPS 4u

enum { HL_TCAP_NONE = 0, HL_TCAP_REFILL = 1, HL_TCAP_FLUSH = 2 };

typedef struct hl_tcap_s {
    uint8_t last[32];     /* per class: the bin's last slow event (HL_TCAP_*) */
    uint8_t busy[32];     /* per class: alternated during the current period */
    uint8_t switches[32]; /* per class: alternations seen (saturates at 2) */
    uint8_t warm[32];     /* per class: refills so far (saturates at HL_TCAP_WARM_STEPS) */
    uint8_t before[32];   /* per class: the slow event before the last one (HL_TCAP_*) */
    uint32_t grown;       /* bytes of slots the caps allow above the base caps */
    uint32_t events;      /* slow events (refills and full-bin frees) so far */
    uint32_t since;       /* ms: start of the current period, 0 before the first look */
    uint32_t grows;       /* caps doubled (statistics, tests) */
    uint32_t shrinks;     /* caps halved by the idle check (statistics, tests) */
    /* Per class: the bin's second chain (hl_tcap_flush_keep below): a whole bin that filled,
     * kept by the thread until the bin empties, and its slot count; NULL / 0 when empty.
     * At most the bin's cap slots. */
    void *spare[32];
    uint32_t spare_n[32];
} hl_tcap_t;

struct hl_heap_s;
struct hl_tls_s;

/* Out of line: an alternation, or every HL_TCAP_CHECK_EVERY-th event. */
void hl_tcap_slow(struct hl_heap_s *h, hl_tcap_t *a, unsigned cls, int alternated);

/* A slow event of bin cls of the thread cache that holds a (kind HL_TCAP_REFILL: the empty bin
 * is about to be refilled from the class; HL_TCAP_FLUSH: a free found the bin full, which may
 * have room afterwards because its cap grew). Only events that reach the class count: a full
 * bin whose second chain is empty only moves into it (no event, returns HL_TCAP_NONE), and a
 * refill from the second chain does not call this. A few instructions unless something is
 * to be done. */
static inline __attribute__((always_inline)) unsigned
hl_tcap_event(struct hl_heap_s *h, hl_tcap_t *a, unsigned cls, unsigned kind)
{
    if (kind == HL_TCAP_FLUSH && !a->spare[cls]) return HL_TCAP_NONE;
    unsigned prev = a->last[cls];
    a->before[cls] = (uint8_t)prev;
    a->last[cls] = (uint8_t)kind;
    int alternated = prev != kind && prev != HL_TCAP_NONE;
    if (__builtin_expect(alternated || ++a->events % HL_TCAP_CHECK_EVERY == 0, 0))
        hl_tcap_slow(h, a, cls, alternated);
    return prev;
}

/* Slots a full bin of cap slots keeps when a free flushes it: none. A bin is two chains: the
 * loaded one the fast paths push onto and pop from, and a second one (hl_tcap_t.spare). A free
 * that finds the bin full moves the whole loaded chain to the second in O(1) (no walk to find
 * a cut, no lock, nothing another thread touches); only when the second chain is taken
 * already does that older chain go to the class's transfer cache (hl_tiny_flush_batch). A
 * malloc on an empty bin takes the second chain back whole, also without a lock, before it
 * refills from the class (hl_tiny_alloc_slow). So a phase of up to two caps of allocations and
 * their frees, in any order, never leaves the thread once the bin and its second chain are
 * filled, and a thread that only frees (a consumer) hands over whole bins. cap and prev (the bin's
 * previous class event) are not needed any more; heap.c's flush passes them. */
static inline __attribute__((always_inline)) uint32_t hl_tcap_flush_keep(uint32_t cap,
                                                                         unsigned prev)
{
    (void)cap;
    (void)prev;
    return 0;
}

/* Slots of class cls the thread cache of a holds in the bin's second chain (statistics). */
static inline uint32_t hl_tcap_spare_count(const hl_tcap_t *a, unsigned cls)
{
    return a->spare_n[cls];
}

/* How many slots a refill of bin cls (slots of slot bytes) takes, from the want of its cap:
 * bounded during the bin's first HL_TCAP_WARM_STEPS refills (HL_TCAP_WARM_BYTES, doubling). */
static inline __attribute__((always_inline)) unsigned hl_tcap_warm(hl_tcap_t *a, unsigned cls,
                                                                   uint32_t slot, unsigned want)
{
    unsigned w = a->warm[cls];
    if (__builtin_expect(w >= HL_TCAP_WARM_STEPS, 1)) return want;
    a->warm[cls] = (uint8_t)(w + 1);
    unsigned lim = (HL_TCAP_WARM_BYTES << w) / slot;
    if (lim == 0) lim = 1;
    return want < lim ? want : lim;
}

/* Forget the adaptation state (the caps themselves are set by the caller); the second chains
 * go back to the slabs of the cache's heap while that heap is alive, and are dropped with it
 * otherwise. */
void hl_tcap_reset(struct hl_tls_s *t);

#endif
