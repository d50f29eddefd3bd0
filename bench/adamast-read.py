"""Times AdaMAST's `load_trace_bundle` on each trace file (bench/analyze.ts runs this; AdaMAST's code is not in this
repository: argv[1] is a folder holding its adamast/core/trace_formats.py, taken from a checkout outside the repo).
Prints JSON: the files it reads (loads without error), their bytes and traces, and the seconds spent loading them
(best of `reps` passes)."""
import json, sys, time
from pathlib import Path

sys.path.insert(0, sys.argv[1])
import trace_formats  # noqa: E402

files = [Path(p) for p in json.load(sys.stdin)]
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
ok, traces = [], 0
for f in files:
    try:
        traces += len(trace_formats.load_trace_bundle(f).traces)
        ok.append(f)
    except Exception:
        pass
best = float("inf")
for _ in range(reps):
    t0 = time.perf_counter()
    for f in ok:
        trace_formats.load_trace_bundle(f)
    best = min(best, time.perf_counter() - t0)
print(json.dumps({"files": [str(f) for f in ok], "bytes": sum(f.stat().st_size for f in ok), "traces": traces, "seconds": best}))
