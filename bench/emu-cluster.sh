#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# An emulated multi-rail cluster on this host, as root: NODES network
# namespaces, each with RAILS links (veth pairs; rail k of every node on bridge k
# of a hub namespace, as in rail-optimised fabrics), every link capped with tbf
# at RATE on both ends (netem is not available here), and one slurmd per node
# (tests/slurm/cluster.sh) with the plugin told the rails: lane k of GPU g (of
# G) sends over rail (k G + g) mod RAILS.  Addresses: 10.77.<rail>.<node>, the hub .254.
#
#   bench/emu-cluster.sh start [NODES=2] [RAILS=2] [RATE=1gbit] [RACKS=1 UPLINK=RATE]
#                                  with RACKS=2 the first half of the nodes hang off
#                                  rack A's bridge and the rest off rack B's, joined
#                                  per rail by an uplink capped at UPLINK
#   DDL_EMU_INJ=RATE (with start)      and each process's sends capped at RATE too:
#                                  every node has a sub-interface per local rank on
#                                  each rail (DDL_EMU_PROCS of them, default 16),
#                                  bench/emu-inject.sh points a task at its own, and
#                                  helper lanes run the job's command (helpers=app)
#                                  so that they go through it too
#   DDL_EMU_BURST=SIZE (with start)    every cap's burst (default 256kb): what a link
#                                  that was idle lets through above RATE; a message
#                                  up to it crosses faster than the wire would carry
#                                  it, which favours whatever sends more bytes (32kb:
#                                  close to a real link's serialisation)
#   bench/emu-cluster.sh run CMD...    run a Slurm client (srun ...) in the hub
#   DDL_EMU_STACK=tcp|ucx|ofi|mpich (with run)   the job's network stack: Open
#                                  MPI's TCP transport (btl/tcp, default), UCX's tcp
#                                  transport (pml/ucx) or libfabric's tcp provider
#                                  (mtl/ofi), in place of verbs and cxi; or MPICH
#                                  (ch4:ucx) under srun --mpi=pmi2, for programs
#                                  built against it (scripts/test-mpich.sh's
#                                  build-mpich/; MPICH 4.0 may hang in MPI_Finalize
#                                  here, docs/admin.md); the plugin steers each lane's
#                                  rail through the same variables as on a real fabric
#   bench/emu-cluster.sh job LOG CMD...  run CMD as run does, its output in LOG; a
#                                  ddl-bench job that printed its last line and
#                                  has not ended 20 s later is ended (MPICH 4.0.2
#                                  often hangs in MPI_Finalize after its results,
#                                  pmodels/mpich#6596): then the status is 0 when
#                                  every result was right
#   bench/emu-cluster.sh counters      bytes sent per node and rail
#   bench/emu-cluster.sh stop          tear everything down, leaving nothing
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
prefix=${DDL_EMU_PREFIX:-ddlemu}
export DDL_CLUSTER_DIR=${DDL_CLUSTER_DIR:-/tmp/ddl-emu-$(id -u)}
export DDL_CLUSTER_PORT=${DDL_CLUSTER_PORT:-46817}
export DDL_CLUSTER_NETNS=$prefix
state=$DDL_CLUSTER_DIR.net
inj=${DDL_EMU_INJ:-}
procs=${DDL_EMU_PROCS:-16}
burst=${DDL_EMU_BURST:-256kb}

die() { echo "emu-cluster: $*" >&2; exit 1; }

