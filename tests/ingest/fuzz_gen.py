#!/usr/bin/env python3
"""tests/ingest/fuzz_gen.py TRACE OUTDIR CORPUS — hostile copies of a real heapledger trace.

TRACE is a trace kept by `heapledger record --keep-trace` (one CTF dir, per-UID buffers).
Every case is a full copy of it under OUTDIR/NNN with one or a few edits, made from a
recipe; OUTDIR/cases.txt lists "NNN<TAB>name<TAB>recipe". The cases are deterministic
(fixed seed, offsets derived from the trace's own layout): the generated ones below, then
the regression cases of CORPUS (same recipe language, one "name<TAB>recipe" a line).

The walker reads the trace the way the CTF metadata of LTTng-UST 2.13 lays it out (every
integer byte-aligned: align = 8 bits), so the edits can hit one field of one event:

  flip FILE OFF            invert one byte          trunc FILE SIZE     cut a file
  pkt FILE N FIELD VALUE   set a packet header/context field of packet N (magic, stream_id,
                           ts_begin, ts_end, content_size, packet_size, seq, discarded, cpu)
  ev EVENT K FIELD VALUE   set FIELD of the K-th EVENT (heapledger:alloc…); FIELD is a
                           payload field, "id", "ts", "vpid", "vtid", or words.N
  str EVENT K FIELD HEX    overwrite the start of string FIELD (length kept, NUL kept)
  nonul EVENT K FIELD      overwrite the string's NUL terminator
  meta FROM TO             replace text in the metadata (rewritten as plain-text metadata;
                           "~" is a space, \\n and \\t a newline and a tab)
  metaid EVENT ID|EVENT2    give EVENT the id ID (or EVENT2's) in the metadata
  rmindex                  remove the index files
A recipe is one or more of these, separated by "|". FILE is "metadata" or a stream file's
name; EVENT K counts from 0 across all streams.
"""
import os
import random
import re
import shutil
import struct
import sys

PKT_FIELDS = {  # offset, size of the packet header and context (LTTng-UST 2.13)
    "magic": (0, 4), "stream_id": (20, 4), "instance": (24, 8), "ts_begin": (32, 8),
    "ts_end": (40, 8), "content_size": (48, 8), "packet_size": (56, 8), "seq": (64, 8),
    "discarded": (72, 8), "cpu": (80, 4),
}
PKT_EVENTS = 84
META_MAGIC = 0x75D11D57


def ctf_dir(trace):
    for root, _, files in os.walk(trace):
        if "metadata" in files:
            return os.path.relpath(root, trace)
    sys.exit("fuzz_gen: no CTF metadata under " + trace)


