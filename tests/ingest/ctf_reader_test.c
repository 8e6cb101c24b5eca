/* tests/ingest/ctf_reader_test.c — Criterion tests of heapledger's CTF reader: the TSDL
 * metadata parser (tracer/ctf_meta.c) and the stream decoder (tracer/ctf_stream.c), on
 * metadata shaped like LTTng-UST's and stream files written here byte by byte, hostile ones
 * included (lying sizes, unknown ids, lengths past the packet, strings without NUL,
 * constructs the reader must refuse rather than guess).
 */
#include "ctf_meta.h"
#include "ctf_stream.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *META_HEAD =
    "/* CTF 1.8 */\n"
    "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
    "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
    "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; } := unsigned long;\n"
    "typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n"
    "trace {\n major = 1; minor = 8;\n uuid = \"01020304-0506-0708-090a-0b0c0d0e0f10\";\n"
    " byte_order = le;\n packet.header := struct {\n  uint32_t magic;\n  uint8_t uuid[16];\n"
    "  uint32_t stream_id;\n  uint64_t stream_instance_id;\n };\n};\n"
    "env { hostname = \"h\"; tracer_major = 2; };\n"
    "clock {\n name = \"monotonic\"; uuid = \"c91028e1-313b-49bd-a549-8291dde32582\";\n"
    " description = \"Monotonic } Clock\"; freq = 1000000000; offset = 1000;\n};\n"
    "typealias integer { size = 27; align = 1; signed = false; map = clock.monotonic.value; } "
    ":= uint27_clock_monotonic_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } "
    ":= uint64_clock_monotonic_t;\n"
    "struct packet_context {\n uint64_clock_monotonic_t timestamp_begin;\n"
    " uint64_clock_monotonic_t timestamp_end;\n uint64_t content_size;\n uint64_t packet_size;\n"
    " uint64_t packet_seq_num;\n unsigned long events_discarded;\n uint32_t cpu_id;\n};\n"
    "struct event_header_compact {\n enum : uint5_t { compact = 0 ... 30, extended = 31 } id;\n"
    " variant <id> {\n  struct { uint27_clock_monotonic_t timestamp; } compact;\n"
    "  struct { uint32_t id; uint64_clock_monotonic_t timestamp; } extended;\n } v;\n"
    "} align(8);\n"
    "stream {\n id = 0;\n event.header := struct event_header_compact;\n"
    " packet.context := struct packet_context;\n event.context := struct {\n"
    "  integer { size = 32; align = 8; signed = 1; encoding = none; base = 10; } _vpid;\n"
    "  integer { size = 8; align = 8; signed = 1; encoding = UTF8; base = 10; } _procname[17];\n"
    " };\n};\n";

static const char *META_EVENTS =
    "event {\n name = \"heapledger:alloc\";\n id = 0;\n stream_id = 0;\n loglevel = 13;\n"
    " fields := struct {\n  integer { size = 64; align = 8; signed = 0; encoding = none; base = "
    "16; } _words[6];\n };\n};\n"
    "event {\n name = \"heapledger:stack\";\n id = 1;\n stream_id = 0;\n fields := struct {\n"
    "  integer { size = 32; align = 8; signed = 0; } _id;\n"
    "  integer { size = 8; align = 8; signed = 0; } __ips_length;\n"
    "  integer { size = 64; align = 8; signed = 0; base = 16; } _ips[ __ips_length ];\n };\n};\n"
    "event {\n name = \"heapledger:thread\";\n id = 40;\n stream_id = 0;\n"
    " fields := struct {\n  string _name;\n };\n};\n";

static hl_ctf_meta_t *parse(const char *extra, char *err, size_t errlen)
{
    size_t n = strlen(META_HEAD) + strlen(META_EVENTS) + strlen(extra) + 1;
    char *t = malloc(n);
    snprintf(t, n, "%s%s%s", META_HEAD, META_EVENTS, extra);
    hl_ctf_meta_t *m = hl_ctf_meta_parse(t, strlen(t), err, errlen);
    free(t);
    return m;
}

