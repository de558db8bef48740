#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# DDP training step time, gloo against the DDL hook and the "ddl" backend (DDP
# without a hook) in the same job (examples/train_bench.py), on the emulated cluster of bench/emu-cluster.sh:
# 2 nodes x 2 rails at 1 Gbit/s, 1 GPU per node, LANES lanes (lane k on rail k mod 2),
# gloo on both rails (GLOO_SOCKET_IFNAME).  As root, after scripts/setup.sh (or
# scripts/main.sh) has built the tree.
#
#   bench/train-bench.sh [MODEL...]     default: resnet18 transformer mlp
#   STEPS=20 RATE=1gbit BUCKET_MB=25    steps per hook, link rate, DDP's bucket_cap_mb
#   LANES=2                             lanes per GPU
#   INJ=250mbit                         each process's sends capped too (emu-cluster.sh's
#                                       DDL_EMU_INJ): every task through bench/emu-inject.sh,
#                                       gloo on the owner's own sub-interface
#   JSON_DIR=dir                        keep each model's results as dir/MODEL.json
#   ZERO=1                              ZeroRedundancyOptimizer for every copy
#   BACKEND=0                           no copy on the "ddl" backend
set -euo pipefail
cd "$(dirname "$0")/.."
/usr/bin/python3 -c 'import torchvision' 2> /dev/null || apt-get install -y python3-torchvision > /dev/null
models=${*:-resnet18 transformer mlp}
emu=bench/emu-cluster.sh
export DDL_EMU_PREFIX=ddltb DDL_CLUSTER_DIR=/tmp/ddl-train-bench DDL_CLUSTER_PORT=37817
trap '"$emu" stop > /dev/null 2>&1' EXIT
inject=()
if [ -n "${INJ:-}" ]; then
    export DDL_EMU_INJ=$INJ DDL_EMU_PROCS=${LANES:-2}
    inject=(bench/emu-inject.sh)
fi
"$emu" start 2 2 "${RATE:-1gbit}" > /dev/null
# The rendezvous on node 1's rail 0 (the emulated nodes' names do not resolve).
export MASTER_ADDR=10.77.0.1 GLOO_SOCKET_IFNAME=rail0,rail1 OMP_NUM_THREADS=1 OMPI_MCA_mpi_yield_when_idle=1
export DDL_LIBRARY=$PWD/.libs/libddl.so PYTHONPATH=$PWD/python
[ -z "${JSON_DIR:-}" ] || mkdir -p "$JSON_DIR"
status=0
for model in $models; do
    "$emu" run timeout 900 srun -N2 --gpus-per-node=1 --ddl-lanes="${LANES:-2}" "${inject[@]}" /usr/bin/python3 examples/train_bench.py \
        --model "$model" --steps "${STEPS:-20}" --bucket-mb "${BUCKET_MB:-25}" \
        $([ "${ZERO:-0}" = 1 ] && echo --zero) $([ "${BACKEND:-1}" = 0 ] && echo --no-backend) \
        ${JSON_DIR:+--json "$JSON_DIR/$model.json"} 2>&1 | grep -v '^srun: lua' || status=1
done
exit $status
