#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The Debian packages as a site installs them (as root, on Debian 12): make deb
# (lintian clean), apt install ./*.deb, then with only the installed files a
# test cluster runs srun --ddl-lanes=2 ddl-bench through the installed sample
# plugstack file, man and pkg-config work, and python3 imports ddl; the
# packages are purged at the end.  After scripts/setup.sh, which configures the
# tree and installs what make deb needs (debhelper, dh-python, lintian).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
packages=(libddl0 libddl-dev ddl-lanes slurm-spank-ddl python3-ddl libddl0-dbgsym ddl-lanes-dbgsym slurm-spank-ddl-dbgsym)
fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=1; }
log=$(mktemp)
work=$(mktemp -d)
export DDL_CLUSTER_DIR=/tmp/ddl-deb-cluster-$$ DDL_CLUSTER_PORT=29817
cleanup() {
    cd "$top" # the tests below run elsewhere
    DDL_CLUSTER_PLUGSTACK=/usr/share/ddl-lanes/ddl.conf tests/slurm/cluster.sh stop > /dev/null 2>&1 || true
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq "${packages[@]}" > /dev/null 2>&1 || true
    rm -f ./*.deb
    rm -rf "$work" "$log"
}
trap cleanup EXIT

rm -f ./*.deb
if make deb > "$log" 2>&1; then
    pass "make deb: $(ls ./*.deb | xargs -n1 basename | tr '\n' ' ')(lintian clean)"
else
    fail "make deb"; grep -E "^[EW]: |error" "$log" | tail -20; exit 1
fi
if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ./*.deb > "$log" 2>&1; then
    pass "apt install ./*.deb"
else
    fail "apt install ./*.deb"; tail -20 "$log"; exit 1
fi

# Only installed files from here on: /usr/bin, the sample plugstack file, the
# plugin in Debian's Slurm plugin directory.
cd "$work"
man -w ddl-bench > /dev/null 2>&1 && man -w spank_ddl > /dev/null 2>&1 && man -w ddl_allreduce > /dev/null 2>&1 &&
    pass "man ddl-bench, spank_ddl and ddl_allreduce" || fail "man pages not found after install"
cat > hello.c <<'C'
#include <ddl.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    printf("%s\n", ddl_version());
    return MPI_Finalize();
}
C
if gcc hello.c $(pkg-config --cflags --libs ddl) -o hello 2> "$log" &&
    [ "$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ./hello)" = "$(ddl-info --version | awk '{print $NF}')" ]; then
    pass "gcc hello.c \$(pkg-config --cflags --libs ddl) builds and runs"
else
    fail "pkg-config build"; cat "$log"
fi
v=$(/usr/bin/python3 -c 'import ddl; print(ddl.__version__, ddl.library_version())' 2>&1)
[ "$(awk '{print NF, $1 == $2}' <<< "$v")" = "2 1" ] &&
    pass "python3 imports the packaged ddl, which loads the packaged libddl ($v)" || fail "python3 -c 'import ddl': $v"

DDL_CLUSTER_PLUGSTACK=/usr/share/ddl-lanes/ddl.conf "$top/tests/slurm/cluster.sh" start 1 > "$log" 2>&1 ||
    { fail "cluster with the installed plugin did not start"; tail -20 "$log" "$DDL_CLUSTER_DIR"/log/*; exit 1; }
export SLURM_CONF=$DDL_CLUSTER_DIR/etc/slurm.conf OMPI_MCA_mpi_yield_when_idle=1
if out=$(timeout 300 srun -N1 --gpus-per-node=2 --ddl-lanes=2 ddl-bench -b 8 -e 1M -f 16 -n 5 -w 1 2>&1) &&
    grep -q "Out of bounds values : 0 OK" <<< "$out" && grep -q "1 nodes x 2 GPUs x 2 lanes" <<< "$out"; then
    pass "srun --ddl-lanes=2 ddl-bench with the installed packages (1 node x 2 GPUs x 2 lanes, results checked)"
else
    fail "srun --ddl-lanes=2 ddl-bench with the installed packages"; tail -20 <<< "$out"
fi
[ $fails -eq 0 ] && echo "test-deb: all passed" || echo "test-deb: FAILED"
exit $fails
