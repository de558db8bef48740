#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Through real srun on a throwaway cluster (tests/slurm/cluster.sh): the task
# count the cli_filter asks for, every task's DDL_* environment and core, the
# owners' RANK/WORLD_SIZE, MPI allreduces through the runtime with both helper
# modes, and bad input that must fail with a ddl: message, leave the node
# usable and leave nothing behind.
. "$(dirname "$0")/../mpi/lib.sh"
cluster=$top_srcdir/tests/slurm/cluster.sh
if [ "$(id -u)" -ne 0 ] || ! command -v slurmctld > /dev/null || [ ! -f "$top_builddir/.libs/spank_ddl.so" ]; then
    echo "SKIP: needs root, Slurm and the built plugin"
    exit 77
fi
export DDL_CLUSTER_DIR=${DDL_CLUSTER_DIR:-/tmp/ddl-cluster-test-$$}
export DDL_CLUSTER_PORT=${DDL_CLUSTER_PORT:-26817}
trap '"$cluster" stop' EXIT
export SLURM_CONF=$DDL_CLUSTER_DIR/etc/slurm.conf
# Ranks of emulated nodes share 2 cores: MPI must yield while it waits.
export OMPI_MCA_mpi_yield_when_idle=1
RUN="timeout 180 srun --immediate=30"
before=$(shm_segments)

start_cluster() { # NODES HELPERS
    DDL_CLUSTER_HELPERS=$2 "$cluster" start "$1" > /dev/null || { fail "cluster with $1 node(s) did not start"; finish; exit 1; }
}

field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<< "$2"; }

# check_env NODES GPUS LANES: every task's place, environment and core.
check_env() {
    local nodes=$1 gpus=$2 lanes=$3 out lines ok=1
    out=$($RUN -N"$nodes" --gpus-per-node="$gpus" --ddl-lanes="$lanes" "$top_srcdir/tests/slurm/task-env.sh" 2>&1)
    lines=$(grep '^TASK' <<< "$out")
    local want=$((nodes * gpus * lanes))
    if [ "$(wc -l <<< "$lines")" -ne "$want" ]; then
        fail "$nodes node(s) x $gpus GPUs x $lanes lanes: $(grep -c '^TASK' <<< "$out") tasks, expected $want (cli_filter)"
        echo "$out" | head -20
        return
    fi
    while read -r line; do
        local node local gpu lane role rank cvd
        node=$(field node "$line"); local=$(field local "$line")
        gpu=$(field gpu "$line"); lane=$(field lane "$line"); role=$(field role "$line")
        rank=$(field rank "$line"); cvd=$(field cvd "$line")
        local exp_role=helper; [ $((local % lanes)) -eq 0 ] && exp_role=owner
        local exp_cvd; exp_cvd=$(seq -s, 0 $((gpus - 1)))
        if [ "$gpu" != $((local / lanes)) ] || [ "$lane" != $((local % lanes)) ] || [ "$role" != "$exp_role" ] ||
           [ "$(field lanes "$line")" != "$lanes" ] || [ "$(field gpus "$line")" != "$gpus" ] ||
           [ "$(field ddl_node "$line")" != "$node" ] || [ "$(field nnodes "$line")" != "$nodes" ] ||
           [ "$cvd" != "$exp_cvd" ]; then
            ok=0; echo "wrong place or environment: $line"
        fi
        if [ "$role" = owner ]; then
            if [ "$rank" != $((node * gpus + gpu)) ] || [ "$(field world "$line")" != $((nodes * gpus)) ] ||
               [ "$(field local_rank "$line")" != "$gpu" ] || [ "$(field local_world "$line")" != "$gpus" ]; then
                ok=0; echo "wrong owner RANK/WORLD_SIZE/LOCAL_*: $line"
            fi
            # The test cluster's node names do not resolve: the rendezvous is at an address that does.
            getent ahosts "$(field master "$line")" > /dev/null || { ok=0; echo "MASTER_ADDR does not resolve: $line"; }
        elif [ "$rank" != - ]; then
            ok=0; echo "a helper has RANK: $line"
        fi
    done <<< "$lines"
    # Planned cores are disjoint within each node.
    local dup
    dup=$(sed -n 's/.* node=\([0-9]*\) .* core=\([0-9]*\) .*/\1:\2/p' <<< "$lines" | sort | uniq -d)
    [ -z "$dup" ] || { ok=0; echo "cores planned twice: $dup"; }
    # On one node (binding on), a task whose core exists here runs on exactly it.
    if [ "$nodes" -eq 1 ]; then
        while read -r line; do
            local core cpus
            core=$(field core "$line"); cpus=$(field cpus "$line")
            if [ "$core" -lt "$(nproc --all)" ] && [ "$cpus" != "$core" ]; then
                ok=0; echo "task on core $core runs on CPUs $cpus: $line"
            fi
        done <<< "$lines"
    fi
    [ $ok -eq 1 ] && pass "$nodes node(s) x $gpus GPUs x $lanes lanes: $want tasks, places, environment, cores" ||
        fail "$nodes node(s) x $gpus GPUs x $lanes lanes"
}

