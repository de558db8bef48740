#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ddl_reduce_scatter and ddl_allgather on the lanes and the MPI path, one
# and several nodes (emulated with DDL_NODE_SIZE), both helper modes: every
# type, op, count and buffer kind on the first lines, the quick matrix on
# the others (test_blocks.c), then requests and a mismatch.
. "$(dirname "$0")/lib.sh"
prog=$top_builddir/tests/mpi/ddl-test-blocks
before=$(shm_segments)

# nodes gpus lanes helpers extra-environment
layouts="
2 2 2 collective DDL_ALGO=lane
1 3 1 collective DDL_ALGO=mpi
1 1 1 collective DDL_ALGO=lane:DDL_TEST_QUICK=1
1 2 2 serve      DDL_ALGO=lane
3 1 2 collective DDL_ALGO=lane:DDL_INFLIGHT=4:DDL_TEST_QUICK=1
2 2 2 serve      DDL_ALGO=lane:DDL_TEST_QUICK=1
2 1 2 collective DDL_ALGO=auto:DDL_TEST_QUICK=1
3 2 1 serve      DDL_ALGO=mpi:DDL_TEST_QUICK=1
"
# The sanitizer build (DDL_TEST_QUICK) runs three: the lanes on one node and
# between nodes, and the MPI path between nodes.
if [ -z "${DDL_TEST_LAYOUTS:-}" ] && [ "${DDL_TEST_QUICK:-0}" != 0 ]; then
    layouts=$(grep -E '^(2 2 2 collective|1 2 2 serve|3 2 1 serve)' <<< "$layouts")
fi
layouts=$(select_layouts "$layouts")
run_layouts "$prog" "$layouts"
[ "$(shm_segments)" = "$before" ] || fail "shared memory left behind: $(shm_segments)"
finish
