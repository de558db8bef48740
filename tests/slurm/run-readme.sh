#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The shell examples of the README and the guides in docs/ that can run on the
# test cluster, run as they are written: every line of their sh blocks that
# starts srun, salloc, sbatch, DDL_LANES=... srun, mpirun or ddl-topo --xml,
# taken from the files themselves, the blocks indented in lists too (so a
# changed example is tested as changed; a line given in two files runs once).  The user's program ./train is
# `true` here (owners end at once, helpers with them), job.sh a script that
# runs one step, node.xml a GPU node's description, python3 the system's (which
# has torch).  Lines with option placeholders ([...], <...>), other hosts
# (host1) or a GPU node of their own (ddl-topo without --xml) are not runnable
# here; they are counted, and the test fails when none is left to run.
. "$(dirname "$0")/../mpi/lib.sh"
cluster=$top_srcdir/tests/slurm/cluster.sh
if [ "$(id -u)" -ne 0 ] || ! command -v slurmctld > /dev/null || [ ! -f "$top_builddir/.libs/spank_ddl.so" ]; then
    echo "SKIP: needs root, Slurm and the built plugin"
    exit 77
fi
export DDL_CLUSTER_DIR=/tmp/ddl-cluster-readme-$$ DDL_CLUSTER_PORT=27817
work=$(mktemp -d)
# The trace example writes /tmp/trace-<rank>.json for its 4 ranks.
trap '"$cluster" stop; rm -rf "$work" /tmp/trace-[0-3].json' EXIT
# 32 cores per node: the examples' -N2 x 4 GPUs x 4 lanes with -c 8 per GPU.
DDL_CLUSTER_CORES_PER_SOCKET=16 "$cluster" start 2 > /dev/null || { fail "cluster did not start"; finish; exit 1; }
export SLURM_CONF=$DDL_CLUSTER_DIR/etc/slurm.conf OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_rmaps_base_oversubscribe=1
export PATH=$top_builddir:$PATH DDL_LIBRARY=$top_builddir/.libs/libddl.so PYTHONPATH=$top_srcdir/python OMP_NUM_THREADS=1
# The examples' files, in the directory they run in.
ln -s /bin/true "$work/train"
printf '#!/bin/bash\nsrun true\n' > "$work/job.sh"
cp "$top_srcdir/tests/fixtures/two-socket-4gpu.xml" "$work/node.xml"
ln -s "$top_srcdir/examples" "$work/examples"
examples=$(awk '/^ *```sh/ { f = 1; next } /^ *```/ { f = 0 } f' "$top_srcdir/README.md" "$top_srcdir"/docs/*.md |
    sed 's/^ *//; s/ *# .*//' | awk '!seen[$0]++')
ran=0 skipped=0
while read -r line; do
    case $line in
        srun\ * | salloc\ * | sbatch\ * | DDL_LANES=*srun\ * | mpirun\ * | ddl-topo\ *--xml*) ;;
        *) continue ;;
    esac
    if [[ $line == *[\[\<]* || $line == *host1* ]]; then
        skipped=$((skipped + 1))
        continue
    fi
    cmd=${line//python3 /\/usr\/bin\/python3 }
    out=$(cd "$work" && timeout 300 bash -c "$cmd" 2>&1 < /dev/null)
    rc=$?
    if [ $rc -eq 0 ]; then
        pass "example: $line"
    else
        fail "example: $line (exit $rc)"; tail -8 <<< "$out"
    fi
    ran=$((ran + 1))
done <<< "$examples"
# The README's C program, as written: built against this tree, then run on 2
# ranks (collective mode) and on 1 node x 1 GPU x 2 lanes under srun.
awk '/^```c/ { f = 1; next } /^```/ { f = 0 } f' "$top_srcdir/README.md" > "$work/prog.c"
if mpicc -Wall -Werror "$work/prog.c" -I"$top_srcdir/include" -I"$top_builddir/include" -L"$top_builddir/.libs" \
        -Wl,-rpath,"$top_builddir/.libs" -lddl -o "$work/prog" > "$work/prog.log" 2>&1; then
    out=$(cd "$work" && timeout 120 $MPIRUN -n 2 ./prog 2>&1) && [ -z "$out" ] &&
        out=$(cd "$work" && timeout 120 srun -N1 --gpus-per-node=1 --ddl-lanes=2 ./prog 2>&1) && [ -z "$out" ] &&
        pass "the README's C program builds warning-free and runs under mpirun and srun --ddl-lanes=2" ||
        { fail "the README's C program"; tail -8 <<< "$out"; }
else
    fail "the README's C program does not build"; tail -8 "$work/prog.log"
fi
# sbatch returns at once: its job runs its step meanwhile, and must end well.
for _ in $(seq 150); do [ -z "$(squeue -h)" ] && break; sleep 0.2; done
[ -z "$(squeue -h)" ] && pass "examples: every job ended" || fail "examples: jobs left: $(squeue -h)"
[ $ran -ge 6 ] && pass "examples: $ran shell examples ran on the test cluster ($skipped need other hosts or placeholders)" ||
    fail "examples: only $ran shell examples could run"
[ "$(shm_segments)" = "" ] || fail "segments left in /dev/shm: $(shm_segments)"
finish
