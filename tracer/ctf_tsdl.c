/* tracer/ctf_tsdl.c — the TSDL lexer and recursive-descent parser (ctf_tsdl.h): metadata
 * text → shared type descriptions and the raw trace, clock, stream and event blocks, which
 * ctf_meta.c turns into the trace model.
 */
#include "ctf_tsdl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TK_EOF = 0, TK_ID, TK_NUM, TK_STR, TK_PUNCT };

/* ---- errors and the arena ------------------------------------------------------------ */

void hl_tsdl_fail(hl_tsdl_ctx_t *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char msg[300];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    size_t line = 1;
    for (size_t i = 0; i < c->pos && i < c->n; i++)
        line += c->s[i] == '\n';
    snprintf(c->err, c->errlen, "metadata line %zu: %s", line, msg);
    longjmp(c->jb, 1);
}

void *hl_tsdl_alloc(hl_tsdl_ctx_t *c, size_t n)
{
    hl_tsdl_block_t *b = calloc(1, sizeof *b + n);
    if (!b) hl_tsdl_fail(c, "out of memory");
    b->next = c->arena;
    c->arena = b;
    return b->data;
}

char *hl_tsdl_strdup(hl_tsdl_ctx_t *c, const char *s)
{
    size_t l = strlen(s);
    char *p = hl_tsdl_alloc(c, l + 1);
    memcpy(p, s, l + 1);
    return p;
}

void hl_tsdl_arena_free(hl_tsdl_block_t *a)
{
    for (hl_tsdl_block_t *b = a; b;) {
        hl_tsdl_block_t *nb = b->next;
        free(b);
        b = nb;
    }
}

/* ---- lexer -------------------------------------------------------------------------- */

static void next(hl_tsdl_ctx_t *c)
{
    const char *s = c->s;
    for (;;) {
        while (c->pos < c->n &&
               (s[c->pos] == ' ' || s[c->pos] == '\t' || s[c->pos] == '\n' || s[c->pos] == '\r'))
            c->pos++;
        if (c->pos + 1 < c->n && s[c->pos] == '/' && s[c->pos + 1] == '*') {
            const char *e = NULL;
            for (size_t i = c->pos + 2; i + 1 < c->n; i++)
                if (s[i] == '*' && s[i + 1] == '/') {
                    e = s + i;
                    break;
                }
            if (!e) hl_tsdl_fail(c, "unterminated comment");
            c->pos = (size_t)(e - s) + 2;
            continue;
        }
        if (c->pos + 1 < c->n && s[c->pos] == '/' && s[c->pos + 1] == '/') {
            while (c->pos < c->n && s[c->pos] != '\n')
                c->pos++;
            continue;
        }
        break;
    }
    c->tok[0] = 0;
    if (c->pos >= c->n || !s[c->pos]) {
        c->tk = TK_EOF;
        return;
    }
    char ch = s[c->pos];
    if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_') {
        size_t l = 0;
        while (c->pos < c->n &&
               ((s[c->pos] >= 'a' && s[c->pos] <= 'z') || (s[c->pos] >= 'A' && s[c->pos] <= 'Z') ||
                (s[c->pos] >= '0' && s[c->pos] <= '9') || s[c->pos] == '_')) {
            if (l + 1 >= sizeof c->tok) hl_tsdl_fail(c, "identifier too long");
            c->tok[l++] = s[c->pos++];
        }
        c->tok[l] = 0;
        c->tk = TK_ID;
        return;
    }
    if (ch >= '0' && ch <= '9') {
        const char *st = s + c->pos;
        char *end = NULL;
        errno = 0;
        char buf[40];
        size_t l = 0;
        while (c->pos + l < c->n && l + 1 < sizeof buf &&
               ((st[l] >= '0' && st[l] <= '9') || (st[l] >= 'a' && st[l] <= 'f') ||
                (st[l] >= 'A' && st[l] <= 'F') || st[l] == 'x' || st[l] == 'X'))
            buf[l] = st[l], l++;
        buf[l] = 0;
        c->num = strtoull(buf, &end, 0);
        if (errno || end == buf) hl_tsdl_fail(c, "bad number '%s'", buf);
        c->pos += (size_t)(end - buf);
        while (c->pos < c->n &&
               (s[c->pos] == 'u' || s[c->pos] == 'U' || s[c->pos] == 'l' || s[c->pos] == 'L'))
            c->pos++;
        c->tk = TK_NUM;
        return;
    }
    if (ch == '"') {
        size_t l = 0;
        c->pos++;
        while (c->pos < c->n && s[c->pos] != '"') {
            if (s[c->pos] == '\\' && c->pos + 1 < c->n) c->pos++;
            if (l + 1 < sizeof c->tok) c->tok[l++] = s[c->pos];
            c->pos++;
        }
        if (c->pos >= c->n) hl_tsdl_fail(c, "unterminated string");
        c->pos++;
        c->tok[l] = 0;
        c->tk = TK_STR;
        return;
    }
    c->tk = TK_PUNCT;
    if (c->pos + 1 < c->n && ch == ':' && s[c->pos + 1] == '=') {
        strcpy(c->tok, ":=");
        c->pos += 2;
    } else if (c->pos + 2 < c->n && !strncmp(s + c->pos, "...", 3)) {
        strcpy(c->tok, "...");
        c->pos += 3;
    } else if (strchr("{}[]()<>;=,:.-+", ch)) {
        c->tok[0] = ch;
        c->tok[1] = 0;
        c->pos++;
    } else {
        hl_tsdl_fail(c, "unexpected character '%c'", ch);
    }
}

