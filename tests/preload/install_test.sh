#!/usr/bin/env bash
# `make install` for both kinds of users (docs/allocator.md, "Install"): into a scratch DESTDIR
# (the layout, a build through PKG_CONFIG_SYSROOT_DIR), then into a real scratch PREFIX, where
# programs are built against each .pc and run:
#   heapledger.pc          links nothing; heapledger_* are weak: NULL without the preload
#                          library, the library's with LD_PRELOAD
#   heapledger-core.pc     heap objects, shared (found through the rpath, no LD_LIBRARY_PATH)
#                          and --static (a fully static program: libunwind's own libraries too)
#   heapledger-preload.pc  the malloc replacement linked in on purpose
# and RPATH=0 leaves the rpath out.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
dest=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$dest"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   install: $1"; }
ko() { fail=$((fail + 1)); echo "FAIL install: $1"; }
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '; }

make -C "$top" --no-print-directory -s install PREFIX=/opt/hl DESTDIR="$dest/stage" >/dev/null || { echo "install: make install failed"; exit 1; }
missing=""
for f in bin/heapledger lib/libheapledger.so lib/libheapledger.a lib/libheapledger_core.a \
    lib/libheapledger_core.so include/heapledger.h lib/pkgconfig/heapledger.pc \
    lib/pkgconfig/heapledger-core.pc lib/pkgconfig/heapledger-preload.pc; do
    [ -e "$dest/stage/opt/hl/$f" ] || missing="$missing $f"
done
[ -z "$missing" ] && ok "DESTDIR layout" || ko "missing:$missing"

cat >"$dest/core.c" <<'C'
#include <heapledger.h>
#include <stdio.h>
int main(void)
{
    hl_heap_t *h = hl_heap_create(NULL);
    void *p = hl_heap_malloc(h, 100);
    hl_heap_free(h, p);
    printf("heap %zu preload %s\n", hl_heap_check(h, 1),
           heapledger_version ? heapledger_version() : "absent");
    hl_heap_destroy(h);
    return 0;
}
C
cat >"$dest/traced.c" <<'C'
#include <heapledger.h>
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
    free(malloc(10));
    printf("preload %s\n", heapledger_version ? heapledger_version() : "absent");
    return 0;
}
C
pc="$dest/stage/opt/hl/lib/pkgconfig"
flags=$(PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$dest/stage pkg-config --cflags --libs heapledger-core)
gcc -o "$dest/core-staged" "$dest/core.c" $flags 2>"$dest/err" && ok "build through PKG_CONFIG_SYSROOT_DIR" ||
    ko "build through the staged .pc: $(head -3 "$dest/err")"

# A real prefix: the rpath in the .pc files points where the libraries are.
p=$dest/prefix
make -C "$top" --no-print-directory -s install PREFIX="$p" >/dev/null || { echo "install: make install PREFIX failed"; exit 1; }
export PKG_CONFIG_PATH=$p/lib/pkgconfig
unset LD_LIBRARY_PATH LD_PRELOAD

# heapledger.pc: the header only; the program links no heapledger library.
libs=$(pkg-config --libs heapledger)
gcc -o "$dest/traced" "$dest/traced.c" $(pkg-config --cflags heapledger) $libs 2>"$dest/err"
out=$("$dest/traced" 2>&1)
pre=$(LD_PRELOAD=$(pkg-config --variable=preload heapledger) "$dest/traced" 2>&1)
[[ "$libs" != *-l* ]] && [[ "$(needed "$dest/traced")" != *heapledger* ]] && [ "$out" = "preload absent" ] &&
    [ "$pre" = "preload 0.1.0" ] && ok "heapledger.pc links nothing; heapledger_version NULL alone, set under LD_PRELOAD" ||
    ko "heapledger.pc (libs '$libs', needed $(needed "$dest/traced"), out '$out', preloaded '$pre')"

# heapledger-core.pc, shared: runs through the rpath; the preload library is not linked.
gcc -o "$dest/core" "$dest/core.c" $(pkg-config --cflags --libs heapledger-core) 2>"$dest/err"
out=$("$dest/core" 2>&1)
n=$(needed "$dest/core")
[[ "$n" == *libheapledger_core.so* ]] && [[ "$n" != *"libheapledger.so"* ]] && [ "$out" = "heap 0 preload absent" ] &&
    ok "heapledger-core.pc shared: runs without LD_LIBRARY_PATH ($out)" || ko "heapledger-core.pc shared (needed $n, out '$out', $(head -2 "$dest/err"))"
exports=$(nm -D --defined-only "$p/lib/libheapledger_core.so" | awk '{print $3}' | grep -v '^hl_heap_\|^hl_options_' | tr '\n' ' ')
[ -z "$exports" ] && ok "libheapledger_core.so exports hl_heap_* and hl_options_* only" || ko "libheapledger_core.so also exports: $exports"

# heapledger-core.pc --static: the private libraries make a fully static program link.
slibs=$(pkg-config --static --libs heapledger-core)
gcc -static -o "$dest/core-static" "$dest/core.c" $(pkg-config --cflags heapledger-core) $slibs 2>"$dest/err"
out=$("$dest/core-static" 2>&1)
[[ "$slibs" == *-lunwind* ]] && [[ "$slibs" == *-lpthread* ]] && [ "$out" = "heap 0 preload absent" ] &&
    [ -z "$(needed "$dest/core-static")" ] && ok "heapledger-core.pc --static ($slibs): a static program runs" ||
    ko "heapledger-core.pc --static ('$slibs', out '$out', $(head -2 "$dest/err"))"

# heapledger-preload.pc: the malloc replacement linked in on purpose.
gcc -o "$dest/linked" "$dest/traced.c" $(pkg-config --cflags --libs heapledger-preload) 2>"$dest/err"
out=$("$dest/linked" 2>&1)
[[ "$(needed "$dest/linked")" == *"libheapledger.so"* ]] && [ "$out" = "preload 0.1.0" ] &&
    ok "heapledger-preload.pc links the malloc replacement ($out)" || ko "heapledger-preload.pc (out '$out', $(head -2 "$dest/err"))"
[[ "$(pkg-config --static --libs heapledger-preload)" == *-lunwind*-ldl* || "$(pkg-config --static --libs heapledger-preload)" == *-ldl*-lunwind* ]] &&
    ok "heapledger-preload.pc --static names -ldl and libunwind" || ko "heapledger-preload.pc --static: $(pkg-config --static --libs heapledger-preload)"

# RPATH=0: no rpath in the .pc files (then ldconfig or LD_LIBRARY_PATH finds the libraries).
make -C "$top" --no-print-directory -s install PREFIX="$dest/norpath" RPATH=0 >/dev/null

gcc -o "$dest/core-norpath" "$dest/core.c" $(PKG_CONFIG_PATH=$dest/norpath/lib/pkgconfig pkg-config --cflags --libs heapledger-core)
out=$(LD_LIBRARY_PATH=$dest/norpath/lib "$dest/core-norpath" 2>&1)
! grep -q -- "-Wl,-rpath" "$dest/norpath/lib/pkgconfig/heapledger-core.pc" && ! readelf -d "$dest/core-norpath" | grep -q 'RUNPATH\|RPATH' &&
    [ "$out" = "heap 0 preload absent" ] && ok "RPATH=0: no rpath; runs with the library path given" || ko "RPATH=0 (out '$out')"

echo "install: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
