/* Output safety: the text escape rule (safetext.h) and JSON strings that are valid UTF-8
 * whatever bytes they hold (jsonw.h). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "safetext.h"

Test(safetext, plain_strings_are_not_copied)
{
    const char *s = "main (main.c:7) caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
    cr_assert_eq(hl_safe(s), s, "valid UTF-8 without controls prints as it is");
    cr_assert_null(hl_safe(NULL));
}

Test(safetext, controls_and_bad_bytes_are_escaped)
{
    cr_assert_str_eq(hl_safe("a\x1b[31mb\x07"), "a\\x1b[31mb\\x07");
    cr_assert_str_eq(hl_safe("t\tn\nr\r\x7f"), "t\\tn\\nr\\r\\x7f");
    cr_assert_str_eq(hl_safe("c1 \xc2\x9b"
                             "2J"),
                     "c1 \\u009b2J");
    cr_assert_str_eq(hl_safe("bidi \xe2\x80\xae"
                             "x"),
                     "bidi \\u202ex");
    cr_assert_str_eq(hl_safe("back\\slash"), "back\\\\slash");
    /* stray continuation, overlong '/', surrogate, truncated sequence, 0xfe 0xff */
    cr_assert_str_eq(hl_safe("\x80\xc0\xaf\xed\xa0\x80\xe2\x82\xfe\xff"),
                     "\\x80\\xc0\\xaf\\xed\\xa0\\x80\\xe2\\x82\\xfe\\xff");
    cr_assert_str_eq(hl_safe("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80", "beyond U+10FFFF");
    /* valid multi-byte text around an escape stays as it is */
    cr_assert_str_eq(hl_safe("\xc3\xa9\x1b\xc3\xa9"), "\xc3\xa9\\x1b\xc3\xa9");
}

Test(safetext, slots_last_for_one_printf)
{
    char a[HL_SAFE_SLOTS][8];
    const char *r[HL_SAFE_SLOTS];
    for (int i = 0; i < HL_SAFE_SLOTS; i++) {
        snprintf(a[i], sizeof a[i], "\x1b%d", i);
        r[i] = hl_safe(a[i]);
    }
    for (int i = 0; i < HL_SAFE_SLOTS; i++) {
        char want[16];
        snprintf(want, sizeof want, "\\x1b%d", i);
        cr_assert_str_eq(r[i], want);
    }
}

static char *json_of(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    hl_json_escape(f, s);
    fclose(f);
    return buf;
}

Test(safetext, json_strings_are_valid_utf8)
{
    char *j = json_of("\xff\xfe"
                      "ok\xc3\xa9\x1b\x7f\xc2\x85\"\\\xe2\x80\xa8\xe2\x80\xae");
    cr_assert_str_eq(j, "\"\\ufffd\\ufffdok\xc3\xa9\\u001b\\u007f\\u0085\\\"\\\\\\u2028\\u202e\"");
    free(j);
    j = json_of("\xe2\x82"); /* truncated: one U+FFFD per byte */
    cr_assert_str_eq(j, "\"\\ufffd\\ufffd\"");
    free(j);
}
