/* analyzer/safetext.c — see safetext.h. */
#include "safetext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t hl_utf8_decode(const unsigned char *p, uint32_t *cp)
{
    unsigned c = p[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t n;
    uint32_t v, lo = 0x80, hi = 0xbf; /* the range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        v = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        v = c & 0x0f;
        if (c == 0xe0) lo = 0xa0; /* overlong */
        if (c == 0xed) hi = 0x9f; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        v = c & 0x07;
        if (c == 0xf0) lo = 0x90; /* overlong */
        if (c == 0xf4) hi = 0x8f; /* beyond U+10FFFF */
    } else {
        return 0; /* a continuation byte, 0xc0/0xc1 (overlong) or 0xf5-0xff */
    }
    for (size_t i = 1; i < n; i++) {
        unsigned b = p[i]; /* the NUL terminator fails the test: no read past it */
        if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xbf)) return 0;
        v = v << 6 | (b & 0x3f);
    }
    *cp = v;
    return n;
}

int hl_is_bidi_control(uint32_t cp)
{
    return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

/* Bytes of the escape for the sequence at p (length *n), 0 when it prints as it is. */
static size_t escape_one(const unsigned char *p, size_t *n, char out[8])
{
    uint32_t cp;
    size_t k = hl_utf8_decode(p, &cp);
    if (!k) {
        *n = 1;
        return (size_t)snprintf(out, 8, "\\x%02x", p[0]);
    }
    *n = k;
    if (cp == '\\') return (size_t)snprintf(out, 8, "\\\\");
    if (cp == '\t') return (size_t)snprintf(out, 8, "\\t");
    if (cp == '\n') return (size_t)snprintf(out, 8, "\\n");
    if (cp == '\r') return (size_t)snprintf(out, 8, "\\r");
    if (cp < 0x20 || cp == 0x7f) return (size_t)snprintf(out, 8, "\\x%02x", (unsigned)cp);
    if ((cp >= 0x80 && cp <= 0x9f) || hl_is_bidi_control(cp))
        return (size_t)snprintf(out, 8, "\\u%04x", (unsigned)cp);
    return 0;
}

static __thread struct {
    char *buf;
    size_t cap;
} slot[HL_SAFE_SLOTS];
static __thread unsigned next_slot;

const char *hl_safe(const char *s)
{
    if (!s) return s;
    const unsigned char *p = (const unsigned char *)s;
    size_t n;
    char e[8];
    /* Most names need nothing: find the first byte that does, copy only then. */
    while (*p && !escape_one(p, &n, e))
        p += n;
    if (!*p) return s;
    /* At most 4 output bytes per input byte (\xHH). */
    size_t need = strlen(s) * 4 + 1;
    unsigned i = next_slot++ % HL_SAFE_SLOTS;
    if (slot[i].cap < need) {
        char *b = realloc(slot[i].buf, need);
        if (!b) abort();
        slot[i].buf = b;
        slot[i].cap = need;
    }
    char *out = slot[i].buf;
    size_t len = (size_t)(p - (const unsigned char *)s);
    memcpy(out, s, len);
    while (*p) {
        size_t k = escape_one(p, &n, e);
        if (k) {
            memcpy(out + len, e, k);
            len += k;
        } else {
            memcpy(out + len, p, n);
            len += n;
        }
        p += n;
    }
    out[len] = 0;
    return out;
}
