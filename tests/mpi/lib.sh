#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Shared by the MPI test scripts: how to launch ranks, and the checks that no
# shared-memory segment or process is left behind.
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The launcher of the MPI the build uses (configure: DDL_MPI_NAME, DDL_MPIRUN).
# More ranks than the 2 cores here: Open MPI must be told to oversubscribe
# and not to bind; MPICH's Hydra does neither unless asked.
if [ "${DDL_MPI_NAME:-openmpi}" = mpich ]; then
    MPIRUN="${DDL_MPIRUN:-mpiexec.mpich}"
else
    MPIRUN="${DDL_MPIRUN:-mpirun} --oversubscribe --bind-to none"
fi
export DDL_DEBUG=${DDL_DEBUG:-WARN}

# This user's segments in /dev/shm whose creating process has exited: what a
# job of this test leaked.  A live job's segments (this test's own, or those
# of another job of the library beside it) exist for moments while it sets
# up, and are not counted.  Names are ddl-<uid>-<job>.<step>-<pid>-...
shm_segments() {
    local uid rest name
    uid=$(id -u)
    for name in $(ls /dev/shm 2>/dev/null | grep "^ddl-$uid-"); do
        rest=${name#ddl-"$uid"-}
        rest=${rest#*-}
        kill -0 "${rest%%-*}" 2>/dev/null || echo "$name"
    done
}

# Fail when this test left a segment in /dev/shm.
check_shm_clean() {
    local left
    left=$(shm_segments)
    if [ -n "$left" ]; then
        echo "FAIL: shared-memory segments left in /dev/shm: $left"
        return 1
    fi
}

# The layout lines of a suite to run: those that match DDL_TEST_LAYOUTS (an
# extended regular expression; the sanitizer passes run a few), else all.
select_layouts() {
    if [ -n "${DDL_TEST_LAYOUTS:-}" ]; then grep -E -- "$DDL_TEST_LAYOUTS" <<< "$1" || true; else echo "$1"; fi
}

# run_layout PROG RANKS LABEL ENV...: PROG on RANKS ranks with ENV; pass or fail LABEL.
run_layout() {
    local prog=$1 ranks=$2 label=$3
    shift 3
    if env "$@" timeout 600 $MPIRUN -n "$ranks" "$prog" < /dev/null; then
        pass "$label"
    else
        fail "$label (env $*)"
    fi
}

# run_layouts PROG LAYOUTS: run_layout for each line "nodes gpus lanes
# helpers extra" (extra: VAR=value pairs joined by ':'), nodes emulated with
# DDL_NODE_SIZE, with small chunks and stage: many pipeline steps and staging
# rounds per call.
run_layouts() {
    local prog=$1 nodes gpus lanes helpers extra
    while read -r nodes gpus lanes helpers extra; do
        [ -n "$nodes" ] || continue
        run_layout "$prog" $((nodes * gpus * lanes)) "$nodes nodes x $gpus GPUs x $lanes lanes, $helpers, $extra" \
            DDL_LANES="$lanes" DDL_NODE_SIZE=$((gpus * lanes)) DDL_HELPERS="$helpers" DDL_CHUNK_SIZE=64K \
            DDL_STAGE_SIZE=1M DDL_TIMEOUT=60 $(echo "$extra" | tr ':' ' ')
    done <<< "$2"
}

fail_count=0
pass_count=0
pass() { pass_count=$((pass_count + 1)); echo "PASS: $*"; }
fail() { fail_count=$((fail_count + 1)); echo "FAIL: $*"; }
finish() {
    echo "$pass_count passed, $fail_count failed"
    [ "$fail_count" -eq 0 ]
}
