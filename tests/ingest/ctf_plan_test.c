/* tests/ingest/ctf_plan_test.c — Criterion tests of the decoding plans (tracer/ctf_plan.c):
 * which scopes compile (heapledger's `words`, LTTng's large event header, a payload of bit
 * fields, signed integers and a variant) and which are refused (a sequence, a string), the
 * values a plan writes against the tree walk's on the same stream file (the plans removed
 * from the same model), and truncated events inside a packet.
 */
#include "ctf_meta.h"
#include "ctf_plan.h"
#include "ctf_stream.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* LTTng-UST's per-UID layout (large header: 16-bit id) with a few test classes. */
static const char *META =
    "/* CTF 1.8 */\n"
    "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
    "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
    "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
    "trace {\n major = 1; minor = 8;\n uuid = \"01020304-0506-0708-090a-0b0c0d0e0f10\";\n"
    " byte_order = le;\n packet.header := struct {\n  uint32_t magic;\n  uint8_t uuid[16];\n"
    "  uint32_t stream_id;\n  uint64_t stream_instance_id;\n };\n};\n"
    "clock {\n name = \"monotonic\";\n freq = 1000000000; offset = 1000;\n};\n"
    "typealias integer { size = 32; align = 8; signed = false; map = clock.monotonic.value; } "
    ":= uint32_clock_monotonic_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } "
    ":= uint64_clock_monotonic_t;\n"
    "struct packet_context {\n uint64_clock_monotonic_t timestamp_begin;\n"
    " uint64_clock_monotonic_t timestamp_end;\n uint64_t content_size;\n uint64_t packet_size;\n"
    " uint64_t packet_seq_num;\n uint64_t events_discarded;\n uint32_t cpu_id;\n};\n"
    "struct event_header_large {\n enum : uint16_t { compact = 0 ... 65534, extended = 65535 } "
    "id;\n variant <id> {\n  struct { uint32_clock_monotonic_t timestamp; } compact;\n"
    "  struct { uint32_t id; uint64_clock_monotonic_t timestamp; } extended;\n } v;\n"
    "} align(8);\n"
    "stream {\n id = 0;\n event.header := struct event_header_large;\n"
    " packet.context := struct packet_context;\n};\n"
    "event {\n name = \"heapledger:alloc\";\n id = 1;\n stream_id = 0;\n fields := struct {\n"
    "  integer { size = 64; align = 8; signed = 0; base = 16; } _words[6];\n };\n};\n"
    "event {\n name = \"mixed\";\n id = 2;\n stream_id = 0;\n fields := struct {\n"
    "  integer { size = 3; align = 1; signed = 1; } _a;\n"
    "  integer { size = 13; align = 1; signed = 0; } _b;\n"
    "  uint8_t _c;\n  uint64_t _d;\n"
    "  enum : uint8_t { x = 0, y = 1 } _tag;\n"
    "  variant <_tag> { uint16_t x; uint64_t y; } _v;\n"
    "  uint8_t _after;\n"
    "  integer { size = 64; align = 64; signed = 0; } _e;\n };\n};\n"
    "event {\n name = \"heapledger:stack\";\n id = 3;\n stream_id = 0;\n fields := struct {\n"
    "  uint32_t _id;\n  uint8_t __ips_length;\n"
    "  integer { size = 64; align = 8; signed = 0; base = 16; } _ips[ __ips_length ];\n };\n};\n"
    "event {\n name = \"heapledger:thread\";\n id = 4;\n stream_id = 0;\n"
    " fields := struct {\n  string _name;\n };\n};\n";

static hl_ctf_meta_t *meta(void)
{
    char err[400] = "";
    hl_ctf_meta_t *m = hl_ctf_meta_parse(META, strlen(META), err, sizeof err);
    cr_assert_not_null(m, "%s", err);
    return m;
}

