#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Programs written for PowerAI DDL 1.x build unchanged against the installed
# tree (make install DESTDIR=...) with mpicc/mpicxx -I<prefix>/include
# -L<prefix>/lib -lddl, and give correct results under mpirun -n 2 and -n 4:
# C, C++ with the native API beside it, the MPI form (ddl_mpi.hpp), both APIs in
# one C file; Horovod's DDL calls build with g++.  ddlrun --dry-run prints the
# launch line for 2 hosts x 4 GPUs x 2 lanes.
. "$(dirname "$0")/../mpi/lib.sh"
command -v mpicxx > /dev/null && command -v g++ > /dev/null || { echo "SKIP: needs mpicxx and g++"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
before=$(shm_segments)
make -C "$top_builddir" install DESTDIR="$tmp/root" > "$tmp/install.log" 2>&1 ||
    { fail "make install DESTDIR"; tail -20 "$tmp/install.log"; finish; exit 1; }
prefix=$(sed -n 's/^prefix *= *//p' "$top_builddir/Makefile")
libdir=$(sed -n 's/^libdir *= *//p' "$top_builddir/Makefile" | sed "s|\${exec_prefix}|$prefix|")
inc=$tmp/root$prefix/include lib=$tmp/root$libdir bin=$tmp/root$prefix/bin
src=$top_srcdir/tests/powerai
# build NAME COMPILER SOURCE [FLAGS]: one program against the installed tree,
# with no warning from the installed headers (Open MPI's own C++ bindings warn
# under -Wextra, so warnings elsewhere are not errors).
build() {
    local name=$1 cc=$2 file=$3
    shift 3
    if $cc "$src/$file" -I"$inc" -L"$lib" -lddl -Wall -Wextra "$@" -o "$tmp/$name" > "$tmp/$name.log" 2>&1 &&
       ! grep -qE "^$inc/ddl[^:]*:[0-9]+:[0-9]+: (warning|error)" "$tmp/$name.log"; then
        pass "builds against the installed tree: $cc $file -I<prefix>/include -L<prefix>/lib -lddl $*"
    else
        fail "$cc $file"; grep -E -m5 -A3 "^$inc/ddl|error" "$tmp/$name.log" | head -20
    fi
}
build c mpicc powerai_c.c -std=c11 -lm
build cpp mpicxx powerai_cpp.cpp
build mpi mpicxx powerai_mpi.cpp
build both mpicc both_c.c -std=c11
build horovod g++ horovod_ddl.cc -std=c++14
# A plain C program builds with nothing but pkg-config's flags (MPI included).
cat > "$tmp/plain.c" <<'C'
#include <ddl.h>
int main(int argc, char **argv) { MPI_Init(&argc, &argv); int ok = ddl_version()[0] != 0; MPI_Finalize(); return !ok; }
C
# The installed ddl.pc with its prefix moved under DESTDIR (MPI's own .pc stays).
mkdir -p "$tmp/pc" && sed "s|^prefix=.*|prefix=$tmp/root$prefix|" "$lib/pkgconfig/ddl.pc" > "$tmp/pc/ddl.pc"
flags=$(PKG_CONFIG_PATH=$tmp/pc pkg-config --cflags --libs ddl 2>&1)
if gcc "$tmp/plain.c" $flags -o "$tmp/plain" > "$tmp/plain.log" 2>&1 && LD_LIBRARY_PATH=$lib "$tmp/plain"; then
    pass "gcc x.c \$(pkg-config --cflags --libs ddl) builds and runs"
else
    fail "pkg-config: gcc x.c $flags"; head -5 "$tmp/plain.log"
fi
[ -z "$(find "$tmp/root" -name '*.la')" ] && pass "no libtool archive installed" || fail "installed: $(find "$tmp/root" -name '*.la')"
run() { # NAME RANKS TEXT [ENV...]: mpirun the program, expect "TEXT: RANKS ranks, 0 failures"
    local name=$1 np=$2 text=$3 out
    shift 3
    [ -x "$tmp/$name" ] || return
    out=$(env LD_LIBRARY_PATH="$lib" DDL_TIMEOUT=60 "$@" timeout 120 $MPIRUN -np "$np" "$tmp/$name" 2>&1)
    if grep -q "^$text: $np ranks, 0 failures" <<< "$out"; then
        pass "$text, mpirun -n $np${*:+ ($*)}"
    else
        fail "$text, mpirun -n $np${*:+ ($*)}"; echo "$out" | tail -10
    fi
}
for np in 2 4; do
    run c "$np" "PowerAI C" DDL_OPTIONS="-mode r:$np"             # a one-dimensional grid: one node
    run cpp "$np" "PowerAI C++" DDL_OPTIONS=""
    run mpi "$np" "PowerAI MPI" DDL_OPTIONS=""
    run both "$np" "Both APIs in C"
done
run c 4 "PowerAI C" DDL_OPTIONS="-mode r:2x2" DDL_NODE_SIZE=2  # 2 virtual nodes x 2 GPUs
run mpi 4 "PowerAI MPI" DDL_OPTIONS="-mode r:2x2" DDL_NODE_SIZE=2
# -dbg_level 1 is DDL_DEBUG=INFO, even after the program's first ddl_init
# failed (its line was logged before the option was read); without it, none.
if [ -x "$tmp/c" ]; then
    info=()
    for opts in "-mode r:2 -dbg_level 1" "-mode r:2"; do
        info+=("$(env LD_LIBRARY_PATH="$lib" DDL_OPTIONS="$opts" DDL_TIMEOUT=60 timeout 120 $MPIRUN -np 2 "$tmp/c" 2>&1 |
                  grep -c " DDL INFO ")")
    done
    [ "${info[0]}" -gt 0 ] && [ "${info[1]}" -eq 0 ] &&
        pass "DDL_OPTIONS=-dbg_level 1 logs at INFO (${info[0]} lines; none without it)" ||
        fail "-dbg_level 1: ${info[0]} INFO lines, ${info[1]} without it"
fi
# ddlrun: the launch lines of 2 hosts x 4 GPUs x 2 lanes, then a real run here.
out=$(env -u SLURM_JOB_ID -u DDL_OPTIONS "$bin/ddlrun" --dry-run -H host1,host2 --gpus-per-node 4 --lanes 2 ./train --epochs 3 2>&1)
x="-x DDL_LANES -x DDL_GPUS_PER_NODE -x DDL_OPTIONS -x DDL_HELPERS"
want="ddlrun: DDL_OPTIONS='-mode r:4x2' DDL_LANES=2 DDL_GPUS_PER_NODE=4 DDL_HELPERS=serve mpirun --bind-to none -H host1:8 $x -np 1 ./train --epochs 3 : -H host1:8 $x -np 1 $bin/ddl-helper : -H host1:8"
if grep -qF -- "$want" <<< "$out" && [ "$(grep -o -- "DDL_HELPERS -np 1 ./train --epochs 3" <<< "$out" | wc -l)" -eq 8 ] &&
   [ "$(grep -o -- "-H host2:8 $x -np 1 ./train" <<< "$out" | wc -l)" -eq 4 ]; then
    pass "ddlrun --dry-run -H host1,host2 --gpus-per-node 4 --lanes 2: 8 owners and 8 helpers, -mode r:4x2"
else
    fail "ddlrun --dry-run (mpirun)"; echo "$out"
fi
out=$(env -u DDL_OPTIONS SLURM_JOB_ID=1 SLURM_JOB_NUM_NODES=2 "$bin/ddlrun" --dry-run --gpus-per-node 4 --lanes 2 ./train 2>&1)
grep -qxF "ddlrun: DDL_OPTIONS='-mode r:4x2' srun -N 2 --gpus-per-node=4 --ddl-lanes=2 ./train" <<< "$out" &&
    pass "ddlrun --dry-run inside an allocation: srun --ddl-lanes=2" || { fail "ddlrun --dry-run (srun)"; echo "$out"; }
out=$(env -u DDL_OPTIONS "$bin/ddlrun" --dry-run -n 3 -H a,b ./x 2>&1)
[ $? -ne 0 ] && grep -q "ddlrun: -n 3 GPUs do not divide over 2 hosts" <<< "$out" && pass "ddlrun refuses -n 3 over 2 hosts" ||
    { fail "ddlrun -n 3 over 2 hosts"; echo "$out"; }
# The C program through ddlrun on this host: 2 GPUs x 2 lanes, helpers running ddl-helper.
out=$(env -u SLURM_JOB_ID -u DDL_OPTIONS LD_LIBRARY_PATH="$lib" DDL_TIMEOUT=60 timeout 120 "$bin/ddlrun" -H localhost \
      --gpus-per-node 2 --lanes 2 --mpiarg "--oversubscribe" "$tmp/c" 2>&1)
grep -q "^PowerAI C: 2 ranks, 0 failures" <<< "$out" && pass "ddlrun -H localhost --gpus-per-node 2 --lanes 2: PowerAI C program" ||
    { fail "ddlrun on this host"; echo "$out" | tail -10; }
[ "$(shm_segments)" = "$before" ] && pass "/dev/shm clean" || fail "segments left in /dev/shm: $(shm_segments)"
finish
