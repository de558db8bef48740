#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The device path, on this machine's GPUs or, in a build configured with
# --enable-cuda-emulation, on emulated ones (tests/cuda-emu: DDL_EMU_GPUS
# devices, default 4 here; DDL_EMU_DELAY microseconds of random delay before
# each item of a stream, 100 here, so that a missing wait shows as a wrong
# result).  The same tests either way:
#  - 1 node x 1/2/4 GPUs x 1/2/4 lanes, owner + helpers sharing a GPU over CUDA
#    IPC, both helper modes; 2 virtual nodes with the staged transport, NCCL
#    (2 devices or more: NCCL refuses two ranks of one communicator on one GPU)
#    and CUDA-aware MPI (where Open MPI is; otherwise it says why not).  Every
#    type and op, in-place and out-of-place, blocking, on a stream and
#    nonblocking on a stream, several requests in flight on one stream.
#    Where both paths take the lane algorithm (DDL_ALGO=lane), results must
#    be bit-identical to the host path's for the same inputs.  Then the
#    reduce-scatter and allgather on device buffers, both paths (one layout
#    with a stage area small enough for several rounds).
#  - PowerAI DDL's API on device memory; ddl-gpu-bench with its results
#    checked; the Python binding's device branch and the DDP hook (emulation:
#    tests/python/test_device.py); a stalled and a killed rank while device
#    requests are out.
# Skips (exit 77) with the reason without the CUDA module or when CUDA
# sees no device.
. "$(dirname "$0")/../mpi/lib.sh"
prog=$top_builddir/tests/gpu/ddl-test-gpu-allreduce
export DDL_EMU_GPUS=${DDL_EMU_GPUS:-4} DDL_EMU_DELAY=${DDL_EMU_DELAY:-100} # read by the emulation only
info=$("$top_builddir/ddl-info" | sed -n 's/^  CUDA:  //p')
devices=$(echo "$info" | sed -n 's/^\([0-9]*\) devices\{0,1\} visible.*/\1/p')
[ -n "$devices" ] || { echo "SKIP: GPU tests: $info"; exit 77; }
before=$(shm_segments)
echo "# CUDA: $info"

# nodes gpus lanes helpers extra-environment (':' between variables)
same=DDL_ALGO=lane:DDL_TEST_SAME_AS_HOST=1
layouts="
1 1 1 collective $same
1 1 2 collective $same
1 1 4 serve      $same
1 2 1 serve      $same
1 2 2 collective DDL_ALGO=auto
1 2 4 collective $same
1 4 1 collective $same
1 4 2 serve      DDL_ALGO=auto
1 4 4 serve      $same
2 1 2 collective DDL_GPU_TRANSPORT=staged:$same
2 2 1 serve      DDL_GPU_TRANSPORT=staged:DDL_CHUNK_SIZE=64K:DDL_STAGE_SIZE=1M:$same
"
[ "${devices:-1}" -ge 2 ] && layouts+="2 1 1 collective DDL_GPU_TRANSPORT=nccl
"
[ "${devices:-1}" -ge 4 ] && layouts+="2 2 2 collective DDL_GPU_TRANSPORT=nccl
"
# CUDA-aware MPI reads device memory itself: a real GPU and an Open MPI built with CUDA.
if [[ $info == *emulated* ]]; then
    echo "# not run: DDL_GPU_TRANSPORT=mpi (Open MPI cannot read emulated device memory; it runs on a GPU with a CUDA-aware Open MPI)"
elif ompi_info --parsable --all 2>/dev/null | grep -q 'mpi_built_with_cuda_support:value:true'; then
    layouts+="2 1 2 serve DDL_GPU_TRANSPORT=mpi
"
else
    echo "# not run: DDL_GPU_TRANSPORT=mpi (this Open MPI is not CUDA-aware: ompi_info says mpi_built_with_cuda_support false)"
fi
while read -r nodes gpus lanes helpers extra; do
    [ -n "$nodes" ] || continue
    ranks=$((nodes * gpus * lanes))
    envs="DDL_LANES=$lanes DDL_NODE_SIZE=$((gpus * lanes)) DDL_HELPERS=$helpers DDL_TIMEOUT=${DDL_TEST_TIMEOUT:-60} DDL_TEST_QUICK=1 \
$(echo "$extra" | tr ':' ' ')"
    name="$nodes nodes x $gpus GPUs x $lanes lanes, $helpers, $extra"
    if out=$(env $envs timeout 600 $MPIRUN -n "$ranks" "$prog" < /dev/null 2>&1); then
        pass "$name: $(echo "$out" | tail -1)"
    else
        fail "$name"
        echo "$out" | tail -20
    fi