static const hl_ctf_event_class_t *event(const hl_ctf_meta_t *m, const char *name)
{
    for (size_t i = 0; i < m->nevents; i++)
        if (!strcmp(m->events[i]->name, name)) return m->events[i];
    cr_assert_fail("no event class %s", name);
    return NULL;
}

/* The model without its plans: every scope is decoded by walking its tree. */
static void drop_plans(hl_ctf_meta_t *m)
{
    for (size_t i = 0; i < m->nscopes; i++)
        m->scopes[i]->plan = NULL;
    for (size_t i = 0; i < m->nstreams; i++)
        m->streams[i]->hdr = NULL;
}

Test(ctf_plan, what_compiles)
{
    hl_ctf_meta_t *m = meta();
    const hl_ctf_stream_class_t *sc = hl_ctf_meta_stream(m, 0);
    cr_assert_not_null(sc->event_header.plan, "the large header compiles");
    cr_assert_not_null(sc->hdr, "and has LTTng's shape");
    cr_assert(sc->hdr->large, "exactly the large header");
    cr_assert_not_null(m->packet_header.plan);
    cr_assert_not_null(sc->packet_context.plan);
    const hl_ctf_plan_t *a = event(m, "heapledger:alloc")->payload.plan;
    cr_assert_not_null(a);
    cr_assert(a->array1, "the words: one run of one array");
    const hl_ctf_plan_t *x = event(m, "mixed")->payload.plan;
    cr_assert_not_null(x, "bit fields, signed, a variant: compiled");
    /* run (a, b, c, d, tag), variant, its options' runs (x, y), run (after), run (e: its
     * align 64 starts a run) */
    cr_assert_eq(x->nstep, 6, "%u steps", x->nstep);
    cr_assert_eq(x->step[0].op, HL_PLAN_RUN);
    cr_assert_eq(x->step[0].align, 64);
    cr_assert_eq(x->step[0].bits, 96, "a 3, b 13, c 8, d 64, tag 8: %u", x->step[0].bits);
    cr_assert_eq(x->step[1].op, HL_PLAN_VARIANT);
    cr_assert_eq(x->step[4].align, 8);
    cr_assert_eq(x->step[5].align, 64);
    cr_assert_eq(x->leaf[0].op, HL_LEAF_INT, "a: 3 signed bits");
    cr_assert_eq(x->leaf[2].op, HL_LEAF_U8, "c: a plain load");
    cr_assert_eq(x->leaf[3].op, HL_LEAF_U64, "d: a plain load at byte 3");
    cr_assert_eq(x->leaf[3].off, 3);
    /* refused: a sequence, a string (the tree walk decodes them) */
    cr_assert_null(event(m, "heapledger:stack")->payload.plan);
    cr_assert_null(event(m, "heapledger:thread")->payload.plan);
    hl_ctf_meta_free(m);
}

/* A run longer than 128 MiB (its offsets would not fit a plan's 32 bits): refused, the tree
 * walk decodes it; 7 arrays of 16 MiB (112 MiB) still compile. */
Test(ctf_plan, runs_too_long)
{
    for (int n = 7; n <= 9; n += 2) {
        char extra[2048];
        size_t o = (size_t)snprintf(extra, sizeof extra,
                                    "event {\n name = \"huge\";\n id = 5;\n stream_id = 0;\n"
                                    " fields := struct {\n");
        for (int i = 0; i < n; i++)
            o += (size_t)snprintf(extra + o, sizeof extra - o, "  uint8_t _a%d[16777216];\n", i);
        snprintf(extra + o, sizeof extra - o, " };\n};\n");
        size_t len = strlen(META) + strlen(extra);
        char *t = malloc(len + 1);
        snprintf(t, len + 1, "%s%s", META, extra);
        char err[400] = "";
        hl_ctf_meta_t *m = hl_ctf_meta_parse(t, len, err, sizeof err);
        free(t);
        cr_assert_not_null(m, "%s", err);
        const hl_ctf_plan_t *p = event(m, "huge")->payload.plan;
        if (n == 7)
            cr_expect_not_null(p, "112 MiB: compiled");
        else
            cr_expect_null(p, "144 MiB: refused");
        hl_ctf_meta_free(m);
    }
}

