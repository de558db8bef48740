#!/bin/bash
# The multiring algorithm on grids of virtual nodes and racks (DDL_TOPOLOGY):
# results on 2- and 3-dimensional and non-square grids, the bytes each
# dimension carries, and a grid that does not match the job.
. "$(dirname "$0")/lib.sh"
before=$(shm_segments)
# ranks gpus-per-node lanes grid helpers
grids="
8 2 1 2x2x2     collective
8 1 2 1x2x2     serve
8 1 1 1x2x2x2   collective
6 1 1 1x3x2     collective
6 1 1 1x2x3     serve
"
while read -r ranks gpus lanes grid helpers; do
    [ -n "$ranks" ] || continue
    envs="DDL_ALGO=multiring DDL_TOPOLOGY=$grid DDL_LANES=$lanes DDL_NODE_SIZE=$((gpus * lanes)) DDL_HELPERS=$helpers \
DDL_CHUNK_SIZE=64K DDL_STAGE_SIZE=1M DDL_TIMEOUT=60 DDL_TEST_QUICK=1"
    if env $envs timeout 300 $MPIRUN -n "$ranks" "$top_builddir/tests/mpi/ddl-test-allreduce" < /dev/null; then
        pass "multiring $grid ($ranks ranks, helpers $helpers)"
    else
        fail "multiring $grid (env $envs)"
    fi
done <<< "$grids"
for grid in 1x4x2 1x2x4 1x2x2x2; do
    if out=$(DDL_ALGO=multiring DDL_TOPOLOGY=$grid DDL_NODE_SIZE=1 timeout 120 $MPIRUN -n 8 \
        "$top_builddir/tests/mpi/ddl-test-multiring" < /dev/null 2>&1); then
        pass "bytes per dimension on $grid: $(grep -c '^dimension' <<< "$out") dimensions as expected"
        echo "$out" | grep '^dimension'
    else
        fail "bytes per dimension on $grid"; echo "$out" | tail -5
    fi
done
out=$(DDL_ALGO=multiring DDL_TOPOLOGY=1x3x3 DDL_NODE_SIZE=1 timeout 60 $MPIRUN -n 6 "$top_builddir/ddl-bench" \
    -e 8 -n 1 -w 0 < /dev/null 2>&1)
grep -q "DDL_TOPOLOGY=1x3x3 describes 1 GPUs per node on 9 nodes, but the job has 1 GPUs per node on 6 nodes" <<< "$out" &&
    pass "a grid that does not match the job names both shapes" || { fail "mismatched grid"; echo "$out" | tail -3; }
out=$(DDL_ALGO=multiring timeout 60 $MPIRUN -n 2 "$top_builddir/ddl-bench" -e 8 -n 1 -w 0 < /dev/null 2>&1)
grep -q "DDL_ALGO=multiring needs DDL_TOPOLOGY, e.g. 4x8x2" <<< "$out" && pass "multiring without a grid is refused" ||
    { fail "multiring without a grid"; echo "$out" | tail -3; }
# Without DDL_TOPOLOGY, the racks come from Slurm's topology/tree address: 4
# leaf switches of 2 nodes each make a 1x2x4 grid.
wrap='export SLURM_TOPOLOGY_ADDR=spine.sw$((OMPI_COMM_WORLD_RANK / 2)).n$OMPI_COMM_WORLD_RANK; export SLURM_TOPOLOGY_ADDR_PATTERN=switch.switch.node; exec "$0"'
if out=$(DDL_ALGO=multiring DDL_NODE_SIZE=1 DDL_DEBUG=INFO DDL_DEBUG_SUBSYS=INIT timeout 120 $MPIRUN -n 8 \
    sh -c "$wrap" "$top_builddir/tests/mpi/ddl-test-multiring" < /dev/null 2>&1) &&
   grep -q "grid from SLURM_TOPOLOGY_ADDR: 1 GPUs x 2 nodes per switch x 4 switches" <<< "$out" &&
   grep -q "^dimension 2: 4 ranks" <<< "$out"; then
    pass "grid from SLURM_TOPOLOGY_ADDR (1x2x4), bytes per dimension as expected"
else
    fail "grid from SLURM_TOPOLOGY_ADDR"; echo "$out" | tail -6
fi
# A program written for PowerAI DDL: ddl_init("-mode r:1x2x2 ..."), in-place float and half sums.
if out=$(DDL_NODE_SIZE=1 timeout 120 $MPIRUN -n 4 "$top_builddir/tests/mpi/ddl-test-powerai" < /dev/null 2>&1) &&
   grep -q "4 ranks, 0 failures" <<< "$out" && grep -q "DDL iteration 2: dimension 2 (2 ranks)" <<< "$out"; then
    pass "PowerAI DDL compatible API on a 1x2x2 grid, -dump_iter statistics"
else
    fail "PowerAI DDL compatible API"; echo "$out" | tail -8
fi
[ "$(shm_segments)" = "$before" ] && pass "/dev/shm clean" || fail "segments left: $(shm_segments)"
finish
