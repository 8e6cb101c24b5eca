/* liballoc/os.h — the OS layer: every mapping the allocator makes goes through here, so that
 * the tracer sees it (os_map / os_unmap events) and so that nothing else calls mmap directly.
 * No function here allocates; all are safe on allocator paths (no locks held required). */
#ifndef HL_OS_H
#define HL_OS_H

#include <stddef.h>
#include <stdint.h>

extern size_t hl_page_size;

void hl_os_init(void);
/* Map `len` bytes (page multiple) aligned to `align` (power of two >= page). NULL on failure. */
void *hl_os_map(size_t len, size_t align, const char *purpose);
void hl_os_unmap(void *addr, size_t len, const char *purpose);
/* The same without the os_map/os_unmap event: for the heap's long-lived regions (slab
 * segments, TLSF pools, the fixed arena), which are reported through hl_region_report so that
 * regions mapped before tracing started are reported too (hl_heap_report_regions). */
void *hl_os_map_quiet(size_t len, size_t align, const char *purpose);
void hl_os_unmap_quiet(void *addr, size_t len, const char *purpose);
/* Report a region to the tracer once: emits os_map when tracing is on and *reported is 0,
 * then sets it. Caller holds the lock that guards the region's list. */
void hl_region_report(void *addr, size_t len, const char *purpose, uint32_t *reported);
/* Its os_unmap, when it was reported. */
void hl_region_unreport(void *addr, size_t len, const char *purpose, uint32_t *reported);
/* Give the pages inside [addr, addr+len) back (MADV_DONTNEED); rounds inward to pages. */
void hl_os_decommit(void *addr, size_t len);
/* Resize a mapping, possibly moving it. NULL on failure (the old mapping stays). */
void *hl_os_remap(void *addr, size_t old_len, size_t new_len, const char *purpose);
/* Move the pages of [src, src+len) (one kernel mapping) to [dst, dst+len), which must be a
 * mapping of ours already (registered): mremap with MREMAP_FIXED, so resident pages move
 * without being faulted in again or copied, and whatever was at dst is replaced. The source
 * range is unregistered; no trace event (the caller tells the trace). 0, or -1 with the
 * source untouched (errno kept). */
int hl_os_move(void *src, size_t len, void *dst);
/* The process's kernel mappings (lines of /proc/self/maps, raw system calls, no allocation);
 * 0 when they cannot be counted. */
size_t hl_os_map_count(void);
/* Number of CPUs this process may run on (no allocation). */
unsigned hl_os_ncpu(void);
/* Thread id (gettid) without libc caching concerns. */
unsigned hl_os_tid(void);

#endif
