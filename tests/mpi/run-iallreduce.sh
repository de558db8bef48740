#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The nonblocking allreduce on the layouts that exercise its paths: batches of
# requests in flight among other MPI traffic, with a progress thread
# (MPI_THREAD_MULTIPLE) and without one (requests run in ddl_test / ddl_wait),
# in both helper modes, on the lane, multi-node and small-message paths.
. "$(dirname "$0")/lib.sh"
prog=$top_builddir/tests/mpi/ddl-test-iallreduce
before=$(shm_segments)

# nodes gpus lanes helpers thread-level extra-environment
layouts="
1 2 2 serve      multiple DDL_ALGO=auto
1 2 2 collective multiple DDL_ALGO=lane
2 1 2 serve      multiple DDL_ALGO=lane
2 2 2 collective multiple DDL_ALGO=auto
2 1 2 serve      single   DDL_ALGO=auto
3 1 2 collective multiple DDL_ALGO=lane:DDL_LANE_ALGO=rab:DDL_INFLIGHT=4
1 3 1 collective single   DDL_ALGO=mpi
"
if [ -n "${DDL_TEST_LAYOUTS:-}" ]; then
    layouts=$(select_layouts "$layouts")
elif [ "${DDL_TEST_QUICK:-0}" -gt 0 ]; then
    layouts=$(echo "$layouts" | sed -n '3p;5p;6p')
fi
while read -r nodes gpus lanes helpers level extra; do
    [ -n "$nodes" ] || continue
    ranks=$((nodes * gpus * lanes))
    envs="DDL_LANES=$lanes DDL_NODE_SIZE=$((gpus * lanes)) DDL_HELPERS=$helpers DDL_CHUNK_SIZE=64K \
DDL_STAGE_SIZE=1M DDL_TIMEOUT=60 DDL_TEST_MPI_THREAD=$level $(echo "$extra" | tr ':' ' ')"
    run_layout "$prog" "$ranks" "$nodes nodes x $gpus GPUs x $lanes lanes, $helpers, MPI thread $level, $extra" $envs
done <<< "$layouts"
[ "$(shm_segments)" = "$before" ] || fail "shared memory left behind: $(shm_segments)"
finish
