#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ddl-topo on a node larger than any fixed array: 9,000 cores, one GPU per
# socket (an hwloc XML made here with lstopo), in text and JSON; on a node
# where hwloc finds no GPU, a message about what hwloc sees and how to plan
# anyway, not advice to request GPUs; with --rails, each lane's rail and the
# variables each stack would get.
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
# Each lane's rail and what every stack would be told (the plugin's own
# table): lo is on every machine, mlx5_9:1 is planned by its form.
fixture=$top_srcdir/tests/fixtures/two-socket-4gpu.xml
railed=$("$top_builddir/ddl-topo" --xml "$fixture" --lanes 2 --rails lo,mlx5_9:1 2>&1) ||
    { echo "FAIL: --rails: $railed"; fails=1; }
# 4 GPUs x 2 lanes over 2 rails: lane k of GPU g on rail (4 k + g) mod 2.
grep -Eq "^ +2 +1 +1 +0 +owner +mlx5_9:1 " <<< "$railed" && grep -Eq "^ +1 +0 +0 +1 +helper +lo " <<< "$railed" ||
    { echo "FAIL: the rail column: $railed"; fails=1; }
grep -q "task 0: DDL_RAIL=lo OMPI_MCA_btl_tcp_if_include=lo .*UCX_NET_DEVICES=lo .*NCCL_SOCKET_IFNAME==lo" <<< "$railed" ||
    { echo "FAIL: task 0's variables: $(grep 'task 0:' <<< "$railed")"; fails=1; }
grep -q "task 2: DDL_RAIL=mlx5_9:1 UCX_NET_DEVICES=mlx5_9:1 FI_VERBS_DEVICE_NAME=mlx5_9 NCCL_IB_HCA==mlx5_9:1$" <<< "$railed" ||
    { echo "FAIL: task 2's variables (no interface variable for an RDMA device): $(grep 'task 2:' <<< "$railed")"; fails=1; }
grep -q "mlx5_9:1 .*not on this machine" <<< "$railed" || { echo "FAIL: an absent rail not marked: $railed"; fails=1; }
"$top_builddir/ddl-topo" --xml "$fixture" --lanes 2 --rails lo --fabric ucx --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert all(t["rail"] == "lo" and t["env"] == {"DDL_RAIL": "lo", "UCX_NET_DEVICES": "lo"} for t in d["tasks"]), d["tasks"]
assert d["rails"][0]["found"] and d["rails"][0]["netdev"] == "lo"' || { echo "FAIL: --json with --rails"; fails=1; }
one=$("$top_builddir/ddl-topo" --xml "$fixture" --lanes 1 --rails lo 2>&1)
{ grep -q "with 1 lane per GPU the plugin gives no rails" <<< "$one" && ! grep -q "^variables" <<< "$one"; } ||
    { echo "FAIL: rails with 1 lane: $one"; fails=1; }
bad=$("$top_builddir/ddl-topo" --xml "$fixture" --lanes 2 --fabric verbs 2>&1)
[ $? -eq 2 ] && grep -q "fabric takes auto, or a comma-separated list" <<< "$bad" || { echo "FAIL: --fabric verbs: $bad"; fails=1; }
[ $fails -eq 0 ] && echo "PASS: ddl-topo on a 9,000-core node (4,500 cores local to each GPU, more than the old fixed array; owners on 4,497) (text and JSON); no GPU seen: what hwloc sees and --gpus; each lane's rail and its stacks' variables"
exit $fails
