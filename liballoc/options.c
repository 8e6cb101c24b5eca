/* liballoc/options.c — the one options table (STYLE.md habit 10).
 *
 * Every option is a row: name, kind, field, default, one-line doc. docs/options.md mirrors
 * this table. The preloaded library reads HEAPLEDGER_OPTIONS once, at the default heap's
 * initialisation, from /proc/self/environ (raw syscalls: no getenv, no allocation), falling
 * back to `environ`; an unknown or malformed item is reported once and ignored. Messages say
 * what is valid: the closest name for an unknown one, the valid values for a bad value.
 */
#include "internal.h"
#include "harden.h" /* harden=1 and guard=… expand into several fields */
#include "suggest.h"

#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef enum {
    OPT_SIZE,
    OPT_POW2,
    OPT_UINT,
    OPT_BOOL,
    OPT_HARDEN,
    OPT_GUARD,
    OPT_UNWIND
} opt_kind_t;

typedef struct opt_s {
    const char *name; /* first: hl_suggest() reads the table as a list of names */
    opt_kind_t kind;
    size_t offset;
    uint64_t def;
    uint64_t lo, hi;    /* a value other than 0 must lie in [lo, hi] (hi 0: no bound) */
    const char *values; /* the valid values, for the message about a bad one */
    const char *doc;
} opt_t;

#define F(field) offsetof(hl_options_t, field)
#define BOOL     "0 or 1"

static const opt_t table[] = {
    {"arena", OPT_SIZE, F(arena_size), 0, 4096, 0,
     "0 (off) or a size of at least 4K that holds 4 slabs, e.g. 64K, 4M",
     "fixed arena of SIZE bytes: every tier carves from it, exhaustion returns NULL (ENOMEM)"},
    {"mid_max", OPT_SIZE, F(mid_max), HL_DEFAULT_MID_MAX, 0, 0, "a size, e.g. 128K, 1M",
     "largest request served by TLSF; above it, one mapping per block"},
    {"tiny_max", OPT_SIZE, F(tiny_max), HL_TINY_MAX, 0, HL_TINY_MAX, "a size from 0 to 4096",
     "largest request served by the tiny tier (at most 4096)"},
    {"slab", OPT_POW2, F(slab_size), 0, 1024, 1u << 20,
     "0 (the default) or a power of two from 1K to 1M: 1K, 2K, 4K, … 512K, 1M",
     "tiny slab size, power of two (0 = 64K, or 4K in arena mode)"},
    {"arenas", OPT_UINT, F(arenas), 0, 0, HL_MAX_ARENAS, "0 (2 per CPU) to 16",
     "TLSF arenas threads spread over (0 = 2 per CPU, max 16)"},
    {"tcache", OPT_UINT, F(tcache), 1, 0, 0, "a number (0 disables the cache)",
     "thread-cache capacity multiplier, 0 disables the cache"},
    {"tiny", OPT_BOOL, F(tiny), 2, 0, 0, BOOL,
     "tiny tier: 1 on, 0 off (TLSF serves small requests too); default on, off in arena mode"},
    {"trim_keep", OPT_UINT, F(trim_keep), 4, 0, 0, "a number",
     "empty slabs kept before their pages go back to the OS"},
    {"decay", OPT_UINT, F(decay_ms), HL_DEFAULT_DECAY_MS, 0, 0,
     "a number of milliseconds (0 = off)",
     "ms a freed large mapping or an empty TLSF pool is kept for reuse (0: released at once)"},
    {"stats", OPT_BOOL, F(stats), 0, 0, 0, BOOL,
     "print per-tier, per-class and per-path counters at exit"},
    {"stacks", OPT_UINT, F(stacks), 16, 0, 0, "a number of frames (0 = none)",
     "call-stack depth for tracing and error reports"},
    {"unwind", OPT_UNWIND, F(unwind), 0, 0, 2, "fast, libunwind or check",
     "stack walker: fast (heapledger's own, libunwind where it cannot), libunwind, or check "
     "(both, abort at the first difference)"},
    /* Hardened mode (harden.c, docs/hardening.md). */
    {"harden", OPT_HARDEN, F(harden), 0, 0, 0, "0, 1 or full",
     "1: every check (check_free, canary, poison, quarantine=auto, guard=sample:1000); full: the "
     "same with guard=all (every block on its own guarded page run)"},
    {"check_free", OPT_BOOL, F(check_free), 0, 0, 0, BOOL,
     "exact validation of free/realloc/usable_size"},
    {"canary", OPT_BOOL, F(canary), 0, 0, 0, BOOL,
     "canary after the requested size, checked on free"},
    {"poison", OPT_BOOL, F(poison), 0, 0, 0, BOOL,
     "fill freed blocks, verify when they are reused"},
    {"quarantine", OPT_SIZE, F(quarantine), 0, 0, 0, "a size, e.g. 1M, or auto",
     "bytes of freed blocks held back (FIFO)"},
    {"guard", OPT_GUARD, F(guard), 0, 0, 0, "none, large, all or sample:N (N > 0)",
     "guard pages: large (1), all (2), sample:N (3)"},
    {"zero_on_free", OPT_BOOL, F(zero_on_free), 0, 0, 0, BOOL,
     "clear blocks when they are released"},
    {"rotate", OPT_BOOL, F(rotate), 0, 0, 0, BOOL,
     "two TLSF free stores: frees reused as late as possible"},
    {"abort_on_error", OPT_BOOL, F(abort_on_error), 1, 0, 0, BOOL,
     "abort after a heap error report"},
    {"check_at_exit", OPT_BOOL, F(check_at_exit), 0, 0, 0, BOOL, "full heap check at exit"},
    {"leaks", OPT_UINT, F(leaks), 2, 0, 2,
     "0 (off), 1 (scan and print a summary) or 2 (scan when recorded)",
     "leak scan at exit: classify live blocks as definitely/indirectly lost or still reachable"},
};

