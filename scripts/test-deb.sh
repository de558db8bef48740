#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The Debian packages as a site installs them (as root, on Debian 12): make deb
# (lintian clean), apt install ./*.deb, then with only the installed files a
# test cluster runs srun --ddl-lanes=2 ddl-bench through the installed sample
# plugstack file, man and pkg-config work, and python3 imports ddl; the CUDA
# module (libddl0-cuda) is found by the installed libddl, the emulated device
# suite runs against the installed libddl, and without the module a device
# buffer is refused naming the package; then what
# an admin and a user hit in daily use (a refused request, DDL_LANES without
# GPUs, the filter's output, --gpus-per-task, the filter module removed, a
# hung step daemon); the packages are purged at the end.  After scripts/setup.sh, which configures the
# tree and installs what make deb needs (debhelper, dh-python, lintian).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
packages=(libddl0 libddl0-cuda libddl-dev ddl-lanes slurm-spank-ddl python3-ddl libddl0-dbgsym libddl0-cuda-dbgsym
          ddl-lanes-dbgsym slurm-spank-ddl-dbgsym)
fails=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; fails=1; }
log=$(mktemp)
work=$(mktemp -d)
export DDL_CLUSTER_DIR=/tmp/ddl-deb-cluster-$$ DDL_CLUSTER_PORT=29817
tuning_written= tuning_kept=
# dpkg, not apt-get: it skips the packages that are not installed, where
# apt-get gives up on the whole list.
purge_packages() { dpkg --purge "${packages[@]}" > /dev/null 2>&1 || true; }
cleanup() {
    cd "$top" # the tests below run elsewhere
    if [ -n "$tuning_kept" ]; then mv -f "$tuning_kept" /etc/ddl/tuning.conf # the site's, back
    elif [ -n "$tuning_written" ]; then rm -f /etc/ddl/tuning.conf; rmdir /etc/ddl 2> /dev/null || true; fi
    DDL_CLUSTER_PLUGSTACK=/usr/share/ddl-lanes/ddl.conf tests/slurm/cluster.sh stop > /dev/null 2>&1 || true
    purge_packages
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
# A build of the same version installed before (a run that stopped short of
# its clean-up) would be kept by apt as "already the newest": purge it first.
purge_packages
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
missing=
for f in $(sed -nE 's/^[A-Za-z_ ]*[ *(](ddl_[a-z0-9_]+)\)? ?\(.*/\1/p' /usr/include/ddl.h /usr/include/ddl/status.h | sort -u); do
    man -w "$f" > /dev/null 2>&1 || missing="$missing $f"
done
[ -z "$missing" ] && pass "man finds every function of the installed headers" || fail "no man page for:$missing"
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

# The CUDA module: the installed libddl finds the installed module (no GPU
# here: it loads and sees no device).  Its kernels are GPU code, so the
# device path runs here with the emulated module of build-emu/ (the same
# sources, scripts/test-cuda-emu.sh) loaded by the installed libddl, with
# the installed ddl-info and build-emu's test programs: 1 node x 2 GPUs x 2
# lanes, and 2 nodes x 1 GPU x 2 lanes.  Then the module is removed: a device
# buffer is refused naming the package, and the host runs below go on
# without it.
# The directory the loader finds the installed libddl in (/usr/lib/<triplet>,
# or /lib/<triplet> through merged /usr): the module is looked for beside it.
libdir=$(dirname "$(ldd "$(command -v ddl-info)" | sed -n 's/^\s*libddl.so.0 => \([^ ]*\).*/\1/p')")
emu=$top/build-emu
mpirun=(mpirun --allow-run-as-root --oversubscribe --bind-to none -n 4)
if [ -e "$libdir/ddl-lanes/libddl-cuda.so" ]; then
    info=$(ddl-info | sed -n 's/^  CUDA:  //p')
    grep -q "(module $libdir/ddl-lanes/libddl-cuda.so, CUDA runtime [0-9]* (static))$" <<< "$info" &&
        pass "libddl0-cuda: the installed libddl loads the installed module ($info)" ||
        fail "libddl0-cuda installed, but ddl-info says: $info"
    if [ -x "$emu/tests/gpu/.libs/ddl-test-gpu-allreduce" ] && [ -e "$emu/.libs/libddl-cuda.so" ]; then
        prog=$emu/tests/gpu/.libs/ddl-test-gpu-allreduce # the program itself, not libtool's wrapper: the installed libddl
        export DDL_EMU_GPUS=2 DDL_EMU_DELAY=100 DDL_TEST_QUICK=1 DDL_TIMEOUT=60
        info=$(DDL_CUDA_MODULE=$emu/.libs/libddl-cuda.so ddl-info | sed -n 's/^  library: //p; s/^  CUDA:  //p' | tr '\n' ' ')
        uses=$(ldd "$prog" | sed -n 's/^\s*libddl.so.0 => \([^ ]*\).*/\1/p')
        for layout in "DDL_GPUS_PER_NODE=2 1 node x 2 GPUs x 2 lanes" "DDL_NODE_SIZE=2 2 nodes x 1 GPU x 2 lanes"; do
            read -r var name <<< "$layout"
            out=$(env DDL_CUDA_MODULE="$emu/.libs/libddl-cuda.so" DDL_LANES=2 "$var" timeout 300 "${mpirun[@]}" "$prog" \
                  < /dev/null 2>&1) && rc=0 || rc=$?
            if [ $rc -eq 0 ] && grep -q "PASS: [0-9]* cases, 0 failures" <<< "$out" && [ "$uses" = "$libdir/libddl.so.0" ] &&
                    grep -q "^$libdir/libddl.so.0 .* 2 devices visible" <<< "$info"; then
                pass "the emulated device suite against the installed libddl, $name ($(tail -1 <<< "$out" | cut -c1-40))"
            else
                fail "the emulated device suite against the installed libddl, $name: exit $rc, libddl $uses, ddl-info: $info"
                tail -8 <<< "$out"
            fi
        done
    else
        echo "# not run: the emulated device suite against the installed libddl (no build-emu/: scripts/test-cuda-emu.sh builds it)"
    fi
    DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq libddl0-cuda > "$log" 2>&1 || true
    info=$(ddl-info | sed -n 's/^  CUDA:  //p')
    refused=skipped out=
    if [ -x "$emu/.libs/ddl-gpu-bench" ]; then
        out=$(env DDL_LANES=2 DDL_GPUS_PER_NODE=2 DDL_TIMEOUT=20 timeout 120 "${mpirun[@]}" "$emu/.libs/ddl-gpu-bench" \
              -n 1 -b 1K -e 1K < /dev/null 2>&1) && rc=0 || rc=$?
        refused=no
        [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "this libddl has no CUDA module (no libddl-cuda.so in $libdir/ddl-lanes); install the CUDA module (Debian: apt install libddl0-cuda" <<< "$out" && refused=yes
    fi
    if [ "$info" = "no CUDA module (no libddl-cuda.so in $libdir/ddl-lanes): host memory only" ] && [ $refused != no ]; then
        pass "libddl0-cuda removed: ddl-info says so; a device buffer is refused naming the package ($refused)"
    else
        fail "libddl0-cuda removed: ddl-info: $info; a device buffer refused: $refused"; grep -v "^\[" <<< "$out" | tail -5
    fi
    unset DDL_EMU_GPUS DDL_EMU_DELAY DDL_TEST_QUICK DDL_TIMEOUT
else
    echo "# not run: the CUDA module's checks (make deb built no libddl0-cuda: no CUDA toolkit on this build host)"
fi

# docs/admin.md's "Enable", in order, as a new admin follows it after the
# install above: on a 2-node test cluster that starts without DDL lanes (an
# empty plugstack.conf.d, no cli_filter), every line of its sh blocks as
# written, with /etc/slurm/ the test cluster's configuration directory and
# `systemctl restart slurmd` the test cluster's restart.  The tuning file goes
# to the real /etc/ddl/tuning.conf, where the library looks (one already
# there is kept aside and put back).  The last line is the guide's check, a
# 2-node ddl-bench; then a job is seen to read the installed tuning file.
DDL_CLUSTER_PLUGSTACK=none "$top/tests/slurm/cluster.sh" start 2 > "$log" 2>&1 ||
    { fail "a test cluster without DDL lanes did not start"; tail -n 20 "$log" "$DDL_CLUSTER_DIR"/log/*; exit 1; }
export SLURM_CONF=$DDL_CLUSTER_DIR/etc/slurm.conf OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_rmaps_base_oversubscribe=1
[ ! -e /etc/ddl/tuning.conf ] || { mv /etc/ddl/tuning.conf "$work/site-tuning.conf"; tuning_kept=$work/site-tuning.conf; }
tuning_written=1
guide=$(awk '/^## Enable/ { e = 1; next } /^## / { e = 0 } e && /^ *```sh/ { f = 1; next } /^ *```/ { f = 0; next } e && f' \
        "$top/docs/admin.md" | sed 's/^ *//; s/ *# .*//; /^#/d; /^$/d')
steps=0 out= last=
while read -r line; do
    last=$line
    cmd=$(sed "s|/etc/slurm/|$DDL_CLUSTER_DIR/etc/|g; s|^systemctl restart slurmd\$|$top/tests/slurm/cluster.sh restart|" <<< "$line")
    out=$(cd "$work" && timeout 300 bash -c "$cmd" 2>&1 < /dev/null) && rc=0 || rc=$?
    steps=$((steps + 1))
    [ $rc -eq 0 ] || { fail "docs/admin.md, Enable, step $steps: $line (exit $rc)"; tail -8 <<< "$out"; break; }
done <<< "$guide"
if [ $rc -eq 0 ] && [[ $last == "srun -N2 --gpus-per-node=2 --ddl-lanes=2 ddl-bench"* ]] &&
        grep -q "Out of bounds values : 0 OK" <<< "$out" && grep -q "2 nodes x 2 GPUs x 2 lanes" <<< "$out"; then
    pass "docs/admin.md's Enable in order on a cluster without DDL lanes: $steps commands, ending in $last (results checked)"
elif [ $rc -eq 0 ]; then
    fail "docs/admin.md's Enable: $steps commands ran, but the last is not a checked 2-node ddl-bench: $last"; tail -5 <<< "$out"
fi
out=$(DDL_DEBUG=INFO timeout 120 srun -N2 --gpus-per-node=2 --ddl-lanes=2 ddl-bench -b 1M -e 1M -n 1 -w 0 2>&1) && rc=0 || rc=$?
[ $rc -eq 0 ] && grep -q "measured: tuning file /etc/ddl/tuning.conf" <<< "$out" &&
    pass "a job reads the tuning file the guide installed (/etc/ddl/tuning.conf)" ||
    { fail "the installed tuning file: exit $rc, $(grep -c 'tuning file' <<< "$out") lines naming one"; tail -5 <<< "$out"; }
# Daily use on the sample configuration as the guide enabled it (its line is `optional`).
# run LABEL COMMAND...: out and rc of the command, without set -e ending the script.
run() { out=$(timeout 60 "$@" 2>&1) && rc=0 || rc=$?; }
run srun -N1 --gpus-per-node=2 --ddl-lanes=2 -n3 echo ran
if [ $rc -ne 0 ] && grep -q "ddl: .*needs 4 tasks here, the step has 3" <<< "$out" && ! grep -q "^ran" <<< "$out"; then
    pass "a refused request fails the step under the sample's optional line (exit $rc, no task ran)"
else
    fail "a refused request under the sample configuration: exit $rc"; tail -5 <<< "$out"
fi
run env DDL_LANES=1 srun -N1 hostname
[ $rc -eq 0 ] && [ "$out" = n1 ] && pass "DDL_LANES=1 in the environment of a job without GPUs: it runs as any job" ||
    { fail "DDL_LANES=1 srun hostname: exit $rc"; tail -5 <<< "$out"; }
run srun -N1 --gpus-per-node=1 --ddl-lanes=2 true
quiet=$out quiet_rc=$rc
run srun -v -N1 --gpus-per-node=1 --ddl-lanes=2 true
if [ $quiet_rc -eq 0 ] && [ -z "$quiet" ] && grep -q "ddl: 2 lanes per GPU" <<< "$out"; then
    pass "srun --ddl-lanes=2 prints nothing; srun -v says what the cli_filter did"
else
    fail "the cli_filter's line: without -v (exit $quiet_rc) '$quiet'; with -v: $(grep -c 'ddl:' <<< "$out") lines"
fi
run srun -N1 --gpus-per-task=1 -n2 --ddl-lanes=2 true
if [ $rc -ne 0 ] && grep -q -- "--gpus-per-task gives every task a GPU of its own" <<< "$out" &&
        ! grep -q -- "--ntasks-per-gpu" <<< "$out"; then
    pass "--gpus-per-task with lanes: told to ask with --gpus-per-node, not to add --ntasks-per-gpu"
else
    fail "--gpus-per-task=1 -n2 --ddl-lanes=2: exit $rc"; tail -5 <<< "$out"
fi
# The package gone from a login node: the site's cli_filter.lua stays, ddl_lanes.lua does not.
mv "$DDL_CLUSTER_DIR/etc/ddl_lanes.lua" "$DDL_CLUSTER_DIR/etc/ddl_lanes.lua.gone"
run srun -N1 hostname
plain=$out plain_rc=$rc
run srun -N1 --gpus-per-node=1 --ddl-lanes=2 true
mv "$DDL_CLUSTER_DIR/etc/ddl_lanes.lua.gone" "$DDL_CLUSTER_DIR/etc/ddl_lanes.lua"
if [ $plain_rc -eq 0 ] && [ "$plain" = n1 ] && [ $rc -ne 0 ] && grep -q "needs ddl_lanes.lua" <<< "$out"; then
    pass "without ddl_lanes.lua: srun hostname runs, --ddl-lanes says what is missing"
else
    fail "without ddl_lanes.lua: srun hostname exit $plain_rc ($plain); --ddl-lanes exit $rc: $(tail -2 <<< "$out")"
fi
# A step daemon that hangs (SIGSTOP here) does not outlive the test cluster's stop.
(timeout 120 srun -N1 sleep 60 > /dev/null 2>&1 &)
stepd=
for _ in $(seq 50); do
    for p in $(pgrep -x slurmstepd || true); do
        ls -l "/proc/$p/fd" 2>/dev/null | grep -q -- "-> $DDL_CLUSTER_DIR/" && stepd=$p
    done
    [ -n "$stepd" ] && break
    sleep 0.2
done
if [ -z "$stepd" ]; then
    fail "no step daemon of the sleeping step found"
else
    kill -STOP "$stepd"
    DDL_CLUSTER_PLUGSTACK=/usr/share/ddl-lanes/ddl.conf "$top/tests/slurm/cluster.sh" stop > /dev/null 2>&1 || true
    if kill -0 "$stepd" 2> /dev/null; then
        fail "a stopped slurmstepd ($stepd) outlived cluster.sh stop"; kill -9 "$stepd" 2> /dev/null || true
    else
        pass "cluster.sh stop ends a hung slurmstepd of its cluster"
    fi
fi
[ $fails -eq 0 ] && echo "test-deb: all passed" || echo "test-deb: FAILED"
exit $fails
