/* liballoc/stats.c — the counters report (stats=1 at exit, malloc_stats(),
 * heapledger_print_stats()). Written with hl_out: no allocation, no stdio. */
#include "internal.h"

#include <unistd.h>

/* Write s left-aligned in a field of `width` characters. */
static void cell(hl_out_t *o, const char *s, size_t width)
{
    size_t l = 0;
    while (s[l])
        l++;
    hl_out_str(o, s);
    for (; l < width; l++)
        hl_out_str(o, " ");
}

static void row(hl_out_t *o, const char *label, uint64_t bytes)
{
    hl_out_str(o, "  ");
    hl_out_str(o, label);
    hl_out_size(o, bytes);
    hl_out_str(o, "\n");
}

void hl_stats_print(hl_heap_t *h, int fd)
{
    hl_out_t o;
    hl_out_init(&o, fd);
    hl_heap_info_t info;
    hl_heap_info(h, &info);
    char opts[256];
    hl_options_format(&h->opt_given, opts, sizeof opts);

    hl_out_str(&o, "heapledger ");
    hl_out_str(&o, HL_VERSION);
    hl_out_str(&o, ": heap statistics of pid ");
    hl_out_u64(&o, (uint64_t)getpid());
    hl_out_str(&o, opts[0] ? " (options " : " (default options");
    hl_out_str(&o, opts);
    hl_out_str(&o, ")\n");
    row(&o, h->arena_base ? "arena size         " : "held from the OS   ", info.held);
    row(&o, "in use (usable)    ", info.used);
    row(&o, "free in tiny slots ", info.free_tiny);
    row(&o, "free in TLSF       ", info.free_mid);
    row(&o, "largest TLSF block ", info.largest_free);
    row(&o, "large mappings     ", info.large);
    hl_out_str(&o, "  tiny slabs ");
    hl_out_u64(&o, info.slabs);
    hl_out_str(&o, " of ");
    hl_out_size(&o, h->tiny.slab_size);
    hl_out_str(&o, ", TLSF pools ");
    hl_out_u64(&o, info.pools);
    hl_out_str(&o, ", arenas ");
    hl_out_u64(&o, h->mid.narenas);
    hl_out_str(&o, "\n\n  class   slot   slabs   slots used   slots held\n");
    for (unsigned c = 0; c < HL_CLASS_COUNT; c++) {
        size_t slabs, used, held;
        hl_tiny_class_counts(h, c, &slabs, &used, &held);
        if (!slabs) continue;
        hl_out_u64w(&o, c, 7);
        hl_out_u64w(&o, hl_class_slot(c), 7);
        hl_out_u64w(&o, slabs, 8);
        hl_out_u64w(&o, used, 13);
        hl_out_u64w(&o, held, 13);
        hl_out_str(&o, "\n");
    }
    uint64_t paths[HL_PATH_COUNT];
    hl_thread_sum_paths(h, paths);
    uint64_t per_op[4] = {0, 0, 0, 0};
    for (unsigned p = 1; p < HL_PATH_COUNT; p++)
        per_op[hl_path_op(p)] += paths[p];
    hl_out_str(&o, "\n  op       path                      count    share\n");
    for (unsigned p = 1; p < HL_PATH_COUNT; p++) {
        if (!paths[p]) continue;
        unsigned op = hl_path_op(p);
        hl_out_str(&o, "  ");
        cell(&o, hl_op_name(op), 9);
        cell(&o, hl_path_name(p), 18);
        hl_out_u64w(&o, paths[p], 13);
        uint64_t permille = per_op[op] ? paths[p] * 1000 / per_op[op] : 0;
        hl_out_u64w(&o, permille / 10, 6);
        hl_out_str(&o, ".");
        hl_out_u64(&o, permille % 10);
        hl_out_str(&o, "%\n");
    }
    hl_out_flush(&o);
}
