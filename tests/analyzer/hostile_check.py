#!/usr/bin/env python3
"""tests/analyzer/hostile_check.py MODE:FILE... — what the analyzer's output must be on any
database (hostile_test.sh). text: valid UTF-8 holding no control character but newline (no C0,
DEL, C1, bidirectional control). json: one strictly valid JSON document (no NaN/Infinity),
valid UTF-8, holding no raw control character either. same_classes:A,B: the reports A and B
(JSON) have the same leak classes (leaks.classes). Prints a line per offending file (one
process for the whole corpus: a Python start costs more than a check) and exits 1 if any."""
import json
import sys

BIDI = {0x061C, 0x200E, 0x200F} | set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))


def bad_char(text):
    for i, ch in enumerate(text):
        c = ord(ch)
        if (c < 0x20 and ch != "\n") or 0x7F <= c <= 0x9F or c in BIDI:
            return "raw U+%04X at character %d: %r" % (c, i, text[max(0, i - 30):i + 10])
    return None


def check(mode, path):
    raw = open(path, "rb").read()
    try:
        text = raw.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        return "not valid UTF-8: %s" % e
    why = bad_char(text)
    if why:
        return why
    if mode == "json":
        def no_constant(c):
            raise ValueError("non-JSON constant " + c)
        try:
            json.loads(text, parse_constant=no_constant)
        except ValueError as e:
            return "invalid JSON: %s" % e
    return None


def same_classes(paths):
    a, b = (json.load(open(p)).get("leaks", {}).get("classes") for p in paths.split(","))
    if a is None:
        return "no leak classes"
    if a != b:
        return "leak classes differ:\n  %s\n  %s" % (json.dumps(a), json.dumps(b))
    return None


bad = 0
for arg in sys.argv[1:]:
    mode, path = arg.split(":", 1)
    why = same_classes(path) if mode == "same_classes" else check(mode, path)
    if why:
        print("FAIL %s (%s): %s" % (path, mode, why))
        bad += 1
sys.exit(1 if bad else 0)
