#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ddl-topo on a node larger than any fixed array: 9,000 cores, one GPU per
# socket (an hwloc XML made here with lstopo), in text and JSON; on a node
# where hwloc finds no GPU, a message about what hwloc sees and how to plan
# anyway, not advice to request GPUs.
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
command -v lstopo > /dev/null || { echo "SKIP: no lstopo (Debian: hwloc)"; exit 77; }
xml=$(mktemp --suffix=.xml)
trap 'rm -f "$xml"' EXIT
python3 - "$top_srcdir/tests/fixtures/make-topologies.py" "$xml" <<'PY' || exit 1
import importlib.util, sys
spec = importlib.util.spec_from_file_location("topologies", sys.argv[1])
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
m.make(sys.argv[2], "pack:2 [numa] core:4500 pu:1", {0: [(0x07, m.NVIDIA_H100)], 1: [(0x87, m.NVIDIA_H100)]})
PY
out=$("$top_builddir/ddl-topo" --xml "$xml" --lanes 4 2>&1) || { echo "FAIL: ddl-topo exited $?: $out"; exit 1; }
fails=0
grep -q "node: 9000 cores, 2 GPUs" <<< "$out" || { echo "FAIL: core count: $(head -1 <<< "$out")"; fails=1; }
grep -q "local cores 4500-8999" <<< "$out" || { echo "FAIL: GPU 1's local cores: $(sed -n 3p <<< "$out")"; fails=1; }
json=$("$top_builddir/ddl-topo" --xml "$xml" --lanes 4 --json) || { echo "FAIL: --json"; exit 1; }
# Each GPU's share is 4,500 cores: 4,497 for the owner, one per helper, all local.
python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["cores"] == 9000 and len(d["gpus"][1]["local_cores"]) == 4500
t = d["tasks"]
assert [len(x["cores"]) for x in t] == [4497, 1, 1, 1] * 2, [len(x["cores"]) for x in t]
assert all(c >= 4500 for x in t[4:] for c in x["cores"])' <<< "$json" || { echo "FAIL: JSON"; fails=1; }
grep -q "owner .* 0-4496$" <<< "$out" || { echo "FAIL: owner 0 cores in text: $(grep -m1 owner <<< "$out")"; fails=1; }
nogpu=$("$top_builddir/ddl-topo" --xml "$top_srcdir/tests/fixtures/no-gpu.xml" --lanes 2 2>&1)
rc=$?
if [ $rc -ne 1 ] || ! grep -q "hwloc finds no GPU" <<< "$nogpu" || ! grep -q -- "--gpus LIST" <<< "$nogpu" ||
        grep -q -- "--gpus-per-node" <<< "$nogpu"; then
    echo "FAIL: no GPU seen: exit $rc: $nogpu"; fails=1
fi
planned=$("$top_builddir/ddl-topo" --xml "$top_srcdir/tests/fixtures/no-gpu.xml" --lanes 2 --gpus 0-1 2>&1) ||
    { echo "FAIL: no GPU seen, --gpus 0-1: $planned"; fails=1; }
grep -q "plan: 2 GPUs x 2 lanes = 4 tasks" <<< "$planned" || { echo "FAIL: no plan for --gpus 0-1: $planned"; fails=1; }
[ $fails -eq 0 ] && echo "PASS: ddl-topo on a 9,000-core node (4,500 cores local to each GPU, more than the old fixed array; owners on 4,497) (text and JSON); no GPU seen: what hwloc sees and --gpus"
exit $fails
