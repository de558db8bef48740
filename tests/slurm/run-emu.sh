#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Smoke run of the emulated multi-rail cluster (bench/emu-cluster.sh): 2 nodes in
# network namespaces with 2 capped rails each; ddl-bench through srun
# --ddl-lanes=2 must be right and must have sent over both rails of both nodes
# (interface byte counters), the owners of one GPU per node over the first
# rail and of two over both; with every process's sends capped (DDL_EMU_INJ),
# one flow is held to the cap and 2 lanes per GPU beat 1; over UCX and
# libfabric as over Open MPI's TCP transport, the lanes use both rails;
# tear-down leaves no namespace.
. "$(dirname "$0")/../mpi/lib.sh"
emu=$top_srcdir/bench/emu-cluster.sh
if [ "$(id -u)" -ne 0 ] || ! command -v slurmctld > /dev/null || [ ! -f "$top_builddir/.libs/spank_ddl.so" ] ||
   ! ip netns list > /dev/null 2>&1; then
    echo "SKIP: needs root, Slurm, network namespaces and the built plugin"
    exit 77
fi
export DDL_EMU_PREFIX=ddlt$$ DDL_CLUSTER_DIR=/tmp/ddl-emu-test-$$ DDL_CLUSTER_PORT=27817
trap '"$emu" stop > /dev/null 2>&1' EXIT
"$emu" start 2 2 1gbit > /dev/null || { fail "the emulated cluster did not start"; finish; exit 1; }
export OMPI_MCA_mpi_yield_when_idle=1
before=$("$emu" counters)
# The lanes' rails: DDL_ALGO=lane, since in a run this short online selection
# times the MPI path first.
out=$(DDL_ALGO=lane "$emu" run timeout 300 srun -N2 --gpus-per-node=1 --ddl-lanes=2 "$top_builddir/ddl-bench" --mode ddl \
    -b 1M -e 4M -f 4 -n 2 -w 1 2>&1)
after=$("$emu" counters)
if grep -q '^# Out of bounds values : 0 OK' <<< "$out" && grep -q '2 nodes x 1 GPUs x 2 lanes' <<< "$out"; then
    pass "ddl-bench across 2 emulated nodes with 2 rails"
else
    fail "ddl-bench on the emulated cluster"; echo "$out" | tail -10
fi
# sent NODE [RAIL]: the bytes NODE sent over RAIL (over every rail without one)
# between the counters in $before and $after.
sent() {
    local sum='$1 == n && (r == "" || $2 == r) {s += $4} END {print s + 0}'
    echo $(( $(awk -v n="$1" -v r="${2:-}" "$sum" <<< "$after") - $(awk -v n="$1" -v r="${2:-}" "$sum" <<< "$before") ))
}
# Each rail of each node carried at least 2 MB of the run, and neither rail all of it.
while read -r node rail _; do
    bytes=$(sent "$node" "$rail")
    share=$((100 * bytes / ($(sent "$node") + 1)))
    if [ "$bytes" -ge 2000000 ] && [ "$share" -ge 25 ]; then
        pass "$node $rail sent $bytes bytes ($share% of the node's)"
    else
        fail "$node $rail sent $bytes bytes ($share% of the node's): the lanes do not use every rail"
    fi
done <<< "$after"
# owners_mpi GPUS: the MPI baseline over the owners (4 MiB) with GPUS GPUs per
# node and 2 lanes, between two readings of the counters.
owners_mpi() {
    before=$("$emu" counters)
    "$emu" run timeout 300 srun -N2 --gpus-per-node="$1" --ddl-lanes=2 "$top_builddir/ddl-bench" --mode mpi \
        -b 4M -e 4M -n 3 -w 1 > /dev/null 2>&1
    after=$("$emu" counters)
}
# One GPU per node: its owner is pinned to rail 0, so rail 1 stays nearly
# idle; Open MPI left to itself would stripe over both.
owners_mpi 1
for node in n1 n2; do
    r0=$(sent $node rail0) r1=$(sent $node rail1)
    if [ "$r0" -ge 4000000 ] && [ "$r1" -le $((r0 / 20)) ]; then
        pass "$node: lane 0 kept to rail0 ($r0 bytes on rail0, $r1 on rail1)"
    else
        fail "$node: lane 0 not kept to rail0 ($r0 bytes on rail0, $r1 on rail1)"
    fi
