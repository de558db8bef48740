#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sim-run.sh: one ddl-sim run on a generated platform.
#
#   sim-run.sh PLATFORM-OPTIONS [--coll NAME] -- DDL-SIM-OPTIONS
#
# PLATFORM-OPTIONS are ddl-platform.sh's (-N, -r, -g, -l, --fold, --mpi, link,
# rack and --inj-mbps options); -N, -g, -l, --fold and --mpi go to ddl-sim as well.
# --coll NAME: with --mpi, SMPI's MPI_Allreduce algorithm (ompi: Open MPI's
# selector, mpich: MPICH's, lr: ring, rab_rdb: Rabenseifner, ...).
# Without --rail-mbps/--lat-us the rails are ddl-platform.sh's default (1
# Gbit/s, 12 us); with --tuning, give the same numbers to ddl-sim's cost model
# with --link-us/--link-mbps after --.
# DDL_SIM=path chooses the binary (default: ddl-sim beside this script, where
# `make` builds it in the source tree).  SMPI's network model is used without
# its empirical correction factors: the links are what the platform says.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sim=${DDL_SIM:-$here/ddl-sim}
[ -x "$sim" ] || { echo "sim-run.sh: $sim not built (configure with SimGrid: apt-get install libsimgrid-dev)" >&2; exit 2; }
plat=() simargs=() coll=
nodes= gpus=1 lanes=1 fold=1 mpi=0 rails=1 mbps=125 lat=12 inj=
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case "$1" in
        -N) nodes=$2; plat+=("$1" "$2"); shift ;;
        -g) gpus=$2; plat+=("$1" "$2"); shift ;;
        -l) lanes=$2; plat+=("$1" "$2"); shift ;;
        --fold) fold=$2; plat+=("$1" "$2"); shift ;;
        --mpi) mpi=1; plat+=("$1") ;;
        --coll) coll=$2; shift ;;
        -r) rails=$2; plat+=("$1" "$2"); shift ;;
        --rail-mbps) mbps=$2; plat+=("$1" "$2"); shift ;;
        --lat-us) lat=$2; plat+=("$1" "$2"); shift ;;
        --inj-mbps) inj=$2; plat+=("$1" "$2"); shift ;;
        --tuning|--rack|--oversub|--shm-mbps) plat+=("$1" "$2"); shift ;;
        *) echo "sim-run.sh: unknown platform option $1 (options for ddl-sim go after --)" >&2; exit 2 ;;
    esac
    shift
done
[ $# -gt 0 ] && shift
[ -n "$nodes" ] || { echo "sim-run.sh: give -N NODES" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ddl-sim.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$here/ddl-platform.sh" "${plat[@]}" -o "$tmp/p"
# The cost model sees the platform as ddl-tune would measure it from a lane:
# two NIC hops of latency, and its share of its rail when all lanes send, at
# most what one process injects (ddl-sim options after -- still override these).
model=$(awk -v m="$mbps" -v l="$lat" -v g="$gpus" -v k="$lanes" -v r="$rails" -v inj="$inj" \
    'BEGIN { share = g * k / r; if (share < 1) share = 1; b = m / share; if (inj != "" && inj + 0 < b) b = inj + 0
             printf "--link-us %g --link-mbps %g", 2 * l, b }')
if [ "$mpi" = 1 ]; then np=$((nodes * gpus)); simargs=(--mpi); else np=$((nodes * gpus * lanes / fold)); simargs=($model); fi
cfg=(--cfg=smpi/privatization:no --cfg=smpi/simulate-computation:no --cfg=smpi/test:0 --cfg=smpi/iprobe:0
     --cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1 --cfg=network/crosstraffic:0 --cfg=contexts/stack-size:256
     --log=root.thres:warning --log=xbt_cfg.thres:warning)
[ -n "$coll" ] && cfg+=(--cfg=smpi/allreduce:"$coll")
smpirun -np "$np" -platform "$tmp/p.xml" -hostfile "$tmp/p.hosts" "${cfg[@]}" \
    "$sim" -N "$nodes" -g "$gpus" -l "$lanes" --fold "$fold" "${simargs[@]}" "$@"
