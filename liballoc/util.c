/* liballoc/util.c — allocation-free output and fatal errors. Safe on allocator paths. */
#include "internal.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void hl_out_init(hl_out_t *o, int fd)
{
    o->fd = fd;
    o->len = 0;
}

void hl_out_flush(hl_out_t *o)
{
    size_t off = 0;
    while (off < o->len) {
        ssize_t w = write(o->fd, o->buf + off, o->len - off);
        if (w <= 0) break;
        off += (size_t)w;
    }
    o->len = 0;
}

static void out_bytes(hl_out_t *o, const char *s, size_t n)
{
    while (n) {
        if (o->len == sizeof o->buf) hl_out_flush(o);
        size_t k = sizeof o->buf - o->len;
        if (k > n) k = n;
        memcpy(o->buf + o->len, s, k);
        o->len += k;
        s += k;
        n -= k;
    }
}

void hl_out_str(hl_out_t *o, const char *s)
{
    out_bytes(o, s, strlen(s));
}

void hl_out_u64w(hl_out_t *o, uint64_t v, int width)
{
    char tmp[24];
    int i = (int)sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int pad = width - ((int)sizeof tmp - i); pad > 0; pad--)
        out_bytes(o, " ", 1);
    out_bytes(o, tmp + i, sizeof tmp - (size_t)i);
}

void hl_out_u64(hl_out_t *o, uint64_t v)
{
    hl_out_u64w(o, v, 0);
}

void hl_out_hex(hl_out_t *o, uint64_t v)
{
    char tmp[18];
    int i = (int)sizeof tmp;
    do {
        tmp[--i] = "0123456789abcdef"[v & 15];
        v >>= 4;
    } while (v);
    tmp[--i] = 'x';
    tmp[--i] = '0';
    out_bytes(o, tmp + i, sizeof tmp - (size_t)i);
}

void hl_out_size(hl_out_t *o, uint64_t b)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    unsigned u = 0;
    uint64_t whole = b, frac = 0;
    while (whole >= 1024 && u < 4) {
        frac = (whole % 1024) * 10 / 1024;
        whole /= 1024;
        u++;
    }
    hl_out_u64(o, whole);
    if (u) {
        out_bytes(o, ".", 1);
        hl_out_u64(o, frac);
    }
    out_bytes(o, " ", 1);
    hl_out_str(o, units[u]);
}

size_t hl_check_fail(int verbose, const char *module, const char *what, const void *where)
{
    if (verbose) {
        hl_out_t o;
        hl_out_init(&o, 2);
        hl_out_str(&o, "heapledger: ");
        hl_out_str(&o, module);
        hl_out_str(&o, " check: ");
        hl_out_str(&o, what);
        hl_out_str(&o, " at ");
        hl_out_hex(&o, (uintptr_t)where);
        hl_out_str(&o, "\n");
        hl_out_flush(&o);
    }
    return 1;
}

void hl_warn(const char *msg, const char *arg)
{
    hl_out_t o;
    hl_out_init(&o, 2);
    hl_out_str(&o, "heapledger: ");
    hl_out_str(&o, msg);
    if (arg) {
        hl_out_str(&o, ": ");
        hl_out_str(&o, arg);
    }
    hl_out_str(&o, "\n");
    hl_out_flush(&o);
}

void hl_fatal(const char *kind, const void *addr, const char *details)
{
    hl_out_t o;
    hl_out_init(&o, 2);
    hl_out_str(&o, "heapledger: ERROR: ");
    hl_out_str(&o, kind);
    if (addr) {
        hl_out_str(&o, " on ");
        hl_out_hex(&o, (uintptr_t)addr);
    }
    if (details) {
        hl_out_str(&o, ": ");
        hl_out_str(&o, details);
    }
    hl_out_str(&o, "\n");
    hl_out_flush(&o);
    hl_trace_emit_error(kind, addr, details ? details : "");
    abort();
}

void hl_text_str(hl_text_t *t, const char *s)
{
    while (*s && t->n + 1 < sizeof t->s)
        t->s[t->n++] = *s++;
    t->s[t->n] = 0;
}

void hl_text_num(hl_text_t *t, uint64_t v, int hex)
{
    char b[24];
    int i = (int)sizeof b;
    b[--i] = 0;
    do {
        b[--i] = "0123456789abcdef"[hex ? v & 15 : v % 10];
        v = hex ? v >> 4 : v / 10;
    } while (v);
    if (hex) hl_text_str(t, "0x");
    hl_text_str(t, b + i);
}

uint64_t hl_parse_hex(const char **s)
{
    uint64_t v = 0;
    for (;; (*s)++) {
        char c = **s;
        unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                                            : 16u;
        if (d == 16) return v;
        v = v * 16 + d;
    }
}
