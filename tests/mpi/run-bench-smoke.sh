#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ddl-bench end to end on 2 emulated nodes: nccl-tests columns, no wrong
# values, a JSON file that parses, and a non-zero exit on bad options.
. "$(dirname "$0")/lib.sh"
dir=$(mktemp -d)
if DDL_NODE_SIZE=2 DDL_LANES=1 timeout 300 $MPIRUN -n 4 "$top_builddir/ddl-bench" -b 8 -e 4M -f 16 -n 3 \
    -d half -J "$dir/out.json" > "$dir/out.txt" 2>&1; then
    pass "ddl-bench half sum, 2 nodes x 2 GPUs"
else
    fail "ddl-bench exited non-zero"
fi
cat "$dir/out.txt"
grep -q '^# Out of bounds values : 0 OK' "$dir/out.txt" && pass "no wrong values" || fail "wrong values reported"
grep -q 'time.*algbw.*busbw.*#wrong.*mpi_time.*speedup.*choice' "$dir/out.txt" && pass "nccl-tests columns, and the choice" ||
    fail "header"
rows=$(grep -c '^ ' "$dir/out.txt")
[ "$rows" -eq 5 ] && pass "5 sizes (8 B to 4 MiB by 16)" || fail "$rows rows, expected 5"
# The JSON: nccl-tests' nesting, null for what was not measured, where and when.
check_json() { # FILE ROWS MODE
    /usr/bin/python3 - "$@" <<'PY'
import json, sys
path, rows, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
d = json.load(open(path))
settled = d["options"]["warmup_until_settled"]
assert d["benchmark"] == "ddl-bench" and d["timestamp"].endswith("Z") and d["command"][0].endswith("ddl-bench")
assert d["layout"] == {"nodes": 2, "gpus_per_node": 2, "lanes": 1, "ranks": 4, "owners": 4,
                       "helpers": "collective", "buffers": "shared"}, d["layout"]
assert len(d["hosts"]) == 1 and len(d["ranks"]) == 4 and [r["owner"] for r in d["ranks"]] == [0, 1, 2, 3]
assert d["environment"]["DDL_NODE_SIZE"] == "2"
assert len(d["results"]) == rows, len(d["results"])
for r in d["results"]:
    for key in ("out_of_place", "in_place"):
        assert (r[key] is None) == (mode == "mpi"), (key, r)
        assert r[key] is None or (r[key]["wrong"] == 0 and r[key]["time"] > 0 and r[key]["busbw"] >= 0)
    assert (r["mpi"] is None) == (mode == "ddl" or (r["type"] in ("half", "bfloat16") and r["redop"] not in ("sum", "avg"))), r
    assert (r["speedup"] is None) == (r["mpi"] is None or r["out_of_place"] is None)
    # Without -w the warm-up goes on until the size's choice is settled (5
    # calls are fewer than online selection times), so none is exploring.
    assert (r["choice"] is None) == (mode == "mpi") and not (settled and r["choice"] == "exploring"), r
assert d["wrong"] == 0
PY
}
check_json "$dir/out.json" 5 both && pass "JSON: nested out_of_place / in_place / mpi, hosts, ranks, environment, timestamp" ||
    fail "JSON output does not parse or is incomplete"
# A file that exists is kept unless --force; --mode mpi has nulls; -d all -o all runs every type and op.
out=$(timeout 60 $MPIRUN -n 4 "$top_builddir/ddl-bench" -J "$dir/out.json" 2>&1)
[ $? -eq 2 ] && grep -q "out.json exists: give another -J file, or --force" <<< "$out" &&
    pass "an existing JSON file is not overwritten without --force" || fail "existing -J file: $out"
if DDL_NODE_SIZE=2 timeout 300 $MPIRUN -n 4 "$top_builddir/ddl-bench" -b 64 -e 64 -n 2 -w 0 --mode mpi -J "$dir/out.json" \
    --force > "$dir/mpi.txt" 2>&1 && check_json "$dir/out.json" 1 mpi && ! grep -q "Avg bus bandwidth    : 0$" "$dir/mpi.txt"; then
    pass "--mode mpi: no ddl timings (null), a real average bus bandwidth"
else
    fail "--mode mpi"; cat "$dir/mpi.txt"
fi
if DDL_NODE_SIZE=2 timeout 300 $MPIRUN -n 4 "$top_builddir/ddl-bench" -b 1K -e 1K -n 2 -w 0 -d all -o all -a 1 \
    -J "$dir/all.json" > "$dir/all.txt" 2>&1 && check_json "$dir/all.json" 50 both &&
    grep -q "^# Out of bounds values : 0 OK" "$dir/all.txt"; then
    pass "-d all -o all: 10 types x 5 ops, every result checked"
else
    fail "-d all -o all"; tail -5 "$dir/all.txt"
fi
grep -qE "^#  Rank +3 Pid +[0-9]+ on +[^ ]+ node +1 GPU +1 " "$dir/out.txt" && pass "placement lines (Rank, Pid, host, node, GPU)" ||
    fail "no placement lines"