expand() { tr , '\n' <<< "$1" | awk -F- '{ if (NF == 2) for (i = $1; i <= $2; i++) print i; else print $1 }'; }

# check_cores DESCRIPTION OWNER-CORES SRUN-ARGS...: each owner has OWNER-CORES
# cores and each helper one (DDL_CORES), disjoint within a node, with
# OMP_NUM_THREADS and SLURM_CPUS_PER_TASK saying so and CUDA_DEVICE_ORDER set;
# the cores that exist here lie in the task's cgroup cpuset and, with binding
# on (one node, or task/cgroup), the task runs on exactly those.
check_cores() {
    local what=$1 owner_cores=$2 out lines ok=1 bound=$3
    shift 3
    out=$($RUN "$@" "$top_srcdir/tests/slurm/task-env.sh" 2>&1)
    lines=$(grep '^TASK' <<< "$out")
    [ -n "$lines" ] || { fail "$what: no task ran"; echo "$out" | tail -5; return; }
    while read -r line; do
        local role dcores n want real cgroup cpus
        role=$(field role "$line"); dcores=$(field dcores "$line")
        n=$(expand "$dcores" | wc -l); want=1
        [ "$role" = owner ] && want=$owner_cores
        if [ "$n" -ne "$want" ] || [ "$(field omp "$line")" != "$want" ] || [ "$(field cpt "$line")" != "$want" ] ||
           [ "$(field order "$line")" != PCI_BUS_ID ]; then
            ok=0; echo "$what: $role should have $want cores: $line"
        fi
        real=$(expand "$dcores" | awk -v n="$(nproc --all)" '$1 < n' | paste -sd, -)
        cgroup=$(field cgroup "$line"); cpus=$(field cpus "$line")
        if [ -n "$real" ] && [ "$cgroup" != - ] &&
           [ -n "$(comm -23 <(expand "$real" | sort) <(expand "$cgroup" | sort))" ]; then
            ok=0; echo "$what: cores $real outside the cgroup cpuset $cgroup: $line"
        fi
        if [ "$bound" = bound ] && [ -n "$real" ] && [ "$(expand "$cpus" | paste -sd, -)" != "$real" ]; then
            ok=0; echo "$what: runs on CPUs $cpus, planned $real: $line"
        fi
    done <<< "$lines"
    local dup
    dup=$(while read -r line; do expand "$(field dcores "$line")" | sed "s/^/$(field node "$line"):/"; done <<< "$lines" |
          sort | uniq -d)
    [ -z "$dup" ] || { ok=0; echo "$what: cores planned twice: $dup"; }
    [ $ok -eq 1 ] && pass "$what: $(wc -l <<< "$lines") tasks, owners on $owner_cores cores, helpers on 1" ||
        fail "$what"
}

