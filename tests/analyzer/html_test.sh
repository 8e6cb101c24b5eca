#!/usr/bin/env bash
# tests/analyzer/html_test.sh HEAPLEDGER DBDIR HTML_PROG HTML_PROG.c — the HTML report,
# rendered for real in headless Chromium: after its scripts ran, the page must hold every
# chart with data marks, and it must load nothing from the network. Then a reader's session
# (html_drive.py: real clicks and typing over the DevTools pipe) on a hand-made run and on a
# real recording of HTML_PROG: the headline names the leak with its file:line, tables sort,
# the flame graph switches metric, zooms and searches, no sideways scroll at 700 px.
# HL_KEEP_HTML=DIR keeps the recorded report and its screenshots (docs/img/ comes from it).
set -u
hl=$1
dir=$2
prog=$3
src=$4
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
export TMPDIR=$out
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
    echo "FAIL chromium not installed (mk/packages.txt lists it: run make deps)"
    echo "analyzer html: 0 passed, 1 failed"
    exit 1
fi
chrome() {
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
        --disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage \
        --user-data-dir="$(mktemp -d -p "$out")" "$@" 2>/dev/null
}

"$hl" report "$dir/basic.db" --html "$out/basic.html" 2>"$out/err" && [ -s "$out/basic.html" ] &&
    grep -q "wrote $out/basic.html" "$out/err" && ok "html-written" || ko "html-written"

# Self-contained: no external scripts, styles, images or fonts.
if grep -Eiq '(src|href)=["'"'"']?(https?:)?//' "$out/basic.html" || grep -q '@import' "$out/basic.html"; then
    ko "self-contained"
else
    ok "self-contained"
fi

chrome --dump-dom "file://$out/basic.html" >"$out/dom.html"
status=$(grep -o '<p id="hl-status"[^>]*>[^<]*' "$out/dom.html")
charts=$(sed -n 's/.*data-charts="\([0-9]*\)".*/\1/p' <<<"$status")
with=$(sed -n 's/.*data-with-data="\([0-9]*\)".*/\1/p' <<<"$status")
echo "     $status"
[ -n "$charts" ] && [ "$charts" -ge 6 ] && ok "scripts-ran-and-counted-$charts-charts" || ko "charts counted ($status)"
[ -n "$with" ] && [ "$with" = "$charts" ] && ok "every-chart-has-data" || ko "every chart has data ($with of $charts)"
for c in bytes=2 held=1 fractions=3 sizes=4 flame-sites=5 flame-leaks=4 cycles-alloc-tlsf_split=3 \
    cycles-free-tiny_cache_push=2; do
    grep -q " $c\b" <<<"$status" && ok "chart $c" || ko "chart $c"
done
# The flame graph names the allocation sites with their file:line, the leak graph the
# leaking ones.
grep -q '<title>make_node — 300 B (62.5%) — node.c:42 \[prog\]' "$out/dom.html" && ok "flame-site-titles" ||
    ko "flame-site-titles ($(grep -o '<title>make_node[^<]*' "$out/dom.html" | head -1))"
grep -q '<p id="hl-status" hidden' "$out/dom.html" && ok "status line hidden" || ko "status line hidden"

grep -q "no kernel events (record with --kernel)" "$out/basic.html" && ok "no-kernel-events-said" ||
    ko "no-kernel-events-said"

# With kernel events (kernel.db): RSS is the second series of the held chart, and the faults
# chart has a bar per allocation path with faults (4).
"$hl" report "$dir/kernel.db" --html "$out/kernel.html" 2>/dev/null
chrome --dump-dom "file://$out/kernel.html" >"$out/kdom.html"
kstatus=$(grep -o '<p id="hl-status"[^>]*>[^<]*' "$out/kdom.html")
echo "     $kstatus"
kcharts=$(sed -n 's/.*data-charts="\([0-9]*\)".*/\1/p' <<<"$kstatus")
kwith=$(sed -n 's/.*data-with-data="\([0-9]*\)".*/\1/p' <<<"$kstatus")
[ -n "$kwith" ] && [ "$kwith" = "$kcharts" ] && ok "kernel: every-chart-has-data" ||
    ko "kernel: every chart has data ($kwith of $kcharts)"
for c in bytes=2 held=2 faults=4; do
    grep -q " $c\b" <<<"$kstatus" && ok "kernel: chart $c" || ko "kernel: chart $c"
done

# A reader's session on the hand-made run.
drive() {
    local name=$1
    shift
    CHROMIUM=$browser timeout 300 python3 "$here/html_drive.py" "$@" >"$out/$name.drive" 2>&1
    sed "s/^/     $name: /" "$out/$name.drive"
    grep -q '^drive: [0-9]* passed, 0 failed' "$out/$name.drive" && ok "$name: reader's session" ||
        ko "$name: reader's session"
}
drive basic check "$out/basic.html" --leak-func make_node --leak-line node.c:42

# A real recording: two threads, leaks at a known line, temporaries, a realloc loop.
line=$(grep -n 'HTML_LEAK_LINE' "$src" | cut -d: -f1)
if "$hl" record -f -o "$out/prog.db" -- "$prog" >"$out/record.out" 2>&1 &&
    "$hl" report "$out/prog.db" --html "$out/prog.html" 2>/dev/null; then
    ok "recorded and reported"
    drive recorded check "$out/prog.html" --leak-func config_leak --leak-line "html_prog.c:$line"
    # The flame graph data carries every metric: 8000 temporaries of parse_tokens.
    grep -q '"metrics":\["bytes","count","leaked","temporaries","cycles"\]' "$out/prog.html" &&
        ok "flame data: five metrics" || ko "flame data: five metrics"
    CHROMIUM=$browser timeout 300 python3 "$here/html_drive.py" shots "$out/prog.html" "$out/shots" \
        >/dev/null 2>&1
    size=$(stat -c %s "$out/shots/report-headline.png" 2>/dev/null || echo 0)
    [ "$size" -gt 20000 ] && ok "screenshot ($size bytes)" || ko "screenshot ($size bytes)"
    [ -n "${HL_KEEP_HTML:-}" ] && mkdir -p "$HL_KEEP_HTML" &&
        cp "$out/prog.html" "$out"/shots/*.png "$HL_KEEP_HTML"/
else
    ko "record ($(tail -3 "$out/record.out"))"
fi

echo "analyzer html: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
