/* liballoc/decay.h — memory kept for reuse goes back to the OS after `decay` ms unused.
 *
 * Two caches keep freed memory mapped (and faulted in) so that the next request reuses it
 * without system calls or page faults: the large tier's cache of freed mappings (large.h) and
 * the mid arenas' empty TLSF pools (mid.h). Each entry carries the time it became idle; an
 * entry idle for at least opt.decay_ms (option decay=MS) is released. There is no background
 * thread: the releases happen on the allocator's own slow paths — every cache insertion
 * expires the stale entries, and hl_decay_tick() (called by the malloc and free slow paths of
 * heap.c, never by a fast path) runs a pass at most four times per decay period while
 * something is kept and at least HL_DECAY_MIN_OPS × HL_DECAY_EVERY slow paths have run since
 * the last pass; it reads the clock on one slow path in HL_DECAY_EVERY of each thread (a
 * clock read on every one cost about 5 % of a mid-block workload's time). Entries expire only
 * in these passes (insertions evict only for room), so the time an entry is kept is measured
 * in both wall time and allocator activity. So memory returns to the OS shortly after a burst ends
 * as long as the program still allocates; malloc_trim releases everything at once.
 *
 * Time is a 32-bit millisecond count from CLOCK_MONOTONIC_COARSE (vDSO, no system call,
 * 4 ms resolution); it wraps every 49 days, and every comparison is of differences.
 */
#ifndef HL_DECAY_H
#define HL_DECAY_H

#include <stdint.h>

#define HL_DECAY_EVERY 16u
/* Counted slow paths (units of HL_DECAY_EVERY) between two passes, besides the time: a
 * process descheduled for longer than the decay time (a loaded machine) resumes and reuses
 * what it kept before a pass may release it. */
#define HL_DECAY_MIN_OPS 16u

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
