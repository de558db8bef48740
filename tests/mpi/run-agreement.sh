#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Never a silent wrong result (test_agreement.c): a call one rank refuses for
# its own arguments, a helper's call with another count, an owner that skips
# a call, and layout settings that differ between ranks, on one node and on
# virtual nodes, collective and serve mode, blocking and nonblocking.
. "$(dirname "$0")/lib.sh"
prog=$top_builddir/tests/mpi/ddl-test-agreement
before=$(shm_segments)

# Every refusal path: "lanes helpers node-size ranks [env]".  Online selection
# stays on: the calls around the refused one explore and decide as usual.
# DDL_ALGO=lane: the lanes between nodes, where repeated calls send their
# first chunk before the owners' exchange (an owner's short ddl_malloc buffer
# there left the other node waiting for its chunk until DDL_TIMEOUT).
layouts=$(select_layouts "1 collective 2 4
2 collective 0 4
2 serve 2 4
1 collective 1 2
1 collective 2 4 DDL_ALGO=lane
2 collective 2 4 DDL_TEST_MPI_THREAD=single")
while read -r lanes helpers size ranks extra; do
    [ -n "$lanes" ] || continue
    run_layout "$prog" "$ranks" "refused arguments fail the call everywhere, the next calls are right (lanes $lanes, $helpers, node size $size, $ranks ranks${extra:+, $extra})" \
        DDL_TEST_SCENARIO=refused DDL_LANES=$lanes DDL_HELPERS=$helpers DDL_NODE_SIZE=$size DDL_TIMEOUT=60 DDL_DEBUG=NONE $extra
done <<< "$layouts"

# DDL_TEST_QUICK (the sanitizer build, which looks for paths, not shapes):
# the first of each list below.
quick=${DDL_TEST_QUICK:-0}
first_if_quick() { if [ "$quick" = 0 ]; then printf '%s\n' "$@"; else printf '%s\n' "$1"; fi; }

# A helper's own mismatch leaves the selection in step (online selection on).
while read -r layout; do
    set -- $layout
    run_layout "$prog" 4 "a helper's mismatch fails it alone; the 27 calls after it succeed (lanes $1, node size $2, nonblocking $3${4:+, $4})" \
        DDL_TEST_SCENARIO=helper DDL_LANES=$1 DDL_NODE_SIZE=$2 DDL_TEST_NONBLOCKING=$3 DDL_TIMEOUT=60 DDL_DEBUG=NONE ${4:-}
done < <(first_if_quick "2 4 0" "2 2 1" "2 2 0" "2 4 0 DDL_LANE_ALGO=rd")

# An owner that skips a call: every rank returns within DDL_TIMEOUT and its grace.
while read -r count; do
    start=$(date +%s)
    run_layout "$prog" 4 "an owner skips call 12: every call of every rank returns, the helper names its owner ($count elements)" \
        DDL_TEST_SCENARIO=skip DDL_TEST_COUNT=$count DDL_LANES=2 DDL_NODE_SIZE=2 DDL_TIMEOUT=3 DDL_DEBUG=NONE
    echo "    (the job took $(( $(date +%s) - start )) s)"
done < <(first_if_quick 300000 2 65536)

# Layout settings that differ between ranks are refused by name at creation.
while read -r case; do
    set -- $case
    run_layout "$prog" 4 "$1=$2 on $([ "$3" = 1 ] && echo "ranks 0-1" || echo "rank 0") only: refused at creation, named" \
        DDL_TEST_SCENARIO=layout DDL_TEST_SETTING=$1 DDL_TEST_VALUE=$2 DDL_TEST_HALF=$3 $1=$4 DDL_TIMEOUT=20 DDL_DEBUG=NONE
done < <(first_if_quick "DDL_LANES 2 0 1" "DDL_NODE_SIZE 2 0 4" "DDL_HELPERS serve 0 collective" "DDL_LANES 2 1 1" \
    "DDL_GPUS_PER_NODE 2 1 4")

[ "$(shm_segments)" = "$before" ] && pass "/dev/shm clean" || fail "segments left in /dev/shm: $(shm_segments)"
finish
