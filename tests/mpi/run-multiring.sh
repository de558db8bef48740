#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
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
# Per-dimension algorithms fixed by a tuning band, and chosen by DDL_EXPLORE.
rings=$(mktemp)
echo "0-inf multiring dims=ring" > "$rings"
mixed=$(mktemp)
printf '0-64K multiring dims=rd,rd,rd\n64K-inf multiring dims=rd,ring chunk=64K\n' > "$mixed"
mixed2=$(mktemp)
echo "0-inf multiring dims=ring,rd,ring" > "$mixed2"
grids+="8 1 1 1x2x2x2   serve      DDL_TUNING_FILE=$mixed2 DDL_INFLIGHT=3
6 1 1 1x3x2     collective DDL_TUNING_FILE=$mixed
8 1 2 1x2x2     serve      DDL_EXPLORE=1
6 1 1 1x3x2     collective DDL_EXPLORE=1
"
dims_cases="1x4x2:ring 1x2x4:ring 1x2x2x2:ring 1x2x4:rd,ring 1x4x2:ring,rd 1x2x2x2:ring,rd,ring"
if [ "${DDL_TEST_QUICK:-0}" -gt 0 ]; then
    # The sanitizer build: each helper mode, GPUs and lanes per node, a rank
    # count that is not a power of two with a tuning file's mixed
    # dimensions, and one byte-count case of 4 dimensions: the sanitizers
    # look for paths (DDL_EXPLORE's runs in the main build).
    grids=$(grep -v '^$' <<< "$grids" | sed -n '1p;2p;7p')
    dims_cases="1x2x2x2:ring,rd,ring"
fi
while read -r ranks gpus lanes grid helpers extra; do
    [ -n "$ranks" ] || continue
    envs="${extra:-} DDL_ALGO=multiring DDL_TOPOLOGY=$grid DDL_LANES=$lanes DDL_NODE_SIZE=$((gpus * lanes)) DDL_HELPERS=$helpers \
DDL_CHUNK_SIZE=64K DDL_STAGE_SIZE=1M DDL_TIMEOUT=60 DDL_TEST_QUICK=1"
    if env $envs timeout 300 $MPIRUN -n "$ranks" "$top_builddir/tests/mpi/ddl-test-allreduce" < /dev/null; then
        pass "multiring $grid ($ranks ranks, helpers $helpers${extra:+, $extra})"
    else
        fail "multiring $grid (env $envs)"
    fi
done <<< "$grids"
dims_file=$(mktemp)
for case in $dims_cases; do
    grid=${case%%:*} dims=${case#*:}
    echo "0-inf multiring dims=$dims" > "$dims_file"
    if out=$(DDL_TEST_DIMS=$dims DDL_TUNING_FILE=$dims_file DDL_ALGO=multiring DDL_TOPOLOGY=$grid DDL_NODE_SIZE=1 \
        timeout 120 $MPIRUN -n 8 "$top_builddir/tests/mpi/ddl-test-multiring" < /dev/null 2>&1); then
        pass "bytes per dimension on $grid with dims=$dims: $(grep -c '^dimension' <<< "$out") dimensions as expected"
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
grep -q "DDL_ALGO=multiring needs a grid and this job has none: set DDL_TOPOLOGY, e.g. 4x8x2" <<< "$out" && pass "multiring without a grid is refused" ||
    { fail "multiring without a grid"; echo "$out" | tail -3; }
# Without DDL_TOPOLOGY, the racks come from Slurm's topology/tree address: 4
# leaf switches of 2 nodes each make a 1x2x4 grid.
wrap='export SLURM_TOPOLOGY_ADDR=spine.sw$((OMPI_COMM_WORLD_RANK / 2)).n$OMPI_COMM_WORLD_RANK; export SLURM_TOPOLOGY_ADDR_PATTERN=switch.switch.node; exec "$0"'
if out=$(DDL_TUNING_FILE=$rings DDL_ALGO=multiring DDL_NODE_SIZE=1 DDL_DEBUG=INFO DDL_DEBUG_SUBSYS=INIT timeout 120 $MPIRUN -n 8 \
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
# DDL_EXPLORE is online selection's per-dimension stage: it says what it
# timed and what it keeps, dimension by dimension, under either DDL_SELECT, and
# DDL_TUNING_SAVE writes the dimensions back as a band's dims=.
saved=$(mktemp -u)
for select in online model; do
    if out=$(DDL_SELECT=$select DDL_EXPLORE=1 DDL_TUNING_SAVE=$saved DDL_DEBUG=INFO DDL_DEBUG_SUBSYS=COLL DDL_ALGO=multiring \
        DDL_TOPOLOGY=1x2x2 DDL_NODE_SIZE=1 timeout 120 $MPIRUN -n 4 "$top_builddir/ddl-bench" -b 1M -e 1M -n 12 -w 0 < /dev/null 2>&1) &&
       grep -q "online selection, .* bytes: multiring dimension 1: \(ring\|rd\) (the slowest rank's best of [0-9]* rounds[^:]*: multiring dims=ring,ring .* us, multiring dims=rd,ring .* us)" <<< "$out" &&
       grep -q "online selection, .* bytes: multiring dimension 2: \(ring\|rd\) (.*: multiring dims=[a-z]*,ring .* us, multiring dims=[a-z]*,rd .* us)" <<< "$out" &&
       grep -q "^1048576-2097152 multiring dims=\(ring\|rd\),\(ring\|rd\)" "$saved"; then
        pass "DDL_EXPLORE (DDL_SELECT=$select) times ring and rd per dimension and keeps one: $(grep -o 'dimension 1: [a-z]* (.*' <<< "$out" | head -1); saved: $(grep multiring "$saved")"
    else
        fail "DDL_EXPLORE decisions (DDL_SELECT=$select)"; echo "$out" | tail -8; cat "$saved"
    fi
    rm -f "$saved"
done
rm -f "$rings" "$mixed" "$mixed2" "$dims_file"
[ "$(shm_segments)" = "$before" ] && pass "/dev/shm clean" || fail "segments left: $(shm_segments)"
finish
