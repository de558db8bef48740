#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Build the project again in build-sanitize/ with --enable-sanitizers (ASan +
# UBSan, any report aborts; clang when installed, else gcc) and run the unit tests, the fuzz corpora and the
# MPI tests there.  scripts/test.sh calls it after the main suite.
# Leaks are checked with full stacks, so that what Open MPI, PMIx and hwloc
# keep at exit (etc/lsan.supp) is told apart from the project's own.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
dir=$top/build-sanitize
start=$(date +%s)
# A copy of the tracked and new source files: the main tree is configured in place.
rm -rf "$dir" && mkdir -p "$dir"
git ls-files -co --exclude-standard | grep -v '^build-sanitize/' | tar -T - -cf - | tar -xf - -C "$dir"
cd "$dir"
# clang where it is (the build must keep working with it), else gcc.
cc=gcc
command -v clang > /dev/null && cc=clang
autoreconf -fi > /dev/null 2>&1 || { echo "sanitize: autoreconf failed"; exit 1; }
if ! CC=$cc ./configure --enable-sanitizers --without-cuda > configure.out 2>&1 && [ $cc = clang ]; then
    echo "sanitize: clang cannot build with the sanitizers here; using gcc"; cc=gcc
    CC=gcc ./configure --enable-sanitizers --without-cuda > configure.out 2>&1
fi
make -j"$(nproc)" > make.out 2>&1 || { echo "sanitize: build with $cc failed"; tail -30 configure.out make.out; exit 1; }
echo "sanitize: built with $cc ($(grep -o 'sanitizers: .*' configure.out))"
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:fast_unwind_on_malloc=0
export LSAN_OPTIONS=suppressions=$top/etc/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export CK_TIMEOUT_MULTIPLIER=10 # check's per-test timeout, for the slower build
export DDL_TEST_QUICK=1        # fewer counts per case: the sanitizers look for paths, not values
tests="tests/unit/test_parse tests/unit/test_layout tests/unit/test_reduce tests/unit/test_heap tests/unit/test_sched \
tests/unit/test_plan tests/unit/test_gpu tests/unit/test_model tests/unit/test_select tests/unit/test_findings tests/fuzz/run-corpus.sh \
tests/mpi/run-allreduce.sh tests/mpi/run-iallreduce.sh tests/mpi/run-errors.sh tests/mpi/run-failure.sh tests/mpi/run-multiring.sh \
tests/mpi/run-trace.sh"
make -j1 check TESTS="$tests" > check.out 2>&1
rc=$?
for log in tests/unit/*.log tests/fuzz/*.log tests/mpi/*.log; do
    [ -f "$log" ] || continue
    if grep -q '^FAIL\|ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:' "$log"; then
        grep -q 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:' "$log" && rc=1 # even inside an expected failure
        echo "==== sanitizer build: $log"; grep -B2 -A30 -m3 '^FAIL\|ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:' "$log" | head -80
    fi
done
grep -E '^(PASS|FAIL|ERROR|SKIP):' check.out | sed 's/^/sanitizers: /'
echo "sanitizer suite took $(( $(date +%s) - start )) s"
exit $rc