# expect_reject DESCRIPTION TEXT SRUN-ARGS...: srun fails fast with TEXT.
expect_reject() {
    local what=$1 text=$2 out rc
    shift 2
    out=$(DDL_TIMEOUT=20 $RUN "$@" 2>&1)
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q -- "$text" <<< "$out"; then
        pass "rejected: $what (exit $rc)"
    else
        fail "$what: exit $rc, expected a message with '$text'"
        echo "$out" | head -10
    fi
}

# A node cleans up after the step srun saw end (epilog, cgroups): it may show
# "comp" for a moment, on a loaded machine for seconds.  What must not stay is
# a drained or down node, or a job; so wait up to 30 s for idle, then judge.
node_usable() {
    local states jobs deadline=$((SECONDS + 30))
    while :; do
        states=$(sinfo -h -N -o '%t' | sort -u | tr '\n' ' ')
        jobs=$(squeue -h)
        { [ "$states" = "idle " ] && [ -z "$jobs" ]; } || [ $SECONDS -ge $deadline ] && break
        sleep 0.5
    done
    [ "$states" = "idle " ] && pass "$1: nodes idle, not drained" || fail "$1: node states after 30 s: $states"
    [ -z "$jobs" ] && pass "$1: no job left" || fail "$1: jobs left after 30 s: $jobs"
}

mpi_test() { # NODES GPUS LANES MODE [PROGRAM: allreduce (default) or iallreduce]
    local out prog=${5:-allreduce}
    out=$(DDL_TEST_QUICK=1 DDL_ALGO=lane DDL_CHUNK_SIZE=64K DDL_STAGE_SIZE=1M DDL_TIMEOUT=60 \
        $RUN -N"$1" --gpus-per-node="$2" --ddl-lanes="$3" "$top_builddir/tests/mpi/ddl-test-$prog" 2>&1)
    local rc=$?
    if [ $rc -eq 0 ] && grep -q ", 0 failures" <<< "$out"; then
        pass "MPI $prog, $1 node(s) x $2 GPUs x $3 lanes, helpers $4: $(grep -o '[0-9]* cases' <<< "$out")"
    else
        fail "MPI $prog, $1 node(s) x $2 GPUs x $3 lanes, helpers $4 (exit $rc)"
        # The test's own words first: Open MPI's abort text would push them out of a tail.
        grep -m10 "FAIL\|rank [0-9]*:\|refused\|ddl_" <<< "$out"
        echo "$out" | tail -15
    fi
}

# --- one node, every lane runs the application ----------------------------------
start_cluster 1 app
for lanes in 1 2 4; do check_env 1 2 "$lanes"; done
check_env 1 4 4
mpi_test 1 2 2 app
# salloc and sbatch take the option too; their steps inherit the lanes (DDL_LANES).
out=$(timeout 120 salloc -N1 --gpus-per-node=2 --ddl-lanes=2 srun "$top_srcdir/tests/slurm/task-env.sh" 2>&1)
[ "$(grep -c '^TASK.* lanes=2 ' <<< "$out")" -eq 4 ] && pass "salloc --ddl-lanes=2: its srun step has 4 lanes" ||
    { fail "salloc --ddl-lanes=2"; echo "$out" | tail -5; }
out=$(timeout 120 sbatch --wait -o "$DDL_CLUSTER_DIR/batch.out" -N1 --gpus-per-node=1 --ddl-lanes=2 \
    --wrap "srun $top_srcdir/tests/slurm/task-env.sh" 2>&1; cat "$DDL_CLUSTER_DIR/batch.out" 2>/dev/null)
[ "$(grep -c '^TASK.* lanes=2 ' <<< "$out")" -eq 2 ] && pass "sbatch --ddl-lanes=2: the batch script's srun has 2 lanes" ||
    { fail "sbatch --ddl-lanes=2"; echo "$out" | tail -5; }
