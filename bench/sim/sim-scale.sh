#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sim-scale.sh: the runs behind bench/SCALE.md, one table row per line on
# stdout (tab-separated: experiment, nodes, GPUs, lanes, rails, rack/oversub,
# what ran, size, simulated us, busbw GB/s, model us, algorithm).  Each run
# has a wall-clock limit (SIM_LIMIT seconds, default 900); one that passes it
# is reported as "timeout".  SIM_ONLY=name runs one experiment (net and
# inject, the per-process injection caps, run only when asked).  SMPI's
# baselines run up to 128 nodes: at 512 nodes (4,096 ranks) its rab_rdb did not
# finish within 15 minutes here.
#
#   bench/sim/sim-scale.sh > scale.tsv
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
limit=${SIM_LIMIT:-900}
only=${SIM_ONLY:-}
# Rails of 100 Gbit/s (12.5 GB/s) and 3 us, 8 per node.  The host: about 160
# GB/s of memory bandwidth per node, shared: 5 GB/s for each of a node's 32
# lanes (8 GPUs x 4) when they reduce and copy at once, 20 GB/s for each of the
# baseline's 8 ranks, whose reductions are charged at that rate (ddl-sim's
# operator) and whose messages inside the node cross a 160 GB/s link.
link=(--rail-mbps 12500 --lat-us 3)
rates=(--reduce-rate 5000 --copy-rate 5000)
mpi_host=(--shm-mbps 160000)
mpi_rates=(--reduce-rate 20000)

row() { # EXPERIMENT NODES GPUS LANES RAILS RACK WHAT -- sim-run.sh arguments
    local exp=$1 n=$2 g=$3 l=$4 r=$5 rack=$6 what=$7
    shift 8
    local out
    out=$(timeout "$limit" "$here/sim-run.sh" "$@" 2>&1)
    local rc=$?
    if [ $rc -eq 124 ]; then
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t-\ttimeout\t-\t-\t-\n' "$exp" "$n" "$g" "$l" "$r" "$rack" "$what"
        return
    fi
    awk -v pre="$exp\t$n\t$g\t$l\t$r\t$rack\t$what" '$1 ~ /^[0-9]+$/ { printf "%s\t%s\t%s\t%s\t%s\t%s\n", pre, $1, $2, $4, $5, $6 }' <<< "$out"
    [ $rc -eq 0 ] || echo "sim-scale.sh: $exp $n nodes $what failed: $(tail -2 <<< "$out")" >&2
}
want() { [ -z "$only" ] && [ "$1" != net ] && [ "$1" != inject ] || [ "$only" = "$1" ]; } # net, inject: only when asked

sizes=(-b 1M -e 256M -f 16 -n 1 -w 0)
free=(--reduce-rate 1e7 --copy-rate 1e7)
if want nodes; then
    for n in 2 8 32 128 512 1024; do
        row nodes $n 8 4 8 - "ddl auto" -- -N $n -r 8 -g 8 -l 4 --fold 4 "${link[@]}" -- "${rates[@]}" "${sizes[@]}"
        [ $n -le 128 ] && row nodes $n 8 1 8 - "mpi rab_rdb" -- -N $n -r 8 -g 8 --mpi --coll rab_rdb "${link[@]}" "${mpi_host[@]}" -- "${mpi_rates[@]}" "${sizes[@]}"
        [ $n -le 128 ] && row nodes $n 8 1 8 - "mpi ompi" -- -N $n -r 8 -g 8 --mpi --coll ompi "${link[@]}" "${mpi_host[@]}" -- "${mpi_rates[@]}" "${sizes[@]}"
        [ $n -le 128 ] && row nodes $n 8 1 8 - "mpi mpich" -- -N $n -r 8 -g 8 --mpi --coll mpich "${link[@]}" "${mpi_host[@]}" -- "${mpi_rates[@]}" "${sizes[@]}"
        [ $n -le 32 ] && row nodes $n 8 1 8 - "mpi ring" -- -N $n -r 8 -g 8 --mpi --coll lr "${link[@]}" "${mpi_host[@]}" -- "${mpi_rates[@]}" "${sizes[@]}"
    done
fi
if want net; then # the network alone: host work free for both (10 TB/s)
    for n in 2 8 32 128 512 1024; do
        row net $n 8 4 8 - "ddl auto" -- -N $n -r 8 -g 8 -l 4 --fold 4 "${link[@]}" -- "${free[@]}" "${sizes[@]}"
        [ $n -le 128 ] && row net $n 8 1 8 - "mpi rab_rdb" -- -N $n -r 8 -g 8 --mpi --coll rab_rdb "${link[@]}" --shm-mbps 1e7 -- --reduce-rate 1e7 "${sizes[@]}"
        [ $n -le 128 ] && row net $n 8 1 8 - "mpi ompi" -- -N $n -r 8 -g 8 --mpi --coll ompi "${link[@]}" --shm-mbps 1e7 -- --reduce-rate 1e7 "${sizes[@]}"
        [ $n -le 32 ] && row net $n 8 1 8 - "mpi ring" -- -N $n -r 8 -g 8 --mpi --coll lr "${link[@]}" --shm-mbps 1e7 -- --reduce-rate 1e7 "${sizes[@]}"
    done
