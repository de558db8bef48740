#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ddl-platform.sh: writes a SimGrid platform (PREFIX.xml) and the hostfile
# that places ddl-sim's ranks on it (PREFIX.hosts).
#
#   ddl-platform.sh -N NODES [-r RAILS] [-g GPUS] [-l LANES] [--fold K] [--mpi]
#                   [--rail-mbps MB/S] [--lat-us US] [--tuning FILE]
#                   [--rack NODES --oversub F] [--inj-mbps MB/S] -o PREFIX
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
# --inj-mbps X: what one process can inject, as on real nodes and the emulated
# cluster with DDL_EMU_INJ (bench/emu-cluster.sh).  Every simulated rank gets
# a host of its own whose sends cross a link of its own (X, or K X for a rank
# that stands for K folded lanes) before its node's NIC on its rail (or the
# node's NIC with --mpi); what it receives is not capped, as there.  With
# --mpi, ranks of one node talk over the node's shared-memory link.  The
# platform is then a routed zone (Dijkstra, routes computed when first used):
# process -> NIC router -> rail switch -> core; --rack is not available with it.
#
# Link numbers: --rail-mbps and --lat-us, else a tuning file's `link 0` line
# (ddl-tune measures it per lane), else 1 Gbit/s rails (the emulated cluster's
# tbf rate, 125 MB/s) with 12 us (the runtime's model default).
# Hosts compute at 1 Gflop/s: ddl-sim charges s seconds as s x 1e9 flops.
set -euo pipefail

die() { echo "ddl-platform.sh: $*" >&2; exit 2; }

nodes= rails=1 gpus=1 lanes=1 fold=1 mpi=0 mbps= lat= tuning= rack=0 oversub=1 out= shm_mbps=10000 inj=
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
        --inj-mbps) inj=$2; shift ;;
        -o) out=$2; shift ;;
        -h|--help) sed -n '3,38p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

# The per-process platform (--inj-mbps): one host per rank, its sends through
# its own link, then its node's NIC (one per rail, or the node's with --mpi),
# the rail's switch and a core joining the rails.  Routes are one hop per
# segment, so the shortest path is the only one; back to a process they cross
# no process link (receiving is not capped).
if [ -n "$inj" ]; then
    awk -v x="$inj" 'BEGIN { exit !(x + 0 > 0) }' || die "--inj-mbps $inj is not a positive rate in MB/s"
    [ "$rack" = 0 ] || die "--inj-mbps and --rack cannot be combined (the per-process platform has non-blocking switches)"
    [ "$mpi" = 1 ] && per=$gpus || per=$per_node
    awk -v nodes="$nodes" -v rails="$rails" -v per="$per" -v fold="$fold" -v mpi="$mpi" -v inj="$inj" \
        -v mbps="$mbps" -v lat="$lat" -v shm="$shm_mbps" -v out="$out" -v head="ddl-platform.sh -N $nodes -r $rails -g $gpus -l $lanes --fold $fold $([ "$mpi" = 1 ] && echo --mpi) --rail-mbps $mbps --lat-us $lat --inj-mbps $inj" '
    function route(a, b, l, dir) { # after every resource (SimGrid\x27s DTD orders them)
        routes[++nroutes] = sprintf("    <route src=\"%s\" dst=\"%s\" symmetrical=\"NO\"><link_ctn id=\"%s\"%s/></route>", a, b, l,
            dir == "" ? "" : " direction=\"" dir "\"")
    }
    BEGIN {
        xml = out ".xml"; hosts = out ".hosts"
        printf "" > hosts
        print "<?xml version=\x27" "1.0\x27?>" > xml
        print "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">" > xml
        print "<!-- " head " -->" > xml
        print "<platform version=\"4.1\">" > xml
        print "  <zone id=\"ddl\" routing=\"DijkstraCache\">" > xml
        nics = mpi ? 1 : rails                     # NICs per node
        nic_bw = mpi ? mbps * rails : mbps
        proc_bw = mpi ? inj : inj * fold           # a folded rank is fold processes
        print "    <router id=\"core\"/>" > xml
        print "    <link id=\"free\" bandwidth=\"100TBps\" latency=\"0us\" sharing_policy=\"FATPIPE\"/>" > xml
        for (k = 0; k < nics; k++) {
            printf "    <router id=\"s%d\"/>\n", k > xml
            route("s" k, "core", "free"); route("core", "s" k, "free")
        }
        for (n = 0; n < nodes; n++) {
            for (k = 0; k < nics; k++) {
                nic = "n" n "r" k
                printf "    <router id=\"%s\"/>\n", nic > xml
                printf "    <link id=\"%s_nic\" bandwidth=\"%sMBps\" latency=\"%sus\" sharing_policy=\"SPLITDUPLEX\"/>\n", nic, nic_bw, lat > xml
                route(nic, "s" k, nic "_nic", "UP"); route("s" k, nic, nic "_nic", "DOWN")
            }
            if (mpi)
                printf "    <link id=\"n%d_shm\" bandwidth=\"%sMBps\" latency=\"0.5us\"/>\n", n, shm > xml
            for (j = 0; j < per; j++) {
                p = "p" n "_" j; nic = "n" n "r" (mpi ? 0 : j % rails)
                printf "    <host id=\"%s\" speed=\"1Gf\" core=\"1\"/>\n", p > xml
                printf "    <link id=\"%s_inj\" bandwidth=\"%sMBps\" latency=\"0us\"/>\n", p, proc_bw > xml
                route(p, nic, p "_inj"); route(nic, p, "free")
                for (i = 0; mpi && i < j; i++) {
                    route(p, "p" n "_" i, "n" n "_shm"); route("p" n "_" i, p, "n" n "_shm")
                }
                print p > hosts
            }
        }
        for (i = 1; i <= nroutes; i++) print routes[i] > xml
        print "  </zone>" > xml
        print "</platform>" > xml
    }'
    exit 0
fi

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
