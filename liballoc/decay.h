/* liballoc/decay.h — memory kept for reuse goes back to the OS after `decay` ms unused.
 *
 * Two caches keep freed memory mapped (and faulted in) so that the next request reuses it
 * without system calls or page faults: the large tier's cache of freed mappings (large.h) and
 * the mid arenas' empty TLSF pools (mid.h). Each entry carries the time it became idle; an
 * entry idle for at least opt.decay_ms (option decay=MS) is released. There is no background
 * thread: the releases happen on the allocator's own slow paths — every cache insertion
 * expires the stale entries, and hl_decay_tick() (called by the malloc and free slow paths of
 * heap.c, never by a fast path) runs a pass at most four times per decay period while
 * something is kept. So memory returns to the OS shortly after a burst ends as long as the
 * program still allocates; malloc_trim releases everything at once.
 *
 * Time is a 32-bit millisecond count from CLOCK_MONOTONIC_COARSE (vDSO, no system call,
 * 4 ms resolution); it wraps every 49 days, and every comparison is of differences.
 */
#ifndef HL_DECAY_H
#define HL_DECAY_H

#include <stdint.h>

struct hl_heap_s;

/* Milliseconds, monotonic, wrapping. */
uint32_t hl_decay_now(void);
/* Run a decay pass when one is due (out of line; see hl_decay_tick). */
void hl_decay_run(struct hl_heap_s *h);

/* Cheap when nothing is kept: one load and a branch. */
static inline __attribute__((always_inline)) void hl_decay_tick(struct hl_heap_s *h,
                                                                const uint32_t *pending)
{
    if (__builtin_expect(__atomic_load_n(pending, __ATOMIC_RELAXED) != 0, 0)) hl_decay_run(h);
}

#endif
