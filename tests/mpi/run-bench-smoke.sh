#!/bin/bash
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
rm -rf "$dir"
finish
