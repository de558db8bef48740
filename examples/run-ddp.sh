#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Train examples/ddp_train.py on the 2-node test cluster twice, with gloo's
# allreduce and with --ddl-lanes=2 and the DDL hook, and compare the runs.
# Run scripts/setup.sh (or scripts/main.sh) first; as root.
set -euo pipefail
cd "$(dirname "$0")/.."
export DDL_CLUSTER_DIR=/tmp/ddl-cluster-ddp DDL_CLUSTER_PORT=38817
trap 'tests/slurm/cluster.sh stop' EXIT
tests/slurm/cluster.sh start 2
export SLURM_CONF=$DDL_CLUSTER_DIR/etc/slurm.conf OMPI_MCA_mpi_yield_when_idle=1 OMP_NUM_THREADS=1
export MASTER_ADDR=127.0.0.1 # the emulated nodes' names do not resolve
export DDL_LIBRARY=$PWD/.libs/libddl.so PYTHONPATH=$PWD/python
steps=${STEPS:-30}
out=$(mktemp -d)
srun -N2 --gpus-per-node=1 --ddl-lanes=1 /usr/bin/python3 examples/ddp_train.py --hook gloo --steps "$steps" --json "$out/gloo.json" | tail -1
srun -N2 --gpus-per-node=1 --ddl-lanes=2 /usr/bin/python3 examples/ddp_train.py --hook ddl --steps "$steps" --json "$out/ddl.json" | tail -1
/usr/bin/python3 examples/compare_ddp.py "$out/gloo.json" "$out/ddl.json"
rm -rf "$out"
