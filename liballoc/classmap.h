/* liballoc/classmap.h — the class map: free finds a tiny block's bin without reading the block.
 *
 * free's fast path used to read the block's header byte (ptr[-1]); for a block another thread
 * wrote last that load misses the cache and free waits for it. The class map holds the same
 * tag per 64 KiB window of the address space (one byte per window of the 47-bit user address
 * space: a 2 GiB MAP_NORESERVE reservation of which only the bytes of windows holding slabs are
 * ever written, one page per 256 MiB of slab address space): the bin index HL_BIN_TINY | class
 * (internal.h) for a window of a tiny slab of the default heap, 0 elsewhere. The free fast path
 * (shim.c) indexes the thread's bins with it; the block itself is only stored into.
 *
 * The map is also free's gate: hl_cmap points at the real map while the gate is open and at a
 * second, read-only all-zero reservation while it is closed (tracing possible, before the
 * first call decided, while the call sites are registered), where every tag is 0 — a bin of
 * cap 0 — so that every free takes the out-of-line path, which reads the header byte as
 * before. Costs the fast path no instruction: the map load and shift replace the gate's
 * compare.
 *
 * Registered: slabs of the default heap in normal mode when slab_size >= 64 KiB (the default;
 * smaller slabs and fixed arenas are not: their frees take the header-byte path). A slab's
 * windows are set when it is initialised for a class and cleared when it goes back to the slab
 * source, so a window never names a class while its slab is not one. Before the first
 * allocator call hl_cmap is a one-byte map that only free(NULL) can read.
 *
 * Both maps or neither (4 GiB of address space, no memory): under an address-space limit
 * (RLIMIT_AS, ulimit -v) without that much room nothing is reserved, hl_cmap stays at the
 * one-byte map and the preloaded free becomes its header-byte variant (shim.c,
 * hl_shim_free_without_map) before the first block is handed out: chosen once, so neither
 * variant tests for it on its fast path.
 */
#ifndef HL_CLASSMAP_H
#define HL_CLASSMAP_H

#include <stddef.h>
#include <stdint.h>

#define HL_CMAP_SHIFT 16
#define HL_CMAP_BYTES ((size_t)1 << (47 - HL_CMAP_SHIFT))

/* What free reads: the real map (gate open) or the zero map (closed). */
extern const uint8_t *hl_cmap __attribute__((visibility("hidden")));

/* The tag of p's window as free sees it (0 while the gate is closed). */
static inline __attribute__((always_inline)) unsigned hl_cmap_tag(const void *p)
{
    return __atomic_load_n(&hl_cmap, __ATOMIC_RELAXED)[(uintptr_t)p >> HL_CMAP_SHIFT];
}

/* Reserve both maps or neither (once; every caller returns after they exist or failed).
 * hl_cmap stays at the zero map (the shim opens the gate), or at the one-byte map when there
 * are none. */
void hl_cmap_init(void);
/* hl_cmap_init, then: do the maps exist? */
int hl_cmap_reserved(void);
/* Point hl_cmap at the real map (open != 0) or the zero map; no-op when there are none. */
void hl_cmap_gate(int open);
/* Is the gate open (hl_cmap at the real map)? */
int hl_cmap_open(void);
/* Set the windows of [base, base + bytes) (64 KiB-aligned) to tag in the real map. */
void hl_cmap_set(const void *base, size_t bytes, uint8_t tag);
/* The tag of p's window in the real map (0 when there is none), whatever the gate. */
unsigned hl_cmap_get(const void *p);

#endif
