/* liballoc/mid.h — the mid tier: TLSF arenas, each behind its own lock.
 *
 * Normal mode: `narenas` arenas; a thread binds to the arena with the fewest live threads (the
 * lowest index among equals, hl_mid_pick_arena) — or to the arena of the mid blocks it freed
 * before it first allocated, when that one has at most one thread more — so that a generation
 * of short-lived threads takes the arenas its predecessors left, not arenas nobody used yet,
 * and a successor works where its predecessor's blocks were freed; an arena grows by
 * pools (1 MiB, doubling up to 8 MiB, or larger for big requests). A pool that becomes
 * entirely free stays in its arena and is parked (tlsf.h: it serves nothing) while the arena
 * has another pool that serves, so blocks gather in the pools the arena uses; it is unmapped
 * only after `decay` ms empty (decay.h) — the arena's last pool too — and a decay pass gives the
 * pages of younger parked pools back (a pool borrowed for moments never stays empty that long),
 * both only when no arena grew and no thread bound to or left an arena during that time (while
 * threads come and go, the empty pools are a churn's working set, not left-over memory). An arena
 * that must grow first takes back its own smallest parked pool that fits, then the smallest empty
 * pool of another arena that fits (threads are spread
 * over arenas by their live threads, and a thread that starts while its predecessor is still
 * exiting grows another arena than the one its predecessor emptied), and maps a new pool only when
 * there is none: the pages are reused without system calls or page faults. An arena also decommits
 * the pages of big freed blocks when it holds far more free memory than it uses. A block's arena is
 * the owner byte of its header, so a free from any thread goes to the right arena. Fixed-arena
 * mode: one arena whose only pool is the whole arena; every tier (tiny slabs too, when on) carves
 * from it and nothing is mapped afterwards.
 */
#ifndef HL_MID_H
#define HL_MID_H

#include <stddef.h>
#include <stdint.h>

typedef struct hl_arena_s {
    hl_lock_t lock;
    hl_tlsf_t tlsf;
    char pad[64];
} hl_arena_t;

typedef struct hl_mid_s {
    hl_arena_t arenas[HL_MAX_ARENAS];
    unsigned narenas;
    uint32_t users[HL_MAX_ARENAS]; /* live threads bound to each arena (hl_mid_pick_arena) */
    /* hl_decay_now() of the last arena growth, or thread bind to or leave of an arena: the kept
     * pools stay (and keep their pages) for the decay time after it (decay.h, mid.c). */
    uint32_t grow_stamp;
} hl_mid_t;

struct hl_heap_s;
struct hl_slab_s;

/* The arena for a thread binding to h: the one with the fewest live threads, the lowest index
 * among equals (taken with a compare-and-swap of the count it saw, so that threads binding at
 * once spread; it is a preference, any arena serves any thread). hl_mid_leave_arena undoes it at
 * thread exit or when the thread binds to another heap; hl_mid_fork_child counts the forking
 * thread only. */
unsigned hl_mid_pick_arena(struct hl_heap_s *h);
void hl_mid_leave_arena(struct hl_heap_s *h, unsigned arena);
void hl_mid_fork_child(struct hl_heap_s *h);
/* Returns 0, or -1 when the fixed arena cannot be set up. */
int hl_mid_setup(struct hl_heap_s *h);
void *hl_mid_alloc(struct hl_heap_s *h, size_t n, size_t align, hl_opinfo_t *info);
void hl_mid_free(struct hl_heap_s *h, void *p, hl_opinfo_t *info);
/* Resize in place; 1 on success. */
int hl_mid_resize(struct hl_heap_s *h, void *p, size_t n);
/* Arena mode: a slab-aligned block for the tiny tier, and its release. */
struct hl_slab_s *hl_mid_alloc_slab(struct hl_heap_s *h);
void hl_mid_free_slab(struct hl_heap_s *h, struct hl_slab_s *s);
/* Unmap the pools empty for the decay time; returns 1 while empty pools remain (decay.h). */
int hl_mid_decay(struct hl_heap_s *h, uint32_t now);
/* Decommit free spans and unmap every empty pool; returns bytes. */
size_t hl_mid_trim(struct hl_heap_s *h);
size_t hl_mid_check(struct hl_heap_s *h, int verbose);
void hl_mid_destroy(struct hl_heap_s *h);
/* Sums over arenas (locks each). */
void hl_mid_totals(struct hl_heap_s *h, size_t *pool_bytes, size_t *used_bytes, size_t *free_bytes,
                   size_t *largest_free, size_t *pools);

#endif