# MASTER_PORT: steps 0 and 1 of one job and step 0 of the next job differ.
ports=$(for job in 1 2; do
            timeout 120 sbatch --wait -o "$DDL_CLUSTER_DIR/ports$job.out" -N1 --gpus-per-node=1 --ddl-lanes=1 \
                --wrap "srun $top_srcdir/tests/slurm/task-env.sh; srun $top_srcdir/tests/slurm/task-env.sh" > /dev/null 2>&1
            sed -n 's/^TASK.* port=\([0-9]*\) .*/\1/p' "$DDL_CLUSTER_DIR/ports$job.out"
        done)
[ "$(wc -l <<< "$ports")" -eq 4 ] && [ "$(sort -u <<< "$ports" | wc -l)" -eq 4 ] &&
    pass "MASTER_PORT: 2 steps of each of 2 neighbouring jobs, 4 different ports ($(paste -sd' ' <<< "$ports"))" ||
    fail "MASTER_PORT of neighbouring jobs and steps: $(paste -sd' ' <<< "$ports")"
# Cores: an explicit --cpus-per-task is the GPU's, the owner gets it minus one
# per helper; the cli_filter's default gives one core per lane.
check_cores "--cpus-per-task=4 --ddl-lanes=2" 3 bound -N1 --gpus-per-node=2 --cpus-per-task=4 --ddl-lanes=2
check_cores "--cpus-per-gpu=5 --ddl-lanes=2" 4 bound -N1 --gpus-per-node=1 --cpus-per-gpu=5 --ddl-lanes=2
check_cores "--ddl-lanes=4 (default cores)" 1 bound -N1 --gpus-per-node=2 --ddl-lanes=4
# Without -N (srun's node count then reads "1-0"): -c is the GPU's cores too,
# each task the same count (Slurm's rule), so 3 for the GPU is 2 + 2, the owner
# 3; and salloc -c 3 followed by srun.
check_cores "--cpus-per-task=3 --ddl-lanes=2, no -N" 3 bound --gpus-per-node=1 --cpus-per-task=3 --ddl-lanes=2
out=$(timeout 120 salloc --gpus-per-node=1 --ddl-lanes=2 -c 3 srun "$top_srcdir/tests/slurm/task-env.sh" 2>&1)
[ "$(grep -c '^TASK.* lanes=2 ' <<< "$out")" -eq 2 ] && grep -q '^TASK.* role=owner .* omp=3 cpt=3 ' <<< "$out" &&
    pass "salloc --ddl-lanes=2 -c 3, then srun: 2 lanes, the owner on 3 cores" ||
    { fail "salloc --ddl-lanes=2 -c 3, then srun"; echo "$out" | tail -5; }
