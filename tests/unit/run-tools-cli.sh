#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Every tool answers --version and --help at once (before MPI starts: no
# mpirun here, and a 5 s limit), and refuses a stray argument with status 2.
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
version=$(sed -n 's/^#define DDL_VERSION_STRING "\(.*\)"/\1/p' "$top_builddir/include/ddl/version.h")
fails=0 checked=0
for tool in ddl-info ddl-helper ddl-bench ddl-topo ddl-tune ddlrun ddl-plot ddl-trace-merge ddl-gpu-bench; do
    bin=$top_builddir/$tool
    [ -x "$bin" ] || { [ "$tool" = ddl-gpu-bench ] && continue; echo "FAIL: $tool was not built"; fails=1; continue; }
    out=$(timeout 5 "$bin" --version 2>&1)
    [ $? -eq 0 ] && [ "$out" = "$tool (DDL lanes) $version" ] || { echo "FAIL: $tool --version: '$out'"; fails=1; }
    out=$(timeout 5 "$bin" --help 2>&1)
    [ $? -eq 0 ] && grep -q "^usage: $tool" <<< "$out" || { echo "FAIL: $tool --help: $(head -2 <<< "$out")"; fails=1; }
    checked=$((checked + 1))
done
for tool in ddl-info ddl-bench ddl-topo ddl-tune ddl-gpu-bench; do
    [ -x "$top_builddir/$tool" ] || continue # ddl-gpu-bench without CUDA
    out=$(timeout 5 "$top_builddir/$tool" stray-argument 2>&1)
    [ $? -eq 2 ] && grep -q "unexpected argument 'stray-argument'" <<< "$out" ||
        { echo "FAIL: $tool with a stray argument: $(head -1 <<< "$out")"; fails=1; }
done
out=$(timeout 5 "$top_builddir/ddl-bench" --minbytes 0 2>&1)
[ $? -eq 2 ] || { echo "FAIL: ddl-bench --minbytes 0 was accepted"; fails=1; }
# ddl-plot draws what its page says: time (log axes), speed-up over MPI and
# bus bandwidth against size, the layout in the title.
if command -v gnuplot > /dev/null; then
    work=$(mktemp -d)
    cat > "$work/r.json" <<'JSON'
{"layout": {"nodes": 2, "gpus_per_node": 2, "lanes": 4, "ranks": 16, "owners": 4, "helpers": "serve", "buffers": "shared"},
 "results": [
  {"size": 1024, "type": "float", "redop": "sum", "out_of_place": {"time": 20.0, "busbw": 0.1}, "in_place": {"time": 18.0, "busbw": 0.11}, "mpi": {"time": 10.0, "busbw": 0.2}},
  {"size": 1048576, "type": "float", "redop": "sum", "out_of_place": {"time": 900.0, "busbw": 1.7}, "in_place": {"time": 800.0, "busbw": 1.9}, "mpi": {"time": 1800.0, "busbw": 0.9}}]}
JSON
    out=$("$top_builddir/ddl-plot" --script "$work/plot.gp" "$work/r.json" "$work/r.png" 2.0 2>&1)
    size=$(python3 -c 'import struct, sys; print(*struct.unpack(">II", open(sys.argv[1], "rb").read(24)[16:24]))' \
        "$work/r.png" 2>&1)
    [ "$size" = "900 1100" ] && grep -q "multiplot layout 3,1" "$work/plot.gp" &&
        grep -q "2 nodes x 2 GPUs x 4 lanes, serve helpers, shared buffers, float sum" "$work/plot.gp" &&
        grep -q "set logscale y" "$work/plot.gp" && grep -q "speed-up over MPI_Allreduce" "$work/plot.gp" &&
        grep -q "link limit (2.0 GB/s)" "$work/plot.gp" || { echo "FAIL: ddl-plot (PNG $size): $out"; fails=1; }
    rm -rf "$work"
    checked=$((checked + 1))
fi
[ $fails -eq 0 ] && echo "PASS: $checked tools answer --version and --help at once; stray arguments are refused; ddl-plot draws time, speed-up and bandwidth"
exit $fails
