/* The options table: parsing, errors, formatting. */
#include "internal.h"
#include "suggest.h"

#include <criterion/criterion.h>
#include <string.h>

Test(options, defaults_and_sizes)
{
    hl_options_t o;
    char err[128];
    hl_options_default(&o);
    cr_assert_eq(o.mid_max, 256u << 10);
    cr_assert_eq(o.tcache, 1);
    cr_assert_eq(hl_options_parse(&o, "arena=4M,stats,tcache=2, mid_max=128KiB", err, sizeof err),
                 0, "%s", err);
    cr_assert_eq(o.arena_size, 4u << 20);
    cr_assert_eq(o.stats, 1);
    cr_assert_eq(o.tcache, 2);
    cr_assert_eq(o.mid_max, 128u << 10);
    cr_assert_eq(hl_options_parse(&o, "arena=1g", err, sizeof err), 0);
    cr_assert_eq(o.arena_size, 1ull << 30);
    cr_assert_eq(hl_options_parse(&o, "", err, sizeof err), 0);
}

Test(options, errors_name_the_item)
{
    hl_options_t o;
    char err[128];
    hl_options_default(&o);
    cr_assert_eq(hl_options_parse(&o, "stats=1,bogus=3", err, sizeof err), -1);
    cr_assert_str_eq(err, "unknown option 'bogus'");
    cr_assert_eq(hl_options_parse(&o, "arena=12Q", err, sizeof err), -1);
    cr_assert_str_eq(err, "bad value in option 'arena=12Q' (arena takes 0 (off) or a size of at "
                          "least 4K that holds 4 slabs, e.g. 64K, 4M)");
    cr_assert_eq(hl_options_parse(&o, "stats=2", err, sizeof err), -1);
    cr_assert_eq(hl_options_parse(&o, "arena", err, sizeof err), -1);
    cr_assert_str_eq(err, "option needs a value: 'arena' (arena takes 0 (off) or a size of at "
                          "least 4K that holds 4 slabs, e.g. 64K, 4M)");
}

/* A bad value names what is valid (all three were refused only later, or silently). */
Test(options, bad_values_list_the_valid_ones)
{
    hl_options_t o;
    char err[256];
    hl_options_default(&o);
    cr_assert_eq(hl_options_parse(&o, "stats=yes", err, sizeof err), -1);
    cr_assert_str_eq(err, "bad value in option 'stats=yes' (stats takes 0 or 1)");
    cr_assert_eq(hl_options_parse(&o, "slab=3K", err, sizeof err), -1);
    cr_assert_str_eq(err, "bad value in option 'slab=3K' (slab takes 0 (the default) or a power "
                          "of two from 1K to 1M: 1K, 2K, 4K, … 512K, 1M)");
    cr_assert_eq(hl_options_parse(&o, "slab=2M", err, sizeof err), -1);
    cr_assert_eq(hl_options_parse(&o, "arena=1K", err, sizeof err), -1);
    cr_assert(strstr(err, "'arena=1K' (arena takes 0 (off) or a size of at least 4K"), "%s", err);
    cr_assert_eq(hl_options_parse(&o, "arenas=17", err, sizeof err), -1);
    cr_assert_str_eq(err, "bad value in option 'arenas=17' (arenas takes 0 (2 per CPU) to 16)");
    cr_assert_eq(hl_options_parse(&o, "tiny_max=8K", err, sizeof err), -1);
    cr_assert_eq(hl_options_parse(&o, "guard=sometimes", err, sizeof err), -1);
    cr_assert_str_eq(err, "bad value in option 'guard=sometimes' (guard takes none, large, all or "
                          "sample:N (N > 0))");
    /* What no item says alone: a fixed arena holds 4 slabs. */
    hl_options_default(&o);
    cr_assert_eq(hl_options_parse(&o, "arena=8K", err, sizeof err), -1);
    cr_assert_str_eq(err, "arena=8192 is too small: a fixed arena holds at least 4 slabs (16384 "
                          "bytes with slab=4096)");
    hl_options_default(&o);
    cr_assert_eq(hl_options_parse(&o, "arena=8K,slab=2K", err, sizeof err), 0, "%s", err);
    cr_assert_eq(hl_options_parse(&o, "slab=1M,arena=0", err, sizeof err), 0, "%s", err);
}