# Per-process injection (DDL_EMU_INJ): node n's rail k gets PROCS sub-interfaces
# rail<k>p<t> (macvlan, address 10.77.<k>.<64 + 32 (n - 1) + t>), one per local
# rank, and its sends an HTB tree: the link's RATE over all, and per local rank
# t a class capped at INJ that takes what leaves from t's addresses (on any
# rail: a process bound to rail j's address that talks to a peer on rail k
# leaves through rail k).  What goes from the node's own address (Slurm, PMIx)
# shares the link, uncapped.
per_process() {
    local ns=$1 n=$2 k=$3 rate=$4 inj=$5 rails=$6 t j class
    tc -n "$ns" qdisc add dev "rail$k" root handle 1: htb default 1ff
    tc -n "$ns" class add dev "rail$k" parent 1: classid 1:1 htb rate "$rate" ceil "$rate" burst "$burst" cburst "$burst" \
        quantum 60000
    tc -n "$ns" class add dev "rail$k" parent 1:1 classid 1:1ff htb rate "$rate" ceil "$rate" burst "$burst" cburst "$burst" \
        quantum 60000
    for t in $(seq 0 $((procs - 1))); do
        ip -n "$ns" link add "rail${k}p$t" link "rail$k" type macvlan mode bridge
        ip -n "$ns" addr add "10.77.$k.$((64 + 32 * (n - 1) + t))/24" dev "rail${k}p$t"
        ip -n "$ns" link set "rail${k}p$t" up
        class=1:$(printf %x $((t + 16)))
        tc -n "$ns" class add dev "rail$k" parent 1:1 classid "$class" htb rate "$inj" ceil "$inj" burst 64kb cburst 64kb \
            quantum 60000
        for j in $(seq 0 $((rails - 1))); do
            tc -n "$ns" filter add dev "rail$k" parent 1: protocol ip prio 1 u32 \
                match ip src "10.77.$j.$((64 + 32 * (n - 1) + t))/32" flowid "$class"
        done
    done
}

make_net() {
    local nodes=$1 rails=$2 rate=$3 racks=$4 uplink=$5
    ip netns add "$prefix-hub"
    ip -n "$prefix-hub" link set lo up
    for k in $(seq 0 $((rails - 1))); do
        ip -n "$prefix-hub" link add "rail$k" type bridge
        ip -n "$prefix-hub" addr add "10.77.$k.254/24" dev "rail$k"
        ip -n "$prefix-hub" link set "rail$k" up
        if [ "$racks" -eq 2 ]; then
            # Rack B's bridge, joined to rack A's (rail$k) by a capped uplink.
            ip -n "$prefix-hub" link add "rail${k}b" type bridge
            ip -n "$prefix-hub" link set "rail${k}b" up
            ip -n "$prefix-hub" link add "up${k}a" type veth peer name "up${k}b"
            ip -n "$prefix-hub" link set "up${k}a" master "rail$k" up
            ip -n "$prefix-hub" link set "up${k}b" master "rail${k}b" up
            tc -n "$prefix-hub" qdisc add dev "up${k}a" root tbf rate "$uplink" burst "$burst" latency 50ms
            tc -n "$prefix-hub" qdisc add dev "up${k}b" root tbf rate "$uplink" burst "$burst" latency 50ms
        fi
    done
    for n in $(seq 1 "$nodes"); do
        ip netns add "$prefix-n$n"
        ip -n "$prefix-n$n" link set lo up
        for k in $(seq 0 $((rails - 1))); do
            local bridge="rail$k"
            [ "$racks" -eq 2 ] && [ "$n" -gt $((nodes / 2)) ] && bridge="rail${k}b"
            ip link add "h$n-$k" netns "$prefix-hub" type veth peer name "rail$k" netns "$prefix-n$n"
            ip -n "$prefix-hub" link set "h$n-$k" master "$bridge" up
            ip -n "$prefix-n$n" addr add "10.77.$k.$n/24" dev "rail$k"
            ip -n "$prefix-n$n" link set "rail$k" up
            # Both ends: the node's sends and its receives are capped.
            if [ -n "$inj" ]; then
                per_process "$prefix-n$n" "$n" "$k" "$rate" "$inj" "$rails"
            else
                tc -n "$prefix-n$n" qdisc add dev "rail$k" root tbf rate "$rate" burst "$burst" latency 50ms
            fi
            tc -n "$prefix-hub" qdisc add dev "h$n-$k" root tbf rate "$rate" burst "$burst" latency 50ms
        done
    done
    echo "$nodes $rails $rate $racks $uplink" > "$state"
}

del_net() {
    for ns in $(ip netns list | awk '{print $1}' | grep "^$prefix-" || true); do
        ip netns del "$ns"
    done
    rm -f "$state"
}