Test(ctf_meta, lttng_layout)
{
    char err[400] = "";
    hl_ctf_meta_t *m = parse("", err, sizeof err);
    cr_assert_not_null(m, "%s", err);
    cr_assert_eq(m->has_uuid, 1);
    cr_assert_eq(m->uuid[0], 1);
    cr_assert_eq(m->uuid[15], 16);
    cr_assert_eq(m->clock_freq, 1000000000);
    cr_assert_eq(m->clock_offset, 1000);
    cr_assert_eq(m->nstreams, 1);
    cr_assert_eq(m->nevents, 3);
    const hl_ctf_stream_class_t *s = hl_ctf_meta_stream(m, 0);
    cr_assert_not_null(s);
    cr_assert_neq(s->pc_content_size, HL_CTF_NOSLOT);
    cr_assert_neq(s->pc_discarded, HL_CTF_NOSLOT);
    cr_assert_eq(s->nid, 2, "the enum id and the extended id");
    cr_assert_eq(s->nevents >= 41, 1);
    cr_assert_str_eq(s->events[40]->name, "heapledger:thread");
    const hl_ctf_node_t *w = hl_ctf_member(s->events[0]->payload.root, "words");
    cr_assert_not_null(w, "leading underscore ignored");
    cr_assert_eq(w->kind, HL_CTF_ARRAY);
    cr_assert_eq(w->len, 6);
    cr_assert_eq(w->size, 8);
    const hl_ctf_node_t *pn = hl_ctf_member(s->event_context.root, "procname");
    cr_assert_eq(pn->text, 1, "an encoded 8-bit array is a string");
    const hl_ctf_node_t *ips = hl_ctf_member(s->events[1]->payload.root, "ips");
    cr_assert_eq(ips->kind, HL_CTF_SEQ);
    cr_assert_eq(ips->ref, hl_ctf_member(s->events[1]->payload.root, "_ips_length")->slot);
    int64_t ns = 0;
    cr_assert_eq(hl_ctf_ns_from_origin(m, 5, &ns), 0);
    cr_assert_eq(ns, 1005);
    cr_assert_eq(hl_ctf_ns_from_origin(m, UINT64_MAX, &ns), -1, "past int64: refused");
    hl_ctf_meta_free(m);
}

/* Constructs the reader does not understand: refused with a message, never guessed. */
Test(ctf_meta, refuses_what_it_does_not_know)
{
    static const char *bad[] = {
        "stream { id = 1; event.header := struct { integer { size = 16; align = 8; byte_order "
        "= be; } id; }; };\n",
        "callsite_x { };\n",
        "event { name = \"x\"; id = 2; stream_id = 0; fields := struct { struct { uint8_t a; } "
        "s[3]; }; };\n",
        "event { name = \"x\"; id = 2; stream_id = 0; fields := struct { uint64_t v[ nolen ]; "
        "}; };\n",
        "event { name = \"x\"; id = 2; stream_id = 0; fields := struct { variant <nope> { "
        "uint8_t a; } v; }; };\n",
        "event { name = \"x\"; id = 0; stream_id = 0; fields := struct { }; };\n", /* dup id */
        "event { name = \"x\"; id = 3; stream_id = 9; fields := struct { }; };\n",
        "event { name = \"x\"; id = 3; stream_id = 0; fields := struct { no_such_t a; }; };\n",
        "clock { name = \"other\"; freq = 1; };\n",
        "/* unterminated",
        "event { name = \"x\"; id = 3; stream_id = 0; fields := struct { integer { size = 65; "
        "} a; }; };\n",
        "event { name = \"x\"; id = 3; stream_id = 0; fields := struct { enum : uint8_t { a = "
        "18446744073709551615 } e; }; };\n",
        "event { name = \"x\"; id = 3; stream_id = 0; fields := struct { enum : uint8_t { a = 5 "
        "... 2 } e; }; };\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char err[400] = "";
        hl_ctf_meta_t *m = parse(bad[i], err, sizeof err);
        cr_expect_null(m, "case %zu accepted", i);
        cr_expect_neq(err[0], 0, "case %zu: no message", i);
        hl_ctf_meta_free(m);
    }
}

/* Every prefix of valid metadata either parses or is refused: no crash, no hang. */
Test(ctf_meta, every_prefix)
{
    size_t n = strlen(META_HEAD) + strlen(META_EVENTS);
    char *t = malloc(n + 1);
    snprintf(t, n + 1, "%s%s", META_HEAD, META_EVENTS);
    for (size_t l = 0; l <= n; l += 7) {
        char err[400];
        hl_ctf_meta_free(hl_ctf_meta_parse(t, l, err, sizeof err));
    }
    free(t);
}

