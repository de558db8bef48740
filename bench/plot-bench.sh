#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Turn ddl-bench -J output into a PNG of three panels against message size
# (log axis): the time of ddl (out-of-place and in-place) and of the system
# MPI_Allreduce (log axis), the speed-up over MPI (MPI time / ddl time, with
# 1 marked), and the bus bandwidth with the link limit as a horizontal line.
# The title names the layout (nodes x GPUs x lanes, helpers, buffers, type,
# op) unless one is given.
#
#   ddl-plot [--script FILE] RESULT.json OUT.png [LINK_LIMIT_GBPS] [TITLE]   (installed; bench/plot-bench.sh here)
#
# Several JSON files may be joined with commas (e.g. a ddl run and a separate
# --mode mpi run): ddl curves come from files that have ddl times, MPI from those
# that have MPI times, and the speed-up from sizes that have both.
set -euo pipefail
usage() { echo "usage: ddl-plot [--script FILE] RESULT.json[,MORE.json] OUT.png [LINK_LIMIT_GBPS] [TITLE]   (needs gnuplot)"; }
script=
case ${1:-} in
    -h | --help) usage; exit 0 ;;
    --version) echo "ddl-plot (DDL lanes) %VERSION%"; exit 0 ;; # filled in when installed as ddl-plot
    --script) [ $# -ge 2 ] || { usage >&2; exit 2; }; script=$2; shift 2 ;;
esac
[ $# -ge 2 ] || { usage >&2; exit 2; }
inputs=$1 out=$2 limit=${3:-} title=${4:-}
dat=$(mktemp -d)
trap 'rm -rf "$dat"' EXIT
# The series, one file each (size and value), and the layout's title.
layout=$(/usr/bin/python3 - "$inputs" "$dat" <<'PY'
import json, sys
files, out = sys.argv[1].split(","), sys.argv[2]
series = {name: {} for name in ("oop", "ip", "mpi", "oop_bw", "ip_bw", "mpi_bw")}
title = None
for f in files:
    d = json.load(open(f))
    for r in d["results"]:  # a run measures each of these, or has null
        for key, name in (("out_of_place", "oop"), ("in_place", "ip"), ("mpi", "mpi")):
            if r.get(key) and r[key]["time"] > 0:
                series[name][r["size"]] = r[key]["time"]
                series[name + "_bw"][r["size"]] = r[key]["busbw"]
    lay = d.get("layout")
    if title is None and lay:
        first = d["results"][0] if d["results"] else {}
        title = (f"{lay['nodes']} nodes x {lay['gpus_per_node']} GPUs x {lay['lanes']} lanes, "
                 f"{lay['helpers']} helpers, {lay['buffers']} buffers"
                 + (f", {first['type']} {first['redop']}" if first else ""))
for name in ("oop", "ip"):  # speed-up over MPI where both were measured
    series[name + "_speedup"] = {size: series["mpi"][size] / t for size, t in series[name].items() if size in series["mpi"]}
# gnuplot datablocks, so that the script (--script) stands alone; the names of
# the series that have points, one a line.
with open(f"{out}/data.gp", "w") as f, open(f"{out}/names", "w") as n:
    for name, values in series.items():
        if values:
            n.write(name + "\n")
            f.write(f"${name} << EOD\n" + "".join(f"{size} {values[size]}\n" for size in sorted(values)) + "EOD\n")
print(title or "")
PY
)
title=${title:-ddl-bench: ${layout:-results}}
# curves NAME TITLE ...: the plot clauses of the series that have points.
curves() {
    local list=
    while [ $# -ge 2 ]; do
        grep -qx "$1" "$dat/names" && list+="${list:+, }\$$1 using 1:2 with linespoints lw 2 title '$2'"
        shift 2
    done
    echo "$list"
}
gp=$dat/plot.gp
{
    echo "set terminal pngcairo size 900,1100 font 'sans,11' noenhanced"
    echo "set output '$out'"
    cat "$dat/data.gp"
    echo "set multiplot layout 3,1 title \"$title\""
    echo "set logscale x 2; set format x '%.0b%B'; set grid; set key top left"
    echo "set xlabel 'message size (bytes)'"
    echo "set logscale y; set format y '%g'; set ylabel 'time (us, median)'"
    echo "plot $(curves oop 'ddl_allreduce out-of-place' ip 'ddl_allreduce in-place' mpi 'MPI_Allreduce')"
    echo "unset logscale y; set ylabel 'speed-up over MPI_Allreduce (MPI time / ddl time)'"
    plot=$(curves oop_speedup 'out-of-place' ip_speedup 'in-place')
    echo "plot ${plot:+$plot, }1 with lines dt 2 lw 1 title 'as fast as MPI'"
    echo "set ylabel 'bus bandwidth (GB/s)'"
    plot=$(curves oop_bw 'ddl_allreduce out-of-place' ip_bw 'ddl_allreduce in-place' mpi_bw 'MPI_Allreduce')
    [ -n "$limit" ] && plot+=", $limit with lines dt 2 lw 2 title 'link limit ($limit GB/s)'"
    echo "plot $plot"
    echo "unset multiplot"
} > "$gp"
[ -z "$script" ] || cp "$gp" "$script"
gnuplot "$gp"
echo "wrote $out"
