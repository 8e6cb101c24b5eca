/* liballoc/metacopy.c — the out-of-line copy of hardened blocks' trailers.
 *
 * A tiny or mid block's trailer (hl_hmeta_t: requested size, check word, state, stacks,
 * threads) sits right after its canary, where an overflow that runs past the canary destroys
 * it. Each trailer write is mirrored here, in a table mapped apart from every heap region, so
 * that a report on a block whose trailer is gone still gives its true requested size, the
 * first bad offset and its allocation (and free) stack. The copy carries the same check word
 * (hash of the block address, the size, the process secret and the slab generation), so a
 * stale copy never passes for the block's own.
 *
 * Open addressing keyed by the block address, linear probing bounded by PROBE; the start
 * index is the address in units of the block's own order of size — 1 KiB for blocks of
 * 1 KiB and more (nearly every mid block of a hardened heap: requests above the tiny tier),
 * 64 bytes for smaller ones (memalign, tiny=0), so that at most about one block starts per
 * unit and neighbouring blocks use neighbouring entries (the pages of the table a program
 * touches follow the heap it uses). A block's size does not change while it has a copy, so
 * put, get and delete find the same start. The table costs 40 bytes per KiB of heap span of
 * big blocks; with 64-byte units for all it was 40 per 64 bytes, every page of the table under
 * the span touched (gcc -O2 -c tlsf.c under harden=1: 1.4 MiB of its peak RSS). An entry is claimed
 * with a CAS on its key (empty or a deleted entry); a block's entry is deleted when the block
 * is really released. The fields are written without locks: only error paths read them, and
 * a torn read fails the check word (the report then says what it says without a copy). When
 * a probe run is full the block simply has no copy.
 *
 * Tiny slots do not use that table: keyed by address, it touched 40 bytes of table per 64 bytes
 * of heap address range whatever the slot size (tiny.mixed: 0.5 MiB, thread.2t: 2 MiB of peak
 * RSS, and a cache miss per operation). Each slab has instead an array of copies indexed by slot
 * (32 bytes per slot, slots of a hardened heap are 64 bytes at least), found through a directory
 * indexed by slab number: a slab's copies are as dense as its slots, and the directory entries
 * of a segment's slabs are neighbours. A slab address keeps its array for the life of the
 * process (slab segments are unmapped only with their heap; an address reused later by another
 * heap's slab of the same size gets the same array: its stale copies fail the check word, which
 * hashes the slab generation). Copies of tiny slots are never deleted: the copy of a live slot
 * is always the one its allocation wrote, and reports consult copies of live slots only.
 */
#include "harden.h"

#include <string.h>

#define COPY_SLOTS ((size_t)1 << 21) /* 80 MiB of address space, touched as the heap is */
#define PROBE      64
#define UNIT_BIG   10 /* start index of a block of 2^UNIT_BIG bytes or more: address / 1 KiB */
#define UNIT_SMALL 6  /* of a smaller block: address / 64 */
#define KEY_EMPTY  0
#define KEY_GONE   1

typedef struct copy_s {
    uintptr_t key;
    hl_hmeta_t m;
} copy_t;

static copy_t *table;
static int table_state; /* 0 = not mapped, 1 = mapping, 2 = ready, -1 = failed */

/* Tiny slots: directory of slabs (harden.h), arrays of copies carved from chunks mapped on
 * demand. */
#define DIR_SLOTS  HL_METACOPY_DIR_SLOTS
#define DIR_PROBE  64
#define SLOT_MIN   HL_METACOPY_SLOT_MIN
#define ARR_CHUNK  ((size_t)64 << 20) /* copies of 128 MiB of 64 KiB slabs */
#define ARR_CHUNKS 64u

typedef hl_metacopy_dir_t dir_t;

hl_metacopy_dir_t *hl_metacopy_dir; /* NULL until the tables are mapped (acquire) */
static dir_t *dir;
static hl_lock_t arr_lock = PTHREAD_MUTEX_INITIALIZER; /* carving arrays (a slab's first use) */
static char *arr_chunk;
static size_t arr_used;
static unsigned arr_chunks;

