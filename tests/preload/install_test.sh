#!/usr/bin/env bash
# `make install` into a scratch DESTDIR, then build a program against the installed header and
# library through pkg-config and run it with the installed preload library.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
make -C "$top" --no-print-directory -s install PREFIX=/opt/hl DESTDIR="$dest" >/dev/null
for f in lib/libheapledger.so lib/libheapledger.a include/heapledger.h lib/pkgconfig/heapledger.pc; do
    [ -e "$dest/opt/hl/$f" ] || { echo "install: missing $f"; exit 1; }
done
cat > "$dest/prog.c" <<'C'
#include <heapledger.h>
#include <stdio.h>
int main(void)
{
    hl_heap_t *h = hl_heap_create(NULL);
    void *p = hl_heap_malloc(h, 100);
    hl_heap_free(h, p);
    printf("%s %zu\n", heapledger_version(), hl_heap_check(h, 1));
    hl_heap_destroy(h);
    return 0;
}
C
pc="$dest/opt/hl/lib/pkgconfig"
flags=$(PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$dest pkg-config --cflags --libs heapledger)
gcc -o "$dest/prog" "$dest/prog.c" $flags -Wl,-rpath,"$dest/opt/hl/lib"
out=$("$dest/prog")
case "$out" in
*" 0") echo "install: ok ($out)" ;;
*) echo "install: FAILED: $out"; exit 1 ;;
esac
