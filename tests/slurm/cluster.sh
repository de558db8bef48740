#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A throwaway Slurm cluster on this host, as root: munged on a private socket,
# slurmctld, and one or two slurmd (each in its own UTS namespace with its own
# hostname), 4 fake GPUs per node (character devices), the spank_ddl plugin and
# the DDL cli_filter enabled.
#
#   tests/slurm/cluster.sh start [NODES]   NODES = 1 or 2 (default 2)
#   tests/slurm/cluster.sh stop
#   tests/slurm/cluster.sh restart         restart the slurmd daemons (as an admin does)
#   tests/slurm/cluster.sh env             print the exports a client needs
#
# State lives in $DDL_CLUSTER_DIR (default /tmp/ddl-cluster-$UID).  stop ends only
# the daemons this script started (by their pid files) and the step daemons of
# their jobs (by the files they hold in the directory), and removes the directory.
#
# DDL_CLUSTER_TASK=cgroup runs what sites run, TaskPlugin=task/affinity,task/cgroup
# with a cpuset per step, on nodes declared with this host's real CPUs (slurmd
# -C) and 1 GPU: Slurm cannot bind or constrain CPUs the host lacks.  The
# default (task/none) declares 16 CPUs (DDL_CLUSTER_CORES_PER_SOCKET=8 on each
# of 2 sockets) and 4 GPUs per node.  Emulated nodes
# share the host's cores: with task/cgroup each node binds its tasks within
# the same real CPUs, so tasks of different nodes may share a core.
#
# DDL_CLUSTER_PLUGSTACK=FILE includes a site's plugstack file (the installed
# sample /usr/share/ddl-lanes/ddl.conf, say) instead of the build tree's plugin,
# with the cli_filter files installed beside it.  DDL_CLUSTER_PLUGSTACK=none: a
# cluster without DDL lanes, as a site has before it follows docs/admin.md:
# plugstack.conf includes $DDL_CLUSTER_DIR/etc/plugstack.conf.d/*, empty, and
# no cli_filter is configured.
#
# With DDL_CLUSTER_NETNS=PREFIX the daemons run in network namespaces made by
# bench/emu-cluster.sh: slurmctld in PREFIX-hub, slurmd nN in PREFIX-nN, talking
# over rail 0 (10.77.0.0/24); DDL_CLUSTER_RAILS (e.g. rail0,rail1) goes to the
# plugin, and Slurm clients must run in PREFIX-hub.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(cd "$here/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
dir=${DDL_CLUSTER_DIR:-/tmp/ddl-cluster-$(id -u)}
conf=$dir/etc/slurm.conf
ctld_port=${DDL_CLUSTER_PORT:-16817}

die() { echo "cluster: $*" >&2; exit 1; }

