#!/usr/bin/env bash
# tests/analyzer/html_test.sh HEAPLEDGER DBDIR — the HTML report, rendered for real in
# headless Chromium: after its scripts ran, the page must hold every chart with data marks,
# and it must load nothing from the network.
set -u
hl=$1
dir=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
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
for c in bytes=3 fractions=3 sizes=4 flame-sites=5 flame-leaks=4 cycles-alloc-tlsf_split=3 \
    cycles-free-tiny_cache_push=2; do
    grep -q " $c\b" <<<"$status" && ok "chart $c" || ko "chart $c"
done
# The flame graph names the allocation sites, the leak graph the leaking ones.
grep -q '<title>make_node — 300 B' "$out/dom.html" && ok "flame-site-titles" || ko "flame-site-titles"

grep -q "no kernel events (record with --kernel)" "$out/basic.html" && ok "no-kernel-events-said" ||
    ko "no-kernel-events-said"

# With kernel events (kernel.db): RSS is the fourth series of the bytes chart, and the faults
# chart has a bar per allocation path with faults (4).
"$hl" report "$dir/kernel.db" --html "$out/kernel.html" 2>/dev/null
chrome --dump-dom "file://$out/kernel.html" >"$out/kdom.html"
kstatus=$(grep -o '<p id="hl-status"[^>]*>[^<]*' "$out/kdom.html")
echo "     $kstatus"
kcharts=$(sed -n 's/.*data-charts="\([0-9]*\)".*/\1/p' <<<"$kstatus")
kwith=$(sed -n 's/.*data-with-data="\([0-9]*\)".*/\1/p' <<<"$kstatus")
[ -n "$kwith" ] && [ "$kwith" = "$kcharts" ] && ok "kernel: every-chart-has-data" ||
    ko "kernel: every chart has data ($kwith of $kcharts)"
for c in bytes=4 faults=4; do
    grep -q " $c\b" <<<"$kstatus" && ok "kernel: chart $c" || ko "kernel: chart $c"
done

chrome --window-size=1000,2600 --screenshot="$out/basic.png" "file://$out/basic.html" >/dev/null
size=$(stat -c %s "$out/basic.png" 2>/dev/null || echo 0)
[ "$size" -gt 20000 ] && ok "screenshot ($size bytes)" || ko "screenshot ($size bytes)"
[ -n "${HL_KEEP_HTML:-}" ] && cp "$out/basic.html" "$out/basic.png" "$HL_KEEP_HTML"/

echo "analyzer html: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