if timeout 60 $MPIRUN -n 2 "$top_builddir/ddl-bench" -d complex > /dev/null 2>&1; then
    fail "ddl-bench accepted -d complex"
else
    pass "bad option rejected"
fi
# nccl-tests' options mean what they mean there: -i steps by bytes, -m
# aggregates (here with -z 0: posted, then waited for, on the progress thread
# that MPI_THREAD_MULTIPLE gives the communicator), -t/-g/-G with their
# neutral values and -r are accepted; other values, and -m with a mode, are
# refused with what to do instead.
out=$(DDL_NODE_SIZE=2 timeout 120 $MPIRUN -n 4 "$top_builddir/ddl-bench" -b 1K -e 4K -i 1K -m 4 -z 0 -n 3 -w 1 \
    -t 1 -g 1 -G 0 -r 0 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q "step: 1024(bytes) .* agg iters: 4 .* blocking: 0" <<< "$out" &&
        grep -q "^# MPI thread level: multiple" <<< "$out" && ! grep -q 'no progress thread' <<< "$out" &&
        [ "$(grep -cE '^ +(1024|2048|3072|4096) ' <<< "$out")" -eq 4 ] && grep -q '^# Out of bounds values : 0 OK' <<< "$out"; then
    pass "nccl-tests' -i 1K -m 4 -z 0 -t 1 -g 1 -G 0 -r 0: 4 sizes by 1 KiB, 4 collectives an iteration, checked, MPI_THREAD_MULTIPLE"
else
    fail "nccl-tests' options (exit $rc)"; tail -8 <<< "$out"
fi
# Requests at a lower thread level have no progress thread: said once (rank
# 0's first request), with what to do.
out=$(DDL_NODE_SIZE=2 timeout 60 $MPIRUN -n 4 "$top_builddir/ddl-bench" -b 1K -e 2K -m 2 -z 0 -n 2 -w 1 \
    --mpi-thread single 2>&1)
rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c 'no progress thread and requests move only inside ddl_test and ddl_wait' <<< "$out")" -eq 1 ] &&
        grep -q 'initialise MPI with ddl_init_mpi' <<< "$out"; then
    pass "requests without MPI_THREAD_MULTIPLE: one warning that they have no progress thread, and the remedy"
else
    fail "requests without MPI_THREAD_MULTIPLE (exit $rc)"; grep -i 'progress thread\|WARN' <<< "$out" | head -5
fi
for refused in "-m ddl:--mode ddl" "-g 2:one GPU per process" "-t 8:one thread per process" "-G 1:no CUDA graphs" \
        "--mpi-thread=funneled:invalid value 'funneled' for --mpi-thread"; do
    out=$(timeout 10 "$top_builddir/ddl-bench" ${refused%%:*} 2>&1)
    rc=$?
    [ $rc -eq 2 ] && grep -q -- "${refused#*:}" <<< "$out" && pass "ddl-bench ${refused%%:*}: refused, '${refused#*:}'" ||
        fail "ddl-bench ${refused%%:*}: exit $rc: $out"
done
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
# The reduce-scatter and the allgather, as nccl-tests' reduce_scatter_perf
# and all_gather_perf: the size is the whole buffer (whole blocks of the 4
# owners), busbw is algbw x (n-1)/n, the allgather's redop "none"; blocking
# (one size on the lanes, one on the MPI path) and posted (-z 0).
for coll in reduce_scatter allgather; do
    for z in 1 0; do
        if DDL_NODE_SIZE=2 timeout 300 $MPIRUN -n 4 "$top_builddir/ddl-bench" --coll $coll -b 1002 -e 1M -f 1024 -n 3 \
            -w 1 -z $z -d bfloat16 -J "$dir/$coll.json" --force > "$dir/$coll.txt" 2>&1 &&
            /usr/bin/python3 - "$dir/$coll.json" "$coll" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
coll = sys.argv[2]
assert d["collective"] == coll and d["wrong"] == 0, d
rows = d["results"]
assert [r["size"] for r in rows] == [1000, 1026048], [r["size"] for r in rows]  # whole blocks: 1002 B is 501 elements, 500 of them 4 blocks
for r in rows:
    assert r["count"] * 2 == r["size"] and r["redop"] == ("none" if coll == "allgather" else "sum"), r
    # The collective's own choice for the size (its classes: ddl_comm_collective_choice).
    assert r["choice"] == "exploring" or r["choice"].startswith(("mpi", "lane")), r
    for key in ("out_of_place", "in_place", "mpi"):
        t = r[key]
        assert t["time"] > 0 and abs(t["busbw"] - t["algbw"] * 3 / 4) <= 1e-4 + 1e-3 * t["algbw"], (key, t)  # 4 decimals
PY
        then
            grep -q "baseline: system $([ $coll = allgather ] && echo MPI_Allgather || echo MPI_Reduce_scatter_block)" \
                "$dir/$coll.txt" && pass "--coll $coll -z $z: whole blocks, busbw (n-1)/n, checked, its MPI baseline" ||
                fail "--coll $coll -z $z: header"
        else
            fail "--coll $coll -z $z"; tail -5 "$dir/$coll.txt"
        fi
    done
done
rm -rf "$dir"
finish