done <<< "$(select_layouts "$layouts")"
# PowerAI DDL's API on device memory (ddl_malloc, 2- and 4-argument ddl_allreduce).
for ranks in 1 2; do
    out=$(env DDL_NODE_SIZE=1 DDL_TIMEOUT=60 timeout 300 $MPIRUN -n "$ranks" "$top_builddir/tests/gpu/ddl-test-powerai-gpu" \
          < /dev/null 2>&1)
    grep -q "^PowerAI GPU: $ranks ranks, 0 failures" <<< "$out" && pass "PowerAI DDL API on device memory, $ranks rank(s)" ||
        { fail "PowerAI DDL API on device memory, $ranks rank(s)"; echo "$out" | tail -10; }
done
# The device benchmark, its results checked (it exits 1 on a wrong element).
for layout in "DDL_GPUS_PER_NODE=2 4" "DDL_NODE_SIZE=2 4"; do
    read -r var ranks <<< "$layout"
    if out=$(env DDL_LANES=2 "$var" DDL_TIMEOUT=60 timeout 300 $MPIRUN -n "$ranks" "$top_builddir/ddl-gpu-bench" \
             -n 3 -e 4M < /dev/null 2>&1); then
        pass "ddl-gpu-bench, $var, 2 lanes: every size checked"
    else
        fail "ddl-gpu-bench, $var, 2 lanes"; echo "$out" | tail -12
    fi
done
# Without the CUDA module, as on a host without the libddl0-cuda package: a
# device buffer is refused in one line that says what to install, and the
# job ends instead of waiting; ddl-info says why no module loads.
out=$(env DDL_CUDA_MODULE=none DDL_LANES=2 DDL_GPUS_PER_NODE=2 DDL_TIMEOUT=20 timeout 120 $MPIRUN -n 4 \
      "$top_builddir/ddl-gpu-bench" -n 1 -b 1K -e 1K < /dev/null 2>&1) && rc=0 || rc=$?
info_none=$(DDL_CUDA_MODULE=none "$top_builddir/ddl-info" | sed -n 's/^  CUDA:  //p')
info_other=$(DDL_CUDA_MODULE="$top_builddir/.libs/libddl.so.0" "$top_builddir/ddl-info" | sed -n 's/^  CUDA:  //p')
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "device buffer 0x[0-9a-f]*: this libddl has no CUDA module (DDL_CUDA_MODULE=none); install the CUDA module (Debian: apt install libddl0-cuda" <<< "$out" &&
        [ "$info_none" = "no CUDA module (DDL_CUDA_MODULE=none): host memory only" ] &&
        grep -q "is not a DDL lanes CUDA module" <<< "$info_other"; then
    pass "without the CUDA module: a device buffer is refused naming the package (exit $rc), ddl-info says why"
else
    fail "without the CUDA module: exit $rc; ddl-info: $info_none / $info_other"; echo "$out" | tail -8
fi
# The Python binding's device branch (a CUDA tensor's pointer and stream):
# real CUDA tensors where a python3 on the path has a torch that sees the GPU,
# a tensor-like object over emulated device memory with Debian's torch.
python=
if [[ $info == *emulated* ]]; then
    /usr/bin/python3 -c 'import torch, numpy' 2> /dev/null && python=/usr/bin/python3
else
    python3 -c 'import numpy, torch; assert torch.cuda.is_available()' 2> /dev/null && python=$(command -v python3)
fi
[ -n "$python" ] || echo "# not run: the Python binding on device tensors (no python3 with numpy and a torch that reaches the devices)"
if [ -n "$python" ]; then
    for layout in "DDL_NODE_SIZE=2 collective" "DDL_GPUS_PER_NODE=2 serve"; do
        read -r var helpers <<< "$layout"
        if out=$(env DDL_LIBRARY="$top_builddir/.libs/libddl.so" OMP_NUM_THREADS=1 DDL_LANES=2 "$var" DDL_HELPERS=$helpers \
                 DDL_TIMEOUT=60 timeout 300 $MPIRUN -n 4 "$python" "$top_srcdir/tests/python/test_device.py" \
                 < /dev/null 2>&1); then
            pass "Python binding and DDP hook on device tensors, $var, $helpers helpers"
        else
            fail "Python binding and DDP hook on device tensors, $var, $helpers helpers"; echo "$out" | tail -12
        fi
    done
fi
# A stalled and a killed rank with device requests out: the job ends, nothing is left.
if out=$(top_builddir=$top_builddir top_srcdir=$top_srcdir DDL_TEST_DEVICE=1 bash "$top_srcdir/tests/mpi/run-failure.sh" 2>&1); then
    pass "a stalled and a killed rank on device buffers: $(echo "$out" | tail -1)"
else
    fail "a stalled and a killed rank on device buffers"; echo "$out" | tail -30
fi
[ "$(shm_segments)" = "$before" ] || fail "shared-memory segments left: $(shm_segments)"
leftover=$(ls /dev/shm 2>/dev/null | grep '^ddl-cuda-emu' || true)
[ -z "$leftover" ] || fail "emulated NCCL segments left: $leftover"
finish
