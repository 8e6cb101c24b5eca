/* tracer/ctf_plan.c — a scope's field tree compiled into runs and variants (see ctf_plan.h).
 *
 * Compiling walks the tree once, tracking where the next member would lie: inside a run (a
 * bit offset from the run's start, the run's start aligned to `align` bits) or at a position
 * not known until decoding (the scope's start, after a variant). A member whose alignment
 * the run's start does not guarantee starts a new run, as does every member after a variant.
 * Each run records the bits its sized members need (one bounds check per run, equivalent to
 * the tree walk's check per member) and the bits it advances (trailing alignment of empty
 * structs included, as the tree walk aligns them).
 */
#include "ctf_plan.h"

#include <string.h>

enum { MAX_LEAVES = 256, MAX_STEPS = 64, MAX_OPTIONS = 8 };

typedef struct comp_s {
    hl_ctf_step_t step[MAX_STEPS];
    hl_ctf_leaf_t leaf[MAX_LEAVES];
    hl_ctf_marker_t marker[MAX_LEAVES];
    uint32_t nstep, nleaf, nmarker;
    int run;      /* index of the open run, -1 when the position is not known */
    uint64_t off; /* bits from the open run's start */
    int check;    /* the open run has a sized member */
    uint64_t need;
    int big; /* a run longer than MAX_RUN_BITS: the plan is refused */
} comp_t;

/* A run's offsets and sizes are 32-bit; a longer run (a 128 MiB event) is the tree walk's. */
#define MAX_RUN_BITS (UINT64_C(1) << 30)

static uint64_t align_up(uint64_t x, uint64_t a)
{
    return (x + a - 1) & ~(a - 1);
}

static void close_run(comp_t *c)
{
    if (c->run < 0) return;
    hl_ctf_step_t *s = &c->step[c->run];
    s->bits = (uint32_t)c->off;
    s->need = c->check ? (uint32_t)c->need : UINT32_MAX;
    s->n = c->nleaf - s->first;
    c->run = -1;
}

/* Be at a member aligned to a bits: in the open run when its start guarantees a, else at
 * the start of a new run. 0, or -1 when the plan is full. */
static int place(comp_t *c, unsigned a)
{
    if (c->run >= 0 && a <= c->step[c->run].align) {
        c->off = align_up(c->off, a);
        return 0;
    }
    close_run(c);
    if (c->nstep == MAX_STEPS) return -1;
    hl_ctf_step_t *s = &c->step[c->nstep];
    memset(s, 0, sizeof *s);
    s->op = HL_PLAN_RUN;
    s->align = (uint16_t)a;
    s->first = c->nleaf;
    c->run = (int)c->nstep++;
    c->off = 0;
    c->check = 0;
    c->need = 0;
    return 0;
}

static hl_ctf_leaf_t *add_leaf(comp_t *c, const hl_ctf_node_t *n, uint8_t op)
{
    if (c->nleaf == MAX_LEAVES) return NULL;
    hl_ctf_leaf_t *l = &c->leaf[c->nleaf++];
    memset(l, 0, sizeof *l);
    l->op = op;
    l->off = (uint32_t)c->off;
    l->slot = n->slot;
    return l;
}

static int add_marker(comp_t *c, const hl_ctf_node_t *n)
{
    if (c->nmarker == MAX_LEAVES) return -1;
    c->marker[c->nmarker].slot = n->slot;
    c->marker[c->nmarker].kind = n->kind;
    c->nmarker++;
    return 0;
}

/* A member of `bits` bits at the current offset: it must fit in the content. */
static void sized(comp_t *c, uint64_t bits)
{
    c->off += bits;
    c->need = c->off;
    c->check = 1;
    if (c->off > MAX_RUN_BITS) c->big = 1;
}

static uint8_t int_op(const hl_ctf_node_t *n, int whole)
{
    if (!whole || n->is_signed) return HL_LEAF_INT;
    switch (n->size) {
    case 8:
        return HL_LEAF_U8;
    case 16:
        return HL_LEAF_U16;
    case 32:
        return HL_LEAF_U32;
    case 64:
        return HL_LEAF_U64;
    default:
        return HL_LEAF_INT;
    }
}

