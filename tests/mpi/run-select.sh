#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Online selection (DDL_SELECT=online, the default) under real MPI ranks: on 2
# emulated nodes x 1 GPU x 2 lanes in both helper modes, and on one node, every
# size class is explored and decided (DDL_DEBUG=INFO says so, once per class),
# every result is right while the candidates are timed and after, the ranks
# never diverge (a rank that chose another path would time out), rank 0 saves
# the decisions (DDL_TUNING_SAVE), and a second run reads them back with
# DDL_TUNING_FILE: no exploration, the same results; ddl-tune does the same
# selection ahead of a job.
. "$(dirname "$0")/lib.sh"
dir=$(mktemp -d)
sizes="-b 8 -e 1M -f 8" # 8 B to 256 KiB: 6 sizes, 6 classes
nsizes=6

run_bench() { # LOG ENV... : ddl-bench on 4 ranks (and $bench_args), results checked
    local log=$1
    shift
    env "$@" DDL_DEBUG=INFO DDL_DEBUG_SUBSYS=COLL DDL_TIMEOUT=60 timeout 300 $MPIRUN -n 4 "$top_builddir/ddl-bench" \
        $sizes -n 12 -w 2 -o all ${bench_args:-} > "$log" 2>&1 && grep -q '^# Out of bounds values : 0 OK' "$log"
}

for layout in "2 2 collective" "2 2 serve" "0 1 collective"; do
    set -- $layout
    node_size=$1 lanes=$2 mode=$3
    what="node size $node_size, $lanes lanes, $mode"
    save="$dir/tuning-$node_size-$mode.txt"
    if run_bench "$dir/explore.log" DDL_NODE_SIZE=$node_size DDL_LANES=$lanes DDL_HELPERS=$mode DDL_TUNING_SAVE="$save"; then
        pass "$what: every result right while exploring and after (sum, prod, min, max, avg)"
    else
        fail "$what: ddl-bench failed or reported wrong values"; tail -20 "$dir/explore.log"
    fi
    decisions=$(grep -c "DDL INFO online selection, .* bytes: .* (the slowest rank's best of" "$dir/explore.log")
    classes=$(grep "DDL INFO online selection, .* bytes: .* (the slowest rank's best of" "$dir/explore.log" |
        sed 's/.*selection, \([0-9]*\)-.*/\1/' | sort -u | wc -l)
    # Each class once (and again only if its time drifted, which says so).
    drifted=$(grep -c "timing the candidates again" "$dir/explore.log")
    if [ "$classes" -eq $nsizes ] && [ "$decisions" -eq $((nsizes + drifted)) ]; then
        pass "$what: $nsizes size classes decided online, each named at INFO with its timings ($drifted re-explored after drift)"
    else
        fail "$what: $classes classes and $decisions decisions at INFO (expected $nsizes, $drifted drifted)"
        grep "online selection" "$dir/explore.log"
    fi
    if [ "$node_size" -eq 2 ] && grep -q "lane/ring chunk=.*lane/rd chunk=.* mpi " "$dir/explore.log"; then
        pass "$what: the candidates include the lane algorithms and the system MPI"
    elif [ "$node_size" -eq 0 ] && grep -q "(the slowest rank's best of 5 rounds: lane [0-9.]* us, mpi " "$dir/explore.log"; then
        pass "$what: one node times the lanes against the system MPI"
    else
        fail "$what: the timed candidates are not listed"
    fi
    # DDL_DEBUG=INFO: ddl-bench prints where each size's lane calls spent their
    # time; the pipeline's three stages are parts of "reduce and exchange".
    if /usr/bin/python3 - "$dir/explore.log" $nsizes <<'PY'
import re, sys
lines = [l for l in open(sys.argv[1]) if l.startswith("#   phases, rank 0, us per lane call")]
assert len(lines) >= int(sys.argv[2]), len(lines)  # every size explored the lanes
for l in lines:
    ph = dict((k.strip(), float(v))
              for k, v in re.findall(r"([a-z -]+) ([0-9.]+)(?: \([0-9]+ calls\))?(?:,|$)", l.split("):")[1]))
    assert list(ph) == ["copy in", "node barrier", "signatures", "reduce and exchange", "results barrier", "copy out",
                        "intra-node reduce", "wait between nodes", "write-back", "queued", "start", "early"], list(ph)
    parts = ph["intra-node reduce"] + ph["wait between nodes"] + ph["write-back"]
    assert parts <= ph["reduce and exchange"] * 1.01 + 0.2, l
    # Blocking calls: nothing queued; the start ends inside the first chunk's
    # reduce, after the node barrier and the signatures, but where local rank
    # 0 went ahead of its node (calls that started early), whose node
    # barrier and signatures come after its first chunk has left.
    assert ph["queued"] == 0, l
    early = re.search(r"early [0-9.]+ \(([0-9]+) calls\)", l)
    if not early or int(early.group(1)) == 0:
        assert ph["node barrier"] + ph["signatures"] - 0.2 <= ph["start"], l
    assert ph["start"] <= ph["copy in"] + ph["node barrier"] + ph["signatures"] + ph["reduce and exchange"] + 0.2, l
