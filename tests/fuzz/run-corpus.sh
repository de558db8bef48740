#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# make check's share of the fuzzing: every harness over its seed corpus (the
# inputs that found bugs, and the valid forms), built with the project's
# compiler; under --enable-sanitizers with ASan and UBSan.
set -u
fails=0
for t in tuning grid cpulist plugstack powerai values plan; do
    out=$("$top_builddir/tests/fuzz/fuzz-$t" "$top_srcdir/tests/fuzz/corpus/$t" 2>&1)
    rc=$?
    if [ $rc -eq 0 ]; then
        echo "PASS: fuzz-$t: ${out##*: }"
    else
        echo "FAIL: fuzz-$t exited $rc:"; echo "$out" | tail -20
        fails=$((fails + 1))
    fi
done
exit $((fails > 0))
