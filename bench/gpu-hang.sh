#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# One GPU test layout with a short DDL_TIMEOUT, for a GPU machine where the
# device suite stalls: the test's own message names the first case that fails
# or times out, and if the ranks are still running after WAIT seconds every
# thread of every rank is printed (cuda-gdb, which also attaches to host code).
#     bench/gpu-hang.sh RANKS WAIT VAR=VALUE...     (from the build tree)
set -uo pipefail
ranks=$1 wait=$2
shift 2
top_builddir=$PWD
. "$(dirname "$0")/../tests/mpi/lib.sh" # MPIRUN, as every test launches ranks
gdb=$(command -v cuda-gdb || echo /usr/local/cuda/bin/cuda-gdb)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
env DDL_TIMEOUT=10 DDL_TEST_QUICK=1 "$@" timeout $((wait + 60)) \
    $MPIRUN -n "$ranks" tests/gpu/ddl-test-gpu-allreduce < /dev/null > "$log" 2>&1 &
job=$!
for ((i = 0; i < wait; i++)); do
    kill -0 $job 2> /dev/null || break
    sleep 1
done
if kill -0 $job 2> /dev/null; then
    echo "# still running after $wait s: every rank's threads"
    for pid in $(pgrep -f '\.libs/ddl-test-gpu-allreduce'); do
        echo "## pid $pid"
        if [ -x "$gdb" ]; then
            timeout 60 "$gdb" -p "$pid" -batch -ex 'thread apply all bt 25' 2>&1 |
                grep -E '^(#|Thread)|rror' | head -150
        else # no debugger: where each thread sleeps in the kernel
            echo "(no cuda-gdb: each thread's kernel wait channel)"
            for t in /proc/"$pid"/task/*; do echo "$(cat "$t/comm") $(cat "$t/wchan")"; done | sort | uniq -c
        fi
    done
    pkill -f '\.libs/ddl-test-gpu-allreduce'
fi
wait $job
echo "# exit $?"
cat "$log"
