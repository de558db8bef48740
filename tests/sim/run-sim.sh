#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ddl-sim (bench/sim) on SimGrid's SMPI, 16 simulated nodes: the runtime's own
# step builders, executor and pipeline carry real data to the right result for
# every lane algorithm, the multiring and counts that leave ranks empty; the
# simulated times follow the alpha-beta closed form on a plain platform;
# folding lanes changes nothing; two rails halve the time; and SMPI's
# MPI_Allreduce baseline runs on the same platform; under a per-process
# injection cap, two lanes per GPU beat one.  Skipped without SimGrid.
set -u
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_srcdir=${top_srcdir:-$top_builddir}
export DDL_SIM=$top_builddir/bench/sim/ddl-sim
run=$top_srcdir/bench/sim/sim-run.sh
if [ ! -x "$DDL_SIM" ] || ! command -v smpirun > /dev/null; then
    echo "SKIP: ddl-sim not built (SimGrid's smpicc not found at configure time)"
    exit 77
fi
pass_count=0 fail_count=0
pass() { pass_count=$((pass_count + 1)); echo "PASS: $*"; }
fail() { fail_count=$((fail_count + 1)); echo "FAIL: $*"; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

sim() { # LOG PLATFORM-OPTIONS -- DDL-SIM-OPTIONS
    local log=$1
    shift
    timeout 300 "$run" "$@" > "$log" 2>&1
}
time_at() { awk -v s="$2" '$1 == s { print $2 }' "$1"; } # LOG BYTES: simulated us
ratio_in() { # A B LO HI: both times there and LO < A / B < HI
    [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(a / b > lo && a / b < hi) }'
}

# Correctness: counts of 1 (fewer elements than the 64 lanes), 7 (prime), 63,
# 567, 5103, 45927 floats; every element compared with the serial sum.
for case in "16 2 2 ring" "16 2 2 rd" "16 2 2 rab" "16 2 2 auto" "12 1 2 rd" "12 1 2 rab" "5 2 1 ring" "16 2 2 grid=2x4x4" \
    "16 2 2 grid=2x2x2x4"; do
    set -- $case
    algo=(-a "$4")
    case $4 in grid=*) algo=(-t "${4#grid=}") ;; esac
    # A small chunk: several chunks per slice, so the pipeline's slots take turns.
    if sim "$dir/check.log" -N "$1" -r 2 -g "$2" -l "$3" -- "${algo[@]}" -c 4K --check -b 4 -e 200K -f 9 -n 1 -w 0 &&
        grep -q "every element checked: right" "$dir/check.log"; then
        pass "--check $1 nodes x $2 GPUs x $3 lanes, $4: every element right, 1 to 45927 floats"
    else
        fail "--check $1 nodes x $2 GPUs x $3 lanes, $4"; tail -5 "$dir/check.log"
    fi
done
# Timing: 16 nodes x 1 GPU x 1 lane, ring, one chunk of 16 MiB / 16 per step,
# 125 MB/s and 12 us per NIC link (a message crosses two: 24 us, and a full
# duplex NIC sends and receives at once).  Closed form: 2 (P - 1) (alpha +
# S / P / B) plus the reductions and copies the simulation charges.
if sim "$dir/ring.log" -N 16 -r 1 --rail-mbps 125 --lat-us 12 -- -a ring -c 4M -b 16M -e 16M -n 1 -w 0 \
    --reduce-rate 1e9 --copy-rate 1e9; then
    got=$(time_at "$dir/ring.log" 16777216)
    want=$(awk 'BEGIN { p = 16; s = 16777216; print 2 * (p - 1) * (24e-6 + s / p / 125e6) * 1e6 }')
    if awk -v g="$got" -v w="$want" 'BEGIN { exit !(g > 0.97 * w && g < 1.05 * w) }'; then
        pass "ring on 16 nodes: ${got} us simulated, closed form ${want} us"
    else
        fail "ring on 16 nodes: ${got} us simulated, closed form ${want} us (outside -3%..+5%)"
    fi
else
    fail "ring on 16 nodes did not run"; tail -5 "$dir/ring.log"
fi

# Rails: 2 GPUs on 2 rails against 2 GPUs sharing one rail: half the time.
sim "$dir/r1.log" -N 16 -r 1 -g 2 -l 1 -- -a ring -b 16M -e 16M -n 1 -w 0 --reduce-rate 5000 --copy-rate 5000
sim "$dir/r2.log" -N 16 -r 2 -g 2 -l 1 -- -a ring -b 16M -e 16M -n 1 -w 0 --reduce-rate 5000 --copy-rate 5000
t1=$(time_at "$dir/r1.log" 16777216) t2=$(time_at "$dir/r2.log" 16777216)
if ratio_in "$t1" "$t2" 1.8 2.1; then
    pass "two rails: $t2 us against $t1 us on one"