Test(options, unknown_names_get_the_closest_one)
{
    hl_options_t o;
    char err[256];
    hl_options_default(&o);
    cr_assert_eq(hl_options_parse(&o, "rotat=1", err, sizeof err), -1);
    cr_assert_str_eq(err, "unknown option 'rotat' (did you mean 'rotate'?)");
    cr_assert_eq(hl_options_parse(&o, "hadren", err, sizeof err), -1);
    cr_assert_str_eq(err, "unknown option 'hadren' (did you mean 'harden'?)");
    cr_assert_eq(hl_options_parse(&o, "arean=4M", err, sizeof err), -1);
    cr_assert_str_eq(err, "unknown option 'arean' (did you mean 'arena'?)");
    cr_assert_eq(hl_options_parse(&o, "xyz=1", err, sizeof err), -1);
    cr_assert_str_eq(err, "unknown option 'xyz'", "nothing close: no guess");
}

Test(options, spaces_around_the_equals_sign)
{
    hl_options_t o;
    char err[256];
    hl_options_default(&o);
    cr_assert_eq(hl_options_parse(&o, "arena = 256K , stats =1,  tcache=  2 ", err, sizeof err), 0,
                 "%s", err);
    cr_assert_eq(o.arena_size, 256u << 10);
    cr_assert_eq(o.stats, 1);
    cr_assert_eq(o.tcache, 2);
    cr_assert_eq(hl_options_parse(&o, "guard = sample:8", err, sizeof err), 0, "%s", err);
    cr_assert_eq(o.guard, 3);
    cr_assert_eq(hl_options_parse(&o, "arena = 2 56K", err, sizeof err), -1,
                 "spaces inside a value");
}

Test(options, suggest_distance)
{
    cr_assert_eq(hl_edit_distance("rotat", 5, "rotate", 6), 1);
    cr_assert_eq(hl_edit_distance("reprot", 6, "report", 6), 1, "a transposition is one edit");
    cr_assert_eq(hl_edit_distance("", 0, "abc", 3), 3);
    cr_assert_eq(hl_edit_distance("kitten", 6, "sitting", 7), 3);
    static const char *const names[] = {"report", "replay", "record", NULL};
    cr_assert_str_eq(hl_suggest("reprot", 6, names, 3, sizeof names[0]), "report");
    cr_assert_str_eq(hl_suggest("recrod", 6, names, 3, sizeof names[0]), "record");
    cr_assert_null(hl_suggest("zz", 2, names, 3, sizeof names[0]));
}

Test(options, format_lists_what_differs)
{
    hl_options_t o;
    char buf[256], err[128];
    hl_options_default(&o);
    hl_options_format(&o, buf, sizeof buf);
    cr_assert_str_eq(buf, "");
    hl_options_parse(&o, "arena=65536,stats=1", err, sizeof err);
    hl_options_format(&o, buf, sizeof buf);
    cr_assert_str_eq(buf, "arena=65536,stats=1");
    hl_options_t back;
    hl_options_default(&back);
    cr_assert_eq(hl_options_parse(&back, buf, err, sizeof err), 0);
    cr_assert_eq(back.arena_size, 65536);
}

/* Every value of a named option formats as it parses back (unwind=libunwind once came back as
 * unwind=check: the number was consumed before the name was chosen). */
Test(options, format_round_trips_named_values)
{
    static const char *const in[] = {"unwind=libunwind",
                                     "unwind=check",
                                     "guard=sample:77",
                                     "harden=full",
                                     "guard=all,unwind=libunwind",
                                     "harden=1,quarantine=auto",
                                     "quarantine=1M"};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        hl_options_t o, back;
        char buf[512], again[512], err[128];
        hl_options_default(&o);
        cr_assert_eq(hl_options_parse(&o, in[i], err, sizeof err), 0, "%s: %s", in[i], err);
        hl_options_format(&o, buf, sizeof buf);
        hl_options_default(&back);
        cr_assert_eq(hl_options_parse(&back, buf, err, sizeof err), 0, "%s: %s", buf, err);
        cr_assert_eq(memcmp(&o, &back, sizeof o), 0, "%s formatted as %s parses back otherwise",
                     in[i], buf);
        hl_options_format(&back, again, sizeof again);
        cr_assert_str_eq(buf, again);
    }
}

/* harden=1's quarantine is "auto" (it follows the heap), an explicit size is kept apart. */
Test(options, quarantine_auto_is_its_own_value)
{
    hl_options_t o;
    char buf[512], err[128];
    hl_options_default(&o);
    cr_assert_eq(hl_options_parse(&o, "quarantine=auto", err, sizeof err), 0, "%s", err);
    cr_assert_eq(o.quarantine, HL_QUARANTINE_AUTO);
    hl_options_format(&o, buf, sizeof buf);
    cr_assert_str_eq(buf, "quarantine=auto");
    hl_options_default(&o);
    cr_assert_eq(hl_options_parse(&o, "quarantine=1M", err, sizeof err), 0, "%s", err);
    cr_assert_eq(o.quarantine, (size_t)1 << 20);
    hl_options_format(&o, buf, sizeof buf);
    cr_assert_str_eq(buf, "quarantine=1048576");
}
