#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The ddl package as users install it: by make install (it records the libddl
# installed with it and loads that one), and by pip install ./python into a
# venv, whose ddl then runs the binding test under mpirun.  A DDL_LIBRARY that
# does not load is an error naming it, never a silent fallback.
. "$(dirname "$0")/../mpi/lib.sh"
PY=/usr/bin/python3
if ! $PY -c 'import torch, numpy, venv, ensurepip' 2> /dev/null; then
    echo "SKIP: $PY lacks torch, numpy or venv (Debian: python3-torch python3-numpy python3-venv)"
    exit 77
fi
unset DDL_LIBRARY PYTHONPATH
export OMP_NUM_THREADS=1
version=$(sed -n 's/^#define DDL_VERSION_STRING "\(.*\)"/\1/p' "$top_builddir/include/ddl/version.h")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
before=$(shm_segments)

# make install into a prefix of its own.
prefix=$tmp/prefix
if make -C "$top_builddir" install prefix="$prefix" > "$tmp/install.log" 2>&1; then
    pkg=$(dirname "$(find "$prefix" -path '*-packages/ddl/__init__.py')")
    recorded=$(sed -n 's/^LIBRARY = "\(.*\)"/\1/p' "$pkg/_installed.py" 2> /dev/null)
    [ "$recorded" = "$prefix/lib/libddl.so.0" ] && pass "make install records the installed libddl beside the package" ||
        fail "make install recorded '$recorded' in $pkg/_installed.py"
    loaded=$(cd "$tmp" && PYTHONPATH=$(dirname "$pkg") $PY -c 'import ddl; print(ddl.library_version(), ddl.__version__, ddl._load()._name)' 2>&1)
    [ "$loaded" = "$version $version $prefix/lib/libddl.so.0" ] &&
        pass "the installed package loads the installed library, version $version" ||
        fail "the installed package: '$loaded' (wanted '$version $version $prefix/lib/libddl.so.0')"
else
    fail "make install prefix=..."; tail -20 "$tmp/install.log"
fi

# A wrong DDL_LIBRARY is an error that names it.
out=$(cd "$tmp" && DDL_LIBRARY=$tmp/no-such-libddl.so PYTHONPATH=$top_srcdir/python $PY -c 'import ddl; ddl.library_version()' 2>&1)
[ $? -ne 0 ] && grep -q "DDL_LIBRARY=$tmp/no-such-libddl.so does not load" <<< "$out" &&
    pass "a DDL_LIBRARY that does not load is an error naming it" ||
    fail "a wrong DDL_LIBRARY: $(tail -1 <<< "$out")"

# pip install ./python in a venv (no network: the venv's own setuptools), from
# a copy (pip builds in the source directory).
cp -r "$top_srcdir/python" "$tmp/src"
chmod -R u+w "$tmp/src"
if $PY -m venv --system-site-packages "$tmp/venv" > "$tmp/venv.log" 2>&1 &&
    "$tmp/venv/bin/pip" install --no-build-isolation --no-index "$tmp/src" >> "$tmp/venv.log" 2>&1; then
    pip_version=$("$tmp/venv/bin/pip" show ddl-lanes 2> /dev/null | sed -n 's/^Version: //p')
    [ "$pip_version" = "$version" ] && pass "pip install ./python in a venv: ddl-lanes $pip_version" ||
        fail "pip installed ddl-lanes version '$pip_version', not $version"
    where=$(cd "$tmp" && "$tmp/venv/bin/python" -c 'import ddl; print(ddl.__file__)')
    case $where in
    "$tmp/venv/"*) pass "the venv imports its own ddl" ;;
    *) fail "the venv imports ddl from $where" ;;
    esac
    if (cd "$tmp" && DDL_TEST_INSTALLED=1 DDL_LIBRARY=$top_builddir/.libs/libddl.so DDL_LANES=2 DDL_NODE_SIZE=2 \
        timeout 300 $MPIRUN -n 4 "$tmp/venv/bin/python" "$top_srcdir/tests/python/test_binding.py" < /dev/null); then
        pass "the venv's ddl passes the binding test (4 ranks, 2 lanes, 2 nodes)"
    else
        fail "the venv's ddl fails the binding test"
    fi
else
    fail "pip install ./python in a venv"; tail -20 "$tmp/venv.log"
fi
[ "$(shm_segments)" = "$before" ] && pass "/dev/shm clean" || fail "segments left in /dev/shm: $(shm_segments)"
finish
