#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The runtime's layers, from the #include lines: a file may include headers of
# its own folder and of the folders below it, never above.  Bottom to top:
#
#   core  gpu  transport  agree  algo  select  engine  root  powerai tools   (runtime/)
#
# root/ is the composition root (create.c): it builds every layer.
#   spank (the plugin: core's pure parsers below it, nothing else of the runtime)
#
# Since every upward include closes a circle between folders, no upward
# include means no circle.  The includes that go up today are listed in
# tests/unit/layers.allow ("file -> header" a line): a new one fails, and so
# does a listed one that is gone, so that the list only shrinks.
# The built objects are read the same way: a symbol a file uses must be
# defined in its layer or below.
#   tests/unit/run-layers.sh [--list]    --list: print today's upward includes
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top_srcdir" || exit 1
allow=tests/unit/layers.allow
rank() {
    case $1 in
        runtime/core) echo 0 ;; runtime/gpu) echo 1 ;; runtime/transport) echo 2 ;; runtime/agree) echo 3 ;;
        runtime/algo) echo 4 ;; runtime/select) echo 5 ;; runtime/engine) echo 6 ;; runtime/root) echo 7 ;;
        runtime/powerai | runtime/tools) echo 8 ;; spank | spank/tools) echo 9 ;; *) echo -1 ;;
    esac
}
# Every project header and row table (.def) by name, with its folder (names
# are unique: one include path).
declare -A folder
while read -r h; do
    name=${h##*/}
    [ -z "${folder[$name]:-}" ] || { echo "FAIL: two headers named $name: ${folder[$name]} and ${h%/*}"; exit 1; }
    folder[$name]=${h%/*}
done < <(find runtime spank \( -name '*.h' -o -name '*.def' \) | sort)
up=$(mktemp)
trap 'rm -f "$up" "$up.raw"' EXIT
while read -r f; do
    from=${f%/*}
    rf=$(rank "$from")
    [ "$rf" -ge 0 ] || { echo "FAIL: $f is in a folder without a layer: add it to run-layers.sh"; exit 1; }
    while read -r inc; do
        to=${folder[$inc]:-}
        [ -n "$to" ] && [ "$to" != "$from" ] || continue
        rt=$(rank "$to")
        # The plugin uses only core's pure parts.
        if [ "$rf" -gt "$rt" ] && [[ $from != spank* || $to == runtime/core ]]; then continue; fi
        [[ $from == spank* && $to == spank* ]] && continue
        echo "$f -> $inc"
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done < <(find runtime spank \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) | sort) > "$up.raw" || exit 1
LC_ALL=C sort "$up.raw" > "$up"
if [ "${1:-}" = --list ]; then
    cat "$up"
    exit 0
fi
fails=0
# against_list FOUND LIST WHAT: what is found (lines) against a list that
# only shrinks: a new line fails with WHAT, and so does a listed one that is gone.
against_list() {
    local found new gone
    found=$(grep . <<< "$1" | LC_ALL=C sort)
    new=$(LC_ALL=C comm -23 <(echo "$found") <(grep -v '^#' "$2" | LC_ALL=C sort) | grep .)
    gone=$(LC_ALL=C comm -13 <(echo "$found") <(grep -v '^#' "$2" | LC_ALL=C sort) | grep .)
    if [ -n "$new" ]; then
        echo "FAIL: $3:"
        sed 's/^/  /' <<< "$new"
        fails=1
    fi
    if [ -n "$gone" ]; then
        echo "FAIL: $2 lists $4 that are gone; remove them from the list:"
        sed 's/^/  /' <<< "$gone"
        fails=1
    fi
}
against_list "$(cat "$up")" "$allow" "includes that go up a layer (bottom to top: core gpu transport agree algo select engine root powerai/tools; spank uses core only)" includes
# The tools read no communicator's insides: no file of runtime/tools reaches
# core/comm.h, directly or through the headers it includes (ddl-tune asks
# through its interface, select/tune.h).
includes_of() { sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$1"; }
for f in runtime/tools/*.c; do
    declare -A seen=()
    todo=$(includes_of "$f")
    while [ -n "$todo" ]; do
        next=""
        for inc in $todo; do
            [ -z "${seen[$inc]:-}" ] && [ -n "${folder[$inc]:-}" ] || continue
            seen[$inc]=1
            next+=" $(includes_of "${folder[$inc]}/$inc")"
        done
        todo=$next
    done
    if [ -n "${seen[comm.h]:-}" ]; then
        echo "FAIL: $f reaches core/comm.h: a tool uses the public API and its tool interface, not the communicator's insides"
        fails=1
    fi
    unset seen
done
# The same rule for what the objects use: a function or variable declared
# low but defined higher passes the include check, not this one.  Reads the
# built library's objects (libddl_core) and the CUDA module's (libddl_cuda),
# those whose source is still there.
top_builddir=${top_builddir:-$top_srcdir}
objs=()
for o in "$top_builddir"/runtime/*/.libs/libddl_core_la-*.o "$top_builddir"/runtime/*/.libs/libddl_cuda_la-*.o; do
    [ -e "$o" ] || continue
    dir=${o%/.libs/*}
    base=${o##*/libddl_c[a-z]*_la-}
    base=${base%.o}
    src=runtime/${dir##*/}/$base
    [ -e "$src.c" ] || [ -e "$src.cu" ] && objs+=("$o") # else a stale object of a moved file
done
# nm -A: "OBJECT: [VALUE] TYPE SYMBOL"; each object's layer by the rank() above.
ranks=$(for d in core gpu transport agree algo select engine root powerai tools; do echo "runtime/$d $(rank runtime/$d)"; done)
symbols_up=0
if [ ${#objs[@]} -gt 0 ]; then
    found=$(nm -A "${objs[@]}" | awk -v ranks="$ranks" '
        BEGIN { n = split(ranks, r, "\n"); for (i = 1; i <= n; i++) { split(r[i], kv, " "); rank[kv[1]] = kv[2] } }
        function source(o,   d, b) { d = o; sub(/\/\.libs\/.*/, "", d); sub(/.*\/runtime\//, "runtime/", d)
                                     b = o; sub(/.*libddl_c[a-z]*_la-/, "", b); sub(/\.o:.*/, "", b); return d "/" b }
        { obj = $1; sym = $NF; type = $(NF - 1) }
        type ~ /^[TDBR]$/ { def[sym] = source(obj) }
        type == "U" { use[++u] = source(obj) " " sym }
        END { for (i = 1; i <= u; i++) { split(use[i], x, " "); d = def[x[2]]; if (d == "") continue
                  f = x[1]; sub(/\/[^\/]*$/, "", f); t = d; sub(/\/[^\/]*$/, "", t)
                  if (rank[t] > rank[f]) print "  " x[1] ".c uses " x[2] " of " d ".c" } }')
    [ $? -eq 0 ] || { echo "FAIL: the symbols' check itself failed (nm or awk)"; symbols_up=1; }
    if [ -n "$found" ]; then
        echo "FAIL: what files use from a layer above (declared below, defined above):"
        echo "$found"
        symbols_up=1
    fi
fi
# Circles: files that use each other's functions, directly or around a ring
# (a -> b -> c -> a), which the layers cannot forbid inside one folder.  The
# known ones are listed in tests/unit/circles.allow, one a line, its files
# sorted and joined by " <-> "; a new one fails, and so does a listed one
# that is gone, so that the list only shrinks.
circles_allow=tests/unit/circles.allow
ncircles=0
if [ ${#objs[@]} -gt 0 ]; then
    circles=$(nm -A "${objs[@]}" | awk '
        function source(o,   d, b) { d = o; sub(/\/\.libs\/.*/, "", d); sub(/.*\/runtime\//, "runtime/", d)
                                     b = o; sub(/.*libddl_c[a-z]*_la-/, "", b); sub(/\.o:.*/, "", b); return d "/" b }
        { obj = $1; sym = $NF; type = $(NF - 1) }
        type ~ /^[TDBR]$/ { def[sym] = source(obj) }
        type == "U" { use[++u] = source(obj) " " sym }
        END { for (i = 1; i <= u; i++) { split(use[i], x, " "); d = def[x[2]]
                  if (d != "" && d != x[1]) print x[1] ".c " d ".c" } }' | sort -u | python3 -c '
import sys
sys.setrecursionlimit(10000)
graph = {}
for line in sys.stdin:
    a, b = line.split()
    graph.setdefault(a, set()).add(b)
    graph.setdefault(b, set())
index, low, stack, on, out = {}, {}, [], set(), []
def visit(v):  # Tarjan: the strongly connected components
    index[v] = low[v] = len(index)
    stack.append(v); on.add(v)
    for w in graph[v]:
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1:
            out.append(" <-> ".join(sorted(comp)))
for v in sorted(graph):
    if v not in index:
        visit(v)
print("\n".join(sorted(out)))')
    [ $? -eq 0 ] || { echo "FAIL: the circles' check itself failed (nm, awk or python3)"; fails=1; }
    ncircles=$(grep -c . <<< "$circles")
    against_list "$circles" "$circles_allow" \
        "files that use each other (a circle; break it by moving what both need down or into one file)" circles
fi
# The CUDA module calls into libddl: every function it needs must leave
# libddl (runtime/core/libddl.map), or the module fails to load at run time.
module=$top_builddir/.libs/libddl-cuda.so
if [ -f "$module" ] && [ -f "$top_builddir/.libs/libddl.so" ]; then
    missing=$(LC_ALL=C comm -23 <(nm -D --undefined-only "$module" | awk '$2 ~ /^ddl_/ { print $2 }' | LC_ALL=C sort -u) \
              <(nm -D --defined-only "$top_builddir/.libs/libddl.so" | awk '{ print $3 }' | LC_ALL=C sort -u))
    if [ -n "$missing" ]; then
        echo "FAIL: the CUDA module needs what libddl does not export (add it to runtime/core/libddl.map):"
        sed 's/^/  /' <<< "$missing"
        fails=1
    fi
fi
[ $symbols_up -eq 0 ] || fails=1
if [ $fails -eq 0 ]; then
    if [ -s "$up" ]; then echo "PASS: no new upward include ($(wc -l < "$up") known ones in $allow, to be removed)"
    else echo "PASS: no include goes up a layer"; fi
    [ ${#objs[@]} -gt 0 ] && echo "PASS: no object uses a symbol of a layer above (${#objs[@]} objects of libddl_core and the CUDA module)" ||
        echo "# the symbols' check needs the built library (make), not found under $top_builddir"
    [ ${#objs[@]} -eq 0 ] || { [ "$ncircles" -gt 0 ] && echo "PASS: no new circle ($ncircles known ones in $circles_allow, to be removed)" ||
        echo "PASS: no two files use each other, directly or around a ring"; }
fi
exit $fails
