#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# make fuzz: build every harness with clang's libFuzzer (and ASan + UBSan) over
# the parsers' and the plan's own sources, then run each for FUZZ_SECONDS,
# starting from its seed corpus.  New inputs go to tests/fuzz/work/<target>;
# a crash leaves its input as tests/fuzz/work/crash-<target>-* and fails.
# Usage (make passes these): fuzz.sh SRCDIR BUILDDIR; FUZZ_TARGETS="tuning ..."
# runs a subset; FUZZ_SECONDS=600 is the ten-minute run.
set -euo pipefail
src=$1 build=$2
cc=${FUZZ_CC:-$(command -v clang || command -v clang-14 || true)}
if [ -z "$cc" ] || ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n){return 0;}' |
        "$cc" -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
    echo "make fuzz: needs clang with libFuzzer: apt-get install clang libclang-rt-14-dev (or set FUZZ_CC)" >&2
    exit 2
fi
out=$build/tests/fuzz/clang
mkdir -p "$out/obj" "$build/tests/fuzz/work"
flags="-g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -D_GNU_SOURCE \
  -I$build -I$src/include -I$build/include -I$src/runtime/core -I$src/runtime/engine -I$src/runtime/algo \
  -I$src/runtime/select -I$src/runtime/gpu -I$src/runtime/transport -I$src/runtime/powerai -I$src/spank -I$src/tests/fuzz \
  $MPI_CFLAGS $PMIX_CFLAGS $HWLOC_CFLAGS -DDDL_TUNING_DEFAULT=\"$DDL_TUNING_DEFAULT\" -DDDL_HELPER_PATH=\"/nonexistent\""
# The runtime without its CUDA files, and the plan: instrumented, so libFuzzer sees their branches.
sources=$(ls "$src"/runtime/{core,engine,algo,select,transport,powerai}/*.c "$src"/runtime/gpu/{gpu_none,ipc_cache}.c)
sources="$sources $src/spank/cpulist.c $src/spank/topo.c $src/spank/plan.c $src/spank/options.c $src/spank/port.c"
grep -q '^#define DDL_HAVE_CUDA' "$build/config.h" && sources="$sources $src/tests/fuzz/no_gpu_transports.c"
objs=()
for f in $sources; do
    o=$out/obj/$(basename "${f%.c}").o
    [ "$o" -nt "$f" ] || "$cc" $flags -c "$f" -o "$o"
    objs+=("$o")
done
# hwloc 2.9 leaks objects of XML documents it rejects: not the project's.
export LSAN_OPTIONS=suppressions=$src/etc/lsan.supp:print_suppressions=0
status=0
for t in ${FUZZ_TARGETS:-tuning grid cpulist plugstack powerai values plan}; do
    bin=$out/fuzz-$t
    "$cc" $flags -fsanitize=fuzzer "$src/tests/fuzz/fuzz_$t.c" "${objs[@]}" -o "$bin" \
        $MPI_LIBS $PMIX_LIBS $HWLOC_LIBS -lm -lrt -lpthread
    work=$build/tests/fuzz/work/$t
    mkdir -p "$work"
    echo "== fuzz-$t for ${FUZZ_SECONDS:-60} s"
    if ! "$bin" -max_total_time="${FUZZ_SECONDS:-60}" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
            -artifact_prefix="$build/tests/fuzz/work/crash-$t-" "$work" "$src/tests/fuzz/corpus/$t" \
            > "$build/tests/fuzz/work/$t.log" 2>&1; then
        echo "fuzz-$t FAILED: see $build/tests/fuzz/work/$t.log"; tail -30 "$build/tests/fuzz/work/$t.log"
        status=1
    else
        grep -E '^stat::number_of_executed_units|^Done' "$build/tests/fuzz/work/$t.log" | tr '\n' ' '; echo
    fi
done
exit $status
