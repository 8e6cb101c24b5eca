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

static inline int same(const hl_onode_t *n, int64_t pid, uint64_t start)
{
    return n->pid == pid && n->start == start;
}

/* One descent: down to the first node of lower priority, then split that subtree around the
 * new node (an equal key found on the way is updated in place instead). */
hl_onode_t *hl_omap_put(hl_omap_t *m, int64_t pid, uint64_t start, uint64_t end)
{
    uint32_t i = new_node(m); /* may move the array: before taking any pointer */
    hl_onode_t *nw = &m->node[i];
    nw->pid = pid;
    nw->start = start;
    nw->end = end;
    uint32_t *link = &m->root;
    while (*link && m->node[*link].prio >= nw->prio) {
        hl_onode_t *n = &m->node[*link];
        if (same(n, pid, start)) {
            n->end = end;
            n->aux = 0;
            n->a = n->b = 0;
            m->node[i].left = m->free_list; /* give the new node back */
            m->free_list = i;
            return n;
        }
        link = before(pid, start, n->pid, n->start) ? &n->left : &n->right;
    }
    uint32_t l, r;
    split(m, *link, pid, start, &l, &r);
    /* r holds keys >= start: an equal key is its leftmost node. */
    uint32_t *lm = &r;
    while (*lm && m->node[*lm].left)
        lm = &m->node[*lm].left;
    if (*lm && same(&m->node[*lm], pid, start)) {
        uint32_t dup = *lm;
        *lm = m->node[dup].right;
        m->node[dup].left = m->free_list;
        m->free_list = dup;
        m->len--;
    }
    m->node[i].left = l;
    m->node[i].right = r;
    *link = i;
    m->len++;
    return &m->node[i];
}

int hl_omap_del(hl_omap_t *m, int64_t pid, uint64_t start, hl_onode_t *out)
{
    uint32_t *link = &m->root;
    while (*link) {
        hl_onode_t *n = &m->node[*link];
        if (same(n, pid, start)) {
            uint32_t t = *link;
            if (out) *out = *n;
            *link = merge(m, n->left, n->right);
            m->node[t].left = m->free_list;
            m->node[t].right = 0;
            m->free_list = t;
            m->len--;
            return 1;
        }
        link = before(pid, start, n->pid, n->start) ? &n->left : &n->right;
    }
    return 0;
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
