#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The project against MPICH: built again in build-mpich/ with
# --with-mpi=mpich (warning-free, libddl linking MPICH and not Open MPI),
# then a lean suite under MPICH's Hydra launcher: the allreduce on a few
# layouts and paths (every type, op and count on one of them), the mismatch
# and argument tests, a stopped and a killed rank, each checking that nothing
# is left in /dev/shm; then, through the main tree's plugin, a run on the
# emulated cluster's rails under srun --mpi=pmi2 (tests/slurm/run-emu-mpich.sh:
# every lane on its rail, the rails' counters within 20%).  scripts/test.sh
# calls it after the main suite.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
dir=$top/build-mpich
start=$(date +%s)
if ! pkg-config --exists mpich || ! command -v mpiexec.mpich > /dev/null; then
    echo "mpich: SKIP: no MPICH (Debian: mpich libmpich-dev)"
    exit 0
fi
. scripts/variant.sh
variant_tree "$dir" || exit 1
cd "$dir"
./configure --with-mpi=mpich --without-cuda PYTHON=/usr/bin/python3 > configure.out 2>&1 ||
    { echo "mpich: configure failed"; tail -20 configure.out; exit 1; }
programs="tests/mpi/ddl-test-allreduce tests/mpi/ddl-test-errors tests/mpi/ddl-test-mismatch tests/mpi/ddl-test-failure"
# The library, the tools the tests run and the tests: no man pages, plugin or packages (the main build has them).
# run-failure.sh's failed MPI call (tests/mpi/mpi_fail.c) is preloaded: built too.
make -j"$(nproc)" libddl.la ddl-bench ddl-helper ddl-info $programs tests/mpi/libddl-mpi-fail.la > make.out 2>&1 ||
    { echo "mpich: build failed"; tail -30 make.out; exit 1; }
rc=0
if grep -E "warning:" make.out; then
    echo "mpich: FAIL: the build against MPICH warns"; rc=1
fi
libs=$(ldd .libs/libddl.so)
if ! grep -q libmpich <<< "$libs" || grep -q "libmpi\.so" <<< "$libs"; then
    echo "mpich: FAIL: libddl does not link MPICH alone:"; grep -i mpi <<< "$libs"; rc=1
fi
echo "mpich: built ($(sed -n 's/^ *MPI: *//p' configure.out | head -1); $(( $(date +%s) - start )) s)"
# The lanes between virtual nodes in both helper modes, and the MPI path
# under online selection and the model (every type, op and count on the
# first of those: MPICH 4.0.2's own unsigned MIN and MAX are wrong there).
export DDL_TEST_LAYOUTS='^(2 1 2 serve +DDL_ALGO=lane|2 1 2 collective +DDL_ALGO=lane|2 2 1 collective +DDL_ALGO=auto|3 1 1 collective +DDL_SELECT=model)'
# With them, the emulated cluster's rails through the plugin (of the main tree).
tests="tests/mpi/run-allreduce.sh tests/mpi/run-errors.sh tests/mpi/run-failure.sh tests/slurm/run-emu-mpich.sh"
export DDL_MAIN_BUILD=$top
# check-TESTS: the suites alone (make check would build everything first).
make -j1 check-TESTS TESTS="$tests" check_PROGRAMS="$programs" > check.out 2>&1 || rc=1
for t in $tests; do
    log=${t%.sh}.log
    [ -f "$log" ] || { echo "mpich: no $log"; rc=1; continue; }
    grep -q "^FAIL" "$log" && { echo "==== MPICH: $log"; grep -B2 -A12 -m3 "^FAIL" "$log" | head -60; }
done
grep -E '^(PASS|FAIL|ERROR|SKIP):' check.out | sed "s/^/MPICH: /"
echo "MPICH suite took $(( $(date +%s) - start )) s"
exit $rc
