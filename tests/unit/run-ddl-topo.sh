#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ddl-topo on a node larger than any fixed array: 9,000 cores, one GPU per
# socket (an hwloc XML made here with lstopo), in text and JSON.
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
[ $fails -eq 0 ] && echo "PASS: ddl-topo on a 9,000-core node (4,500 cores local to each GPU, more than the old fixed array; owners on 4,497) (text and JSON)"
exit $fails
