#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Bad input: invalid arguments, mismatched calls (DDL_CHECK), bad layouts and
# bad configuration values end with a clear message, never a hang.
. "$(dirname "$0")/lib.sh"
before=$(shm_segments)

# DDL_SELECT=model: the test expects each path's own message (the lane path names
# the node's first bad owner, the MPI path every owner its own), so it fixes
# which sizes take which path.
if DDL_LANES=2 DDL_SELECT=model timeout 120 $MPIRUN -n 4 "$top_builddir/tests/mpi/ddl-test-errors"; then
    pass "invalid arguments and DDL_CHECK mismatches (1 node x 2 GPUs x 2 lanes)"
else
    fail "invalid arguments and DDL_CHECK mismatches"
fi

# The always-on check (no DDL_CHECK): mismatched calls on every layout kind.
# DDL_SELECT=model: the small mismatched calls take the MPI path between nodes,
# their data inside the signature exchange (online selection would time the
# lanes first).
exchange=$(mktemp) halves=$(mktemp)
echo "0-inf mpi/exchange" > "$exchange" # mismatched calls of up to 63 KiB inside the owners' exchange
echo "0-inf mpi/halves" > "$halves"     # of up to 512 KiB in the owners' own reduce-scatter (4 owners)
layouts=("1 collective 0 4" "2 serve 0 4" "2 collective 2 4" "2 serve 2 6" "1 collective 1 3" "1 collective 2 4"
    "2 collective 2 4 DDL_SELECT=model" "2 serve 2 6 DDL_SELECT=model" "1 collective 2 6 DDL_TUNING_FILE=$exchange"
    "2 serve 4 8 DDL_TUNING_FILE=$halves")
# The sanitizer build (DDL_TEST_QUICK): one node, lanes in each helper mode
# between virtual nodes, and the exchange and the halves.
[ "${DDL_TEST_QUICK:-0}" = 0 ] || layouts=("${layouts[0]}" "${layouts[2]}" "${layouts[7]}" "${layouts[8]}" "${layouts[9]}")
for layout in "${layouts[@]}"; do
    set -- $layout
    if env DDL_LANES=$1 DDL_HELPERS=$2 DDL_NODE_SIZE=$3 DDL_TIMEOUT=60 DDL_DEBUG=NONE ${5:-} timeout 120 \
            $MPIRUN -n $4 "$top_builddir/tests/mpi/ddl-test-mismatch" < /dev/null; then
        pass "mismatched count, type and op return DDL_ERR_MISMATCH and write nothing (lanes $1, $2, node size $3, $4 ranks${5:+, $5})"
    else
        fail "mismatch check (lanes $1, $2, node size $3, $4 ranks${5:+, $5})"
    fi
done
rm -f "$exchange" "$halves"

# expect_failure DESCRIPTION EXPECTED-TEXT ENV... : ddl-bench must exit non-zero
# quickly with the text, printed at most once by each of the 4 ranks.
expect_failure() {
    local what=$1 text=$2 out rc
    shift 2
    out=$(env "$@" timeout 60 $MPIRUN -n 4 "$top_builddir/ddl-bench" -b 8 -e 8 -n 1 -w 0 2>&1)
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q -- "$text" <<< "$out" && [ "$(grep -c -- "$text" <<< "$out")" -le 4 ]; then
        pass "$what: exit $rc, '$text' (once per rank at most)"
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
# Settings the job cannot run are refused when the communicator is created.
bad_tuning=$(mktemp)
printf '# written on a grid allocation\n0-1M lane\n1M-inf multiring dims=ring\n' > "$bad_tuning"
expect_failure "a tuning band's multiring without a grid" "tuning file $bad_tuning, line 3: the band chooses multiring, but this job has no grid" \
    DDL_TUNING_FILE=$bad_tuning
expect_failure "DDL_ALGO=multiring without a grid" "DDL_ALGO=multiring needs a grid" DDL_ALGO=multiring
expect_failure "a tuning file that is a directory" "is not a regular file (a directory)" DDL_TUNING_FILE=/tmp
expect_failure "stage + heap beyond the address space" "more address space than a process has" \
    DDL_STAGE_SIZE=16M DDL_HEAP_SIZE=9223372036854775807
expect_failure "a chunk size the buffers cannot be aligned to" "not a multiple of 64" DDL_CHUNK_SIZE=5000
expect_failure "a DDL_TUNING_SAVE file that cannot be written" "DDL_TUNING_SAVE=/nonexistent/t.txt cannot be written (No such file or directory)" \
    DDL_TUNING_SAVE=/nonexistent/t.txt
expect_failure "malformed DDL_SELECT" "DDL_SELECT=fast is not one of online, model" DDL_SELECT=fast
rm -f "$bad_tuning"
out=$(DDL_TIMEOUT=1e3x "$top_builddir/ddl-helper" 2>&1); rc=$?
if [ $rc -eq 2 ] && grep -q "DDL_TIMEOUT=1e3x is not a positive number" <<< "$out"; then
    pass "ddl-helper reads DDL_TIMEOUT strictly"
else
    fail "ddl-helper with DDL_TIMEOUT=1e3x: exit $rc: $out"
fi

# A segment left by a rank that died before unlinking is reaped by the next job on the node.
dead=$(sh -c 'echo $$')
stale=/dev/shm/ddl-$(id -u)-x.x-$dead-0-00000000deadbeef-ctrl
: > "$stale"
if timeout 60 $MPIRUN -n 2 "$top_builddir/ddl-bench" -b 8 -e 8 -n 1 -w 0 > /dev/null 2>&1 && [ ! -e "$stale" ]; then
    pass "a stale segment of exited pid $dead was reaped"
else
    fail "stale segment $stale still there"; rm -f "$stale"
fi

if [ "$(shm_segments)" != "$before" ]; then fail "segments left in /dev/shm: $(shm_segments)"; else pass "/dev/shm clean"; fi
finish
