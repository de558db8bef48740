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
[ $fails -eq 0 ] && echo "PASS: $checked tools answer --version and --help at once; stray arguments are refused"
exit $fails
