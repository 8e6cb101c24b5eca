/* liballoc/fullguard.h — guarded blocks: one protected page run per block, right-aligned to
 * its guard page (harden=full = guard=all; guard=sample:N, and harden=1, for a fraction).
 *
 * A guarded block lives in a *run* of whole pages carved from a chunk (1 GiB of address
 * space reserved PROT_NONE, MAP_NORESERVE). The run's data pages are made read-write; the
 * page after them is the guard page and stays PROT_NONE. The block ends where the guard
 * begins, so the first byte past it faults:
 *
 *   run+0 ............ p-16    slack (read-write, part of the first data page)
 *   p-16 .. p-2                canary (HL_FG_CANARY), checked at free (underflow)
 *   p-1                        tag HL_TAG_GUARDED (the free fast path reads it; cap 0 bin)
 *   p .. p+req                 user bytes, p = guard - round_up(req, A), A = max(align, 16)
 *   p+req .. guard             gap of round_up(req, A) - req (< A) canary bytes, checked at free
 *   guard = run + pages*4096   PROT_NONE: an access faults at the instruction
 *
 *   pages = ceil((round_up(req, A) + 16) / 4096), so p-1 is always on a data page.
 *
 * The truth about a run (requested size, offset of p, state, stacks, heap) lives out of
 * line, in per-chunk tables indexed by page (first[] maps every page of a run and its guard
 * to the run's first page; desc[] is indexed by that first page), out of reach of the bug.
 *
 * Freed blocks: the run is replaced by fresh PROT_NONE pages (mmap MAP_FIXED: one system
 * call, the memory goes back) and enters a FIFO quarantine bounded in runs and bytes; any
 * access faults and is reported as use-after-free with the free stack. A run leaving the
 * quarantine goes to a free list of runs of its page count and is reused only for a block of
 * the same page count (its page tables never change). Its description stays until then, so a
 * later access is still named.
 *
 * Bounds: live runs cost two mappings (VMAs) each (the read-write run, and the PROT_NONE
 * stretch between it and its neighbour; freed runs merge into that stretch). Live guarded
 * blocks are limited to 3/8 of vm.max_map_count (24 573 with the default 65 530); beyond,
 * and for alignments above a page, requests above HL_FG_MAX_RUN or a fixed arena, the
 * request is served by the normal hardened heap (canaries; guard page for large blocks).
 * Everything here runs under one lock; system calls are made outside it where the run
 * cannot be seen by another thread.
 */
#ifndef HL_FULLGUARD_H
#define HL_FULLGUARD_H

#include "internal.h"

#define HL_TAG_GUARDED    0xD6u /* byte before a guarded block: a cap-0 bin, then the hook */
#define HL_FG_CANARY      0xCAu
#define HL_FG_MAX_RUN     ((size_t)64 << 20) /* larger blocks: the large tier's guard page */
#define HL_FG_QUARANTINE  65536u             /* freed runs kept PROT_NONE at most */
#define HL_FG_QBYTES      ((size_t)1 << 30)  /* address space of quarantined runs at most */
#define HL_DEFAULT_SAMPLE 1000u              /* harden=1: guard=sample:N (docs/hardening.md) */

/* guard=sample:N: requests this thread makes before its next pick, minus one (0: none made
 * yet). Most requests only decrement it (hl_harden_alloc_guarded, inline); the one that
 * finds 1 or 0 calls hl_fullguard_alloc, which draws the next countdown. */
extern __thread uint32_t hl_fullguard_sample_left __attribute__((tls_model("initial-exec")));

/* Serve req bytes aligned to align from a guarded run when this heap guards this request
 * (guard=all: always; guard=sample:N: about one request in N per thread); NULL when it does
 * not (or cannot: see the bounds above), and the caller serves it normally. */
void *hl_fullguard_alloc(hl_heap_t *h, size_t req, size_t align, hl_opinfo_t *info);

/* Is p in a guarded chunk? A few compares, no lock: the dispatch test of the hooks below. */
int hl_fullguard_owns(const void *p);

/* free of a pointer in a guarded chunk: validate (double, interior, canaries), then protect
 * and quarantine. Reports and (abort_on_error=0) leaves the block alone on error. */
void hl_fullguard_free(hl_heap_t *h, void *p, hl_opinfo_t *info);
/* realloc of a guarded block: always a new block (guarded or not), the old one freed. */
void *hl_fullguard_realloc(hl_heap_t *h, void *p, size_t n, hl_opinfo_t *info);
/* Requested size of a live guarded block; a report and 0 when p is not one. */
size_t hl_fullguard_usable(hl_heap_t *h, const void *p);
/* Sized delete / free_sized: the size must be the block's (0 for a 1-byte block). */
void hl_fullguard_check_delete(hl_heap_t *h, void *p, size_t size, const char *what);
/* Canaries of every live guarded block of heap h; returns the errors reported. */
size_t hl_fullguard_check(hl_heap_t *h);
/* Heap h goes away: release its guarded blocks, live and quarantined. */
void hl_fullguard_destroy(hl_heap_t *h);

/* A fault at addr (write or read): when it hit a guard page or a freed run, report it
 * (heap-overflow, heap-underflow, use-after-free) and abort; 0 when it is not ours. */
int hl_fullguard_on_fault(const void *addr, int is_write);

#endif
