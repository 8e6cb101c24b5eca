/* A heap with the given options for the unit tests (the Criterion assertions stop the test
 * when the options do not parse or the heap cannot be made). */
#ifndef HL_UNIT_HEAP_H
#define HL_UNIT_HEAP_H

#include "internal.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

static inline hl_heap_t *unit_heap(const char *opts)
{
    hl_options_t o;
    char err[128];
    hl_options_default(&o);
    cr_assert_eq(hl_options_parse(&o, opts, err, sizeof err), 0, "%s", err);
    hl_heap_t *h = hl_heap_create(&o);
    cr_assert_not_null(h, "create(%s): %s", opts, strerror(errno));
    return h;
}

/* How many operations took the given path so far. */
static inline uint64_t unit_path_count(hl_heap_t *h, hl_path_t path)
{
    uint64_t c[HL_PATH_COUNT];
    hl_heap_path_counts(h, c, HL_PATH_COUNT);
    return c[path];
}

#endif
