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
 * index is the address in 64-byte units, so neighbouring blocks use neighbouring entries
 * (the pages of the table a program touches follow the heap it uses). An entry is claimed
 * with a CAS on its key (empty or a deleted entry); a block's entry is deleted when the block
 * is really released. The fields are written without locks: only error paths read them, and
 * a torn read fails the check word (the report then says what it says without a copy). When
 * a probe run is full the block simply has no copy.
 */
#include "harden.h"

#include <string.h>

#define COPY_SLOTS ((size_t)1 << 21) /* 80 MiB of address space, touched as the heap is */
#define PROBE      64
#define KEY_EMPTY  0
#define KEY_GONE   1

typedef struct copy_s {
    uintptr_t key;
    hl_hmeta_t m;
} copy_t;

static copy_t *table;
static int table_state; /* 0 = not mapped, 1 = mapping, 2 = ready, -1 = failed */

int hl_metacopy_init(void)
{
    int st = __atomic_load_n(&table_state, __ATOMIC_ACQUIRE);
    if (st == 2) return 0;
    if (st == -1) return -1;
    int zero = 0;
    if (__atomic_compare_exchange_n(&table_state, &zero, 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        table = hl_os_map(COPY_SLOTS * sizeof(copy_t), hl_page_size, "harden");
        __atomic_store_n(&table_state, table ? 2 : -1, __ATOMIC_RELEASE);
    }
    while ((st = __atomic_load_n(&table_state, __ATOMIC_ACQUIRE)) == 1)
        ;
    return st == 2 ? 0 : -1;
}

static inline size_t start_of(const void *p)
{
    return ((uintptr_t)p >> 6) & (COPY_SLOTS - 1);
}

static copy_t *find(const void *p)
{
    if (__atomic_load_n(&table_state, __ATOMIC_ACQUIRE) != 2) return NULL;
    size_t i = start_of(p);
    for (unsigned k = 0; k < PROBE; k++, i = (i + 1) & (COPY_SLOTS - 1)) {
        uintptr_t key = __atomic_load_n(&table[i].key, __ATOMIC_ACQUIRE);
        if (key == (uintptr_t)p) return &table[i];
        if (key == KEY_EMPTY) return NULL;
    }
    return NULL;
}

void hl_metacopy_put(const void *p, const hl_hmeta_t *m)
{
    if (__atomic_load_n(&table_state, __ATOMIC_ACQUIRE) != 2) return;
    copy_t *c = find(p);
    if (!c) {
        size_t i = start_of(p);
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

int hl_metacopy_get(const void *p, hl_hmeta_t *out)
{
    copy_t *c = find(p);
    if (!c) return 0;
    *out = c->m;
    return 1;
}

void hl_metacopy_del(const void *p)
{
    copy_t *c = find(p);
    if (c) __atomic_store_n(&c->key, (uintptr_t)KEY_GONE, __ATOMIC_RELEASE);
}
