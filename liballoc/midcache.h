/* liballoc/midcache.h — a per-thread cache of freed mid (TLSF) blocks, default heap only.
 *
 * A mid free puts the block in the calling thread's cache instead of taking its arena's lock,
 * and a later mid malloc of a size the cache holds takes it back without the lock: threads
 * that churn mid blocks (the 4–256 KiB of a server's buffers) stop meeting on the arena locks.
 *
 * Bands: a quarter octave of usable size from 4 KiB to 256 KiB (HL_MC_BANDS); a block is put
 * in the band of its usable size (its lower bound <= usable), and a request of n bytes looks in
 * the first band whose lower bound is >= n, then the next: every block found fits, and wastes
 * less than about half the request. HL_MC_SLOTS blocks per band, and at most HL_MC_BYTES of
 * usable bytes per thread; a put that finds its band or the byte budget full frees the band's
 * oldest block to its arena first.
 *
 * Where it is off: heaps other than the default one (one cache per thread, and the blocks
 * must go back to the heap they came from), fixed arenas, hardened mode (every free is
 * checked), rotation (delayed reuse), decay=0 (the caches off) and tcache=0.
 *
 * Thread safety: each cache is its thread's own (initial-exec TLS); blocks go back to their
 * arenas (header owner byte) under the arena locks. A thread caches only while its tiny cache
 * is bound (hl_tls.state == HL_TLS_BOUND): its key destructor is armed, and hl_tls_flush (at
 * thread exit, in malloc_trim, statistics) empties this cache too; frees that come after the
 * destructor, or in a thread that never allocated, go to the arenas directly, so nothing is
 * left in the cache of a thread that is gone. A forked child keeps only the forking thread's
 * cache (the blocks other threads held are lost to the child, at most HL_MC_BYTES each).
 * Memory after a burst: on the decay checks of a thread's slow paths (decay.h: one in
 * HL_DECAY_EVERY reads the clock while something is kept), a cache that served no request
 * during the last `decay` ms is emptied.
 */
#ifndef HL_MIDCACHE_H
#define HL_MIDCACHE_H

#include <stddef.h>
#include <stdint.h>

#define HL_MC_MIN_LOG2 12u /* 4 KiB: the first band's bound */
#define HL_MC_MAX_LOG2 16u /* bands end at 64 KiB (+3/4) */
#define HL_MC_BANDS    ((HL_MC_MAX_LOG2 - HL_MC_MIN_LOG2 + 1) * 4)
#define HL_MC_SLOTS    4u
#define HL_MC_BYTES    (256u << 10)

struct hl_heap_s;

/* Is the cache on for heap h (options; computed by hl_mid_setup)? */
int hl_mc_enabled(const struct hl_heap_s *h);
/* A cached block of at least n usable bytes, or NULL. */
void *hl_mc_get(struct hl_heap_s *h, size_t n);
/* Keep the freed block p (usable bytes); 0 when it was not kept (the caller frees it). */
int hl_mc_put(struct hl_heap_s *h, void *p, size_t usable);
/* Give every block of the calling thread's cache back to its arena; returns usable bytes. */
size_t hl_mc_flush(struct hl_heap_s *h);
/* Decay check on this thread at time now (decay.h): flush when the cache served nothing for
 * `decay` ms. */
void hl_mc_decay(struct hl_heap_s *h, uint32_t now);

#endif
