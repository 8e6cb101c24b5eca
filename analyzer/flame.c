/* analyzer/flame.c — see flame.h. */
#include "flame.h"

#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "symbols.h"

static int32_t add_node(hl_flame_t *f, int32_t parent, const char *name)
{
    hl_flame_node_t *n = HL_VEC_PUSH(f->node, f->n, f->cap);
    n->name = strdup(name);
    n->weight = 0;
    n->parent = parent;
    n->child = n->next = -1;
    int32_t ix = (int32_t)(f->n - 1);
    if (parent >= 0) {
        /* Append as the last child. */
        int32_t *link = &f->node[parent].child;
        while (*link >= 0)
            link = &f->node[*link].next;
        *link = ix;
    }
    return ix;
}

void hl_flame_init(hl_flame_t *f)
{
    memset(f, 0, sizeof *f);
    add_node(f, -1, "all");
}

static int32_t child_named(hl_flame_t *f, int32_t parent, const char *name)
{
    for (int32_t c = f->node[parent].child; c >= 0; c = f->node[c].next)
        if (!strcmp(f->node[c].name, name)) return c;
    return add_node(f, parent, name);
}

void hl_flame_add_names(hl_flame_t *f, const char *const *names, size_t n, uint64_t weight)
{
    int32_t cur = 0;
    f->node[0].weight += weight;
    for (size_t i = 0; i < n; i++) {
        cur = child_named(f, cur, names[i]);
        f->node[cur].weight += weight;
    }
    if ((int)n > f->depth) f->depth = (int)n;
}

void hl_flame_add(hl_flame_t *f, sqlite3 *db, int64_t stack, uint64_t weight)
{
    hl_frames_t fr = {0};
    if (stack >= 0) hl_frames_load(db, stack, &fr);
    if (!fr.n) {
        const char *none = stack < 0 ? "(no stack)" : "(stack without frames)";
        hl_flame_add_names(f, &none, 1, weight);
        hl_frames_free(&fr);
        return;
    }
    /* Innermost frame outside the allocator: everything from there outwards. */
    const char *site = hl_frames_site(&fr);
    size_t inner = 0;
    while (inner < fr.n && fr.frame[inner] != site)
        inner++;
    size_t n = fr.n - inner;
    const char **names = malloc(n * sizeof *names);
    for (size_t i = 0; i < n; i++)
        names[i] = fr.func[fr.n - 1 - i];
    hl_flame_add_names(f, names, n, weight);
    free(names);
    hl_frames_free(&fr);
}

void hl_flame_free(hl_flame_t *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->node[i].name);
    free(f->node);
    memset(f, 0, sizeof *f);
}