done
# With 2 GPUs per node the owners take different rails (lane k of GPU g on rail
# (k G + g) mod R): the MPI baseline over them uses both.
owners_mpi 2
for node in n1 n2; do
    r0=$(sent $node rail0) r1=$(sent $node rail1)
    if [ "$r0" -ge 2000000 ] && [ "$r1" -ge 2000000 ] && [ "$r1" -ge $((r0 / 3)) ] && [ "$r0" -ge $((r1 / 3)) ]; then
        pass "$node: the owners of 2 GPUs on both rails ($r0 bytes on rail0, $r1 on rail1)"
    else
        fail "$node: the owners of 2 GPUs not spread over the rails ($r0 bytes on rail0, $r1 on rail1)"
    fi
done
# Through UCX and libfabric too (Open MPI's pml/ucx over UCX's tcp transport,
# mtl/ofi over libfabric's tcp provider): the plugin's rails reach each stack
# through its own variables.  One GPU per node: its owner stays on rail0,
# where UCX left alone stripes over both rails and libfabric's tcp provider
# takes rail1.  Two GPUs x 2 lanes: each node's bytes on both rails within
# 20% of each other, and every result right.
for stack in ucx ofi; do
    export DDL_EMU_STACK=$stack
    owners_mpi 1
    kept=""
    for node in n1 n2; do
        r0=$(sent $node rail0) r1=$(sent $node rail1)
        [ "$r0" -ge 4000000 ] && [ "$r1" -le $((r0 / 20)) ] || kept+=" $node: $r0 bytes on rail0, $r1 on rail1"
    done
    [ -z "$kept" ] && pass "Open MPI over $stack: lane 0 kept to rail0" || fail "Open MPI over $stack: lane 0 not kept to rail0:$kept"
    before=$("$emu" counters)
    out=$(DDL_ALGO=lane "$emu" run timeout 300 srun -N2 --gpus-per-node=2 --ddl-lanes=2 \
        "$top_builddir/ddl-bench" --mode ddl -b 16M -e 16M -n 2 -w 1 2>&1)
    after=$("$emu" counters)
    ok=1 shares=""
    grep -q '^# Out of bounds values : 0 OK' <<< "$out" || ok=0
    for node in n1 n2; do
        r0=$(sent $node rail0) r1=$(sent $node rail1)
        shares+=" $node $r0/$r1"
        [ "$r0" -ge 16000000 ] && [ "$r1" -ge 16000000 ] && [ $((10 * r0)) -ge $((8 * r1)) ] &&
            [ $((10 * r1)) -ge $((8 * r0)) ] || ok=0
    done
    if [ $ok -eq 1 ]; then
        pass "Open MPI over $stack: 16 MiB right, each node's rails within 20% (bytes on rail0/rail1:$shares)"
    else
        fail "Open MPI over $stack: the rails (bytes on rail0/rail1:$shares) or the result"; echo "$out" | tail -6
    fi
done
unset DDL_EMU_STACK
# ddl-tune on the allocation (helpers run ddl-helper and follow the owners'
# choices), then a run that uses its file.
tune=$DDL_CLUSTER_DIR/tuning.conf
"$emu" run timeout 300 srun -N2 --gpus-per-node=1 --ddl-lanes=2 "$top_builddir/ddl-tune" -b 4K -e 4M -n 2 \
    -o "$tune" > /dev/null 2>&1
out=$(DDL_TUNING_FILE=$tune DDL_DEBUG=INFO DDL_DEBUG_SUBSYS=COLL "$emu" run timeout 300 srun -N2 --gpus-per-node=1 \
    --ddl-lanes=2 "$top_builddir/ddl-bench" --mode ddl -b 4K -e 4M -f 8 -n 2 -w 1 2>&1)
if grep -q "measured: tuning file $tune" <<< "$out" && grep -q '^# Out of bounds values : 0 OK' <<< "$out"; then
    pass "ddl-tune wrote $(grep -vc '^#' "$tune") band(s); ddl-bench used them and was right"
else
    fail "ddl-tune or its file"; cat "$tune" 2>/dev/null; echo "$out" | tail -8
