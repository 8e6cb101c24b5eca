/* tracer/ctf_meta.c — TSDL metadata → trace model (see ctf_meta.h for what is understood).
 *
 * A lexer and a recursive-descent parser over the metadata text build shared type
 * descriptions (typealiases and named structs are referenced, not copied); once the whole
 * text is read, every scope (packet header, packet context, event header, event contexts,
 * payloads) is instantiated into its own node tree with value slots, sequence lengths and
 * variant tags resolved to slots of the same struct. Errors unwind with longjmp; everything
 * lives in one arena freed with the model.
 */
#include "ctf_meta.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- arena -------------------------------------------------------------------------- */

typedef struct ablk_s {
    struct ablk_s *next;
    max_align_t data[];
} ablk_t;

typedef struct ctx_s ctx_t;
static void fail(ctx_t *c, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/* ---- types (shared between scopes) ------------------------------------------------ */

typedef struct ty_s ty_t;
typedef struct tfield_s {
    char *name;
    ty_t *t;
} tfield_t;
typedef struct tmap_s {
    char *label;
    int64_t lo, hi;
} tmap_t;

struct ty_s {
    int kind; /* hl_ctf_kind_t */
    unsigned size, align;
    int sgn, clock, text;
    size_t nmap; /* enum mappings (an INT with mappings is an enum) */
    tmap_t *map;
    size_t nf; /* STRUCT members / VARIANT options */
    tfield_t *f;
    char *tag;  /* VARIANT */
    ty_t *elem; /* ARRAY / SEQ */
    uint64_t len;
    char *lenref;
};

typedef struct named_s {
    char *name;
    ty_t *t;
} named_t;

enum { TK_EOF = 0, TK_ID, TK_NUM, TK_STR, TK_PUNCT };

struct ctx_s {
    const char *s;
    size_t n, pos;
    int tk;
    char tok[256]; /* identifier, string or punctuation text */
    uint64_t num;  /* TK_NUM */
    jmp_buf jb;
    char *err;
    size_t errlen;
    ablk_t *arena;
    named_t *names; /* typealias / typedef / struct X / enum X / variant X */
    size_t nnames, capnames;
    hl_ctf_meta_t *m;
    /* raw blocks, instantiated at the end */
    ty_t *ph;
    struct {
        uint64_t id;
        int has_id;
        ty_t *pc, *eh, *ec;
    } st[64];
    size_t nst;
    struct ev_s {
        char *name;
        uint64_t id, stream_id;
        int has_stream;
        ty_t *ctx, *fields;
    } * ev;
    size_t nev, capev;
    int nclock;
    char clock_name[64];
};

static void fail(ctx_t *c, const char *fmt, ...)
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

static void *amalloc(ctx_t *c, size_t n)
{
    ablk_t *b = calloc(1, sizeof *b + n);
    if (!b) fail(c, "out of memory");
    b->next = c->arena;
    c->arena = b;
    return b->data;
}

static char *astrdup(ctx_t *c, const char *s)
{
    size_t l = strlen(s);
    char *p = amalloc(c, l + 1);
    memcpy(p, s, l + 1);
    return p;
}

/* ---- lexer -------------------------------------------------------------------------- */

static void next(ctx_t *c)
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
            if (!e) fail(c, "unterminated comment");
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
            if (l + 1 >= sizeof c->tok) fail(c, "identifier too long");
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
        if (errno || end == buf) fail(c, "bad number '%s'", buf);
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
        if (c->pos >= c->n) fail(c, "unterminated string");
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
        fail(c, "unexpected character '%c'", ch);
    }
}

/* Append a word (space-separated) to buf: type names of several words ("unsigned long"). */
static void add_word(ctx_t *c, char *buf, size_t len, const char *w)
{
    size_t l = strlen(buf), k = strlen(w);
    if (l + k + 2 > len) fail(c, "type name too long");
    if (l) buf[l++] = ' ';
    memcpy(buf + l, w, k + 1);
}

/* Copy s into buf (len bytes), failing when it does not fit. */
static void copy_str(ctx_t *c, char *buf, size_t len, const char *s)
{
    size_t k = strlen(s);
    if (k + 1 > len) fail(c, "name too long");
    memcpy(buf, s, k + 1);
}

static int is(ctx_t *c, const char *p)
{
    int word = (p[0] >= 'a' && p[0] <= 'z') || (p[0] >= 'A' && p[0] <= 'Z') || p[0] == '_';
    return c->tk == (word ? TK_ID : TK_PUNCT) && !strcmp(c->tok, p);
}

static void expect(ctx_t *c, const char *p)
{
    if (!is(c, p)) fail(c, "expected '%s', found '%s'", p, c->tk == TK_EOF ? "end" : c->tok);
    next(c);
}

