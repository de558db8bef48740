#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The Python binding under mpirun, then the DDP hook and the "ddl" backend
# against gloo: the example
# trained under srun on the 2-node test cluster, once with gloo's allreduce and
# once with --ddl-lanes=2 and the DDL hook (helpers run ddl-helper); losses equal
# within float tolerance at every step, parameters identical on every rank.
. "$(dirname "$0")/../mpi/lib.sh"
PY=/usr/bin/python3
if ! $PY -c 'import torch, numpy' 2> /dev/null; then
    echo "SKIP: $PY has no torch and numpy (Debian: python3-torch python3-numpy)"
    exit 77
fi
export DDL_LIBRARY=$top_builddir/.libs/libddl.so PYTHONPATH=$top_srcdir/python OMP_NUM_THREADS=1
before=$(shm_segments)

for layout in "4 2 2" "3 1 0"; do
    set -- $layout
    if DDL_LANES=$2 DDL_NODE_SIZE=$3 timeout 300 $MPIRUN -n "$1" $PY "$top_srcdir/tests/python/test_binding.py" < /dev/null; then
        pass "binding: $1 ranks, $2 lanes"
    else
        fail "binding: $1 ranks, $2 lanes"
    fi
done

# A program that ends without destroy() or ddl.finalize() exits 0 everywhere.
for helpers in collective serve; do
    out=$(DDL_LANES=2 DDL_HELPERS=$helpers timeout 120 $MPIRUN -n 4 $PY "$top_srcdir/tests/python/test_exit.py" 2>&1 < /dev/null)
    rc=$?
    if [ $rc -eq 0 ] && ! grep -qi "improperly\|MPI_ABORT\|Traceback" <<< "$out"; then
        pass "a program without teardown exits 0 ($helpers helpers)"
    else
        fail "a program without teardown ($helpers helpers): exit $rc"; echo "$out" | tail -15
    fi
done

# A stalled peer under the "ddl" backend (tests/python/test_backend_fail.py,
# 2 nodes x 1 GPU x 2 lanes, serve-mode helpers): the waiting rank's work
# raises ddl.DDLError with the library's deadline message, and the job ends
# (the late rank raises too, or the watch of the system MPI's collectives
# ends the job) well before the test's own timeout.
start=$(date +%s)
out=$(DDL_TIMEOUT=3 DDL_LANES=2 DDL_NODE_SIZE=2 DDL_HELPERS=serve MASTER_ADDR=127.0.0.1 MASTER_PORT=$((29500 + $$ % 400)) \
      timeout 120 $MPIRUN -n 4 $PY -W ignore "$top_srcdir/tests/python/test_backend_fail.py" 2>&1 < /dev/null)
took=$(( $(date +%s) - start ))
if grep -q "^stall: rank 0 raised after [0-9.]* s: timed out: .*(DDL_TIMEOUT)" <<< "$out" &&
        grep -q "^stall: rank 1 raised after\|^ddl: rank 2: the system MPI_Allreduce timed out after" <<< "$out" &&
        [ "$took" -lt 60 ]; then
    pass "the ddl backend with a stalled peer: $(grep -o 'rank 0 raised after [0-9.]* s' <<< "$out") with the library's message; the job ended in $took s"
else
    fail "the ddl backend with a stalled peer (took $took s)"; echo "$out" | grep -v "^  /\|^    " | tail -15
fi

cluster=$top_srcdir/tests/slurm/cluster.sh
if [ "$(id -u)" -ne 0 ] || ! command -v slurmctld > /dev/null || [ ! -f "$top_builddir/.libs/spank_ddl.so" ]; then
    echo "the DDP comparison needs root, Slurm and the built plugin: not run"
    finish
    exit $?