/* ---- stream files, bit by bit --------------------------------------------------------- */

typedef struct wb_s {
    uint8_t b[1 << 16];
    uint64_t bit; /* write position in bits */
} wb_t;

static void bits(wb_t *w, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++, w->bit++) {
        uint8_t *p = &w->b[w->bit >> 3];
        if ((v >> i) & 1)
            *p |= (uint8_t)(1u << (w->bit & 7));
        else
            *p &= (uint8_t) ~(1u << (w->bit & 7));
    }
}

static void align(wb_t *w, unsigned a)
{
    while (w->bit % a)
        bits(w, 0, 1);
}

/* A packet's header and context; returns the bit offset of content_size. */
static uint64_t packet_begin(wb_t *w, uint64_t ts_begin, uint64_t ts_end)
{
    bits(w, 0xc1fc1fc1u, 32);
    for (int i = 1; i <= 16; i++)
        bits(w, (uint64_t)i, 8);
    bits(w, 0, 32); /* stream_id */
    bits(w, 7, 64); /* stream_instance_id */
    bits(w, ts_begin, 64);
    bits(w, ts_end, 64);
    uint64_t cs = w->bit;
    bits(w, 0, 64); /* content_size */
    bits(w, 0, 64); /* packet_size */
    bits(w, 0, 64);
    bits(w, 0, 64);
    bits(w, 0, 32);
    return cs;
}

/* content ends here; the packet `pad` bytes (and up to 8-byte alignment) later. */
static void packet_end(wb_t *w, uint64_t cs, uint64_t start, unsigned pad)
{
    uint64_t content = w->bit - start;
    align(w, 8);
    w->bit += pad * 8;
    align(w, 64); /* the next packet starts where alignments of the file's and its agree */
    uint64_t packet = w->bit - start;
    memset(w->b + (start + content + 7) / 8, 0, (packet - content + 7) / 8);
    memcpy(w->b + cs / 8, &content, 8);
    memcpy(w->b + cs / 8 + 8, &packet, 8);
}

static void header(wb_t *w, uint32_t id, uint64_t ts, int extended)
{
    align(w, 8);
    if (!extended) {
        bits(w, id, 16);
        bits(w, ts, 32);
    } else {
        bits(w, 65535, 16);
        bits(w, id, 32);
        bits(w, ts, 64);
    }
}

static void ev_alloc(wb_t *w, uint64_t ts, int ext, uint64_t base)
{
    header(w, 1, ts, ext);
    align(w, 8);
    for (int i = 0; i < 6; i++)
        bits(w, base + (uint64_t)i, 64);
}

static void ev_mixed(wb_t *w, uint64_t ts, int a, unsigned b, int tag, uint64_t v)
{
    header(w, 2, ts, 0);
    align(w, 64);
    bits(w, (uint64_t)a & 7, 3);
    bits(w, b, 13);
    bits(w, 0xc5, 8);
    bits(w, UINT64_C(0x1122334455667788), 64);
    bits(w, (uint64_t)tag, 8);
    bits(w, v, tag ? 64 : 16);
    bits(w, 0x99, 8);
    align(w, 64);
    bits(w, UINT64_C(0xfedcba9876543210), 64);
}

static void ev_stack(wb_t *w, uint64_t ts, uint32_t id, int n)
{
    header(w, 3, ts, 1);
    bits(w, id, 32);
    bits(w, (uint64_t)n, 8);
    for (int i = 0; i < n; i++)
        bits(w, 0x400000u + (uint64_t)i, 64);
}

static void ev_thread(wb_t *w, uint64_t ts, const char *name)
{
    header(w, 4, ts, 0);
    for (const char *p = name;; p++) {
        bits(w, (uint8_t)*p, 8);
        if (!*p) break;
    }
}