static char *ident(ctx_t *c)
{
    if (c->tk != TK_ID) fail(c, "expected a name, found '%s'", c->tok);
    char *r = astrdup(c, c->tok);
    next(c);
    return r;
}

/* An integer literal, optionally negative. */
static int64_t number(ctx_t *c)
{
    int neg = 0;
    if (is(c, "-")) {
        neg = 1;
        next(c);
    } else if (is(c, "+")) {
        next(c);
    }
    if (c->tk != TK_NUM) fail(c, "expected a number, found '%s'", c->tok);
    uint64_t v = c->num;
    if (v > (uint64_t)INT64_MAX + (uint64_t)neg) fail(c, "number out of range");
    next(c);
    if (neg) return v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
    return (int64_t)v;
}

/* Skip a balanced { … } block (the current token is '{'). */
static void skip_block(ctx_t *c)
{
    int depth = 0;
    do {
        if (c->tk == TK_EOF) fail(c, "unterminated block");
        if (is(c, "{")) depth++;
        if (is(c, "}")) depth--;
        next(c);
    } while (depth > 0);
}

/* ---- names ------------------------------------------------------------------------- */

static ty_t *lookup(ctx_t *c, const char *name)
{
    for (size_t i = c->nnames; i-- > 0;)
        if (!strcmp(c->names[i].name, name)) return c->names[i].t;
    return NULL;
}

static void define(ctx_t *c, const char *name, ty_t *t)
{
    if (c->nnames == c->capnames) {
        size_t cap = c->capnames ? c->capnames * 2 : 64;
        named_t *nn = amalloc(c, cap * sizeof *nn);
        if (c->nnames) memcpy(nn, c->names, c->nnames * sizeof *nn);
        c->names = nn;
        c->capnames = cap;
    }
    c->names[c->nnames].name = astrdup(c, name);
    c->names[c->nnames++].t = t;
}

/* ---- types ------------------------------------------------------------------------- */

static ty_t *type_spec(ctx_t *c);

/* `lhs = value;` inside integer { } / floating_point { } / string { }: the value text. */
static void attr_value(ctx_t *c, char *val, size_t vlen, int64_t *num, int *isnum)
{
    *isnum = 0;
    val[0] = 0;
    if (c->tk == TK_NUM || is(c, "-")) {
        *num = number(c);
        *isnum = 1;
        return;
    }
    if (c->tk != TK_ID && c->tk != TK_STR) fail(c, "bad attribute value '%s'", c->tok);
    size_t l = 0;
    for (;;) { /* dotted names: clock.monotonic.value */
        size_t k = strlen(c->tok);
        if (l + k + 2 >= vlen) fail(c, "attribute value too long");
        memcpy(val + l, c->tok, k);
        l += k;
        val[l] = 0;
        next(c);
        if (!is(c, ".")) break;
        val[l++] = '.';
        next(c);
    }
}

static ty_t *int_type(ctx_t *c, int is_float)
{
    ty_t *t = amalloc(c, sizeof *t);
    t->kind = is_float ? HL_CTF_FLOAT : HL_CTF_INT;
    unsigned exp = 0, mant = 0;
    int has_size = 0, has_align = 0;
    expect(c, "{");
    while (!is(c, "}")) {
        char key[64];
        copy_str(c, key, sizeof key, c->tok);
        if (c->tk != TK_ID) fail(c, "bad attribute '%s'", c->tok);
        next(c);
        expect(c, "=");
        char val[128];
        int64_t num = 0;
        int isnum;
        attr_value(c, val, sizeof val, &num, &isnum);
        expect(c, ";");
        if (!strcmp(key, "size") && isnum && !is_float) {
            if (num < 1 || num > 64) fail(c, "integer size %lld not supported", (long long)num);
            t->size = (unsigned)num;
            has_size = 1;
        } else if (!strcmp(key, "align") && isnum) {
            if (num < 1 || num > 64 || (num & (num - 1))) fail(c, "bad align %lld", (long long)num);
            t->align = (unsigned)num;
            has_align = 1;
        } else if (!strcmp(key, "signed")) {
            t->sgn = isnum ? num != 0 : !strcmp(val, "true") || !strcmp(val, "TRUE");
        } else if (!strcmp(key, "byte_order")) {
            if (strcmp(val, "le") && strcmp(val, "native") && strcmp(val, "little_endian"))
                fail(c, "byte_order %s not supported (little-endian only)", val);
        } else if (!strcmp(key, "encoding")) {
            t->text = strcmp(val, "none") != 0;
        } else if (!strcmp(key, "map")) {
            if (strncmp(val, "clock.", 6)) fail(c, "map = %s not supported", val);
            t->clock = 1;
        } else if (!strcmp(key, "exp_dig") && isnum && is_float) {
            exp = (unsigned)num;
        } else if (!strcmp(key, "mant_dig") && isnum && is_float) {
            mant = (unsigned)num;
        } else if (!strcmp(key, "base")) {
            /* display only */
        } else {
            fail(c, "integer attribute '%s' not supported", key);
        }
    }
    next(c);
    if (is_float) {
        if (exp + mant != 32 && exp + mant != 64) fail(c, "floating_point of %u bits", exp + mant);
        t->size = exp + mant;
        has_size = 1;
        if (!has_align) t->align = 8, has_align = 1;
    }
    if (!has_size) fail(c, "integer without size");
    if (!has_align) t->align = t->size % 8 ? 1 : 8;
    return t;
}