# Another lane count for one step of a job with lanes: as asked, or with its
# own task count (--ntasks-per-node: the job is shaped per node, and Slurm
# refuses --ntasks-per-gpu beside the SLURM_NTASKS_PER_NODE its steps
# inherit); a step of its own -n runs without lanes; more lanes than the job
# has cores for are refused in our terms.
out=$(timeout 120 sbatch --wait -o "$DDL_CLUSTER_DIR/lanes.out" -N1 --gpus-per-node=2 --ddl-lanes=2 --wrap "
    echo A \$(srun --ddl-lanes=1 $top_srcdir/tests/slurm/task-env.sh | grep -c ' lanes=1 ')
    echo B \$(srun --ddl-lanes=1 --ntasks-per-node=2 $top_srcdir/tests/slurm/task-env.sh | grep -c ' lanes=1 ')
    echo C \$(srun $top_srcdir/tests/slurm/task-env.sh | grep -c ' lanes=2 ')
    echo D \$(srun -n1 $top_srcdir/tests/slurm/task-env.sh | grep -c '^TASK.* role= ')
    srun --ddl-lanes=4 true" 2>&1; cat "$DDL_CLUSTER_DIR/lanes.out" 2>/dev/null)
if grep -q "^A 2$" <<< "$out" && grep -q "^B 2$" <<< "$out" && grep -q "^C 4$" <<< "$out" && grep -q "^D 1$" <<< "$out" &&
        grep -q "ddl: 4 lanes per GPU need 4 cores per GPU, and this job has 2 per GPU" <<< "$out"; then
    pass "sbatch --ddl-lanes=2: a step with --ddl-lanes=1 (with or without --ntasks-per-node=2) has 2 tasks, a plain one 4 with lanes, srun -n1 one task without lanes; 4 lanes are refused in ddl's terms"
else
    fail "steps with other lanes in a job with lanes"; echo "$out" | tail -8
fi
out=$(timeout 120 sbatch --wait -o "$DDL_CLUSTER_DIR/batch.out" -N1 --gpus-per-node=1 --cpus-per-task=4 --ddl-lanes=2 \
    --wrap "srun $top_srcdir/tests/slurm/task-env.sh" 2>&1; cat "$DDL_CLUSTER_DIR/batch.out" 2>/dev/null)
[ "$(grep -c '^TASK.* role=owner .* omp=3 cpt=3 ' <<< "$out")" -eq 1 ] &&
    pass "sbatch --cpus-per-task=4 --ddl-lanes=2: its step's owner has 3 cores" ||
    { fail "sbatch --cpus-per-task=4: the step's owner"; echo "$out" | tail -5; }
expect_reject "--ddl-lanes=0" "ddl: --ddl-lanes=0 is not a lane count" -N1 --gpus-per-node=1 --ddl-lanes=0 true
expect_reject "--ddl-lanes=-1" "ddl: --ddl-lanes=-1 is not a lane count" -N1 --gpus-per-node=1 --ddl-lanes=-1 true
expect_reject "--ddl-lanes=abc" "ddl: --ddl-lanes=abc is not a lane count" -N1 --gpus-per-node=1 --ddl-lanes=abc true
expect_reject "--ddl-lanes=1000" "ddl: --ddl-lanes=1000 is above this site's maximum" -N1 --gpus-per-node=1 --ddl-lanes=1000 true
expect_reject "DDL_LANES=zero" "ddl: DDL_LANES=zero is not a lane count" -N1 --gpus-per-node=1 --export=ALL,DDL_LANES=zero true
expect_reject "lanes without GPUs" "ddl: --ddl-lanes=2 gives lanes to GPUs, but no GPU is requested" -N1 --ddl-lanes=2 true
expect_reject "a plan that does not fit" "ddl: --ddl-lanes=2 with 2 GPUs on this node needs 4 tasks here, the step has 3" \
    -N1 -n3 --gpus-per-node=2 --ddl-lanes=2 true
node_usable "after bad input"

# --- two nodes, every lane runs the application ---------------------------------
start_cluster 2 app
check_env 2 2 1
check_env 2 2 2
check_env 2 2 4
mpi_test 2 2 2 app
mpi_test 2 1 2 app
# Requests in flight among other MPI traffic, through srun and PMIx.
mpi_test 2 1 2 app iallreduce

# --- two nodes, helpers run ddl-helper ------------------------------------------
start_cluster 2 daemon
mpi_test 2 2 2 daemon
mpi_test 2 1 2 daemon iallreduce
out=$(DDL_TIMEOUT=60 $RUN -N2 --gpus-per-node=1 --ddl-lanes=2 "$top_builddir/ddl-bench" -b 8 -e 1M -f 32 -n 3 -w 1 2>&1)
if grep -q '^# Out of bounds values : 0 OK' <<< "$out" && grep -q '2 nodes x 1 GPUs x 2 lanes' <<< "$out"; then
    pass "ddl-bench across 2 nodes, helpers daemon"
else
    fail "ddl-bench across 2 nodes"; echo "$out" | tail -10
fi
# A PowerAI DDL program started by ddlrun inside an allocation: srun
# --ddl-lanes=2, helpers running ddl-helper with the same DDL_OPTIONS.
powerai=$DDL_CLUSTER_DIR/powerai_c
if mpicc "$top_srcdir/tests/powerai/powerai_c.c" -I"$top_srcdir/include" -I"$top_builddir/include" \
        -L"$top_builddir/.libs" -Wl,-rpath,"$top_builddir/.libs" -lddl -lm -o "$powerai" 2> "$powerai.log"; then
    out=$(DDL_TIMEOUT=60 timeout 180 salloc -N2 --gpus-per-node=1 --ddl-lanes=2 "$top_builddir/ddlrun" "$powerai" 2>&1)
    grep -q "^PowerAI C: 2 ranks, 0 failures" <<< "$out" && grep -q "ddlrun: DDL_OPTIONS='-mode r:1x2' srun -N 2" <<< "$out" &&
        pass "ddlrun in a 2-node salloc --ddl-lanes=2: a PowerAI DDL program, 2 GPUs x 2 lanes" ||
        { fail "ddlrun in an allocation"; echo "$out" | tail -10; }
else
    fail "building the PowerAI C program"; tail -5 "$powerai.log"
fi
# Plain programs (no DDL) under --ddl-lanes: the helpers follow their owner, so
# each step ends within 1 s of its program, with the program's exit code.
# steps_end_promptly DESCRIPTION OUTPUT: OUTPUT has "STEP name rc=R want=W
# end=T" lines, T the step's end, and "$DDL_CLUSTER_DIR/name.end" the program's.
steps_end_promptly() {
    local what=$1 out=$2 ok=1 n=0 latest=0
    while read -r _ name rc want end; do
        local prog_end late
        n=$((n + 1))
        prog_end=$(cat "$DDL_CLUSTER_DIR/$name.end" 2>/dev/null || echo 0)
        late=$(awk -v a="${end#end=}" -v b="$prog_end" 'BEGIN { printf "%.2f", a - b }')
        latest=$(awk -v a="$late" -v b="$latest" 'BEGIN { print (a > b ? a : b) }')
        if [ "${rc#rc=}" != "${want#want=}" ] || awk -v l="$late" 'BEGIN { exit !(l < 0 || l >= 1) }'; then
            ok=0; echo "$what: step $name: $rc ($want), ended $late s after its program"
        fi
    done < <(grep '^STEP ' <<< "$out")
    [ $ok -eq 1 ] && [ "$n" -gt 0 ] && pass "$what: $n steps, each ends within 1 s of its program (at most $latest s), with its exit code" ||
        { fail "$what ($n steps)"; echo "$out" | tail -8; }
}
plain_step() { # NAME EXIT-CODE: a program that sleeps, records its end and exits
    echo "sh -c 'sleep 0.3; date +%s.%N > $DDL_CLUSTER_DIR/$1.end; exit $2'"
}
srun_plain_steps() { # DESCRIPTION NAME-PREFIX EXIT-CODE...: one srun per code, 2 nodes x 1 GPU x 2 lanes
    local what=$1 prefix=$2 out
    shift 2
    out=$(for code in "$@"; do
              eval "$RUN -N2 --gpus-per-node=1 --ddl-lanes=2 $(plain_step "$prefix$code" "$code")" > /dev/null 2>&1
              echo "STEP $prefix$code rc=$? want=$code end=$(date +%s.%N)"
          done)
    steps_end_promptly "$what" "$out"
}
srun_plain_steps "srun --ddl-lanes=2 (2 nodes, helpers daemon), plain programs" srun 0 3
{
    echo '#!/bin/bash'
    for step in "a 0" "b 5" "c 0"; do
        set -- $step
        echo "srun $(plain_step "$1" "$2"); echo \"STEP $1 rc=\$? want=$2 end=\$(date +%s.%N)\""
    done
} > "$DDL_CLUSTER_DIR/steps.sh"
out=$(timeout 120 sbatch --wait -o "$DDL_CLUSTER_DIR/steps.out" -N2 --gpus-per-node=1 --ddl-lanes=2 \
      "$DDL_CLUSTER_DIR/steps.sh" 2>&1; cat "$DDL_CLUSTER_DIR/steps.out" 2>/dev/null)
steps_end_promptly "sbatch --ddl-lanes=2 with 3 plain steps" "$out"
# A missing helper program fails the step at once, naming the path.
plugstack=$DDL_CLUSTER_DIR/etc/plugstack.conf
cp "$plugstack" "$plugstack.orig"
sed -i 's|helper=[^ ]*|helper=/nonexistent/ddl-helper|' "$plugstack"
start=$(date +%s)
expect_reject "a missing helper program" "ddl: the helper program /nonexistent/ddl-helper (plugstack helper=) does not exist" \
    -N1 --gpus-per-node=1 --ddl-lanes=2 true
[ $(($(date +%s) - start)) -lt 10 ] && pass "the missing helper fails fast" || fail "the missing helper took $(($(date +%s) - start)) s"
mv "$plugstack.orig" "$plugstack"
# rails= naming a device a node lacks: every node refuses the step before the
# program starts, naming the device and itself; a step without lanes runs.
cp "$plugstack" "$plugstack.orig"
sed -i '/spank_ddl/ s|$| rails=lo,nosuch0|' "$plugstack"
out=$(DDL_TIMEOUT=20 $RUN -N2 --gpus-per-node=1 --ddl-lanes=2 sh -c 'echo PROGRAM RAN' 2>&1)
rc=$?
if [ $rc -ne 0 ] && ! grep -q "PROGRAM RAN" <<< "$out" && grep -q "ddl: .*rails= names nosuch0, which node n1 does not have" <<< "$out" &&
        grep -q "rails= names nosuch0, which node n2 does not have" <<< "$out"; then
    pass "rejected on both nodes before the program: a rail the nodes lack (exit $rc)"
else
    fail "a rail the nodes lack: exit $rc"; echo "$out" | head -10
fi
out=$($RUN -N2 sh -c 'echo PLAIN ${DDL_RAIL:-none}' 2>&1)
[ "$(grep -c '^PLAIN none$' <<< "$out")" -eq 2 ] && pass "a step without lanes runs beside a bad rails=" ||
    fail "a step without lanes beside a bad rails=: $out"
# rails=lo: every stack's variable names the lane's rail; a value in the job's
# environment wins, and if_include is not set beside the job's if_exclude.
sed -i 's| rails=lo,nosuch0$| rails=lo|' "$plugstack"
out=$(UCX_NET_DEVICES=mine OMPI_MCA_btl_tcp_if_exclude=docker0 $RUN -N1 --gpus-per-node=1 --ddl-lanes=2 sh -c \
    'echo "RAILS $DDL_RAIL ${OMPI_MCA_btl_tcp_if_include:-unset} $OMPI_MCA_btl_tcp_eager_limit $FI_TCP_IFACE $NCCL_SOCKET_IFNAME $UCX_NET_DEVICES"' 2>&1)
grep -q "^RAILS lo unset 1048576 lo =lo mine$" <<< "$out" &&
    pass "rails=lo: each stack's own variable, the job's value kept, no if_include beside its if_exclude" ||
    fail "rails=lo: the task's variables: $out"
mv "$plugstack.orig" "$plugstack"
node_usable "with task/none"

# --- task/affinity,task/cgroup on this host's real CPUs (1 GPU per node) --------
for nodes in 1 2; do
    DDL_CLUSTER_TASK=cgroup DDL_CLUSTER_HELPERS=app "$cluster" start "$nodes" > /dev/null ||
        { fail "task/cgroup cluster with $nodes node(s) did not start"; continue; }
    check_cores "task/affinity,task/cgroup, $nodes node(s) x 1 GPU x 2 lanes" 1 bound -N"$nodes" --gpus-per-node=1 --ddl-lanes=2
    mpi_test "$nodes" 1 2 "app, task/cgroup"
done
DDL_CLUSTER_TASK=cgroup DDL_CLUSTER_HELPERS=daemon "$cluster" start 2 > /dev/null || fail "task/cgroup cluster (daemon)"
mpi_test 2 1 2 "daemon, task/cgroup"
srun_plain_steps "task/cgroup, helpers daemon, plain programs" cg 0 4
node_usable "at the end"
[ "$(shm_segments)" = "$before" ] && pass "/dev/shm clean" || fail "segments left in /dev/shm: $(shm_segments)"
finish
