#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The lane-scaling table on the emulated cluster with per-process injection
# limits (as root): 2 nodes x 2 GPUs, 2 rails at RATE, each process's sends
# capped at INJ (bench/emu-cluster.sh with DDL_EMU_INJ, every task through
# bench/emu-inject.sh).  For each size, the median time of:
#   mpi/GPU   the system MPI_Allreduce with one rank per GPU
#   mpi/all   the system MPI_Allreduce with as many ranks as the most lanes
#   lanes L   ddl_allreduce in place with L lanes per GPU (srun --ddl-lanes=L)
# and each lane count's speed-up over mpi/GPU.
#   bench/lane-scaling.sh [RATE=1gbit] [INJ=250mbit] [LANES="1 2 4"] [MIN=1M] [MAX=64M] [ITERS=3]
# DDL_EMU_STACK=tcp|ucx|ofi|mpich picks the network stack for every run, the
# baselines' included (bench/emu-cluster.sh); DDL_BENCH=PATH the ddl-bench
# to run (with mpich: build-mpich/ddl-bench); DDL_BENCH_COLL=reduce_scatter
# or allgather the collective (ddl-bench --coll; the baselines are then
# MPI_Reduce_scatter_block and MPI_Allgather; a size is the whole buffer).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
rate=${1:-1gbit} inj=${2:-250mbit} lanes=${3:-1 2 4} min=${4:-1M} max=${5:-64M} iters=${6:-3}
coll=${DDL_BENCH_COLL:-allreduce}
most=$(tr ' ' '\n' <<< "$lanes" | sort -n | tail -1)
export DDL_EMU_PREFIX=${DDL_EMU_PREFIX:-ddlls} DDL_CLUSTER_DIR=${DDL_CLUSTER_DIR:-/tmp/ddl-lane-scaling}
export DDL_CLUSTER_PORT=${DDL_CLUSTER_PORT:-47817} DDL_EMU_INJ=$inj DDL_EMU_PROCS=$((2 * most))
emu=$here/emu-cluster.sh
trap '"$emu" stop > /dev/null 2>&1' EXIT
"$emu" start 2 2 "$rate" > /dev/null || { echo "lane-scaling: the emulated cluster did not start"; exit 1; }
export OMPI_MCA_mpi_yield_when_idle=1
out=$(mktemp -d)
bench() { # NAME SRUN-OPTIONS... -- BENCH-OPTIONS...: the median times, "bytes us" per line
    local name=$1 field
    shift
    local srun_opts=() 
    while [ "$1" != -- ]; do srun_opts+=("$1"); shift; done
    shift
    [[ " $* " == *" mpi "* ]] && field=14 || field=10 # mpi_time; ddl in place
    # emu-cluster.sh job: a job that printed its results and hangs in
    # MPI_Finalize (MPICH 4.0.2) is ended; its times are complete by then.
    "$emu" job "$out/$name.txt" timeout 900 srun -N2 --kill-on-bad-exit=1 --gpus-per-node=2 "${srun_opts[@]}" \
        "$here/emu-inject.sh" "${DDL_BENCH:-$top/ddl-bench}" -b "$min" -e "$max" -f 4 -n "$iters" -w 1 --coll "$coll" "$@" ||
        { echo "lane-scaling: $name failed:"; tail -5 "$out/$name.txt"; }
    awk -v f="$field" '/^ +[0-9]/ {print $1, $f}' "$out/$name.txt" > "$out/$name.t"
}
bench mpi-gpu --ntasks-per-node=2 -- --mode mpi
bench mpi-all --ntasks-per-node=$((2 * most)) -- --mode mpi
for l in $lanes; do bench "lanes$l" --ddl-lanes="$l" -- --mode ddl; done
printf "# %s, 2 nodes x 2 GPUs, 2 rails at %s, each process at %s, over %s; times in ms (median of %s), speed-up over mpi/GPU\n" \
    "$coll" "$rate" "$inj" "${DDL_EMU_STACK:-tcp}" "$iters"
# One row per size: the columns joined by size (awk: no bc needed).
awk -v lanes="$lanes" -v most="$((2 * most))" -v dir="$out" '
    BEGIN {
        n = split(lanes, L, " ")
        while ((getline line < (dir "/mpi-gpu.t")) > 0) { split(line, f, " "); sizes[++m] = f[1]; base[f[1]] = f[2] }
        while ((getline line < (dir "/mpi-all.t")) > 0) { split(line, f, " "); all[f[1]] = f[2] }
        for (i = 1; i <= n; i++)
            while ((getline line < (dir "/lanes" L[i] ".t")) > 0) { split(line, f, " "); t[L[i], f[1]] = f[2] }
        printf "%10s %9s %9s", "bytes", "mpi/GPU", "mpi/" most
        for (i = 1; i <= n; i++) printf " %9s %6s", "lanes" L[i], "x"
        printf "\n"
        for (j = 1; j <= m; j++) {
            b = sizes[j]
            printf "%10s %9.1f %9.1f", b, base[b] / 1000, all[b] / 1000
            for (i = 1; i <= n; i++) printf " %9.1f %6.2f", t[L[i], b] / 1000, (t[L[i], b] > 0 ? base[b] / t[L[i], b] : 0)
            printf "\n"
        }
    }'
rm -rf "$out"