pids_of() { cat "$dir"/run/*.pid 2>/dev/null || true; }
# This cluster's step daemons: they hold files under $dir (the slurmd spool's
# step sockets, the logs) open.  One that hangs (seen after a PMIx
# "UNREACHABLE") outlives its slurmd and its job unless ended here.
stepds_of() {
    local p
    for p in $(pgrep -x slurmstepd 2>/dev/null); do
        ls -l "/proc/$p/fd" 2>/dev/null | grep -q -- "-> $dir/" && echo "$p"
    done
    return 0
}

netns=${DDL_CLUSTER_NETNS:-}
# Run a command in the namespace of the hub (slurmctld, clients) or of node N.
in_hub() { if [ -n "$netns" ]; then nsenter --net="/run/netns/$netns-hub" "$@"; else "$@"; fi; }
in_node() { local n=$1; shift; if [ -n "$netns" ]; then nsenter --net="/run/netns/$netns-n$n" "$@"; else "$@"; fi; }
# A node's daemon sees its own network interfaces in sysfs too, as on a real
# node: UCX and libfabric list the NICs from /sys/class/net, which a process
# that only entered the namespace still reads as the host's.  The namespace's
# own sysfs goes over the network part of /sys in a mount namespace of the
# node's; the rest of /sys (cgroups) stays the host's.
in_node_sysfs() {
    local n=$1; shift
    [ -n "$netns" ] || { "$@"; return; }
    # shellcheck disable=SC2016
    nsenter --net="/run/netns/$netns-n$n" unshare --mount --propagation private sh -c '
        d=$(mktemp -d) && mount -t sysfs sysfs "$d" &&
        mount --bind "$d/class/net" /sys/class/net && mount --bind "$d/devices/virtual/net" /sys/devices/virtual/net &&
        umount -l "$d" && rmdir "$d" && exec "$@"' sh "$@"
}
ctld_addr() { if [ -n "$netns" ]; then echo 10.77.0.254; else echo 127.0.0.1; fi; }
node_addr() { if [ -n "$netns" ]; then echo "10.77.0.$1"; else echo 127.0.0.1; fi; }

write_config() {
    local nodes=$1 host
    host=$(hostname)
    mkdir -p "$dir"/{etc,state,log,run,dev,tmp,spool}
    for i in 0 1 2 3; do
        [ -e "$dir/dev/nvidia$i" ] || mknod "$dir/dev/nvidia$i" c 195 "$i"
    done
    local node_lines="" names="" shape gpus task_plugin constrain cli_filter=CliFilterPlugins=cli_filter/lua
    local site=${DDL_CLUSTER_PLUGSTACK:-}
    [ "$site" != none ] || cli_filter=
    if [ "${DDL_CLUSTER_TASK:-none}" = cgroup ]; then
        shape=$(slurmd -C | head -1 | grep -o 'CPUs=.* ThreadsPerCore=[0-9]*')
        gpus=1 task_plugin=task/affinity,task/cgroup constrain=yes
    else
        local per_socket=${DDL_CLUSTER_CORES_PER_SOCKET:-8}
        shape="CPUs=$((2 * per_socket)) Boards=1 SocketsPerBoard=2 CoresPerSocket=$per_socket ThreadsPerCore=1"
        gpus=4 task_plugin=task/none constrain=no
    fi
    for n in $(seq 1 "$nodes"); do
        node_lines+="NodeName=n$n NodeHostname=n$n NodeAddr=$(node_addr "$n") Port=$((ctld_port + 10 + n)) $shape \
RealMemory=4000 Gres=gpu:$gpus State=UNKNOWN"$'\n'
        names+="${names:+,}n$n"
    done
    cat > "$conf" <<CONF
ClusterName=ddltest
SlurmctldHost=$host($(ctld_addr))
SlurmctldPort=$ctld_port
SlurmdPort=$((ctld_port + 10))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmdDebug=verbose
TmpFS=$dir/tmp/%n
ProctrackType=proctrack/cgroup
TaskPlugin=$task_plugin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
SlurmdParameters=config_overrides
PlugStackConfig=$dir/etc/plugstack.conf
$cli_filter
MpiDefault=pmix
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
SchedulerType=sched/backfill
InactiveLimit=0
KillWait=5
$node_lines
PartitionName=debug Nodes=$names Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
    # On the emulated nodes (DDL_CLUSTER_NETNS) every PMIx fence is a ring:
    # there Slurm's tree fence, its default for a fence without data, let a
    # rank leave MPI_Init's second fence before the others had entered it,
    # and a peer's first message then crashed a rank still in the first
    # (bench/JOURNAL.md, "A crash in MPI_Init on the emulated nodes").  On
    # nodes that share this host's network the tree fence holds.
    if [ -n "$netns" ]; then
        echo "PMIxCollFence=ring" > "$dir/etc/mpi.conf"
    else
        rm -f "$dir/etc/mpi.conf"
    fi
    cat > "$dir/etc/cgroup.conf" <<CONF
CgroupPlugin=cgroup/v1
CgroupAutomount=no
ConstrainDevices=no
ConstrainCores=$constrain
CONF
    cat > "$dir/etc/gres.conf" <<CONF
AutoDetect=off
NodeName=n[1-$nodes] Name=gpu File=$dir/dev/nvidia[0-$((gpus - 1))]
CONF
    # DDL_CLUSTER_PLUGSTACK: a site's plugstack file (the installed sample,
    # say) included as is, with the cli_filter files installed beside it.
    if [ "$site" = none ]; then
        mkdir -p "$dir/etc/plugstack.conf.d"
        echo "include $dir/etc/plugstack.conf.d/*" > "$dir/etc/plugstack.conf"
        return
    fi
    if [ -n "$site" ]; then
        cp "$(dirname "$site")/cli_filter.lua" "$(dirname "$site")/ddl_lanes.lua" "$dir/etc/"
        echo "include $site" > "$dir/etc/plugstack.conf"
        return
    fi
    cp "$top_srcdir/etc/cli_filter.lua" "$top_srcdir/etc/ddl_lanes.lua" "$dir/etc/"
    # Emulated nodes share this host's cores: binding pins every node's task 0
    # to the same CPU.  Bind on a single node, and under task/cgroup (whose
    # nodes are declared with the real CPUs, so binding is what a site sees).
    local bind=no
    [ "$nodes" -eq 1 ] || [ "${DDL_CLUSTER_TASK:-none}" = cgroup ] && bind=yes
    bind=${DDL_CLUSTER_BIND:-$bind}
    cat > "$dir/etc/plugstack.conf" <<CONF
required $top_builddir/.libs/spank_ddl.so max_lanes=8 helpers=${DDL_CLUSTER_HELPERS:-daemon} helper=$top_builddir/ddl-helper bind=$bind${DDL_CLUSTER_RAILS:+ rails=$DDL_CLUSTER_RAILS}
CONF
}

start_munge() {
    mkdir -p "$dir/munge"
    chown munge: "$dir/munge"
    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
    chown munge: "$dir/munge/munge.key"
    chmod 0400 "$dir/munge/munge.key"
    touch "$dir/run/munged.pid"
    chown munge: "$dir/run/munged.pid"
    chmod 755 "$dir" "$dir/munge"
    runuser -u munge -- munged --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
        --pid-file="$dir/run/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/seed" \
        --force
}

wait_idle() {
    local nodes=$1
    for _ in $(seq 150); do
        local idle
        idle=$(in_hub sinfo -h -N -o '%t' 2>/dev/null | grep -c '^idle' || true)
        [ "$idle" -ge "$nodes" ] && return 0
        sleep 0.2
    done
    in_hub sinfo -N 2>&1 || true
    tail -n 20 "$dir"/log/*.log >&2 || true
    die "nodes did not become idle in 30 s"
}

start_slurmd() {
    local n=$1
    mkdir -p "$dir/spool/n$n" "$dir/tmp/n$n"
    in_node_sysfs "$n" unshare --uts sh -c "hostname n$n && exec slurmd -f '$conf' -N n$n"
}

# Each slurmd ended by its pid file and started again, as systemctl restart does.
restart() {
    export SLURM_CONF=$conf
    local nodes=0 f p n
    for f in "$dir"/run/slurmd-n*.pid; do
        [ -f "$f" ] || continue
        p=$(cat "$f")
        kill "$p" 2>/dev/null || true
        for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$p" 2>/dev/null && die "slurmd $p did not stop in 10 s"
        n=${f##*/slurmd-n}
        start_slurmd "${n%.pid}"
        nodes=$((nodes + 1))
    done
    wait_idle "$nodes"
}

