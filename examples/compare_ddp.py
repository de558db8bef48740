#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Compare two runs of ddp_train.py (--json files): the loss curves side by
side, the step times, and the largest difference of the final parameters.
Exits non-zero when a loss differs by more than the tolerance, the final
parameters differ by more than it, or a run's ranks ended with different
parameters."""
import json
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: compare_ddp.py GLOO.json DDL.json [TOLERANCE]")
    a, b = (json.load(open(p)) for p in sys.argv[1:3])
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-5
    print(f"{'step':>4} {a['hook'] + ' loss':>14} {b['hook'] + ' loss':>14} {'difference':>11}")
    ok = a["world"] == b["world"] and a["identical"] and b["identical"]
    for step, (x, y) in enumerate(zip(a["losses"], b["losses"])):
        bad = abs(x - y) > tol * max(1.0, abs(x))
        ok &= not bad
        print(f"{step:4d} {x:14.8f} {y:14.8f} {x - y:11.2e}{'  <- differs' if bad else ''}")
    worst = max(abs(x - y) for x, y in zip(a["params"], b["params"]))
    ok &= worst <= tol and len(a["losses"]) == len(b["losses"])
    med = {r["hook"]: sorted(r["step_times"])[len(r["step_times"]) // 2] * 1e3 for r in (a, b)}
    print(f"final parameters: largest difference {worst:.2e}; identical on every rank: "
          f"{a['hook']} {a['identical']}, {b['hook']} {b['identical']}")
    print("median step time: " + ", ".join(f"{h} {t:.2f} ms" for h, t in med.items()))
    print("same training: " + ("yes" if ok else "NO"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
