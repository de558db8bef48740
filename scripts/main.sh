#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The main job: set up the machine, build, start a throwaway 2-node Slurm cluster
# on this host (fake GPUs, the spank_ddl plugin and the DDL cli_filter), measure
# the allocation with ddl-tune, and run ddl-bench through `srun --ddl-lanes=2`
# across both nodes with that tuning file against the system MPI_Allreduce;
# then the single-node table under mpirun.  Tears the cluster
# down at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The emulated nodes share this host's cores: MPI must yield while it waits.
export OMPI_MCA_mpi_yield_when_idle=1
export DDL_CLUSTER_DIR=/tmp/ddl-cluster-main DDL_CLUSTER_PORT=36817
trap 'tests/slurm/cluster.sh stop' EXIT
tests/slurm/cluster.sh start 2
export SLURM_CONF=$DDL_CLUSTER_DIR/etc/slurm.conf

echo
echo "== srun -N2 --gpus-per-node=2 --ddl-lanes=2 ddl-tune   (measure this allocation's links and algorithms)"
timeout 900 srun -N2 --gpus-per-node=2 --ddl-lanes=2 ./ddl-tune -b 4K -e 16M -f 8 -n 3 -o "$DDL_CLUSTER_DIR/tuning.conf"
grep -v '^#' "$DDL_CLUSTER_DIR/tuning.conf"
echo
echo "== DDL_TUNING_FILE=tuning.conf srun -N2 --gpus-per-node=2 --ddl-lanes=2 ddl-bench   (2 nodes x 2 GPUs x 2 lanes, f32 sum)"
DDL_TUNING_FILE=$DDL_CLUSTER_DIR/tuning.conf timeout 900 srun -N2 --gpus-per-node=2 --ddl-lanes=2 ./ddl-bench -b 8 -e 64M -f 8 -n 10
echo
echo "== mpirun -n 2 ddl-bench   (1 node x 2 GPUs x 1 lane, f32 sum)"
timeout 900 mpirun --oversubscribe --bind-to none -n 2 ./ddl-bench -b 8 -e 64M -f 8 -n 10 < /dev/null
