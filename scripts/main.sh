#!/bin/bash
# The main job: set up the machine, build, and run ddl-bench against the system
# MPI_Allreduce: one node with 2 GPUs x 1 lane, then 2 emulated nodes x 1 GPU x
# 2 lanes (DDL_NODE_SIZE), each printing its nccl-tests table.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
run() { timeout 900 mpirun --oversubscribe --bind-to none "$@" < /dev/null; }
echo "== 1 node x 2 GPUs x 1 lane (2 ranks), f32 sum"
run -n 2 ./ddl-bench -b 8 -e 64M -f 4 -n 10 -w 3
echo
echo "== 2 emulated nodes x 1 GPU x 2 lanes (4 ranks on this host), f32 sum"
DDL_NODE_SIZE=2 DDL_LANES=2 run -n 4 ./ddl-bench -b 8 -e 64M -f 4 -n 10 -w 3
