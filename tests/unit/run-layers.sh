#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The runtime's layers, from the #include lines: a file may include headers of
# its own folder and of the folders below it, never above.  Bottom to top:
#
#   core  gpu  transport  algo  select  engine  root  powerai tools   (runtime/)
#
# root/ is the composition root (create.c): it builds every layer.
#   spank (the plugin: core's pure parsers below it, nothing else of the runtime)
#
# Since every upward include closes a circle between folders, no upward
# include means no circle.  The includes that go up today are listed in
# tests/unit/layers.allow ("file -> header" a line): a new one fails, and so
# does a listed one that is gone, so that the list only shrinks.
#   tests/unit/run-layers.sh [--list]    --list: print today's upward includes
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top_srcdir" || exit 1
allow=tests/unit/layers.allow
rank() {
    case $1 in
        runtime/core) echo 0 ;; runtime/gpu) echo 1 ;; runtime/transport) echo 2 ;; runtime/algo) echo 3 ;;
        runtime/select) echo 4 ;; runtime/engine) echo 5 ;; runtime/root) echo 6 ;;
        runtime/powerai | runtime/tools) echo 7 ;; spank | spank/tools) echo 8 ;; *) echo -1 ;;
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
new=$(LC_ALL=C comm -23 "$up" <(grep -v '^#' "$allow" | LC_ALL=C sort))
gone=$(LC_ALL=C comm -13 "$up" <(grep -v '^#' "$allow" | LC_ALL=C sort))
if [ -n "$new" ]; then
    echo "FAIL: includes that go up a layer (bottom to top: core gpu transport algo select engine root powerai/tools; spank uses core only):"
    sed 's/^/  /' <<< "$new"
    fails=1
fi
if [ -n "$gone" ]; then
    echo "FAIL: $allow lists includes that are gone; remove them from the list:"
    sed 's/^/  /' <<< "$gone"
    fails=1
fi
if [ $fails -eq 0 ]; then
    if [ -s "$up" ]; then echo "PASS: no new upward include ($(wc -l < "$up") known ones in $allow, to be removed)"
    else echo "PASS: no include goes up a layer"; fi
fi
exit $fails
