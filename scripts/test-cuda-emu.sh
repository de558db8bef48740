#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The device path without a GPU: the project built again in build-emu/ with
# --enable-cuda-emulation (libddl's CUDA code, kernels and NCCL transport on
# the emulated devices of tests/cuda-emu), then the emulator's own test, the
# GPU unit test and the GPU tests there (tests/gpu/run-gpu.sh: DDL_EMU_GPUS=4
# devices, DDL_EMU_DELAY=100).  The same tree is built with --enable-test-algos
# (a test-only lane algorithm, one file and one row: tests/algo/run-direct.sh
# checks that everything picks it up), which saves a build of its own.
# scripts/test.sh calls it after the main suite.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
dir=$top/build-emu
start=$(date +%s)
# The emulation compiles against the toolkit's headers (configure: --with-cuda=DIR).
cuda=${DDL_CUDA_DIR:-/usr/local/cuda}
if [ ! -r "$cuda/include/cuda_runtime_api.h" ] || [ ! -r "$cuda/include/nccl.h" ]; then
    echo "cuda-emu: SKIP: no CUDA and NCCL headers in $cuda/include (the toolkit is needed at build time, not a GPU)"
    exit 0
fi
. scripts/variant.sh
variant_tree "$dir" || exit 1
cd "$dir"
./configure --enable-cuda-emulation --enable-test-algos --with-cuda="$cuda" PYTHON=/usr/bin/python3 > configure.out 2>&1 ||
    { echo "cuda-emu: configure failed"; tail -20 configure.out; exit 1; }
make -j"$(nproc)" > make.out 2>&1 || { echo "cuda-emu: build failed"; tail -30 make.out; exit 1; }
echo "cuda-emu: built ($(./ddl-info | sed -n 's/^  CUDA:  //p'))"
tests="tests/cuda-emu/test_emu tests/unit/test_gpu tests/gpu/run-gpu.sh tests/algo/run-direct.sh"
programs="tests/cuda-emu/test_emu tests/unit/test_gpu tests/gpu/ddl-test-gpu-allreduce tests/gpu/ddl-test-powerai-gpu \
tests/mpi/ddl-test-failure tests/mpi/ddl-test-allreduce"
make -j1 check TESTS="$tests" check_PROGRAMS="$programs" > check.out 2>&1
rc=$?
for log in tests/cuda-emu/test_emu.log tests/unit/test_gpu.log tests/gpu/run-gpu.log tests/algo/run-direct.log; do
    [ -f "$log" ] || { echo "cuda-emu: no $log"; rc=1; continue; }
    grep -q "^FAIL\|^SKIP" "$log" && { echo "==== emulated CUDA: $log"; grep -B2 -A25 -m3 "^FAIL\|^SKIP" "$log" | head -80; }
done
# Nothing may skip here for want of a GPU: that is what the emulation is for.
grep -q "^SKIP" tests/gpu/run-gpu.log 2>/dev/null && rc=1
grep -E '^(PASS|FAIL|ERROR|SKIP):' check.out | sed "s/^/emulated CUDA: /"
echo "emulated CUDA suite took $(( $(date +%s) - start )) s"
exit $rc