case "${1:-}" in
start)
    nodes=${2:-2} rails=${3:-2} rate=${4:-1gbit} racks=${5:-1} uplink=${6:-${4:-1gbit}}
    [ "$(id -u)" -eq 0 ] || die "must run as root"
    [ "$nodes" -ge 2 ] && [ "$nodes" -le 4 ] || die "NODES must be 2 to 4"
    [ "$rails" -ge 1 ] && [ "$rails" -le 4 ] || die "RAILS must be 1 to 4"
    [ "$racks" -eq 1 ] || { [ "$racks" -eq 2 ] && [ $((nodes % 2)) -eq 0 ]; } || die "RACKS must be 1, or 2 with an even NODES"
    [ "$procs" -ge 1 ] && [ "$procs" -le 32 ] || die "DDL_EMU_PROCS must be 1 to 32"
    "$0" stop > /dev/null 2>&1 || true
    make_net "$nodes" "$rails" "$rate" "$racks" "$uplink"
    # With per-process caps every task must run its command (through
    # bench/emu-inject.sh): helpers=app, not the daemon the plugin would exec.
    [ -z "$inj" ] || export DDL_CLUSTER_HELPERS=${DDL_CLUSTER_HELPERS:-app}
    DDL_CLUSTER_RAILS=$(seq -s, -f 'rail%g' 0 $((rails - 1))) DDL_CLUSTER_BIND=no \
        "$top/tests/slurm/cluster.sh" start "$nodes" || { del_net; exit 1; }
    echo "emu-cluster: $nodes nodes x $rails rails at $rate, $racks rack(s) (uplink $uplink)${inj:+, each process at $inj (bench/emu-inject.sh)}; run clients with: $0 run srun ..."
    ;;
run)
    shift
    export SLURM_CONF=$DDL_CLUSTER_DIR/etc/slurm.conf
    # Open MPI takes pml/ucx only on devices it knows unless told any (UCX's
    # tcp transport here), and mtl/ofi only under pml/cm.
    case ${DDL_EMU_STACK:-tcp} in
    tcp) export OMPI_MCA_pml=ob1 ;;
    ucx) export OMPI_MCA_pml=ucx OMPI_MCA_pml_ucx_tls=any OMPI_MCA_pml_ucx_devices=any UCX_TLS=tcp,self,sm ;;
    ofi) export OMPI_MCA_pml=cm OMPI_MCA_mtl=ofi OMPI_MCA_mtl_ofi_provider_include=tcp FI_PROVIDER=tcp ;;
    # MPICH's PMI client speaks Slurm's pmi2 plugin's protocol.  UCX's tcp
    # alone between nodes: with UCX's default transports MPICH's ranks of
    # different emulated nodes (one host) met without the rails (18 KB on
    # them for a 16 MiB run; Open MPI's pml/ucx with sm uses the rails).
    mpich) export SLURM_MPI_TYPE=pmi2 UCX_TLS=tcp,self ;;
    *) die "DDL_EMU_STACK=${DDL_EMU_STACK} is not a stack here: tcp, ucx, ofi or mpich" ;;
    esac
    exec nsenter --net="/run/netns/$prefix-hub" "$@"
    ;;
job)
    log=${2:?"usage: $0 job LOG CMD..."}
    shift 2
    "$0" run "$@" > "$log" 2>&1 &
    pid=$! waited=0
    while kill -0 "$pid" 2> /dev/null; do
        grep -q '^# Avg bus bandwidth' "$log" && waited=$((waited + 1))
        if [ "$waited" -gt 20 ]; then
            echo "emu-cluster: the job printed its results but did not end (MPI_Finalize?): ended" >&2
            kill "$pid" 2> /dev/null || true
            wait "$pid" || true
            grep -q '^# Out of bounds values : 0 OK' "$log"
            exit
        fi
        sleep 1
    done
    wait "$pid"
    ;;
counters)
    read -r nodes rails _ racks _ < "$state" || die "not started"
    for n in $(seq 1 "$nodes"); do
        for k in $(seq 0 $((rails - 1))); do
            echo "n$n rail$k tx_bytes $(ip netns exec "$prefix-n$n" cat "/sys/class/net/rail$k/statistics/tx_bytes")"
        done
    done
    if [ "${racks:-1}" -eq 2 ]; then
        for k in $(seq 0 $((rails - 1))); do
            echo "uplink rail$k tx_bytes $(ip netns exec "$prefix-hub" cat "/sys/class/net/up${k}a/statistics/tx_bytes")"
        done
    fi
    ;;
stop)
    "$top/tests/slurm/cluster.sh" stop || true
    del_net
    ;;
*)
    echo "usage: $0 start [NODES] [RAILS] [RATE] | run CMD... | counters | stop" >&2
    exit 2
    ;;
esac