else
    fail "two rails: '$t2' us against '$t1' us on one (expected about half)"
fi

# Folding: 4 lanes per GPU as 4 simulated ranks or as 2 x 2 or 1 x 4: the same time.
for f in 1 2 4; do
    sim "$dir/fold$f.log" -N 16 -r 2 -g 2 -l 4 --fold $f -- -a rab -b 64M -e 64M -n 1 -w 0 --reduce-rate 5000 --copy-rate 5000
done
t1=$(time_at "$dir/fold1.log" 67108864) t2=$(time_at "$dir/fold2.log" 67108864) t4=$(time_at "$dir/fold4.log" 67108864)
if ratio_in "$t2" "$t1" 0.97 1.03 && ratio_in "$t4" "$t1" 0.97 1.03; then
    pass "folding lanes: $t1 / $t2 / $t4 us for --fold 1 / 2 / 4"
else
    fail "folding lanes: '$t1' / '$t2' / '$t4' us for --fold 1 / 2 / 4 (expected within 3%)"
fi

# Per-process injection (--inj-mbps): with each process held to a quarter of
# its rail, one lane per GPU leaves the rails three-quarters idle and two
# lanes halve the time; a process alone is held to its cap (2 nodes, 1 lane,
# recursive doubling: it sends its 16 MiB once at 31.25 MB/s, 537 ms); folded
# lanes add their caps.
inj=(-r 2 --rail-mbps 125 --inj-mbps 31.25)
hostfree=(--reduce-rate 1e7 --copy-rate 1e7)
sim "$dir/inj1.log" -N 4 -g 2 -l 1 "${inj[@]}" -- -a ring -b 16M -e 16M -n 1 -w 0 "${hostfree[@]}"
sim "$dir/inj2.log" -N 4 -g 2 -l 2 "${inj[@]}" -- -a ring -b 16M -e 16M -n 1 -w 0 "${hostfree[@]}"
sim "$dir/inj2f.log" -N 4 -g 2 -l 2 --fold 2 "${inj[@]}" -- -a ring -b 16M -e 16M -n 1 -w 0 "${hostfree[@]}"
t1=$(time_at "$dir/inj1.log" 16777216) t2=$(time_at "$dir/inj2.log" 16777216) t2f=$(time_at "$dir/inj2f.log" 16777216)
if ratio_in "$t1" "$t2" 1.8 2.1 && ratio_in "$t2f" "$t2" 0.97 1.03; then
    pass "per-process cap: 2 lanes per GPU $t2 us against 1 lane $t1 us (folded: $t2f us)"
else
    fail "per-process cap: 2 lanes '$t2' us against 1 lane '$t1' us (expected about half), folded '$t2f' us"
fi
if sim "$dir/injone.log" -N 2 -g 1 -l 1 "${inj[@]}" -- -a rd -c 16M -b 16M -e 16M -n 1 -w 0 "${hostfree[@]}"; then
    got=$(time_at "$dir/injone.log" 16777216)
    if ratio_in "$got" 536870.912 0.99 1.05; then # 16777216 bytes / 31.25 MB/s, in us
        pass "one process held to its cap: $got us for its 16 MiB at 31.25 MB/s"
    else
        fail "one process: $got us, expected about $((16777216 * 100 / 3125)) us at its 31.25 MB/s cap"
    fi
else
    fail "the per-process platform did not run"; tail -5 "$dir/injone.log"
fi

# The baseline: SMPI's ring MPI_Allreduce, one rank per GPU, on the node platform.
if sim "$dir/mpi.log" -N 16 -r 2 -g 2 --mpi --coll lr -- -b 16M -e 16M -n 1 -w 0 && [ -n "$(time_at "$dir/mpi.log" 16777216)" ]; then
    pass "SMPI MPI_Allreduce (ring) baseline: $(time_at "$dir/mpi.log" 16777216) us"
else
    fail "SMPI MPI_Allreduce baseline"; tail -5 "$dir/mpi.log"
fi

# Bad input: folds that do not divide the lanes, or fold lanes of two rails, are refused with a message.
for bad in "-N 2 -l 3 --fold 2:does not divide" "-N 2 -r 2 -l 2 --fold 2:must share a rail"; do
    if sim "$dir/badfold.log" ${bad%%:*} -- -b 4 -e 4; then
        fail "'${bad%%:*}' was accepted"
    elif grep -q "${bad#*:}" "$dir/badfold.log"; then
        pass "'${bad%%:*}' refused: $(grep -m1 "${bad#*:}" "$dir/badfold.log")"
    else
        fail "'${bad%%:*}': no message"; cat "$dir/badfold.log"
    fi
done

echo "$pass_count passed, $fail_count failed"
[ "$fail_count" -eq 0 ]
