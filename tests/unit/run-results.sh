#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The commands that bench/RESULTS.md (the current figures) and bench/JOURNAL.md
# give run as written, as far as this can be checked without the cluster
# they ran on: every ddl-bench and ddl-tune in their sh blocks takes its
# options (the same arguments with --dry-run, which parses them and exits
# before MPI), and every script of the current page exists and parses.  Lines with placeholders ([...], <...>) are skipped in the
# journal; the current page has none.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
fails=0 checked=0
fail() { echo "FAIL: $*"; fails=1; }

# sh_lines FILE: the lines of FILE's sh blocks (indented journal commands
# too), comments and continuations joined.
sh_lines() {
    awk '/^```sh/ { f = 1; next } /^```/ { f = 0 } f || /^    [^ ]/' "$1" | sed 's/^ *//; s/ *# .*//' |
        awk '/\\$/ { sub(/\\$/, ""); held = held $0; next } { print held $0; held = "" }'
}

# check_line FILE LINE STRICT: the tools and scripts LINE runs.
check_line() {
    local file=$1 line=$2 strict=$3 words i w tool
    if [[ $line == *[\[\<]* ]]; then
        [ "$strict" = 1 ] && fail "$file: a placeholder in a command of the current page: $line"
        return
    fi
    read -r -a words <<< "${line//\"/}"
    for i in "${!words[@]}"; do
        w=${words[$i]}
        case $w in
            *=*) continue ;; # a variable (DDL_BENCH=build-mpich/ddl-bench names a tool, runs none)
            */ddl-bench | ddl-bench | */ddl-tune | ddl-tune)
                tool=$top_builddir/$(basename "$w")
                [ -x "$tool" ] || continue
                checked=$((checked + 1))
                "$tool" "${words[@]:$((i + 1))}" --dry-run > /dev/null 2>&1 ||
                    fail "$file: $(basename "$w") refuses the options of: $line"
                return ;;
            bench/*.sh | bench/sim/*.sh)
                [ "$strict" = 1 ] || continue
                checked=$((checked + 1))
                if [ ! -f "$top_srcdir/$w" ]; then
                    fail "$file: $w does not exist: $line"
                elif ! bash -n "$top_srcdir/$w"; then
                    fail "$file: $w does not parse"
                fi ;;
        esac
    done
}

for page in RESULTS:1 JOURNAL:0; do
    file=bench/${page%:*}.md strict=${page#*:}
    [ -f "$top_srcdir/$file" ] || { fail "$file is missing"; continue; }
    while IFS= read -r line; do
        [ -n "$line" ] && check_line "$file" "$line" "$strict"
    done < <(sh_lines "$top_srcdir/$file")
done
[ "$checked" -gt 10 ] || fail "only $checked commands found to check"
[ "$fails" -eq 0 ] && echo "PASS: $checked commands of bench/RESULTS.md and bench/JOURNAL.md parse"
exit $fails
