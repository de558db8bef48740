#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Turn ddl-bench -J output into a PNG: bus bandwidth against message size for
# ddl and the system MPI_Allreduce, with the link limit as a horizontal line.
#
#   ddl-plot RESULT.json OUT.png [LINK_LIMIT_GBPS] [TITLE]   (installed; bench/plot-bench.sh here)
#
# Several JSON files may be joined with commas (e.g. a ddl run and a separate
# -m mpi run): ddl curves come from files that have ddl times, MPI from those
# that have MPI times.
set -euo pipefail
usage() { echo "usage: ddl-plot RESULT.json[,MORE.json] OUT.png [LINK_LIMIT_GBPS] [TITLE]   (needs gnuplot)"; }
case ${1:-} in
    -h | --help) usage; exit 0 ;;
    --version) echo "ddl-plot (DDL lanes) %VERSION%"; exit 0 ;; # filled in when installed as ddl-plot
esac
[ $# -ge 2 ] || { usage >&2; exit 2; }
inputs=$1 out=$2 limit=${3:-} title=${4:-ddl-bench}
dat=$(mktemp -d)
trap 'rm -rf "$dat"' EXIT
/usr/bin/python3 - "$inputs" "$dat" <<'PY'
import json, sys
files, out = sys.argv[1].split(","), sys.argv[2]
ddl, mpi = {}, {}
for f in files:
    d = json.load(open(f))
    for r in d["results"]:  # a run measures each of these, or has null
        if r["out_of_place"] and r["out_of_place"]["time"] > 0:
            ddl[r["size"]] = r["out_of_place"]["busbw"]
        if r["mpi"] and r["mpi"]["time"] > 0:
            mpi[r["size"]] = r["mpi"]["busbw"]
for name, series in (("ddl", ddl), ("mpi", mpi)):
    with open(f"{out}/{name}.dat", "w") as f:
        for size in sorted(series):
            f.write(f"{size} {series[size]}\n")
PY
{
    echo "set terminal pngcairo size 900,560 font 'sans,11' noenhanced"
    echo "set output '$out'"
    echo "set title \"$title\""
    echo "set logscale x 2; set format x '%.0b%B'"
    echo "set xlabel 'message size (bytes)'; set ylabel 'bus bandwidth (GB/s)'"
    echo "set key top left; set grid"
    plot="plot '$dat/ddl.dat' using 1:2 with linespoints lw 2 title 'ddl_allreduce'"
    [ -s "$dat/mpi.dat" ] && plot+=", '$dat/mpi.dat' using 1:2 with linespoints lw 2 title 'MPI_Allreduce'"
    [ -n "$limit" ] && plot+=", $limit with lines dt 2 lw 2 title 'link limit ($limit GB/s)'"
    echo "$plot"
} | gnuplot
echo "wrote $out"
