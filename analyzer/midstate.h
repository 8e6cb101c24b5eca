/* analyzer/midstate.h — the mid tier's live state per process, for external fragmentation.
 *
 * Holds the live mid blocks (pointer -> usable size) and the mapped regions (address ->
 * length and purpose) of each process, and computes the free spans between them
 * (frag.h). It also keeps the state at one marked moment — the peak of R — without copying
 * it at each new peak: changes after the mark go to an undo log; the marked state is the
 * current one with the log undone. When the log outgrows the state (2 entries per live
 * block or region, at least 4096) the marked state's fragmentation is computed and the log
 * dropped: O(1) per change amortised, memory bounded by the live state.
 */
#ifndef HL_MIDSTATE_H
#define HL_MIDSTATE_H

#include <stdint.h>

#include "frag.h"
#include "stream.h"

typedef struct hl_midstate_s hl_midstate_t;

hl_midstate_t *hl_midstate_new(void);
void hl_midstate_free(hl_midstate_t *ms);

void hl_midstate_block_put(hl_midstate_t *ms, int64_t pid, uint64_t ptr, uint64_t usable);
void hl_midstate_block_del(hl_midstate_t *ms, int64_t pid, uint64_t ptr);
void hl_midstate_region_put(hl_midstate_t *ms, int64_t pid, uint64_t addr, uint64_t len,
                            hl_region_t purpose);
void hl_midstate_region_del(hl_midstate_t *ms, int64_t pid, uint64_t addr);

/* Fragmentation now, over all processes; *known = 0 when no mid region is mapped. */
hl_frag_t hl_midstate_frag(hl_midstate_t *ms, int *known);
/* Remember the state now (replacing the previous mark). */
void hl_midstate_mark(hl_midstate_t *ms);
/* Fragmentation of the marked state; *known = 0 without a mark or without regions then. */
hl_frag_t hl_midstate_marked_frag(hl_midstate_t *ms, int *known);

#endif
