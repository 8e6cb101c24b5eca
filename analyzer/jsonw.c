/* analyzer/jsonw.c — see jsonw.h. */
#include "jsonw.h"

#include <math.h>

#include "safetext.h"

void hl_json_init(hl_json_t *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->count[0] = 0;
    j->after_key = 0;
}

static void sep(hl_json_t *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->count[j->depth]++) fputc(',', j->f);
}

/* Valid UTF-8 out, whatever came in (jsonw.h): a byte that does not start a valid sequence
 * becomes U+FFFD. Controls (C0, DEL, C1, bidirectional) and the JavaScript line separators are
 * written as \u escapes, so that the document is also safe to print on a terminal. */
void hl_json_escape(FILE *f, const char *s)
{
    fputc('"', f);
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        uint32_t cp;
        size_t n = hl_utf8_decode(p, &cp);
        if (!n) {
            fputs("\\ufffd", f);
            p++;
            continue;
        }
        switch (cp) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        default:
            if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
                hl_is_bidi_control(cp))
                fprintf(f, "\\u%04x", (unsigned)cp);
            else
                fwrite(p, 1, n, f);
        }
        p += n;
    }
    fputc('"', f);
}

void hl_json_key(hl_json_t *j, const char *key)
{
    sep(j);
    hl_json_escape(j->f, key);
    fputc(':', j->f);
    j->after_key = 1;
}

static void open_(hl_json_t *j, char c)
{
    sep(j);
    fputc(c, j->f);
    if (j->depth + 1 < HL_JSON_DEPTH) j->count[++j->depth] = 0;
}

static void close_(hl_json_t *j, char c)
{
    fputc(c, j->f);
    if (j->depth > 0) j->depth--;
    if (j->depth == 0) fputc('\n', j->f);
}

void hl_json_obj(hl_json_t *j)
{
    open_(j, '{');
}
void hl_json_obj_end(hl_json_t *j)
{
    close_(j, '}');
}
void hl_json_arr(hl_json_t *j)
{
    open_(j, '[');
}
void hl_json_arr_end(hl_json_t *j)
{
    close_(j, ']');
}

void hl_json_str(hl_json_t *j, const char *s)
{
    sep(j);
    hl_json_escape(j->f, s);
}

void hl_json_u64(hl_json_t *j, uint64_t v)
{
    sep(j);
    fprintf(j->f, "%llu", (unsigned long long)v);
}

void hl_json_i64(hl_json_t *j, int64_t v)
{
    sep(j);
    fprintf(j->f, "%lld", (long long)v);
}

void hl_json_num(hl_json_t *j, double v)
{
    sep(j);
    if (!isfinite(v))
        fputs("null", j->f);
    else if (v == (double)(long long)v && fabs(v) < 1e15)
        fprintf(j->f, "%lld", (long long)v);
    else
        fprintf(j->f, "%.6g", v);
}

void hl_json_frac(hl_json_t *j, double v)
{
    if (v < 0) {
        hl_json_null(j);
        return;
    }
    hl_json_num(j, v);
}

void hl_json_bool(hl_json_t *j, int v)
{
    sep(j);
    fputs(v ? "true" : "false", j->f);
}

void hl_json_null(hl_json_t *j)
{
    sep(j);
    fputs("null", j->f);
}
