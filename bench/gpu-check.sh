#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The device check, prepared for a machine with a GPU: build with CUDA, run the
# GPU tests (owner + helpers sharing one GPU over CUDA IPC, 2 virtual nodes,
# every type and op, in-place and out-of-place, against a CPU reference), then
# the device benchmark, and print a short table.  Meant to finish in under 8
# minutes; every step has a time limit.  Run from the source tree:
#     bench/gpu-check.sh            (OUT=dir keeps the logs there)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
step() { echo "== $*"; }

step "machine"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -4
nproc

step "build (configure --with-cuda)"
if ! command -v mpicc > /dev/null || ! pkg-config --exists hwloc check 2> /dev/null; then
    echo "missing build packages; trying scripts/setup.sh's apt-get"
    DDL_CONFIGURE_FLAGS=--with-cuda timeout 240 scripts/setup.sh > "$out/setup.log" 2>&1 ||
        { echo "setup failed (see $out/setup.log)"; tail -5 "$out/setup.log"; exit 1; }
else
    { [ -x configure ] || autoreconf -fi; } > "$out/build.log" 2>&1
    { ./configure --with-cuda && make -j"$(nproc)"; } >> "$out/build.log" 2>&1 ||
        { echo "build failed"; tail -20 "$out/build.log"; exit 1; }
fi
./ddl-info | sed -n '3,6p'

step "GPU tests"
timeout 300 make check TESTS="tests/unit/test_gpu tests/gpu/run-gpu.sh" > "$out/check.log" 2>&1
rc=$?
grep -E "^(PASS|FAIL|SKIP|ERROR):" tests/gpu/run-gpu.log tests/unit/test_gpu.log 2>/dev/null
[ $rc -eq 0 ] || { echo "GPU tests failed (exit $rc)"; tail -30 tests/gpu/run-gpu.log; }

step "device benchmark: 1 node x 2 GPUs x 2 lanes (intra-node IPC phase), f32 sum"
MPIRUN="mpirun --oversubscribe --bind-to none"
timeout 60 env DDL_LANES=2 DDL_GPUS_PER_NODE=2 $MPIRUN -n 4 ./ddl-gpu-bench -n 20 -e 64M < /dev/null 2>&1 | tee "$out/bench-1node.txt"
step "device benchmark: 2 virtual nodes x 1 GPU x 2 lanes, staged lanes"
timeout 60 env DDL_LANES=2 DDL_NODE_SIZE=2 DDL_GPU_TRANSPORT=staged $MPIRUN -n 4 ./ddl-gpu-bench -n 10 -e 64M \
    < /dev/null 2>&1 | tee "$out/bench-2nodes.txt"
exit $rc
