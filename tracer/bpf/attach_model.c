/* tracer/bpf/attach_model.c — malloc-family calls → block lifetimes (see attach.h).
 *
 * Calls arrive in ring-buffer order, which respects the order in which the process made
 * them: a free is recorded at its entry, before the allocator can hand the same pointer out
 * again; an allocation at its return. So a pointer is live from its allocation record to
 * the next free/realloc record naming it.
 */
#include "attach.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int grow_array(void **arr, size_t *cap, size_t elem)
{
    size_t n = *cap ? *cap * 2 : 1024;
    void *p = realloc(*arr, n * elem);
    if (!p) return -1;
    *arr = p;
    *cap = n;
    return 0;
}

/* Make room for element n of *arr; sets *oom and returns -1 when memory runs out. */
static int reserve(void **arr, size_t n, size_t *cap, size_t elem, int *oom)
{
    if (n < *cap || grow_array(arr, cap, elem) == 0) return 0;
    *oom = 1;
    return -1;
}

static int32_t intern_stack(hl_attach_t *a, uint64_t caller, int32_t bpf_id)
{
    if (!caller && bpf_id < 0) return -1;
    uint64_t key = (caller * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)(uint32_t)bpf_id << 1) ^ 1;
    uint32_t idx;
    if (hl_ptrmap_get(&a->stkidx, key, &idx) && a->stacks[idx].caller == caller &&
        a->stacks[idx].bpf_id == bpf_id)
        return (int32_t)idx;
    if (reserve((void **)&a->stacks, a->nstacks, &a->capstacks, sizeof *a->stacks, &a->oom) < 0)
        return -1;
    hl_astack_t *s = &a->stacks[a->nstacks];
    memset(s, 0, sizeof *s);
    s->caller = caller;
    s->bpf_id = bpf_id;
    s->depth = 1;
    s->ips[0] = caller;
    hl_ptrmap_put(&a->stkidx, key, (uint32_t)a->nstacks);
    return (int32_t)a->nstacks++;
}

static void note_tid(hl_attach_t *a, uint32_t tid)
{
    for (size_t i = 0; i < a->ntids; i++)
        if (a->tids[i] == tid) return;
    if (a->ntids < sizeof a->tids / sizeof a->tids[0]) a->tids[a->ntids++] = tid;
}

/* End the live block at ptr; returns its index, or -1 when the pointer is not live. */
static int64_t end_block(hl_attach_t *a, const struct hl_ucall *c, uint64_t seq, uint64_t ptr,
                         int32_t stack, uint32_t flags, int inferred)
{
    uint32_t idx;
    if (!hl_ptrmap_del(&a->live, ptr, &idx)) return -1;
    hl_ablock_t *b = &a->blocks[idx];
    b->ended = 1;
    b->free_seq = seq;
    b->free_ts = c->ts;
    b->free_tid = inferred ? 0 : c->tid;
    b->free_stack = inferred ? -1 : stack;
    b->flags |= flags;
    return idx;
}

static void orphan(hl_attach_t *a, const struct hl_ucall *c, uint64_t seq, uint64_t ptr,
                   int32_t stack)
{
    if (reserve((void **)&a->orphans, a->norphans, &a->caporphans, sizeof *a->orphans, &a->oom) < 0)
        return;
    a->orphans[a->norphans++] = (hl_aorphan_t){seq, c->ts, ptr, c->tid, stack};
}

static void new_block(hl_attach_t *a, const struct hl_ucall *c, uint64_t seq, uint64_t ptr,
                      int32_t stack, uint32_t flags, int64_t prev)
{
    if (ptr) end_block(a, c, seq, ptr, -1, 8, 1); /* allocated again without a free seen */
    if (reserve((void **)&a->blocks, a->nblocks, &a->capblocks, sizeof *a->blocks, &a->oom) < 0)
        return;
    hl_ablock_t *b = &a->blocks[a->nblocks];
    memset(b, 0, sizeof *b);
    b->ptr = ptr;
    b->size = c->size;
    b->alloc_seq = seq;
    b->alloc_ts = c->ts;
    b->alloc_tid = c->tid;
    b->alloc_stack = stack;
    b->free_stack = -1;
    b->prev = prev;
    b->flags = flags | (ptr ? 0 : 1);
    b->ended = !ptr;
    if (ptr && hl_ptrmap_put(&a->live, ptr, (uint32_t)a->nblocks) < 0) a->oom = 1;
    a->nblocks++;
}

void hl_attach_apply(hl_attach_t *a, const struct hl_ucall *c)
{
    uint64_t seq = a->seq++;
    int32_t stack = intern_stack(a, c->caller, c->stack);
    a->events++;
    note_tid(a, c->tid);
    switch (c->kind) {
    case HL_UCALL_FREE:
        if (end_block(a, c, seq, c->ptr, stack, 0, 0) < 0) orphan(a, c, seq, c->ptr, stack);
        break;
    case HL_UCALL_REALLOC: {
        int64_t prev = -1;
        if (!c->old_ptr) { /* realloc(NULL, n) allocates */
            new_block(a, c, seq, c->ptr, stack, 2, -1);
            break;
        }
        if (!c->ptr && c->size) { /* failed: the old block stays live */
            new_block(a, c, seq, 0, stack, 2, -1);
            break;
        }
        prev = end_block(a, c, seq, c->old_ptr, stack, 4, 0);
        if (prev < 0) orphan(a, c, seq, c->old_ptr, stack);
        if (c->ptr) new_block(a, c, seq, c->ptr, stack, 2, prev);
        break;
    }
    default: /* malloc, calloc, memalign family */
        new_block(a, c, seq, c->ptr, stack, 0, -1);
        break;
    }
}

int hl_attach_read_maps(hl_attach_t *a)
{
    char path[64], line[4096];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)a->pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    hl_amap_t *maps = NULL;
    size_t n = 0, cap = 0;
    int oom = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long long start, end, off;
        char perms[8];
        int name_at = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &name_at) <
                4 ||
            !name_at || line[name_at] != '/' || perms[2] != 'x')
            continue;
        line[strcspn(line, "\n")] = '\0';
        if (reserve((void **)&maps, n, &cap, sizeof *maps, &oom) < 0) break;
        maps[n] = (hl_amap_t){start, end, off, strdup(line + name_at)};
        if (maps[n].path) n++;
    }
    fclose(f);
    if (!n) {
        free(maps);
        return -1;
    }
    for (size_t i = 0; i < a->nmaps; i++)
        free(a->maps[i].path);
    free(a->maps);
    a->maps = maps;
    a->nmaps = n;
    return 0;
}

void hl_attach_fini(hl_attach_t *a)
{
    free(a->blocks);
    free(a->orphans);
    free(a->stacks);
    for (size_t i = 0; i < a->nmaps; i++)
        free(a->maps[i].path);
    free(a->maps);
    hl_ptrmap_fini(&a->live);
    hl_ptrmap_fini(&a->stkidx);
    memset(a, 0, sizeof *a);
}