def meta_text(data):
    if struct.unpack_from("<I", data, 0)[0] != META_MAGIC:
        return data.decode("utf-8", "replace")
    off, out = 0, b""
    while off + 37 <= len(data):
        cs, ps = struct.unpack_from("<II", data, off + 24)
        out += data[off + 37:off + cs // 8]
        off += ps // 8
    return out.decode("utf-8", "replace")


def parse_fields(body):
    """[(name, kind, size, extra)]: kind int|string|array|seq."""
    fields = []
    for m in re.finditer(r"integer \{ size = (\d+);[^}]*\}\s+(\w+)(?:\[\s*(\w+)\s*\])?;|string\s+(\w+);", body):
        if m.group(4):
            fields.append((m.group(4), "string", 0, None))
        elif m.group(3) is None:
            fields.append((m.group(2), "int", int(m.group(1)) // 8, None))
        elif m.group(3).isdigit():
            fields.append((m.group(2), "array", int(m.group(1)) // 8, int(m.group(3))))
        else:
            fields.append((m.group(2), "seq", int(m.group(1)) // 8, m.group(3)))
    return fields


def layout(text):
    streams, events = {}, {}
    for m in re.finditer(r"stream \{\s*id = (\d+);(.*?)\n\};", text, re.S):
        ctx = re.search(r"event.context := struct \{(.*?)\};", m.group(2), re.S)
        streams[int(m.group(1))] = parse_fields(ctx.group(1)) if ctx else []
    for m in re.finditer(r'event \{\s*name = "([^"]+)";\s*id = (\d+);\s*stream_id = (\d+);(.*?)\n\};', text, re.S):
        f = re.search(r"fields := struct \{(.*)\};", m.group(4), re.S)
        events[(int(m.group(3)), int(m.group(2)))] = (m.group(1), parse_fields(f.group(1)) if f else [])
    return streams, events


def walk_fields(buf, off, fields, out):
    vals = {}
    for name, kind, size, extra in fields:
        if kind == "int":
            out[name] = (off, size)
            vals[name] = int.from_bytes(buf[off:off + size], "little")
            off += size
        elif kind == "string":
            end = buf.index(b"\0", off)
            out[name] = (off, end - off)
            off = end + 1
        elif kind == "array":
            out[name] = (off, size * extra)
            for i in range(extra):
                out["%s.%d" % (name.lstrip("_"), i)] = (off + i * size, size)
            off += size * extra
        else:
            out[name] = (off, size * vals[extra])
            off += size * vals[extra]
    return off


def walk(tdir, streams, events):
    """[(file, packet offsets)], [(event name, file, {field: (off, size)})]."""
    packets, evs = [], []
    for fn in sorted(os.listdir(tdir)):
        path = os.path.join(tdir, fn)
        if fn == "metadata" or not os.path.isfile(path):
            continue
        buf = open(path, "rb").read()
        off, offs = 0, []
        while off + PKT_EVENTS <= len(buf):
            offs.append(off)
            sid = struct.unpack_from("<I", buf, off + 20)[0]
            cs, ps = struct.unpack_from("<QQ", buf, off + 48)
            e, end = off + PKT_EVENTS, off + cs // 8
            while e < end:
                f = {"id": (e, 2)}
                eid = struct.unpack_from("<H", buf, e)[0]
                p = e + 2
                if eid == 65535:
                    f["id"] = (p, 4)
                    eid = struct.unpack_from("<I", buf, p)[0]
                    f["ts"] = (p + 4, 8)
                    p += 12
                else:
                    f["ts"] = (p, 4)
                    p += 4
                p = walk_fields(buf, p, [(n.lstrip("_"), k, s, x) for n, k, s, x in streams[sid]], f)
                name, fields = events[(sid, eid)]
                f = dict(f)
                p = walk_fields(buf, p, fields, f)
                evs.append((name, fn, {k.lstrip("_") if k[0] == "_" and "." not in k else k: v for k, v in f.items()}))
                e = p
            off += ps // 8
        packets.append((fn, offs))
    return packets, evs


class Case:
    def __init__(self, src, tdir, streams, events):
        self.src, self.tdir, self.streams, self.events = src, tdir, streams, events
        self.packets, self.evs = walk(os.path.join(src, tdir), streams, events)
        self.by_name = {}
        for name, fn, f in self.evs:
            self.by_name.setdefault(name, []).append((fn, f))

    def apply(self, dst, recipe):
        shutil.copytree(self.src, dst)
        d = os.path.join(dst, self.tdir)
        for op in [o.split() for o in recipe.split("|") if o.strip()]:
            getattr(self, "op_" + op[0])(d, *op[1:])

    def _write(self, path, off, data):
        with open(path, "r+b") as fh:
            fh.seek(off)
            fh.write(data)

    def op_flip(self, d, fn, off):
        path = os.path.join(d, fn)
        b = open(path, "rb").read()[int(off)]
        self._write(path, int(off), bytes([b ^ 0xFF]))

    def op_trunc(self, d, fn, size):
        os.truncate(os.path.join(d, fn), int(size))

    def op_rmindex(self, d):
        shutil.rmtree(os.path.join(d, "index"), ignore_errors=True)

    def op_pkt(self, d, fn, n, field, value):
        off, size = PKT_FIELDS[field]
        pk = dict(self.packets)[fn][int(n)]
        self._write(os.path.join(d, fn), pk + off, (int(value, 0) % (1 << (8 * size))).to_bytes(size, "little"))

    def _field(self, event, k, field):
        fn, f = self.by_name[event][int(k)]
        return fn, f[field]

    def op_ev(self, d, event, k, field, value):
        fn, (off, size) = self._field(event, k, field)
        self._write(os.path.join(d, fn), off, (int(value, 0) % (1 << (8 * size))).to_bytes(size, "little"))

    def op_str(self, d, event, k, field, hexbytes):
        fn, (off, size) = self._field(event, k, field)
        self._write(os.path.join(d, fn), off, bytes.fromhex(hexbytes)[:size])

    def op_nonul(self, d, event, k, field):
        fn, (off, size) = self._field(event, k, field)
        self._write(os.path.join(d, fn), off + size, b"X")

    def op_metaid(self, d, event, new):
        path = os.path.join(d, "metadata")
        text = meta_text(open(path, "rb").read())
        if not new.isdigit():
            new = re.search(r'name = "%s";\s*id = (\d+);' % re.escape(new), text).group(1)
        text = re.sub(r'(name = "%s";\s*id = )\d+;' % re.escape(event), r"\g<1>%s;" % new, text, count=1)
        open(path, "w").write(text)

    def op_meta(self, d, frm, to):
        path = os.path.join(d, "metadata")
        text = meta_text(open(path, "rb").read())
        dec = lambda t: t.replace("~", " ").replace("\\n", "\n").replace("\\t", "\t")
        frm, to = dec(frm), dec(to)
        if frm not in text:
            sys.exit("fuzz_gen: metadata has no '%s'" % frm)
        open(path, "w").write(text.replace(frm, to, 1))


def generated(c, rng):
    """The generated recipes: (name, recipe)."""
    out = []
    meta = os.path.join(c.src, c.tdir, "metadata")
    msize = os.path.getsize(meta)
    files = [(fn, os.path.getsize(os.path.join(c.src, c.tdir, fn))) for fn, _ in c.packets]
    # byte flips at many offsets: every packet's header and context, then random ones
    for fn, offs in c.packets:
        for pk in offs:
            for fld in ("stream_id", "packet_size"):
                o = pk + PKT_FIELDS[fld][0]
                out.append(("flip %s %s@%d" % (fn, fld, o), "flip %s %d" % (fn, o + 1 if fld != "stream_id" else o)))
    for i in range(16):
        fn, size = files[i % len(files)]
        o = rng.randrange(PKT_EVENTS, size)
        out.append(("flip %s byte %d" % (fn, o), "flip %s %d" % (fn, o)))
    for o in sorted(rng.sample(range(msize), 6)):
        out.append(("flip metadata byte %d" % o, "flip metadata %d" % o))
    # truncations: inside an event, at a packet boundary ±1, and without the index
    for fn, size in files:
        for cut in (PKT_EVENTS - 1, PKT_EVENTS + 3, rng.randrange(PKT_EVENTS, size)):
            out.append(("cut %s at %d" % (fn, cut), "trunc %s %d" % (fn, cut)))
    fn, offs = max(c.packets, key=lambda p: len(p[1]))
    if len(offs) > 1:
        out.append(("cut %s at packet 1 + 1" % fn, "trunc %s %d | rmindex" % (fn, offs[1] + 1)))
    # packet-header lies
    for fn, offs in c.packets:
        size = dict(files)[fn]
        last = len(offs) - 1
        out += [
            ("%s: packet_size past the file" % fn, "pkt %s %d packet_size %d" % (fn, last, (size + 4096) * 8)),
            ("%s: packet_size 0" % fn, "pkt %s 0 packet_size 0" % fn),
            ("%s: packet_size huge" % fn, "pkt %s 0 packet_size 0xfffffffffffffff8" % fn),
            ("%s: content_size > packet_size" % fn, "pkt %s 0 content_size 0x7ffffffffffffff0" % fn),
            ("%s: content_size in the header" % fn, "pkt %s 0 content_size 64" % fn),
            ("%s: content_size odd bits" % fn, "pkt %s 0 content_size 1001" % fn),
            ("%s: stream id undeclared" % fn, "pkt %s 0 stream_id 7" % fn),
            ("%s: stream id of the other stream" % fn, "pkt %s 0 stream_id %d" % (fn, 1 - struct.unpack_from(
                "<I", open(os.path.join(c.src, c.tdir, fn), "rb").read(), offs[0] + 20)[0] % 2)),
            ("%s: bad magic" % fn, "pkt %s 0 magic 0xdeadbeef" % fn),
            ("%s: begin after end" % fn, "pkt %s 0 ts_begin 0xfffffffffffff000" % fn),
            ("%s: events_discarded 2^64-1" % fn, "pkt %s %d discarded 0xffffffffffffffff" % (fn, last)),
            ("%s: cpu id 2^32-1" % fn, "pkt %s 0 cpu 0xffffffff" % fn),
        ]
        if last > 0:
            out.append(("%s: packet 1 goes back in time" % fn, "pkt %s 1 ts_begin 1 | pkt %s 1 ts_end 2" % (fn, fn)))
            out.append(("%s: packet 1 repeats seq 0" % fn, "pkt %s 1 seq 0" % fn))
    # events: ids out of range, time going backwards, hostile values of our fields
    read = ("lttng_ust_statedump:bin_info", "lttng_ust_statedump:build_id", "lttng_ust_dl:dlclose")
    for name, ev in sorted(c.by_name.items()):
        if not name.startswith("heapledger:") and name not in read:
            continue  # LTTng's events that ingest_source.c does not read (dl:* as statedump:*)
        k = len(ev) // 2
        fn, f = ev[k]
        out.append(("%s #%d: id out of range" % (name, k), "ev %s %d id %d" % (name, k, 30000 if f["id"][1] == 2 else 0xFFFFFFF0)))
        out.append(("%s #%d: timestamp backwards" % (name, k), "ev %s %d ts 0" % (name, k)))
        for fld, (off, size) in sorted(f.items()):
            if fld in ("id", "ts") or size not in (1, 2, 4, 8):
                continue
            if not name.startswith("heapledger:") and fld not in ("vpid", "baddr", "memsz"):
                continue  # LTTng's own events: the fields heapledger reads
            if any(fld == g.lstrip("_") and kind in ("array", "string") for g, kind, _, _ in c.events_fields(name)):
                continue
            # one hostile value a field (all ones, the sign bit, zero in turn)
            v = ("0xffffffffffffffff", "0x8000000000000000", "0")[len(out) % 3]
            out.append(("%s #%d: %s = %s" % (name, k, fld, v), "ev %s %d %s %s" % (name, k, fld, v)))
        for g, kind, size, extra in c.events_fields(name):
            g = g.lstrip("_")
            if kind == "string":
                out.append(("%s #%d: %s invalid UTF-8" % (name, k, g), "str %s %d %s fffec080ed" % (name, k, g)))
                out.append(("%s #%d: %s control chars" % (name, k, g), "str %s %d %s 1b5b324a07" % (name, k, g)))
                out.append(("%s #%d: %s without its NUL" % (name, k, g), "nonul %s %d %s" % (name, k, g)))
            if kind == "seq":
                big = (1 << (8 * dict((n.lstrip("_"), s) for n, _, s, _ in c.events_fields(name))[extra.lstrip("_")])) - 1
                out.append(("%s #%d: %s length %d" % (name, k, g, big), "ev %s %d %s %d" % (name, k, extra.lstrip("_"), big)))
                out.append(("%s #%d: %s length 0" % (name, k, g), "ev %s %d %s 0" % (name, k, extra.lstrip("_"))))
    # metadata edits: array lengths, integer sizes, event ids, clock
    out += [
        ("metadata: alloc words[6] -> words[7]", "meta _words[6] _words[7]"),
        ("metadata: free words[5] -> words[2]", "meta _words[5] _words[2]"),
        ("metadata: stack ips as 32-bit", "meta size~=~64;~align~=~8;~signed~=~0;~encoding~=~none;~base~=~16;~}~_ips "
         "size~=~32;~align~=~8;~signed~=~0;~encoding~=~none;~base~=~16;~}~_ips"),
        ("metadata: alloc takes the stack's id", "metaid heapledger:alloc heapledger:stack"),
        ("metadata: free's id 4000000000", "metaid heapledger:free 4000000000"),
        ("metadata: stack renamed", "meta heapledger:stack heapledger:stacc"),
        ("metadata: string field as integer", "meta string~_purpose; integer~{~size~=~8;~align~=~8;~signed~=~0;~}~_purpose;"),
        ("metadata: clock freq 1", "meta freq~=~1000000000; freq~=~1;"),
        ("metadata: clock offset beyond int64", "meta offset~=~ offset~=~92233720368547758070"),
    ]
    return out


def events_fields(self, name):
    for (_, _), (n, fields) in self.events.items():
        if n == name:
            return fields
    return []


Case.events_fields = events_fields


def main():
    trace, outdir, corpus = sys.argv[1:4]
    tdir = ctf_dir(trace)
    text = meta_text(open(os.path.join(trace, tdir, "metadata"), "rb").read())
    streams, events = layout(text)
    c = Case(trace, tdir, streams, events)
    cases = generated(c, random.Random(16))
    for line in open(corpus):
        if line.strip() and not line.startswith("#"):
            name, recipe = line.rstrip("\n").split("\t", 1)
            cases.append(("corpus: " + name, recipe))
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "cases.txt"), "w") as lst:
        for i, (name, recipe) in enumerate(cases):
            c.apply(os.path.join(outdir, "%03d" % i), recipe)
            lst.write("%03d\t%s\t%s\n" % (i, name, recipe))
    print("fuzz_gen: %d events walked in %d stream files; %d cases" % (len(c.evs), len(c.packets), len(cases)))


if __name__ == "__main__":
    main()