fi
# Between hosts a repeated call on the MPI path starts MPI_Iallreduce before
# the signatures agree (algo/mpi_early.c): the mismatch test's calls, with
# DDL_SELECT=model keeping its medium calls there, on 2 nodes x 2 GPUs; the
# owners that repeated the call when one skipped it had started early.  Its
# first lane call is the job's first between the hosts, over both rails: a
# rank that waited on its node without entering MPI left its peer waiting
# for the rest of its message until DDL_TIMEOUT (one run in about ten).
if out=$(DDL_SELECT=model DDL_TIMEOUT=60 "$emu" run timeout 300 srun -N2 --gpus-per-node=2 --ddl-lanes=1 \
        "$top_builddir/tests/mpi/ddl-test-mismatch" 2>&1) && grep -q ", 0 failures" <<< "$out" &&
        grep -q "skipped medium call after repeats, call 1: .*(started before the check)" <<< "$out"; then
    pass "mismatches and repeated calls between emulated hosts (early starts): $(grep -o '[0-9]* nodes x .*' <<< "$out")"
else
    fail "mismatches between emulated hosts"; echo "$out" | grep -v "^ " | tail -8
fi
# The same with a band of mpi/after (online selection's candidate without the
# early start): the medium calls wait for the signatures, and stay right.
after_band=$DDL_CLUSTER_DIR/after.conf
echo "8K-256K mpi/after" > "$after_band"
if out=$(DDL_TUNING_FILE=$after_band DDL_SELECT=model DDL_TIMEOUT=60 "$emu" run timeout 300 srun -N2 \
        --gpus-per-node=2 --ddl-lanes=1 "$top_builddir/tests/mpi/ddl-test-mismatch" 2>&1) &&
        grep -q ", 0 failures" <<< "$out" && grep -q "skipped medium call after repeats, call 1: " <<< "$out" &&
        ! grep -q "started before the check" <<< "$out"; then
    pass "mpi/after between emulated hosts: no early start, mismatches found"
else
    fail "mpi/after between emulated hosts"; echo "$out" | grep -v "^ " | tail -8
fi
# And in halves (mpi/halves: the owners' own reduce-scatter and allgather over
# TCP, the signatures in its messages, the last round whole between the hosts
# up to 16 KiB): every type right, the test matrix's counts and ops too (only
# here are the owners' peers on other hosts as MPI sees them), mismatches found.
halves_band=$DDL_CLUSTER_DIR/halves.conf
echo "8K-256K mpi/halves" > "$halves_band"
if out=$(DDL_TUNING_FILE=$halves_band "$emu" run timeout 300 srun -N2 --gpus-per-node=2 --ddl-lanes=1 \
        "$top_builddir/ddl-bench" --mode ddl -b 8K -e 256K -f 2 -n 2 -w 1 -d all 2>&1) &&
        grep -q '^# Out of bounds values : 0 OK' <<< "$out" && grep -q 'mpi/halves' <<< "$out" &&
    out=$(DDL_TUNING_FILE=$halves_band DDL_TEST_QUICK=1 DDL_TIMEOUT=60 "$emu" run timeout 300 srun -N2 \
        --gpus-per-node=2 --ddl-lanes=1 "$top_builddir/tests/mpi/ddl-test-allreduce" 2>&1) &&
        grep -q ", 0 failures" <<< "$out" &&
    out=$(DDL_TUNING_FILE=$halves_band DDL_TIMEOUT=60 "$emu" run timeout 300 srun -N2 --gpus-per-node=2 \
        --ddl-lanes=1 "$top_builddir/tests/mpi/ddl-test-mismatch" 2>&1) && grep -q ", 0 failures" <<< "$out" &&
        grep -q "skipped medium call after repeats, call 1: .*(in halves)" <<< "$out"; then
    pass "mpi/halves between emulated hosts: every type right, mismatches found"
else
    fail "mpi/halves between emulated hosts"; echo "$out" | grep -v "^ " | tail -8
