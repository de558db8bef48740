#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# plot-scale.sh: bus bandwidth against nodes from sim-scale.sh's rows, in the
# style of ddl-plot: one line per "what ran" of one experiment, one size.
#
#   bench/sim/plot-scale.sh scale.tsv EXPERIMENT SIZE_BYTES OUT.png [TITLE]   (needs gnuplot)
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: plot-scale.sh scale.tsv EXPERIMENT SIZE_BYTES OUT.png [TITLE]" >&2; exit 2; }
tsv=$1 exp=$2 size=$3 out=$4 title=${5:-"$2, $3 bytes per GPU"}
command -v gnuplot > /dev/null || { echo "plot-scale.sh: gnuplot not found (apt-get install gnuplot-nox)" >&2; exit 2; }
dat=$(mktemp -d)
trap 'rm -rf "$dat"' EXIT
awk -F'\t' -v e="$exp" -v s="$size" -v d="$dat" '$1 == e && $8 == s && $9 != "timeout" {
    f = $7; gsub(/[^A-Za-z0-9_]/, "_", f); print $2, $10 > (d "/" f ".dat"); names[f] = $7 }
    END { for (f in names) print f "\t" names[f] > (d "/names") }' "$tsv"
[ -s "$dat/names" ] || { echo "plot-scale.sh: no rows for $exp at $size bytes in $tsv" >&2; exit 1; }
{
    echo "set terminal pngcairo size 900,560 font 'sans,11' noenhanced"
    echo "set output '$out'"
    echo "set title \"$title\""
    echo "set logscale x 2; set xlabel 'nodes'; set ylabel 'bus bandwidth (GB/s)'"
    echo "set key bottom left; set grid; set yrange [0:*]"
    sep="plot"
    while IFS=$'\t' read -r f name; do
        sort -n "$dat/$f.dat" -o "$dat/$f.dat"
        printf "%s '%s' using 1:2 with linespoints lw 2 title '%s'" "$sep" "$dat/$f.dat" "$name"
        sep=","
    done < "$dat/names"
    echo
} | gnuplot
