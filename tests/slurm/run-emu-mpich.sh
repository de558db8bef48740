#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# MPICH through the plugin's rails on the emulated cluster
# (bench/emu-cluster.sh, DDL_EMU_STACK=mpich: srun --mpi=pmi2, MPICH's
# ch4:ucx over UCX's tcp transport between the nodes): ddl-bench built
# against MPICH (build-mpich/, scripts/test-mpich.sh) with --ddl-lanes=2 on
# 2 nodes x 2 GPUs, the helpers running the application (helpers=app: the
# installed ddl-helper is Open MPI's).  16 MiB must be right and each node's
# bytes on both rails within 20% of each other (the interfaces' counters).
# MPICH 4.0.2 often hangs in MPI_Finalize after its results
# (pmodels/mpich#6596): emu-cluster.sh's job ends such a step.
# scripts/test-mpich.sh runs it in build-mpich/, with the plugin of the main
# tree (DDL_MAIN_BUILD), which is built against Open MPI.
. "$(dirname "$0")/../mpi/lib.sh"
emu=$top_srcdir/bench/emu-cluster.sh
bench=$top_builddir/ddl-bench
main=${DDL_MAIN_BUILD:-$top_builddir}
if [ "$(id -u)" -ne 0 ] || ! command -v slurmctld > /dev/null || [ ! -f "$main/.libs/spank_ddl.so" ] ||
   ! ip netns list > /dev/null 2>&1 || ! ldd "$top_builddir/.libs/libddl.so" 2> /dev/null | grep -q libmpich; then
    echo "SKIP: needs root, Slurm, network namespaces, the plugin (in DDL_MAIN_BUILD) and a libddl built against MPICH"
    exit 77
fi
export top_builddir=$main # the cluster's plugin (tests/slurm/cluster.sh)
export DDL_EMU_PREFIX=ddlm$$ DDL_CLUSTER_DIR=/tmp/ddl-emu-mpich-$$ DDL_CLUSTER_PORT=26817 DDL_CLUSTER_HELPERS=app
trap '"$emu" stop > /dev/null 2>&1' EXIT
"$emu" start 2 2 1gbit > /dev/null || { fail "the emulated cluster did not start"; finish; exit 1; }
log=$DDL_CLUSTER_DIR/mpich.txt
before=$("$emu" counters)
start=$(date +%s)
DDL_EMU_STACK=mpich DDL_ALGO=lane "$emu" job "$log" timeout 120 srun -N2 --gpus-per-node=2 --ddl-lanes=2 "$bench" \
    --mode ddl -b 16M -e 16M -n 2 -w 1 2> /dev/null
rc=$?
after=$("$emu" counters)
sent() { # NODE RAIL: its bytes between the two readings
    local sum='$1 == n && $2 == r {s += $4} END {print s + 0}'
    echo $(( $(awk -v n="$1" -v r="$2" "$sum" <<< "$after") - $(awk -v n="$1" -v r="$2" "$sum" <<< "$before") ))
}
ok=1 shares=""
for node in n1 n2; do
    r0=$(sent $node rail0) r1=$(sent $node rail1)
    shares+=" $node $r0/$r1"
    [ "$r0" -ge 16000000 ] && [ "$r1" -ge 16000000 ] && [ $((10 * r0)) -ge $((8 * r1)) ] &&
        [ $((10 * r1)) -ge $((8 * r0)) ] || ok=0
done
if [ $rc -eq 0 ] && grep -q "2 nodes x 2 GPUs x 2 lanes" "$log" && [ $ok -eq 1 ]; then
    pass "MPICH over the emulated rails: 16 MiB right, each node's rails within 20% (bytes on rail0/rail1:$shares; $(( $(date +%s) - start )) s)"
else
    fail "MPICH over the emulated rails (exit $rc; bytes on rail0/rail1:$shares)"; tail -8 "$log"
fi
finish
