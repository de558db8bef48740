#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# One line per task: what the plugin gave it (run with helpers=app, so that
# helper tasks run this script too).
cpus=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)
cpuset_path=$(awk -F: '$2 == "cpuset" {print $3}' /proc/self/cgroup)
cgroup=$(cat "/sys/fs/cgroup/cpuset$cpuset_path/cpuset.cpus" 2>/dev/null || echo -)
echo "TASK node=${SLURM_NODEID:-} local=${SLURM_LOCALID:-} host=$(hostname) gpu=${DDL_GPU:-} lane=${DDL_LANE:-}" \
     "lanes=${DDL_LANES:-} gpus=${DDL_GPUS_PER_NODE:-} role=${DDL_ROLE:-} core=${DDL_CORE:-}" \
     "ddl_node=${DDL_NODE:-} nnodes=${DDL_NNODES:-} helpers=${DDL_HELPERS:-} cvd=${CUDA_VISIBLE_DEVICES:-}" \
     "order=${CUDA_DEVICE_ORDER:-} rank=${RANK:--} world=${WORLD_SIZE:--} local_rank=${LOCAL_RANK:--}" \
     "local_world=${LOCAL_WORLD_SIZE:--} master=${MASTER_ADDR:--} port=${MASTER_PORT:--} dcores=${DDL_CORES:-} omp=${OMP_NUM_THREADS:-}" \
     "cpt=${SLURM_CPUS_PER_TASK:-} cgroup=$cgroup cpus=$cpus"