static void add_field(ctx_t *c, ty_t *st, const char *name, ty_t *t)
{
    tfield_t *nf = amalloc(c, (st->nf + 1) * sizeof *nf);
    if (st->nf) memcpy(nf, st->f, st->nf * sizeof *nf);
    nf[st->nf].name = astrdup(c, name);
    nf[st->nf].t = t;
    st->f = nf;
    st->nf++;
}

/* Declarator suffixes [N] / [len]: arrays and sequences (innermost last). */
static ty_t *declarator_suffix(ctx_t *c, ty_t *t)
{
    if (!is(c, "[")) return t;
    next(c);
    ty_t *a = amalloc(c, sizeof *a);
    if (c->tk == TK_NUM) {
        a->kind = HL_CTF_ARRAY;
        a->len = c->num;
        next(c);
    } else {
        a->kind = HL_CTF_SEQ;
        char ref[256] = "";
        for (;;) { /* a length path: keep its last component */
            if (c->tk != TK_ID) fail(c, "bad sequence length '%s'", c->tok);
            snprintf(ref, sizeof ref, "%s", c->tok);
            next(c);
            if (!is(c, ".")) break;
            fail(c, "sequence length path outside its struct not supported");
        }
        a->lenref = astrdup(c, ref);
    }
    expect(c, "]");
    a->elem = declarator_suffix(c, t);
    return a;
}

/* struct/variant member list: `type name [suffix];` … up to '}' (consumed). */
static void members(ctx_t *c, ty_t *st)
{
    expect(c, "{");
    while (!is(c, "}")) {
        if (is(c, "typealias") || is(c, "typedef"))
            fail(c, "type declarations inside a struct not supported");
        ty_t *t = NULL;
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
            if (!t) fail(c, "unknown type '%s'", words);
            snprintf(name, sizeof name, "%s", last);
        } else {
            t = type_spec(c);
            if (c->tk != TK_ID) fail(c, "expected a member name, found '%s'", c->tok);
            snprintf(name, sizeof name, "%s", c->tok);
            next(c);
        }
        t = declarator_suffix(c, t);
        if (is(c, ",")) fail(c, "several declarators in one member not supported");
        expect(c, ";");
        add_field(c, st, name, t);
    }
    next(c);
}

static ty_t *type_spec(ctx_t *c)
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
        ty_t *t = amalloc(c, sizeof *t);
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
                if (c->tk != TK_ID) fail(c, "bad variant tag");
                snprintf(ref, sizeof ref, "%s", c->tok);
                next(c);
                if (!is(c, ".")) break;
                fail(c, "variant tag path outside its struct not supported");
            }
            expect(c, ">");
            tag = astrdup(c, ref);
        }
        if (!is(c, "{")) {
            if (!tname[0]) fail(c, "anonymous %s without body", var ? "variant" : "struct");
            ty_t *t = lookup(c, tname);
            if (!t) fail(c, "unknown type '%s'", tname);
            if (var && tag) { /* a named variant given its tag here */
                ty_t *v = amalloc(c, sizeof *v);
                *v = *t;
                v->tag = tag;
                t = v;
            }
            if (!var && is(c, "align")) fail(c, "align() on a struct reference not supported");
            return t;
        }
        ty_t *t = amalloc(c, sizeof *t);
        t->kind = var ? HL_CTF_VARIANT : HL_CTF_STRUCT;
        t->tag = tag;
        t->align = 1;
        members(c, t);
        if (!var && is(c, "align")) {
            next(c);
            expect(c, "(");
            int64_t a = number(c);
            expect(c, ")");
            if (a < 1 || a > 64 || (a & (a - 1))) fail(c, "bad struct align %lld", (long long)a);
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
            ty_t *t = lookup(c, tname);
            if (!t) fail(c, "unknown type '%s'", tname);
            return t;
        }
        ty_t *base = NULL;
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
                if (!base) fail(c, "unknown enum base type '%s'", words);
            }
        } else {
            base = lookup(c, "int");
            if (!base) fail(c, "enum without a base type");
        }
        if (base->kind != HL_CTF_INT) fail(c, "enum over a non-integer");
        ty_t *t = amalloc(c, sizeof *t);
        *t = *base;
        t->nmap = 0;
        t->map = NULL;
        expect(c, "{");
        int64_t nextv = 0;
        while (!is(c, "}")) {
            if (c->tk != TK_ID && c->tk != TK_STR) fail(c, "bad enumerator '%s'", c->tok);
            char *label = astrdup(c, c->tok);
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
            if (hi < lo) fail(c, "enumerator '%s': empty range", label);
            nextv = hi == INT64_MAX ? hi : hi + 1;
            tmap_t *nm = amalloc(c, (t->nmap + 1) * sizeof *nm);
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
        ty_t *t = lookup(c, words);
        if (!t) fail(c, "unknown type '%s'", words);
        return t;
    }
    fail(c, "expected a type, found '%s'", c->tok);
}

