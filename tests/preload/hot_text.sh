#!/usr/bin/env bash
# libheapledger.so's text is ordered so that what an untraced process runs lies in the text's
# first 64 KiB, one fault-around window of the kernel (liballoc/hot_text.ld, docs/allocator.md
# "Fixed cost per process"): checked on the library's symbols (the malloc family and its slow
# paths inside the window, the report, stack walker and tracing code beyond it), then the text
# resident in an untraced `cat` is shown (64 KiB on this machine, 132 before: all of it; the
# kernel may map more where the page cache holds the file in large folios, so it is not asserted).
# usage: hot_text.sh LIBHEAPLEDGER.so
set -u
lib=$1
pass=0 fail=0
check() { # name, condition result
    if [ "$2" -eq 0 ]; then echo "hot_text [$1]: ok"; pass=$((pass + 1)); else
        echo "hot_text [$1]: FAILED"; fail=$((fail + 1)); fi
}
window=65536
text=$(readelf -lW "$lib" | awk '$1 == "LOAD" && $8 == "E" {print $3; exit}')
[ -n "$text" ] || { echo "hot_text: no executable segment in $lib"; exit 1; }
syms=$(nm "$lib")
addr() { awk -v s="$1" '$3 == s {print "0x" $1; exit}' <<<"$syms"; }
where() { # symbol -> offset from the text's start, or "missing"
    local a
    a=$(addr "$1")
    if [ -z "$a" ]; then echo missing; else echo $((a - text)); fi
}
hot="malloc free calloc realloc posix_memalign aligned_alloc memalign malloc_usable_size
     hl_malloc_slow hl_free_slow hl_tiny_alloc_slow hl_tcap_slow hl_mid_alloc hl_mid_free
     hl_tlsf_free hl_large_alloc hl_large_free hl_tls_bind hl_decay_run hl_options_from_env
     hl_harden_thread_flush hl_hcache_slot_of hl_hcache_drop
     hl_leakscan_at_exit"
cold="hl_report hl_uwf_walk hl_trace_emit_alloc hl_trace_emit_free hl_symbolize"
bad=""
for s in $hot; do
    o=$(where "$s")
    if [ "$o" = missing ] || [ "$o" -ge "$window" ]; then bad="$bad $s@$o"; fi
done
[ -z "$bad" ]
check "the untraced paths lie in the text's first 64 KiB${bad:+ (not:$bad)}" $?
bad=""
for s in $cold; do
    o=$(where "$s")
    if [ "$o" = missing ] || [ "$o" -lt "$window" ]; then bad="$bad $s@$o"; fi
done
[ -z "$bad" ]
check "reports, the stack walker and tracing lie beyond it${bad:+ (not:$bad)}" $?
r=$(LD_PRELOAD=$lib cat /proc/self/smaps | awk -v lib="$(basename "$lib")" '
    /^[0-9a-f]+-[0-9a-f]+ /{x = ($2 ~ /x/ && $6 ~ lib)} x && /^Rss:/{t += $2} END{print t + 0}')
echo "hot_text: an untraced cat has $r KiB of the library's text resident"
echo "hot_text: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
