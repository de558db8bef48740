#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ddl_allreduce on every layout (nodes x GPUs x lanes, nodes emulated with
# DDL_NODE_SIZE), both helper modes, all types, ops, counts and buffer kinds.
. "$(dirname "$0")/lib.sh"
prog=$top_builddir/tests/mpi/ddl-test-allreduce
before=$(shm_segments)

# nodes gpus lanes helpers extra-environment (DDL_SELECT=model: sizes below
# 128K take the MPI path between nodes, those up to 8 KiB inside the owners'
# signature exchange, 3 owners folding one into recursive doubling, whatever
# online selection would time)
layouts="
1 1 1 collective DDL_ALGO=lane
1 2 2 collective DDL_ALGO=lane
1 2 2 serve      DDL_ALGO=lane
2 1 2 collective DDL_ALGO=lane
2 1 2 serve      DDL_ALGO=lane
2 2 2 collective DDL_ALGO=lane
2 2 2 serve      DDL_ALGO=lane
3 1 2 serve      DDL_ALGO=lane
3 2 1 collective DDL_ALGO=lane
3 2 1 collective DDL_ALGO=lane:DDL_LANE_ALGO=rd
3 1 2 collective DDL_ALGO=lane:DDL_LANE_ALGO=rab:DDL_INFLIGHT=4
4 1 1 serve      DDL_ALGO=lane:DDL_LANE_ALGO=rab
2 2 1 collective DDL_ALGO=auto
1 3 1 collective DDL_ALGO=mpi
1 3 1 collective DDL_ALGO=auto
1 2 2 serve      DDL_ALGO=auto
2 1 2 collective DDL_SELECT=model
2 2 1 serve      DDL_SELECT=model
3 1 1 collective DDL_SELECT=model
"
# A tuning file that sends each size band to another algorithm and chunk.
tuning=$(mktemp)
cat > "$tuning" <<'TUNING'
# bands for the test: every path, and a gap that falls back to the defaults
0-64 mpi
64-4K lane/rd chunk=4K
4K-64K lane/rab
64K-1M lane/ring chunk=8K
2M-inf lane/rab chunk=16K
TUNING
# Every size on the MPI path with the data in the owners' exchange
# (mpi/exchange): up to 63 KiB the exchange is the whole call, beyond it the
# system MPI_Allreduce follows the signatures.
exchange=$(mktemp)
echo "0-inf mpi/exchange" > "$exchange"
# Every size on the MPI path in halves (mpi/halves): up to 512 KiB the
# owners' own reduce-scatter and allgather, the signatures in its messages
# (with 2 owners one round each; the last round whole needs hosts apart:
# run-emu.sh); beyond 512 KiB, and with 3 owners (not a power of two), the
# plain form.
halves=$(mktemp)
echo "0-inf mpi/halves" > "$halves"
layouts+="2 2 2 serve      DDL_TUNING_FILE=$tuning
3 1 2 collective DDL_TUNING_FILE=$tuning
2 2 1 collective DDL_TUNING_FILE=$exchange
3 1 2 serve      DDL_TUNING_FILE=$exchange
2 2 1 collective DDL_TUNING_FILE=$halves
3 1 1 serve      DDL_TUNING_FILE=$halves
2 1 1 collective DDL_TUNING_FILE=$halves
"
# Each path and helper mode once, on 1 to 3 nodes (the lane ring, rd and rab,
# auto, mpi, the model, a tuning file, the exchange, the halves: the lines listed below)
# runs every type, op, count and buffer kind; the other shapes run the quick
# matrix (every op; four types, fewer counts and buffer kinds:
# test_allreduce.c), which keeps the suite within CI's time; so do the lines
# DDL_TEST_LAYOUTS picks (the MPICH suite).  The sanitizer build
# (DDL_TEST_QUICK) runs the listed lines only, or those DDL_TEST_LAYOUTS
# picks: the sanitizers look for paths, not shapes.
if [ -z "${DDL_TEST_LAYOUTS:-}" ] || [ "${DDL_TEST_QUICK:-0}" = 0 ]; then
    layouts=$(grep -v '^$' <<< "$layouts" | awk -v quick="${DDL_TEST_QUICK:-0}" '
        BEGIN { n = split("1 2 6 7 10 11 13 14 16 18 20 22 24", f); for (i = 1; i <= n; i++) full[f[i]] = 1 }
        NR in full { print; next }
        quick == 0 { print $0 ":DDL_TEST_QUICK=1" }')
fi
layouts=$(select_layouts "$layouts")
run_layouts "$prog" "$layouts"
rm -f "$tuning" "$exchange" "$halves"
[ "$(shm_segments)" = "$before" ] || fail "shared memory left behind: $(shm_segments)"
finish