/* ---- blocks ------------------------------------------------------------------------ */

/* `a.b.c` into buf. */
static void lhs(ctx_t *c, char *buf, size_t len)
{
    size_t l = 0;
    buf[0] = 0;
    for (;;) {
        if (c->tk != TK_ID) fail(c, "expected a name, found '%s'", c->tok);
        size_t k = strlen(c->tok);
        if (l + k + 2 >= len) fail(c, "name too long");
        memcpy(buf + l, c->tok, k);
        l += k;
        buf[l] = 0;
        next(c);
        if (!is(c, ".")) break;
        buf[l++] = '.';
        next(c);
    }
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

static void block_trace(ctx_t *c)
{
    expect(c, "{");
    while (!is(c, "}")) {
        char key[128];
        lhs(c, key, sizeof key);
        if (is(c, ":=")) {
            next(c);
            ty_t *t = type_spec(c);
            if (strcmp(key, "packet.header")) fail(c, "trace %s not supported", key);
            c->ph = t;
        } else {
            expect(c, "=");
            if (!strcmp(key, "uuid")) {
                if (c->tk != TK_STR || parse_uuid(c->tok, c->m->uuid) != 0)
                    fail(c, "bad trace uuid");
                c->m->has_uuid = 1;
                next(c);
            } else if (!strcmp(key, "byte_order")) {
                if (strcmp(c->tok, "le")) fail(c, "trace byte_order %s not supported", c->tok);
                next(c);
            } else if (!strcmp(key, "major")) {
                if (number(c) != 1) fail(c, "CTF major version other than 1");
            } else if (!strcmp(key, "minor")) {
                number(c);
            } else {
                fail(c, "trace attribute '%s' not supported", key);
            }
        }
        expect(c, ";");
    }
    next(c);
}

static void block_clock(ctx_t *c)
{
    if (++c->nclock > 1) fail(c, "more than one clock");
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
            if (f <= 0) fail(c, "bad clock frequency");
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

static void block_stream(ctx_t *c)
{
    if (c->nst == sizeof c->st / sizeof c->st[0]) fail(c, "too many stream classes");
    size_t i = c->nst++;
    expect(c, "{");
    while (!is(c, "}")) {
        char key[128];
        lhs(c, key, sizeof key);
        if (is(c, ":=")) {
            next(c);
            ty_t *t = type_spec(c);
            if (!strcmp(key, "packet.context"))
                c->st[i].pc = t;
            else if (!strcmp(key, "event.header"))
                c->st[i].eh = t;
            else if (!strcmp(key, "event.context"))
                c->st[i].ec = t;
            else
                fail(c, "stream %s not supported", key);
        } else {
            expect(c, "=");
            if (strcmp(key, "id")) fail(c, "stream attribute '%s' not supported", key);
            int64_t id = number(c);
            if (id < 0) fail(c, "bad stream id");
            c->st[i].id = (uint64_t)id;
            c->st[i].has_id = 1;
        }
        expect(c, ";");
    }
    next(c);
}

static void block_event(ctx_t *c)
{
    if (c->nev == c->capev) {
        size_t cap = c->capev ? c->capev * 2 : 64;
        struct ev_s *ne = amalloc(c, cap * sizeof *ne);
        if (c->nev) memcpy(ne, c->ev, c->nev * sizeof *ne);
        c->ev = ne;
        c->capev = cap;
    }
    struct ev_s *e = &c->ev[c->nev++];
    memset(e, 0, sizeof *e);
    int has_id = 0;
    expect(c, "{");
    while (!is(c, "}")) {
        char key[128];
        lhs(c, key, sizeof key);
        if (is(c, ":=")) {
            next(c);
            ty_t *t = type_spec(c);
            if (!strcmp(key, "fields"))
                e->fields = t;
            else if (!strcmp(key, "context"))
                e->ctx = t;
            else
                fail(c, "event %s not supported", key);
        } else {
            expect(c, "=");
            if (!strcmp(key, "name")) {
                if (c->tk != TK_STR && c->tk != TK_ID) fail(c, "bad event name");
                e->name = astrdup(c, c->tok);
                next(c);
            } else if (!strcmp(key, "id")) {
                int64_t v = number(c);
                if (v < 0) fail(c, "bad event id");
                e->id = (uint64_t)v;
                has_id = 1;
            } else if (!strcmp(key, "stream_id")) {
                int64_t v = number(c);
                if (v < 0) fail(c, "bad event stream_id");
                e->stream_id = (uint64_t)v;
                e->has_stream = 1;
            } else if (!strcmp(key, "loglevel")) {
                number(c);
            } else if (!strcmp(key, "model.emf.uri")) {
                next(c);
            } else {
                fail(c, "event attribute '%s' not supported", key);
            }
        }
        expect(c, ";");
    }
    next(c);
    if (!has_id || !e->name) fail(c, "event without id or name");
}

static void top(ctx_t *c)
{
    next(c);
    while (c->tk != TK_EOF) {
        if (is(c, "typealias")) {
            next(c);
            ty_t *t = type_spec(c);
            expect(c, ":=");
            char words[256] = "";
            while (c->tk == TK_ID) {
                add_word(c, words, sizeof words, c->tok);
                next(c);
            }
            if (!words[0]) fail(c, "typealias without a name");
            define(c, words, t);
        } else if (is(c, "typedef")) {
            next(c);
            ty_t *t = type_spec(c);
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
            fail(c, "'%s' not supported", c->tok);
        }
        expect(c, ";");
    }
}

/* ---- instantiation: nodes with slots ------------------------------------------------ */

typedef struct inst_s {
    ctx_t *c;
    uint32_t nslots;
} inst_t;

static int type_align(const ty_t *t)
{
    switch (t->kind) {
    case HL_CTF_STRUCT: {
        unsigned a = t->align;
        for (size_t i = 0; i < t->nf; i++) {
            unsigned b = (unsigned)type_align(t->f[i].t);
            if (b > a) a = b;
        }
        return (int)a;
    }
    case HL_CTF_VARIANT:
        return 1; /* the selected option aligns itself */
    case HL_CTF_ARRAY:
    case HL_CTF_SEQ:
        return type_align(t->elem);
    default:
        return (int)t->align;
    }
}

static void instantiate(inst_t *in, hl_ctf_node_t *n, const ty_t *t, const char *name,
                        const hl_ctf_node_t *scope, int depth);

/* Slot of the member called name among the already instantiated members of st. */
static uint32_t find_ref(const hl_ctf_node_t *st, uint32_t upto, const char *name)
{
    for (uint32_t i = upto; i-- > 0;)
        if (st->child[i].name && !strcmp(st->child[i].name, name)) return i;
    return HL_CTF_NOSLOT;
}

static void instantiate(inst_t *in, hl_ctf_node_t *n, const ty_t *t, const char *name,
                        const hl_ctf_node_t *scope, int depth)
{
    ctx_t *c = in->c;
    if (depth > 32) fail(c, "types nested too deeply");
    memset(n, 0, sizeof *n);
    n->kind = (uint8_t)t->kind;
    n->name = name;
    n->slot = in->nslots++;
    n->align = (uint16_t)type_align(t);
    n->ref = HL_CTF_NOSLOT;
    switch (t->kind) {
    case HL_CTF_INT:
    case HL_CTF_FLOAT:
        n->size = (uint16_t)t->size;
        n->is_signed = (uint8_t)t->sgn;
        n->clock = (uint8_t)t->clock;
        break;
    case HL_CTF_STRING:
        break;
    case HL_CTF_STRUCT:
        n->nchild = (uint32_t)t->nf;
        n->child = t->nf ? amalloc(c, t->nf * sizeof *n->child) : NULL;
        for (size_t i = 0; i < t->nf; i++) {
            n->nchild = (uint32_t)i; /* find_ref sees only earlier members */
            instantiate(in, &n->child[i], t->f[i].t, t->f[i].name, n, depth + 1);
        }
        n->nchild = (uint32_t)t->nf;
        break;
    case HL_CTF_VARIANT: {
        if (!t->tag || !scope) fail(c, "variant without a tag in its struct");
        uint32_t k = find_ref(scope, scope->nchild, t->tag);
        if (k == HL_CTF_NOSLOT) fail(c, "variant tag '%s' not found", t->tag);
        const hl_ctf_node_t *tagn = &scope->child[k];
        if (tagn->kind != HL_CTF_INT) fail(c, "variant tag '%s' is not an enum", t->tag);
        n->ref = tagn->slot;
        n->nchild = (uint32_t)t->nf;
        n->child = t->nf ? amalloc(c, t->nf * sizeof *n->child) : NULL;
        for (size_t i = 0; i < t->nf; i++)
            instantiate(in, &n->child[i], t->f[i].t, t->f[i].name, scope, depth + 1);
        /* The tag's enum type: find it back from the scope's struct type is not possible
         * here (nodes only), so the ranges were stashed on the tag node at its creation. */
        const ty_t *tagt = (const ty_t *)tagn->range;
        if (!tagt) fail(c, "variant tag '%s' is not an enum", t->tag);
        n->range = amalloc(c, (tagt->nmap ? tagt->nmap : 1) * sizeof *n->range);
        for (size_t m = 0; m < tagt->nmap; m++) {
            uint32_t opt = HL_CTF_NOSLOT;
            for (size_t i = 0; i < t->nf; i++)
                if (!strcmp(t->f[i].name, tagt->map[m].label)) opt = (uint32_t)i;
            if (opt == HL_CTF_NOSLOT) continue; /* a label without option: no option */
            n->range[n->nrange].lo = tagt->map[m].lo;
            n->range[n->nrange].hi = tagt->map[m].hi;
            n->range[n->nrange].child = opt;
            n->nrange++;
        }
        break;
    }
    case HL_CTF_ARRAY:
    case HL_CTF_SEQ: {
        const ty_t *e = t->elem;
        if (e->kind != HL_CTF_INT ||
            (e->size != 8 && e->size != 16 && e->size != 32 && e->size != 64) || e->align % 8 ||
            e->align > e->size)
            fail(c, "array '%s' of other than byte-aligned 8/16/32/64-bit integers", name);
        n->size = (uint16_t)(e->size / 8);
        n->is_signed = (uint8_t)e->sgn;
        n->text = (uint8_t)(e->text && e->size == 8);
        n->len = t->len;
        if (t->kind == HL_CTF_SEQ) {
            if (!scope) fail(c, "sequence without its struct");
            uint32_t k = find_ref(scope, scope->nchild, t->lenref);
            if (k == HL_CTF_NOSLOT) fail(c, "sequence length '%s' not found", t->lenref);
            if (scope->child[k].kind != HL_CTF_INT)
                fail(c, "sequence length '%s' is not an integer", t->lenref);
            n->ref = scope->child[k].slot;
        }
        break;
    }
    default:
        fail(c, "unknown type");
    }
    /* An enum remembers its type for a variant that it tags (see above). */
    if (t->kind == HL_CTF_INT && t->nmap) n->range = (hl_ctf_range_t *)(uintptr_t)t;
}

static void scope_of(ctx_t *c, hl_ctf_scope_t *sc, const ty_t *t, const char *what)
{
    sc->root = NULL;
    sc->nslots = 0;
    if (!t) return;
    if (t->kind != HL_CTF_STRUCT) fail(c, "%s is not a struct", what);
    inst_t in = {c, 0};
    sc->root = amalloc(c, sizeof *sc->root);
    instantiate(&in, sc->root, t, NULL, NULL, 0);
    sc->nslots = in.nslots;
    if (sc->nslots > 4096) fail(c, "%s has too many fields", what);
}

/* Enum nodes carry their type in `range` during instantiation; clear that afterwards so
 * that only variants have ranges. */
static void clear_enum_stash(hl_ctf_node_t *n)
{
    if (!n) return;
    if (n->kind == HL_CTF_INT) {
        n->range = NULL;
        n->nrange = 0;
    }
    for (uint32_t i = 0; i < n->nchild; i++)
        clear_enum_stash(&n->child[i]);
}

static uint32_t member_slot(const hl_ctf_scope_t *sc, const char *name, int kind)
{
    const hl_ctf_node_t *n = hl_ctf_member(sc->root, name);
    return n && n->kind == kind ? n->slot : HL_CTF_NOSLOT;
}

/* Event header slots named id (any depth, decoding order). */
static void header_ids(hl_ctf_stream_class_t *s, const hl_ctf_node_t *n)
{
    if (n->kind == HL_CTF_INT && n->name && !strcmp(n->name, "id") && s->nid < 4)
        s->id_slot[s->nid++] = n->slot;
    for (uint32_t i = 0; i < n->nchild; i++)
        header_ids(s, &n->child[i]);
}

static void build(ctx_t *c)
{
    hl_ctf_meta_t *m = c->m;
    if (!m->clock_freq) m->clock_freq = 1000000000;
    scope_of(c, &m->packet_header, c->ph, "packet.header");
    clear_enum_stash(m->packet_header.root);
    m->ph_magic = member_slot(&m->packet_header, "magic", HL_CTF_INT);
    m->ph_stream_id = member_slot(&m->packet_header, "stream_id", HL_CTF_INT);
    m->ph_instance_id = member_slot(&m->packet_header, "stream_instance_id", HL_CTF_INT);
    m->ph_uuid = member_slot(&m->packet_header, "uuid", HL_CTF_ARRAY);
    if (!c->nst) fail(c, "no stream class");
    m->streams = amalloc(c, c->nst * sizeof *m->streams);
    m->nstreams = c->nst;
    for (size_t i = 0; i < c->nst; i++) {
        if (!c->st[i].has_id && c->nst > 1) fail(c, "stream class without id");
        for (size_t j = 0; j < i; j++)
            if (c->st[j].id == c->st[i].id)
                fail(c, "two stream classes with id %llu", (unsigned long long)c->st[i].id);
        hl_ctf_stream_class_t *s = amalloc(c, sizeof *s);
        s->id = c->st[i].id;
        scope_of(c, &s->packet_context, c->st[i].pc, "packet.context");
        scope_of(c, &s->event_header, c->st[i].eh, "event.header");
        scope_of(c, &s->event_context, c->st[i].ec, "event.context");
        if (s->event_header.root) header_ids(s, s->event_header.root);
        clear_enum_stash(s->packet_context.root);
        clear_enum_stash(s->event_header.root);
        clear_enum_stash(s->event_context.root);
        s->pc_content_size = member_slot(&s->packet_context, "content_size", HL_CTF_INT);
        s->pc_packet_size = member_slot(&s->packet_context, "packet_size", HL_CTF_INT);
        s->pc_ts_begin = member_slot(&s->packet_context, "timestamp_begin", HL_CTF_INT);
        s->pc_ts_end = member_slot(&s->packet_context, "timestamp_end", HL_CTF_INT);
        s->pc_discarded = member_slot(&s->packet_context, "events_discarded", HL_CTF_INT);
        m->streams[i] = s;
    }
    m->events = amalloc(c, (c->nev ? c->nev : 1) * sizeof *m->events);
    for (size_t i = 0; i < c->nev; i++) {
        struct ev_s *e = &c->ev[i];
        if (!e->has_stream && c->nst > 1) fail(c, "event '%s' without stream_id", e->name);
        hl_ctf_stream_class_t *s = NULL;
        for (size_t k = 0; k < m->nstreams; k++)
            if (!e->has_stream || m->streams[k]->id == e->stream_id) s = m->streams[k];
        if (!s)
            fail(c, "event '%s': no stream class %llu", e->name, (unsigned long long)e->stream_id);
        if (e->id > 1000000) fail(c, "event id %llu too large", (unsigned long long)e->id);
        hl_ctf_event_class_t *ec = amalloc(c, sizeof *ec);
        ec->index = (uint32_t)m->nevents;
        ec->id = e->id;
        ec->stream_id = s->id;
        ec->name = e->name;
        scope_of(c, &ec->context, e->ctx, "event context");
        scope_of(c, &ec->payload, e->fields, "event fields");
        clear_enum_stash(ec->context.root);
        clear_enum_stash(ec->payload.root);
        if (ec->id >= s->nevents) {
            uint64_t nn = ec->id + 1 > s->nevents * 2 ? ec->id + 1 : s->nevents * 2;
            hl_ctf_event_class_t **ne = amalloc(c, nn * sizeof *ne);
            if (s->nevents) memcpy(ne, s->events, s->nevents * sizeof *ne);
            s->events = ne;
            s->nevents = nn;
        }
        if (s->events[ec->id])
            fail(c, "two event classes with id %llu in stream class %llu",
                 (unsigned long long)ec->id, (unsigned long long)s->id);
        s->events[ec->id] = ec;
        m->events[m->nevents++] = ec;
    }
}

hl_ctf_meta_t *hl_ctf_meta_parse(const char *text, size_t len, char *err, size_t errlen)
{
    ctx_t *c = calloc(1, sizeof *c);
    hl_ctf_meta_t *volatile m = calloc(1, sizeof *m);
    if (!c || !m) {
        free(c);
        free(m);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    c->s = text;
    c->n = len;
    c->err = err;
    c->errlen = errlen;
    c->m = m;
    snprintf(c->clock_name, sizeof c->clock_name, "monotonic");
    if (setjmp(c->jb)) {
        for (ablk_t *b = c->arena; b;) {
            ablk_t *nb = b->next;
            free(b);
            b = nb;
        }
        free(c);
        free(m);
        return NULL;
    }
    top(c);
    build(c);
    m->arena = c->arena;
    free(c);
    return m;
}

void hl_ctf_meta_free(hl_ctf_meta_t *m)
{
    if (!m) return;
    for (ablk_t *b = m->arena; b;) {
        ablk_t *nb = b->next;
        free(b);
        b = nb;
    }
    free(m);
}

/* ---- the metadata file ------------------------------------------------------------- */

#define META_MAGIC 0x75d11d57u

char *hl_ctf_meta_text(const uint8_t *buf, size_t n, size_t *len, char *err, size_t errlen)
{
    uint32_t magic = 0;
    if (n >= 4) memcpy(&magic, buf, 4);
    char *out = NULL;
    size_t ol = 0;
    if (magic != META_MAGIC) {
        if (n < 8 || memcmp(buf, "/* CTF 1", 8)) {
            snprintf(err, errlen, "metadata: neither packetized nor text CTF metadata");
            return NULL;
        }
        out = malloc(n + 1);
        if (!out) {
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        memcpy(out, buf, n);
        ol = n;
    } else {
        out = malloc(n + 1);
        if (!out) {
            snprintf(err, errlen, "out of memory");
            return NULL;
        }
        size_t off = 0;
        while (off < n) {
            /* magic, uuid[16], checksum, content_size, packet_size (bits), compression,
             * encryption, checksum scheme, major, minor: 37 bytes */
            uint32_t mg, content, packet;
            if (n - off < 37) goto bad;
            memcpy(&mg, buf + off, 4);
            memcpy(&content, buf + off + 24, 4);
            memcpy(&packet, buf + off + 28, 4);
            if (mg != META_MAGIC || content % 8 || packet % 8 || content < 37 * 8 ||
                content > packet || packet / 8 > n - off || buf[off + 32] || buf[off + 33] ||
                buf[off + 34])
                goto bad;
            size_t tl = content / 8 - 37;
            memcpy(out + ol, buf + off + 37, tl);
            ol += tl;
            off += packet / 8;
        }
    }
    out[ol] = 0;
    if (strlen(out) != ol) { /* NUL bytes inside the text */
        free(out);
        snprintf(err, errlen, "metadata: NUL bytes in the text");
        return NULL;
    }
    *len = ol;
    return out;
bad:
    free(out);
    snprintf(err, errlen, "metadata: bad packet header");
    return NULL;
}

hl_ctf_meta_t *hl_ctf_meta_load(const char *dir, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/metadata", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return NULL;
    }
    if (sb.st_size > 64 << 20) {
        close(fd);
        snprintf(err, errlen, "%s: larger than 64 MiB", path);
        return NULL;
    }
    size_t n = (size_t)sb.st_size;
    uint8_t *buf = malloc(n ? n : 1);
    size_t got = 0;
    while (buf && got < n) {
        ssize_t k = read(fd, buf + got, n - got);
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd);
    if (!buf || got != n) {
        free(buf);
        snprintf(err, errlen, "%s: cannot read", path);
        return NULL;
    }
    size_t tl = 0;
    char *text = hl_ctf_meta_text(buf, n, &tl, err, errlen);
    free(buf);
    if (!text) return NULL;
    hl_ctf_meta_t *m = hl_ctf_meta_parse(text, tl, err, errlen);
    free(text);
    return m;
}

/* ---- lookups ----------------------------------------------------------------------- */

const hl_ctf_stream_class_t *hl_ctf_meta_stream(const hl_ctf_meta_t *m, uint64_t id)
{
    for (size_t i = 0; i < m->nstreams; i++)
        if (m->streams[i]->id == id) return m->streams[i];
    return NULL;
}

const hl_ctf_node_t *hl_ctf_member(const hl_ctf_node_t *st, const char *name)
{
    if (!st || st->kind != HL_CTF_STRUCT) return NULL;
    for (uint32_t i = 0; i < st->nchild; i++) {
        const char *n = st->child[i].name;
        if (n && n[0] == '_') n++;
        if (n && !strcmp(n, name)) return &st->child[i];
    }
    return NULL;
}

int hl_ctf_ns_from_origin(const hl_ctf_meta_t *m, uint64_t value, int64_t *ns)
{
    __int128 v = (__int128)m->clock_offset_s * 1000000000;
    if (m->clock_freq == 1000000000) {
        v += (__int128)m->clock_offset + value;
    } else {
        v += (__int128)m->clock_offset * 1000000000 / m->clock_freq;
        v += (__int128)value * 1000000000 / m->clock_freq;
    }
    if (v > INT64_MAX || v < INT64_MIN) return -1;
    *ns = (int64_t)v;
    return 0;
}