_Static_assert(sizeof(hl_options_t) == 128, "hl_options_t keeps its size (reserved slots)");

#define NOPTS (sizeof table / sizeof table[0])

static void set_field(hl_options_t *o, const opt_t *d, uint64_t v)
{
    char *f = (char *)o + d->offset;
    if (d->kind == OPT_SIZE || d->kind == OPT_POW2)
        *(size_t *)f = (size_t)v;
    else if (d->kind == OPT_HARDEN) {
        hl_harden_set_all(o, v != 0);
        if (v == 2) o->guard = 2; /* harden=full: guard=all */
    } else
        *(uint32_t *)f = (uint32_t)v;
}

static uint64_t get_field(const hl_options_t *o, const opt_t *d)
{
    const char *f = (const char *)o + d->offset;
    return d->kind == OPT_SIZE || d->kind == OPT_POW2 ? *(const size_t *)f : *(const uint32_t *)f;
}

void hl_options_default(hl_options_t *o)
{
    memset(o, 0, sizeof *o);
    for (size_t i = 0; i < NOPTS; i++)
        set_field(o, &table[i], table[i].def);
}

/* Parse an unsigned number with an optional K/M/G suffix (binary units, optional "iB"/"B"). */
static int parse_number(const char *s, size_t len, int allow_suffix, uint64_t *out)
{
    uint64_t v = 0;
    size_t i = 0;
    if (!len) return -1;
    for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
        if (v > (UINT64_MAX - 9) / 10) return -1;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (!i) return -1;
    if (i < len) {
        if (!allow_suffix) return -1;
        unsigned shift;
        switch (s[i] | 0x20) {
        case 'k':
            shift = 10;
            break;
        case 'm':
            shift = 20;
            break;
        case 'g':
            shift = 30;
            break;
        case 'b':
            shift = 0;
            break;
        default:
            return -1;
        }
        i++;
        if (shift && i < len && (s[i] | 0x20) == 'i') i++;
        if (shift && i < len && (s[i] | 0x20) == 'b') i++;
        if (i != len || v > (UINT64_MAX >> shift)) return -1;
        v <<= shift;
    }
    *out = v;
    return 0;
}

/* Messages are built without stdio or allocation (the allocator's initialisation runs this). */
typedef struct msg_s {
    char *p;
    size_t cap, n;
} msg_t;

static void put(msg_t *m, const char *s, size_t len)
{
    for (size_t i = 0; i < len && m->n + 1 < m->cap; i++)
        m->p[m->n++] = s[i];
    if (m->cap) m->p[m->n] = 0;
}

static void puts_(msg_t *m, const char *s)
{
    put(m, s, strlen(s));
}

static void put_u64(msg_t *m, uint64_t v)
{
    char num[24];
    int k = (int)sizeof num;
    do {
        num[--k] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(m, num + k, sizeof num - (size_t)k);
}

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n';
}

/* The preloaded library's warning: "heapledger: HEAPLEDGER_OPTIONS: ignored: MSG (see
 * docs/options.md)". */
