/* The options table: parsing, errors, formatting. */
#include "internal.h"

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
    cr_assert_str_eq(err, "bad value in option 'arena=12Q'");
    cr_assert_eq(hl_options_parse(&o, "stats=2", err, sizeof err), -1);
    cr_assert_eq(hl_options_parse(&o, "arena", err, sizeof err), -1);
    cr_assert_str_eq(err, "option needs a value: 'arena'");
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