/* Append a word (space-separated) to buf: type names of several words ("unsigned long"). */
static void add_word(hl_tsdl_ctx_t *c, char *buf, size_t len, const char *w)
{
    size_t l = strlen(buf), k = strlen(w);
    if (l + k + 2 > len) hl_tsdl_fail(c, "type name too long");
    if (l) buf[l++] = ' ';
    memcpy(buf + l, w, k + 1);
}

/* Copy s into buf (len bytes), failing when it does not fit. */
static void copy_str(hl_tsdl_ctx_t *c, char *buf, size_t len, const char *s)
{
    size_t k = strlen(s);
    if (k + 1 > len) hl_tsdl_fail(c, "name too long");
    memcpy(buf, s, k + 1);
}

static int is(hl_tsdl_ctx_t *c, const char *p)
{
    int word = (p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z') || p[0] == '_';
    return c->tk == (word ? TK_ID : TK_PUNCT) && !strcmp(c->tok, p);
}

static void expect(hl_tsdl_ctx_t *c, const char *p)
{
    if (!is(c, p))
        hl_tsdl_fail(c, "expected '%s', found '%s'", p, c->tk == TK_EOF ? "end" : c->tok);
    next(c);
}

static char *ident(hl_tsdl_ctx_t *c)
{
    if (c->tk != TK_ID) hl_tsdl_fail(c, "expected a name, found '%s'", c->tok);
    char *r = hl_tsdl_strdup(c, c->tok);
    next(c);
    return r;
}

/* An integer literal, optionally negative. */
static int64_t number(hl_tsdl_ctx_t *c)
{
    int neg = 0;
    if (is(c, "-")) {
        neg = 1;
        next(c);
    } else if (is(c, "+")) {
        next(c);
    }
    if (c->tk != TK_NUM) hl_tsdl_fail(c, "expected a number, found '%s'", c->tok);
    uint64_t v = c->num;
    if (v > (uint64_t)INT64_MAX + (uint64_t)neg) hl_tsdl_fail(c, "number out of range");
    next(c);
    if (neg) return v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    return (int64_t)v;
}

/* Skip a balanced { … } block (the current token is '{'). */
static void skip_block(hl_tsdl_ctx_t *c)
{
    int depth = 0;
    do {
        if (c->tk == TK_EOF) hl_tsdl_fail(c, "unterminated block");
        if (is(c, "{")) depth++;
        if (is(c, "}")) depth--;
        next(c);
    } while (depth > 0);
}

/* ---- names ------------------------------------------------------------------------- */

static hl_tsdl_ty_t *lookup(hl_tsdl_ctx_t *c, const char *name)
{
    for (size_t i = c->nnames; i-- > 0;)
        if (!strcmp(c->names[i].name, name)) return c->names[i].t;
    return NULL;
}

static void define(hl_tsdl_ctx_t *c, const char *name, hl_tsdl_ty_t *t)
{
    if (c->nnames == c->capnames) {
        size_t cap = c->capnames ? c->capnames * 2 : 64;
        hl_tsdl_named_t *nn = hl_tsdl_alloc(c, cap * sizeof *nn);
        if (c->nnames) memcpy(nn, c->names, c->nnames * sizeof *nn);
        c->names = nn;
        c->capnames = cap;
    }
    c->names[c->nnames].name = hl_tsdl_strdup(c, name);
    c->names[c->nnames++].t = t;
}

/* ---- types ------------------------------------------------------------------------- */

static hl_tsdl_ty_t *type_spec(hl_tsdl_ctx_t *c);

/* Tokens joined by dots (`a.b.c`) into buf, NUL-terminated; names: every part must be an
 * identifier (else the first part was checked by the caller). */
static void dotted(hl_tsdl_ctx_t *c, char *buf, size_t len, int names, const char *too_long)
{
    size_t l = 0;
    buf[0] = 0;
    for (;;) {
        if (names && c->tk != TK_ID) hl_tsdl_fail(c, "expected a name, found '%s'", c->tok);
        size_t k = strlen(c->tok);
        if (l + k + 2 >= len) hl_tsdl_fail(c, "%s", too_long);
        memcpy(buf + l, c->tok, k);
        l += k;
        buf[l] = 0;
        next(c);
        if (!is(c, ".")) break;
        buf[l++] = '.';
        next(c);
    }
}

/* `lhs = value;` inside integer { } / floating_point { } / string { }: the value text. */
static void attr_value(hl_tsdl_ctx_t *c, char *val, size_t vlen, int64_t *num, int *isnum)
{
    *isnum = 0;
    val[0] = 0;
    if (c->tk == TK_NUM || is(c, "-")) {
        *num = number(c);
        *isnum = 1;
        return;
    }
    if (c->tk != TK_ID && c->tk != TK_STR) hl_tsdl_fail(c, "bad attribute value '%s'", c->tok);
    dotted(c, val, vlen, 0, "attribute value too long"); /* clock.monotonic.value */
}

static hl_tsdl_ty_t *int_type(hl_tsdl_ctx_t *c, int is_float)
{
    hl_tsdl_ty_t *t = hl_tsdl_alloc(c, sizeof *t);
    t->kind = is_float ? HL_CTF_FLOAT : HL_CTF_INT;
    unsigned exp = 0, mant = 0;
    int has_size = 0, has_align = 0;
    expect(c, "{");
    while (!is(c, "}")) {
        char key[64];
        copy_str(c, key, sizeof key, c->tok);
        if (c->tk != TK_ID) hl_tsdl_fail(c, "bad attribute '%s'", c->tok);
        next(c);
        expect(c, "=");
        char val[128];
        int64_t num = 0;
        int isnum;
        attr_value(c, val, sizeof val, &num, &isnum);
        expect(c, ";");
        if (!strcmp(key, "size") && isnum && !is_float) {
            if (num < 1 || num > 64)
                hl_tsdl_fail(c, "integer size %lld not supported", (long long)num);
            t->size = (unsigned)num;
            has_size = 1;
        } else if (!strcmp(key, "align") && isnum) {
            if (num < 1 || num > 64 || (num & (num - 1)))
                hl_tsdl_fail(c, "bad align %lld", (long long)num);
            t->align = (unsigned)num;
            has_align = 1;
        } else if (!strcmp(key, "signed")) {
            t->sgn = isnum ? num != 0 : !strcmp(val, "true") || !strcmp(val, "TRUE");
        } else if (!strcmp(key, "byte_order")) {
            if (strcmp(val, "le") && strcmp(val, "native") && strcmp(val, "little_endian"))
                hl_tsdl_fail(c, "byte_order %s not supported (little-endian only)", val);
        } else if (!strcmp(key, "encoding")) {
            t->text = strcmp(val, "none") != 0;
        } else if (!strcmp(key, "map")) {
            if (strncmp(val, "clock.", 6)) hl_tsdl_fail(c, "map = %s not supported", val);
            t->clock = 1;
        } else if (!strcmp(key, "exp_dig") && isnum && is_float) {
            exp = (unsigned)num;
        } else if (!strcmp(key, "mant_dig") && isnum && is_float) {
            mant = (unsigned)num;
        } else if (!strcmp(key, "base")) {
            /* display only */
        } else {
            hl_tsdl_fail(c, "integer attribute '%s' not supported", key);
        }
    }
    next(c);
    if (is_float) {
        if (exp + mant != 32 && exp + mant != 64)
            hl_tsdl_fail(c, "floating_point of %u bits", exp + mant);
        t->size = exp + mant;
        has_size = 1;
        if (!has_align) t->align = 8, has_align = 1;
    }
    if (!has_size) hl_tsdl_fail(c, "integer without size");
    if (!has_align) t->align = t->size % 8 ? 1 : 8;
    return t;
}

static void add_field(hl_tsdl_ctx_t *c, hl_tsdl_ty_t *st, const char *name, hl_tsdl_ty_t *t)
{
    hl_tsdl_field_t *nf = hl_tsdl_alloc(c, (st->nf + 1) * sizeof *nf);
    if (st->nf) memcpy(nf, st->f, st->nf * sizeof *nf);
    nf[st->nf].name = hl_tsdl_strdup(c, name);
    nf[st->nf].t = t;
    st->f = nf;
    st->nf++;
}

/* Declarator suffixes [N] / [len]: arrays and sequences (innermost last). */
static hl_tsdl_ty_t *declarator_suffix(hl_tsdl_ctx_t *c, hl_tsdl_ty_t *t)
{
    if (!is(c, "[")) return t;
    next(c);
    hl_tsdl_ty_t *a = hl_tsdl_alloc(c, sizeof *a);
    if (c->tk == TK_NUM) {
        a->kind = HL_CTF_ARRAY;
        a->len = c->num;
        next(c);
    } else {
        a->kind = HL_CTF_SEQ;
        char ref[256] = "";
        for (;;) { /* a length path: keep its last component */
            if (c->tk != TK_ID) hl_tsdl_fail(c, "bad sequence length '%s'", c->tok);
            snprintf(ref, sizeof ref, "%s", c->tok);
            next(c);
            if (!is(c, ".")) break;
            hl_tsdl_fail(c, "sequence length path outside its struct not supported");
        }
        a->lenref = hl_tsdl_strdup(c, ref);
    }
    expect(c, "]");
    a->elem = declarator_suffix(c, t);
    return a;
}

/* struct/variant member list: `type name [suffix];` … up to '}' (consumed). */
static void members(hl_tsdl_ctx_t *c, hl_tsdl_ty_t *st)
{
    expect(c, "{");
    while (!is(c, "}")) {
        if (is(c, "typealias") || is(c, "typedef"))
            hl_tsdl_fail(c, "type declarations inside a struct not supported");
        hl_tsdl_ty_t *t = NULL;
        char name[256];
        if (c->tk == TK_ID && !is(c, "integer") && !is(c, "struct") && !is(c, "variant") &&
            !is(c, "enum") && !is(c, "string") && !is(c, "floating_point")) {
            /* alias name words, then the member name */
            char words[256] = "", last[256] = "";
            while (c->tk == TK_ID) {
                if (last[0]) {
                    size_t l = strlen(words);
                    snprintf(words + l, sizeof words - l, "%s%s", l ? " " : "", last);
                }
                snprintf(last, sizeof last, "%s", c->tok);
                next(c);
            }
            t = lookup(c, words);
            if (!t) hl_tsdl_fail(c, "unknown type '%s'", words);
            snprintf(name, sizeof name, "%s", last);
        } else {
            t = type_spec(c);
            if (c->tk != TK_ID) hl_tsdl_fail(c, "expected a member name, found '%s'", c->tok);
            snprintf(name, sizeof name, "%s", c->tok);
            next(c);
        }
        t = declarator_suffix(c, t);
        if (is(c, ",")) hl_tsdl_fail(c, "several declarators in one member not supported");
        expect(c, ";");
        add_field(c, st, name, t);
    }
    next(c);
}

static hl_tsdl_ty_t *type_spec(hl_tsdl_ctx_t *c)
{
    if (is(c, "integer")) {
        next(c);
        return int_type(c, 0);
    }
    if (is(c, "floating_point")) {
        next(c);
        return int_type(c, 1);
    }
    if (is(c, "string")) {
        next(c);
        hl_tsdl_ty_t *t = hl_tsdl_alloc(c, sizeof *t);
        t->kind = HL_CTF_STRING;
        t->align = 8;
        if (is(c, "{")) skip_block(c); /* encoding = UTF8 / ASCII */
        return t;
    }
    if (is(c, "struct") || is(c, "variant")) {
        int var = is(c, "variant");
        next(c);
        char tname[300] = "";
        if (c->tk == TK_ID) {
            snprintf(tname, sizeof tname, "%s %s", var ? "variant" : "struct", c->tok);
            next(c);
        }
        char *tag = NULL;
        if (var && is(c, "<")) {
            next(c);
            char ref[256] = "";
            for (;;) {
                if (c->tk != TK_ID) hl_tsdl_fail(c, "bad variant tag");
                snprintf(ref, sizeof ref, "%s", c->tok);
                next(c);
                if (!is(c, ".")) break;
                hl_tsdl_fail(c, "variant tag path outside its struct not supported");
            }
            expect(c, ">");
            tag = hl_tsdl_strdup(c, ref);
        }
        if (!is(c, "{")) {
            if (!tname[0]) hl_tsdl_fail(c, "anonymous %s without body", var ? "variant" : "struct");
            hl_tsdl_ty_t *t = lookup(c, tname);
            if (!t) hl_tsdl_fail(c, "unknown type '%s'", tname);
            if (var && tag) { /* a named variant given its tag here */
                hl_tsdl_ty_t *v = hl_tsdl_alloc(c, sizeof *v);
                *v = *t;
                v->tag = tag;
                t = v;
            }
            if (!var && is(c, "align"))
                hl_tsdl_fail(c, "align() on a struct reference not supported");
            return t;
        }
        hl_tsdl_ty_t *t = hl_tsdl_alloc(c, sizeof *t);
        t->kind = var ? HL_CTF_VARIANT : HL_CTF_STRUCT;
        t->tag = tag;
        t->align = 1;
        members(c, t);
        if (!var && is(c, "align")) {
            next(c);
            expect(c, "(");
            int64_t a = number(c);
            expect(c, ")");
            if (a < 1 || a > 64 || (a & (a - 1)))
                hl_tsdl_fail(c, "bad struct align %lld", (long long)a);
            t->align = (unsigned)a;
        }
        if (tname[0]) define(c, tname, t);
        return t;
    }
    if (is(c, "enum")) {
        next(c);
        char tname[300] = "";
        if (c->tk == TK_ID) {
            snprintf(tname, sizeof tname, "enum %s", c->tok);
            next(c);
        }
        if (!is(c, ":") && !is(c, "{")) {
            hl_tsdl_ty_t *t = lookup(c, tname);
            if (!t) hl_tsdl_fail(c, "unknown type '%s'", tname);
            return t;
        }
        hl_tsdl_ty_t *base = NULL;
        if (is(c, ":")) {
            next(c);
            if (is(c, "integer")) {
                next(c);
                base = int_type(c, 0);
            } else {
                char words[256] = "";
                while (c->tk == TK_ID) {
                    add_word(c, words, sizeof words, c->tok);
                    next(c);
                }
                base = lookup(c, words);
                if (!base) hl_tsdl_fail(c, "unknown enum base type '%s'", words);
            }
        } else {
            base = lookup(c, "int");
            if (!base) hl_tsdl_fail(c, "enum without a base type");
        }
        if (base->kind != HL_CTF_INT) hl_tsdl_fail(c, "enum over a non-integer");
        hl_tsdl_ty_t *t = hl_tsdl_alloc(c, sizeof *t);
        *t = *base;
        t->nmap = 0;
        t->map = NULL;
        expect(c, "{");
        int64_t nextv = 0;
        while (!is(c, "}")) {
            if (c->tk != TK_ID && c->tk != TK_STR) hl_tsdl_fail(c, "bad enumerator '%s'", c->tok);
            char *label = hl_tsdl_strdup(c, c->tok);
            next(c);
            int64_t lo = nextv, hi = nextv;
            if (is(c, "=")) {
                next(c);
                lo = hi = number(c);
                if (is(c, "...")) {
                    next(c);
                    hi = number(c);
                }
            }
            if (hi < lo) hl_tsdl_fail(c, "enumerator '%s': empty range", label);
            nextv = hi == INT64_MAX ? hi : hi + 1;
            hl_tsdl_map_t *nm = hl_tsdl_alloc(c, (t->nmap + 1) * sizeof *nm);
            if (t->nmap) memcpy(nm, t->map, t->nmap * sizeof *nm);
            nm[t->nmap].label = label;
            nm[t->nmap].lo = lo;
            nm[t->nmap].hi = hi;
            t->map = nm;
            t->nmap++;
            if (is(c, ",")) next(c);
        }
        next(c);
        if (tname[0]) define(c, tname, t);
        return t;
    }
    if (c->tk == TK_ID) {
        char words[256] = "";
        while (c->tk == TK_ID) {
            add_word(c, words, sizeof words, c->tok);
            next(c);
        }
        hl_tsdl_ty_t *t = lookup(c, words);
        if (!t) hl_tsdl_fail(c, "unknown type '%s'", words);
        return t;
    }
    hl_tsdl_fail(c, "expected a type, found '%s'", c->tok);
}

/* ---- blocks ------------------------------------------------------------------------ */

/* `a.b.c` into buf. */
static void lhs(hl_tsdl_ctx_t *c, char *buf, size_t len)
{
    dotted(c, buf, len, 1, "name too long");
}

static int parse_uuid(const char *s, uint8_t out[16])
{
    int k = 0;
    for (const char *p = s; *p && k < 32; p++) {
        if (*p == '-') continue;
        int v = *p >= '0' && *p <= '9'   ? *p - '0'
                : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
                : *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
                                         : -1;
        if (v < 0) return -1;
        if (k & 1)
            out[k / 2] |= (uint8_t)v;
        else
            out[k / 2] = (uint8_t)(v << 4);
        k++;
    }
    return k == 32 ? 0 : -1;
}

static void block_trace(hl_tsdl_ctx_t *c)
{
    expect(c, "{");
    while (!is(c, "}")) {
        char key[128];
        lhs(c, key, sizeof key);
        if (is(c, ":=")) {
            next(c);
            hl_tsdl_ty_t *t = type_spec(c);
            if (strcmp(key, "packet.header")) hl_tsdl_fail(c, "trace %s not supported", key);
            c->ph = t;
        } else {
            expect(c, "=");
            if (!strcmp(key, "uuid")) {
                if (c->tk != TK_STR || parse_uuid(c->tok, c->m->uuid) != 0)
                    hl_tsdl_fail(c, "bad trace uuid");
                c->m->has_uuid = 1;
                next(c);
            } else if (!strcmp(key, "byte_order")) {
                if (strcmp(c->tok, "le"))
                    hl_tsdl_fail(c, "trace byte_order %s not supported", c->tok);
                next(c);
            } else if (!strcmp(key, "major")) {
                if (number(c) != 1) hl_tsdl_fail(c, "CTF major version other than 1");
            } else if (!strcmp(key, "minor")) {
                number(c);
            } else {
                hl_tsdl_fail(c, "trace attribute '%s' not supported", key);
            }
        }
        expect(c, ";");
    }
    next(c);
}

static void block_clock(hl_tsdl_ctx_t *c)
{
    if (++c->nclock > 1) hl_tsdl_fail(c, "more than one clock");
    c->m->clock_freq = 1000000000;
    expect(c, "{");
    while (!is(c, "}")) {
        char key[128];
        lhs(c, key, sizeof key);
        expect(c, "=");
        if (!strcmp(key, "name")) {
            copy_str(c, c->clock_name, sizeof c->clock_name, c->tok);
            next(c);
        } else if (!strcmp(key, "freq")) {
            int64_t f = number(c);
            if (f <= 0) hl_tsdl_fail(c, "bad clock frequency");
            c->m->clock_freq = (uint64_t)f;
        } else if (!strcmp(key, "offset")) {
            c->m->clock_offset = number(c);
        } else if (!strcmp(key, "offset_s")) {
            c->m->clock_offset_s = number(c);
        } else if (!strcmp(key, "absolute")) {
            next(c);
        } else if (c->tk == TK_STR || c->tk == TK_ID) { /* uuid, description */
            next(c);
        } else {
            number(c); /* precision */
        }
        expect(c, ";");
    }
    next(c);
}

static void block_stream(hl_tsdl_ctx_t *c)
{
    if (c->nst == sizeof c->st / sizeof c->st[0]) hl_tsdl_fail(c, "too many stream classes");
    size_t i = c->nst++;
    expect(c, "{");
    while (!is(c, "}")) {
        char key[128];
        lhs(c, key, sizeof key);
        if (is(c, ":=")) {
            next(c);
            hl_tsdl_ty_t *t = type_spec(c);
            if (!strcmp(key, "packet.context"))
                c->st[i].pc = t;
            else if (!strcmp(key, "event.header"))
                c->st[i].eh = t;
            else if (!strcmp(key, "event.context"))
                c->st[i].ec = t;
            else
                hl_tsdl_fail(c, "stream %s not supported", key);
        } else {
            expect(c, "=");
            if (strcmp(key, "id")) hl_tsdl_fail(c, "stream attribute '%s' not supported", key);
            int64_t id = number(c);
            if (id < 0) hl_tsdl_fail(c, "bad stream id");
            c->st[i].id = (uint64_t)id;
            c->st[i].has_id = 1;
        }
        expect(c, ";");
    }
    next(c);
}

static void block_event(hl_tsdl_ctx_t *c)
{
    if (c->nev == c->capev) {
        size_t cap = c->capev ? c->capev * 2 : 64;
        struct hl_tsdl_event_s *ne = hl_tsdl_alloc(c, cap * sizeof *ne);
        if (c->nev) memcpy(ne, c->ev, c->nev * sizeof *ne);
        c->ev = ne;
        c->capev = cap;
    }
    struct hl_tsdl_event_s *e = &c->ev[c->nev++];
    memset(e, 0, sizeof *e);
    int has_id = 0;
    expect(c, "{");
    while (!is(c, "}")) {
        char key[128];
        lhs(c, key, sizeof key);
        if (is(c, ":=")) {
            next(c);
            hl_tsdl_ty_t *t = type_spec(c);
            if (!strcmp(key, "fields"))
                e->fields = t;
            else if (!strcmp(key, "context"))
                e->ctx = t;
            else
                hl_tsdl_fail(c, "event %s not supported", key);
        } else {
            expect(c, "=");
            if (!strcmp(key, "name")) {
                if (c->tk != TK_STR && c->tk != TK_ID) hl_tsdl_fail(c, "bad event name");
                e->name = hl_tsdl_strdup(c, c->tok);
                next(c);
            } else if (!strcmp(key, "id")) {
                int64_t v = number(c);
                if (v < 0) hl_tsdl_fail(c, "bad event id");
                e->id = (uint64_t)v;
                has_id = 1;
            } else if (!strcmp(key, "stream_id")) {
                int64_t v = number(c);
                if (v < 0) hl_tsdl_fail(c, "bad event stream_id");
                e->stream_id = (uint64_t)v;
                e->has_stream = 1;
            } else if (!strcmp(key, "loglevel")) {
                number(c);
            } else if (!strcmp(key, "model.emf.uri")) {
                next(c);
            } else {
                hl_tsdl_fail(c, "event attribute '%s' not supported", key);
            }
        }
        expect(c, ";");
    }
    next(c);
    if (!has_id || !e->name) hl_tsdl_fail(c, "event without id or name");
}

void hl_tsdl_parse(hl_tsdl_ctx_t *c)
{
    next(c);
    while (c->tk != TK_EOF) {
        if (is(c, "typealias")) {
            next(c);
            hl_tsdl_ty_t *t = type_spec(c);
            expect(c, ":=");
            char words[256] = "";
            while (c->tk == TK_ID) {
                add_word(c, words, sizeof words, c->tok);
                next(c);
            }
            if (!words[0]) hl_tsdl_fail(c, "typealias without a name");
            define(c, words, t);
        } else if (is(c, "typedef")) {
            next(c);
            hl_tsdl_ty_t *t = type_spec(c);
            char *name = ident(c);
            t = declarator_suffix(c, t);
            define(c, name, t);
        } else if (is(c, "trace")) {
            next(c);
            block_trace(c);
        } else if (is(c, "env") || is(c, "callsite")) {
            next(c);
            skip_block(c);
        } else if (is(c, "clock")) {
            next(c);
            block_clock(c);
        } else if (is(c, "stream")) {
            next(c);
            block_stream(c);
        } else if (is(c, "event")) {
            next(c);
            block_event(c);
        } else if (is(c, "struct") || is(c, "variant") || is(c, "enum")) {
            type_spec(c);
        } else {
            hl_tsdl_fail(c, "'%s' not supported", c->tok);
        }
        expect(c, ";");
    }
}