static void env_warn(char *err, size_t errlen)
{
    msg_t m = {err, errlen, strlen(err)};
    puts_(&m, " (see docs/options.md)");
    hl_warn("HEAPLEDGER_OPTIONS: ignored", err);
}

/* "bad value in option 'ITEM' (NAME takes VALUES)" and the like. */
static int bad(char *err, size_t errlen, const char *what, const char *item, size_t len,
               const opt_t *d)
{
    msg_t m = {err, err ? errlen : 0, 0};
    puts_(&m, what);
    puts_(&m, " '");
    put(&m, item, len);
    puts_(&m, "'");
    if (d) {
        puts_(&m, " (");
        puts_(&m, d->name);
        puts_(&m, " takes ");
        puts_(&m, d->values);
        puts_(&m, ")");
    }
    return -1;
}

static int in_range(const opt_t *d, uint64_t v)
{
    if (d->kind == OPT_BOOL) return v <= 1;
    if (d->kind == OPT_HARDEN) return v <= 2; /* 2: harden=full */
    if (d->kind == OPT_UINT && v > UINT32_MAX) return 0;
    if (!v) return 1;
    if (d->kind == OPT_POW2 && (v & (v - 1))) return 0;
    return v >= d->lo && (!d->hi || v <= d->hi);
}

/* One item, "name", "name=value", with spaces allowed around '=' (the caller trimmed the
 * ends). */
static int parse_item(hl_options_t *o, const char *s, size_t len, char *err, size_t errlen)
{
    const char *eq = memchr(s, '=', len);
    size_t nlen = eq ? (size_t)(eq - s) : len;
    while (nlen && is_space(s[nlen - 1]))
        nlen--;
    const char *val = eq ? eq + 1 : NULL;
    size_t vlen = eq ? len - (size_t)(val - s) : 0;
    while (vlen && is_space(*val))
        val++, vlen--;
    for (size_t i = 0; i < NOPTS; i++) {
        const opt_t *d = &table[i];
        if (strlen(d->name) != nlen || memcmp(d->name, s, nlen) != 0) continue;
        uint64_t v = 1;
        if (eq && d->kind == OPT_GUARD) {
            if (hl_harden_parse_guard(o, val, vlen) != 0)
                return bad(err, errlen, "bad value in option", s, len, d);
            return 0;
        }
        if (d->kind == OPT_UNWIND) {
            static const char *const names[] = {"fast", "libunwind", "check"};
            for (uint32_t k = 0; eq && k < 3; k++)
                if (vlen == strlen(names[k]) && memcmp(val, names[k], vlen) == 0) {
                    set_field(o, d, k);
                    return 0;
                }
            return bad(err, errlen, eq ? "bad value in option" : "option needs a value:", s, len,
                       d);
        }
        if (eq && d->offset == F(quarantine) && vlen == 4 && memcmp(val, "auto", 4) == 0) {
            set_field(o, d, HL_QUARANTINE_AUTO);
            return 0;
        }
        if (eq && d->kind == OPT_HARDEN && vlen == 4 && memcmp(val, "full", 4) == 0) {
            set_field(o, d, 2);
            return 0;
        }
        if (eq) {
            if (parse_number(val, vlen, d->kind == OPT_SIZE || d->kind == OPT_POW2, &v) != 0 ||
                !in_range(d, v))
                return bad(err, errlen, "bad value in option", s, len, d);
        } else if (d->kind != OPT_BOOL && d->kind != OPT_HARDEN) {
            return bad(err, errlen, "option needs a value:", s, len, d);
        }
        set_field(o, d, v);
        return 0;
    }
    bad(err, errlen, "unknown option", s, nlen, NULL);
    const char *near = hl_suggest(s, nlen, table, NOPTS, sizeof table[0]);
    if (near && err) {
        msg_t m = {err, errlen, strlen(err)};
        puts_(&m, " (did you mean '");
        puts_(&m, near);
        puts_(&m, "'?)");
    }
    return -1;
}

/* What no single item can say: a fixed arena must hold 4 slabs (heap.c refuses it else). */
static int check_combination(const hl_options_t *o, char *err, size_t errlen)
{
    size_t slab = o->slab_size ? o->slab_size : HL_DEFAULT_ARENA_SLAB;
    if (!o->arena_size || o->arena_size >= 4 * slab) return 0;
    msg_t m = {err, err ? errlen : 0, 0};
    puts_(&m, "arena=");
    put_u64(&m, o->arena_size);
    puts_(&m, " is too small: a fixed arena holds at least 4 slabs (");
    put_u64(&m, 4 * (uint64_t)slab);
    puts_(&m, " bytes with slab=");
    put_u64(&m, slab);
    puts_(&m, ")");
    return -1;
}