Test(ctf_meta, packetized)
{
    const char *text = "/* CTF 1.8 */ typealias integer { size = 8; align = 8; } := u8; "
                       "trace { major = 1; minor = 8; byte_order = le; }; "
                       "stream { event.header := struct { u8 id; }; }; "
                       "event { name = \"e\"; id = 0; fields := struct { u8 x; }; };";
    size_t tl = strlen(text), half = tl / 2;
    uint8_t buf[4096];
    size_t off = 0;
    for (int p = 0; p < 2; p++) {
        size_t part = p ? tl - half : half;
        uint32_t magic = 0x75d11d57, content = (uint32_t)((37 + part) * 8),
                 packet = (uint32_t)((37 + part + 11) * 8);
        memset(buf + off, 0, 37 + part + 11);
        memcpy(buf + off, &magic, 4);
        memcpy(buf + off + 24, &content, 4);
        memcpy(buf + off + 28, &packet, 4);
        buf[off + 35] = 1;
        buf[off + 36] = 8;
        memcpy(buf + off + 37, text + (p ? half : 0), part);
        off += 37 + part + 11;
    }
    char err[400] = "";
    size_t len = 0;
    char *got = hl_ctf_meta_text(buf, off, &len, err, sizeof err);
    cr_assert_not_null(got, "%s", err);
    cr_assert_eq(len, tl);
    cr_assert_str_eq(got, text);
    hl_ctf_meta_t *m = hl_ctf_meta_parse(got, len, err, sizeof err);
    cr_assert_not_null(m, "%s", err);
    hl_ctf_meta_free(m);
    free(got);
    /* a lying packet size */
    uint32_t huge = 1u << 30;
    memcpy(buf + 28, &huge, 4);
    cr_assert_null(hl_ctf_meta_text(buf, off, &len, err, sizeof err));
    cr_assert_str_eq(err, "metadata: bad packet header");
    cr_assert_null(hl_ctf_meta_text((const uint8_t *)"garbage!", 8, &len, err, sizeof err));
}

/* ---- stream files ------------------------------------------------------------------ */

typedef struct wb_s {
    uint8_t b[1 << 16];
    size_t n;
} wb_t;

static void put(wb_t *w, uint64_t v, int bytes)
{
    memcpy(w->b + w->n, &v, (size_t)bytes);
    w->n += (size_t)bytes;
}

/* Everything is byte-aligned in this layout (align = 8 bits), as LTTng-UST writes it. */

/* A packet: header, context; returns the offset of its content_size member. */
static size_t packet_begin(wb_t *w, uint64_t ts_begin, uint64_t ts_end, uint64_t discarded,
                           size_t *start)
{
    *start = w->n;
    put(w, 0xc1fc1fc1u, 4);
    for (int i = 1; i <= 16; i++)
        put(w, (uint64_t)i, 1);
    put(w, 0, 4); /* stream_id */
    put(w, 7, 8); /* stream_instance_id */
    put(w, ts_begin, 8);
    put(w, ts_end, 8);
    size_t cs = w->n;
    put(w, 0, 8); /* content_size */
    put(w, 0, 8); /* packet_size */
    put(w, 0, 8);
    put(w, discarded, 8);
    put(w, 0, 4);
    return cs;
}

static void packet_end(wb_t *w, size_t start, size_t cs, size_t pad)
{
    uint64_t content = (w->n - start) * 8;
    for (size_t i = 0; i < pad; i++)
        w->b[w->n++] = 0;
    uint64_t packet = (w->n - start) * 8;
    memcpy(w->b + cs, &content, 8);
    memcpy(w->b + cs + 8, &packet, 8);
}

static void ctx(wb_t *w, uint32_t pid, const char *name)
{
    put(w, pid, 4);
    char pn[17] = {0};
    snprintf(pn, sizeof pn, "%s", name);
    memcpy(w->b + w->n, pn, 17);
    w->n += 17;
}

static void alloc_compact(wb_t *w, uint32_t ts27, uint64_t base)
{
    put(w, 0u | (uint64_t)ts27 << 5, 4); /* id 0, compact */
    ctx(w, 42, "prog");
    for (int i = 0; i < 6; i++)
        put(w, base + (uint64_t)i, 8);
}

static void alloc_extended(wb_t *w, uint64_t ts, uint64_t base)
{
    put(w, 31, 1); /* id 31: extended; 3 bits of padding to the option struct */
    put(w, 0, 4);  /* the event id */
    put(w, ts, 8);
    ctx(w, 42, "prog");
    for (int i = 0; i < 6; i++)
        put(w, base + (uint64_t)i, 8);
}

static char *write_file(const wb_t *w)
{
    char *path = strdup("/tmp/ctfread-unit-XXXXXX");
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, w->b, w->n), (ssize_t)w->n);
    close(fd);
    return path;
}

static hl_ctf_meta_t *meta(void)
{
    char err[400];
    hl_ctf_meta_t *m = parse("", err, sizeof err);
    cr_assert_not_null(m, "%s", err);
    return m;
}

