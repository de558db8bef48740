#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ddl-platform.sh: writes a SimGrid platform (PREFIX.xml) and the hostfile
# that places ddl-sim's ranks on it (PREFIX.hosts).
#
#   ddl-platform.sh -N NODES [-r RAILS] [-g GPUS] [-l LANES] [--fold K] [--mpi]
#                   [--rail-mbps MB/S] [--lat-us US] [--tuning FILE]
#                   [--rack NODES --oversub F] -o PREFIX
#
# Rails: one host per (node, rail), each with its own NIC link (full duplex,
# the rail's rate and latency) into that rail's switch: lane traffic of rail r
# never meets rail s's.  A node's lanes take the rails in turn (GPU g's lane k
# is lane l = g L + k, on rail l mod R: as many lanes per rail as the
# plugin's `rails=` puts there); with --fold K a simulated rank stands for lanes j, j + M, ...
# (M = G L / K), so M must be a multiple of R.
# Without --rack the switches are non-blocking; with --rack K, a two-level fat
# tree: K nodes of one rail per leaf switch, and each leaf's uplinks to the
# spines carry 1/F of what its nodes can send (F = --oversub, 1: full
# bisection).  Hosts are numbered rail-major (host = rail * NODES + node), so a
# leaf holds consecutive nodes of one rail, as in a rail-optimised fabric.
#
# --mpi: the platform for the baseline, one host per node whose NIC carries
# the rails together (R x the rate; MPI stripes its messages over the rails),
# the same fat tree, and shared memory inside the node at the host's copy rate.
#
# Link numbers: --rail-mbps and --lat-us, else a tuning file's `link 0` line
# (ddl-tune measures it per lane), else 1 Gbit/s rails (the emulated cluster's
# tbf rate, 125 MB/s) with 12 us (the runtime's model default).
# Hosts compute at 1 Gflop/s: ddl-sim charges s seconds as s x 1e9 flops.
set -euo pipefail

die() { echo "ddl-platform.sh: $*" >&2; exit 2; }

nodes= rails=1 gpus=1 lanes=1 fold=1 mpi=0 mbps= lat= tuning= rack=0 oversub=1 out= shm_mbps=10000
while [ $# -gt 0 ]; do
    case "$1" in
        -N) nodes=$2; shift ;;
        -r) rails=$2; shift ;;
        -g) gpus=$2; shift ;;
        -l) lanes=$2; shift ;;
        --fold) fold=$2; shift ;;
        --mpi) mpi=1 ;;
        --rail-mbps) mbps=$2; shift ;;
        --lat-us) lat=$2; shift ;;
        --tuning) tuning=$2; shift ;;
        --rack) rack=$2; shift ;;
        --oversub) oversub=$2; shift ;;
        --shm-mbps) shm_mbps=$2; shift ;;
        -o) out=$2; shift ;;
        -h|--help) sed -n '3,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
    shift
done
[ -n "$nodes" ] && [ -n "$out" ] || die "give -N NODES and -o PREFIX (see --help)"
for v in nodes rails gpus lanes fold rack; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "-$v ${!v} is not a whole number"
done
[ "$fold" -ge 1 ] && [ $((gpus * lanes % fold)) -eq 0 ] || die "--fold $fold does not divide the node's $((gpus * lanes)) lanes"
per_node=$((gpus * lanes / fold))
[ "$fold" = 1 ] || [ $((per_node % rails)) -eq 0 ] ||
    die "--fold $fold: the lanes folded together must share a rail, so G x L / K ($per_node) must be a multiple of $rails rails"
if [ -n "$tuning" ]; then
    [ -r "$tuning" ] || die "cannot read the tuning file $tuning"
    line=$(awk '$1 == "link" && $2 == "0"' "$tuning" | tail -1)
    [ -n "$line" ] || die "$tuning has no 'link 0 latency_us=X mbytes_per_s=Y' line (ddl-tune writes it)"
    [ -n "$lat" ] || lat=$(sed -n 's/.*latency_us=\([0-9.]*\).*/\1/p' <<< "$line")
    [ -n "$mbps" ] || mbps=$(sed -n 's/.*mbytes_per_s=\([0-9.]*\).*/\1/p' <<< "$line")
fi
mbps=${mbps:-125} lat=${lat:-12}

# Per host: its NIC's rate, and how many hosts there are.
if [ "$mpi" = 1 ]; then
    hosts=$nodes nic_mbps=$(awk -v m="$mbps" -v r="$rails" 'BEGIN { print m * r }')
else
    hosts=$((nodes * rails)) nic_mbps=$mbps
fi
if [ "$rack" -gt 0 ]; then
    [ $((nodes % rack)) -eq 0 ] || die "--rack $rack does not divide $nodes nodes"
    up=$(awk -v k="$rack" -v f="$oversub" 'BEGIN { u = k / f; if (u != int(u) || u < 1) exit 1; print u }') ||
        die "--oversub $oversub must divide $rack nodes per rack into whole uplinks"
    topo="topology=\"FAT_TREE\" topo_parameters=\"2;$rack,$((hosts / rack));1,$up;1,1\""
else
    topo="bb_bw=\"100TBps\" bb_lat=\"0us\""
fi
cores=$((per_node + 1))
cat > "$out.xml" <<EOF
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- ddl-platform.sh -N $nodes -r $rails -g $gpus -l $lanes --fold $fold $([ "$mpi" = 1 ] && echo --mpi) --rail-mbps $mbps --lat-us $lat --rack $rack --oversub $oversub -->
<platform version="4.1">
  <cluster id="ddl" prefix="h" suffix="" radical="0-$((hosts - 1))" speed="1Gf" core="$cores"
           bw="${nic_mbps}MBps" lat="${lat}us" sharing_policy="SPLITDUPLEX"
           loopback_bw="${shm_mbps}MBps" loopback_lat="0.5us" $topo/>
</platform>
EOF
# One line per rank, in rank order.
: > "$out.hosts"
for ((n = 0; n < nodes; n++)); do
    if [ "$mpi" = 1 ]; then
        for ((g = 0; g < gpus; g++)); do echo "h$n" >> "$out.hosts"; done
    else
        for ((j = 0; j < per_node; j++)); do
            echo "h$((j % rails * nodes + n))"
        done >> "$out.hosts"
    fi
done
