#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Join the per-rank trace files that DDL_TRACE=path%r.json writes into one
Chrome / Perfetto trace (the JSON object format): every rank a process track,
metadata first, events by time.  A file whose process was killed before it
closed the array is read up to its last complete event."""
import json
import sys

USAGE = "usage: ddl-trace-merge OUT.json TRACE.json...   (open OUT.json in ui.perfetto.dev or chrome://tracing)"


def read_events(path):
    with open(path) as f:
        text = f.read()
    try:
        events = json.loads(text)
    except json.JSONDecodeError:
        # An unfinished array: cut after the last complete event and close it.
        cut = text.rfind("}\n")
        cut = text.rfind("},") if cut < 0 else cut
        events = json.loads(text[: cut + 1].rstrip(",\n") + "\n]") if cut > 0 else []
    if isinstance(events, dict):
        events = events.get("traceEvents", [])
    if not isinstance(events, list):
        raise ValueError(f"{path}: not a trace (neither an event array nor an object with traceEvents)")
    return events


def main(argv):
    if len(argv) > 1 and argv[1] in ("-h", "--help"):
        print(USAGE)
        print(__doc__)
        return 0
    if len(argv) > 1 and argv[1] == "--version":
        print("ddl-trace-merge (DDL lanes) %VERSION%")
        return 0
    if len(argv) < 3:
        print(USAGE, file=sys.stderr)
        return 2
    out, inputs = argv[1], argv[2:]
    if out in inputs:
        print(f"ddl-trace-merge: {out} is also an input; name another output file", file=sys.stderr)
        return 2
    events = []
    for path in inputs:
        try:
            events += read_events(path)
        except (OSError, ValueError) as e:
            print(f"ddl-trace-merge: {e}", file=sys.stderr)
            return 1
    meta = [e for e in events if e.get("ph") == "M"]
    timed = sorted((e for e in events if e.get("ph") != "M"), key=lambda e: (e.get("ts", 0), e.get("pid", 0)))
    with open(out, "w") as f:
        json.dump({"traceEvents": meta + timed, "displayTimeUnit": "ms"}, f)
        f.write("\n")
    ranks = sorted({e.get("pid") for e in events})
    print(f"ddl-trace-merge: {len(timed)} events of {len(ranks)} rank(s) from {len(inputs)} file(s) in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