start() {
    local nodes=${1:-2}
    [ "$(id -u)" -eq 0 ] || die "must run as root (it starts munged, slurmctld and slurmd)"
    [ -n "${DDL_CLUSTER_PLUGSTACK:-}" ] || [ -f "$top_builddir/.libs/spank_ddl.so" ] ||
        die "build the plugin first ($top_builddir/.libs/spank_ddl.so)"
    if [ -n "$(pids_of)$(stepds_of)" ]; then stop; fi
    rm -rf "$dir"
    mkdir -p "$dir"
    write_config "$nodes"
    start_munge
    export SLURM_CONF=$conf
    in_hub slurmctld -c -f "$conf"
    for n in $(seq 1 "$nodes"); do start_slurmd "$n"; done
    wait_idle "$nodes"
    echo "cluster: $nodes node(s) up; export SLURM_CONF=$conf"
}

stop() {
    local pids
    # End this cluster's jobs first, so that no step outlives its slurmd.
    if [ -f "$conf" ] && [ -n "$(pids_of)" ]; then
        export SLURM_CONF=$conf
        for job in $(in_hub squeue -h -o %i 2>/dev/null); do in_hub scancel "$job" 2>/dev/null || true; done
        for _ in $(seq 50); do [ -z "$(in_hub squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.2; done
    fi
    pids="$(pids_of) $(stepds_of)"
    for p in $pids; do kill "$p" 2>/dev/null || true; done
    for p in $pids; do
        for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$p" 2>/dev/null || true
    done
    for p in $pids; do # gone (and reaped) before the caller looks
        for _ in $(seq 30); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    done
    rm -rf "$dir"
}

case "${1:-}" in
    start) start "${2:-2}" ;;
    stop) stop ;;
    restart) restart ;;
    env) echo "export SLURM_CONF=$conf" ;;
    *) echo "usage: $0 start [1|2] | stop | restart | env" >&2; exit 2 ;;
esac
