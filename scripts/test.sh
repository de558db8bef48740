#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Set up the machine and run every test: check unit tests, then the MPI
# integration tests (real Open MPI ranks, emulated nodes), through make check;
# then the sanitizer builds, the device path on emulated GPUs, and the Debian
# packages.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || exit 1
start=$(date +%s)
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

# The same sources again with ASan + UBSan (unit tests, fuzz corpora, MPI
# tests), then with TSan (the nonblocking suite and some blocking layouts).
if [ "${DDL_SANITIZER_SUITE:-1}" = 1 ]; then
    for kind in address thread; do
        scripts/sanitize.sh $kind
        src=$?
        failed_before=$failed
        san=build-sanitize/test-suite.log
        [ $kind = thread ] && san=build-tsan/test-suite.log
        passed=$(( ${passed:-0} + $(sed -n 's/^# PASS: *//p' "$san" 2>/dev/null | head -1) + 0 ))
        failed=$(( failed + $(sed -n 's/^# FAIL: *//p' "$san" 2>/dev/null | head -1) + $(sed -n 's/^# ERROR: *//p' "$san" 2>/dev/null | head -1) + 0 ))
        # A report in a test that passed (or no log at all) is a failure too.
        [ $src -eq 0 ] || { rc=1; [ "$failed" -gt "$failed_before" ] || failed=$((failed + 1)); }
    done
fi
# The device path on emulated GPUs: build-emu/, configure --enable-cuda-emulation.
if [ "${DDL_CUDA_EMU_SUITE:-1}" = 1 ]; then
    scripts/test-cuda-emu.sh
    erc=$?
    failed_before=$failed
    emu=build-emu/test-suite.log
    passed=$(( ${passed:-0} + $(sed -n 's/^# PASS: *//p' "$emu" 2>/dev/null | head -1) + 0 ))
    failed=$(( failed + $(sed -n 's/^# FAIL: *//p' "$emu" 2>/dev/null | head -1) + $(sed -n 's/^# ERROR: *//p' "$emu" 2>/dev/null | head -1) + 0 ))
    [ $erc -eq 0 ] || { rc=1; [ "$failed" -gt "$failed_before" ] || failed=$((failed + 1)); }
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
