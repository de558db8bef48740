#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A rank that stalls (SIGSTOP), dies (SIGKILL) or whose MPI call fails (MPI:
# the preloaded mpi_fail.c fails its 40th MPI_Isend) in the middle of a long
# allreduce: the job ends within a short DDL_TIMEOUT with a message naming the
# rank (or MPI's error), no process is left, and /dev/shm is clean.  DDL_TEST_DEVICE=1: on
# device buffers (run-gpu.sh runs it so).
. "$(dirname "$0")/lib.sh"
prog=$top_builddir/tests/mpi/ddl-test-failure
mpi_fail=$top_builddir/tests/mpi/.libs/libddl-mpi-fail.so
TIMEOUT_S=3

# run_case SIGNAL VICTIM EXPECTED-TEXT [REQUESTS-IN-FLIGHT]
run_case() {
    local sig=$1 victim=$2 expect=$3 async=${4:-0}
    local dir log pid start end elapsed victim_pid rc inject=()
    dir=$(mktemp -d)
    log=$dir/log
    # (A sanitizer's runtime wants to be loaded first; the preloaded call is
    # not instrumented and allocates nothing, so ASan is told not to mind.)
    [ "$sig" = MPI ] && inject=(env LD_PRELOAD="$mpi_fail" DDL_TEST_MPI_FAIL="$victim:40"
                                ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0")
    # 2 nodes x 1 GPU x 2 lanes: rank 3 is node 1's helper, lane peer of rank 1.
    DDL_TEST_ASYNC=$async DDL_TEST_PIDDIR=$dir DDL_TIMEOUT=$TIMEOUT_S DDL_LANES=2 DDL_NODE_SIZE=2 DDL_ALGO=lane \
        timeout 120 $MPIRUN -n 4 "${inject[@]}" "$prog" > "$log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do
        [ "$(ls "$dir"/rank.*.pid 2>/dev/null | wc -l)" -eq 4 ] && break
        sleep 0.1
    done
    sleep 1 # in the middle of the allreduce stream
    victim_pid=$(cat "$dir/rank.$victim.pid" 2>/dev/null)
    if [ -z "$victim_pid" ]; then
        fail "SIG$sig: the ranks did not start"; cat "$log"; kill "$pid" 2>/dev/null; wait "$pid"; rm -rf "$dir"; return
    fi
    start=$(date +%s.%N)
    [ "$sig" = MPI ] || kill -"$sig" "$victim_pid"
    wait "$pid"
    rc=$?
    end=$(date +%s.%N)
    elapsed=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
    sed 's/^/    | /' "$log" | grep -v '^    | *$' | head -20
    if [ "$rc" -eq 0 ]; then
        fail "SIG$sig of rank $victim: mpirun exited 0"
    elif awk -v e="$elapsed" -v t="$TIMEOUT_S" 'BEGIN { exit !(e > t + 15) }'; then
        fail "SIG$sig of rank $victim: the job took ${elapsed}s to end (DDL_TIMEOUT=$TIMEOUT_S)"
    elif [ -n "$expect" ] && ! grep -q "$expect" "$log"; then
        fail "SIG$sig of rank $victim: no message matching '$expect'"
    elif [ "$async" -gt 0 ] && [ -n "$expect" ] && ! every_wait_names "$log" "$victim" "$async" "$expect"; then
        fail "SIG$sig of rank $victim with $async requests in flight: not every survivor's every wait failed naming it"
    else
        pass "SIG$sig of rank $victim$([ "$async" -gt 0 ] && echo " ($async requests in flight)"): job ended in ${elapsed}s with rc $rc"
    fi
    # mpirun has returned; its ranks must be gone within a few seconds.
    for f in "$dir"/rank.*.pid; do
        p=$(cat "$f")
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$p" 2>/dev/null; then
            fail "rank pid $p still running 5 s after the job"; kill -9 "$p" 2>/dev/null
        fi
    done
    rm -rf "$dir"
}

# every_wait_names LOG VICTIM REQUESTS PATTERN: each surviving rank's waits
# failed from some request on to the last one, and its first failed wait leads
# to the victim: it names the victim, or a rank whose own first message leads
# to it (ranks that time out at about the same time may each report the peer
# they waited for).  At least one survivor names the victim itself, matching
# PATTERN.
every_wait_names() {
    local log=$1 victim=$2 n=$3 pattern=$4 r p round
    local -A first
    local leads=" $victim "
    for r in 0 1 2 3; do
        [ "$r" -eq "$victim" ] && continue
        grep -q "^rank $r: request $((n - 1)): ddl_wait: " "$log" || { echo "    rank $r: the last request did not fail"; return 1; }
        first[$r]=$(grep "^rank $r: request [0-9]*: ddl_wait: " "$log" | head -1)
    done
    grep -h "rank $victim\b" <<< "${first[*]}" | grep -q "$pattern" ||
        { echo "    no survivor's first message names rank $victim matching '$pattern'"; return 1; }
    for round in 1 2 3; do
        for r in "${!first[@]}"; do
            [[ "$leads" == *" $r "* ]] && continue
            for p in $leads; do
                grep -q "rank $p\b" <<< "${first[$r]#rank $r: }" && { leads="$leads$r "; break; }
            done
        done
    done
    for r in "${!first[@]}"; do
        [[ "$leads" == *" $r "* ]] || { echo "    rank $r: its first message does not lead to rank $victim: ${first[$r]}"; return 1; }
    done
}

before=$(shm_segments)
if [ "${DDL_TEST_DEVICE:-0}" = 1 ]; then
    # Device buffers (tests/gpu/run-gpu.sh): the same stall and death while
    # the device path's transport (NCCL where it loads) carries the lanes.
    # Stopped inside a transfer, its lane peer's NCCL wait names it ("other
    # ranks: 3 on"); stopped between calls (the stop's moment is not chosen),
    # its node's owner names it ("local ranks 1 (rank 3)"): either way a
    # survivor names the stalled rank.
    run_case STOP 3 "timed out.*\(other ranks.*: 3 on\|(rank 3)\)"
    run_case KILL 1 "" 4
else
    # A stalled helper: its lane peer times out naming it, the node's ranks stop.
    run_case STOP 3 "timed out.*rank 3"
    # A killed rank: the job ends, nothing hangs.
    run_case KILL 1 ""
    # The same with nonblocking requests in flight: every survivor's every wait
    # fails within DDL_TIMEOUT (and a short grace), naming the stalled rank or the
    # rank that waited for it.
    run_case STOP 3 "rank 3" 4
    run_case KILL 1 "" 4
    # A failed MPI call (the runtime's own error handler): no abort by MPI;
    # the rank names MPI's error and the communicator, the others end.
    if [ -f "$mpi_fail" ]; then
        run_case MPI 1 "rank 1: ddl_allreduce: MPI error: .*an MPI call on ddl lanes: lane failed: \(MPI_ERR_OTHER\|Other MPI error\)"
    else
        fail "$mpi_fail is not built"
    fi
fi
if [ "$(shm_segments)" != "$before" ]; then fail "segments left in /dev/shm: $(shm_segments)"; else pass "/dev/shm clean"; fi
finish
