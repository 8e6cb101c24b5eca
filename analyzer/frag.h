/* analyzer/frag.h — external fragmentation of the mid tier from reconstructed free spans.
 *
 * The mid tier carves blocks out of regions (os_region rows with purpose 'tlsf_pool', or the
 * whole 'arena' in fixed-arena mode). A live mid block with user pointer p and usable size u
 * occupies [p - HL_MID_HEADER, p + u): the TLSF block header is 16 bytes. Every byte of a
 * region not covered by a live mid block (nor by an excluded range, e.g. a tiny slab segment
 * carved from the arena) is free; maximal runs of free bytes are the free spans.
 *
 *     external = 1 - largest free span / total free bytes      (0 when nothing is free)
 *
 *   region  [=====================================================)
 *   blocks       [hdr|live A  )      [hdr|live B     )
 *   spans   [...)               [...)                  [.........)
 */
#ifndef HL_FRAG_H
#define HL_FRAG_H

#include <stddef.h>
#include <stdint.h>

#define HL_MID_HEADER 16

typedef struct hl_span_s {
    uint64_t lo, hi; /* [lo, hi) */
} hl_span_t;

typedef struct hl_frag_s {
    uint64_t free_bytes; /* sum of free spans */
    uint64_t largest;    /* largest free span */
    uint64_t spans;      /* number of free spans */
    double external;     /* 1 - largest / free_bytes, 0 when free_bytes == 0 */
} hl_frag_t;

/* Compute the free spans of the regions given the occupied ranges (live mid blocks already
 * converted to [p - 16, p + u), plus any excluded ranges). Both arrays are sorted in place.
 * Occupied ranges may overlap each other; the parts outside every region are ignored. */
hl_frag_t hl_frag_compute(hl_span_t *regions, size_t nregions, hl_span_t *used, size_t nused);

#endif
