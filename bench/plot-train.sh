#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Turn examples/train_bench.py --json results into a PNG: per model, the median
# step time with gloo and with the DDL hook, beside the compute time of the
# step without any allreduce (the bound when all communication hides), and the
# best step the hook could give once DDP hands over its buckets when it does in
# that run (each bucket's allreduce at the rate of the allreduce alone).
#
#   bench/plot-train.sh OUT.png TITLE MODEL.json...
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 OUT.png TITLE MODEL.json..." >&2; exit 2; }
out=$1 title=$2
shift 2
dat=$(mktemp)
trap 'rm -f "$dat"' EXIT
/usr/bin/python3 - "$@" > "$dat" <<'PY'
import json, sys
print("model compute gloo ddl bound")
for path in sys.argv[1:]:
    r = json.load(open(path))
    h = r["hooks"]
    print(f"{r['model']} {h['ddl']['compute_median_s'] * 1e3:.1f} {h['gloo']['step_median_s'] * 1e3:.1f} "
          f"{h['ddl']['step_median_s'] * 1e3:.1f} {(h['ddl'].get('overlap_bound_s') or 0) * 1e3:.1f}")
PY
gnuplot <<GP
set terminal pngcairo size 800,450
set output "$out"
set title "$title"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "median step time (ms)"
set yrange [0:*]
set key top left
set grid ytics
plot "$dat" using 2:xtic(1) title "compute only (no allreduce)", '' using 3 title "gloo", '' using 4 title "ddl hook", '' using 5 title "ddl: best step from its hand-over times"
GP