fi
export DDL_CLUSTER_DIR=/tmp/ddl-cluster-py-$$ DDL_CLUSTER_PORT=28817
trap '"$cluster" stop' EXIT
DDL_CLUSTER_HELPERS=daemon "$cluster" start 2 > /dev/null || { fail "cluster did not start"; finish; exit 1; }
export SLURM_CONF=$DDL_CLUSTER_DIR/etc/slurm.conf OMPI_MCA_mpi_yield_when_idle=1
# The emulated nodes' names do not resolve: the rendezvous is on this host.
export MASTER_ADDR=127.0.0.1
dir=$(mktemp -d)
train() { # HOOK LANES
    timeout 300 srun -N2 --gpus-per-node=1 --ddl-lanes="$2" $PY "$top_srcdir/examples/ddp_train.py" \
        --hook "$1" --steps 20 --json "$dir/$1.json"
}
if train gloo 1 > "$dir/gloo.txt" 2>&1 && train ddl 2 > "$dir/ddl.txt" 2>&1; then
    tail -1 "$dir/gloo.txt"; tail -1 "$dir/ddl.txt"
    if $PY "$top_srcdir/examples/compare_ddp.py" "$dir/gloo.json" "$dir/ddl.json" 1e-5
    then
        pass "DDP with the DDL hook (2 nodes x 1 GPU x 2 lanes) learns as with gloo"
    else
        fail "DDP with the DDL hook differs from gloo"
    fi
else
    fail "a training run failed"; tail -n 20 "$dir"/*.txt
fi
# Under srun, helpers running ddl-helper: the owners' program ends without
# teardown, the helpers leave with them, and the step exits 0.
out=$(timeout 120 srun -N2 --gpus-per-node=1 --ddl-lanes=2 $PY "$top_srcdir/tests/python/test_exit.py" 2>&1)
rc=$?
if [ $rc -eq 0 ] && ! grep -qi "leaving\|MPI_ABORT\|Traceback" <<< "$out"; then
    pass "srun: a program without teardown exits 0 (helpers run ddl-helper)"
else
    fail "srun: a program without teardown: exit $rc"; echo "$out" | tail -15
fi
# The "ddl" torch.distributed backend (tests/python/test_backend.py): every
# collective DDP, FSDP and ZeRO call against gloo's, DDP without a hook and
# ZeroRedundancyOptimizer to gloo's parameters, bad calls raising on every
# rank; the owners are torch's ranks, the helpers run ddl-helper.
out=$(timeout 300 srun -N2 --gpus-per-node=1 --ddl-lanes=2 $PY -W ignore "$top_srcdir/tests/python/test_backend.py" 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q "^backend: [0-9]* checks, 0 failures" <<< "$out"; then
    pass "srun --ddl-lanes=2: init_process_group(\"ddl\"): $(grep -o '[0-9]* checks' <<< "$out") against gloo"
else
    fail "the ddl torch backend: exit $rc"; echo "$out" | tail -25
fi
# The same stall under srun, helpers running ddl-helper: the owner sees the
# exception before its helper, after a grace, ends the step (ddl-helper(1)).
start=$(date +%s)
out=$(DDL_TIMEOUT=3 timeout 120 srun -N2 --gpus-per-node=1 --ddl-lanes=2 $PY -W ignore \
      "$top_srcdir/tests/python/test_backend_fail.py" 2>&1)
took=$(( $(date +%s) - start ))
if grep -q "^stall: rank 0 raised after [0-9.]* s: timed out: .*(DDL_TIMEOUT)" <<< "$out" &&
        grep -q "^ddl-helper: rank 1: peer failed" <<< "$out" && [ "$took" -lt 60 ]; then
    pass "srun: the ddl backend with a stalled peer: the owner's exception, then the helper ends the step ($took s)"
else
    fail "srun: the ddl backend with a stalled peer (took $took s)"; echo "$out" | grep -v "^  /\|^    " | tail -15
fi
rm -rf "$dir"
[ "$(shm_segments)" = "$before" ] && pass "/dev/shm clean" || fail "segments left in /dev/shm: $(shm_segments)"
finish
