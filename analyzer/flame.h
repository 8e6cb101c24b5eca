/* analyzer/flame.h — a call tree for flame graphs, built from symbolised allocation stacks.
 *
 * Each stack is added root first (outermost frame) down to the allocation site; the
 * allocator's own frames at the inner end are dropped. A node's weight is the sum of the
 * weights of the stacks through it. Children are kept in insertion order.
 */
#ifndef HL_FLAME_H
#define HL_FLAME_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hl_flame_node_s {
    char *name;
    uint64_t weight;
    int32_t parent, child, next; /* indices, -1 none */
} hl_flame_node_t;

typedef struct hl_flame_s {
    hl_flame_node_t *node; /* node[0] is the root ("all") */
    size_t n, cap;
    int depth; /* deepest level */
} hl_flame_t;

void hl_flame_init(hl_flame_t *f);
/* Add stack (-1: no stack) with a weight. Frames come from the database. */
void hl_flame_add(hl_flame_t *f, sqlite3 *db, int64_t stack, uint64_t weight);
/* Add a path given as names, outermost first (used by tests). */
void hl_flame_add_names(hl_flame_t *f, const char *const *names, size_t n, uint64_t weight);
void hl_flame_free(hl_flame_t *f);

#endif
