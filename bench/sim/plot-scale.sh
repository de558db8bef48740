#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# plot-scale.sh: plots of sim-scale.sh's rows, in the style of ddl-plot.
#
#   bench/sim/plot-scale.sh scale.tsv EXPERIMENT SIZE_BYTES OUT.png [TITLE]
#       bus bandwidth against nodes: one line per "what ran" of EXPERIMENT at one size
#   bench/sim/plot-scale.sh --speedup scale.tsv EXPERIMENT NODES OUT.png [TITLE]
#       speed-up over "mpi ompi" against lanes per GPU: one line per size, the
#       "ddl lanes L" rows of EXPERIMENT on NODES nodes (the inject experiment)
# Needs gnuplot.
set -euo pipefail
speedup=0
[ "${1:-}" = --speedup ] && { speedup=1; shift; }
[ $# -ge 4 ] || { echo "usage: plot-scale.sh [--speedup] scale.tsv EXPERIMENT SIZE_BYTES|NODES OUT.png [TITLE]" >&2; exit 2; }
tsv=$1 exp=$2 at=$3 out=$4
command -v gnuplot > /dev/null || { echo "plot-scale.sh: gnuplot not found (apt-get install gnuplot-nox)" >&2; exit 2; }
dat=$(mktemp -d)
trap 'rm -rf "$dat"' EXIT
if [ "$speedup" = 1 ]; then
    title=${5:-"$exp, $at nodes: speed-up over MPI_Allreduce, one rank per GPU"}
    xlabel="lanes per GPU" ylabel="speed-up over mpi ompi" key="top left"
    # Columns: 1 experiment, 2 nodes, 4 lanes, 7 what ran, 8 size, 9 simulated us.
    awk -F'\t' -v e="$exp" -v n="$at" -v d="$dat" '$1 == e && $2 == n && $9 != "timeout" {
        if ($7 == "mpi ompi") mpi[$8] = $9; else if ($7 ~ /^ddl lanes /) { t[$8, $4] = $9; sizes[$8] = 1; lanes[$4] = 1 } }
        END {
            for (s in sizes) {
                if (!(s in mpi)) continue
                f = "s" s; names[f] = (s >= 1048576 ? s / 1048576 " MiB" : s " B")
                for (l in lanes) if ((s, l) in t) print l, mpi[s] / t[s, l] > (d "/" f ".dat")
            }
            for (f in names) print f "\t" names[f] > (d "/names")
        }' "$tsv"
else
    title=${5:-"$exp, $at bytes per GPU"}
    xlabel="nodes" ylabel="bus bandwidth (GB/s)" key="bottom left"
    awk -F'\t' -v e="$exp" -v s="$at" -v d="$dat" '$1 == e && $8 == s && $9 != "timeout" {
        f = $7; gsub(/[^A-Za-z0-9_]/, "_", f); print $2, $10 > (d "/" f ".dat"); names[f] = $7 }
        END { for (f in names) print f "\t" names[f] > (d "/names") }' "$tsv"
fi
[ -s "$dat/names" ] || { echo "plot-scale.sh: no rows for $exp at $at in $tsv" >&2; exit 1; }
{
    echo "set terminal pngcairo size 900,560 font 'sans,11' noenhanced"
    echo "set output '$out'"
    echo "set title \"$title\""
    echo "set logscale x 2; set xlabel '$xlabel'; set ylabel '$ylabel'"
    echo "set key $key; set grid; set yrange [0:*]"
    sep="plot"
    while IFS=$'\t' read -r f name; do
        sort -n "$dat/$f.dat" -o "$dat/$f.dat"
        printf "%s '%s' using 1:2 with linespoints lw 2 title '%s'" "$sep" "$dat/$f.dat" "$name"
        sep=","
    done < <(sort -t$'\t' -k1,1V "$dat/names")
    echo
} | gnuplot
