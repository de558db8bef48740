#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The RPM spec parses (rpmspec, from Debian's rpm package) with this release's
# version, and its packages are the ones debian/control builds.
set -u
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
command -v rpmspec > /dev/null || { echo "SKIP: no rpmspec (Debian: apt-get install rpm)"; exit 77; }
version=$(sed -n 's/^#define DDL_VERSION_STRING "\(.*\)"/\1/p' "$top_builddir/include/ddl/version.h")
make -s -C "$top_builddir" ddl-lanes.spec || { echo "FAIL: make ddl-lanes.spec"; exit 1; }
fails=0
out=$(rpmspec -q --qf '%{NAME} %{VERSION}\n' "$top_builddir/ddl-lanes.spec" 2>&1) || { echo "FAIL: rpmspec: $out"; exit 1; }
for name in ddl-lanes ddl-lanes-cuda ddl-lanes-devel slurm-spank-ddl python3-ddl; do
    grep -qx "$name $version" <<< "$out" || { echo "FAIL: the spec has no package '$name $version': $out"; fails=1; }
done
for deb in libddl0 libddl0-cuda libddl-dev ddl-lanes slurm-spank-ddl python3-ddl; do
    grep -q "^Package: $deb$" "$top_srcdir/debian/control" || { echo "FAIL: debian/control has no $deb"; fails=1; }
done
[ $fails -eq 0 ] && echo "PASS: ddl-lanes.spec parses with version $version and names the packages debian/control builds"
exit $fails
