#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Build the project again with sanitizers (clang when installed, else gcc;
# any report aborts) and run tests there.  scripts/test.sh calls it after the
# main suite, once for each kind:
#   address (the default): build-sanitize/, ASan + UBSan, the unit tests, the
#     fuzz corpora and the MPI tests.  Leaks are checked with full stacks, so
#     that what Open MPI, PMIx and hwloc keep at exit (etc/lsan.supp) is told
#     apart from the project's own.
#   thread: build-tsan/, TSan, the nonblocking suite (the progress thread
#     against the application's thread: the engine, the heap) and some
#     layouts of the blocking one.  Open MPI and PMIx are not instrumented:
#     etc/tsan.supp says what is suppressed in them and why.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
kind=${1:-address}
start=$(date +%s)
case $kind in
address)
    dir=$top/build-sanitize
    flag=--enable-sanitizers
    units="tests/unit/test_parse tests/unit/test_layout tests/unit/test_reduce tests/unit/test_heap tests/unit/test_node tests/unit/test_sched \
tests/unit/test_plan tests/unit/test_fabric tests/unit/test_gpu tests/unit/test_model tests/unit/test_select tests/unit/test_findings \
tests/unit/test_signature"
    tests="$units tests/fuzz/run-corpus.sh tests/mpi/run-allreduce.sh tests/mpi/run-blocks.sh tests/mpi/run-iallreduce.sh tests/mpi/run-errors.sh \
tests/mpi/run-failure.sh tests/mpi/run-multiring.sh tests/mpi/run-trace.sh tests/mpi/run-agreement.sh"
    # Only these are built (with the tools the suites run, below): not the
    # plugin, the man pages or ddl-sim, which the sanitizers do not run.
    programs="$units tests/fuzz/fuzz-tuning tests/fuzz/fuzz-grid tests/fuzz/fuzz-cpulist tests/fuzz/fuzz-plugstack \
tests/fuzz/fuzz-powerai tests/fuzz/fuzz-values tests/fuzz/fuzz-plan tests/mpi/ddl-test-allreduce tests/mpi/ddl-test-blocks tests/mpi/ddl-test-iallreduce \
tests/mpi/ddl-test-errors tests/mpi/ddl-test-mismatch tests/mpi/ddl-test-failure tests/mpi/ddl-test-multiring \
tests/mpi/ddl-test-agreement tests/mpi/ddl-test-powerai"
    tools="ddl-bench ddl-trace-merge tests/mpi/libddl-mpi-fail.la"
    report='ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:'
    export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:fast_unwind_on_malloc=0
    export LSAN_OPTIONS=suppressions=$top/etc/lsan.supp:print_suppressions=0
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    ;;
thread)
    dir=$top/build-tsan
    flag=--enable-sanitizers=thread
    tests="tests/unit/test_heap tests/mpi/run-iallreduce.sh tests/mpi/run-allreduce.sh"
    programs="tests/unit/test_heap tests/mpi/ddl-test-iallreduce tests/mpi/ddl-test-allreduce" # only these are built
    report='WARNING: ThreadSanitizer'
    # ignore_noninstrumented_modules: the C library calls that Open MPI makes
    # (its mutexes, its copies) are not checked, as its own accesses are not.
    export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ignore_noninstrumented_modules=1 suppressions=$top/etc/tsan.supp"
    # Layouts of 4 ranks (TSan makes 8 take minutes on 2 cores): one node and
    # virtual nodes, both helper modes, with and without the progress thread.
    export DDL_TEST_LAYOUTS='^(1 2 2 serve +DDL_ALGO=lane|2 1 2 collective +DDL_ALGO=lane|1 2 2 collective +multiple|2 1 2 serve +multiple|2 1 2 serve +single)'
    ;;
*)
    echo "sanitize: unknown kind '$kind': address or thread"; exit 2 ;;
esac
. scripts/variant.sh
variant_tree "$dir" || exit 1
cd "$dir"
# clang where it is (the build must keep working with it), else gcc.
cc=gcc
command -v clang > /dev/null && cc=clang
if ! CC=$cc ./configure $flag --without-cuda > configure.out 2>&1 && [ $cc = clang ]; then
    echo "sanitize: clang cannot build with the sanitizers here; using gcc"; cc=gcc
    CC=gcc ./configure $flag --without-cuda > configure.out 2>&1
fi
# Each kind builds only what its suites run: the library, the helper, the
# tools its suites use and $programs.
make -j"$(nproc)" libddl.la ddl-helper ${tools:-} $programs > make.out 2>&1 ||
    { echo "sanitize: build with $cc failed"; tail -n 30 configure.out make.out; exit 1; }
echo "sanitize: built with $cc ($(grep -o 'sanitizers: .*' configure.out))"
export CK_TIMEOUT_MULTIPLIER=10 # check's per-test timeout, for the slower build
export DDL_TEST_QUICK=1        # fewer counts per case: the sanitizers look for paths, not values
make -j1 check-TESTS TESTS="$tests" check_PROGRAMS="$programs" > check.out 2>&1 # no build of everything first
rc=$?
for log in tests/unit/*.log tests/fuzz/*.log tests/mpi/*.log; do
    [ -f "$log" ] || continue
    if grep -q "^FAIL\\|$report" "$log"; then
        grep -q "$report" "$log" && rc=1 # even inside an expected failure
        echo "==== $kind sanitizer build: $log"; grep -B2 -A30 -m3 "^FAIL\\|$report" "$log" | head -80
    fi
done
grep -E '^(PASS|FAIL|ERROR|SKIP):' check.out | sed "s/^/sanitizers ($kind): /"
echo "$kind sanitizer suite took $(( $(date +%s) - start )) s"
exit $rc
