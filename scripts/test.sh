#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Set up the machine and run every test: check unit tests, then the MPI
# integration tests (real Open MPI ranks, emulated nodes), through make check;
# then the sanitizer builds, the device path on emulated GPUs, a build
# against MPICH, and the Debian packages.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || exit 1
start=$(date +%s)
# The test programs on every core first (TESTS= runs none), then the suites
# one at a time: their ranks oversubscribe the cores already.
make -j"$(nproc)" check TESTS= > /dev/null 2>&1
make -j1 check
rc=$?
# Every failing test's failures, kept for the end of the output where a CI
# summary that shows only the tail still sees them.
failures=$(for log in tests/*/*.log; do
    [ -f "$log" ] || continue
    if grep -q '^FAIL' "$log" 2>/dev/null || grep -q 'Failures: [1-9]' "$log" 2>/dev/null; then
        echo "==== $log"; grep -A12 '^FAIL\|Failures: [1-9]\|:[FE]:' "$log" | head -60
    fi
done)
echo "tests took $(( $(date +%s) - start )) s"
summary=test-suite.log
passed=$(sed -n 's/^# PASS: *//p' "$summary" | head -1)
failed=$(( $(sed -n 's/^# FAIL: *//p' "$summary" | head -1) + $(sed -n 's/^# ERROR: *//p' "$summary" | head -1) ))

# add_variant LOG STATUS: a second build's test counts (LOG, its
# test-suite.log) into passed and failed; a script that failed while its log
# shows no failure (a sanitizer report in a test that passed, or no log at
# all) counts as one failure.
add_variant() {
    local failed_before=$failed
    passed=$(( ${passed:-0} + $(sed -n 's/^# PASS: *//p' "$1" 2>/dev/null | head -1) + 0 ))
    failed=$(( failed + $(sed -n 's/^# FAIL: *//p' "$1" 2>/dev/null | head -1) + $(sed -n 's/^# ERROR: *//p' "$1" 2>/dev/null | head -1) + 0 ))
    [ "$2" -eq 0 ] || { rc=1; [ "$failed" -gt "$failed_before" ] || failed=$((failed + 1)); }
}

# The same sources again with ASan + UBSan (unit tests, fuzz corpora, MPI
# tests), then with TSan (the nonblocking suite and some blocking layouts).
if [ "${DDL_SANITIZER_SUITE:-1}" = 1 ]; then
    scripts/sanitize.sh address
    add_variant build-sanitize/test-suite.log $?
    scripts/sanitize.sh thread
    add_variant build-tsan/test-suite.log $?
fi
# The device path on emulated GPUs: build-emu/, configure --enable-cuda-emulation.
if [ "${DDL_CUDA_EMU_SUITE:-1}" = 1 ]; then
    scripts/test-cuda-emu.sh
    add_variant build-emu/test-suite.log $?
fi
# MPICH: build-mpich/, configure --with-mpi=mpich, a lean suite under Hydra.
if [ "${DDL_MPICH_SUITE:-1}" = 1 ]; then
    scripts/test-mpich.sh
    add_variant build-mpich/test-suite.log $?
fi
# The Debian packages: make deb, installed, and a cluster run from what they install.
if [ "${DDL_DEB_SUITE:-1}" = 1 ]; then
    if scripts/test-deb.sh; then
        passed=$(( ${passed:-0} + 1 ))
    else
        rc=1; failed=$(( failed + 1 ))
    fi
fi
[ -z "$failures" ] || echo "$failures"
# One closing line: test programs and scripts that passed and failed (both builds).
echo "tests: ${passed:-0} passed, ${failed:-0} failed"
exit $rc
