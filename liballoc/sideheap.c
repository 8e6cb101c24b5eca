/* liballoc/sideheap.c — the tracer's heap: memory for LTTng-UST, libunwind and heapledger's
 * own tracing code, kept out of the program's heap.
 *
 * Under `heapledger record` the tracer lives in the traced process and allocates through the
 * same malloc as the program: LTTng-UST's constructor and its "-ust" listener threads (about
 * 2,600 blocks at start-up), the unwinder's first walk, LTTng's fork handler in a child. If the
 * default heap served them, a fixed arena (arena=SIZE) would lose most of its room to the
 * tracer and the program's statistics, events and leaks would include the tracer's blocks.
 * The shim (shim.c) decides who a call belongs to and sends the tracer's calls here.
 *
 * Layout. One reservation of address space (MAP_NORESERVE: pages cost memory only when
 * touched; HL_SIDE_RESERVE when the process is recorded, HL_SIDE_RESERVE_UNTRACED when only
 * heapledger's call-site registration uses it), made at the first tracer allocation and never
 * moved or grown, is one TLSF pool; when it is full the shim falls back to the default heap.
 * A block of this heap is therefore recognised by its address alone, with one subtraction
 * and one comparison (hl_side_owns), and that test is made only on the shim's gated path,
 * which the untraced fast path never takes. The blocks have the ordinary
 * TLSF header (tag HL_TAG_MID) with the owner byte HL_SIDE_OWNER, which names no arena of any
 * heap: a side block that reached the default heap's free by mistake is reported as an invalid
 * free instead of corrupting a mid arena.
 *
 * Contract: nothing here allocates, prints through stdio or calls the tracer (the region is
 * not reported: it is not the program's). One lock guards the TLSF instance; it is taken
 * with no other allocator lock held and nothing is locked inside it. Fork: the lock is taken
 * in prepare and released (parent) or re-initialised (child) by heap.c's fork handlers.
 */
#include "internal.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

/* Freed blocks at least this big give their pages back (the tracer's big blocks are rare:
 * unwinder caches, hash tables). */
#define HL_SIDE_DECOMMIT (256u << 10)

hl_side_region_t hl_side_region;

/* Module statics, gathered. */
static struct {
    hl_lock_t lock;
    hl_tlsf_t tlsf;
    int state;            /* 0 = no region yet, 1 = ready, -1 = could not map one (never retried) */
    size_t want;          /* bytes to reserve (hl_side_reserve_hint), 0 = HL_SIDE_RESERVE */
    size_t blocks, bytes; /* live blocks and their usable bytes (hl_side_print) */
    size_t peak;
} side = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Map the region and make it one pool. Caller holds side.lock. */
static int side_setup_locked(void)
{
    if (side.state) return side.state > 0 ? 0 : -1;
    int saved = errno;
    side.state = -1;
    size_t want = side.want ? side.want : HL_SIDE_RESERVE;
    size_t min = want < HL_SIDE_RESERVE_MIN ? want : HL_SIDE_RESERVE_MIN;
    for (size_t len = want; len >= min; len /= 4) {
        void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) continue;
        hl_tlsf_init(&side.tlsf, HL_SIDE_OWNER, 0);
        if (hl_tlsf_add_pool(&side.tlsf, m, len) != 0) {
            munmap(m, len);
            break;
        }
        __atomic_store_n(&hl_side_region.base, (uintptr_t)m, __ATOMIC_RELAXED);
        __atomic_store_n(&hl_side_region.len, len, __ATOMIC_RELEASE);
        side.state = 1;
        break;
    }
    errno = saved;
    return side.state > 0 ? 0 : -1;
}

static void side_count(size_t usable, int sign)
{
    if (sign > 0) {
        side.blocks++;
        side.bytes += usable;
        if (side.bytes > side.peak) side.peak = side.bytes;
    } else {
        side.blocks--;
        side.bytes -= usable;
    }
}

void *hl_side_memalign(size_t align, size_t n)
{
    if (align < HL_ALIGN) align = HL_ALIGN;
    hl_lock(&side.lock);
    void *p = NULL;
    if (side_setup_locked() == 0) {
        p = align <= HL_ALIGN ? hl_tlsf_malloc(&side.tlsf, n, NULL)
                              : hl_tlsf_memalign(&side.tlsf, align, n, NULL);
        if (p) side_count(hl_tlsf_usable(p), 1);
    }
    hl_unlock(&side.lock);
    return p;
}

void *hl_side_malloc(size_t n)
{
    return hl_side_memalign(HL_ALIGN, n);
}

void *hl_side_calloc(size_t n, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(n, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = hl_side_malloc(total);
    if (p) memset(p, 0, total); /* recycled memory: the region is not zero after first use */
    return p;
}

void hl_side_free(void *p)
{
    size_t usable = hl_tlsf_usable(p);
    hl_lock(&side.lock);
    side_count(usable, -1);
    hl_tlsf_free(&side.tlsf, p, NULL);
    /* Under the lock: nobody may allocate these pages while they are dropped. The block's
     * first 16 bytes hold the list links of the free span it is now part of. */
    if (usable >= HL_SIDE_DECOMMIT) hl_os_decommit((char *)p + 16, usable - 16);
    hl_unlock(&side.lock);
}

size_t hl_side_usable(const void *p)
{
    return hl_tlsf_usable(p);
}

void *hl_side_realloc(void *p, size_t n)
{
    if (!p) return hl_side_malloc(n);
    if (n == 0) {
        hl_side_free(p);
        return NULL;
    }
    size_t old = hl_tlsf_usable(p);
    hl_lock(&side.lock);
    int ok = hl_tlsf_resize(&side.tlsf, p, n);
    if (ok) {
        side_count(old, -1);
        side_count(hl_tlsf_usable(p), 1);
    }
    hl_unlock(&side.lock);
    if (ok) return p;
    void *q = hl_side_malloc(n);
    if (!q) return NULL; /* the old block stays valid */
    memcpy(q, p, old < n ? old : n);
    hl_side_free(p);
    return q;
}

void hl_side_reserve_hint(size_t bytes)
{
    hl_lock(&side.lock);
    side.want = hl_align_up(bytes, hl_page_size);
    hl_unlock(&side.lock);
}

void hl_side_totals(size_t *blocks, size_t *bytes)
{
    hl_lock(&side.lock);
    *blocks = side.blocks;
    *bytes = side.bytes;
    hl_unlock(&side.lock);
}

void hl_side_print(int fd)
{
    hl_lock(&side.lock);
    size_t blocks = side.blocks, bytes = side.bytes, peak = side.peak;
    int used = side.state > 0;
    hl_unlock(&side.lock);
    if (!used) return;
    hl_out_t o;
    hl_out_init(&o, fd);
    hl_out_str(&o, "heapledger: tracer heap (outside the program's heap): ");
    hl_out_u64(&o, blocks);
    hl_out_str(&o, " blocks live, ");
    hl_out_size(&o, bytes);
    hl_out_str(&o, " (peak ");
    hl_out_size(&o, peak);
    hl_out_str(&o, ")\n");
    hl_out_flush(&o);
}

size_t hl_side_check(int verbose)
{
    hl_lock(&side.lock);
    size_t errors = side.state > 0 ? hl_tlsf_check(&side.tlsf, verbose) : 0;
    hl_unlock(&side.lock);
    return errors;
}

void hl_side_fork_prepare(void)
{
    hl_lock(&side.lock);
}
void hl_side_fork_parent(void)
{
    hl_unlock(&side.lock);
}
void hl_side_fork_child(void)
{
    hl_lock_init(&side.lock);
}
