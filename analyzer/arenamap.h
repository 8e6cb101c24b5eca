/* analyzer/arenamap.h — a map of a fixed arena: its used and free runs at one moment (the
 * replay's first failure), as a text summary and an SVG picture.
 *
 * A run is a maximal stretch of consecutive blocks of one kind: free (a free TLSF block; the
 * allocator coalesces, so one free run is one free block) or used (live blocks, tiny slabs,
 * block headers, the pool header and the sentinel). Offsets are from the arena's start.
 */
#ifndef HL_ARENAMAP_H
#define HL_ARENAMAP_H

#include <stdint.h>
#include <stdio.h>

typedef struct hl_arena_run_s {
    uint64_t off, len;
    int is_free;
} hl_arena_run_t;

typedef struct hl_arena_map_s {
    uint64_t size; /* arena bytes */
    hl_arena_run_t *runs;
    size_t n, cap;
    uint64_t free_bytes, largest_free, free_runs, used_runs;
} hl_arena_map_t;

hl_arena_map_t *hl_arena_map_new(uint64_t size);
void hl_arena_map_free(hl_arena_map_t *m);
/* Add a block at offset off (ascending); stretches not covered by a block count as used. */
void hl_arena_map_add(hl_arena_map_t *m, uint64_t off, uint64_t len, int is_free);
/* Close the map: the tail after the last block is used. */
void hl_arena_map_finish(hl_arena_map_t *m);

/* Text: a summary line, a strip of `cells` characters (each cell a slice of the arena:
 * '#' used, '.' free, digits 1-9 tenths used), the largest free runs. */
void hl_arena_map_text(FILE *f, const hl_arena_map_t *m, const char *indent);
/* An inline SVG element (no external references): rows of the arena, free runs light. */
void hl_arena_map_svg(FILE *f, const hl_arena_map_t *m);

#endif