PY
    then
        pass "$what: a phase line per size (12 phases; the pipeline's stages within reduce and exchange, the start within the call)"
    else
        fail "$what: the phase lines"; grep "phases" "$dir/explore.log" | head -3
    fi
    # The saved decisions read back: every size has a band, nothing is explored.
    bands=$(grep -cE '^[0-9]+-([0-9]+|inf) ' "$save" 2>/dev/null)
    if [ "${bands:-0}" -ge 1 ] && run_bench "$dir/reload.log" DDL_NODE_SIZE=$node_size DDL_LANES=$lanes DDL_HELPERS=$mode \
            DDL_TUNING_FILE="$save" && ! grep -q "online selection" "$dir/reload.log" &&
            grep -q "(measured: tuning file $save)" "$dir/reload.log"; then
        pass "$what: DDL_TUNING_SAVE wrote $bands bands; DDL_TUNING_FILE reads them back without exploring, results right"
    else
        fail "$what: the saved decisions do not read back"; cat "$save"; grep -i "online\|band\|error" "$dir/reload.log" | head
    fi
    # ddl-bench's choice column (ddl_comm_choice): read back, the band of the
    # file that holds the size.
    if /usr/bin/python3 - "$save" "$dir/reload.log" $nsizes <<'PY'
import sys
save, reload_log, nsizes = sys.argv[1], sys.argv[2], int(sys.argv[3])
bands = []
for line in open(save):
    head, _, rest = line.strip().partition(" ")
    lo, dash, hi = head.partition("-")
    if dash and lo.isdigit():
        bands.append((int(lo), float("inf") if hi == "inf" else int(hi), rest))
def choices(path):
    rows = [l.split() for l in open(path) if l.startswith("  ") and l.split()[0].isdigit()]
    return [(int(r[0]), " ".join(r[16:])) for r in rows]
for size, choice in choices(reload_log):
    want = [text for lo, hi, text in bands if lo <= size < hi]
    assert want and choice == want[0], (size, choice, want)
assert len(choices(reload_log)) == 5 * nsizes
PY
    then
        pass "$what: read back, ddl-bench's choice column names each size's band"
    else
        fail "$what: the choice column"; grep "^  " "$dir/reload.log" | head -3
    fi
done

# ddl-tune, the offline form: the same selection ahead of the job, in both
# helper modes; its progress names every size, its file holds the timings and
# bands that cover the sizes, and a job that reads it explores nothing.
for mode in collective serve; do
    tune="$dir/tune-$mode.conf"
    DDL_NODE_SIZE=2 DDL_LANES=2 DDL_HELPERS=$mode DDL_TIMEOUT=60 timeout 300 $MPIRUN -n 4 "$top_builddir/ddl-tune" \
        $sizes -e 256K -n 1 -o "$tune" > "$dir/tune.log" 2>&1
    progress=$(grep -c "^ddl-tune: \[[1-6]/$nsizes\] [0-9]* bytes: .*(.* us, .* us.*); [0-9]* s so far, about [0-9]* s to go" "$dir/tune.log")
    timings=$(grep -c "^#   [0-9]* bytes and up: .*mpi [0-9.]* us" "$tune" 2>/dev/null)
    if [ "$progress" -eq $nsizes ] && [ "${timings:-0}" -eq $nsizes ] && grep -q "^8-" "$tune" && grep -q -- "-524288 " "$tune" &&
            run_bench "$dir/tuned.log" DDL_NODE_SIZE=2 DDL_LANES=2 DDL_HELPERS=$mode DDL_TUNING_FILE="$tune" &&
            ! grep -q "online selection" "$dir/tuned.log"; then
        pass "ddl-tune, $mode: $nsizes sizes chosen online with progress; bands 8 B to 512 KiB read back, nothing explored, results right"
    else
        fail "ddl-tune, $mode: $progress progress lines, ${timings:-0} timing lines (expected $nsizes)"
        cat "$dir/tune.log" "$tune"; grep -i "online\|error" "$dir/tuned.log" | head
    fi
done

# The reduce-scatter and the allgather choose online too, in size classes of
# their own (the lanes, the system MPI's collective and the chunks), in both
# helper modes: every size decided and named with its collective, results right.
for coll in reduce_scatter allgather; do
    for mode in collective serve; do
        log="$dir/$coll-$mode.log"
        if bench_args="--coll $coll" run_bench "$log" DDL_NODE_SIZE=2 DDL_LANES=2 DDL_HELPERS=$mode; then
            pass "$coll, $mode: every result right while exploring and after"
        else
            fail "$coll, $mode: ddl-bench failed or reported wrong values"; tail -20 "$log"
        fi
        classes=$(grep "DDL INFO online selection, $coll of .* bytes: .* (the slowest rank's best of .* mpi " "$log" |
            sed 's/.* of \([0-9]*\)-.*/\1/' | sort -u | wc -l)
        if [ "$classes" -eq $nsizes ] && ! grep -q "DDL INFO online selection, [0-9]" "$log"; then
            pass "$coll, $mode: $nsizes size classes of its own decided online (the lanes against the system MPI)"
        else
            fail "$coll, $mode: $classes classes decided (expected $nsizes), or the allreduce's classes used"
            grep "online selection" "$log"
        fi
    done
done

# DDL_SELECT=model: the fixed crossover, no exploration.
if run_bench "$dir/model.log" DDL_NODE_SIZE=2 DDL_LANES=2 DDL_SELECT=model && ! grep -q "online selection" "$dir/model.log" &&
        grep -q "below DDL_MPI_THRESHOLD" "$dir/model.log"; then
    pass "DDL_SELECT=model: the fixed crossover, nothing explored"
else
    fail "DDL_SELECT=model"
fi
rm -rf "$dir"
check_shm_clean || fail "shared memory left behind"
finish