fi
"$emu" stop > /dev/null 2>&1
# Every process's sends capped too (the lanes' reason to exist): 4
# sub-interfaces per node and rail at 250 Mbit/s, every task through
# bench/emu-inject.sh (helpers run the job's command).  One TCP flow from one
# process's address is held to 250 Mbit/s, two processes' flows get about
# twice that (the cap is per process, not per node).
DDL_EMU_INJ=250mbit DDL_EMU_PROCS=4 "$emu" start 2 2 1gbit > /dev/null || fail "the capped cluster did not start"
flows() { # SOURCE...: the Mbit/s that one flow from each SOURCE of n1 brings to n2 over rail 0
    local log
    log=$(mktemp)
    ip netns exec "$DDL_EMU_PREFIX-n2" python3 "$top_srcdir/bench/tcp-rate.py" recv 10.77.0.2 5001 $# 3 > "$log" &
    sleep 0.5
    ip netns exec "$DDL_EMU_PREFIX-n1" python3 "$top_srcdir/bench/tcp-rate.py" send 10.77.0.2 5001 3 "$@"
    wait
    awk '{print int($(NF-1))}' "$log"
    rm -f "$log"
}
one=$(flows 10.77.0.64) two=$(flows 10.77.0.64 10.77.0.65)
if [ "${one:-0}" -ge 125 ] && [ "${one:-0}" -le 275 ] && [ "${two:-0}" -ge $((one * 3 / 2)) ]; then
    pass "per-process injection: 1 flow $one Mbit/s (cap 250), 2 processes $two"
else
    fail "per-process injection: 1 flow ${one:-?} Mbit/s (cap 250), 2 processes ${two:-?}"
fi
# Under that cap, 2 lanes per GPU move 16 MiB faster than 1 (each process injects).
for l in 1 2; do
    out=$("$emu" run timeout 300 srun -N2 --kill-on-bad-exit=1 --gpus-per-node=2 --ddl-lanes=$l \
        "$top_srcdir/bench/emu-inject.sh" "$top_builddir/ddl-bench" --mode ddl -b 16M -e 16M -n 3 -w 1 2>&1)
    grep -q '^# Out of bounds values : 0 OK' <<< "$out" || { fail "lanes $l under the per-process cap"; echo "$out" | tail -5; }
    eval "us_$l=$(awk '/^ +16777216 / {print int($10)}' <<< "$out")"
done
if [ "${us_2:-0}" -gt 0 ] && [ "${us_1:-0}" -gt "${us_2:-0}" ]; then
    pass "per-process cap: 16 MiB takes $us_1 us with 1 lane per GPU, $us_2 us with 2"
else
    fail "per-process cap: 16 MiB with 1 lane ${us_1:-?} us, with 2 lanes ${us_2:-?} us"
fi
"$emu" stop > /dev/null 2>&1
# Two racks of 2 nodes joined by a slower uplink: the multiring along 1x2x2 is
# right, and sends the buffer once each way over the uplink per call (1/4 of it
# from each of 2 nodes, in the reduce-scatter and in the allgather), where the
# ring over all 4 nodes crosses it with 3/2 of the buffer.
uplink_bytes() { "$emu" counters | awk '$1 == "uplink" {print $4}'; }
if "$emu" start 4 1 1gbit 2 250mbit > /dev/null; then
    for algo in multiring lane; do
        u0=$(uplink_bytes)
        # A stuck call ends at DDL_TIMEOUT naming whom it waited for, and a
        # task that dies ends the step (-K1) rather than leave its peers
        # waiting to the 300 s limit, as a rank that crashed in MPI_Init did
        # in two runs of .ci/run, before the emulated nodes' PMIx fences were
        # made rings (tests/slurm/cluster.sh).
        out=$(DDL_TIMEOUT=60 DDL_ALGO=$algo DDL_TOPOLOGY=1x2x2 "$emu" run timeout 300 srun -K1 -N4 --gpus-per-node=1 \
            --ddl-lanes=1 "$top_builddir/ddl-bench" --mode ddl -b 4M -e 4M -n 1 -w 0 -c 1 2>&1)
        sent=$(( $(uplink_bytes) - u0 ))
        eval "uplink_$algo=$sent"
        grep -q '^# Out of bounds values : 0 OK' <<< "$out" || { fail "$algo on 2 racks"; grep -v '^#' <<< "$out" | tail -15; }
    done
    # ddl-bench runs 4 calls here (out-of-place and in-place, each timed once and checked once).
    if [ "$uplink_multiring" -gt 0 ] && [ $((uplink_multiring * 4)) -lt $((uplink_lane * 3)) ]; then
        pass "2 racks: the multiring sends $uplink_multiring bytes over the uplink, the lane ring $uplink_lane"
    else
        fail "2 racks: uplink bytes multiring $uplink_multiring, lane $uplink_lane"
    fi
else
    fail "the 2-rack cluster did not start"
fi
"$emu" stop > /dev/null 2>&1
trap - EXIT
left=$(ip netns list | grep "^ddlt$$-" || true)
[ -z "$left" ] && pass "no network namespace left" || fail "namespaces left: $left"
finish
