#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The device path on this machine's GPUs: owner + helpers sharing one GPU over
# CUDA IPC, 2 GPUs on one node, and 2 virtual nodes with the staged transport
# (and NCCL when there are 2 devices, since NCCL refuses two ranks of one
# communicator on one GPU).  Skips (exit 77) with the reason when libddl was
# built without CUDA or CUDA sees no device.
. "$(dirname "$0")/../mpi/lib.sh"
prog=$top_builddir/tests/gpu/ddl-test-gpu-allreduce
info=$("$top_builddir/ddl-info" | sed -n 's/^  CUDA:  //p')
case $info in
yes,*) ;;
*) echo "SKIP: GPU tests: $info"; exit 77 ;;
esac
devices=$(echo "$info" | sed -n 's/^yes, \([0-9]*\) device.*/\1/p')
before=$(shm_segments)

# nodes gpus lanes helpers extra-environment
layouts="
1 1 2 collective DDL_ALGO=lane
1 1 4 serve      DDL_ALGO=lane
1 2 2 collective DDL_ALGO=auto
2 1 2 collective DDL_GPU_TRANSPORT=staged
2 2 1 serve      DDL_GPU_TRANSPORT=staged:DDL_CHUNK_SIZE=64K
"
[ "${devices:-1}" -ge 2 ] && layouts+="2 1 1 collective DDL_GPU_TRANSPORT=nccl
"
while read -r nodes gpus lanes helpers extra; do
    [ -n "$nodes" ] || continue
    ranks=$((nodes * gpus * lanes))
    envs="DDL_LANES=$lanes DDL_NODE_SIZE=$((gpus * lanes)) DDL_HELPERS=$helpers DDL_TIMEOUT=60 DDL_TEST_QUICK=1 \
$(echo "$extra" | tr ':' ' ')"
    name="$nodes nodes x $gpus GPUs x $lanes lanes, $helpers, $extra"
    if out=$(env $envs timeout 600 $MPIRUN -n "$ranks" "$prog" < /dev/null 2>&1); then
        pass "$name: $(echo "$out" | tail -1)"
    else
        fail "$name"
        echo "$out" | tail -20
    fi
done <<< "$layouts"
# PowerAI DDL's API on device memory (ddl_malloc, 2- and 4-argument ddl_allreduce).
for ranks in 1 2; do
    out=$(env DDL_NODE_SIZE=1 DDL_TIMEOUT=60 timeout 300 $MPIRUN -n "$ranks" "$top_builddir/tests/gpu/ddl-test-powerai-gpu" \
          < /dev/null 2>&1)
    grep -q "^PowerAI GPU: $ranks ranks, 0 failures" <<< "$out" && pass "PowerAI DDL API on device memory, $ranks rank(s)" ||
        { fail "PowerAI DDL API on device memory, $ranks rank(s)"; echo "$out" | tail -10; }
done
[ "$(shm_segments)" = "$before" ] || fail "shared-memory segments left: $(shm_segments)"
finish
