#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# docs/architecture.md against the tree: every file it names exists (a name
# with folders, as algo/model.c, at that place under the top, runtime/ or
# spank/; a bare name somewhere in the tree), and every function or type it
# names in backquotes (ddl_..., or name()) is defined or declared in the
# sources, and one it places in a file, "(`folder/file.c`, `function`)", is
# defined in that file.  A renamed or moved file or function fails here until the guide
# says where it went.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top_srcdir" || exit 1
doc=docs/architecture.md
fails=0
files=$(git ls-files -co --exclude-standard 2> /dev/null || find . -type f | sed 's|^\./||')
[ -n "$files" ] || { echo "FAIL: cannot list the tree's files"; exit 1; }
nfiles=0
for name in $(grep -oE '[A-Za-z0-9_./-]+\.(c|h|def|cu|sh|md|lua|py|map|am|ac)\b' "$doc" | sort -u); do
    name=${name#./}
    [[ $name == */* ]] || name=/$name
    nfiles=$((nfiles + 1))
    if [[ $name == /* ]]; then
        grep -qE "(^|/)${name#/}$" <<< "$files" && continue
    else
        for prefix in "" runtime/ spank/; do
            grep -qxF "$prefix$name" <<< "$files" && continue 2
        done
    fi
    echo "FAIL: $doc names ${name#/}, which is not in the tree"
    fails=1
done
sources=$(grep -E '\.(c|h|cu|def|am|sh)$' <<< "$files")
nfuncs=0
for fn in $(grep -oE '`[a-z_][a-z0-9_]*(\(\))?`' "$doc" | tr -d '`()' | grep -E '^ddl_|_' | sort -u); do
    nfuncs=$((nfuncs + 1))
    # shellcheck disable=SC2086
    grep -qw -- "$fn" $sources 2> /dev/null && continue
    echo "FAIL: $doc names $fn, which no source defines or uses"
    fails=1
done
# Where the guide places a function, "(`folder/file.c`, `function`)", the
# file defines it (a line that begins with its return type and has the name
# and an opening parenthesis, not a declaration).
nplaced=0
while read -r group; do
    file=$(grep -oE '`[a-z_/]+\.[ch]`' <<< "$group" | head -1 | tr -d '`')
    path=runtime/$file
    [ -f "$path" ] || path=$file
    for fn in $(grep -oE '`[a-z_]+`' <<< "$group" | tr -d '`'); do
        nplaced=$((nplaced + 1))
        grep -qE "^[a-z].*[ *]$fn\(.*[^;]$" "$path" 2> /dev/null && continue
        echo "FAIL: $doc places $fn in $file, which does not define it"
        fails=1
    done
done < <(tr '\n' ' ' < "$doc" | grep -oE '\(`[a-z_/]+\.[ch]`(, `[a-z_]+`)+\)')
# One wait, one timeout message: every timeout is said in ddl_timed_out's
# words (core/poll.c); a message of its own elsewhere fails.
own=$(grep -rnE --include='*.c' --include='*.cu' '"[^"]*\(DDL_TIMEOUT\)' runtime | grep -v '^runtime/core/poll\.c:')
if [ -n "$own" ]; then
    echo "FAIL: timeout messages of their own (say them with ddl_timed_out, core/poll.h):"
    echo "$own"
    fails=1
fi
[ $fails -eq 0 ] &&
    echo "PASS: the $nfiles files and $nfuncs functions and types $doc names are in the tree; $nplaced placed in a file are defined there"
exit $fails
