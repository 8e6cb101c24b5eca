/* analyzer/omap.c — see omap.h. A treap with split/merge on node indices (node 0 is nil). */
#include "omap.h"

#include <stdlib.h>
#include <string.h>

#include "hmap.h"

static inline int before(int64_t pa, uint64_t a, int64_t pb, uint64_t b)
{
    return pa < pb || (pa == pb && a < b);
}

static uint32_t new_node(hl_omap_t *m)
{
    if (!m->n) { /* the nil sentinel */
        HL_VEC_PUSH(m->node, m->n, m->cap);
        memset(&m->node[0], 0, sizeof m->node[0]);
    }
    uint32_t i;
    if (m->free_list) {
        i = m->free_list;
        m->free_list = m->node[i].left;
    } else {
        HL_VEC_PUSH(m->node, m->n, m->cap);
        i = (uint32_t)(m->n - 1);
    }
    memset(&m->node[i], 0, sizeof m->node[i]);
    m->seed = m->seed * 1664525u + 1013904223u; /* LCG: the priorities need no quality */
    m->node[i].prio = m->seed;
    return i;
}

/* Split t into keys < (pid, k) and keys >= (pid, k). */
static void split(hl_omap_t *m, uint32_t t, int64_t pid, uint64_t k, uint32_t *l, uint32_t *r)
{
    if (!t) {
        *l = *r = 0;
        return;
    }
    hl_onode_t *n = &m->node[t];
    if (before(n->pid, n->start, pid, k)) {
        split(m, n->right, pid, k, &m->node[t].right, r);
        *l = t;
    } else {
        split(m, n->left, pid, k, l, &m->node[t].left);
        *r = t;
    }
}

static uint32_t merge(hl_omap_t *m, uint32_t l, uint32_t r)
{
    if (!l) return r;
    if (!r) return l;
    if (m->node[l].prio > m->node[r].prio) {
        m->node[l].right = merge(m, m->node[l].right, r);
        return l;
    }
    m->node[r].left = merge(m, l, m->node[r].left);
    return r;
}

hl_onode_t *hl_omap_put(hl_omap_t *m, int64_t pid, uint64_t start, uint64_t end)
{
    hl_onode_t *old = hl_omap_floor(m, pid, start);
    if (old && old->start == start) {
        old->end = end;
        old->aux = 0;
        old->a = old->b = 0;
        return old;
    }
    uint32_t i = new_node(m);
    m->node[i].pid = pid;
    m->node[i].start = start;
    m->node[i].end = end;
    uint32_t l, r;
    split(m, m->root, pid, start, &l, &r);
    m->root = merge(m, merge(m, l, i), r);
    m->len++;
    return &m->node[i];
}

int hl_omap_del(hl_omap_t *m, int64_t pid, uint64_t start, hl_onode_t *out)
{
    uint32_t l, mid, r;
    split(m, m->root, pid, start, &l, &mid);
    /* mid holds keys >= start: split off exactly (pid, start). */
    split(m, mid, pid, start + 1, &mid, &r);
    int found = mid != 0;
    if (found) {
        if (out) *out = m->node[mid];
        /* mid is a single node (keys are unique); give it back. */
        m->node[mid].left = m->free_list;
        m->free_list = mid;
        m->len--;
    }
    m->root = merge(m, l, r);
    return found;
}

hl_onode_t *hl_omap_floor(const hl_omap_t *m, int64_t pid, uint64_t addr)
{
    uint32_t t = m->root, best = 0;
    while (t) {
        const hl_onode_t *n = &m->node[t];
        if (before(pid, addr, n->pid, n->start)) {
            t = n->left;
        } else {
            best = t;
            t = n->right;
        }
    }
    return best && m->node[best].pid == pid ? &m->node[best] : NULL;
}

hl_onode_t *hl_omap_next(const hl_omap_t *m, int64_t pid, uint64_t addr)
{
    uint32_t t = m->root, best = 0;
    while (t) {
        const hl_onode_t *n = &m->node[t];
        if (before(pid, addr, n->pid, n->start)) {
            best = t;
            t = n->left;
        } else {
            t = n->right;
        }
    }
    return best && m->node[best].pid == pid ? &m->node[best] : NULL;
}

hl_onode_t *hl_omap_first_overlap(const hl_omap_t *m, int64_t pid, uint64_t a, uint64_t b)
{
    hl_onode_t *e = hl_omap_floor(m, pid, a);
    if (e && e->end > a) return e;
    e = hl_omap_next(m, pid, a);
    return e && e->start < b ? e : NULL;
}

void hl_omap_free(hl_omap_t *m)
{
    free(m->node);
    memset(m, 0, sizeof *m);
}
