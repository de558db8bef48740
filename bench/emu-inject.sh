#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Runs a task of a job on the emulated cluster started with DDL_EMU_INJ
# (bench/emu-cluster.sh) through its own sub-interface, whose sends are capped
# at the per-process injection rate: srun ... bench/emu-inject.sh PROG ARGS...
# A lane keeps the rail the plugin gave it (DDL_RAIL); a task without lanes
# (one process per GPU) takes rail (local rank mod rails).  Open MPI (over
# its TCP transport, UCX or libfabric) and gloo then send from that
# sub-interface's address only.
set -u
t=${SLURM_LOCALID:?emu-inject.sh runs as a task of srun}
# The task's rails, from netlink.
rails=$(ip -o link show | grep -c ': rail[0-9]@')
[ "$rails" -gt 0 ] || { echo "emu-inject.sh: no rail interfaces here: run it on bench/emu-cluster.sh's nodes" >&2; exit 1; }
rail=${DDL_RAIL:-rail$((t % rails))}
ip link show dev "${rail}p$t" > /dev/null 2>&1 || { echo "emu-inject.sh: no ${rail}p$t: start the cluster with DDL_EMU_INJ (and enough DDL_EMU_PROCS)" >&2; exit 1; }
# Every stack the job may use (bench/emu-cluster.sh's DDL_EMU_STACK: Open
# MPI's TCP transport, UCX, libfabric), and gloo (torch.distributed).
export OMPI_MCA_btl_tcp_if_include=${rail}p$t UCX_NET_DEVICES=${rail}p$t FI_TCP_IFACE=${rail}p$t \
    GLOO_SOCKET_IFNAME=${rail}p$t
exec "$@"