int hl_metacopy_init(void)
{
    int st = __atomic_load_n(&table_state, __ATOMIC_ACQUIRE);
    if (st == 2) return 0;
    if (st == -1) return -1;
    int zero = 0;
    if (__atomic_compare_exchange_n(&table_state, &zero, 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        table = hl_os_map(COPY_SLOTS * sizeof(copy_t), hl_page_size, "harden");
        dir = table ? hl_os_map(DIR_SLOTS * sizeof(dir_t), hl_page_size, "harden") : NULL;
        __atomic_store_n(&table_state, dir ? 2 : -1, __ATOMIC_RELEASE);
        __atomic_store_n(&hl_metacopy_dir, dir, __ATOMIC_RELEASE);
    }
    while ((st = __atomic_load_n(&table_state, __ATOMIC_ACQUIRE)) == 1)
        ;
    return st == 2 ? 0 : -1;
}

static inline size_t start_of(const void *p, size_t size)
{
    unsigned unit = size >> UNIT_BIG ? UNIT_BIG : UNIT_SMALL;
    return ((uintptr_t)p >> unit) & (COPY_SLOTS - 1);
}

static copy_t *find(const void *p, size_t size)
{
    if (__atomic_load_n(&table_state, __ATOMIC_ACQUIRE) != 2) return NULL;
    size_t i = start_of(p, size);
    for (unsigned k = 0; k < PROBE; k++, i = (i + 1) & (COPY_SLOTS - 1)) {
        uintptr_t key = __atomic_load_n(&table[i].key, __ATOMIC_ACQUIRE);
        if (key == (uintptr_t)p) return &table[i];
        if (key == KEY_EMPTY) return NULL;
    }
    return NULL;
}

void hl_metacopy_put(const void *p, size_t size, const hl_hmeta_t *m)
{
    if (__atomic_load_n(&table_state, __ATOMIC_ACQUIRE) != 2) return;
    copy_t *c = find(p, size);
    if (!c) {
        size_t i = start_of(p, size);
        for (unsigned k = 0; k < PROBE && !c; k++, i = (i + 1) & (COPY_SLOTS - 1)) {
            uintptr_t key = __atomic_load_n(&table[i].key, __ATOMIC_ACQUIRE);
            if ((key == KEY_EMPTY || key == KEY_GONE) &&
                __atomic_compare_exchange_n(&table[i].key, &key, (uintptr_t)p, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE))
                c = &table[i];
        }
        if (!c) return; /* a full run: this block has no copy */
    }
    c->m = *m;
}

int hl_metacopy_get(const void *p, size_t size, hl_hmeta_t *out)
{
    copy_t *c = find(p, size);
    if (!c) return 0;
    *out = c->m;
    return 1;
}

void hl_metacopy_del(const void *p, size_t size)
{
    copy_t *c = find(p, size);
    if (c) __atomic_store_n(&c->key, (uintptr_t)KEY_GONE, __ATOMIC_RELEASE);
}

/* ---- tiny slots ------------------------------------------------------------------------ */

/* An array of n copies, zeroed (fresh pages: a zero check word matches no block). Caller holds
 * arr_lock. NULL when the chunks are used up or cannot be mapped. */
static hl_hmeta_t *arr_carve(size_t n)
{
    size_t bytes = n * sizeof(hl_hmeta_t);
    if (bytes > ARR_CHUNK) return NULL;
    if (!arr_chunk || arr_used + bytes > ARR_CHUNK) {
        if (arr_chunks == ARR_CHUNKS) return NULL;
        char *c = hl_os_map(ARR_CHUNK, hl_page_size, "harden");
        if (!c) return NULL;
        arr_chunk = c;
        arr_used = 0;
        arr_chunks++;
    }
    hl_hmeta_t *a = (hl_hmeta_t *)(arr_chunk + arr_used);
    arr_used += bytes;
    return a;
}

/* The directory entry of key from its home index i: found, or (create) made. */
static hl_hmeta_t *dir_find(uintptr_t key, size_t i, size_t cap, int create)
{
    size_t j = i;
    for (unsigned k = 0; k < DIR_PROBE; k++, j = (j + 1) & (DIR_SLOTS - 1)) {
        uintptr_t kk = __atomic_load_n(&dir[j].key, __ATOMIC_ACQUIRE);
        if (kk == key) return dir[j].arr;
        if (kk == 0) break;
    }
    if (!create) return NULL;
    hl_hmeta_t *arr = NULL;
    hl_lock(&arr_lock);
    j = i;
    for (unsigned k = 0; k < DIR_PROBE; k++, j = (j + 1) & (DIR_SLOTS - 1)) {
        uintptr_t kk = __atomic_load_n(&dir[j].key, __ATOMIC_ACQUIRE);
        if (kk == key) {
            arr = dir[j].arr; /* another thread made it meanwhile */
            break;
        }
        if (kk == 0) {
            arr = arr_carve(cap);
            if (arr) {
                dir[j].arr = arr;
                __atomic_store_n(&dir[j].key, key, __ATOMIC_RELEASE);
            }
            break;
        }
    }
    hl_unlock(&arr_lock);
    return arr; /* NULL: a full probe run or no memory: the slab's slots have no copies */
}

hl_hmeta_t *hl_metacopy_slot_slow(const void *slab, unsigned lg, size_t idx, int create)
{
    size_t cap = ((size_t)1 << lg) / SLOT_MIN;
    if (idx >= cap || __atomic_load_n(&table_state, __ATOMIC_ACQUIRE) != 2) return NULL;
    uintptr_t key = (uintptr_t)slab | lg;
    hl_hmeta_t *arr = dir_find(key, ((uintptr_t)slab >> lg) & (DIR_SLOTS - 1), cap, create);
    return arr ? arr + idx : NULL;
}

void hl_metacopy_fork_prepare(void)
{
    hl_lock(&arr_lock);
}

void hl_metacopy_fork_parent(void)
{
    hl_unlock(&arr_lock);
}

void hl_metacopy_fork_child(void)
{
    hl_lock_init(&arr_lock);
}
