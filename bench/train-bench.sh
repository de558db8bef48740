#!/bin/bash
# DDP training step time, gloo against the DDL hook, on the emulated cluster of
# bench/emu-cluster.sh: 2 nodes x 2 rails at 1 Gbit/s, 1 GPU per node, gloo on
# both rails (GLOO_SOCKET_IFNAME), ddl with 2 lanes (lane k on rail k).  As root,
# after scripts/setup.sh (or scripts/main.sh) has built the tree.
#
#   bench/train-bench.sh [MODEL...]     default: resnet18 transformer mlp
#   STEPS=20 RATE=1gbit                 steps measured per run, link rate
set -euo pipefail
cd "$(dirname "$0")/.."
models=${*:-resnet18 transformer mlp}
emu=bench/emu-cluster.sh
export DDL_EMU_PREFIX=ddltb DDL_CLUSTER_DIR=/tmp/ddl-train-bench DDL_CLUSTER_PORT=37817
trap '"$emu" stop > /dev/null 2>&1' EXIT
"$emu" start 2 2 "${RATE:-1gbit}" > /dev/null
# The rendezvous on node 1's rail 0 (the emulated nodes' names do not resolve).
export MASTER_ADDR=10.77.0.1 GLOO_SOCKET_IFNAME=rail0,rail1 OMP_NUM_THREADS=1 OMPI_MCA_mpi_yield_when_idle=1
export DDL_LIBRARY=$PWD/.libs/libddl.so PYTHONPATH=$PWD/python
out=$(mktemp -d)
status=0
for model in $models; do
    for hook in gloo ddl; do
        lanes=1
        [ "$hook" = ddl ] && lanes=2
        "$emu" run timeout 900 srun -N2 --gpus-per-node=1 --ddl-lanes=$lanes /usr/bin/python3 examples/train_bench.py \
            --model "$model" --hook "$hook" --steps "${STEPS:-20}" --json "$out/$model-$hook.json" || status=1
    done
    /usr/bin/python3 examples/train_bench.py --compare "$out/$model-gloo.json" "$out/$model-ddl.json" || status=1
done
[ -z "${KEEP_JSON:-}" ] || { mkdir -p "$KEEP_JSON"; cp "$out"/*.json "$KEEP_JSON"/; }
rm -rf "$out"
exit $status