/* Parse, reporting every bad item with hl_warn (or stopping at the first one). */
static int parse_all(hl_options_t *o, const char *s, char *err, size_t errlen, int keep_going)
{
    int rc = 0;
    while (s && *s) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        while (len && is_space(*s))
            s++, len--;
        while (len && is_space(s[len - 1]))
            len--;
        if (len && parse_item(o, s, len, err, errlen) != 0) {
            rc = -1;
            if (!keep_going) return -1;
            env_warn(err, errlen);
        }
        s = end ? end + 1 : NULL;
    }
    if (check_combination(o, err, errlen) != 0) {
        rc = -1;
        if (keep_going) env_warn(err, errlen);
    }
    return rc;
}

int hl_options_parse(hl_options_t *o, const char *s, char *err, size_t errlen)
{
    return parse_all(o, s, err, errlen, 0);
}

size_t hl_options_format(const hl_options_t *o, char *buf, size_t len)
{
    size_t n = 0;
    if (len) buf[0] = 0;
    for (size_t i = 0; i < NOPTS; i++) {
        const opt_t *d = &table[i];
        uint64_t v = get_field(o, d), given = v;
        if (v == d->def) continue;
        char num[24];
        int k = (int)sizeof num;
        num[--k] = 0;
        do {
            num[--k] = (char)('0' + v % 10);
            v /= 10;
        } while (v);
        const char *parts[] = {n ? "," : "", d->name, "=", num + k, ""};
        if (d->kind == OPT_UNWIND) parts[3] = given == 1 ? "libunwind" : "check";
        if (d->offset == F(quarantine) && given == HL_QUARANTINE_AUTO) parts[3] = "auto";
        if (d->kind == OPT_GUARD && o->guard == 3) { /* sample:N, as it parses back */
            k = (int)sizeof num;
            num[--k] = 0;
            v = o->guard_sample;
            do {
                num[--k] = (char)('0' + v % 10);
                v /= 10;
            } while (v);
            parts[3] = "sample:";
            parts[4] = num + k;
        }
        for (size_t p = 0; p < 5; p++)
            for (const char *c = parts[p]; *c; c++)
                if (n + 1 < len) buf[n++] = *c;
        if (len) buf[n < len ? n : len - 1] = 0;
    }
    return n;
}

/* ---- environment ------------------------------------------------------------------------- */

static const char key[] = "HEAPLEDGER_OPTIONS=";
static char env_value[1024];

/* Find HEAPLEDGER_OPTIONS in /proc/self/environ without allocating. 1 if found. */
static int env_from_proc(void)
{
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/environ", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buf[4096];
    size_t klen = sizeof key - 1, match = 0, vlen = 0;
    int state = 0; /* 0: matching key at entry start, 1: in value, 2: skipping entry */
    int found = 0;
    ssize_t r;
    while (!found && (r = (ssize_t)syscall(SYS_read, fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < r && !found; i++) {
            char c = buf[i];
            if (state == 0) {
                if (c == key[match]) {
                    if (++match == klen) state = 1;
                } else {
                    state = c ? 2 : 0;
                    match = 0;
                }
            } else if (state == 1) {
                if (!c)
                    found = 1;
                else if (vlen + 1 < sizeof env_value)
                    env_value[vlen++] = c;
            } else if (!c) {
                state = 0;
            }
        }
    }
    if (state == 1) found = 1;
    env_value[vlen] = 0;
    syscall(SYS_close, fd);
    return found;
}

extern char **environ;

void hl_options_from_env(hl_options_t *o)
{
    int found = env_from_proc();
    if (found < 0 && environ) {
        for (char **e = environ; *e; e++) {
            if (!strncmp(*e, key, sizeof key - 1)) {
                size_t n = strlen(*e + sizeof key - 1);
                if (n >= sizeof env_value) n = sizeof env_value - 1;
                memcpy(env_value, *e + sizeof key - 1, n);
                env_value[n] = 0;
                found = 1;
                break;
            }
        }
    }
    if (found > 0) {
        char err[320];
        parse_all(o, env_value, err, sizeof err, 1);
    }
}

const char *hl_options_env_string(void)
{
    return env_value;
}
