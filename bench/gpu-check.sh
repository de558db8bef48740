#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The device check, prepared for a machine with a GPU: build with CUDA, run the
# GPU tests (owner + helpers sharing one GPU over CUDA IPC, 2 virtual nodes,
# every type and op, in-place and out-of-place, against a CPU reference; the
# Python binding and DDP hook on CUDA tensors where torch sees the GPU), then
# the device benchmark against the same run's MPI, and print a short table.
# Meant to finish in under 8 minutes; every step has a time limit.
#     bench/gpu-check.sh            (OUT=dir keeps the logs there)
# On a GPU machine without MPI or hwloc and without a package archive, build
# a bundle elsewhere with bench/gpu-bundle.sh DIR and run
#     DDL_GPU_BUNDLE=DIR bench/gpu-check.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
step() { echo "== $*"; }

step "machine"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | head -4
echo "$(nproc) CPUs"

if [ -n "${DDL_GPU_BUNDLE:-}" ]; then
    step "prebuilt (bench/gpu-bundle.sh): $DDL_GPU_BUNDLE"
    . "$DDL_GPU_BUNDLE/env.sh"
    cd "$DDL_GPU_TREE" || exit 1
else
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
    make -j"$(nproc)" check TESTS= >> "$out/build.log" 2>&1 || { echo "test programs failed to build"; exit 1; }
fi
export top_builddir=$PWD top_srcdir=$PWD
. tests/mpi/lib.sh # MPIRUN and root's permission, as every test launches ranks
# Open MPI's launcher wants an ssh or rsh agent to exist even for one host.
command -v ssh > /dev/null || command -v rsh > /dev/null || export OMPI_MCA_plm_rsh_agent=false
# NCCL is loaded at run time: the toolkit's, else the one a Python package brings.
if ! ldconfig -p | grep -q 'libnccl\.so\.2 ' && [ ! -e /usr/local/cuda/lib64/libnccl.so.2 ]; then
    nccl=$(find /usr /opt -name libnccl.so.2 -path '*nvidia*' 2> /dev/null | head -1)
    [ -n "$nccl" ] && export LD_LIBRARY_PATH=$(dirname "$nccl")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
info=$(./ddl-info)
sed -n '4,7p' <<< "$info"
grep -q '^  CUDA:  [0-9]* devices\{0,1\} visible' <<< "$info" || { echo "CUDA sees no device here: nothing to check"; exit 77; }

step "GPU tests"
timeout 45 tests/unit/test_gpu > "$out/test_gpu.log" 2>&1
unit=$?
tail -3 "$out/test_gpu.log"
# A short DDL_TIMEOUT: a stall shows as a failure naming its case and step
# (the test's watchdog: twice the timeout plus 30 s) well inside the limit.
DDL_TEST_TIMEOUT=${DDL_TEST_TIMEOUT:-20} timeout 360 bash tests/gpu/run-gpu.sh > "$out/run-gpu.log" 2>&1
rc=$?
grep -E "^(PASS|FAIL|SKIP)|^# not run|passed, .* failed" "$out/run-gpu.log"
[ $rc -eq 0 ] || { echo "GPU tests failed (exit $rc)"; grep -v '^PASS' "$out/run-gpu.log" | tail -40; }
[ $unit -eq 0 ] || { echo "test_gpu failed (exit $unit)"; tail -30 "$out/test_gpu.log"; rc=1; }

step "device benchmark: 1 node x 2 GPUs x 2 lanes (intra-node IPC phase), f32 sum"
timeout 60 env DDL_LANES=2 DDL_GPUS_PER_NODE=2 $MPIRUN -n 4 ./ddl-gpu-bench -n 20 -e 64M < /dev/null 2>&1 |
    tee "$out/bench-1node.txt" | grep -v '^#' | tail -12
step "device benchmark: 2 virtual nodes x 1 GPU x 2 lanes, staged lanes"
timeout 60 env DDL_LANES=2 DDL_NODE_SIZE=2 DDL_GPU_TRANSPORT=staged $MPIRUN -n 4 ./ddl-gpu-bench -n 10 -e 64M \
    < /dev/null 2>&1 | tee "$out/bench-2nodes.txt" | grep -v '^#' | tail -12
# ddl_allreduce asks the driver where each plain host buffer is on every call
# (cuPointerGetAttribute): what that costs small host calls here, against the
# same run's MPI (the user guide's "Host buffers in a CUDA build").
step "host buffers on the CUDA build: 1 node x 2 GPUs x 1 lane, malloc'd buffers, 8 B - 4 KiB"
timeout 60 env DDL_LANES=1 DDL_GPUS_PER_NODE=2 $MPIRUN -n 2 ./ddl-bench -B staged -b 8 -e 4K -f 4 -n 2000 \
    < /dev/null 2>&1 | tee "$out/bench-host-small.txt" | grep -v '^#' | tail -8
exit $rc