static char *write_file(const wb_t *w)
{
    char *path = strdup("/tmp/ctfplan-unit-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    size_t n = (size_t)(w->bit + 7) / 8;
    cr_assert_eq(write(fd, w->b, n), (ssize_t)n);
    close(fd);
    return path;
}

/* Everything a consumer sees of one event, as text. */
static void describe(const hl_ctf_stream_t *s, char *out, size_t len)
{
    size_t o = (size_t)snprintf(out, len, "%s ts=%llu ns=%lld", s->ec->name,
                                (unsigned long long)s->ts, (long long)s->ns);
    const hl_ctf_node_t *root = s->ec->payload.root;
    for (uint32_t i = 0; root && i < root->nchild && o < len; i++) {
        const hl_ctf_node_t *n = &root->child[i];
        const hl_ctf_val_t *v = &s->pl[n->slot];
        o += (size_t)snprintf(out + o, len - o, " %s:%d:", n->name, v->kind);
        if (v->kind == HL_CTF_INT)
            o += (size_t)snprintf(out + o, len - o, "%llx", (unsigned long long)v->u);
        else if (v->kind == HL_CTF_STRING)
            o += (size_t)snprintf(out + o, len - o, "%.*s", (int)v->n, (const char *)v->p);
        else if (v->kind == HL_CTF_ARRAY)
            for (uint32_t k = 0; k < v->n && o < len; k++) {
                uint64_t x = 0;
                memcpy(&x, v->p + (size_t)k * v->esize, v->esize);
                o += (size_t)snprintf(out + o, len - o, "%llx,", (unsigned long long)x);
            }
        if (n->kind == HL_CTF_VARIANT) /* the option decoded: its value */
            for (uint32_t k = 0; k < n->nchild && o < len; k++) {
                const hl_ctf_val_t *ov = &s->pl[n->child[k].slot];
                if (ov->gen == s->gen && ov->kind == HL_CTF_INT)
                    o += (size_t)snprintf(out + o, len - o, "%s=%llx", n->child[k].name,
                                          (unsigned long long)ov->u);
            }
    }
}

/* Decode the file with m; every event described into ev (one line each). Returns next's
 * last result (0 end, -1 error: err). */
static int decode(const hl_ctf_meta_t *m, const char *path, char ev[][1024], int *nev, char *err,
                  size_t errlen)
{
    hl_ctf_stream_t *s = hl_ctf_stream_open(m, path, err, errlen);
    cr_assert_not_null(s, "%s", err);
    int r;
    *nev = 0;
    while ((r = hl_ctf_stream_next(s)) == 1)
        describe(s, ev[(*nev)++], 1024);
    if (r < 0) snprintf(err, errlen, "%s", s->err);
    hl_ctf_stream_close(s);
    return r;
}

static void two_packets(wb_t *w)
{
    memset(w, 0, sizeof *w);
    uint64_t st = w->bit, cs = packet_begin(w, 1000, (UINT64_C(2) << 32) + 20);
    ev_alloc(w, 1001, 0, 100);
    ev_mixed(w, 1002, -3, 0x1abc, 0, 0xbeef);
    ev_stack(w, 1003, 9, 3);
    ev_mixed(w, 1004, 2, 0x0123, 1, UINT64_C(0xa5a5a5a5a5a5a5a5));
    ev_thread(w, 1005, "worker-1");
    ev_alloc(w, (UINT64_C(1) << 32) + 7, 1, 200); /* extended: a full 64-bit timestamp */
    ev_alloc(w, 5, 0, 300);                       /* compact: wraps from the full value */
    packet_end(w, cs, st, 16);
    st = w->bit;
    cs = packet_begin(w, (UINT64_C(2) << 32) + 30, (UINT64_C(2) << 32) + 100);
    ev_mixed(w, 50, 3, 1, 1, 42);
    ev_alloc(w, 60, 0, 400);
    packet_end(w, cs, st, 0);
}

Test(ctf_plan, same_values_as_the_tree_walk)
{
    static wb_t w;
    two_packets(&w);
    char *path = write_file(&w);
    static char a[16][1024], b[16][1024];
    int na, nb;
    char err[400] = "";
    hl_ctf_meta_t *m = meta();
    cr_assert_eq(decode(m, path, a, &na, err, sizeof err), 0, "plans: %s", err);
    drop_plans(m);
    cr_assert_eq(decode(m, path, b, &nb, err, sizeof err), 0, "tree walk: %s", err);
    cr_assert_eq(na, 9);
    cr_assert_eq(nb, 9);
    for (int i = 0; i < na; i++)
        cr_expect_str_eq(a[i], b[i], "event %d", i);
    /* and what they both say is what was written */
    cr_expect(strstr(a[0], "heapledger:alloc ts=1001 ns=2001 _words:5:64,65,66,67,68,69,"), "%s",
              a[0]);
    cr_expect(strstr(a[1], "_a:1:fffffffffffffffd _b:1:1abc _c:1:c5 _d:1:1122334455667788 "
                           "_tag:1:0 _v:4:x=beef _after:1:99 _e:1:fedcba9876543210"),
              "%s", a[1]);
    cr_expect(strstr(a[2], "heapledger:stack ts=1003") && strstr(a[2], "400000,400001,400002,"),
              "%s", a[2]);
    cr_expect(strstr(a[3], "_a:1:2 _b:1:123 ") && strstr(a[3], "_v:4:y=a5a5a5a5a5a5a5a5"), "%s",
              a[3]);
    cr_expect(strstr(a[4], "heapledger:thread ts=1005") && strstr(a[4], "_name:2:worker-1"), "%s",
              a[4]);
    cr_expect(strstr(a[5], "ts=4294967303 "), "extended: %s", a[5]);
    cr_expect(strstr(a[6], "ts=8589934597 "), "compact after it, wrapped: %s", a[6]);
    cr_expect(strstr(a[7], "ts=8589934642 ") && strstr(a[7], "_v:4:y=2a"), "%s", a[7]);
    hl_ctf_meta_free(m);
    unlink(path);
    free(path);
}

/* Truncated events inside a packet: the plan's one bounds check per run refuses them as the
 * tree walk's check per member does, with the same message. */
Test(ctf_plan, truncated_events)
{
    static wb_t w;
    struct {
        int cut_bits; /* content ends this many bits before the second event's end */
        int mixed;    /* the second event: mixed (else an alloc) */
        const char *what;
    } cases[] = {
        {8, 0, "event 'heapledger:alloc' runs past the packet's content"},
        {47 * 8, 0, "event 'heapledger:alloc' runs past the packet's content"},
        {52 * 8, 0, "event header runs past the packet's content"},
        {1, 1, "event 'mixed' runs past the packet's content"},
        {64, 1, "event 'mixed' runs past the packet's content"},
    };
    for (int plans = 1; plans >= 0; plans--)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            memset(&w, 0, sizeof w);
            uint64_t st = w.bit, cs = packet_begin(&w, 1000, 5000);
            ev_alloc(&w, 1001, 0, 1);
            if (cases[i].mixed)
                ev_mixed(&w, 1002, 1, 2, 1, 3);
            else
                ev_alloc(&w, 1002, 0, 2);
            w.bit -= (uint64_t)cases[i].cut_bits;
            packet_end(&w, cs, st, 64);
            char *path = write_file(&w);
            hl_ctf_meta_t *m = meta();
            if (!plans) drop_plans(m);
            static char ev[16][1024];
            int n;
            char err[400] = "";
            cr_expect_eq(decode(m, path, ev, &n, err, sizeof err), -1, "case %zu (plans %d)", i,
                         plans);
            cr_expect_eq(n, 1, "case %zu (plans %d): the first event decoded", i, plans);
            cr_expect(strstr(err, cases[i].what) != NULL, "case %zu (plans %d): %s", i, plans, err);
            hl_ctf_meta_free(m);
            unlink(path);
            free(path);
        }
}
