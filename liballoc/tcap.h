/* liballoc/tcap.h — adaptive thread-cache caps (tiny tier, default unhardened heaps).
 *
 * A thread bin starts at its class's base cap (tiny.c: about 16 KiB of slots, 16–128 slots).
 * A program whose per-class working set per phase is larger than that empties and refills
 * the bin, then fills and flushes it, every cap/2 operations, and each refill and flush takes
 * the class lock and moves a batch through the class's shared transfer cache and slabs: with
 * two threads on the same classes, those lines bounce between cores.
 *
 * So a bin grows when it alternates: a refill whose previous slow event was a flush, or a
 * flush whose previous slow event was a refill, doubles its cap (the flush then does not
 * happen: the bin has room again), from the bin's second alternation on. One-way traffic (a
 * producer only refills, a consumer only flushes) and a single burst (allocations, then their
 * frees: one alternation) never grow a cap. Bounds: a bin holds at most
 * HL_TCAP_BIN_BYTES of slots (HL_TCAP_BIN_SLOTS slots), and a thread's caps together at most
 * HL_TCAP_THREAD_BYTES above the base caps.
 *
 * Shrinking happens on the thread's own slow paths (the bins are the thread's, unlocked): one
 * slow event in HL_TCAP_CHECK_EVERY reads the clock, and once per decay period (option
 * decay=MS) every grown bin that did not alternate during the period halves its cap (not
 * below the base) and gives the slots beyond half of the new cap back to their slabs, from
 * which empty slabs go back to the OS as before. A flush of the whole cache (thread exit,
 * a bind to another heap, malloc_trim, a fixed arena running out) sets every cap back to
 * the base. The fast paths do not change: they touch only a bin's head and avail.
 */
#ifndef HL_TCAP_H
#define HL_TCAP_H

#include <stdint.h>

#define HL_TCAP_BIN_BYTES    (64u << 10)
#define HL_TCAP_BIN_SLOTS    1024u
#ifndef HL_TCAP_THREAD_BYTES
#define HL_TCAP_THREAD_BYTES (384u << 10)
#endif
#define HL_TCAP_CHECK_EVERY  64u

enum { HL_TCAP_NONE = 0, HL_TCAP_REFILL = 1, HL_TCAP_FLUSH = 2 };

typedef struct hl_tcap_s {
    uint8_t last[32];     /* per class: the bin's last slow event (HL_TCAP_*) */
    uint8_t busy[32];     /* per class: alternated during the current period */
    uint8_t switches[32]; /* per class: alternations seen (saturates at 2) */
    uint32_t grown;       /* bytes of slots the caps allow above the base caps */
    uint32_t events;      /* slow events (refills and full-bin frees) so far */
    uint32_t since;       /* ms: start of the current period, 0 before the first look */
    uint32_t grows;       /* caps doubled (statistics, tests) */
    uint32_t shrinks;     /* caps halved by the idle check (statistics, tests) */
} hl_tcap_t;

struct hl_heap_s;
struct hl_tls_s;

/* A refill of bin cls of t (empty bin, caching on) is about to take slots. */
void hl_tcap_on_refill(struct hl_heap_s *h, struct hl_tls_s *t, unsigned cls);
/* A free found bin cls of t full; afterwards the bin may have room (its cap grew). */
void hl_tcap_on_flush(struct hl_heap_s *h, struct hl_tls_s *t, unsigned cls);
/* Forget the adaptation state (the caps themselves are set by the caller). */
void hl_tcap_reset(struct hl_tls_s *t);

#endif
