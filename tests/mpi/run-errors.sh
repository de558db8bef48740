#!/bin/bash
# Bad input: invalid arguments, mismatched calls (DDL_CHECK), bad layouts and
# bad configuration values end with a clear message, never a hang.
. "$(dirname "$0")/lib.sh"
before=$(shm_segments)

if DDL_LANES=2 timeout 120 $MPIRUN -n 4 "$top_builddir/tests/mpi/ddl-test-errors"; then
    pass "invalid arguments and DDL_CHECK mismatches (1 node x 2 GPUs x 2 lanes)"
else
    fail "invalid arguments and DDL_CHECK mismatches"
fi

# expect_failure DESCRIPTION EXPECTED-TEXT ENV... : ddl-bench must exit non-zero quickly with the text.
expect_failure() {
    local what=$1 text=$2 out rc
    shift 2
    out=$(env "$@" timeout 60 $MPIRUN -n 4 "$top_builddir/ddl-bench" -b 8 -e 8 -n 1 -w 0 2>&1)
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q -- "$text" <<< "$out"; then
        pass "$what: exit $rc, '$text'"
    else
        fail "$what: exit $rc, expected a message with '$text'; output:"
        echo "$out" | head -20
    fi
}
expect_failure "lanes do not divide the ranks" "4 ranks on a node do not divide into GPUs of 3 lanes" DDL_LANES=3
expect_failure "GPUs x lanes do not match" "need 6" DDL_LANES=2 DDL_GPUS_PER_NODE=3
expect_failure "virtual node size does not divide" "DDL_NODE_SIZE=3 does not divide" DDL_NODE_SIZE=3
expect_failure "malformed DDL_TIMEOUT" "DDL_TIMEOUT=abc is not a positive number" DDL_TIMEOUT=abc
expect_failure "malformed DDL_LANES" "DDL_LANES=two is not an integer" DDL_LANES=two
expect_failure "unknown DDL_ALGO" "DDL_ALGO=fastest is not one of" DDL_ALGO=fastest
# A place from the plugin's environment that MPI's view contradicts.
expect_failure "plugin place against MPI's view" "the plugin placed it on node 0 as GPU 3 lane 0, but MPI's node order makes it node 0 GPU 0 lane 0" \
    DDL_NODE=0 DDL_GPU=3 DDL_LANE=0 DDL_CORE=0
if [ "$(shm_segments)" != "$before" ]; then fail "segments left in /dev/shm: $(shm_segments)"; else pass "/dev/shm clean"; fi
finish
