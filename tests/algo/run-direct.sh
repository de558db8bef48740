#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A new lane algorithm is one file and one row: in a build with
# --enable-test-algos, tests/algo's "direct" (inter_direct.c, its row in
# direct.def) and nothing else in runtime/.  Everything that lists, chooses,
# times or simulates lane algorithms must pick it up: ddl-info, DDL_LANE_ALGO
# (results checked against the serial sum on 2 and 3 emulated nodes), the cost
# model's log, DDL_EXPLORE, online selection and ddl-tune (on 2 nodes, where
# its row makes it a candidate), and ddl-sim.
. "$(dirname "$0")/../mpi/lib.sh"
if ! "$top_builddir/ddl-info" | grep -q '^  lane  *direct '; then
    echo "FAIL: ddl-info lists no lane algorithm \"direct\": is this build configured with --enable-test-algos?"
    exit 1
fi
pass "ddl-info lists direct with its description"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
before=$(shm_segments)

# The step lists run for real: every type, op and count, against the serial sum.
prog=$top_builddir/tests/mpi/ddl-test-allreduce
for layout in "2 2" "3 1"; do
    set -- $layout
    run_layout "$prog" $(($1 * $2)) "DDL_LANE_ALGO=direct, $1 nodes x 1 GPU x $2 lanes: every result right" \
        DDL_ALGO=lane DDL_LANE_ALGO=direct DDL_LANES=$2 DDL_NODE_SIZE=$2 DDL_CHUNK_SIZE=64K DDL_TIMEOUT=60
done

bench() { # LOG ENV...: ddl-bench on 2 nodes x 1 GPU x 2 lanes, results checked; sizes from $sizes
    local log=$1
    shift
    env "$@" DDL_LANES=2 DDL_NODE_SIZE=2 DDL_DEBUG=INFO DDL_DEBUG_SUBSYS=COLL DDL_TIMEOUT=60 timeout 300 \
        $MPIRUN -n 4 "$top_builddir/ddl-bench" $sizes -w 1 -o sum > "$log" 2>&1 &&
        grep -q '^# Out of bounds values : 0 OK' "$log"
}
check() { # LABEL PATTERN LOG: pass when ddl-bench passed and PATTERN is in LOG
    if [ "$rc" -eq 0 ] && grep -q -- "$2" "$3"; then pass "$1"; else fail "$1"; grep -i "error\|direct" "$3" | head -5; fi
}
sizes="-b 256K -e 1M -f 4 -n 6"
bench "$dir/model.log" DDL_ALGO=lane DDL_SELECT=model; rc=$?
check "the cost model prices direct" "cost model: .*direct [0-9]* us" "$dir/model.log"
bench "$dir/explore.log" DDL_ALGO=lane DDL_SELECT=model DDL_EXPLORE=1; rc=$?
check "DDL_EXPLORE (DDL_SELECT=model) times direct" "online selection, .*rounds[^:]*: .*lane/direct[^,]* [0-9.]* us" \
    "$dir/explore.log"
sizes="-b 256K -e 256K -n 40" # one size class, explored and decided
bench "$dir/online.log" DDL_SELECT=online; rc=$?
check "online selection times direct" "online selection, .*rounds[^:]*: .*lane/direct[^,]* [0-9.]* us" "$dir/online.log"
DDL_LANES=2 DDL_NODE_SIZE=2 DDL_TIMEOUT=60 timeout 300 $MPIRUN -n 4 "$top_builddir/ddl-tune" -b 256K -e 256K -n 1 \
    -o "$dir/tune.conf" > "$dir/tune.log" 2>&1; rc=$?
check "ddl-tune times direct" "lane/direct[^,]* [0-9.]* us" "$dir/tune.conf"

sim=$top_builddir/bench/sim/ddl-sim
if [ -x "$sim" ] && command -v smpirun > /dev/null; then
    if DDL_SIM=$sim timeout 300 "$top_srcdir/bench/sim/sim-run.sh" -N 2 -r 2 -g 1 -l 2 -- -a direct -c 4K --check \
            -b 4 -e 200K -f 9 -n 1 -w 0 > "$dir/sim.log" 2>&1 && grep -q "every element checked: right" "$dir/sim.log"; then
        pass "ddl-sim runs direct: every element right"
    else
        fail "ddl-sim -a direct"; tail -5 "$dir/sim.log"
    fi
else
    echo "ddl-sim not built (no SimGrid): its part skipped"
fi
[ "$(shm_segments)" = "$before" ] || fail "shared memory left behind: $(shm_segments)"
finish