static int compile(comp_t *c, const hl_ctf_node_t *n, int depth)
{
    if (depth > 40) return -1;
    unsigned a = n->align ? n->align : 1;
    if (a & (a - 1)) return -1; /* offsets in a run need power-of-two alignments */
    switch ((hl_ctf_kind_t)n->kind) {
    case HL_CTF_INT: {
        if (place(c, a) != 0) return -1;
        int whole = c->step[c->run].align % 8 == 0 && c->off % 8 == 0;
        hl_ctf_leaf_t *l = add_leaf(c, n, int_op(n, whole));
        if (!l) return -1;
        if (l->op != HL_LEAF_INT) l->off /= 8;
        l->size = n->size;
        l->is_signed = n->is_signed;
        l->clock = n->clock;
        sized(c, n->size);
        break;
    }
    case HL_CTF_FLOAT: /* skipped: its kind only */
        if (place(c, a) != 0 || add_marker(c, n) != 0) return -1;
        sized(c, n->size);
        break;
    case HL_CTF_ARRAY: {
        if (n->len > UINT32_MAX || n->len * n->size > (1u << 24)) return -1;
        if (place(c, a) != 0) return -1;
        if (c->off % 8 || c->step[c->run].align % 8) return -1; /* elements are whole bytes */
        hl_ctf_leaf_t *l = add_leaf(c, n, n->text ? HL_LEAF_TEXT : HL_LEAF_ARRAY);
        if (!l) return -1;
        l->off /= 8;
        l->esize = (uint8_t)n->size;
        l->is_signed = n->is_signed;
        l->len = (uint32_t)n->len;
        sized(c, n->len * n->size * 8);
        break;
    }
    case HL_CTF_STRUCT:
        if (place(c, a) != 0 || add_marker(c, n) != 0) return -1;
        for (uint32_t i = 0; i < n->nchild; i++)
            if (compile(c, &n->child[i], depth + 1) != 0) return -1;
        break;
    case HL_CTF_VARIANT: {
        if (n->nchild > MAX_OPTIONS || c->nstep == MAX_STEPS || add_marker(c, n) != 0) return -1;
        close_run(c);
        uint32_t vi = c->nstep++;
        hl_ctf_step_t *v = &c->step[vi];
        memset(v, 0, sizeof *v);
        v->op = HL_PLAN_VARIANT;
        v->tag = n->ref;
        v->nrange = n->nrange;
        v->range = n->range;
        for (uint32_t k = 0; k < n->nchild; k++) {
            c->step[vi].opt[k] = c->nstep;
            if (compile(c, &n->child[k], depth + 1) != 0) return -1;
            close_run(c);
        }
        c->step[vi].opt[n->nchild] = c->nstep;
        c->step[vi].next = c->nstep;
        break; /* the position after a variant is not known: the next member starts a run */
    }
    default: /* strings, sequences: the tree walk decodes the scope */
        return -1;
    }
    return 0;
}

hl_ctf_plan_t *hl_ctf_plan_compile(const hl_ctf_node_t *root, void *(*alloc)(void *, size_t),
                                   void *actx)
{
    if (!root) return NULL;
    comp_t c; /* about 11 KiB */
    c.nstep = c.nleaf = c.nmarker = 0;
    c.run = -1;
    c.big = 0;
    if (compile(&c, root, 0) != 0) return NULL;
    close_run(&c);
    if (c.big) return NULL;
    hl_ctf_plan_t *p = alloc(actx, sizeof *p);
    p->nstep = c.nstep;
    p->nleaf = c.nleaf;
    p->nmarker = c.nmarker;
    p->step = alloc(actx, (c.nstep ? c.nstep : 1) * sizeof *p->step);
    p->leaf = alloc(actx, (c.nleaf ? c.nleaf : 1) * sizeof *p->leaf);
    p->marker = alloc(actx, (c.nmarker ? c.nmarker : 1) * sizeof *p->marker);
    memcpy(p->step, c.step, c.nstep * sizeof *p->step);
    memcpy(p->leaf, c.leaf, c.nleaf * sizeof *p->leaf);
    memcpy(p->marker, c.marker, c.nmarker * sizeof *p->marker);
    p->array1 = c.nstep == 1 && c.nleaf == 1 && c.leaf[0].op == HL_LEAF_ARRAY;
    return p;
}

static int is_id(uint32_t slot, const uint32_t *ids, uint32_t nid)
{
    for (uint32_t i = 0; i < nid; i++)
        if (ids[i] == slot) return 1;
    return 0;
}

