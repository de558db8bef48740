#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ddl-bench end to end on 2 emulated nodes: nccl-tests columns, no wrong
# values, a JSON file that parses, and a non-zero exit on bad options.
. "$(dirname "$0")/lib.sh"
dir=$(mktemp -d)
if DDL_NODE_SIZE=2 DDL_LANES=1 timeout 300 $MPIRUN -n 4 "$top_builddir/ddl-bench" -b 8 -e 4M -f 16 -n 3 -w 1 \
    -d half -J "$dir/out.json" > "$dir/out.txt" 2>&1; then
    pass "ddl-bench half sum, 2 nodes x 2 GPUs"
else
    fail "ddl-bench exited non-zero"
fi
cat "$dir/out.txt"
grep -q '^# Out of bounds values : 0 OK' "$dir/out.txt" && pass "no wrong values" || fail "wrong values reported"
grep -q 'time.*algbw.*busbw.*#wrong.*mpi_time.*speedup' "$dir/out.txt" && pass "nccl-tests columns" || fail "header"
rows=$(grep -c '^ ' "$dir/out.txt")
[ "$rows" -eq 5 ] && pass "5 sizes (8 B to 4 MiB by 16)" || fail "$rows rows, expected 5"
if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["results"]) == 5; assert all(r["wrong"] == 0 for r in d["results"])' "$dir/out.json"; then
    pass "JSON output"
else
    fail "JSON output does not parse or is incomplete"
fi
if timeout 60 $MPIRUN -n 2 "$top_builddir/ddl-bench" -d complex > /dev/null 2>&1; then
    fail "ddl-bench accepted -d complex"
else
    pass "bad option rejected"
fi
# DDL_DEBUG=VERSION: the version once per job (2 ranks, one line), with
# DDL_DEBUG_TIMESTAMP's UTC time in front.
version=$(sed -n 's/^#define DDL_VERSION_STRING "\(.*\)"/\1/p' "$top_builddir/include/ddl/version.h")
out=$(DDL_DEBUG=VERSION DDL_DEBUG_TIMESTAMP=1 timeout 60 $MPIRUN -n 2 "$top_builddir/ddl-bench" -b 8 -e 8 -n 1 -w 0 2>&1)
lines=$(grep -c ' DDL VERSION ' <<< "$out")
if [ "$lines" -eq 1 ] && grep -qE "^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3}Z .* DDL VERSION DDL lanes $version$" <<< "$out"; then
    pass "DDL_DEBUG=VERSION prints the version once, timestamped"
else
    fail "DDL_DEBUG=VERSION: $lines version lines"; grep DDL <<< "$out" | head -5
fi
rm -rf "$dir"
finish