Test(ctf_stream, compact_timestamps_wrap_and_discarded)
{
    static wb_t w;
    w.n = 0;
    size_t st, cs;
    const uint64_t mask = (1u << 27) - 1;
    uint64_t begin = (UINT64_C(5) << 27) | (mask - 5); /* 5 below a wrap of the 27 bits */
    cs = packet_begin(&w, begin, (UINT64_C(9) << 40) + 1, 3, &st);
    alloc_compact(&w, (uint32_t)(mask - 2), 100); /* begin + 3 */
    alloc_compact(&w, 4, 200);                    /* wrapped: begin + 10 */
    alloc_extended(&w, UINT64_C(9) << 40, 300);   /* full value */
    alloc_compact(&w, 1, 400);                    /* relative to the full value */
    packet_end(&w, st, cs, 24);
    cs = packet_begin(&w, (UINT64_C(9) << 40) + 50, (UINT64_C(9) << 40) + 60, 8, &st);
    alloc_compact(&w, 60, 500);
    packet_end(&w, st, cs, 0);
    char *path = write_file(&w);
    hl_ctf_meta_t *m = meta();
    char err[400] = "";
    hl_ctf_stream_t *s = hl_ctf_stream_open(m, path, err, sizeof err);
    cr_assert_not_null(s, "%s", err);
    cr_assert_eq(s->packets, 2);
    cr_assert_eq(s->instance_id, 7);
    uint64_t want_ts[] = {begin + 3, begin + 10, UINT64_C(9) << 40, (UINT64_C(9) << 40) + 1,
                          (UINT64_C(9) << 40) + 60};
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(hl_ctf_stream_next(s), 1, "event %d: %s", i, s->err);
        cr_assert_eq(s->ts, want_ts[i], "event %d: ts %llx, want %llx", i,
                     (unsigned long long)s->ts, (unsigned long long)want_ts[i]);
        cr_assert_eq(s->ns, (int64_t)want_ts[i] + 1000);
        cr_assert_str_eq(s->ec->name, "heapledger:alloc");
        const hl_ctf_val_t *wv = &s->pl[hl_ctf_member(s->ec->payload.root, "words")->slot];
        cr_assert_eq(wv->n, 6);
        uint64_t w0;
        memcpy(&w0, wv->p, 8);
        cr_assert_eq(w0, (uint64_t)(i < 4 ? 100 * (i + 1) : 500));
        const hl_ctf_val_t *pn =
            &s->sctx[hl_ctf_member(s->sc->event_context.root, "procname")->slot];
        cr_assert_eq(pn->kind, HL_CTF_STRING);
        cr_assert_eq(pn->n, 4);
        cr_assert_eq(memcmp(pn->p, "prog", 4), 0);
    }
    cr_assert_eq(hl_ctf_stream_next(s), 0);
    cr_assert_eq(s->discarded, 5, "8 - 3; the first packet's count is not a loss seen");
    hl_ctf_stream_close(s);
    hl_ctf_meta_free(m);
    unlink(path);
    free(path);
}

/* One good packet, then an edit; open must refuse it or next must fail: never a read
 * outside the file's bytes (ASan in check-ingest-fuzz covers the whole reader). */
static int decode_all(hl_ctf_meta_t *m, const wb_t *w, char *err, size_t errlen)
{
    char *path = write_file(w);
    hl_ctf_stream_t *s = hl_ctf_stream_open(m, path, err, errlen);
    int r = -2;
    if (s) {
        while ((r = hl_ctf_stream_next(s)) == 1)
            ;
        if (r < 0) snprintf(err, errlen, "%s", s->err);
    }
    hl_ctf_stream_close(s);
    unlink(path);
    free(path);
    return r;
}

static void one_packet(wb_t *w, void (*body)(wb_t *))
{
    w->n = 0;
    size_t st, cs;
    cs = packet_begin(w, 1000, 1 << 20, 0, &st);
    body(w);
    packet_end(w, st, cs, 8);
}

static void body_ok(wb_t *w)
{
    alloc_compact(w, 1010, 1);
}

static void body_bad_id(wb_t *w)
{
    put(w, 5u | 10u << 5, 4); /* id 5: not in the metadata */
    ctx(w, 1, "x");
}

static void body_long_seq(wb_t *w)
{
    put(w, 1u | 10u << 5, 4);
    ctx(w, 1, "x");
    put(w, 9, 4);   /* id */
    put(w, 200, 1); /* 200 ips, the packet holds 1 */
    put(w, 0x1234, 8);
}