fi
if want gib; then # 1 GiB, the network alone
    for n in 2 32 128; do
        row gib $n 8 4 8 - "ddl auto" -- -N $n -r 8 -g 8 -l 4 --fold 4 "${link[@]}" -- "${free[@]}" -b 1G -e 1G -n 1 -w 0
        [ $n -le 32 ] && row gib $n 8 1 8 - "mpi rab_rdb" -- -N $n -r 8 -g 8 --mpi --coll rab_rdb "${link[@]}" --shm-mbps 1e7 -- --reduce-rate 1e7 -b 1G -e 1G -n 1 -w 0
    done
fi
if want algos; then # the model's choice against each lane algorithm, the network alone
    for n in 32 128; do
        for a in ring rab; do
            row algos $n 8 4 8 - "ddl $a, network alone" -- -N $n -r 8 -g 8 -l 4 --fold 4 "${link[@]}" -- -a $a "${free[@]}" "${sizes[@]}"
        done
    done
fi
if want lanes; then # lanes per GPU, and 4 GPUs per node; the node's 160 GB/s shared by its lanes
    for l in 1 2 4 8; do
        f=$((l < 4 ? l : 4)) # folded lanes share a rail: 8 L / f a multiple of 8
        r=$((160000 / (8 * l)))
        row lanes 128 8 $l 8 - "ddl auto" -- -N 128 -r 8 -g 8 -l $l --fold $f "${link[@]}" -- --reduce-rate $r --copy-rate $r "${sizes[@]}"
    done
    row lanes 128 4 4 4 - "ddl auto" -- -N 128 -r 4 -g 4 -l 4 --fold 4 "${link[@]}" -- --reduce-rate 10000 --copy-rate 10000 "${sizes[@]}"
    row lanes 128 4 1 4 - "mpi rab_rdb" -- -N 128 -r 4 -g 4 --mpi --coll rab_rdb "${link[@]}" "${mpi_host[@]}" -- --reduce-rate 40000 "${sizes[@]}"
fi
if want inject; then # per-process injection caps: 4 GPUs per node, a 200 Gbit/s NIC per GPU (4 rails), each process at
    # 25 or 50 Gbit/s; lanes 1-16 (folded to one simulated rank per node and rail: K lanes, K caps) against SMPI's
    # MPI_Allreduce (Open MPI's selector) with one rank per GPU under the same cap; the network alone
    for n in 16 64 256; do
        for inj in 3125 6250; do
            for l in 1 2 4 8 16; do
                row "inject$inj" $n 4 $l 4 - "ddl lanes $l" -- -N $n -r 4 -g 4 -l $l --fold $l --rail-mbps 25000 --lat-us 3 \
                    --inj-mbps $inj -- "${free[@]}" "${sizes[@]}"
            done
            row "inject$inj" $n 4 1 4 - "mpi ompi" -- -N $n -r 4 -g 4 --mpi --coll ompi --rail-mbps 25000 --lat-us 3 \
                --inj-mbps $inj --shm-mbps 1e7 -- --reduce-rate 1e7 "${sizes[@]}"
            # MPI given the lanes' process count (4 and 16 ranks per GPU), where SMPI's run fits this machine
            for k in 4 16; do
                [ $n -le 16 ] && row "inject$inj" $n 4 $k 4 - "mpi ompi, $k ranks per GPU" -- -N $n -r 4 -g $((4 * k)) --mpi \
                    --coll ompi --rail-mbps 25000 --lat-us 3 --inj-mbps $inj --shm-mbps 1e7 -- --reduce-rate 1e7 "${sizes[@]}"
            done
        done
    done
fi
if want rails; then # the node's lanes on the rails in turn, as the plugin's rails= places them; 8 rails or 1 of the same 800 Gbit/s
    row rails 32 8 4 8 - "ddl auto, network alone, lane l on rail l mod 8" -- -N 32 -r 8 -g 8 -l 4 --fold 4 "${link[@]}" -- "${free[@]}" -b 256M -e 256M -n 1 -w 0
    row rails 128 8 4 1 - "ddl auto, one 800 Gbit/s rail" -- -N 128 -r 1 -g 8 -l 4 --fold 4 --rail-mbps 100000 --lat-us 3 -- "${free[@]}" "${sizes[@]}"
    row rails 128 8 4 8 - "ddl auto, 8 rails of 100 Gbit/s" -- -N 128 -r 8 -g 8 -l 4 --fold 4 "${link[@]}" -- "${free[@]}" "${sizes[@]}"
fi
if want racks; then # 16 nodes per rack, uplinks 1:1 and 4:1 oversubscribed; the network alone
    for f in 1 4; do
        for a in auto ring; do
            row racks 128 8 4 8 "16/$f" "ddl $a" -- -N 128 -r 8 -g 8 -l 4 --fold 4 --rack 16 --oversub $f "${link[@]}" -- -a $a "${free[@]}" "${sizes[@]}"
        done
        row racks 128 8 4 8 "16/$f" "ddl multiring 8x16x8" -- -N 128 -r 8 -g 8 -l 4 --fold 4 --rack 16 --oversub $f "${link[@]}" -- -t 8x16x8 "${free[@]}" "${sizes[@]}"
        row racks 128 8 1 8 "16/$f" "mpi rab_rdb" -- -N 128 -r 8 -g 8 --mpi --rack 16 --oversub $f "${link[@]}" --shm-mbps 1e7 --coll rab_rdb -- --reduce-rate 1e7 "${sizes[@]}"
    done
fi
