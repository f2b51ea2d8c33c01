"""Cost of a run against its number of flows: the budget's estimate beside the measured peak
RSS, wall time and simulation-loop time of `ccbench run FILE --no-plots` (N CUBIC flows on a
1 Gbit/s, 10 ms dumbbell for 2 s). The analysis after the loop must stay linear in the flows
(docs/robustness.md, "Many flows").

    .venv/bin/python benches/many_flows.py --flows 1000,10000,30000
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

import ccbench
from ccbench import budget


def measure(n: int, duration: float, work: Path) -> dict:
    doc = {"duration": duration, "central": {"rate": "1Gbit", "delay": "10ms", "queue": "1bdp"},
           "flows": [{"scheme": "cubic", "flows": n}]}
    f = work / f"flows{n}.yaml"
    f.write_text(yaml.safe_dump(doc))
    est = budget.estimate(ccbench.load_experiment(str(f)))
    out = work / f"out{n}"
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "ccbench", "run", str(f), "-o", str(out),
                             "--no-plots", "--quiet"], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"{n} flows: ccbench run failed ({status})")
    loop = json.loads((out / "metadata.json").read_text()).get("wall_time_s")
    return {"flows": n, "estimate_mib": est.memory_bytes / 2**20,
            "peak_mib": usage.ru_maxrss / 1024, "wall_s": wall, "loop_s": loop,
            "cpu_s": usage.ru_utime + usage.ru_stime}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", default="1000,10000", help="comma list of flow counts")
    ap.add_argument("--duration", type=float, default=2.0, help="seconds simulated")
    a = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print("| flows | estimate MiB | peak RSS MiB | wall s | CPU s | loop s | CPU s per 1000 flows |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        for n in (int(x) for x in a.flows.split(",")):
            r = measure(n, a.duration, Path(d))
            print(f"| {n} | {r['estimate_mib']:.0f} | {r['peak_mib']:.0f} | {r['wall_s']:.2f} | "
                  f"{r['cpu_s']:.2f} | {r['loop_s']:.2f} | {1000 * r['cpu_s'] / n:.3f} |",
                  flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
