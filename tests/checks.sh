# tests/checks.sh — the assertions the shell test suites share (sourced). Each prints what it
# expected and what it found, and returns 1 on a mismatch; the suites count the failures.
#   note TEXT…                     an indented line of the test's output
#   check DESCRIPTION EXPECTED ACTUAL
#   contains FILE TEXT             TEXT is in FILE (else FILE's first CONTAINS_LINES lines, 20)
#   sql DB QUERY                   sqlite3, no header, batch mode
#   run TEST                       run the function TEST, count it in pass/fail, its name in failed
note() { echo "    $*"; }
check() {
    [ "$2" == "$3" ] && return 0
    note "FAIL: $1: expected '$2', got '$3'"
    return 1
}
contains() {
    grep -qF -- "$2" "$1" && return 0
    note "FAIL: '$2' not in $1:"
    sed 's/^/      | /' "$1" | head -"${CONTAINS_LINES:-20}"
    return 1
}
sql() { sqlite3 -batch -noheader "$1" "$2"; }
run() {
    local t=$1
    echo "  $t"
    if "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)) failed+=("$t"); fi
}