int hl_ctf_plan_header(const hl_ctf_plan_t *p, const uint32_t *ids, uint32_t nid, hl_ctf_hdr_t *h)
{
    memset(h, 0, sizeof *h);
    if (p->nstep < 3 || p->step[0].op != HL_PLAN_RUN || p->step[0].n != 1) return -1;
    const hl_ctf_step_t *r0 = &p->step[0], *v = &p->step[1];
    const hl_ctf_leaf_t *tag = &p->leaf[r0->first];
    if (tag->op == HL_LEAF_INT && (tag->is_signed || tag->clock || tag->size > 32)) return -1;
    if (tag->op > HL_LEAF_INT || !is_id(tag->slot, ids, nid)) return -1;
    if (v->op != HL_PLAN_VARIANT || v->tag != tag->slot || v->next != p->nstep) return -1;
    h->align = r0->align;
    h->need = r0->need;
    h->bits = r0->bits;
    h->tag = *tag;
    h->nrange = v->nrange;
    h->range = v->range;
    for (uint32_t k = 0; k < 8 && v->opt[k] < v->next; k++) {
        if (v->opt[k + 1] != v->opt[k] + 1) return -1; /* one run per option */
        const hl_ctf_step_t *r = &p->step[v->opt[k]];
        if (r->op != HL_PLAN_RUN) return -1;
        hl_ctf_hdr_opt_t *o = &h->opt[k];
        o->align = r->align;
        o->need = r->need;
        o->bits = r->bits;
        for (uint32_t i = 0; i < r->n; i++) {
            const hl_ctf_leaf_t *l = &p->leaf[r->first + i];
            if (l->op > HL_LEAF_INT || l->is_signed) return -1;
            if (l->clock && !o->has_ts && !is_id(l->slot, ids, nid)) {
                o->ts = *l;
                o->has_ts = 1;
            } else if (!l->clock && !o->has_id && is_id(l->slot, ids, nid)) {
                o->id = *l;
                o->has_id = 1;
            } else {
                return -1;
            }
        }
    }
    if (!v->nrange) return -1;
    for (uint32_t r = 0; r < v->nrange; r++)
        if (v->range[r].child >= 8 || v->opt[v->range[r].child] == v->next) return -1;
    /* LTTng's large header, exactly: hl_ctf_hdr_run's shortest path */
    const hl_ctf_hdr_opt_t *co = &h->opt[v->range[0].child],
                           *eo = &h->opt[v->range[1 % v->nrange].child];
    h->large = h->align % 8 == 0 && h->tag.op == HL_LEAF_U16 && h->tag.off == 0 && h->bits == 16 &&
               v->nrange == 2 && v->range[0].lo == 0 && v->range[0].hi == 65534 &&
               v->range[1].lo == 65535 && v->range[1].hi == 65535 && co->align == 8 &&
               co->bits == 32 && !co->has_id && co->has_ts && co->ts.op == HL_LEAF_U32 &&
               co->ts.off == 0 && eo->align == 8 && eo->bits == 96 && eo->has_id &&
               eo->id.op == HL_LEAF_U32 && eo->id.off == 0 && eo->has_ts &&
               eo->ts.op == HL_LEAF_U64 && eo->ts.off == 4;
    return 0;
}

void hl_ctf_plan_init(const hl_ctf_plan_t *p, hl_ctf_val_t *v)
{
    for (uint32_t i = 0; i < p->nmarker; i++)
        v[p->marker[i].slot].kind = p->marker[i].kind;
}

/* ---- decoding ------------------------------------------------------------------------- */

static int run_steps(const hl_ctf_plan_t *p, uint32_t i, uint32_t end, hl_ctf_cursor_t *c,
                     hl_ctf_val_t *v)
{
    while (i < end) {
        const hl_ctf_step_t *s = &p->step[i];
        if (s->op == HL_PLAN_RUN) {
            uint64_t a = s->align;
            uint64_t pos = (c->pos + a - 1) & ~(a - 1);
            if (s->need != UINT32_MAX && (pos > c->end || c->end - pos < s->need)) return -1;
            hl_ctf_run_leaves(p->leaf + s->first, p->leaf + s->first + s->n, c, pos, v);
            c->pos = pos + s->bits;
            i++;
            continue;
        }
        const hl_ctf_val_t *tag = &v[s->tag];
        if (tag->gen != c->gen || tag->kind != HL_CTF_INT) return -1;
        int64_t t = (int64_t)tag->u;
        uint32_t k = UINT32_MAX;
        for (uint32_t r = 0; r < s->nrange; r++)
            if (t >= s->range[r].lo && t <= s->range[r].hi) {
                k = s->range[r].child;
                break;
            }
        if (k == UINT32_MAX) return -1; /* no option for this tag */
        if (run_steps(p, s->opt[k], s->opt[k + 1], c, v) != 0) return -1;
        i = s->next;
    }
    return 0;
}

void hl_ctf_plan_leaves(const hl_ctf_plan_t *p, hl_ctf_cursor_t *c, uint64_t pos, hl_ctf_val_t *v)
{
    hl_ctf_run_leaves(p->leaf, p->leaf + p->step[0].n, c, pos, v);
}

int hl_ctf_plan_run(const hl_ctf_plan_t *p, hl_ctf_cursor_t *c, hl_ctf_val_t *v)
{
    return run_steps(p, 0, p->nstep, c, v);
}