static void body_no_nul(wb_t *w)
{
    put(w, 31, 1);
    put(w, 40, 4); /* extended: id 40 (thread) */
    put(w, 2000, 8);
    ctx(w, 1, "x");
    memcpy(w->b + w->n, "abcdefgh", 8);
    w->n += 8;
}

static void body_back(wb_t *w)
{
    alloc_compact(w, 1010, 1);
    alloc_extended(w, 1005, 2); /* a full timestamp before the previous event */
}

static void body_cut(wb_t *w)
{
    alloc_compact(w, 1010, 1);
    w->n -= 20; /* the payload runs past the content */
}

Test(ctf_stream, hostile_packets)
{
    hl_ctf_meta_t *m = meta();
    static wb_t w;
    char err[400];
    one_packet(&w, body_ok);
    cr_assert_eq(decode_all(m, &w, err, sizeof err), 0, "%s", err);

    struct {
        void (*body)(wb_t *);
        const char *what;
        int open_fails;
    } cases[] = {
        {body_bad_id, "not in the metadata", 0},
        {body_long_seq, "runs past", 0},
        {body_no_nul, "runs past", 0},
        {body_cut, "runs past", 0},
        {body_back, "time goes backwards (event 1005 after 1010)", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        one_packet(&w, cases[i].body);
        err[0] = 0;
        int r = decode_all(m, &w, err, sizeof err);
        cr_expect_eq(r, -1, "case %zu: %d", i, r);
        cr_expect(strstr(err, cases[i].what) != NULL, "case %zu: %s", i, err);
    }
    /* packet-level lies: refused at open */
    const struct {
        size_t off;
        uint64_t v;
        int bytes;
        const char *what;
    } lies[] = {
        {0, 0xdeadbeef, 4, "bad magic"},
        {4, 0xff, 1, "uuid mismatch"},
        {20, 3, 4, "unknown stream class"},
        {56, UINT64_C(1) << 40, 8, "bad sizes"}, /* packet_size past the file */
        {48, UINT64_C(1) << 20, 8, "bad sizes"}, /* content > packet */
        {56, 12345, 8, "bad sizes"},             /* not whole bytes */
        {48, 100, 8, "bad sizes"},               /* content inside the context */
    };
    for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
        one_packet(&w, body_ok);
        memcpy(w.b + lies[i].off, &lies[i].v, (size_t)lies[i].bytes);
        err[0] = 0;
        cr_expect_eq(decode_all(m, &w, err, sizeof err), -2, "lie %zu accepted", i);
        cr_expect(strstr(err, lies[i].what) != NULL, "lie %zu: %s", i, err);
    }
    /* every truncation of a two-packet file: refused or decoded, never past the bytes */
    w.n = 0;
    size_t st, cs;
    cs = packet_begin(&w, 1000, 5000, 0, &st);
    alloc_compact(&w, 1010, 1);
    packet_end(&w, st, cs, 0);
    size_t first = w.n; /* a cut there leaves one whole packet: a valid file */
    cs = packet_begin(&w, 6000, 9000, 0, &st);
    alloc_compact(&w, 6010, 2);
    packet_end(&w, st, cs, 0);
    size_t full = w.n;
    for (size_t n = 1; n < full; n += 3) {
        if (n == first) continue;
        w.n = n;
        cr_expect_neq(decode_all(m, &w, err, sizeof err), 0, "truncated to %zu accepted", n);
    }
    /* a packet ending before its last event, and one beginning before the previous ended */
    one_packet(&w, body_ok);
    uint64_t end = 1005;
    memcpy(w.b + 40, &end, 8);
    cr_expect_eq(decode_all(m, &w, err, sizeof err), -1);
    cr_expect(strstr(err, "time goes backwards (packet end 1005 after 1010)") != NULL, "%s", err);
    w.n = 0;
    cs = packet_begin(&w, 1000, 5000, 0, &st);
    alloc_compact(&w, 1010, 1);
    packet_end(&w, st, cs, 0);
    cs = packet_begin(&w, 4000, 9000, 0, &st);
    packet_end(&w, st, cs, 0);
    cr_expect_eq(decode_all(m, &w, err, sizeof err), -1);
    cr_expect(strstr(err, "time goes backwards (packet begin 4000 after 5000)") != NULL, "%s", err);
    hl_ctf_meta_free(m);
}

Test(ctf_stream, empty_file)
{
    hl_ctf_meta_t *m = meta();
    static wb_t w;
    w.n = 0;
    char err[400];
    cr_assert_eq(decode_all(m, &w, err, sizeof err), 0);
    hl_ctf_meta_free(m);
}
