#!/bin/bash
# One line per task: what the plugin gave it (run with helpers=app, so that
# helper tasks run this script too).
cpus=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)
echo "TASK node=${SLURM_NODEID:-} local=${SLURM_LOCALID:-} host=$(hostname) gpu=${DDL_GPU:-} lane=${DDL_LANE:-}" \
     "lanes=${DDL_LANES:-} gpus=${DDL_GPUS_PER_NODE:-} role=${DDL_ROLE:-} core=${DDL_CORE:-}" \
     "ddl_node=${DDL_NODE:-} nnodes=${DDL_NNODES:-} helpers=${DDL_HELPERS:-} cvd=${CUDA_VISIBLE_DEVICES:-}" \
     "rank=${RANK:--} world=${WORLD_SIZE:--} local_rank=${LOCAL_RANK:--} local_world=${LOCAL_WORLD_SIZE:--}" \
     "cpus=$cpus"
