#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# DDL_TRACE on 2 emulated nodes x 1 GPU x 2 lanes: every rank writes a
# well-formed Chrome / Perfetto trace (the JSON array format: events with name,
# ph, ts, dur, pid = rank, tid), a call's events cover its phases and lie
# inside it, the transfers name their dimension and peers, a request's queueing
# and the progress thread appear, and ddl-trace-merge joins the ranks into one
# trace (the JSON object format) with every rank's track.
. "$(dirname "$0")/lib.sh"
before=$(shm_segments)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
if DDL_TRACE="$dir/trace-%r.json" DDL_NODE_SIZE=2 DDL_LANES=2 timeout 300 $MPIRUN -n 4 \
    "$top_builddir/ddl-bench" -b 1M -e 1M -n 2 -w 0 --mode ddl > "$dir/out.txt" 2>&1 &&
    DDL_TRACE="$dir/req-%r.json" DDL_NODE_SIZE=2 DDL_LANES=2 DDL_TEST_MPI_THREAD=multiple DDL_ALGO=lane \
    DDL_CHUNK_SIZE=64K DDL_STAGE_SIZE=1M DDL_TIMEOUT=60 timeout 300 $MPIRUN -n 4 \
    "$top_builddir/tests/mpi/ddl-test-iallreduce" > "$dir/iall.txt" 2>&1; then
    pass "traced runs: ddl-bench and the nonblocking test"
else
    fail "a traced run failed"; tail -n 5 "$dir/out.txt" "$dir/iall.txt"
fi
if /usr/bin/python3 - "$dir" "$top_srcdir/tests/mpi/trace.schema.json" <<'PY'
import json, sys
d = sys.argv[1]
try:  # the formal schema when python3-jsonschema is there; the checks below either way
    import jsonschema
    schema = json.load(open(sys.argv[2]))
    for name in [f"trace-{r}.json" for r in range(4)] + [f"req-{r}.json" for r in range(4)]:
        jsonschema.validate(json.load(open(f"{d}/{name}")), schema)
    print("trace files valid against tests/mpi/trace.schema.json")
except ImportError:
    print("python3-jsonschema is not installed: the schema is not checked, the structure is")
lane_phases = {"copy in", "node barrier", "signatures", "reduce and exchange", "results barrier", "copy out"}
chunk_phases = {"intra-node reduce", "wait between nodes", "write-back"}
for rank in range(4):
    events = json.load(open(f"{d}/trace-{rank}.json"))
    assert isinstance(events, list) and events, f"rank {rank}: not an event array"
    for e in events:
        assert isinstance(e["name"], str) and e["ph"] in ("X", "M") and e["pid"] == rank and isinstance(e["tid"], int), e
        if e["ph"] == "X":
            assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)) and e["dur"] >= 0, e
            assert e["cat"] == "ddl" and isinstance(e["args"], dict), e
    names = {e["name"] for e in events}
    meta = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert meta == {f"rank {rank}: node {rank // 2} GPU 0 lane {rank % 2} ({'owner' if rank % 2 == 0 else 'helper'})"}, meta
    missing = (lane_phases | chunk_phases | {"allreduce"}) - names
    assert not missing, f"rank {rank}: no {sorted(missing)} events"
    calls = [e for e in events if e["name"] == "allreduce"]
    for e in events:
        if e["ph"] == "X" and e["name"] in lane_phases | chunk_phases:
            assert any(c["ts"] - 1 <= e["ts"] and e["ts"] + e["dur"] <= c["ts"] + c["dur"] + 1 for c in calls), \
                f"rank {rank}: {e['name']} at {e['ts']} lies outside every allreduce"
    xfers = [e for e in events if e["name"].startswith("exchange")]
    assert xfers and all(x["args"]["dim"] == 0 and {x["args"]["send_to"], x["args"]["recv_from"]} <= {0, 1} for x in xfers), xfers[:2]
    assert all(x["args"]["send_bytes"] > 0 for x in xfers)
req = [e for r in range(4) for e in json.load(open(f"{d}/req-{r}.json"))]
assert any(e["name"] == "queued" for e in req), "no queued events from ddl_iallreduce"
assert any(e["ph"] == "M" and e["name"] == "thread_name" and e["args"]["name"] == "progress thread" for e in req), \
    "no progress thread track"
PY
then
    pass "every rank's trace is well formed and covers a call's phases, chunks and transfers; requests show queueing"
else
    fail "trace files"
fi
if "$top_builddir/ddl-trace-merge" "$dir/all.json" "$dir"/trace-*.json > "$dir/merge.txt" 2>&1 &&
    /usr/bin/python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
assert {e["pid"] for e in ev} == {0, 1, 2, 3}
assert sum(1 for e in ev if e["ph"] == "M" and e["name"] == "process_name") == 4
ts = [e["ts"] for e in ev if e["ph"] == "X"]
assert ts == sorted(ts)' "$dir/all.json"; then
    pass "ddl-trace-merge: one trace, 4 rank tracks, events in time order ($(cat "$dir/merge.txt"))"
else
    fail "ddl-trace-merge"; cat "$dir/merge.txt"
fi
# A process killed mid-run leaves an unfinished array: merged up to its last event.
head -c -20 "$dir/trace-1.json" > "$dir/cut.json"
"$top_builddir/ddl-trace-merge" "$dir/cut-merged.json" "$dir/cut.json" > /dev/null 2>&1 &&
    /usr/bin/python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["traceEvents"]' "$dir/cut-merged.json" &&
    pass "an unfinished trace file is merged up to its last complete event" || fail "unfinished trace file"
[ "$(shm_segments)" = "$before" ] && pass "/dev/shm clean" || fail "segments left in /dev/shm: $(shm_segments)"
finish
